//! `BETWEEN [A]SYMMETRIC`, which sqlparser does not parse, rewritten at the token level into
//! text it does parse, keeping every other character at its offset (error positions stay
//! right):
//!
//! - `x BETWEEN ASYMMETRIC a AND b` loses the keyword (blanked): it is plain BETWEEN.
//! - `x BETWEEN SYMMETRIC a AND b` becomes `x BETWEEN "?sym"(   a)AND b`: the keyword's
//!   place holds the marker call, the `)` takes the blank before the AND (inserted only when
//!   there is none). The binder recognises the marker ([`is_marker`]) on BETWEEN's lower
//!   bound.
//!
//! The lower bound ends at the first AND outside parentheses, brackets and CASE..END, as in
//! PostgreSQL's grammar, where that bound is a b_expr (no AND, no BETWEEN inside).

use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};
use std::borrow::Cow;

const MARKER: &str = "?sym";

/// The lower bound inside the marker call the rewrite wraps a symmetric lower bound in; None
/// for any other expression.
pub fn marker_arg(e: &ast::Expr) -> Option<&ast::Expr> {
    let ast::Expr::Function(f) = e else {
        return None;
    };
    let [part] = f.name.0.as_slice() else {
        return None;
    };
    let name = part.as_ident()?;
    if name.value != MARKER || name.quote_style != Some('"') {
        return None;
    }
    match &f.args {
        ast::FunctionArguments::List(l) => match l.args.as_slice() {
            [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))] => Some(x),
            _ => None,
        },
        _ => None,
    }
}

/// The tokens of `text` other than whitespace and semicolons, with their spans; None when it
/// does not tokenize (the parse then reports the error).
pub(crate) fn significant_tokens(text: &str) -> Option<Vec<TokenWithSpan>> {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, text)
        .tokenize_with_location()
        .ok()?;
    Some(
        tokens
            .into_iter()
            .filter(|t| !matches!(t.token, Token::Whitespace(_) | Token::SemiColon))
            .collect(),
    )
}

/// `text` with the byte ranges `blank` (in order, not overlapping) turned into spaces, line
/// breaks kept: every other character keeps its offset, so positions stay true.
pub(crate) fn blank_ranges(text: &str, blank: &[(usize, usize)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for &(from, to) in blank {
        out.push_str(&text[at..from]);
        out.extend(
            text[from..to]
                .chars()
                .map(|c| if c == '\n' { '\n' } else { ' ' }),
        );
        at = to;
    }
    out.push_str(&text[at..]);
    out
}

pub(crate) fn keyword(t: &Token) -> Option<Keyword> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    }
}

/// Byte offset of a 1-based line/column (columns count characters) in `text`.
pub(crate) fn offset(text: &str, loc: Location) -> usize {
    let mut line_start = 0;
    for _ in 1..loc.line {
        match text[line_start..].find('\n') {
            Some(n) => line_start += n + 1,
            None => return text.len(),
        }
    }
    text[line_start..]
        .char_indices()
        .nth(loc.column.saturating_sub(1) as usize)
        .map_or(text.len(), |(i, _)| line_start + i)
}

/// The statement with `BETWEEN [A]SYMMETRIC` rewritten; borrowed unchanged when there is none
/// (or the text does not tokenize: the parser then reports the error).
pub fn rewrite(text: &str) -> Cow<'_, str> {
    if !crate::split::contains_ignore_case(text, "symmetric") {
        return Cow::Borrowed(text);
    }
    let dialect = PostgreSqlDialect {};
    let Ok(all) = Tokenizer::new(&dialect, text).tokenize_with_location() else {
        return Cow::Borrowed(text);
    };
    let toks: Vec<&TokenWithSpan> = all
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    // (byte range to replace, replacement), in text order.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for i in 1..toks.len() {
        if keyword(&toks[i - 1].token) != Some(Keyword::BETWEEN) {
            continue;
        }
        let kw = keyword(&toks[i].token);
        if !matches!(kw, Some(Keyword::SYMMETRIC | Keyword::ASYMMETRIC)) {
            continue;
        }
        let start = offset(text, toks[i].span.start);
        let end = offset(text, toks[i].span.end);
        if kw == Some(Keyword::ASYMMETRIC) {
            edits.push((start, end, " ".repeat(end - start)));
            continue;
        }
        let Some(and) = lower_bound_end(&toks[i + 1..]) else {
            continue;
        };
        let open = format!("\"{MARKER}\"(");
        let pad = (end - start).saturating_sub(open.len());
        edits.push((start, end, format!("{open}{}", " ".repeat(pad))));
        let and_at = offset(text, and.span.start);
        if and_at > end && text[..and_at].ends_with([' ', '\t']) {
            edits.push((and_at - 1, and_at, ")".into()));
        } else {
            edits.push((and_at, and_at, ")".into()));
        }
    }
    if edits.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 32);
    let mut at = 0;
    for (s, e, r) in edits {
        out.push_str(&text[at..s]);
        out.push_str(&r);
        at = e;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// The AND ending a BETWEEN lower bound that starts at `toks[0]`.
fn lower_bound_end<'a>(toks: &[&'a TokenWithSpan]) -> Option<&'a TokenWithSpan> {
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate() {
        match (&t.token, keyword(&t.token)) {
            (Token::LParen | Token::LBracket, _) | (_, Some(Keyword::CASE)) => depth += 1,
            (Token::RParen | Token::RBracket, _) | (_, Some(Keyword::END)) => depth -= 1,
            (_, Some(Keyword::AND)) if depth == 0 && k > 0 => return Some(t),
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn rewrites_keep_offsets() {
        assert_eq!(
            rewrite("SELECT 1 BETWEEN SYMMETRIC 2 AND 0"),
            "SELECT 1 BETWEEN \"?sym\"(   2)AND 0"
        );
        assert_eq!(
            rewrite("SELECT 1 between asymmetric 2 AND 0"),
            "SELECT 1 between            2 AND 0"
        );
        assert_eq!(
            rewrite("SELECT x NOT BETWEEN SYMMETRIC (a AND b) AND CASE WHEN p AND q THEN 1 END"),
            "SELECT x NOT BETWEEN \"?sym\"(   (a AND b))AND CASE WHEN p AND q THEN 1 END"
        );
        assert_eq!(rewrite("SELECT 'symmetric'"), "SELECT 'symmetric'");
        assert_eq!(
            rewrite("SELECT 1 BETWEEN SYMMETRIC 2"),
            "SELECT 1 BETWEEN SYMMETRIC 2"
        );
    }
}
