//! Concurrency and crash-recovery tests.

use crate::tests::{REL, all, env, key, tid, verify};
use crate::{BTree, Existing, UniqueInsert};
use keel_common::Tid;
use keel_storage::smgr::Smgr;
use keel_storage::wal::{FIRST_LSN, RecordKind, Wal, WalReader};
use keel_storage::{BufferPool, PageRead};
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

const THREADS: u64 = 4;

#[test]
fn concurrent_inserts_and_scans() {
    let e = env(64);
    let per = 25_000u64;
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let tree = &e.tree;
        let done = &done;
        let reader = s.spawn(move || {
            let mut scans = 0;
            while !done.load(Ordering::Acquire) || scans == 0 {
                let got = all(tree);
                assert!(
                    got.windows(2)
                        .all(|w| (&w[0].0, w[0].1.to_u64()) < (&w[1].0, w[1].1.to_u64()))
                );
                scans += 1;
            }
            scans
        });
        let writers: Vec<_> = (0..THREADS)
            .map(|t| {
                s.spawn(move || {
                    for i in 0..per {
                        // Interleaved key ranges so threads contend for the same leaves.
                        let x = (i * 7919 % per) * THREADS + t;
                        tree.insert(&key(x), tid(x), 10 + t).unwrap();
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Release);
        assert!(reader.join().unwrap() > 0);
    });
    let got = all(&e.tree);
    assert_eq!(got.len() as u64, per * THREADS);
    for (i, (k, t)) in got.iter().enumerate() {
        assert_eq!((k, *t), (&key(i as u64), tid(i as u64)));
    }
    verify(&e.tree);
}

/// A backward scan running while other threads split the leaves it walks returns, in
/// strictly descending order, every entry that was in the tree before it started.
#[test]
fn backward_scans_during_splits_miss_nothing() {
    let e = env(64);
    let per = 20_000u64;
    for x in (0..per * THREADS).step_by(2) {
        e.tree.insert(&key(x), tid(x), 9).unwrap();
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let tree = &e.tree;
        let done = &done;
        let reader = s.spawn(move || {
            let mut scans = 0;
            while !done.load(Ordering::Acquire) || scans == 0 {
                let got: Vec<(Vec<u8>, Tid)> = tree
                    .scan_backward(Bound::Unbounded, Bound::Unbounded)
                    .collect::<Result<_, _>>()
                    .unwrap();
                assert!(
                    got.windows(2)
                        .all(|w| (&w[0].0, w[0].1.to_u64()) > (&w[1].0, w[1].1.to_u64()))
                );
                let old = got.iter().filter(|(_, t)| t.to_u64() % 2 == 0).count() as u64;
                assert_eq!(old, per * THREADS / 2, "a backward scan missed entries");
                scans += 1;
            }
            scans
        });
        let writers: Vec<_> = (0..THREADS)
            .map(|t| {
                s.spawn(move || {
                    for i in 0..per / 2 {
                        let x = ((i * 7919 % (per / 2)) * THREADS + t) * 2 + 1;
                        tree.insert(&key(x), tid(x), 10 + t).unwrap();
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Release);
        assert!(reader.join().unwrap() > 0);
    });
    verify(&e.tree);
}

#[test]
fn concurrent_duplicates_of_one_key() {
    let e = env(64);
    let per = 3000u64;
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let tree = &e.tree;
            s.spawn(move || {
                for i in 0..per {
                    tree.insert(b"same", tid(i * THREADS + t), 2).unwrap();
                    if i % 5 == 0 {
                        tree.insert(&key(i * THREADS + t), tid(i), 2).unwrap();
                    }
                }
            });
        }
    });
    let same: Vec<_> = e
        .tree
        .scan(
            Bound::Included(b"same".to_vec()),
            Bound::Included(b"same".to_vec()),
        )
        .map(|r| r.unwrap().1)
        .collect();
    assert_eq!(same, (0..per * THREADS).map(tid).collect::<Vec<_>>());
    verify(&e.tree);
}

/// Every thread tries to insert every key uniquely; the check reports any existing entry as
/// live, so exactly one insert per key must win, however the threads interleave.
#[test]
fn concurrent_unique_inserts_one_winner() {
    let e = env(64);
    let keys = 4000u64;
    let wins = AtomicU64::new(0);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (tree, wins) = (&e.tree, &wins);
            s.spawn(move || {
                for i in 0..keys {
                    let k = key((i * 31 + t * 7) % keys);
                    let mine = Tid::new(1_000_000 + t as u32, i as u16);
                    match tree
                        .insert_unique(&k, mine, 2, &mut |_| Ok(Existing::Live))
                        .unwrap()
                    {
                        UniqueInsert::Inserted => {
                            wins.fetch_add(1, Ordering::Relaxed);
                        }
                        UniqueInsert::Duplicate(_) => {}
                        UniqueInsert::Wait(_) => unreachable!(),
                    }
                }
            });
        }
    });
    assert_eq!(wins.load(Ordering::Relaxed), keys);
    let got = all(&e.tree);
    assert_eq!(got.len() as u64, keys);
    assert_eq!(
        got.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
        (0..keys).map(key).collect::<Vec<_>>()
    );
    verify(&e.tree);
}

/// Replays a copy of the WAL into an empty data directory. `limit` stops after that many
/// page records (a crash at an arbitrary record boundary).
fn replay(src: &std::path::Path, limit: usize) -> (tempfile::TempDir, Arc<BufferPool>, BTree) {
    let dir = tempfile::tempdir().unwrap();
    let wal_dir = dir.path().join("wal");
    std::fs::create_dir_all(&wal_dir).unwrap();
    for f in std::fs::read_dir(src.join("wal")).unwrap() {
        let f = f.unwrap();
        // Segments only: a segment being created ahead is a temporary file until renamed.
        if f.file_name()
            .to_str()
            .is_some_and(|n| n.starts_with("xlogtemp."))
        {
            continue;
        }
        std::fs::copy(f.path(), wal_dir.join(f.file_name())).unwrap();
    }
    let mut reader = WalReader::new(&wal_dir, FIRST_LSN);
    let mut recs = Vec::new();
    while let Some(r) = reader.next_record() {
        if r.kind == RecordKind::Pages && recs.len() < limit {
            recs.push(r);
        }
    }
    let smgr = Arc::new(Smgr::new(dir.path()).unwrap());
    let wal = Wal::open(dir.path(), reader.end(), 0, false).unwrap();
    let pool = Arc::new(BufferPool::new(smgr.clone(), wal, 64));
    pool.set_recovery(true);
    for r in &recs {
        keel_storage::redo::redo_pages(&pool, r, &|_| false).unwrap();
    }
    pool.set_recovery(false);
    let rel = smgr.open(REL, false).unwrap();
    let tree = BTree::new(pool.clone(), rel);
    (dir, pool, tree)
}

fn same_pages(a: &BTree, b: &BTree) {
    assert_eq!(a.rel.nblocks(), b.rel.nblocks());
    for block in 0..a.rel.nblocks() {
        let pa = a.pool.read(&a.rel, block).unwrap();
        let pb = b.pool.read(&b.rel, block).unwrap();
        // The checksum field is only stamped on the copy written to disk.
        let mask = |d: &[u8]| {
            let mut v = d.to_vec();
            v[8..12].fill(0);
            v
        };
        assert!(
            mask(pa.data()) == mask(pb.data()),
            "block {block} differs after redo"
        );
    }
}

#[test]
fn crash_recovery_replays_identical_tree() {
    let e = env(64);
    let n = 30_000u64;
    for i in 0..n {
        let x = i * 7919 % n;
        e.tree.insert(&key(x % 5000), tid(x), 2).unwrap();
        if i == n / 2 {
            // A checkpoint in the middle: later first changes carry full-page images.
            e.pool.wal.begin_checkpoint();
            e.pool.flush_all().unwrap();
        }
    }
    e.tree
        .bulk_delete(3, &|t| t.slot % 7 == 0, &|| Ok(()))
        .unwrap();
    for i in 0..500 {
        let r = e
            .tree
            .insert_unique(&key(100_000 + i), tid(i), 4, &mut |_| Ok(Existing::Live))
            .unwrap();
        assert_eq!(r, UniqueInsert::Inserted);
    }
    e.pool.wal.flush_blocking(e.pool.wal.insert_lsn()).unwrap();
    let (_dir, _pool, tree) = replay(e.dir.path(), usize::MAX);
    same_pages(&e.tree, &tree);
    assert_eq!(all(&tree), all(&e.tree));
    verify(&tree);
    // The recovered tree keeps working.
    tree.insert(b"after", tid(1), 9).unwrap();
    assert_eq!(tree.count().unwrap(), e.tree.count().unwrap() + 1);
}

#[test]
fn crash_at_any_record_leaves_a_valid_tree() {
    let e = env(64);
    let n = 6000u64;
    for i in 0..n {
        let x = i * 7919 % n;
        e.tree.insert(&key(x), tid(x), 2).unwrap();
    }
    e.pool.wal.flush_blocking(e.pool.wal.insert_lsn()).unwrap();
    let mut reader = WalReader::new(&e.dir.path().join("wal"), FIRST_LSN);
    let mut total = 0;
    while reader.next_record().is_some() {
        total += 1;
    }
    // Cut points right after the meta page exists, and every few records through splits
    // (including between a split and its downlink insertion).
    for limit in (1..total).step_by(97).chain([total]) {
        let (_dir, _pool, tree) = replay(e.dir.path(), limit);
        verify(&tree);
        let got = all(&tree);
        assert!(got.windows(2).all(|w| w[0].0 < w[1].0));
        // Redo is per record: each insert record adds exactly one entry.
        assert!(got.len() <= limit);
        tree.insert(b"zz", tid(7), 9).unwrap();
        verify(&tree);
    }
}
