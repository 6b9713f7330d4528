//! Subqueries in expressions (PostgreSQL's SubPlan): scalar, EXISTS, IN / ANY / ALL.
//!
//! A subquery runs in the statement's transaction with a nested [`EvalCx`] whose `outer` holds
//! the enclosing row's values it references. Uncorrelated subqueries (no outer references)
//! run once per execution; their result is cached in `EvalCx::subq`.
//!
//! An uncorrelated `x IN (SELECT ...)` comparing with `=` is hashed (PostgreSQL's hashed
//! SubPlan, `keel_planner::hashed_subplan`): the distinct non-NULL values are kept as keys,
//! with whether a NULL or any row was seen, so a probe is one lookup and gives what comparing
//! with each value would: true when found; else NULL when the subquery had a NULL; false.
//! A NULL probe is NULL against a non-empty result, false against an empty one.

use super::discard::discard_in_place;
use super::mem::MemCharge;
use super::{Row, build, key_of};
use crate::eval::{Eval, EvalCx, SubResult};
use keel_analyzer::expr::{SubKind, SubPlan};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::datum::{alloc_size, row_heap_bytes};
use keel_types::{Datum, TypeId};
use std::collections::HashSet;
use std::mem::size_of;

/// Runs the subquery, pulling at most `limit` rows; the rows kept are charged to `mem`.
fn run(
    sp: &SubPlan,
    outer: &[Datum],
    cx: &mut EvalCx<'_>,
    limit: usize,
    mem: &mut MemCharge,
) -> PgResult<Vec<Row>> {
    let txn = cx
        .txn
        .ok_or_else(|| PgError::unsupported("a subquery in this position"))?;
    let engine = cx.engine;
    let subplans = cx.subplans.clone();
    let plan = subplans
        .get(sp.id as usize)
        .and_then(Option::as_ref)
        .ok_or_else(|| PgError::internal("subquery was not planned"))?;
    let mut inner = cx.nested(Some(txn), outer);
    let result = (|| {
        let mut node = build(plan, engine, txn)?;
        let mut rows = Vec::new();
        while rows.len() < limit {
            match node.next(&mut inner)? {
                Some(r) => {
                    mem.add(
                        &inner,
                        row_heap_bytes(&r) + size_of::<Row>() + size_of::<Datum>(),
                    )?;
                    rows.push(r)
                }
                None => break,
            }
        }
        Ok(rows)
    })();
    let carried = inner.carried();
    cx.restore(carried);
    result
}

fn first_column(rows: Vec<Row>) -> Vec<Datum> {
    rows.into_iter()
        .map(|r| r.into_iter().next().unwrap_or(Datum::Null))
        .collect()
}

/// Evaluates a subquery expression on the enclosing `row`.
pub fn eval(sp: &SubPlan, row: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<Datum> {
    let correlated = !sp.outer_args.is_empty();
    let mut outer = Vec::with_capacity(sp.outer_args.len());
    for a in &sp.outer_args {
        outer.push(a.eval(row, cx)?);
    }
    if let Some(ty) = keel_planner::hashed_subplan(sp)
        && let SubKind::Quantified { lhs, .. } = &sp.kind
    {
        let l = lhs.eval(row, cx)?;
        if !matches!(cx.subq.get(&sp.id), Some(SubResult::Hashed(_))) {
            let h = hash_values(sp, ty, cx)?;
            cx.subq.insert(sp.id, SubResult::Hashed(h));
        }
        let Some(SubResult::Hashed(h)) = cx.subq.get_mut(&sp.id) else {
            return Err(PgError::internal("hashed subquery result missing"));
        };
        return Ok(h.probe(&l, ty));
    }
    match &sp.kind {
        SubKind::Scalar | SubKind::Exists => {
            if !correlated && let Some(SubResult::Value(v)) = cx.subq.get(&sp.id) {
                return Ok(v.clone());
            }
            let exists = matches!(sp.kind, SubKind::Exists);
            let mut mem = MemCharge::new("A subquery's result");
            let rows = run(sp, &outer, cx, if exists { 1 } else { 2 }, &mut mem)?;
            let v = if exists {
                Datum::Bool(!rows.is_empty())
            } else if rows.len() > 1 {
                return Err(PgError::new(
                    sqlstate::CARDINALITY_VIOLATION,
                    "more than one row returned by a subquery used as an expression",
                ));
            } else {
                first_column(rows).pop().unwrap_or(Datum::Null)
            };
            if !correlated {
                cx.subq.insert(sp.id, SubResult::Value(v.clone()));
            }
            Ok(v)
        }
        SubKind::Array { stacked } => {
            if !correlated && let Some(SubResult::Value(v)) = cx.subq.get(&sp.id) {
                return Ok(v.clone());
            }
            let mut mem = MemCharge::new("A subquery's result");
            let rows = run(sp, &outer, cx, usize::MAX, &mut mem)?;
            let elem = sp.ty.elem().unwrap_or(keel_types::TypeId::Text);
            let items = first_column(rows);
            let v = if *stacked {
                keel_types::agg::stack_arrays(elem, items)?
            } else {
                keel_types::array::Array::check_size(items.len())?;
                Datum::Array(std::sync::Arc::new(keel_types::array::Array::from_items(
                    elem, items,
                )))
            };
            if !correlated {
                cx.subq.insert(sp.id, SubResult::Value(v.clone()));
            }
            Ok(v)
        }
        SubKind::Quantified { lhs, cmp, all } => {
            let l = lhs.eval(row, cx)?;
            let (values, mem) = match cx.subq.remove(&sp.id) {
                Some(SubResult::Values(v, mem)) if !correlated => (v, mem),
                _ => {
                    let mut mem = MemCharge::new("A subquery's result");
                    let rows = run(sp, &outer, cx, usize::MAX, &mut mem)?;
                    (first_column(rows), mem)
                }
            };
            let r = quantified(&l, &values, cmp, *all, cx);
            if !correlated {
                cx.subq.insert(sp.id, SubResult::Values(values, mem));
            }
            r
        }
    }
}

/// ANY: true if some comparison is true, else NULL if some is NULL, else false.
/// ALL: false if some comparison is false, else NULL if some is NULL, else true.
pub(crate) fn quantified(
    l: &Datum,
    values: &[Datum],
    cmp: &keel_analyzer::expr::Expr,
    all: bool,
    cx: &mut EvalCx<'_>,
) -> PgResult<Datum> {
    let mut saw_null = false;
    let mut pair = [l.clone(), Datum::Null];
    for v in values {
        cx.tick()?;
        pair[1] = v.clone();
        match cmp.eval(&pair, cx)? {
            Datum::Bool(b) if b != all => return Ok(Datum::Bool(b)),
            Datum::Bool(_) => {}
            _ => saw_null = true,
        }
    }
    Ok(if saw_null {
        Datum::Null
    } else {
        Datum::Bool(all)
    })
}

/// A hashed `IN` subquery's result.
pub struct HashedValues {
    keys: HashSet<Vec<u8>>,
    saw_null: bool,
    empty: bool,
    buf: Vec<u8>,
    mem: MemCharge,
}

impl HashedValues {
    fn probe(&mut self, l: &Datum, ty: TypeId) -> Datum {
        if self.empty {
            return Datum::Bool(false);
        }
        if l.is_null() {
            return Datum::Null;
        }
        key_of(std::slice::from_ref(l), &[ty], &mut self.buf);
        if self.keys.contains(&self.buf) {
            Datum::Bool(true)
        } else if self.saw_null {
            Datum::Null
        } else {
            Datum::Bool(false)
        }
    }
}

impl Drop for HashedValues {
    fn drop(&mut self) {
        discard_in_place(&mut self.keys);
    }
}

/// Runs `sp` and hashes its first column's values (of type `ty`).
fn hash_values(sp: &SubPlan, ty: TypeId, cx: &mut EvalCx<'_>) -> PgResult<HashedValues> {
    let mut rows_charge = MemCharge::new("A subquery's result");
    let rows = run(sp, &[], cx, usize::MAX, &mut rows_charge)?;
    let mut h = HashedValues {
        keys: HashSet::new(),
        saw_null: false,
        empty: rows.is_empty(),
        buf: Vec::new(),
        mem: MemCharge::new("A hashed subquery's values"),
    };
    for v in first_column(rows) {
        cx.tick()?;
        if v.is_null() {
            h.saw_null = true;
            continue;
        }
        key_of(std::slice::from_ref(&v), &[ty], &mut h.buf);
        if !h.keys.contains(&h.buf) {
            h.mem.add(cx, alloc_size(h.buf.len()))?;
            h.mem.room_for_one(cx, &mut h.keys, size_of::<Vec<u8>>())?;
            h.keys.insert(std::mem::take(&mut h.buf));
        }
    }
    Ok(h)
}
