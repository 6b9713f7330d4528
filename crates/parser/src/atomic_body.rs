//! `CREATE FUNCTION ... BEGIN ATOMIC stmt; ... END`, the SQL-standard body, which sqlparser's
//! PostgreSQL grammar does not take. The body becomes a dollar-quoted string with the tag
//! [`TAG`], each `RETURN expr` statement of it as `SELECT expr` (what a standard body's
//! `RETURN` means), empty statements dropped. DDL then treats that tag as a standard body:
//! LANGUAGE sql by default, and no other language.

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

/// The dollar-quote tag a rewritten standard body carries.
pub const TAG: &str = "keel_atomic";

/// `text` with its BEGIN ATOMIC body as a string; None when it has none.
pub fn rewrite(text: &str) -> Option<String> {
    if !text.to_ascii_uppercase().contains("ATOMIC") {
        return None;
    }
    let dialect = crate::dialect::KeelDialect;
    let tokens = Tokenizer::new(&dialect, text)
        .tokenize_with_location()
        .ok()?;
    let words: Vec<(usize, &TokenWithSpan)> = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let kw = |i: usize| match words.get(i).map(|(_, t)| &t.token) {
        Some(Token::Word(w)) => Some(w.keyword),
        _ => None,
    };
    // CREATE [OR REPLACE] FUNCTION | PROCEDURE
    let mut i = 1;
    if kw(0) != Some(Keyword::CREATE) {
        return None;
    }
    if kw(1) == Some(Keyword::OR) && kw(2) == Some(Keyword::REPLACE) {
        i = 3;
    }
    if !matches!(kw(i), Some(Keyword::FUNCTION | Keyword::PROCEDURE)) {
        return None;
    }
    let mut depth = 0i32;
    let mut begin = None;
    for (k, (_, t)) in words.iter().enumerate().skip(i) {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Word(w) if depth == 0 && w.keyword == Keyword::BEGIN => {
                if kw(k + 1) == Some(Keyword::ATOMIC) {
                    begin = Some(k);
                }
                break;
            }
            _ => {}
        }
    }
    let begin = begin?;
    // The body ends at the last END: only spaces, comments and semicolons follow it.
    let end = (begin + 2..words.len())
        .rev()
        .find(|&k| !matches!(words[k].1.token, Token::SemiColon))?;
    if kw(end) != Some(Keyword::END) {
        return None;
    }
    let offset = |t: &TokenWithSpan| byte_offset(text, t.span.start);
    let begin_at = offset(words[begin].1)?;
    let body_from = byte_offset(text, words[begin + 1].1.span.end)?;
    let body_to = offset(words[end].1)?;
    let after = byte_offset(text, words[end].1.span.end)?;
    let mut stmts = Vec::new();
    for s in crate::split::split_statements(&text[body_from..body_to]) {
        let stmt = crate::split::strip_comments_ws(s.text)
            .trim_end()
            .trim_end_matches(';')
            .trim_end();
        if stmt.is_empty() {
            continue;
        }
        let first = crate::split::first_word(stmt);
        stmts.push(if first.eq_ignore_ascii_case("return") {
            format!("SELECT {}", stmt[first.len()..].trim_start())
        } else {
            stmt.to_string()
        });
    }
    let body = stmts.join(";\n");
    if body.contains(&format!("${TAG}$")) {
        return None;
    }
    Some(format!(
        "{}AS ${TAG}${body}${TAG}${}",
        &text[..begin_at],
        &text[after..]
    ))
}

/// The byte offset of a tokenizer location (1-based line and character column) in `text`.
fn byte_offset(text: &str, at: sqlparser::tokenizer::Location) -> Option<usize> {
    let chars = crate::parse::char_position(text, at)?;
    match text.char_indices().nth(chars - 1) {
        Some((b, _)) => Some(b),
        None if chars - 1 == text.chars().count() => Some(text.len()),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn begin_atomic_bodies_become_tagged_strings() {
        let got = rewrite(
            "CREATE FUNCTION f(a int) RETURNS int LANGUAGE sql BEGIN ATOMIC ;;RETURN a + 1;; END",
        );
        assert_eq!(
            got.as_deref(),
            Some(
                "CREATE FUNCTION f(a int) RETURNS int LANGUAGE sql AS $keel_atomic$SELECT a + 1$keel_atomic$"
            )
        );
        let got = rewrite(
            "create or replace function g() returns int begin atomic select case when true then 1 end; select 2; end;",
        );
        assert_eq!(
            got.as_deref(),
            Some(
                "create or replace function g() returns int AS $keel_atomic$select case when true then 1 end;\nselect 2$keel_atomic$;"
            )
        );
        assert_eq!(rewrite("select 'begin atomic'"), None);
        assert_eq!(
            rewrite("create function h() returns int as $$ select 1 $$ language sql"),
            None
        );
    }
}
