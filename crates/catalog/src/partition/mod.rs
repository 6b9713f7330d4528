//! Declarative partitioning's bound logic, as PostgreSQL 15's partbounds.c, partprune.c and
//! execPartition.c's get_partition_for_tuple: what a partitioned table's key and its
//! partitions' bounds are, the checks a new bound must pass, which partition a row goes to,
//! and which partitions a WHERE clause can leave out.
//!
//! Pure: no I/O, no catalog lookups. The caller (DDL, planner, executor) gives the key, the
//! partitions' bounds and, for hash partitioning, the row hash (PostgreSQL's
//! `compute_partition_hash_value`, which lives with the types' hash functions).
//!
//! Invariants of a [`PartitionDesc`] (PostgreSQL's `PartitionBoundInfo`):
//! - range bounds are kept once each (a partition's upper bound that is the next one's lower
//!   bound appears once, as the upper bound), sorted, and each marked with the partition whose
//!   upper bound it is, or none for a lower bound that starts a gap;
//! - list values are sorted, each with its partition; NULL is not among them but recorded as
//!   the partition that accepts NULL;
//! - hash partitions fill an array indexed by remainder of the greatest modulus: a partition
//!   `(modulus m, remainder r)` owns slots `r, r + m, r + 2m, ...`. Every modulus divides the
//!   next larger one ([`check_new_partition`] enforces it), so the slots never collide;
//! - partitions never overlap: [`check_new_partition`] refuses a bound that would.
//!
//! Values are compared with `keel_types::ops::compare_typed` in the key column's type, so text
//! compares in collation "C" (byte order), as everywhere in Keel.

mod check;
mod desc;
mod prune;
mod refute;
mod serde_datum;
mod text;

#[cfg(test)]
mod tests;

pub use check::{BoundItem, check_new_partition, check_new_partition_located};
pub use desc::PartitionDesc;
pub use prune::{PruneCond, PruneResult};
pub use text::{bound_text, default_partition_violation, no_partition_error};

use keel_common::{PgError, PgResult, sqlstate};
use keel_types::{Datum, TypeId};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// At most this many key columns, as PostgreSQL's PARTITION_MAX_KEYS.
pub const PARTITION_MAX_KEYS: usize = 32;

/// `PARTITION BY RANGE | LIST | HASH` (pg_partitioned_table.partstrat).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PartitionStrategy {
    Range,
    List,
    Hash,
}

/// A partitioned table's key (pg_partitioned_table).
///
/// Only plain columns for now. Expression keys (PostgreSQL's partattrs entry 0 with the
/// expression in partexprs) will add a field parallel to `columns`, `#[serde(default)]` so
/// catalogs written before it still load; everything here works on key *positions* and the
/// key's types, so only the caller's extraction of the key values changes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionKey {
    pub strategy: PartitionStrategy,
    /// The key's table columns (0-based), in key order (pg_partitioned_table.partattrs).
    pub columns: Vec<usize>,
    /// The type of each key column: bound values, routed values and pruning constants are
    /// values of these types (the caller coerces them).
    pub types: Vec<TypeId>,
}

impl PartitionKey {
    /// The key `PARTITION BY strategy (columns)` declares, with PostgreSQL's checks of its
    /// shape: 42P17 for a list key of several columns, 54011 past 32 columns.
    pub fn new(
        strategy: PartitionStrategy,
        columns: Vec<usize>,
        types: Vec<TypeId>,
    ) -> PgResult<PartitionKey> {
        if columns.len() != types.len() || columns.is_empty() {
            return Err(PgError::internal(
                "a partition key needs one type per column and at least one column",
            ));
        }
        if columns.len() > PARTITION_MAX_KEYS {
            return Err(PgError::new(
                sqlstate::TOO_MANY_COLUMNS,
                format!("cannot partition using more than {PARTITION_MAX_KEYS} columns"),
            ));
        }
        if strategy == PartitionStrategy::List && columns.len() > 1 {
            return Err(PgError::new(
                sqlstate::INVALID_OBJECT_DEFINITION,
                "cannot use \"list\" partition strategy with more than one column",
            ));
        }
        Ok(PartitionKey {
            strategy,
            columns,
            types,
        })
    }

    /// Number of key columns.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Compares two non-null values of key column `col` (the partitioning operator class's
    /// comparison).
    pub(crate) fn cmp(&self, col: usize, a: &Datum, b: &Datum) -> Ordering {
        keel_types::ops::compare_typed(a, b, self.types[col])
    }
}

/// One partition's bound (pg_class.relpartbound).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum PartitionBound {
    /// `FOR VALUES FROM (lower) TO (upper)`: one value per key column each, lower inclusive,
    /// upper exclusive, compared column by column.
    Range {
        lower: Vec<RangeValue>,
        upper: Vec<RangeValue>,
    },
    /// `FOR VALUES IN (values)`; a NULL element accepts rows whose key is NULL.
    List {
        #[serde(with = "serde_datum::list")]
        values: Vec<Datum>,
    },
    /// `FOR VALUES WITH (MODULUS modulus, REMAINDER remainder)`.
    Hash { modulus: u32, remainder: u32 },
    /// `DEFAULT`: every row no other partition accepts (range and list only).
    Default,
}

impl PartitionBound {
    /// The bound as PostgreSQL stores it: a list's duplicate values (equal text forms, or
    /// NULL twice) removed, the first of each kept, as transformPartitionBound does. What
    /// the caller should record after [`check_new_partition`] accepted the bound.
    pub fn canonical(&self) -> PartitionBound {
        match self {
            PartitionBound::List { values } => {
                let mut seen: Vec<Option<String>> = Vec::with_capacity(values.len());
                let mut kept = Vec::with_capacity(values.len());
                for v in values {
                    let form = (!v.is_null()).then(|| keel_types::io::to_text(v));
                    if !seen.contains(&form) {
                        seen.push(form);
                        kept.push(v.clone());
                    }
                }
                PartitionBound::List { values: kept }
            }
            other => other.clone(),
        }
    }
}

/// One column of a range bound: `MINVALUE`, a value, or `MAXVALUE`. The three kinds order as
/// they read: MINVALUE below every value, MAXVALUE above.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum RangeValue {
    MinValue,
    Value(#[serde(with = "serde_datum::one")] Datum),
    MaxValue,
}

impl RangeValue {
    fn rank(&self) -> u8 {
        match self {
            RangeValue::MinValue => 0,
            RangeValue::Value(_) => 1,
            RangeValue::MaxValue => 2,
        }
    }
}
