//! The regexp operators (`~ ~* !~ !~*`) and scalar functions (`regexp_replace`,
//! `regexp_like`, `regexp_count`, `regexp_instr`, `regexp_substr`) as keel resolves and calls
//! them. Arguments arrive coerced: text as `Datum::Text`, integers as `Datum::Int4`.

use super::cores::{self, bad_param};
use super::{Flags, ReFlags, no_global, parse_flags, with_regex};
use crate::func::{FuncContext, Function, Volatility, intern_types};
use crate::ops::Operator;
use crate::{Datum, TypeId};
use keel_common::{PgError, PgResult};

fn mismatch() -> PgError {
    PgError::internal("function called with arguments of unexpected types")
}

fn text(d: &Datum) -> PgResult<&str> {
    match d {
        Datum::Text(s) => Ok(s),
        _ => Err(mismatch()),
    }
}

fn int(d: &Datum) -> PgResult<i32> {
    match d {
        Datum::Int4(v) => Ok(*v),
        Datum::Int2(v) => Ok(*v as i32),
        _ => Err(mismatch()),
    }
}

fn regex_op<const NEGATE: bool, const ICASE: bool>(l: &Datum, r: &Datum) -> PgResult<Datum> {
    let flags = Flags {
        icase: ICASE,
        ..Flags::DEFAULT
    };
    let (s, p) = (text(l)?, text(r)?);
    let m = with_regex(p, flags, |re| Ok(re.is_match(s)))?;
    Ok(Datum::Bool(m != NEGATE))
}

/// Resolves `~`, `~*`, `!~`, `!~*` (textregexeq and friends) for string operands; name,
/// varchar and bpchar operands are taken as text.
pub(crate) fn resolve_operator(op: &str, left: TypeId, right: TypeId) -> Option<Operator> {
    let stringish = |t: TypeId| {
        matches!(
            t,
            TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name | TypeId::Unknown
        )
    };
    if !stringish(left) || !stringish(right) {
        return None;
    }
    let func: fn(&Datum, &Datum) -> PgResult<Datum> = match op {
        "~" => regex_op::<false, false>,
        "~*" => regex_op::<false, true>,
        "!~" => regex_op::<true, false>,
        "!~*" => regex_op::<true, true>,
        _ => return None,
    };
    Some(Operator {
        left: TypeId::Text,
        right: TypeId::Text,
        result: TypeId::Bool,
        func,
    })
}

/// Whether `args` fit `sig`, one letter an argument: `T` text-like, `I` an integer that
/// converts to int4 implicitly (or an untyped literal).
fn fits(args: &[TypeId], sig: &str) -> bool {
    use TypeId::*;
    args.len() == sig.len()
        && args.iter().zip(sig.bytes()).all(|(t, s)| match s {
            b'T' => matches!(t, Text | Varchar | Bpchar | Name | Unknown),
            _ => matches!(t, Int2 | Int4 | Unknown),
        })
}

fn types_of(sig: &str) -> &'static [TypeId] {
    let v: Vec<TypeId> = sig
        .bytes()
        .map(|b| {
            if b == b'T' {
                TypeId::Text
            } else {
                TypeId::Int4
            }
        })
        .collect();
    intern_types(&v)
}

type F = fn(&[Datum], &mut dyn FuncContext) -> PgResult<Datum>;

/// Resolves the scalar regexp functions; None when `name` is not one of them or no
/// signature fits.
pub(crate) fn resolve_function(name: &str, args: &[TypeId]) -> Option<Function> {
    let sigs: &[(&str, TypeId, F)] = match name {
        // The flags form wins for an untyped fourth argument, as text is the preferred type.
        "regexp_replace" => &[
            ("TTT", TypeId::Text, regexp_replace),
            ("TTTT", TypeId::Text, regexp_replace),
            ("TTTI", TypeId::Text, regexp_replace_from),
            ("TTTII", TypeId::Text, regexp_replace_from),
            ("TTTIIT", TypeId::Text, regexp_replace_from),
        ],
        "regexp_like" => &[
            ("TT", TypeId::Bool, regexp_like),
            ("TTT", TypeId::Bool, regexp_like),
        ],
        "regexp_count" => &[
            ("TT", TypeId::Int4, regexp_count),
            ("TTI", TypeId::Int4, regexp_count),
            ("TTIT", TypeId::Int4, regexp_count),
        ],
        "regexp_instr" => &[
            ("TT", TypeId::Int4, regexp_instr),
            ("TTI", TypeId::Int4, regexp_instr),
            ("TTII", TypeId::Int4, regexp_instr),
            ("TTIII", TypeId::Int4, regexp_instr),
            ("TTIIIT", TypeId::Int4, regexp_instr),
            ("TTIIITI", TypeId::Int4, regexp_instr),
        ],
        "regexp_substr" => &[
            ("TT", TypeId::Text, regexp_substr),
            ("TTI", TypeId::Text, regexp_substr),
            ("TTII", TypeId::Text, regexp_substr),
            ("TTIIT", TypeId::Text, regexp_substr),
            ("TTIITI", TypeId::Text, regexp_substr),
        ],
        _ => return None,
    };
    let (sig, result, func) = sigs.iter().find(|(sig, _, _)| fits(args, sig))?;
    Some(Function {
        name: "",
        args: types_of(sig),
        result: *result,
        volatility: Volatility::Immutable,
        strict: true,
        func: *func,
    })
}

fn opt_text(a: &[Datum], i: usize) -> PgResult<Option<&str>> {
    a.get(i).map(text).transpose()
}

fn opt_int(a: &[Datum], i: usize, default: i32) -> PgResult<i32> {
    a.get(i).map_or(Ok(default), int)
}

/// `regexp_replace(source, pattern, replacement [, flags])`: the first match, or all with `g`.
fn regexp_replace(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    let f = parse_flags(opt_text(a, 3)?)?;
    let n = if f.global { 0 } else { 1 };
    let out = cores::replace(text(&a[0])?, text(&a[1])?, text(&a[2])?, 1, n, f, ctx)?;
    Ok(Datum::Text(out))
}

/// `regexp_replace(source, pattern, replacement, start [, n [, flags]])` (PostgreSQL 15): the
/// `n`th match at or after `start` (every one for n = 0); without `n`, the first (all with
/// `g`).
fn regexp_replace_from(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    let start = int(&a[3])?;
    if start <= 0 {
        return Err(bad_param("start", start));
    }
    let n = a.get(4).map(int).transpose()?;
    if let Some(n) = n.filter(|n| *n < 0) {
        return Err(bad_param("n", n));
    }
    let f = parse_flags(opt_text(a, 5)?)?;
    let n = n.unwrap_or(if f.global { 0 } else { 1 });
    let out = cores::replace(text(&a[0])?, text(&a[1])?, text(&a[2])?, start, n, f, ctx)?;
    Ok(Datum::Text(out))
}

fn flags_for(a: &[Datum], i: usize, func: &str) -> PgResult<ReFlags> {
    let f = parse_flags(opt_text(a, i)?)?;
    no_global(&f, func)?;
    Ok(f)
}

fn start_arg(a: &[Datum], i: usize) -> PgResult<i32> {
    let start = opt_int(a, i, 1)?;
    if start <= 0 {
        return Err(bad_param("start", start));
    }
    Ok(start)
}

fn regexp_like(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let f = flags_for(a, 2, "regexp_like")?;
    let s = text(&a[0])?;
    let m = with_regex(text(&a[1])?, f.flags, |re| Ok(re.is_match(s)))?;
    Ok(Datum::Bool(m))
}

fn regexp_count(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    let start = start_arg(a, 2)?;
    let f = flags_for(a, 3, "regexp_count")?;
    let n = cores::count(text(&a[0])?, text(&a[1])?, start, f, ctx)?;
    Ok(Datum::Int4(n))
}

fn regexp_instr(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    let start = start_arg(a, 2)?;
    let n = opt_int(a, 3, 1)?;
    if n <= 0 {
        return Err(bad_param("n", n));
    }
    let endoption = opt_int(a, 4, 0)?;
    if endoption != 0 && endoption != 1 {
        return Err(bad_param("endoption", endoption));
    }
    let f = flags_for(a, 5, "regexp_instr")?;
    let subexpr = opt_int(a, 6, 0)?;
    if subexpr < 0 {
        return Err(bad_param("subexpr", subexpr));
    }
    let pos = cores::instr(
        text(&a[0])?,
        text(&a[1])?,
        start,
        n,
        endoption == 1,
        f,
        subexpr,
        ctx,
    )?;
    Ok(Datum::Int4(pos))
}

fn regexp_substr(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    let start = start_arg(a, 2)?;
    let n = opt_int(a, 3, 1)?;
    if n <= 0 {
        return Err(bad_param("n", n));
    }
    let f = flags_for(a, 4, "regexp_substr")?;
    let subexpr = opt_int(a, 5, 0)?;
    if subexpr < 0 {
        return Err(bad_param("subexpr", subexpr));
    }
    let s = cores::substr(text(&a[0])?, text(&a[1])?, start, n, f, subexpr, ctx)?;
    Ok(s.map_or(Datum::Null, Datum::Text))
}
