//! [`PartitionDesc`]: a partitioned table's partitions laid out for routing and pruning
//! (PostgreSQL's PartitionDescData with its PartitionBoundInfo), and row routing
//! (execPartition.c's get_partition_for_tuple).
//!
//! Partitions are identified by their position in the slice the descriptor was built from;
//! every index this module hands out or stores is such a position.

use super::{PartitionBound, PartitionKey, PartitionStrategy, RangeValue};
use keel_common::{Oid, PgError, PgResult};
use keel_types::Datum;
use std::cmp::Ordering;

/// PostgreSQL's MaxAllocSize: the hash slot array (4 bytes a slot) must stay under it.
const MAX_ALLOC_SIZE: u64 = 0x3fff_ffff;

/// Marks a hash slot no partition owns.
pub(super) const NO_PART: u32 = u32::MAX;

/// A partitioned table's partitions, built once from its key and the partitions' bounds.
/// Routing a row and pruning with point conditions cost O(log n) comparisons (O(1) plus the
/// row hash for hash partitioning), whatever the number of partitions.
#[derive(Clone, Debug)]
pub struct PartitionDesc {
    pub(super) key: PartitionKey,
    pub(super) oids: Vec<Oid>,
    pub(super) default: Option<usize>,
    pub(super) info: BoundInfo,
}

#[derive(Clone, Debug)]
pub(super) enum BoundInfo {
    Range(RangeInfo),
    List(ListInfo),
    Hash(HashInfo),
}

/// Range partitions: the distinct bounds in ascending order. `indexes[i]` is the partition
/// whose (exclusive) upper bound is `bounds[i]`, or `None` when `bounds[i]` is a lower bound
/// that follows a gap (values from the previous bound up to it belong to no partition but the
/// default). `indexes` has one more entry than `bounds`, always `None`: above the greatest
/// bound there is no partition either.
#[derive(Clone, Debug)]
pub(super) struct RangeInfo {
    pub bounds: Vec<Vec<RangeValue>>,
    pub indexes: Vec<Option<usize>>,
}

/// List partitions: every non-null value in ascending order with its partition, and the
/// partition that accepts NULL.
#[derive(Clone, Debug)]
pub(super) struct ListInfo {
    pub values: Vec<Datum>,
    pub parts: Vec<usize>,
    pub null_part: Option<usize>,
}

/// Hash partitions: the bounds sorted by (modulus, remainder), and one slot per remainder of
/// the greatest modulus holding the partition that owns it ([`NO_PART`] for none).
#[derive(Clone, Debug)]
pub(super) struct HashInfo {
    pub bounds: Vec<HashBound>,
    pub slots: Vec<u32>,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct HashBound {
    pub modulus: u32,
    pub remainder: u32,
    pub part: usize,
}

fn bad_bound() -> PgError {
    PgError::internal("invalid strategy in partition bound spec")
}

impl PartitionDesc {
    /// Lays out `parts` (each partition's oid and bound, in any order) for the table
    /// partitioned by `key`. The bounds are expected to have passed [`super::check_new_partition`]
    /// when they were created; a bound of another strategy, of the wrong width, or a second
    /// default partition is an internal error (XX000). As in PostgreSQL, a greatest hash
    /// modulus whose slot array would pass 1 GB fails with XX000 `invalid memory alloc request
    /// size`.
    pub fn new(key: &PartitionKey, parts: &[(Oid, PartitionBound)]) -> PgResult<PartitionDesc> {
        if parts.len() >= NO_PART as usize {
            return Err(PgError::internal("too many partitions"));
        }
        let mut default = None;
        for (i, (_, bound)) in parts.iter().enumerate() {
            if matches!(bound, PartitionBound::Default) {
                if default.is_some() || key.strategy == PartitionStrategy::Hash {
                    return Err(bad_bound());
                }
                default = Some(i);
            }
        }
        let info = match key.strategy {
            PartitionStrategy::Range => BoundInfo::Range(build_range(key, parts)?),
            PartitionStrategy::List => BoundInfo::List(build_list(key, parts)?),
            PartitionStrategy::Hash => BoundInfo::Hash(build_hash(parts)?),
        };
        Ok(PartitionDesc {
            key: key.clone(),
            oids: parts.iter().map(|(oid, _)| *oid).collect(),
            default,
            info,
        })
    }

    pub fn key(&self) -> &PartitionKey {
        &self.key
    }

    /// Number of partitions, the default one included.
    pub fn len(&self) -> usize {
        self.oids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.oids.is_empty()
    }

    /// The partitions' oids, in the order the descriptor was built from.
    pub fn oids(&self) -> &[Oid] {
        &self.oids
    }

    /// The default partition's index, if there is one.
    pub fn default_partition(&self) -> Option<usize> {
        self.default
    }

    /// The partition a row with these key values (in key order, NULL as `Datum::Null`)
    /// belongs to, or the default partition, or `None` when no partition accepts it (the
    /// caller raises [`super::no_partition_error`]). `row_hash` is PostgreSQL's
    /// compute_partition_hash_value over the key values; only hash partitioning calls it.
    pub fn route(&self, key_values: &[Datum], row_hash: impl Fn(&[Datum]) -> u64) -> Option<usize> {
        let found = match &self.info {
            BoundInfo::Hash(h) => {
                if h.slots.is_empty() {
                    return None;
                }
                let slot = h.slots[(row_hash(key_values) % h.slots.len() as u64) as usize];
                (slot != NO_PART).then_some(slot as usize)
            }
            BoundInfo::List(l) => match key_values.first() {
                Some(Datum::Null) | None => l.null_part,
                Some(v) => match list_bsearch(&self.key, l, v) {
                    (off, true) => Some(l.parts[off as usize]),
                    _ => None,
                },
            },
            BoundInfo::Range(r) => {
                // No range contains NULL: such a row can only go to the default partition.
                if key_values.iter().any(Datum::is_null) {
                    None
                } else {
                    let (off, _) = range_datum_bsearch(&self.key, r, key_values);
                    r.indexes[(off + 1) as usize]
                }
            }
        };
        found.or(self.default)
    }
}

fn build_range(key: &PartitionKey, parts: &[(Oid, PartitionBound)]) -> PgResult<RangeInfo> {
    // Every lower and upper bound, then sorted; at equal values an upper bound sorts before
    // a lower one, so a boundary two adjacent partitions share is kept as the upper bound.
    let mut all: Vec<(&[RangeValue], bool, usize)> = Vec::with_capacity(parts.len() * 2);
    for (i, (_, bound)) in parts.iter().enumerate() {
        match bound {
            PartitionBound::Default => {}
            PartitionBound::Range { lower, upper }
                if lower.len() == key.len() && upper.len() == key.len() =>
            {
                all.push((lower, true, i));
                all.push((upper, false, i));
            }
            _ => return Err(bad_bound()),
        }
    }
    all.sort_by(|a, b| rbound_cmp(key, a.0, a.1, b.0, b.1).cmp(&0));
    let mut bounds: Vec<Vec<RangeValue>> = Vec::with_capacity(all.len());
    let mut indexes = Vec::with_capacity(all.len() + 1);
    let mut prev: Option<&[RangeValue]> = None;
    for (values, lower, part) in all {
        if prev.is_none_or(|p| range_bounds_distinct(key, p, values)) {
            bounds.push(values.to_vec());
            indexes.push((!lower).then_some(part));
        }
        prev = Some(values);
    }
    indexes.push(None);
    Ok(RangeInfo { bounds, indexes })
}

/// Whether two range bounds differ, ignoring which side they are (create_range_bounds'
/// de-duplication): columns after a MINVALUE or MAXVALUE both share do not count.
fn range_bounds_distinct(key: &PartitionKey, a: &[RangeValue], b: &[RangeValue]) -> bool {
    for (col, (x, y)) in a.iter().zip(b).enumerate() {
        match (x, y) {
            (RangeValue::Value(x), RangeValue::Value(y)) => {
                if key.cmp(col, x, y) != Ordering::Equal {
                    return true;
                }
            }
            _ if x.rank() != y.rank() => return true,
            _ => return false,
        }
    }
    false
}

fn build_list(key: &PartitionKey, parts: &[(Oid, PartitionBound)]) -> PgResult<ListInfo> {
    let mut all: Vec<(&Datum, usize)> = Vec::new();
    let mut null_part = None;
    for (i, (_, bound)) in parts.iter().enumerate() {
        match bound {
            PartitionBound::Default => {}
            PartitionBound::List { values } => {
                for v in values {
                    if v.is_null() {
                        null_part = Some(i);
                    } else {
                        all.push((v, i));
                    }
                }
            }
            _ => return Err(bad_bound()),
        }
    }
    all.sort_by(|a, b| key.cmp(0, a.0, b.0));
    Ok(ListInfo {
        values: all.iter().map(|(v, _)| (*v).clone()).collect(),
        parts: all.iter().map(|(_, p)| *p).collect(),
        null_part,
    })
}

fn build_hash(parts: &[(Oid, PartitionBound)]) -> PgResult<HashInfo> {
    let mut bounds = Vec::with_capacity(parts.len());
    for (part, (_, bound)) in parts.iter().enumerate() {
        match *bound {
            PartitionBound::Hash { modulus, remainder } if remainder < modulus => {
                bounds.push(HashBound {
                    modulus,
                    remainder,
                    part,
                });
            }
            _ => return Err(bad_bound()),
        }
    }
    bounds.sort_by_key(|b| (b.modulus, b.remainder));
    let greatest = bounds.last().map_or(0, |b| b.modulus);
    let bytes = greatest as u64 * 4;
    if bytes > MAX_ALLOC_SIZE {
        return Err(PgError::internal(format!(
            "invalid memory alloc request size {bytes}"
        )));
    }
    let mut slots = vec![NO_PART; greatest as usize];
    for b in &bounds {
        let mut r = b.remainder as usize;
        while r < slots.len() {
            if slots[r] != NO_PART {
                return Err(PgError::internal("hash partition bounds overlap"));
            }
            slots[r] = b.part as u32;
            r += b.modulus as usize;
        }
    }
    Ok(HashInfo { bounds, slots })
}

/// PostgreSQL's partition_rbound_cmp: compares range bound 1 (`lower1` tells which side it
/// is) with bound 2. 0 when equal, else a number whose sign is the order and whose absolute
/// value is the 1-based key column that decided it. At equal values an upper bound (exclusive)
/// is the smaller.
pub(super) fn rbound_cmp(
    key: &PartitionKey,
    b1: &[RangeValue],
    lower1: bool,
    b2: &[RangeValue],
    lower2: bool,
) -> i32 {
    let mut colnum = 0;
    let mut cmp = Ordering::Equal;
    for (col, (x, y)) in b1.iter().zip(b2).enumerate() {
        colnum = col as i32 + 1;
        match x.rank().cmp(&y.rank()) {
            Ordering::Less => return -colnum,
            Ordering::Greater => return colnum,
            Ordering::Equal => {}
        }
        // Both MINVALUE or both MAXVALUE: later columns do not count.
        let (RangeValue::Value(x), RangeValue::Value(y)) = (x, y) else {
            break;
        };
        cmp = key.cmp(col, x, y);
        if cmp != Ordering::Equal {
            break;
        }
    }
    if cmp == Ordering::Equal && lower1 != lower2 {
        cmp = if lower1 {
            Ordering::Greater
        } else {
            Ordering::Less
        };
    }
    match cmp {
        Ordering::Equal => 0,
        Ordering::Less => -colnum,
        Ordering::Greater => colnum,
    }
}

/// PostgreSQL's partition_rbound_datum_cmp: a range bound against the first `values.len()`
/// key values of a row (or of a pruning key prefix).
pub(super) fn rbound_datum_cmp(
    key: &PartitionKey,
    bound: &[RangeValue],
    values: &[Datum],
) -> Ordering {
    let mut cmp = Ordering::Less;
    for (col, (b, v)) in bound.iter().zip(values).enumerate() {
        match b {
            RangeValue::MinValue => return Ordering::Less,
            RangeValue::MaxValue => return Ordering::Greater,
            RangeValue::Value(b) => {
                cmp = key.cmp(col, b, v);
                if cmp != Ordering::Equal {
                    break;
                }
            }
        }
    }
    cmp
}

/// PostgreSQL's binary search over partition bounds: the greatest offset whose bound is <=
/// the probe (-1 if none), stopping at the first equal bound it meets. Which equal bound it
/// meets matters to pruning with a key prefix, where several bounds compare equal, so the
/// probe order is PostgreSQL's. `cmp(i)` compares bound `i` with the probe. Returns the
/// offset and whether the bound there is equal.
pub(super) fn pg_bsearch(n: usize, mut cmp: impl FnMut(usize) -> Ordering) -> (isize, bool) {
    let (mut lo, mut hi) = (-1isize, n as isize - 1);
    let mut equal = false;
    while lo < hi {
        let mid = (lo + hi + 1) / 2;
        match cmp(mid as usize) {
            Ordering::Greater => hi = mid - 1,
            c => {
                lo = mid;
                equal = c == Ordering::Equal;
                if equal {
                    break;
                }
            }
        }
    }
    (lo, equal)
}

/// partition_range_datum_bsearch.
pub(super) fn range_datum_bsearch(
    key: &PartitionKey,
    r: &RangeInfo,
    values: &[Datum],
) -> (isize, bool) {
    pg_bsearch(r.bounds.len(), |i| {
        rbound_datum_cmp(key, &r.bounds[i], values)
    })
}

/// partition_list_bsearch.
pub(super) fn list_bsearch(key: &PartitionKey, l: &ListInfo, value: &Datum) -> (isize, bool) {
    pg_bsearch(l.values.len(), |i| key.cmp(0, &l.values[i], value))
}
