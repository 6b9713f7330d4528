//! Insertion: leaf insert, unique check, page splits and parent (downlink) insertion.
//!
//! A split holds exactly the page being split and its new right sibling (plus, for a root
//! split, the new root and the meta page), logs them in one WAL record, releases them, and
//! only then latches the parent to add the downlink. See README.md.

use crate::node::{self, FIRST_DATA, FLAG_ROOT, HIGH_KEY, NO_BLOCK, NodeInfo, TID_LEN, Target};
use crate::{BTree, Existing, UniqueInsert};
use keel_common::{BlockNo, PgError, PgResult, Tid, sqlstate};
use keel_storage::{PageMut, PageRead};
use std::cmp::Ordering;

/// Fill of the left page when a split happens at the end of the rightmost page (sequential
/// inserts), like nbtree's default leaf fillfactor of 90.
const RIGHTMOST_FILL: usize = node::CAPACITY * 9 / 10;

pub fn insert(tree: &BTree, key: &[u8], tid: Tid, xid: u64) -> PgResult<()> {
    node::check_key_size(key)?;
    let target = Target {
        key,
        tid: Some(node::tid_bytes(tid)),
    };
    let mut stack = Vec::new();
    let block = tree.descend(&target, 0, &mut stack)?;
    let (page, ni) = tree.write_moving_right(block, &target)?;
    let slot = node::lower_bound(&page, true, &target);
    if slot < page.slot_count() && target.cmp_entry(page.item(slot)) == Ordering::Equal {
        return Ok(());
    }
    insert_at(tree, page, ni, slot, &node::leaf_item(key, tid), stack, xid)
}

pub fn insert_unique(
    tree: &BTree,
    key: &[u8],
    tid: Tid,
    xid: u64,
    check: &mut dyn FnMut(Tid) -> PgResult<Existing>,
) -> PgResult<UniqueInsert> {
    node::check_key_size(key)?;
    let probe = Target { key, tid: None };
    let mine = node::tid_bytes(tid);
    let mut stack = Vec::new();
    let block = tree.descend(&probe, 0, &mut stack)?;
    // The first leaf that can hold `key` stays latched exclusively during the whole check:
    // every inserter of an equal key passes through it, so they serialize here.
    let mut held: Vec<(PageMut<'_>, NodeInfo)> = vec![tree.write_moving_right(block, &probe)?];
    let mut already_there = false;
    let mut hops = 0;
    loop {
        let Some((page, ni)) = held.last() else {
            return Err(PgError::new(
                sqlstate::INTERNAL_ERROR,
                "unique check lost its leaf",
            ));
        };
        let n = page.slot_count();
        let mut s = node::lower_bound(page, true, &probe);
        let mut ended = false;
        while s < n {
            let e = page.item(s);
            if node::entry_key(e) != key {
                ended = true;
                break;
            }
            let t = &e[e.len() - TID_LEN..];
            if t == mine {
                already_there = true;
            } else {
                match check(node::tid_from(t))? {
                    Existing::Dead => {}
                    Existing::Live => return Ok(UniqueInsert::Duplicate(node::tid_from(t))),
                    Existing::InProgress(x) => return Ok(UniqueInsert::Wait(x)),
                }
            }
            s += 1;
        }
        if ended || ni.is_rightmost() || node::entry_key(page.item(HIGH_KEY)) != key {
            break;
        }
        // Equal keys continue on the right sibling: latch it too (left to right order).
        let right = ni.right;
        tree.hop(&mut hops, right)?;
        let rpage = tree.pool.write(&tree.rel, right)?;
        let rni = node::info(&rpage, right)?;
        held.push((rpage, rni));
    }
    if already_there {
        return Ok(UniqueInsert::Inserted);
    }
    // (key, tid) belongs on the first held page whose high key is above it; the last held
    // page always qualifies (its high key's key is > key, or it is rightmost).
    let target = Target {
        key,
        tid: Some(mine),
    };
    let at = held
        .iter()
        .position(|(p, ni)| !node::beyond_high_key(p, ni, &target))
        .unwrap_or(held.len() - 1);
    let (page, ni) = held.swap_remove(at);
    // Releasing the other pages is safe: a concurrent checker of this key walks right to
    // `page` and blocks on its latch until our entry is in.
    drop(held);
    let slot = node::lower_bound(&page, true, &target);
    insert_at(tree, page, ni, slot, &node::leaf_item(key, tid), stack, xid)?;
    Ok(UniqueInsert::Inserted)
}

/// Inserts `item` at `slot` of the latched `page`, splitting as needed up the tree.
/// `stack` holds the internal pages passed by the descent (parent last).
fn insert_at<'a>(
    tree: &'a BTree,
    mut page: PageMut<'a>,
    ni: NodeInfo,
    slot: u16,
    item: &[u8],
    mut stack: Vec<BlockNo>,
    xid: u64,
) -> PgResult<()> {
    if page.insert_item_at(slot, item) {
        tree.pool.wal.log_pages(xid, &mut [&mut page]);
        return Ok(());
    }
    let mut pending = split(tree, page, ni, slot, item, xid)?;
    // Downlink insertion: nothing is latched here; each loop iteration latches one parent.
    while let Some((sep, right, level)) = pending {
        let target = Target {
            key: node::entry_key(&sep),
            tid: Some(tid6(&sep)),
        };
        let parent = match stack.pop() {
            Some(b) => b,
            None => {
                // The descent started below the real root (stale root hint): find the
                // parent level afresh from the meta page.
                tree.root(true)?;
                stack.clear();
                tree.descend(&target, level + 1, &mut stack)?
            }
        };
        let (mut ppage, pni) = tree.write_moving_right(parent, &target)?;
        if pni.level != level + 1 {
            return Err(PgError::new(
                sqlstate::INDEX_CORRUPTED,
                "btree parent has the wrong level",
            ));
        }
        let pslot = node::lower_bound(&ppage, false, &target);
        let pitem = node::internal_item(&sep, right);
        if ppage.insert_item_at(pslot, &pitem) {
            tree.pool.wal.log_pages(xid, &mut [&mut ppage]);
            return Ok(());
        }
        pending = split(tree, ppage, pni, pslot, &pitem, xid)?;
    }
    Ok(())
}

fn tid6(entry: &[u8]) -> [u8; TID_LEN] {
    let mut t = [0u8; TID_LEN];
    t.copy_from_slice(&entry[entry.len() - TID_LEN..]);
    t
}

/// Splits `page` (latched, full) while inserting `item` at `slot`. Returns the separator
/// (`key || tid`, the new right page's low bound), the new page and the level, for the
/// caller to add the downlink to the parent; None when the root was split (the new root
/// already holds both downlinks). All latches are released on return.
fn split<'a>(
    tree: &'a BTree,
    mut page: PageMut<'a>,
    ni: NodeInfo,
    slot: u16,
    item: &[u8],
    xid: u64,
) -> PgResult<Option<(Vec<u8>, BlockNo, u16)>> {
    let leaf = ni.is_leaf();
    let n = page.slot_count();
    let mut items: Vec<Vec<u8>> = Vec::with_capacity(n as usize + 1);
    for s in FIRST_DATA..n {
        if s == slot {
            items.push(item.to_vec());
        }
        items.push(page.item(s).to_vec());
    }
    if slot >= n {
        items.push(item.to_vec());
    }
    let old_high = page.item(HIGH_KEY).to_vec();
    let append = ni.is_rightmost() && slot >= n;
    let k = choose_split(&items, leaf, old_high.len(), append).ok_or_else(|| {
        PgError::new(
            sqlstate::INTERNAL_ERROR,
            format!("no valid split point in btree block {}", page.block()),
        )
    })?;
    let sep = node::entry_part(&items[k], leaf).to_vec();

    let mut right = tree.pool.extend(&tree.rel)?;
    let rblock = right.block();
    // Everything that can fail (extending the file on a full disk, reading the meta page)
    // happens before the first change: an error must not leave a half-split page in memory.
    let above = if ni.is_root() {
        let root = tree.pool.extend(&tree.rel)?;
        let meta = tree.pool.write(&tree.rel, node::META_BLOCK)?;
        node::read_meta(&meta)?;
        Some((root, meta))
    } else {
        None
    };
    node::init_node(
        &mut right,
        NodeInfo {
            flags: 0,
            level: ni.level,
            right: ni.right,
        },
        &old_high,
    );
    for it in &items[k..] {
        add_last(&mut right, it)?;
    }
    node::init_node(
        &mut page,
        NodeInfo {
            flags: ni.flags & !FLAG_ROOT,
            level: ni.level,
            right: rblock,
        },
        &sep,
    );
    for it in &items[..k] {
        add_last(&mut page, it)?;
    }
    let Some((mut root, mut meta)) = above else {
        tree.pool.wal.log_pages(xid, &mut [&mut page, &mut right]);
        return Ok(Some((sep, rblock, ni.level)));
    };
    // Root split: a new root above both halves, switched in by the meta page, all in one
    // WAL record. The meta latch was taken last (it is above every node in latch order).
    let level = ni.level + 1;
    node::init_node(
        &mut root,
        NodeInfo {
            flags: FLAG_ROOT,
            level,
            right: NO_BLOCK,
        },
        &[],
    );
    add_last(
        &mut root,
        &node::internal_item(&[0u8; TID_LEN], page.block()),
    )?;
    add_last(&mut root, &node::internal_item(&sep, rblock))?;
    node::write_meta(&mut meta, root.block(), level, false);
    tree.pool
        .wal
        .log_pages(xid, &mut [&mut page, &mut right, &mut root, &mut meta]);
    tree.set_root_hint(root.block(), level);
    Ok(None)
}

fn add_last(page: &mut PageMut<'_>, item: &[u8]) -> PgResult<()> {
    let n = page.slot_count();
    if page.insert_item_at(n, item) {
        Ok(())
    } else {
        Err(PgError::new(
            sqlstate::INTERNAL_ERROR,
            format!("btree split overflowed block {}", page.block()),
        ))
    }
}

/// Index of the first item that goes right: both halves must fit with their high keys (the
/// left one gets the separator, the right one keeps the old high key). Balanced by bytes,
/// except for appends at the end of the rightmost page, which leave the left page 90% full.
fn choose_split(items: &[Vec<u8>], leaf: bool, old_high_len: usize, append: bool) -> Option<usize> {
    let total: usize = items.iter().map(|i| node::footprint(i.len())).sum();
    let right_cap = node::CAPACITY - node::footprint(old_high_len);
    let mut left = node::footprint(items[0].len());
    let mut best: Option<(usize, usize)> = None;
    for (k, item) in items.iter().enumerate().skip(1) {
        let sep_len = node::entry_part(item, leaf).len();
        let right = total - left;
        if left + node::footprint(sep_len) <= node::CAPACITY && right <= right_cap {
            let score = if append {
                left.abs_diff(RIGHTMOST_FILL)
            } else {
                left.abs_diff(right)
            };
            if best.is_none_or(|(s, _)| score < s) {
                best = Some((score, k));
            }
        }
        left += node::footprint(item.len());
    }
    best.map(|(_, k)| k)
}
