//! Evaluation of array expressions: constructors, subscripts and slices, and
//! `op ANY/ALL (array)`.

use crate::eval::{Eval, EvalCx};
use keel_analyzer::expr::{ArrayExpr, ArraySub, Expr};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::Datum;
use keel_types::array::{Array, Dim, MAXDIM, too_many_dims};

pub(crate) fn eval(a: &ArrayExpr, row: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<Datum> {
    match a {
        ArrayExpr::Ctor { elems, ty, nested } => {
            let elem = ty.elem().unwrap_or(keel_types::TypeId::Text);
            let mut items = Vec::with_capacity(elems.len());
            for e in elems {
                items.push(e.eval(row, cx)?);
            }
            if *nested {
                return nest(elem, items).map(|a| Datum::Array(std::sync::Arc::new(a)));
            }
            Array::check_size(items.len())?;
            Ok(Datum::Array(std::sync::Arc::new(Array::from_items(
                elem, items,
            ))))
        }
        ArrayExpr::Subscript { .. } => {
            let mut out = Datum::Null;
            eval_into(a, row, cx, &mut out)?;
            Ok(out)
        }
        ArrayExpr::Assign {
            arr,
            subs,
            slice,
            value,
            ty,
        } => crate::eval_array_assign::eval(arr, subs, *slice, value, *ty, row, cx),
        ArrayExpr::Quantified { lhs, arr, cmp, all } => {
            let l = lhs.eval(row, cx)?;
            match arr.eval(row, cx)? {
                Datum::Array(a) => crate::exec::subplan::quantified(&l, &a.items, cmp, *all, cx),
                _ => Ok(Datum::Null),
            }
        }
    }
}

/// As [`eval`], writing the value over `out`; a subscript's element is cloned straight there.
pub(crate) fn eval_into(
    a: &ArrayExpr,
    row: &[Datum],
    cx: &mut EvalCx<'_>,
    out: &mut Datum,
) -> PgResult<()> {
    let ArrayExpr::Subscript {
        arr, subs, slice, ..
    } = a
    else {
        *out = eval(a, row, cx)?;
        return Ok(());
    };
    // The bounds first (they cannot change the array), then the array: a column or constant
    // is read in place, not cloned (an Arc count up and down per row).
    let mut bounds = [(None, None); MAXDIM];
    let Some(bounds) = bounds.get_mut(..subs.len()) else {
        // The binder refuses more subscripts than MAXDIM.
        return Err(too_many_dims(subs.len()));
    };
    for (s, b) in subs.iter().zip(bounds.iter_mut()) {
        let (Some(lo), Some(hi)) = (bound(&s.lower, row, cx)?, bound(&s.upper, row, cx)?) else {
            *out = Datum::Null;
            return Ok(());
        };
        *b = (lo, hi);
    }
    let owned;
    let a = match crate::eval::leaf(arr, row, cx) {
        Some(Datum::Array(a)) => a,
        Some(_) => {
            *out = Datum::Null;
            return Ok(());
        }
        None => match arr.eval(row, cx)? {
            Datum::Array(a) => {
                owned = a;
                &owned
            }
            _ => {
                *out = Datum::Null;
                return Ok(());
            }
        },
    };
    *out = if *slice {
        Datum::Array(std::sync::Arc::new(slice_of(a, bounds, subs)))
    } else {
        element(a, bounds)
    };
    Ok(())
}

/// A subscript bound: Some(None) when omitted, None when it evaluates to NULL.
fn bound(e: &Option<Expr>, row: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<Option<Option<i32>>> {
    let Some(e) = e else {
        return Ok(Some(None));
    };
    Ok(e.eval(row, cx)?.int_value().map(|v| Some(v as i32)))
}

/// `a[i][j]`: NULL unless there is one subscript per dimension, each within bounds.
fn element(a: &Array, bounds: &[(Option<i32>, Option<i32>)]) -> Datum {
    if bounds.len() != a.dims.len() {
        return Datum::Null;
    }
    let mut offset = 0usize;
    for (d, (_, i)) in a.dims.iter().zip(bounds) {
        let Some(i) = *i else {
            return Datum::Null;
        };
        let k = i as i64 - d.lower as i64;
        if k < 0 || k >= d.len as i64 {
            return Datum::Null;
        }
        offset = offset * d.len as usize + k as usize;
    }
    a.items.get(offset).cloned().unwrap_or(Datum::Null)
}

/// `a[lo:hi]...`: the bounds clipped to the array; dimensions past the subscripts are taken
/// whole; the result's lower bounds are 1. Empty when any range is empty.
fn slice_of(a: &Array, bounds: &[(Option<i32>, Option<i32>)], subs: &[ArraySub]) -> Array {
    if a.dims.is_empty() || bounds.len() > a.dims.len() {
        return Array::empty(a.elem);
    }
    let mut ranges = Vec::with_capacity(a.dims.len());
    for (k, d) in a.dims.iter().enumerate() {
        let first = d.lower as i64;
        let last = d.lower as i64 + d.len as i64 - 1;
        let (lo, hi) = match bounds.get(k) {
            Some((lo, hi)) => {
                // A plain subscript among slices means 1:i.
                let lo = if subs[k].lower.is_none() && subs[k].upper.is_some() && lo.is_none() {
                    if is_plain(&subs[k]) { 1 } else { first }
                } else {
                    lo.map_or(first, |v| v as i64)
                };
                (lo.max(first), hi.map_or(last, |v| v as i64).min(last))
            }
            None => (first, last),
        };
        if lo > hi {
            return Array::empty(a.elem);
        }
        ranges.push(((lo - first) as usize, (hi - first) as usize));
    }
    let mut items = Vec::new();
    let mut idx: Vec<usize> = ranges.iter().map(|r| r.0).collect();
    let strides: Vec<usize> = (0..a.dims.len())
        .map(|k| a.dims[k + 1..].iter().map(|d| d.len as usize).product())
        .collect();
    'outer: loop {
        let off: usize = idx.iter().zip(&strides).map(|(i, s)| i * s).sum();
        items.push(a.items.get(off).cloned().unwrap_or(Datum::Null));
        let mut k = idx.len();
        while k > 0 {
            k -= 1;
            if idx[k] < ranges[k].1 {
                idx[k] += 1;
                continue 'outer;
            }
            idx[k] = ranges[k].0;
        }
        break;
    }
    Array {
        elem: a.elem,
        dims: ranges
            .iter()
            .map(|(lo, hi)| Dim {
                len: (hi - lo + 1) as i32,
                lower: 1,
            })
            .collect(),
        items,
    }
}

/// Whether a subscript was written without a colon (`[i]`), which a slice reads as `[1:i]`.
fn is_plain(s: &ArraySub) -> bool {
    s.plain
}

/// `ARRAY[[...], [...]]`: sub-arrays of equal dimensions stacked along a new first one.
fn nest(elem: keel_types::TypeId, subs: Vec<Datum>) -> PgResult<Array> {
    let mut dims: Option<Vec<Dim>> = None;
    let mut items = Vec::new();
    let mut n = 0;
    for s in subs {
        let Datum::Array(s) = s else {
            continue;
        };
        match &dims {
            None => dims = Some(s.dims.clone()),
            Some(d) if *d != s.dims => {
                return Err(PgError::new(
                    sqlstate::ARRAY_SUBSCRIPT_ERROR,
                    "multidimensional arrays must have array expressions with matching dimensions",
                ));
            }
            _ => {}
        }
        n += 1;
        items.extend(std::sync::Arc::unwrap_or_clone(s).items);
    }
    let inner = dims.unwrap_or_default();
    if items.is_empty() {
        return Ok(Array::empty(elem));
    }
    if inner.len() + 1 > keel_types::array::MAXDIM {
        return Err(keel_types::array::too_many_dims(inner.len() + 1));
    }
    Array::check_size(items.len())?;
    let mut all = vec![Dim { len: n, lower: 1 }];
    all.extend(inner);
    Ok(Array {
        elem,
        dims: all,
        items,
    })
}
