//! The leaf partition a stored row of a partitioned table sits in, for the `tableoid` of its
//! rows when they are read through the partitioned table.
//!
//! Partitions never overlap, and every row is in the partition its key routes to: routing
//! put it there, an UPDATE that changes the key moves it, a row written into a partition
//! directly must meet the partition constraint, and ATTACH PARTITION checks the rows it
//! brings. So routing a row's key again names the partition it was read from, and `tableoid`
//! costs nothing on the scans of queries that do not ask for it.

use crate::partition::PartitionDesc;
use crate::{Catalog, TableDef};
use keel_common::{Oid, PgResult};
use keel_types::Datum;
use std::collections::{BTreeSet, HashMap};

/// A partitioned table's partitions, down to the leaves.
#[derive(Clone, Debug)]
pub struct PartitionTree {
    desc: PartitionDesc,
    children: Vec<Child>,
}

#[derive(Clone, Debug)]
enum Child {
    Leaf(Oid),
    Sub(PartitionTree),
}

impl PartitionTree {
    /// The tree under `table`, which must be partitioned. Partitions share their parent's
    /// column numbers.
    pub fn build(catalog: &Catalog, table: &TableDef) -> PgResult<PartitionTree> {
        keel_common::stack::check()?;
        let key = table
            .partition_key()
            .ok_or_else(|| keel_common::PgError::internal("not a partitioned table"))?;
        let mut parts: HashMap<Oid, &std::sync::Arc<TableDef>> = HashMap::new();
        let mut bounds = Vec::new();
        for t in catalog.tables.owned_by(table.oid) {
            if let Some((_, b)) = t.partition_of() {
                bounds.push((t.oid, b.clone()));
                parts.insert(t.oid, t);
            }
        }
        let desc = PartitionDesc::new(key, &bounds)?;
        let mut children = Vec::with_capacity(desc.len());
        for oid in desc.oids() {
            let part = parts[oid];
            children.push(match part.partition_key() {
                Some(_) => Child::Sub(PartitionTree::build(catalog, part)?),
                None => Child::Leaf(*oid),
            });
        }
        Ok(PartitionTree { desc, children })
    }

    /// The table columns any level's key reads, in column order.
    pub fn key_columns(&self) -> Vec<usize> {
        let mut out = BTreeSet::new();
        self.collect_columns(&mut out);
        out.into_iter().collect()
    }

    fn collect_columns(&self, out: &mut BTreeSet<usize>) {
        out.extend(self.desc.key().columns.iter().copied());
        for c in &self.children {
            if let Child::Sub(t) = c {
                t.collect_columns(out);
            }
        }
    }

    /// The leaf partition of a row given by its table columns (`row[c]` for each key column
    /// `c`; the others are not read); None for a row no partition accepts.
    pub fn leaf(&self, row: &[Datum]) -> Option<Oid> {
        let mut t = self;
        let mut values = Vec::new();
        loop {
            let key = t.desc.key();
            values.clear();
            values.extend(key.columns.iter().map(|&c| row[c].clone()));
            let hash = |v: &[Datum]| keel_types::hash::partition_hash(v, &key.types).unwrap_or(0);
            match &t.children[t.desc.route(&values, hash)?] {
                Child::Leaf(oid) => return Some(*oid),
                Child::Sub(sub) => t = sub,
            }
        }
    }
}
