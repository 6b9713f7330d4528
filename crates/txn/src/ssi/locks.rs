//! The SIREAD lock table: tuples and whole relations by relation file, key ranges by index
//! file. A lock never blocks; it only tells a later writer who read what it overwrites.

use super::{PROMOTE_AFTER, SxId};
use keel_common::{PgError, PgResult, sqlstate};
use rustc_hash::{FxHashMap, FxHashSet};

/// What a SIREAD lock covers besides key ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// Every row of a relation, present and future (a sequential or bitmap scan).
    Relation(u32),
    /// One row, by its stable root (all its versions).
    Tuple(u32, u64),
}

pub(super) struct Range {
    sx: SxId,
    lo: Vec<u8>,
    hi: Option<Vec<u8>>,
}

impl Range {
    fn covers(&self, key: &[u8]) -> bool {
        key >= self.lo.as_slice() && self.hi.as_deref().is_none_or(|h| key < h)
    }
}

/// The locks one transaction holds (what to remove when it goes, what to promote).
#[derive(Default)]
pub(super) struct Held {
    tuples: Vec<Target>,
    per_rel: FxHashMap<u32, u32>,
    whole_rels: FxHashSet<u32>,
    per_index: FxHashMap<u32, u32>,
    whole_indexes: FxHashSet<u32>,
}

#[derive(Default)]
pub(super) struct Table {
    locks: FxHashMap<Target, Vec<SxId>>,
    pub(super) ranges: FxHashMap<u32, Vec<Range>>,
    count: usize,
}

fn out_of_memory() -> PgError {
    PgError::new(sqlstate::OUT_OF_MEMORY, "out of shared memory")
        .with_hint("You might need to increase max_pred_locks_per_transaction.")
}

impl Table {
    pub(super) fn len(&self) -> usize {
        self.count
    }

    fn add(&mut self, t: Target, id: SxId) {
        self.locks.entry(t).or_default().push(id);
        self.count += 1;
    }

    fn drop_one(&mut self, t: Target, id: SxId) {
        if let Some(v) = self.locks.get_mut(&t) {
            let n = v.len();
            v.retain(|&x| x != id);
            self.count -= n - v.len();
            if v.is_empty() {
                self.locks.remove(&t);
            }
        }
    }

    pub(super) fn lock(
        &mut self,
        id: SxId,
        held: &mut Held,
        target: Target,
        max: usize,
    ) -> PgResult<()> {
        match target {
            Target::Relation(rel) => {
                if !held.whole_rels.insert(rel) {
                    return Ok(());
                }
                self.add(target, id);
                // The relation lock covers its tuple locks: drop them.
                let mut kept = Vec::with_capacity(held.tuples.len());
                for t in std::mem::take(&mut held.tuples) {
                    match t {
                        Target::Tuple(r, _) if r == rel => self.drop_one(t, id),
                        _ => kept.push(t),
                    }
                }
                held.tuples = kept;
                held.per_rel.remove(&rel);
                Ok(())
            }
            Target::Tuple(rel, _) => {
                if held.whole_rels.contains(&rel)
                    || self.locks.get(&target).is_some_and(|v| v.contains(&id))
                {
                    return Ok(());
                }
                let n = held.per_rel.entry(rel).or_default();
                *n += 1;
                if *n > PROMOTE_AFTER {
                    return self.lock(id, held, Target::Relation(rel), max);
                }
                if self.count >= max {
                    return Err(out_of_memory());
                }
                self.add(target, id);
                held.tuples.push(target);
                Ok(())
            }
        }
    }

    pub(super) fn lock_range(
        &mut self,
        id: SxId,
        held: &mut Held,
        index: u32,
        lo: &[u8],
        hi: Option<&[u8]>,
        max: usize,
    ) -> PgResult<()> {
        if held.whole_indexes.contains(&index) {
            return Ok(());
        }
        let n = held.per_index.entry(index).or_default();
        *n += 1;
        let whole = *n > PROMOTE_AFTER || (lo.is_empty() && hi.is_none());
        let ranges = self.ranges.entry(index).or_default();
        if whole {
            // One range over the whole index replaces this transaction's others.
            let before = ranges.len();
            ranges.retain(|r| r.sx != id);
            self.count -= before - ranges.len();
            held.whole_indexes.insert(index);
            ranges.push(Range {
                sx: id,
                lo: Vec::new(),
                hi: None,
            });
            self.count += 1;
            return Ok(());
        }
        if ranges
            .iter()
            .any(|r| r.sx == id && r.lo.as_slice() <= lo && contains_end(&r.hi, hi))
        {
            return Ok(());
        }
        if self.count >= max {
            return Err(out_of_memory());
        }
        ranges.push(Range {
            sx: id,
            lo: lo.to_vec(),
            hi: hi.map(<[u8]>::to_vec),
        });
        self.count += 1;
        Ok(())
    }

    pub(super) fn release_all(&mut self, id: SxId, held: &Held) {
        for &t in &held.tuples {
            self.drop_one(t, id);
        }
        for &r in &held.whole_rels {
            self.drop_one(Target::Relation(r), id);
        }
        for index in held.per_index.keys() {
            if let Some(ranges) = self.ranges.get_mut(index) {
                let before = ranges.len();
                ranges.retain(|r| r.sx != id);
                self.count -= before - ranges.len();
                if ranges.is_empty() {
                    self.ranges.remove(index);
                }
            }
        }
    }

    /// Holders of a lock on any of `targets`, or of a range covering `key` in its index.
    pub(super) fn holders(&self, targets: &[Target], key: Option<(u32, &[u8])>) -> Vec<SxId> {
        let mut out = Vec::new();
        for t in targets {
            if let Some(v) = self.locks.get(t) {
                out.extend_from_slice(v);
            }
        }
        if let Some((index, k)) = key
            && let Some(ranges) = self.ranges.get(&index)
        {
            out.extend(ranges.iter().filter(|r| r.covers(k)).map(|r| r.sx));
        }
        out
    }
}

impl Table {
    /// Holders of any lock on relation `rel` (whole, or one of its tuples) or on a key range
    /// of one of `indexes`: the readers of anything a TRUNCATE or DROP of it writes. A scan of
    /// the whole table, as PostgreSQL's `CheckTableForSerializableConflictIn` is: DDL only.
    pub(super) fn holders_of_relation(&self, rel: u32, indexes: &[u32]) -> Vec<SxId> {
        let mut out = Vec::new();
        for (t, v) in &self.locks {
            if matches!(*t, Target::Relation(r) | Target::Tuple(r, _) if r == rel) {
                out.extend_from_slice(v);
            }
        }
        for index in indexes {
            if let Some(ranges) = self.ranges.get(index) {
                out.extend(ranges.iter().map(|r| r.sx));
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Whether upper end `outer` (None: unbounded) reaches at least `inner`.
fn contains_end(outer: &Option<Vec<u8>>, inner: Option<&[u8]>) -> bool {
    match (outer, inner) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(o), Some(i)) => o.as_slice() >= i,
    }
}
