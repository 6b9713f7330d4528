//! Forward range scans. A scan copies the qualifying entries of one leaf while holding its
//! shared latch, remembers the right-link read under that same latch, and releases the leaf
//! before returning anything. Entries only ever move right (splits; there are no merges), so
//! the next batch is found by following that right-link; entries at or before the last one
//! returned are skipped by key, never by slot number.

use crate::BTree;
use crate::node::{self, FIRST_DATA, HIGH_KEY, TID_LEN, Target};
use keel_common::{BlockNo, PgResult, Tid};
use keel_storage::PageRead;
use std::cmp::Ordering;
use std::collections::VecDeque;
use std::ops::Bound;

/// A forward scan; yields (key, tid). Holds no latch between calls.
pub struct BTreeScan {
    tree: BTree,
    /// Inclusive lower bound on keys.
    lo: Vec<u8>,
    /// Exclusive upper bound on keys (None: unbounded).
    hi: Option<Vec<u8>>,
    buf: VecDeque<(Vec<u8>, Tid)>,
    state: State,
    /// Last entry handed out (`key || tid`), to skip by key position after a move right.
    last: Option<Vec<u8>>,
    /// The leaf read last: where a [`BTreeScan::restart`] looks first.
    leaf: Option<BlockNo>,
}

enum State {
    Start,
    /// Restarted: the first leaf may be this one (the leaf read last), else descend.
    Finger(BlockNo),
    Next(BlockNo),
    Done,
}

/// The smallest key greater than every key starting with `p`; None if there is none.
pub(crate) fn prefix_successor(p: &[u8]) -> Option<Vec<u8>> {
    let mut v = p.to_vec();
    while let Some(&b) = v.last() {
        if b == 0xff {
            v.pop();
        } else {
            let n = v.len();
            v[n - 1] += 1;
            return Some(v);
        }
    }
    None
}

/// The half-open interval `[lo, hi)` of stored keys that a scan between prefix bounds
/// `lower` and `upper` reads (`hi` None: to the end); None when it reads nothing.
pub fn key_interval(
    lower: &Bound<Vec<u8>>,
    upper: &Bound<Vec<u8>>,
) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    let lo = match lower {
        Bound::Unbounded => Vec::new(),
        Bound::Included(p) => p.clone(),
        Bound::Excluded(p) => prefix_successor(p)?,
    };
    let hi = match upper {
        Bound::Unbounded => None,
        Bound::Included(p) => prefix_successor(p),
        Bound::Excluded(p) => Some(p.clone()),
    };
    if hi.as_ref().is_some_and(|h| lo >= *h) {
        return None;
    }
    Some((lo, hi))
}

impl BTreeScan {
    pub(crate) fn new(tree: BTree, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>) -> BTreeScan {
        let mut scan = BTreeScan {
            tree,
            lo: Vec::new(),
            hi: None,
            buf: VecDeque::new(),
            state: State::Start,
            last: None,
            leaf: None,
        };
        scan.set_range(lower, upper);
        scan
    }

    fn set_range(&mut self, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>) {
        self.lo = match lower {
            Bound::Unbounded => Vec::new(),
            Bound::Included(p) => p,
            Bound::Excluded(p) => match prefix_successor(&p) {
                Some(s) => s,
                None => {
                    self.state = State::Done;
                    Vec::new()
                }
            },
        };
        self.hi = match upper {
            Bound::Unbounded => None,
            Bound::Included(p) => prefix_successor(&p),
            Bound::Excluded(p) => Some(p),
        };
        if self.hi.as_ref().is_some_and(|h| self.lo >= *h) {
            self.state = State::Done;
        }
    }

    /// Restarts the scan on a new range (an index nested loop's next probe). The first leaf
    /// is looked for where the previous range ended: when the new range starts on that leaf
    /// (its first entry is below the start, its high key above it), no descent from the root
    /// is needed. Probes in key order mostly land there.
    pub fn restart(&mut self, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>) {
        self.buf.clear();
        self.last = None;
        self.state = match self.leaf {
            Some(b) => State::Finger(b),
            None => State::Start,
        };
        self.set_range(lower, upper);
    }
}

/// The leaf `block` of `tree` when a scan's first entry (at `probe`) lies on it (see
/// [`BTreeScan::restart`]).
fn finger_leaf<'t>(
    tree: &'t BTree,
    block: BlockNo,
    probe: &Target<'_>,
) -> PgResult<Option<(keel_storage::PageRef<'t>, node::NodeInfo)>> {
    let page = tree.pool.read(&tree.rel, block)?;
    let ni = node::info(&page, block)?;
    // Entries left of this leaf are below its first entry: when that is below the probe,
    // nothing at or after the probe lies to the left.
    let starts_here = ni.is_leaf()
        && page.slot_count() > FIRST_DATA
        && probe.cmp_entry(page.item(FIRST_DATA)) == Ordering::Greater
        && !node::beyond_high_key(&page, &ni, probe);
    Ok(starts_here.then_some((page, ni)))
}

impl BTreeScan {
    /// Loads the next non-empty batch (or reaches the end).
    fn fill(&mut self) -> PgResult<()> {
        // Pages passed without an entry for the batch: bounded by the file (see `BTree::hop`).
        let mut hops = 0;
        loop {
            let probe = Target {
                key: &self.lo,
                tid: None,
            };
            let finger = match self.state {
                State::Finger(block) => finger_leaf(&self.tree, block, &probe)?,
                _ => None,
            };
            let (page, ni) = match (finger, &self.state) {
                (Some(found), _) => found,
                (None, State::Done) => return Ok(()),
                (None, State::Start | State::Finger(_)) => {
                    let block = self.tree.descend(&probe, 0, &mut Vec::new())?;
                    self.tree.read_moving_right(block, &probe)?
                }
                (None, State::Next(block)) => {
                    let page = self.tree.pool.read(&self.tree.rel, *block)?;
                    let ni = node::info(&page, *block)?;
                    (page, ni)
                }
            };
            self.leaf = Some(page.block());
            let n = page.slot_count();
            let mut s = match &self.last {
                None => node::lower_bound(&page, true, &probe),
                Some(last) => {
                    let t = Target {
                        key: node::entry_key(last),
                        tid: Some(tid6(last)),
                    };
                    let s = node::lower_bound(&page, true, &t);
                    if s < n && t.cmp_entry(page.item(s)) == Ordering::Equal {
                        s + 1
                    } else {
                        s
                    }
                }
            };
            s = s.max(FIRST_DATA);
            let mut past_end = false;
            while s < n {
                let e = page.item(s);
                let key = node::entry_key(e);
                if self.hi.as_ref().is_some_and(|h| key >= &h[..]) {
                    past_end = true;
                    break;
                }
                self.buf
                    .push_back((key.to_vec(), node::tid_from(&e[e.len() - TID_LEN..])));
                s += 1;
            }
            let high_past_end = !ni.is_rightmost()
                && self
                    .hi
                    .as_ref()
                    .is_some_and(|h| node::entry_key(page.item(HIGH_KEY)) >= &h[..]);
            self.state = if past_end || ni.is_rightmost() || high_past_end {
                State::Done
            } else {
                self.tree.hop(&mut hops, ni.right)?;
                State::Next(ni.right)
            };
            drop(page);
            if let Some((k, t)) = self.buf.back() {
                let mut l = self.last.take().unwrap_or_default();
                l.clear();
                l.extend_from_slice(k);
                l.extend_from_slice(&node::tid_bytes(*t));
                self.last = Some(l);
                return Ok(());
            }
        }
    }
}

pub(crate) fn tid6(entry: &[u8]) -> [u8; TID_LEN] {
    let mut t = [0u8; TID_LEN];
    t.copy_from_slice(&entry[entry.len() - TID_LEN..]);
    t
}

impl Iterator for BTreeScan {
    type Item = PgResult<(Vec<u8>, Tid)>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.buf.is_empty()
            && let Err(e) = self.fill()
        {
            self.state = State::Done;
            return Some(Err(e));
        }
        self.buf.pop_front().map(Ok)
    }
}
