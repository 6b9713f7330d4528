//! A WHERE over a subquery in FROM (or an inlined WITH query) moved into the subquery, as
//! PostgreSQL's `pull_up_subqueries` makes the subquery's relations part of the outer query:
//! the condition then reaches the scan below and can pick its access path there.
//!
//! Taken: `Filter(Project(input, exprs), pred)` where every column `pred` reads is a plain
//! column of `input` (a renaming: nothing is computed twice, so a volatile select list is
//! never duplicated), and `pred` has no subquery (re-basing cannot see inside one). Two
//! stacked filters become one, the inner conjuncts first.

use crate::access::{col_range, remap};
use keel_analyzer::expr::Expr;
use keel_analyzer::query::Rel;

/// `r` with its WHERE moved below the projection under it, or None when it does not apply.
pub(crate) fn pull_filter(r: &Rel) -> Option<Rel> {
    let Rel::Filter { input, pred } = r else {
        return None;
    };
    let Rel::Project {
        input: below,
        exprs,
        srf: None,
    } = input.as_ref()
    else {
        return None;
    };
    let (mut lo, mut hi) = (usize::MAX, 0);
    col_range(pred, &mut lo, &mut hi);
    if hi == usize::MAX || pred.has_subplan() {
        return None;
    }
    let mut cols = Vec::with_capacity(exprs.len());
    for e in exprs {
        cols.push(match e {
            Expr::Col(c, _) => Some(*c),
            _ => None,
        });
    }
    // Every referenced output column must be a plain input column.
    if hi > cols.len() || (lo..hi).any(|i| cols[i].is_none() && references(pred, i)) {
        return None;
    }
    let moved = remap(pred.clone(), &|i| cols[i].unwrap_or(i));
    let (inner, pred) = match below.as_ref() {
        Rel::Filter { input, pred: first } if !first.has_subplan() => {
            (input.clone(), Expr::and(first.clone(), moved))
        }
        other => (Box::new(other.clone()), moved),
    };
    Some(Rel::Project {
        input: Box::new(Rel::Filter { input: inner, pred }),
        exprs: exprs.clone(),
        srf: None,
    })
}

/// Whether `e` reads column `i`.
fn references(e: &Expr, i: usize) -> bool {
    let mut todo = vec![e];
    while let Some(e) = todo.pop() {
        if matches!(e, Expr::Col(c, _) if *c == i) {
            return true;
        }
        e.for_each_child(&mut |c| todo.push(c));
    }
    false
}
