//! Single-threaded tests against real storage (temp dir, WAL, buffer pool).

use crate::node::{self, FIRST_DATA, HIGH_KEY};
use crate::{BTree, Existing, UniqueInsert};
use keel_common::{PgResult, Tid, sqlstate};
use keel_storage::smgr::Smgr;
use keel_storage::wal::{FIRST_LSN, Wal};
use keel_storage::{BufferPool, PageRead};
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

#[allow(dead_code)] // `dir` keeps the temp dir alive; `pool` is used by other test modules.
pub(crate) struct Env {
    pub dir: tempfile::TempDir,
    pub pool: Arc<BufferPool>,
    pub tree: BTree,
}

pub(crate) const REL: u32 = 16384;

pub(crate) fn env(nframes: usize) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let smgr = Arc::new(Smgr::new(dir.path()).unwrap());
    let wal = Wal::open(dir.path(), FIRST_LSN, 0, false).unwrap();
    let pool = Arc::new(BufferPool::new(smgr.clone(), wal, nframes));
    let rel = smgr.open(REL, true).unwrap();
    let tree = BTree::new(pool.clone(), rel);
    tree.create(1).unwrap();
    Env { dir, pool, tree }
}

pub(crate) fn tid(n: u64) -> Tid {
    Tid::new((n / 100) as u32, (n % 100) as u16)
}

pub(crate) fn key(n: u64) -> Vec<u8> {
    format!("k{n:08}").into_bytes()
}

pub(crate) fn all(t: &BTree) -> Vec<(Vec<u8>, Tid)> {
    t.scan(Bound::Unbounded, Bound::Unbounded)
        .collect::<PgResult<Vec<_>>>()
        .unwrap()
}

/// Walks every level left to right checking order, high keys and levels.
pub(crate) fn verify(t: &BTree) {
    let (root, root_level) = t.root(true).unwrap();
    let mut leftmost = root;
    for level in (0..=root_level).rev() {
        let mut block = leftmost;
        let mut prev: Option<Vec<u8>> = None;
        let mut first = true;
        loop {
            let page = t.pool.read(&t.rel, block).unwrap();
            let ni = node::info(&page, block).unwrap();
            assert_eq!(ni.level, level);
            assert_eq!(ni.is_root(), block == root);
            let leaf = ni.is_leaf();
            if first && !leaf {
                leftmost = node::child_of(page.item(FIRST_DATA));
            }
            for s in FIRST_DATA..page.slot_count() {
                if !leaf && s == FIRST_DATA && first {
                    continue;
                }
                let e = node::entry_part(page.item(s), leaf).to_vec();
                if let Some(p) = &prev {
                    assert_eq!(
                        cmp_entries(p, &e),
                        std::cmp::Ordering::Less,
                        "order at block {block} slot {s}"
                    );
                }
                prev = Some(e);
            }
            first = false;
            if ni.is_rightmost() {
                break;
            }
            let hk = page.item(HIGH_KEY).to_vec();
            if let Some(p) = &prev {
                assert_eq!(
                    cmp_entries(p, &hk),
                    std::cmp::Ordering::Less,
                    "high key of block {block}"
                );
            }
            block = ni.right;
            let next = t.pool.read(&t.rel, block).unwrap();
            if next.slot_count() > FIRST_DATA {
                let e = node::entry_part(next.item(FIRST_DATA), leaf);
                assert_ne!(
                    cmp_entries(e, &hk),
                    std::cmp::Ordering::Less,
                    "low key of block {block}"
                );
            }
        }
    }
}

fn cmp_entries(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let (ak, at) = a.split_at(a.len() - node::TID_LEN);
    let (bk, bt) = b.split_at(b.len() - node::TID_LEN);
    ak.cmp(bk).then(at.cmp(bt))
}

#[test]
fn empty_tree() {
    let e = env(64);
    assert_eq!(e.tree.count().unwrap(), 0);
    assert!(all(&e.tree).is_empty());
    verify(&e.tree);
}

#[test]
fn ordered_scan_and_bounds() {
    let e = env(64);
    let keys: Vec<&[u8]> = vec![
        b"b",
        b"a",
        b"ab",
        b"abc",
        b"b\x00",
        b"c",
        b"ac",
        b"a\xff",
        b"a\xff\x01",
    ];
    for (i, k) in keys.iter().enumerate() {
        e.tree.insert(k, tid(i as u64), 2).unwrap();
    }
    let mut sorted: Vec<Vec<u8>> = keys.iter().map(|k| k.to_vec()).collect();
    sorted.sort();
    let got: Vec<Vec<u8>> = all(&e.tree).into_iter().map(|(k, _)| k).collect();
    assert_eq!(got, sorted);
    let range = |lo: Bound<&[u8]>, hi: Bound<&[u8]>| -> Vec<Vec<u8>> {
        e.tree
            .scan(lo.map(|b| b.to_vec()), hi.map(|b| b.to_vec()))
            .map(|r| r.unwrap().0)
            .collect()
    };
    let v = |s: &[&[u8]]| s.iter().map(|x| x.to_vec()).collect::<Vec<_>>();
    // Included upper bound is a prefix bound: "a" admits every key starting with "a".
    assert_eq!(
        range(Bound::Unbounded, Bound::Included(b"a")),
        v(&[b"a", b"ab", b"abc", b"ac", b"a\xff", b"a\xff\x01"])
    );
    assert_eq!(range(Bound::Unbounded, Bound::Excluded(b"ab")), v(&[b"a"]));
    assert_eq!(
        range(Bound::Included(b"ab"), Bound::Included(b"ab")),
        v(&[b"ab", b"abc"])
    );
    // Excluded lower bound skips the whole prefix.
    assert_eq!(
        range(Bound::Excluded(b"a"), Bound::Unbounded),
        v(&[b"b", b"b\x00", b"c"])
    );
    assert_eq!(
        range(Bound::Excluded(b"a\xff"), Bound::Included(b"b")),
        v(&[b"b", b"b\x00"])
    );
    assert_eq!(
        range(Bound::Included(b"c"), Bound::Excluded(b"b")),
        Vec::<Vec<u8>>::new()
    );
    assert_eq!(
        range(Bound::Excluded(b"\xff"), Bound::Unbounded),
        Vec::<Vec<u8>>::new()
    );
    assert_eq!(
        range(Bound::Included(b"zz"), Bound::Unbounded),
        Vec::<Vec<u8>>::new()
    );
    verify(&e.tree);
}

#[test]
fn same_entry_twice_is_noop() {
    let e = env(64);
    e.tree.insert(b"x", tid(5), 2).unwrap();
    e.tree.insert(b"x", tid(5), 2).unwrap();
    e.tree.insert(b"x", tid(4), 2).unwrap();
    let got = all(&e.tree);
    assert_eq!(got, vec![(b"x".to_vec(), tid(4)), (b"x".to_vec(), tid(5))]);
}

#[test]
fn key_too_large() {
    let e = env(64);
    let big = vec![7u8; 2697];
    let err = e.tree.insert(&big, tid(1), 2).unwrap_err();
    assert_eq!(err.code, sqlstate::PROGRAM_LIMIT_EXCEEDED);
    assert!(
        err.message
            .contains("index row size 2705 exceeds btree version 4 maximum 2704"),
        "{}",
        err.message
    );
    // The largest allowed keys still split correctly, many per level.
    let max = 2696;
    for i in 0..200u64 {
        let mut k = vec![(i % 251) as u8; max];
        k[..8].copy_from_slice(&i.to_be_bytes());
        e.tree.insert(&k, tid(i), 2).unwrap();
    }
    assert_eq!(e.tree.count().unwrap(), 200);
    verify(&e.tree);
}

#[test]
fn many_inserts_random_order_with_splits() {
    let e = env(256);
    let n = 50_000u64;
    // A permutation of 0..n (multiplicative hashing with an odd constant modulo a power of 2).
    let m = 65_536u64;
    let mut inserted = BTreeSet::new();
    for i in 0..m {
        let x = (i.wrapping_mul(40_503) + 17) % m;
        if x < n {
            e.tree.insert(&key(x), tid(x), 2).unwrap();
            inserted.insert(x);
        }
    }
    assert_eq!(inserted.len() as u64, n);
    let got = all(&e.tree);
    assert_eq!(got.len() as u64, n);
    for (i, (k, t)) in got.iter().enumerate() {
        assert_eq!(k, &key(i as u64));
        assert_eq!(*t, tid(i as u64));
    }
    verify(&e.tree);
    assert!(e.tree.root(true).unwrap().1 >= 1);
    // Point lookups.
    for x in [0, 1, 777, n / 2, n - 1] {
        let r: Vec<_> = e
            .tree
            .scan(Bound::Included(key(x)), Bound::Included(key(x)))
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(r, vec![(key(x), tid(x))]);
        assert_eq!(e.tree.lookup(&key(x)).unwrap(), vec![tid(x)]);
    }
}

#[test]
fn sequential_inserts_small_pool_evicts() {
    let e = env(64);
    let n = 200_000u64;
    for x in 0..n {
        e.tree.insert(&key(x), tid(x), 2).unwrap();
    }
    assert_eq!(e.tree.count().unwrap(), n);
    verify(&e.tree);
    // Sequential appends leave leaves ~90% full (23 bytes per entry with its line pointer),
    // not half full as 50/50 splits would.
    let pages = e.tree.rel.nblocks() as u64;
    assert!(
        pages < n * 23 / (node::CAPACITY as u64 * 85 / 100),
        "{pages} pages"
    );
    let mid: Vec<_> = e
        .tree
        .scan(Bound::Included(key(123_456)), Bound::Excluded(key(123_460)))
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(
        mid.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
        (123_456..123_460).map(key).collect::<Vec<_>>()
    );
}

#[test]
fn duplicates_across_pages() {
    let e = env(64);
    let n = 5000u64;
    // Interleave three keys so the many-tid run for "dup" spans several leaves.
    for i in (0..n).rev() {
        e.tree.insert(b"dup", tid(i), 2).unwrap();
        if i % 10 == 0 {
            e.tree.insert(b"dua", tid(i), 2).unwrap();
            e.tree.insert(b"duq", tid(i), 2).unwrap();
        }
    }
    verify(&e.tree);
    let got: Vec<_> = e
        .tree
        .scan(
            Bound::Included(b"dup".to_vec()),
            Bound::Included(b"dup".to_vec()),
        )
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(got.len() as u64, n);
    assert!(got.windows(2).all(|w| w[0].1.to_u64() < w[1].1.to_u64()));
    assert_eq!(got[0].1, tid(0));
    let tids = e.tree.lookup(b"dup").unwrap();
    assert_eq!(tids, got.iter().map(|(_, t)| *t).collect::<Vec<_>>());
    assert!(e.tree.lookup(b"du").unwrap().is_empty());
    assert_eq!(e.tree.lookup(b"dua").unwrap().len() as u64, n / 10);
    // Unique check walks every equal entry across the pages.
    let mut seen = 0;
    let r = e
        .tree
        .insert_unique(b"dup", tid(999_999), 3, &mut |_| {
            seen += 1;
            Ok(Existing::Dead)
        })
        .unwrap();
    assert_eq!(r, UniqueInsert::Inserted);
    assert_eq!(seen, n);
    assert_eq!(e.tree.count().unwrap(), n + 1 + 2 * n / 10);
}

#[test]
fn unique_live_dead_in_progress() {
    let e = env(64);
    let t = &e.tree;
    let mut live = |_: Tid| Ok(Existing::Live);
    assert_eq!(
        t.insert_unique(b"k", tid(1), 2, &mut live).unwrap(),
        UniqueInsert::Inserted
    );
    assert_eq!(
        t.insert_unique(b"k", tid(2), 2, &mut live).unwrap(),
        UniqueInsert::Duplicate(tid(1))
    );
    assert_eq!(
        t.insert_unique(b"k", tid(2), 2, &mut |_| Ok(Existing::InProgress(42)))
            .unwrap(),
        UniqueInsert::Wait(42)
    );
    assert_eq!(t.count().unwrap(), 1);
    assert_eq!(
        t.insert_unique(b"k", tid(2), 2, &mut |_| Ok(Existing::Dead))
            .unwrap(),
        UniqueInsert::Inserted
    );
    // Now two entries: one dead, one live -> duplicate points at the live one.
    let mut which = |x: Tid| {
        Ok(if x == tid(2) {
            Existing::Live
        } else {
            Existing::Dead
        })
    };
    assert_eq!(
        t.insert_unique(b"k", tid(3), 2, &mut which).unwrap(),
        UniqueInsert::Duplicate(tid(2))
    );
    // Keys that merely share a prefix are not equal.
    assert_eq!(
        t.insert_unique(b"k\x00", tid(4), 2, &mut live).unwrap(),
        UniqueInsert::Inserted
    );
    assert_eq!(
        t.insert_unique(b"", tid(5), 2, &mut live).unwrap(),
        UniqueInsert::Inserted
    );
    // Errors from the callback propagate, nothing inserted.
    let err = t
        .insert_unique(b"k", tid(6), 2, &mut |_| {
            Err(keel_common::PgError::new(sqlstate::INTERNAL_ERROR, "boom"))
        })
        .unwrap_err();
    assert_eq!(err.message, "boom");
    assert_eq!(t.count().unwrap(), 4);
}

#[test]
fn bulk_delete_removes_dead() {
    let e = env(64);
    let n = 20_000u64;
    for x in 0..n {
        e.tree.insert(&key(x % 1000), tid(x), 2).unwrap();
    }
    let removed = e
        .tree
        .bulk_delete(
            3,
            &|t: Tid| t.to_u64().is_multiple_of(3) || tid_num(t) >= 15_000,
            &|| Ok(()),
        )
        .unwrap();
    let expect: Vec<u64> = (0..n)
        .filter(|&x| !(tid(x).to_u64().is_multiple_of(3) || x >= 15_000))
        .collect();
    assert_eq!(removed, n - expect.len() as u64);
    assert_eq!(e.tree.count().unwrap(), expect.len() as u64);
    verify(&e.tree);
    // Delete everything, then the tree still works.
    e.tree.bulk_delete(4, &|_| true, &|| Ok(())).unwrap();
    assert_eq!(e.tree.count().unwrap(), 0);
    for x in 0..3000 {
        e.tree.insert(&key(x), tid(x), 5).unwrap();
    }
    assert_eq!(e.tree.count().unwrap(), 3000);
    verify(&e.tree);
}

fn tid_num(t: Tid) -> u64 {
    t.block as u64 * 100 + t.slot as u64
}

/// Rough hot-path timing (run with `--ignored --nocapture`): 1M keys, random point lookups.
#[test]
#[ignore]
fn bench_point_lookups() {
    let e = env(4096);
    let n = 1_000_000u64;
    let t0 = std::time::Instant::now();
    for x in 0..n {
        e.tree.insert(&key(x), tid(x), 2).unwrap();
    }
    let ins = t0.elapsed();
    let t1 = std::time::Instant::now();
    let mut found = 0;
    for i in 0..n {
        let x = i.wrapping_mul(2_654_435_761) % n;
        found += e.tree.lookup(&key(x)).unwrap().len();
    }
    let look = t1.elapsed();
    assert_eq!(found as u64, n);
    println!(
        "insert {:?}/key, lookup {:?}/key",
        ins / n as u32,
        look / n as u32
    );
}

#[test]
fn short_key_compare_matches_byte_order() {
    let samples: Vec<Vec<u8>> = vec![
        vec![],
        vec![0],
        vec![0, 0],
        vec![0, 1],
        vec![1],
        vec![0x80, 0, 0, 1],
        vec![0x80, 0, 0, 1, 0],
        vec![0x7f, 0xff, 0xff, 0xff],
        vec![0xff; 8],
        vec![0xff; 9],
        vec![1, 2, 3, 4, 5, 6, 7, 8],
        vec![1, 2, 3, 4, 5, 6, 7, 8, 0],
        vec![1, 2, 3, 4, 5, 6, 7],
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 11],
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0],
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0],
        vec![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        vec![0xff; 15],
        vec![0xff; 16],
        vec![0xff; 17],
    ];
    for a in &samples {
        for b in &samples {
            assert_eq!(
                crate::node::cmp_bytes(a, b),
                a[..].cmp(&b[..]),
                "{a:?} vs {b:?}"
            );
        }
    }
}

/// A restarted scan (an index nested loop's next probe) finds what a new scan finds, whether
/// the new range starts on the leaf read last, left of it, right of it or far away, and
/// after splits moved entries off that leaf between probes.
#[test]
fn restarted_scans_match_new_scans() {
    let e = env(256);
    let fresh = |lo: &Bound<Vec<u8>>, hi: &Bound<Vec<u8>>| {
        e.tree
            .scan(lo.clone(), hi.clone())
            .collect::<PgResult<Vec<_>>>()
            .unwrap()
    };
    for x in (0..20_000u64).step_by(2) {
        e.tree.insert(&key(x), tid(x), 2).unwrap();
    }
    // A run of equal keys across several leaves: a probe for it must not start on the
    // run's last leaf.
    for i in 0..3000u64 {
        e.tree.insert(&key(10_001), tid(500_000 + i), 2).unwrap();
    }
    let mut scan = e
        .tree
        .scan(Bound::Included(key(0)), Bound::Included(key(0)));
    assert_eq!(scan.by_ref().count(), 1);
    // Ascending probes (mostly the same leaf), a jump back, a far jump, the duplicate run
    // reached from its end, odd (absent) keys, and open ranges.
    let mut probes: Vec<u64> = (0..400).map(|i| i * 2).collect();
    probes.extend([
        5, 19_998, 10_001, 10_002, 10_001, 9_999, 3, 19_999, 0, 12_000,
    ]);
    for (n, &p) in probes.iter().enumerate() {
        if n % 50 == 49 {
            // Splits between probes: the leaf read last loses entries to a new right
            // sibling.
            for x in (p * 2 + 1..p * 2 + 400).step_by(2) {
                e.tree.insert(&key(x), tid(x), 2).unwrap();
            }
        }
        let (lo, hi) = if n % 7 == 0 {
            (Bound::Excluded(key(p)), Bound::Included(key(p + 40)))
        } else {
            (Bound::Included(key(p)), Bound::Included(key(p)))
        };
        scan.restart(lo.clone(), hi.clone());
        let got = scan.by_ref().collect::<PgResult<Vec<_>>>().unwrap();
        assert_eq!(got, fresh(&lo, &hi), "probe {n}: {p}");
    }
    verify(&e.tree);
}
