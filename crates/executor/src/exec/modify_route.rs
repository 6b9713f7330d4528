//! Writes through a partitioned table: the partition each row goes to, down the plan's
//! routing (built once with the plan: keel-planner's partition.rs); and the partition
//! constraint of a row written into a partition itself.

use crate::eval::Eval;
use keel_catalog::partition::no_partition_error;
use keel_catalog::{IndexDef, TableDef};
use keel_common::PgResult;
use keel_planner::plan::{LeafConstraints, PartitionCheck, RouteTarget, Routing};
use keel_types::Datum;
use std::sync::Arc;

/// A routed row's leaf partition, its indexes for the ON CONFLICT arbiters, and the
/// constraints it has of its own.
pub(super) type Routed<'p> = (&'p Arc<TableDef>, &'p [Arc<IndexDef>], &'p LeafConstraints);

/// The leaf partition `row` belongs in and the indexes there that stand for the
/// statement's ON CONFLICT arbiters; 23514 when no partition accepts it.
pub(super) fn route<'p>(mut r: &'p Routing, row: &[Datum]) -> PgResult<Routed<'p>> {
    loop {
        let key = r.desc.key();
        let values: Vec<Datum> = key.columns.iter().map(|&c| row[c].clone()).collect();
        let hash = keel_planner::partition::row_hash(key);
        let Some(i) = r.desc.route(&values, hash) else {
            let names: Vec<&str> = (key.columns.iter())
                .map(|&c| r.table.columns[c].name.as_str())
                .collect();
            return Err(no_partition_error(&r.table.name, &names, &values, key));
        };
        match &r.targets[i] {
            RouteTarget::Leaf {
                table,
                arbiters,
                own,
            } => return Ok((table, arbiters, own)),
            RouteTarget::Sub(sub) => r = sub,
        }
    }
}

/// 23514 unless `row`, written into partition `table` itself, meets its partition
/// constraint: at every level up to the root its key routes to the partition (or to the
/// partition's ancestor).
pub(super) fn check_partition(
    check: &PartitionCheck,
    table: &str,
    row: &[Datum],
    types: &[keel_types::TypeId],
) -> PgResult<()> {
    for (desc, at) in &check.levels {
        let key = desc.key();
        let values: Vec<Datum> = key.columns.iter().map(|&c| row[c].clone()).collect();
        if desc.route(&values, keel_planner::partition::row_hash(key)) != Some(*at) {
            return Err(keel_common::PgError::new(
                keel_common::sqlstate::CHECK_VIOLATION,
                format!("new row for relation \"{table}\" violates partition constraint"),
            )
            .with_detail(format!(
                "Failing row contains ({}).",
                crate::eval::row_text(row, types)
            ))
            .with_table(table));
        }
    }
    Ok(())
}

/// The constraints partition `table` has beyond the table the row was written through
/// (23502, 23514 with the partition's name, as PostgreSQL reports them).
pub(super) fn check_own(
    own: &LeafConstraints,
    table: &TableDef,
    row: &[Datum],
    types: &[keel_types::TypeId],
    ev: &mut crate::eval::EvalCx<'_>,
) -> PgResult<()> {
    for &c in &own.not_null {
        if row[c].is_null() {
            return Err(crate::eval::not_null_violation(
                &table.columns[c].name,
                &table.name,
                row,
                types,
            ));
        }
    }
    for (name, e) in &own.checks {
        if let Datum::Bool(false) = e.eval(row, ev)? {
            return Err(crate::eval::check_violation(&table.name, name, row, types));
        }
    }
    Ok(())
}
