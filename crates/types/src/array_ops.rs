//! Operators and functions on arrays (PostgreSQL's `anyarray` family): comparison,
//! containment (`@>`, `<@`), overlap (`&&`), concatenation (`||`, array_cat, array_append,
//! array_prepend) and the inspection and search functions.
//!
//! Resolution follows PostgreSQL's polymorphic rules for the cases applications write: an
//! untyped literal next to an array takes the array's type (`arr || '{2,3}'`) or its
//! element's, per the operator; `anyelement` arguments are coerced to the array's element.

use crate::array::{Array, Dim, MAXDIM};
use crate::func::{FuncContext, Function, Volatility, intern_types};
use crate::ops::{Operator, compare_typed};
use crate::{Datum, TypeId};
use keel_common::{PgError, PgResult, sqlstate};
use std::cmp::Ordering;

fn arr(d: &Datum) -> Option<&Array> {
    match d {
        Datum::Array(a) => Some(a),
        _ => None,
    }
}

/// Resolves a binary operator with an array operand; None = no such operator.
pub fn resolve_binary(opn: &str, left: TypeId, right: TypeId) -> Option<Operator> {
    use TypeId::Unknown;
    let op = |l, r, result, func| {
        Some(Operator {
            left: l,
            right: r,
            result,
            func,
        })
    };
    let (l, r) = match (left, right) {
        (Unknown, t) if t.is_array() => (t, t),
        (t, Unknown) if t.is_array() => (t, t),
        lr => lr,
    };
    if opn == "||" {
        // anycompatiblearray: the elements' common type (`ARRAY[1.1] || ARRAY[2]` is
        // numeric[]).
        let common = |a: TypeId, b: TypeId| {
            crate::common_type::common_type_of("||", [a, b])
                .ok()
                .and_then(|c| Some((c, c.array_of()?)))
        };
        return match (l.elem(), r.elem()) {
            (Some(a), Some(b)) if a == b => op(l, r, l, array_cat_op),
            (Some(a), Some(b)) => {
                let (_, arr) = common(a, b)?;
                op(arr, arr, arr, array_cat_op)
            }
            (Some(a), None) if a == r || can_elem(r, a) => op(l, a, l, append_op),
            (None, Some(b)) if b == l || can_elem(l, b) => op(b, r, r, prepend_op),
            (Some(a), None) if !r.is_array() => {
                let (c, arr) = common(a, r)?;
                op(arr, c, arr, append_op)
            }
            (None, Some(b)) if !l.is_array() => {
                let (c, arr) = common(l, b)?;
                op(c, arr, arr, prepend_op)
            }
            _ => None,
        };
    }
    if l != r || !l.is_array() {
        return None;
    }
    let func: fn(&Datum, &Datum) -> PgResult<Datum> = match opn {
        "=" => |a, b| Ok(Datum::Bool(crate::ops::compare(a, b) == Ordering::Equal)),
        "<>" => |a, b| Ok(Datum::Bool(crate::ops::compare(a, b) != Ordering::Equal)),
        "<" => |a, b| Ok(Datum::Bool(crate::ops::compare(a, b) == Ordering::Less)),
        "<=" => |a, b| Ok(Datum::Bool(crate::ops::compare(a, b) != Ordering::Greater)),
        ">" => |a, b| Ok(Datum::Bool(crate::ops::compare(a, b) == Ordering::Greater)),
        ">=" => |a, b| Ok(Datum::Bool(crate::ops::compare(a, b) != Ordering::Less)),
        "@>" => |a, b| Ok(Datum::Bool(contains(a, b))),
        "<@" => |a, b| Ok(Datum::Bool(contains(b, a))),
        "&&" => |a, b| Ok(Datum::Bool(overlaps(a, b))),
        _ => return None,
    };
    op(l, r, TypeId::Bool, func)
}

/// Whether a value of `from` converts implicitly to the element type `to`.
fn can_elem(from: TypeId, to: TypeId) -> bool {
    from == TypeId::Unknown
        || crate::cast::can_cast(from, to, crate::cast::CastContext::Implicit) && !from.is_array()
}

fn contains(a: &Datum, b: &Datum) -> bool {
    let (Some(a), Some(b)) = (arr(a), arr(b)) else {
        return false;
    };
    b.items.iter().all(|y| {
        !y.is_null()
            && a.items
                .iter()
                .any(|x| !x.is_null() && compare_typed(x, y, a.elem) == Ordering::Equal)
    })
}

fn overlaps(a: &Datum, b: &Datum) -> bool {
    let (Some(a), Some(b)) = (arr(a), arr(b)) else {
        return false;
    };
    b.items.iter().any(|y| {
        !y.is_null()
            && a.items
                .iter()
                .any(|x| !x.is_null() && compare_typed(x, y, a.elem) == Ordering::Equal)
    })
}

fn concat_error(detail: &str) -> PgError {
    PgError::new(
        sqlstate::ARRAY_SUBSCRIPT_ERROR,
        "cannot concatenate incompatible arrays",
    )
    .with_detail(detail)
}

/// `array || array` (array_cat): equal dimensionality concatenates along the first
/// dimension; an N-1 dimensional array is appended or prepended as one slice.
pub fn cat(a: Array, b: Array) -> PgResult<Array> {
    if a.items.is_empty() {
        return Ok(b);
    }
    if b.items.is_empty() {
        return Ok(a);
    }
    let (na, nb) = (a.dims.len(), b.dims.len());
    let mut out = a;
    if na == nb {
        if out.dims[1..]
            .iter()
            .map(|d| d.len)
            .ne(b.dims[1..].iter().map(|d| d.len))
        {
            return Err(concat_error(
                "Arrays with differing element dimensions are not compatible for concatenation.",
            ));
        }
        out.dims[0].len += b.dims[0].len;
        out.items.extend(b.items);
    } else if na == nb + 1 {
        if out.dims[1..]
            .iter()
            .map(|d| d.len)
            .ne(b.dims.iter().map(|d| d.len))
        {
            return Err(concat_error(
                "Arrays with differing element dimensions are not compatible for concatenation.",
            ));
        }
        out.dims[0].len += 1;
        out.items.extend(b.items);
    } else if na + 1 == nb {
        if out
            .dims
            .iter()
            .map(|d| d.len)
            .ne(b.dims[1..].iter().map(|d| d.len))
        {
            return Err(concat_error(
                "Arrays with differing dimensions are not compatible for concatenation.",
            ));
        }
        let mut dims = b.dims;
        dims[0].len += 1;
        out.items.extend(b.items);
        out.dims = dims;
    } else {
        return Err(concat_error(&format!(
            "Arrays of {na} and {nb} dimensions are not compatible for concatenation."
        )));
    }
    crate::array::Array::check_size(out.items.len())?;
    Ok(out)
}

fn take_array(d: &Datum, elem: TypeId) -> Array {
    match d {
        Datum::Array(a) => (**a).clone(),
        _ => Array::empty(elem),
    }
}

fn array_cat_op(a: &Datum, b: &Datum) -> PgResult<Datum> {
    let elem = arr(a).or(arr(b)).map_or(TypeId::Text, |x| x.elem);
    Ok(Datum::Array(std::sync::Arc::new(cat(
        take_array(a, elem),
        take_array(b, elem),
    )?)))
}

/// array_append: a one-dimensional (or empty) array gains an element at its end.
fn append(a: &Datum, v: &Datum, front: bool) -> PgResult<Datum> {
    let elem = arr(a)
        .map(|x| x.elem)
        .or_else(|| v.natural_type())
        .unwrap_or(TypeId::Text);
    let mut out = take_array(a, elem);
    match out.dims.len() {
        0 => {
            out.dims.push(Dim { len: 1, lower: 1 });
            out.items.push(v.clone());
        }
        1 => {
            if front {
                out.items.insert(0, v.clone());
            } else {
                out.items.push(v.clone());
            }
            out.dims[0].len += 1;
        }
        _ => {
            return Err(PgError::new(
                sqlstate::DATA_EXCEPTION,
                "argument must be empty or one-dimensional array",
            ));
        }
    }
    Ok(Datum::Array(std::sync::Arc::new(out)))
}

fn append_op(a: &Datum, v: &Datum) -> PgResult<Datum> {
    append(a, v, false)
}

fn prepend_op(v: &Datum, a: &Datum) -> PgResult<Datum> {
    append(a, v, true)
}

// ---------------------------------------------------------------- functions

fn ints(d: &Datum) -> Option<i64> {
    d.int_value()
}

fn not_distinct(x: &Datum, y: &Datum, elem: TypeId) -> bool {
    match (x.is_null(), y.is_null()) {
        (true, true) => true,
        (false, false) => compare_typed(x, y, elem) == Ordering::Equal,
        _ => false,
    }
}

fn one_dim(a: &Array) -> PgResult<()> {
    if a.dims.len() > 1 {
        return Err(PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "searching for elements in multidimensional arrays is not supported",
        ));
    }
    Ok(())
}

fn array_length(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let (Some(x), Some(d)) = (arr(&a[0]), ints(&a[1])) else {
        return Ok(Datum::Null);
    };
    Ok(
        match x.dims.get((d - 1).clamp(-1, MAXDIM as i64) as usize) {
            Some(dim) if d >= 1 => Datum::Int4(dim.len),
            _ => Datum::Null,
        },
    )
}

fn array_bound(a: &[Datum], upper: bool) -> Datum {
    let (Some(x), Some(d)) = (arr(&a[0]), ints(&a[1])) else {
        return Datum::Null;
    };
    match x.dims.get((d - 1).clamp(-1, MAXDIM as i64) as usize) {
        Some(dim) if d >= 1 => Datum::Int4(if upper {
            dim.lower + dim.len - 1
        } else {
            dim.lower
        }),
        _ => Datum::Null,
    }
}

fn array_dims(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let Some(x) = arr(&a[0]) else {
        return Ok(Datum::Null);
    };
    if x.dims.is_empty() {
        return Ok(Datum::Null);
    }
    let mut s = String::new();
    for d in &x.dims {
        s.push_str(&format!(
            "[{}:{}]",
            d.lower,
            d.lower as i64 + d.len as i64 - 1
        ));
    }
    Ok(Datum::Text(s))
}

fn array_position(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let Some(x) = arr(&a[0]) else {
        return Ok(Datum::Null);
    };
    one_dim(x)?;
    let lower = x.dims.first().map_or(1, |d| d.lower);
    let start = match a.get(2) {
        Some(Datum::Null) => {
            return Err(PgError::new(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                "initial position must not be null",
            ));
        }
        Some(d) => ints(d).unwrap_or(lower as i64),
        None => lower as i64,
    };
    for (i, v) in x.items.iter().enumerate() {
        let pos = lower as i64 + i as i64;
        if pos >= start && not_distinct(v, &a[1], x.elem) {
            return Ok(Datum::Int4(pos as i32));
        }
    }
    Ok(Datum::Null)
}

/// width_bucket(operand, thresholds): how many of the (ascending) thresholds are at most
/// the operand, found by binary search as PostgreSQL's width_bucket_array does.
fn width_bucket(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let Some(x) = arr(&a[1]) else {
        return Ok(Datum::Null);
    };
    if x.dims.len() > 1 {
        return Err(PgError::new(
            sqlstate::ARRAY_SUBSCRIPT_ERROR,
            "thresholds must be one-dimensional array",
        ));
    }
    if x.items.iter().any(Datum::is_null) {
        return Err(PgError::new(
            sqlstate::NULL_VALUE_NOT_ALLOWED,
            "thresholds array must not contain NULLs",
        ));
    }
    let (mut left, mut right) = (0, x.items.len());
    while left < right {
        let mid = (left + right) / 2;
        if crate::ops::compare_typed(&a[0], &x.items[mid], x.elem) == std::cmp::Ordering::Less {
            right = mid;
        } else {
            left = mid + 1;
        }
    }
    Ok(Datum::Int4(left as i32))
}

fn array_positions(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let Some(x) = arr(&a[0]) else {
        return Ok(Datum::Null);
    };
    one_dim(x)?;
    let lower = x.dims.first().map_or(1, |d| d.lower);
    let found = x
        .items
        .iter()
        .enumerate()
        .filter(|(_, v)| not_distinct(v, &a[1], x.elem))
        .map(|(i, _)| Datum::Int4(lower + i as i32))
        .collect();
    Ok(Datum::Array(std::sync::Arc::new(Array::from_items(
        TypeId::Int4,
        found,
    ))))
}

fn array_remove(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    replace(a, None)
}

fn array_replace(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    replace(a, Some(&a[2]))
}

fn replace(a: &[Datum], with: Option<&Datum>) -> PgResult<Datum> {
    let Some(x) = arr(&a[0]) else {
        return Ok(Datum::Null);
    };
    if with.is_none() && x.dims.len() > 1 {
        return Err(PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "removing elements from multidimensional arrays is not supported",
        ));
    }
    let mut out = x.clone();
    match with {
        Some(w) => {
            for v in out.items.iter_mut() {
                if not_distinct(v, &a[1], x.elem) {
                    *v = w.clone();
                }
            }
        }
        None => {
            out.items.retain(|v| !not_distinct(v, &a[1], x.elem));
            if out.items.is_empty() {
                out.dims.clear();
            } else if let Some(d) = out.dims.first_mut() {
                d.len = out.items.len() as i32;
            }
        }
    }
    Ok(Datum::Array(std::sync::Arc::new(out)))
}

fn array_to_string(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let (Some(x), Datum::Text(sep)) = (arr(&a[0]), &a[1]) else {
        return Ok(Datum::Null);
    };
    let null_str = match a.get(2) {
        Some(Datum::Text(s)) => Some(s.as_str()),
        _ => None,
    };
    let mut out = String::new();
    let mut first = true;
    for v in &x.items {
        let piece = match v {
            Datum::Null => match null_str {
                Some(s) => s,
                None => continue,
            },
            _ => "",
        };
        if !first {
            out.push_str(sep);
        }
        first = false;
        if v.is_null() {
            out.push_str(piece);
        } else {
            crate::io::format_text(v, x.elem, &mut out);
        }
        crate::limits::varlena(out.len())?;
    }
    Ok(Datum::Text(out))
}

fn string_to_array(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let Datum::Text(s) = &a[0] else {
        return Ok(Datum::Null);
    };
    let delim = match &a[1] {
        Datum::Null => None,
        Datum::Text(d) => Some(d.as_str()),
        _ => return Ok(Datum::Null),
    };
    let null_str = match a.get(2) {
        Some(Datum::Text(n)) => Some(n.as_str()),
        _ => None,
    };
    Ok(Datum::Array(std::sync::Arc::new(Array::from_items(
        TypeId::Text,
        split_string(s, delim, null_str),
    ))))
}

/// The pieces of `string_to_array` and `string_to_table`: `s` split at each `delim` (at each
/// character when None, not at all when empty); a piece equal to `null_str` is NULL.
pub fn split_string(s: &str, delim: Option<&str>, null_str: Option<&str>) -> Vec<Datum> {
    let item = |p: &str| {
        if null_str == Some(p) {
            Datum::Null
        } else {
            Datum::Text(p.to_owned())
        }
    };
    if s.is_empty() {
        return Vec::new();
    }
    match delim {
        None => s
            .char_indices()
            .map(|(i, c)| item(&s[i..i + c.len_utf8()]))
            .collect(),
        Some("") => vec![item(s)],
        Some(sep) => s.split(sep).map(item).collect(),
    }
}

fn f(
    args: &[TypeId],
    result: TypeId,
    strict: bool,
    func: fn(&[Datum], &mut dyn FuncContext) -> PgResult<Datum>,
) -> Option<Function> {
    Some(Function {
        name: "",
        args: intern_types(args),
        result,
        volatility: Volatility::Immutable,
        strict,
        func,
    })
}

/// The array type of an argument list's `anyarray` argument at `i` (an untyped literal
/// cannot decide it).
fn array_arg(args: &[TypeId], i: usize) -> Option<TypeId> {
    args.get(i).copied().filter(|t| t.is_array())
}

/// The array argument `i` of an `(anyarray, anyelement)` pair, or for an untyped one the
/// array type of the element argument `j` (`array_positions(NULL, 10)` is over int4[]).
fn array_for_elem(args: &[TypeId], i: usize, j: usize) -> Option<TypeId> {
    array_arg(args, i).or_else(|| {
        let e = *args.get(j)?;
        if args.get(i) != Some(&TypeId::Unknown) || e == TypeId::Unknown || e.is_array() {
            return None;
        }
        e.array_of()
    })
}

/// Resolves the array functions; None when `name` is not one or the arguments do not fit.
pub fn resolve_function(name: &str, args: &[TypeId]) -> Option<Function> {
    if args.iter().any(|t| t.is_vector()) {
        // A vector argument is its plain array (the implicit int2vector -> int2[] cast).
        let plain: Vec<TypeId> = args.iter().map(|t| t.devector()).collect();
        return resolve_function(name, &plain);
    }
    use TypeId::*;
    let int = |t: TypeId| matches!(t, Int2 | Int4 | Unknown);
    let text = |t: TypeId| matches!(t, Text | Varchar | Bpchar | Name | Unknown);
    match (name, args.len()) {
        ("array_length", 2) if int(args[1]) => {
            f(&[array_arg(args, 0)?, Int4], Int4, true, array_length)
        }
        ("array_lower", 2) if int(args[1]) => {
            f(&[array_arg(args, 0)?, Int4], Int4, true, |a, _| {
                Ok(array_bound(a, false))
            })
        }
        ("array_upper", 2) if int(args[1]) => {
            f(&[array_arg(args, 0)?, Int4], Int4, true, |a, _| {
                Ok(array_bound(a, true))
            })
        }
        ("array_ndims", 1) => f(&[array_arg(args, 0)?], Int4, true, |a, _| {
            Ok(match arr(&a[0]) {
                Some(x) if !x.dims.is_empty() => Datum::Int4(x.dims.len() as i32),
                _ => Datum::Null,
            })
        }),
        ("array_dims", 1) => f(&[array_arg(args, 0)?], Text, true, array_dims),
        ("cardinality", 1) => f(&[array_arg(args, 0)?], Int4, true, |a, _| {
            Ok(arr(&a[0]).map_or(Datum::Null, |x| Datum::Int4(x.items.len() as i32)))
        }),
        ("trim_array", 2) if int(args[1]) => f(
            &[array_arg(args, 0)?, Int4],
            array_arg(args, 0)?,
            true,
            |a, _| crate::array_build::trim_array(a),
        ),
        ("array_fill", 2 | 3) => {
            // array_fill(anyelement, int[] [, int[]]): the value's type decides the result's;
            // an untyped value has none (PostgreSQL: "could not determine polymorphic type").
            let e = args[0];
            if e == Unknown || e.is_array() {
                return None;
            }
            let t = e.array_of()?;
            args[1..]
                .iter()
                .all(|&x| matches!(x, Int4Array | Int2Array | Unknown))
                .then_some(())?;
            let types: &[TypeId] = if args.len() == 3 {
                &[e, Int4Array, Int4Array]
            } else {
                &[e, Int4Array]
            };
            f(types, t, false, crate::array_build::array_fill_for(e))
        }
        ("array_append", 2) => {
            let t = array_arg(args, 0)?;
            can_elem(args[1], t.elem()?).then_some(())?;
            f(&[t, t.elem()?], t, false, |a, _| {
                append(&a[0], &a[1], false)
            })
        }
        ("array_prepend", 2) => {
            let t = array_arg(args, 1)?;
            can_elem(args[0], t.elem()?).then_some(())?;
            f(&[t.elem()?, t], t, false, |a, _| append(&a[1], &a[0], true))
        }
        ("array_cat", 2) => {
            let t = array_arg(args, 0).or(array_arg(args, 1))?;
            args.iter().all(|&x| x == t || x == Unknown).then_some(())?;
            f(&[t, t], t, false, |a, _| {
                if a[0].is_null() && a[1].is_null() {
                    return Ok(Datum::Null);
                }
                array_cat_op(&a[0], &a[1])
            })
        }
        ("array_position", 2 | 3) => {
            let t = array_for_elem(args, 0, 1)?;
            can_elem(args[1], t.elem()?).then_some(())?;
            if args.len() == 3 {
                int(args[2]).then_some(())?;
                f(&[t, t.elem()?, Int4], Int4, false, array_position)
            } else {
                f(&[t, t.elem()?], Int4, false, array_position)
            }
        }
        ("width_bucket", 2) => {
            // width_bucket(anycompatible, anycompatiblearray): the array's type, or the
            // operand's for an untyped one.
            let t = array_arg(args, 1).or_else(|| match args {
                [e, Unknown] if *e != Unknown && !e.is_array() => e.array_of(),
                _ => None,
            })?;
            can_elem(args[0], t.elem()?).then_some(())?;
            f(&[t.elem()?, t], Int4, true, width_bucket)
        }
        ("array_positions", 2) => {
            let t = array_for_elem(args, 0, 1)?;
            can_elem(args[1], t.elem()?).then_some(())?;
            f(&[t, t.elem()?], Int4Array, false, array_positions)
        }
        ("array_remove", 2) => {
            let t = array_for_elem(args, 0, 1)?;
            can_elem(args[1], t.elem()?).then_some(())?;
            f(&[t, t.elem()?], t, false, array_remove)
        }
        ("array_replace", 3) => {
            let t = array_for_elem(args, 0, 1)?;
            let e = t.elem()?;
            (can_elem(args[1], e) && can_elem(args[2], e)).then_some(())?;
            f(&[t, e, e], t, false, array_replace)
        }
        ("array_to_string", 2 | 3) => {
            let t = array_arg(args, 0)?;
            args[1..].iter().all(|&x| text(x)).then_some(())?;
            let types: &[TypeId] = if args.len() == 3 {
                &[t, Text, Text]
            } else {
                &[t, Text]
            };
            f(types, Text, false, |a, c| {
                if a[0].is_null() || a[1].is_null() {
                    return Ok(Datum::Null);
                }
                array_to_string(a, c)
            })
        }
        ("regexp_match" | "regexp_split_to_array", 2 | 3) if args.iter().all(|&x| text(x)) => {
            let types: &[TypeId] = if args.len() == 3 {
                &[Text, Text, Text]
            } else {
                &[Text, Text]
            };
            let func: fn(&[Datum], &mut dyn FuncContext) -> PgResult<Datum> =
                if name == "regexp_match" {
                    regexp_match
                } else {
                    regexp_split_to_array
                };
            f(types, TextArray, true, func)
        }
        ("string_to_array", 2 | 3) if args.iter().all(|&x| text(x)) => {
            let types: &[TypeId] = if args.len() == 3 {
                &[Text, Text, Text]
            } else {
                &[Text, Text]
            };
            f(types, TextArray, false, string_to_array)
        }
        _ => None,
    }
}

fn text_arg(d: Option<&Datum>) -> Option<&str> {
    match d {
        Some(Datum::Text(s)) => Some(s.as_str()),
        _ => None,
    }
}

fn text_args(a: &[Datum]) -> (&str, &str, Option<&str>) {
    let t = text_arg;
    (
        t(a.first()).unwrap_or(""),
        t(a.get(1)).unwrap_or(""),
        t(a.get(2)),
    )
}

/// `regexp_match(string, pattern [, flags])`: the first match's groups as text[].
fn regexp_match(a: &[Datum], cx: &mut dyn FuncContext) -> PgResult<Datum> {
    let (s, p, flags) = text_args(a);
    Ok(match crate::regex::regexp_match(s, p, flags, cx)? {
        Some(groups) => {
            let items = groups
                .into_iter()
                .map(|g| g.map_or(Datum::Null, Datum::Text))
                .collect();
            Datum::Array(std::sync::Arc::new(Array::from_items(TypeId::Text, items)))
        }
        None => Datum::Null,
    })
}

/// `regexp_split_to_array(string, pattern [, flags])`.
fn regexp_split_to_array(a: &[Datum], cx: &mut dyn FuncContext) -> PgResult<Datum> {
    let (s, p, flags) = text_args(a);
    let pieces = crate::regex::regexp_split(s, p, flags, "regexp_split_to_array", cx)?;
    Ok(Datum::Array(std::sync::Arc::new(Array::from_items(
        TypeId::Text,
        pieces.into_iter().map(Datum::Text).collect(),
    ))))
}
