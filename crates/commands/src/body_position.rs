//! Where in a CREATE FUNCTION statement an error inside the function's body is. A body's
//! compile errors come back with the body as their internal query and the position in it
//! (see `ddl_function::body_error`, `sqlfunc::in_body`); PostgreSQL's
//! `function_parse_error_transpose` then finds the body in the statement, as a dollar-quoted
//! or a single-quoted literal, and reports the error against the statement. When the body is
//! not found exactly once, the error keeps the internal query (psql prints `QUERY:`).

use keel_common::PgError;
use sqlparser::ast;

/// Moves the position of `e`, an error of CREATE FUNCTION statement `stmt`, from its internal
/// query (the body) into the statement's `text`, whose first character is character
/// `char_offset + 1` of the query string.
pub fn transpose(stmt: &ast::Statement, e: &mut PgError, text: &str, char_offset: usize) {
    if matches!(stmt, ast::Statement::CreateFunction(_)) {
        transpose_text(e, text, char_offset);
    }
}

fn transpose_text(e: &mut PgError, stmt: &str, char_offset: usize) {
    if e.position.is_some() {
        return;
    }
    let Some(o) = e.objects.as_deref() else {
        return;
    };
    let (Some(body), Some(pos)) = (o.internal_query.as_deref(), o.internal_position) else {
        return;
    };
    let Some(at) = find_body(stmt, body, pos as usize) else {
        return;
    };
    e.position = Some((char_offset + at) as u32);
    let o = e.objects_mut();
    o.internal_query = None;
    o.internal_position = None;
}

/// The 1-based character position in `stmt` of character `pos` (1-based) of `body`, if `body`
/// is written in `stmt` exactly once as `$tag$body$tag$` or `'body'` (quotes doubled).
fn find_body(stmt: &str, body: &str, pos: usize) -> Option<usize> {
    let mut found = None;
    let mut count = 0;
    for (i, c) in stmt.char_indices() {
        let rest = &stmt[i + 1..];
        let at = match c {
            '$' if rest.starts_with(body) && rest[body.len()..].starts_with('$') => {
                // Characters up to the body's, then `pos - 1` more.
                Some(stmt[..=i].chars().count() + pos)
            }
            '\'' => single_quoted(rest, body, pos).map(|k| stmt[..=i].chars().count() + k),
            _ => None,
        };
        if let Some(at) = at {
            count += 1;
            found = Some(at);
        }
    }
    (count == 1).then_some(found).flatten()
}

/// Whether `rest` starts with `body` written inside single quotes (each `'` doubled) followed
/// by the closing quote; if so, the 1-based character of `body`'s character `pos` in `rest`.
fn single_quoted(rest: &str, body: &str, pos: usize) -> Option<usize> {
    let mut r = rest.chars();
    let mut k = 0;
    let mut mapped = None;
    for (n, c) in body.chars().enumerate() {
        if n + 1 == pos {
            mapped = Some(k + 1);
        }
        if r.next()? != c {
            return None;
        }
        k += 1;
        if c == '\'' {
            if r.next()? != '\'' {
                return None;
            }
            k += 1;
        }
    }
    if r.next()? != '\'' || r.clone().next() == Some('\'') {
        return None;
    }
    Some(mapped.unwrap_or(k + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use keel_common::sqlstate;

    fn err_in_body(body: &str, pos: u32) -> PgError {
        let mut e = PgError::new(sqlstate::SYNTAX_ERROR, "syntax error");
        let o = e.objects_mut();
        o.internal_query = Some(body.into());
        o.internal_position = Some(pos);
        e
    }

    #[test]
    fn dollar_and_single_quoted_bodies() {
        let stmt = "create function f() returns int as $$ selec 1 $$ language sql";
        let mut e = err_in_body(" selec 1 ", 2);
        transpose_text(&mut e, stmt, 0);
        assert_eq!(e.position, Some(stmt.find("selec").unwrap() as u32 + 1));
        assert!(e.objects.as_ref().unwrap().internal_query.is_none());

        let stmt = "create function f() returns text as 'select ''a'' frm x' language sql";
        let mut e = err_in_body("select 'a' frm x", 16);
        transpose_text(&mut e, stmt, 10);
        assert_eq!(e.position, Some(10 + stmt.find(" x'").unwrap() as u32 + 2));
    }

    #[test]
    fn a_body_not_found_once_stays_internal() {
        let stmt = "select $$x$$, $$x$$";
        let mut e = err_in_body("x", 1);
        transpose_text(&mut e, stmt, 0);
        assert_eq!(e.position, None);
        assert_eq!(e.objects.as_ref().unwrap().internal_position, Some(1));
    }
}
