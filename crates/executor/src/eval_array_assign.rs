//! Subscripted assignment (`SET a[i] = v`, `SET a[lo:hi] = '{...}'`), as PostgreSQL's
//! array_set_element and array_set_slice do it:
//!
//! - a NULL array is taken as an empty one, and an empty one takes the subscripts as its
//!   bounds (`a[3] = 30` on NULL gives `[3:3]={30}`);
//! - a one-dimensional array grows to take a subscript beyond either end, the gap filled with
//!   NULLs; an array of more dimensions must be subscripted within its bounds;
//! - a NULL subscript is an error; a NULL source of a slice leaves the array as it was.

use crate::eval::{Eval, EvalCx};
use keel_analyzer::expr::{ArraySub, Expr};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::array::{Array, Dim};
use keel_types::{Datum, TypeId};
use std::sync::Arc;

fn subscript_error(msg: &str) -> PgError {
    PgError::new(sqlstate::ARRAY_SUBSCRIPT_ERROR, msg)
}

/// A subscript's value; an omitted bound is None, a NULL one an error.
fn bound(e: &Option<Expr>, row: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<Option<i64>> {
    let Some(e) = e else {
        return Ok(None);
    };
    match e.eval(row, cx)?.int_value() {
        Some(v) => Ok(Some(v)),
        None => Err(PgError::new(
            "22004",
            "array subscript in assignment must not be null",
        )),
    }
}

/// `arr` with `arr[subs] := value`.
pub(crate) fn eval(
    arr: &Expr,
    subs: &[ArraySub],
    slice: bool,
    value: &Expr,
    ty: TypeId,
    row: &[Datum],
    cx: &mut EvalCx<'_>,
) -> PgResult<Datum> {
    let original = arr.eval(row, cx)?;
    let mut bounds = Vec::with_capacity(subs.len());
    for s in subs {
        bounds.push((bound(&s.lower, row, cx)?, bound(&s.upper, row, cx)?));
    }
    let v = value.eval(row, cx)?;
    let plain: Vec<bool> = subs.iter().map(|s| s.plain).collect();
    assign_subscripts(original, ty, &bounds, &plain, slice, v)
}

/// `original` (of array type `ty`; NULL is an empty array) with the element or slice at
/// `bounds` replaced by `v`: the subscripts' values, an omitted bound None; `plain` per
/// subscript, written without a colon. A NULL bound must have been refused already
/// (22004). PL/pgSQL's `a[i] := v` comes here with the values it evaluated.
pub fn assign_subscripts(
    original: Datum,
    ty: TypeId,
    bounds: &[(Option<i64>, Option<i64>)],
    plain: &[bool],
    slice: bool,
    v: Datum,
) -> PgResult<Datum> {
    let elem = ty.elem().unwrap_or(TypeId::Text);
    let base = match &original {
        Datum::Array(a) => (**a).clone(),
        _ => Array::empty(elem),
    };
    let result = if slice {
        let Datum::Array(src) = v else {
            return Ok(original);
        };
        set_slice(base, bounds, plain, &src.items)?
    } else {
        let idx: Vec<i64> = bounds.iter().map(|(_, u)| u.unwrap_or(0)).collect();
        set_element(base, &idx, v)?
    };
    Ok(Datum::Array(Arc::new(result)))
}

/// A subscript as the int4 PostgreSQL keeps it in.
fn int4(v: i64) -> PgResult<i32> {
    i32::try_from(v).map_err(|_| {
        PgError::new(
            sqlstate::PROGRAM_LIMIT_EXCEEDED,
            "array size exceeds the maximum allowed",
        )
    })
}

fn set_element(mut a: Array, idx: &[i64], v: Datum) -> PgResult<Array> {
    if a.dims.is_empty() {
        a.dims = idx
            .iter()
            .map(|&i| {
                Ok(Dim {
                    len: 1,
                    lower: int4(i)?,
                })
            })
            .collect::<PgResult<_>>()?;
        a.items = vec![v];
        return Ok(a);
    }
    if idx.len() != a.dims.len() {
        return Err(subscript_error("wrong number of array subscripts"));
    }
    if let [d] = a.dims.as_mut_slice() {
        let (lb, len, i) = (d.lower as i64, d.len as i64, idx[0]);
        if i < lb {
            let grow = (lb - i) as usize;
            Array::check_size(a.items.len() + grow)?;
            let mut items = Vec::with_capacity(a.items.len() + grow);
            items.push(v);
            items.resize(grow, Datum::Null);
            items.append(&mut a.items);
            a.items = items;
            *d = Dim {
                len: int4(len + grow as i64)?,
                lower: int4(i)?,
            };
        } else if i >= lb + len {
            let new_len = (i - lb + 1) as usize;
            Array::check_size(new_len)?;
            a.items.resize(new_len - 1, Datum::Null);
            a.items.push(v);
            d.len = int4(new_len as i64)?;
        } else {
            a.items[(i - lb) as usize] = v;
        }
        return Ok(a);
    }
    let mut offset = 0usize;
    for (d, &i) in a.dims.iter().zip(idx) {
        let k = i - d.lower as i64;
        if k < 0 || k >= d.len as i64 {
            return Err(subscript_error("array subscript out of range"));
        }
        offset = offset * d.len as usize + k as usize;
    }
    a.items[offset] = v;
    Ok(a)
}

fn set_slice(
    mut a: Array,
    bounds: &[(Option<i64>, Option<i64>)],
    plain: &[bool],
    src: &[Datum],
) -> PgResult<Array> {
    if !a.dims.is_empty() && bounds.len() > a.dims.len() {
        return Err(subscript_error("wrong number of array subscripts"));
    }
    // Each subscripted dimension's range; an omitted bound is the array's own.
    let mut ranges = Vec::with_capacity(bounds.len().max(a.dims.len()));
    for (k, (lo, hi)) in bounds.iter().enumerate() {
        let d = a.dims.get(k);
        let lo = if plain[k] {
            Some(1)
        } else {
            lo.or(d.map(|d| d.lower as i64))
        };
        let hi = hi.or(d.map(|d| d.lower as i64 + d.len as i64 - 1));
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return Err(
                subscript_error("array slice subscript must provide both boundaries").with_detail(
                    "When assigning to a slice of an empty array value, slice boundaries must be fully specified.",
                ),
            );
        };
        if hi < lo {
            return Err(subscript_error(
                "upper bound cannot be less than lower bound",
            ));
        }
        ranges.push((lo, hi));
    }
    for d in a.dims.iter().skip(ranges.len()) {
        ranges.push((d.lower as i64, d.lower as i64 + d.len as i64 - 1));
    }
    let count = ranges
        .iter()
        .try_fold(1usize, |n, (lo, hi)| n.checked_mul((hi - lo + 1) as usize))
        .unwrap_or(usize::MAX);
    Array::check_size(count)?;
    if src.len() < count {
        return Err(subscript_error("source array too small"));
    }
    if a.dims.is_empty() {
        a.dims = ranges
            .iter()
            .map(|&(lo, hi)| {
                Ok(Dim {
                    len: int4(hi - lo + 1)?,
                    lower: int4(lo)?,
                })
            })
            .collect::<PgResult<_>>()?;
        a.items = src[..count].to_vec();
        return Ok(a);
    }
    if let [d] = a.dims.as_mut_slice() {
        let (lo, hi) = ranges[0];
        let (lb, ub) = (d.lower as i64, d.lower as i64 + d.len as i64 - 1);
        let (new_lb, new_ub) = (lb.min(lo), ub.max(hi));
        let new_len = (new_ub - new_lb + 1) as usize;
        Array::check_size(new_len)?;
        let mut items = vec![Datum::Null; new_len];
        let at = (lb - new_lb) as usize;
        for (k, v) in a.items.drain(..).enumerate() {
            items[at + k] = v;
        }
        let from = (lo - new_lb) as usize;
        items[from..from + count].clone_from_slice(&src[..count]);
        a.items = items;
        *d = Dim {
            len: int4(new_len as i64)?,
            lower: int4(new_lb)?,
        };
        return Ok(a);
    }
    for (d, &(lo, hi)) in a.dims.iter().zip(&ranges) {
        if lo < d.lower as i64 || hi >= d.lower as i64 + d.len as i64 {
            return Err(subscript_error("array subscript out of range"));
        }
    }
    // Row-major walk over the slice, writing the source's items in order.
    let strides: Vec<usize> = (0..a.dims.len())
        .map(|k| a.dims[k + 1..].iter().map(|d| d.len as usize).product())
        .collect();
    let mut idx: Vec<i64> = ranges.iter().map(|r| r.0).collect();
    for v in &src[..count] {
        let off: usize = idx
            .iter()
            .zip(&a.dims)
            .zip(&strides)
            .map(|((i, d), s)| (*i - d.lower as i64) as usize * s)
            .sum();
        a.items[off] = v.clone();
        let mut k = idx.len();
        while k > 0 {
            k -= 1;
            if idx[k] < ranges[k].1 {
                idx[k] += 1;
                break;
            }
            idx[k] = ranges[k].0;
        }
    }
    Ok(a)
}
