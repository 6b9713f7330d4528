//! `format()`, the quoting functions (`quote_ident`, `quote_literal`, `quote_nullable`) and
//! `translate()`, as PostgreSQL 15's `text_format` (varlena.c), quote.c and ruleutils.c's
//! `quote_identifier` behave.

use crate::func::{FuncContext, Function, Volatility, intern_types};
use crate::io::format_text;
use crate::keywords::{KeywordCategory, keyword_category};
use crate::limits;
use crate::typeid::SqlType;
use crate::{Datum, TypeId};
use keel_common::{PgError, PgResult, sqlstate};

fn is_text(t: TypeId) -> bool {
    matches!(
        t,
        TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name | TypeId::Unknown
    )
}

/// Resolves format, quote_ident, quote_literal, quote_nullable and translate.
pub(crate) fn resolve(name: &str, args: &[TypeId]) -> Option<Function> {
    let a0 = *args.first()?;
    let func = |args: &'static [TypeId], volatility, strict, func| {
        Some(Function {
            name: "",
            args,
            result: TypeId::Text,
            volatility,
            strict,
            func,
        })
    };
    let any = |t: TypeId| {
        if t == TypeId::Unknown {
            TypeId::Text
        } else {
            t
        }
    };
    match (name, args.len()) {
        ("format", _) if is_text(a0) => {
            let mut types: Vec<TypeId> = args.iter().map(|t| any(*t)).collect();
            types[0] = TypeId::Text;
            func(intern_types(&types), Volatility::Stable, false, format)
        }
        ("quote_ident", 1) if is_text(a0) => {
            func(&[TypeId::Text], Volatility::Immutable, true, quote_ident)
        }
        ("quote_literal" | "quote_nullable", 1) if a0 != TypeId::Void => {
            let types = intern_types(&[if is_text(a0) { TypeId::Text } else { a0 }]);
            // quote_literal(anyelement) is stable in PostgreSQL (it calls an output function).
            let volatility = if is_text(a0) {
                Volatility::Immutable
            } else {
                Volatility::Stable
            };
            if name == "quote_literal" {
                func(types, volatility, true, quote_literal)
            } else {
                func(types, volatility, false, quote_nullable)
            }
        }
        ("translate", 3) if args.iter().all(|t| is_text(*t)) => func(
            &[TypeId::Text, TypeId::Text, TypeId::Text],
            Volatility::Immutable,
            true,
            translate,
        ),
        _ => None,
    }
}

fn text(d: &Datum) -> PgResult<&str> {
    match d {
        Datum::Text(s) => Ok(s),
        _ => Err(PgError::internal(
            "function called with arguments of unexpected types",
        )),
    }
}

/// A non-null value's text form (its type's output function).
fn value_text(d: &Datum) -> PgResult<String> {
    if let Datum::Text(s) = d {
        return Ok(s.clone());
    }
    limits::text_out(d)?;
    let mut v = String::new();
    format_text(d, d.natural_type().unwrap_or(TypeId::Text), &mut v);
    Ok(v)
}

/// `ident` as SQL writes it: unchanged when it is lower-case letters, digits and underscores,
/// not starting with a digit, and no keyword beyond the unreserved ones; else double-quoted,
/// with inner double quotes doubled.
pub fn quote_identifier(ident: &str) -> String {
    let safe = ident
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b == b'_')
        && ident
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && keyword_category(ident).is_none_or(|c| c == KeywordCategory::Unreserved);
    if safe {
        return ident.to_string();
    }
    let mut out = String::with_capacity(ident.len() + 2);
    out.push('"');
    for c in ident.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// `s` as a string literal: quotes and backslashes doubled, with an `E` prefix when there is a
/// backslash (so the literal reads the same whatever standard_conforming_strings says).
pub fn quote_literal_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 3);
    if s.contains('\\') {
        out.push('E');
    }
    out.push('\'');
    for c in s.chars() {
        if c == '\'' || c == '\\' {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

fn quote_ident(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    Ok(Datum::Text(quote_identifier(text(&a[0])?)))
}

fn quote_literal(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    Ok(Datum::Text(quote_literal_str(&value_text(&a[0])?)))
}

fn quote_nullable(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    if a[0].is_null() {
        return Ok(Datum::Text("NULL".into()));
    }
    Ok(Datum::Text(quote_literal_str(&value_text(&a[0])?)))
}

/// `translate(string, from, to)`: each character of `string` found in `from` becomes the
/// character at the same position of `to`, or is dropped when `to` is shorter.
fn translate(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    let (s, from, to) = (text(&a[0])?, text(&a[1])?, text(&a[2])?);
    let from: Vec<char> = from.chars().collect();
    let to: Vec<char> = to.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut checked = 0;
    for (i, c) in s.char_indices() {
        match from.iter().position(|f| *f == c) {
            Some(p) => {
                if let Some(t) = to.get(p) {
                    out.push(*t);
                }
            }
            None => out.push(c),
        }
        if i - checked >= crate::func::CHECK_BYTES {
            ctx.check_interrupts()?;
            checked = i;
        }
    }
    limits::varlena(out.len())?;
    Ok(Datum::Text(out))
}

fn format_error(msg: &str) -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, msg)
}

fn unterminated() -> PgError {
    format_error("unterminated format() type specifier").with_hint("For a single \"%\" use \"%%\".")
}

fn too_few() -> PgError {
    format_error("too few arguments for format()")
}

fn arg_zero() -> PgError {
    format_error("format specifies argument 0, but arguments are numbered from 1")
}

fn out_of_range() -> PgError {
    PgError::new(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        "number is out of range",
    )
}

/// Where a conversion's width comes from.
enum Width {
    Fixed(i32),
    /// `*`: the next argument.
    NextArg,
    /// `*n$`: argument n (1-based).
    Arg(usize),
}

/// One parsed `%[n$][-][width|*|*n$]` specifier, up to its type character.
struct Spec {
    /// 1-based argument position, 0 for the next argument.
    argpos: usize,
    left: bool,
    width: Width,
}

/// A cursor over the format string's bytes; every step past the end of the string is
/// "unterminated format() type specifier".
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn cur(&self) -> u8 {
        self.b[self.i]
    }

    fn advance(&mut self) -> PgResult<()> {
        self.i += 1;
        if self.i >= self.b.len() {
            return Err(unterminated());
        }
        Ok(())
    }

    /// A run of decimal digits, if any (22003 past int4).
    fn digits(&mut self) -> PgResult<Option<i32>> {
        let mut val: Option<i32> = None;
        while self.cur().is_ascii_digit() {
            let d = (self.cur() - b'0') as i32;
            val = Some(
                val.unwrap_or(0)
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(d))
                    .ok_or_else(out_of_range)?,
            );
            self.advance()?;
        }
        Ok(val)
    }

    fn spec(&mut self) -> PgResult<Spec> {
        let mut spec = Spec {
            argpos: 0,
            left: false,
            width: Width::Fixed(0),
        };
        if let Some(n) = self.digits()? {
            if self.cur() != b'$' {
                // Not a position but a width, and nothing may follow it.
                spec.width = Width::Fixed(n);
                return Ok(spec);
            }
            if n == 0 {
                return Err(arg_zero());
            }
            spec.argpos = n as usize;
            self.advance()?;
        }
        while self.cur() == b'-' {
            spec.left = true;
            self.advance()?;
        }
        if self.cur() == b'*' {
            self.advance()?;
            spec.width = match self.digits()? {
                Some(n) => {
                    if self.cur() != b'$' {
                        return Err(format_error(
                            "width argument position must be ended by \"$\"",
                        ));
                    }
                    if n == 0 {
                        return Err(arg_zero());
                    }
                    self.advance()?;
                    Width::Arg(n as usize)
                }
                None => Width::NextArg,
            };
        } else if let Some(n) = self.digits()? {
            spec.width = Width::Fixed(n);
        }
        Ok(spec)
    }
}

/// A width taken from an argument: int2/int4 as they are, NULL as 0, anything else through
/// its text form and int4 input.
fn width_value(d: &Datum) -> PgResult<i32> {
    match d {
        Datum::Null => Ok(0),
        Datum::Int4(v) => Ok(*v),
        Datum::Int2(v) => Ok(*v as i32),
        d => match crate::io::parse_text(&value_text(d)?, SqlType::new(TypeId::Int4))? {
            Datum::Int4(v) => Ok(v),
            _ => Err(out_of_range()),
        },
    }
}

/// `format(formatstr text [, formatarg "any" [, ...]])`.
pub(crate) fn format(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let fmt = match &a[0] {
        Datum::Null => return Ok(Datum::Null),
        d => text(d)?,
    };
    let args = &a[1..];
    let mut out = String::with_capacity(fmt.len());
    let mut cur = Cursor {
        b: fmt.as_bytes(),
        i: 0,
    };
    let mut next_arg = 0usize;
    while cur.i < fmt.len() {
        let Some(off) = fmt[cur.i..].find('%') else {
            out.push_str(&fmt[cur.i..]);
            break;
        };
        out.push_str(&fmt[cur.i..cur.i + off]);
        cur.i += off;
        cur.advance()?;
        if cur.cur() == b'%' {
            out.push('%');
            cur.i += 1;
            continue;
        }
        let mut spec = cur.spec()?;
        let kind = cur.cur();
        if !matches!(kind, b's' | b'I' | b'L') {
            let c = fmt[cur.i..].chars().next().unwrap_or('%');
            return Err(
                format_error(&format!("unrecognized format() type specifier \"{c}\""))
                    .with_hint("For a single \"%\" use \"%%\"."),
            );
        }
        cur.i += 1;
        let mut width = match spec.width {
            Width::Fixed(w) => w,
            Width::NextArg | Width::Arg(_) => {
                let idx = match spec.width {
                    Width::Arg(n) => n - 1,
                    _ => next_arg,
                };
                next_arg = idx + 1;
                width_value(args.get(idx).ok_or_else(too_few)?)?
            }
        };
        if width < 0 {
            spec.left = true;
            width = width.checked_neg().ok_or_else(out_of_range)?;
        }
        let idx = if spec.argpos > 0 {
            spec.argpos - 1
        } else {
            next_arg
        };
        next_arg = idx + 1;
        let value = args.get(idx).ok_or_else(too_few)?;
        let converted = match (value, kind) {
            (Datum::Null, b's') => String::new(),
            (Datum::Null, b'L') => "NULL".to_string(),
            (Datum::Null, _) => {
                return Err(PgError::new(
                    sqlstate::NULL_VALUE_NOT_ALLOWED,
                    "null values cannot be formatted as an SQL identifier",
                ));
            }
            (v, b's') => value_text(v)?,
            (v, b'I') => quote_identifier(&value_text(v)?),
            (v, _) => quote_literal_str(&value_text(v)?),
        };
        let pad = (width as usize).saturating_sub(converted.chars().count());
        limits::enlarge(out.len(), converted.len() + pad)?;
        if !spec.left {
            out.extend(std::iter::repeat_n(' ', pad));
        }
        out.push_str(&converted);
        if spec.left {
            out.extend(std::iter::repeat_n(' ', pad));
        }
    }
    limits::varlena(out.len())?;
    Ok(Datum::Text(out))
}

#[cfg(test)]
#[path = "func_format_tests.rs"]
mod tests;
