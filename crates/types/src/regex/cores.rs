//! The logic of the regexp functions on plain Rust values. The scalar ones are wired in
//! `funcs`; the ones that return `text[]` or sets (`regexp_match`, `regexp_matches`,
//! `regexp_split_to_array`, `regexp_split_to_table`) are exposed for the caller that has arrays
//! and set-returning functions:
//!
//! - `regexp_match(string, pattern [, flags])` -> `text[]`: [`regexp_match`]; `None` is SQL
//!   NULL (no match), `Some(v)` the array, one element per capturing group (NULL for a group
//!   that did not take part) or the whole match when the pattern has no groups.
//! - `regexp_matches(string, pattern [, flags])` -> `setof text[]`: [`regexp_matches`], one
//!   row per element, each built like `regexp_match`'s array; without `g` at most one row.
//! - `regexp_split_to_array(string, pattern [, flags])` -> `text[]` and
//!   `regexp_split_to_table(...)` -> `setof text`: [`regexp_split`], with the SQL function
//!   name for its error message.
//!
//! All are strict in SQL: a NULL argument gives NULL (no rows for the set-returning ones)
//! without calling them.

use super::with_regex;
use super::{ReFlags, Regex, Spans, byte_to_char_pos, char_pos_to_byte, no_global, parse_flags};
use crate::func::FuncContext;
use crate::limits;
use keel_common::{PgError, PgResult, sqlstate};

/// One match's array: its groups' texts, or the whole match when the RE has no groups.
fn match_array(hay: &str, spans: &Spans) -> Vec<Option<String>> {
    let groups = if spans.len() > 1 {
        &spans[1..]
    } else {
        &spans[..]
    };
    groups
        .iter()
        .map(|g| g.map(|(s, e)| hay[s..e].to_string()))
        .collect()
}

/// `regexp_match(string, pattern [, flags])`: the first match's array, or None (SQL NULL).
/// 22023 for the `g` flag, with PostgreSQL's hint.
pub fn regexp_match(
    string: &str,
    pattern: &str,
    flags: Option<&str>,
    _ctx: &mut dyn FuncContext,
) -> PgResult<Option<Vec<Option<String>>>> {
    let f = parse_flags(flags)?;
    no_global(&f, "regexp_match")?;
    with_regex(pattern, f.flags, |re| {
        Ok(re
            .captures_at(string, 0, true)
            .map(|spans| match_array(string, &spans)))
    })
}

/// `regexp_matches(string, pattern [, flags])`: one array per match (every match with `g`,
/// else the first), empty matches included.
pub fn regexp_matches(
    string: &str,
    pattern: &str,
    flags: Option<&str>,
    ctx: &mut dyn FuncContext,
) -> PgResult<Vec<Vec<Option<String>>>> {
    let f = parse_flags(flags)?;
    with_regex(pattern, f.flags, |re| {
        let mut rows = Vec::new();
        re.for_each_match(string, 0, true, ctx, |spans| {
            rows.push(match_array(string, spans));
            Ok(f.global)
        })?;
        Ok(rows)
    })
}

/// `regexp_split_to_array` / `regexp_split_to_table` (`func` names the one called, for the
/// error on `g`): the pieces between matches. As PostgreSQL, empty matches at the string's
/// start or end or right after a previous match split nothing.
pub fn regexp_split(
    string: &str,
    pattern: &str,
    flags: Option<&str>,
    func: &str,
    ctx: &mut dyn FuncContext,
) -> PgResult<Vec<String>> {
    let f = parse_flags(flags)?;
    no_global(&f, func)?;
    with_regex(pattern, f.flags, |re| {
        let mut pieces = Vec::new();
        let mut piece_start = 0;
        re.for_each_match(string, 0, false, ctx, |spans| {
            if let Some((s, e)) = spans[0]
                && s < string.len()
                && e > piece_start
            {
                pieces.push(string[piece_start..s].to_string());
                piece_start = e;
            }
            Ok(true)
        })?;
        pieces.push(string[piece_start..].to_string());
        Ok(pieces)
    })
}

/// 22023 `invalid value for parameter "{name}": {v}`.
pub(super) fn bad_param(name: &str, v: i32) -> PgError {
    PgError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        format!("invalid value for parameter \"{name}\": {v}"),
    )
}

/// Appends `repl` for one match, expanding `\1`..`\9` (group text, nothing for a group that
/// did not take part or does not exist), `\&` (the whole match) and `\\` (one backslash);
/// any other backslash is kept.
fn expand_replacement(out: &mut String, repl: &str, hay: &str, spans: &Spans) {
    let mut chars = repl.char_indices().peekable();
    let mut lit = 0;
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            continue;
        }
        let Some(&(_, n)) = chars.peek() else { break };
        let group = match n {
            '1'..='9' => Some(n as usize - '0' as usize),
            '&' => Some(0),
            '\\' => None,
            _ => continue,
        };
        out.push_str(&repl[lit..i]);
        chars.next();
        lit = i + 2;
        match group {
            Some(g) => {
                if let Some(Some((s, e))) = spans.get(g) {
                    out.push_str(&hay[*s..*e]);
                }
            }
            None => out.push('\\'),
        }
    }
    out.push_str(&repl[lit..]);
}

/// `regexp_replace`: replaces the `n`th match at or after character `start` (1-based), or
/// every one when `n` is 0.
pub(super) fn replace(
    src: &str,
    pattern: &str,
    repl: &str,
    start: i32,
    n: i32,
    f: ReFlags,
    ctx: &mut dyn FuncContext,
) -> PgResult<String> {
    let groups = repl.contains('\\');
    with_regex(pattern, f.flags, |re: &mut Regex| {
        let mut out = String::new();
        let mut copied = 0;
        let mut seen = 0;
        re.for_each_match(src, char_pos_to_byte(src, start), groups, ctx, |spans| {
            seen += 1;
            if n > 0 && seen < n {
                return Ok(true);
            }
            let Some((s, e)) = spans[0] else {
                return Ok(false);
            };
            let before = out.len();
            out.push_str(&src[copied..s]);
            expand_replacement(&mut out, repl, src, spans);
            limits::enlarge(before, out.len() - before)?;
            copied = e;
            Ok(n == 0)
        })?;
        limits::enlarge(out.len(), src.len() - copied)?;
        out.push_str(&src[copied..]);
        limits::varlena(out.len())?;
        Ok(out)
    })
}

/// The `n`th match (1-based) at or after character `start`, with groups when `groups`.
pub(super) fn nth_match(
    re: &mut Regex,
    hay: &str,
    start: i32,
    n: i32,
    groups: bool,
    ctx: &mut dyn FuncContext,
) -> PgResult<Option<Spans>> {
    let mut seen = 0;
    let mut found = None;
    re.for_each_match(hay, char_pos_to_byte(hay, start), groups, ctx, |spans| {
        seen += 1;
        if seen == n {
            found = Some(spans.clone());
            return Ok(false);
        }
        Ok(true)
    })?;
    Ok(found)
}

/// `regexp_count`: matches at or after character `start`.
pub(super) fn count(
    hay: &str,
    pattern: &str,
    start: i32,
    f: ReFlags,
    ctx: &mut dyn FuncContext,
) -> PgResult<i32> {
    with_regex(pattern, f.flags, |re| {
        let mut n = 0;
        re.for_each_match(hay, char_pos_to_byte(hay, start), false, ctx, |_| {
            n += 1;
            Ok(true)
        })?;
        Ok(n)
    })
}

/// `regexp_instr`: the 1-based character position where the `n`th match (or its group
/// `subexpr`) starts, or just after it ends (`end`); 0 when there is none.
#[allow(clippy::too_many_arguments)]
pub(super) fn instr(
    hay: &str,
    pattern: &str,
    start: i32,
    n: i32,
    end: bool,
    f: ReFlags,
    subexpr: i32,
    ctx: &mut dyn FuncContext,
) -> PgResult<i32> {
    with_regex(pattern, f.flags, |re| {
        if subexpr as usize > re.groups {
            return Ok(0);
        }
        let Some(spans) = nth_match(re, hay, start, n, subexpr > 0, ctx)? else {
            return Ok(0);
        };
        Ok(match spans.get(subexpr as usize).copied().flatten() {
            Some((s, e)) => byte_to_char_pos(hay, if end { e } else { s }),
            None => 0,
        })
    })
}

/// `regexp_substr`: the text of the `n`th match (or its group `subexpr`), None when there is
/// none.
pub(super) fn substr(
    hay: &str,
    pattern: &str,
    start: i32,
    n: i32,
    f: ReFlags,
    subexpr: i32,
    ctx: &mut dyn FuncContext,
) -> PgResult<Option<String>> {
    with_regex(pattern, f.flags, |re| {
        if subexpr as usize > re.groups {
            return Ok(None);
        }
        let spans = nth_match(re, hay, start, n, subexpr > 0, ctx)?;
        Ok(spans
            .and_then(|sp| sp.get(subexpr as usize).copied().flatten())
            .map(|(s, e)| hay[s..e].to_string()))
    })
}
