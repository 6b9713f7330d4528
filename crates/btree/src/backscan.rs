//! Backward range scans (ORDER BY ... DESC, max()). Leaves have no left-links, so each step
//! descends again from the root to the leaf holding the entries just before a position: at
//! every level it takes the last child whose separator is *strictly* before the position, and
//! moves right while a page's high key is still before it (a split moved entries there).
//! Within that leaf the entries before the position are copied under its shared latch, then
//! returned last first; the next position is the leaf's low bound (the separator that led
//! to it), so every step ends strictly lower and the scan ends at the leftmost leaf or at
//! the lower bound. One descent per leaf: about `height` page reads per page of entries.
//!
//! Entries only move right (splits; no merges), and every entry a snapshot can see was in the
//! tree before the scan started, so an entry before the position is always in the leaf that
//! the descent reaches or in one of its right siblings up to the position.

use crate::BTree;
use crate::node::{self, FIRST_DATA, HIGH_KEY, TID_LEN, Target};
use crate::scan::{prefix_successor, tid6};
use keel_common::{PgResult, Tid};
use keel_storage::PageRead;
use std::cmp::Ordering;
use std::ops::Bound;

/// A backward scan; yields (key, tid), greatest first. Holds no latch between calls.
pub struct BTreeBackScan {
    tree: BTree,
    /// Inclusive lower bound on keys.
    lo: Vec<u8>,
    /// Entries strictly before this position are still to come.
    upto: Upto,
    /// The current leaf's entries, ascending; handed out from the back.
    buf: Vec<(Vec<u8>, Tid)>,
    done: bool,
}

enum Upto {
    /// Past the last entry of the index.
    End,
    /// Before every entry with this key (an exclusive key bound).
    Key(Vec<u8>),
    /// Before this `key || tid` (a separator or high key).
    Entry(Vec<u8>),
}

impl Upto {
    /// Whether the stored `key || tid` `entry` lies strictly before the position.
    fn after(&self, entry: &[u8]) -> bool {
        let target = match self {
            Upto::End => return true,
            Upto::Key(k) => Target { key: k, tid: None },
            Upto::Entry(e) => Target {
                key: node::entry_key(e),
                tid: Some(tid6(e)),
            },
        };
        target.cmp_entry(entry) == Ordering::Greater
    }
}

impl BTreeBackScan {
    /// Bounds as [`BTree::scan`]'s (prefixes).
    pub(crate) fn new(tree: BTree, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>) -> Self {
        let mut done = false;
        let lo = match lower {
            Bound::Unbounded => Vec::new(),
            Bound::Included(p) => p,
            Bound::Excluded(p) => prefix_successor(&p).unwrap_or_else(|| {
                done = true;
                Vec::new()
            }),
        };
        let upto = match upper {
            Bound::Unbounded => Upto::End,
            Bound::Included(p) => prefix_successor(&p).map_or(Upto::End, Upto::Key),
            Bound::Excluded(p) => Upto::Key(p),
        };
        if let Upto::Key(h) = &upto
            && lo >= *h
        {
            done = true;
        }
        BTreeBackScan {
            tree,
            lo,
            upto,
            buf: Vec::new(),
            done,
        }
    }

    /// Loads the entries of the next leaf to the left that has any in range, or ends.
    fn fill(&mut self) -> PgResult<()> {
        while self.buf.is_empty() && !self.done {
            let (page, low) = descend(&self.tree, &self.upto)?;
            let n = page.slot_count();
            let lo = Target {
                key: &self.lo,
                tid: None,
            };
            let start = node::lower_bound(&page, true, &lo).max(FIRST_DATA);
            for s in start..n {
                let e = page.item(s);
                if !self.upto.after(e) {
                    break;
                }
                let key = node::entry_key(e);
                self.buf
                    .push((key.to_vec(), node::tid_from(&e[e.len() - TID_LEN..])));
            }
            drop(page);
            // Entries below the lower bound are on this leaf, or it is the leftmost one.
            let below_lo = start > FIRST_DATA;
            match low {
                Some(low)
                    if !below_lo
                        && Target {
                            key: &self.lo,
                            tid: None,
                        }
                        .cmp_entry(&low)
                            == Ordering::Less =>
                {
                    self.upto = Upto::Entry(low)
                }
                _ => self.done = true,
            }
        }
        Ok(())
    }
}

/// The leaf holding the entries just before `upto`, share-latched, and its low bound
/// (`key || tid` of the separator or high key that leads to it; None for the leftmost
/// leaf).
fn descend<'t>(
    tree: &'t BTree,
    upto: &Upto,
) -> PgResult<(keel_storage::PageRef<'t>, Option<Vec<u8>>)> {
    let (mut block, _) = tree.root(false)?;
    let mut low: Option<Vec<u8>> = None;
    let mut hops = 0;
    loop {
        let page = tree.pool.read(&tree.rel, block)?;
        let ni = node::info(&page, block)?;
        if !ni.is_rightmost() && upto.after(page.item(HIGH_KEY)) {
            // A split moved entries before the position to the right.
            low = Some(page.item(HIGH_KEY).to_vec());
            block = ni.right;
            tree.hop(&mut hops, block)?;
            continue;
        }
        if ni.is_leaf() {
            return Ok((page, low));
        }
        // The last child whose separator lies before the position (the first child's
        // separator is minus infinity).
        let n = page.slot_count();
        let mut slot = FIRST_DATA;
        let (mut a, mut b) = (FIRST_DATA + 1, n);
        while a < b {
            let mid = a + (b - a) / 2;
            if upto.after(node::entry_part(page.item(mid), false)) {
                slot = mid;
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        if slot > FIRST_DATA {
            low = Some(node::entry_part(page.item(slot), false).to_vec());
        }
        block = node::child_of(page.item(slot));
        hops = 0;
    }
}

impl Iterator for BTreeBackScan {
    type Item = PgResult<(Vec<u8>, Tid)>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.buf.is_empty()
            && let Err(e) = self.fill()
        {
            self.done = true;
            return Some(Err(e));
        }
        self.buf.pop().map(Ok)
    }
}
