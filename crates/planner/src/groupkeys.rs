//! GROUP BY columns that a grouped primary key already decides (PostgreSQL's
//! `remove_useless_groupby_columns`): when every column of a table's primary key is grouped,
//! that table's other grouped columns are equal within each group, so they need not be hashed
//! or compared. They stay in the aggregate's output, taken from the group's first row, and
//! EXPLAIN's `Group Key` leaves them out, as PostgreSQL's does.
//!
//! Only plain column references count, and only a primary key (a unique index may hold
//! NULLs, which do not decide the rest of the row). A table on the nullable side of an outer
//! join is no exception: where its key is NULL, so are all its columns.

use keel_analyzer::expr::Expr;
use keel_analyzer::query::Rel;
use keel_catalog::{Catalog, TableDef};
use std::sync::Arc;

/// Per group expression: whether a grouped primary key decides it (see the module comment).
/// Empty when none is.
pub(crate) fn dependent(catalog: &Catalog, input: &Rel, group: &[Expr]) -> Vec<bool> {
    let mut leaves = Vec::new();
    if !base_tables(input, 0, &mut leaves) {
        return Vec::new();
    }
    let grouped: Vec<usize> = group
        .iter()
        .filter_map(|g| match g {
            Expr::Col(i, _) => Some(*i),
            _ => None,
        })
        .collect();
    let mut out = vec![false; group.len()];
    for (offset, table) in &leaves {
        let Some(pk) = catalog
            .indexes_of(table.oid)
            .find(|i| i.primary)
            .map(|i| i.columns.clone())
        else {
            continue;
        };
        if !pk.iter().all(|c| grouped.contains(&(offset + c))) {
            continue;
        }
        for (k, g) in group.iter().enumerate() {
            if let Expr::Col(i, _) = g
                && (*offset..offset + table.columns.len()).contains(i)
                && !pk.contains(&(i - offset))
            {
                out[k] = true;
            }
        }
    }
    if out.iter().any(|&d| d) {
        out
    } else {
        Vec::new()
    }
}

/// The base tables whose columns make up `rel`'s rows, with the position of their first
/// column; false when some columns come from elsewhere (a projection, an aggregate, VALUES).
fn base_tables(rel: &Rel, offset: usize, out: &mut Vec<(usize, Arc<TableDef>)>) -> bool {
    match rel {
        Rel::Scan { table, .. } => {
            out.push((offset, table.clone()));
            true
        }
        Rel::Filter { input, .. } | Rel::Sort { input, .. } | Rel::Limit { input, .. } => {
            base_tables(input, offset, out)
        }
        Rel::Join {
            left,
            right,
            left_width,
            ..
        } => base_tables(left, offset, out) && base_tables(right, offset + left_width, out),
        _ => false,
    }
}
