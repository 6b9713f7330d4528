//! How the executor runs a scan once the plan is known ([`ScanRun`]): which columns it
//! decodes, and which part of its filter it checks on each row.
//!
//! A B-tree range returns exactly the rows whose key satisfies the conditions it was built
//! from: the access layer drops an entry whose key differs from the version it returns (an
//! entry is never updated in place), and for the types [`key_returns`] keeps whole the key
//! order is the operators' order. Those conditions need no second check per row; PostgreSQL
//! does not recheck a B-tree's index quals either.

use crate::access::conjuncts;
use crate::paths::{index_access, quals};
use crate::plan::{Access, Recheck, ScanRun};
use keel_analyzer::expr::Expr;
use keel_catalog::TableDef;
use keel_types::key::key_returns;
use std::sync::Arc;

/// The run of a scan of `table` through `access` keeping rows that pass `filter`, of which
/// the columns `read` are read above (the filter's own included).
pub(crate) fn scan_run(
    table: &TableDef,
    access: &mut Access,
    filter: Option<&Expr>,
    read: &[usize],
) -> ScanRun {
    ScanRun {
        columns: mask(table, read),
        recheck: residual(table, access, filter),
        row_ids: false,
    }
}

/// The columns `read` as a mask over `table`'s columns, or None when that is all of them.
pub(crate) fn mask(table: &TableDef, read: &[usize]) -> Option<Arc<[bool]>> {
    let width = table.columns.len();
    let mut m = vec![false; width];
    for &c in read {
        if let Some(w) = m.get_mut(c) {
            *w = true;
        }
    }
    if m.iter().all(|&w| w) {
        None
    } else {
        Some(m.into())
    }
}

/// The part of `filter` an index scan must still check: the conjuncts its range was not
/// built from. The range is rebuilt from `filter`'s own conjuncts (the same function the
/// paths use), so what is dropped is exactly what the range guarantees; when the rebuilt
/// range differs in shape from the planned one, or a condition's type does not compare as
/// its key, the whole filter is checked.
fn residual(table: &TableDef, access: &mut Access, filter: Option<&Expr>) -> Recheck {
    let (
        Access::Index {
            index,
            eq,
            lower,
            upper,
            bitmap: false,
            not_null,
            ..
        },
        Some(filter),
    ) = (&mut *access, filter)
    else {
        return Recheck::Filter;
    };
    let mut parts = Vec::new();
    conjuncts(filter.clone(), &mut parts);
    let qs = quals(&parts);
    let exact = |q: &crate::paths::Qual<'_>| {
        table
            .columns
            .get(q.col)
            .is_some_and(|c| key_returns(c.ty.id))
    };
    let (rebuilt, used) = index_access(index, &qs);
    let Access::Index {
        eq: eq2,
        lower: lower2,
        upper: upper2,
        not_null: not_null2,
        ..
    } = rebuilt
    else {
        return Recheck::Filter;
    };
    let same_shape = eq2.len() == eq.len()
        && lower2.as_ref().map(|b| b.1) == lower.as_ref().map(|b| b.1)
        && upper2.as_ref().map(|b| b.1) == upper.as_ref().map(|b| b.1)
        && not_null2 == *not_null;
    let all_exact = qs
        .iter()
        .filter(|q| used.iter().any(|u| std::ptr::eq(*u, q.clause)))
        .all(exact);
    if !same_shape || !all_exact || used.is_empty() {
        return Recheck::Filter;
    }
    // The range now comes from the very conjuncts left out below.
    (*eq, *lower, *upper) = (eq2, lower2, upper2);
    let rest = parts
        .iter()
        .filter(|p| !used.iter().any(|u| std::ptr::eq(*u, *p)))
        .cloned()
        .reduce(Expr::and);
    Recheck::Residual(rest)
}
