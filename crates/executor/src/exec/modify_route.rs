//! INSERT into a partitioned table: the partition each row goes to, down the plan's
//! routing (built once with the plan: keel-planner's partition.rs).

use keel_catalog::partition::no_partition_error;
use keel_catalog::{IndexDef, TableDef};
use keel_common::PgResult;
use keel_planner::plan::{RouteTarget, Routing};
use keel_types::Datum;
use std::sync::Arc;

/// The leaf partition `row` belongs in and the indexes there that stand for the
/// statement's ON CONFLICT arbiters; 23514 when no partition accepts it.
pub(super) fn route<'p>(
    mut r: &'p Routing,
    row: &[Datum],
) -> PgResult<(&'p Arc<TableDef>, &'p [Arc<IndexDef>])> {
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
            RouteTarget::Leaf { table, arbiters } => return Ok((table, arbiters)),
            RouteTarget::Sub(sub) => r = sub,
        }
    }
}
