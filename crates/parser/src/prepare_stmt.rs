//! SQL-level prepared statements: `PREPARE name [(type, ...)] AS statement` and
//! `EXECUTE name [(argument, ...)]`, with PostgreSQL's grammar.
//!
//! Both keep the text of what follows (the statement, the arguments) with its character
//! offset in the statement, as DECLARE keeps its query: the session plans or binds that text
//! itself, so errors in it point into the statement the client sent.

use crate::split::syntax_near;
use crate::utility::Utility;
use keel_common::{PgError, PgResult, sqlstate};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

/// One parameter type of PREPARE: its text and its character offset in the statement.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeText {
    pub name: String,
    pub offset: usize,
}

fn tokens(text: &str) -> PgResult<Vec<TokenWithSpan>> {
    let toks = Tokenizer::new(&PostgreSqlDialect {}, text)
        .tokenize_with_location()
        .map_err(|e| PgError::new(sqlstate::SYNTAX_ERROR, e.to_string()))?;
    Ok(toks
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect())
}

/// A PostgreSQL "near" syntax error at token `t` (end of input when none).
fn near(text: &str, t: Option<&TokenWithSpan>) -> PgError {
    let Some(t) = t else {
        return syntax_near(None);
    };
    let at = crate::symmetric::offset(text, t.span.start);
    let end = crate::symmetric::offset(text, t.span.end);
    let mut e = PgError::new(
        sqlstate::SYNTAX_ERROR,
        format!("syntax error at or near \"{}\"", &text[at..end]),
    );
    e.position = Some(text[..at].chars().count() as u32 + 1);
    e
}

/// The statement's name after its first word: an identifier, folded to lower case unless
/// quoted.
fn name_at(text: &str, toks: &[TokenWithSpan], i: usize) -> PgResult<String> {
    match toks.get(i).map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_some() => Ok(w.value.clone()),
        Some(Token::Word(w)) => Ok(w.value.to_lowercase()),
        _ => Err(near(text, toks.get(i))),
    }
}

fn is_word(t: Option<&TokenWithSpan>, w: &str) -> bool {
    matches!(t.map(|t| &t.token), Some(Token::Word(x)) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

/// The byte range of the text inside the parentheses opened by token `open`, and the index
/// of the token after the closing one. Commas at depth one split it: their byte offsets are
/// returned too.
fn parenthesized(
    text: &str,
    toks: &[TokenWithSpan],
    open: usize,
) -> PgResult<(usize, usize, Vec<usize>, usize)> {
    let start = crate::symmetric::offset(text, toks[open].span.end);
    let mut depth = 0usize;
    let mut commas = Vec::new();
    for (i, t) in toks.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen | Token::LBracket => depth += 1,
            Token::RParen | Token::RBracket => {
                depth -= 1;
                if depth == 0 {
                    let end = crate::symmetric::offset(text, t.span.start);
                    return Ok((start, end, commas, i + 1));
                }
            }
            Token::Comma if depth == 1 => commas.push(crate::symmetric::offset(text, t.span.start)),
            _ => {}
        }
    }
    Err(syntax_near(None))
}

/// `PREPARE name [(type, ...)] AS statement`.
pub(crate) fn parse_prepare(text: &str) -> PgResult<Utility> {
    let toks = tokens(text)?;
    if is_word(toks.get(1), "transaction")
        && matches!(
            toks.get(2).map(|t| &t.token),
            Some(Token::SingleQuotedString(_))
        )
    {
        // Two-phase commit: keel has no prepared transactions, which is PostgreSQL with its
        // default max_prepared_transactions = 0.
        return Err(PgError::new(
            sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
            "prepared transactions are disabled",
        )
        .with_hint("Set max_prepared_transactions to a nonzero value."));
    }
    let name = name_at(text, &toks, 1)?;
    let mut i = 2;
    let mut types = Vec::new();
    if matches!(toks.get(i).map(|t| &t.token), Some(Token::LParen)) {
        let (start, end, commas, next) = parenthesized(text, &toks, i)?;
        let bounds = std::iter::once(start)
            .chain(commas.iter().map(|c| c + 1))
            .zip(commas.iter().copied().chain(std::iter::once(end)));
        for (a, b) in bounds {
            let raw = &text[a..b];
            let lead = raw.len() - raw.trim_start().len();
            let name = raw.trim().to_string();
            if name.is_empty() {
                return Err(near(text, toks.get(next - 1)));
            }
            types.push(TypeText {
                name,
                offset: text[..a + lead].chars().count(),
            });
        }
        i = next;
    }
    if !is_word(toks.get(i), "as") {
        return Err(near(text, toks.get(i)));
    }
    let Some(first) = toks.get(i + 1).filter(|t| t.token != Token::EOF) else {
        return Err(syntax_near(None));
    };
    // PostgreSQL's grammar takes SELECT, VALUES, TABLE, WITH, INSERT, UPDATE, DELETE and
    // MERGE (keel has no MERGE): any other statement is a syntax error at its first word.
    let preparable = [
        "select", "values", "table", "with", "insert", "update", "delete",
    ];
    if !preparable.iter().any(|w| is_word(Some(first), w)) && !matches!(first.token, Token::LParen)
    {
        return Err(near(text, Some(first)));
    }
    let at = crate::symmetric::offset(text, first.span.start);
    let query = text[at..].trim_end().trim_end_matches(';').to_string();
    Ok(Utility::Prepare {
        name,
        types,
        query,
        query_offset: text[..at].chars().count(),
    })
}

/// `EXECUTE name [(argument, ...)]`.
pub(crate) fn parse_execute(text: &str) -> PgResult<Utility> {
    let toks = tokens(text)?;
    let name = name_at(text, &toks, 1)?;
    let mut args = String::new();
    let mut args_offset = 0;
    let mut next = 2;
    if matches!(toks.get(2).map(|t| &t.token), Some(Token::LParen)) {
        let (start, end, _, after) = parenthesized(text, &toks, 2)?;
        args = text[start..end].to_string();
        args_offset = text[..start].chars().count();
        if args.trim().is_empty() {
            return Err(near(text, toks.get(after - 1)));
        }
        next = after;
    }
    match toks.get(next) {
        None => {}
        Some(t) if matches!(t.token, Token::EOF | Token::SemiColon) => {}
        t => return Err(near(text, t)),
    }
    Ok(Utility::Execute {
        name,
        args,
        args_offset,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepare_forms() {
        let u = parse_prepare("prepare Q (int, numeric(10, 2)) as select $1").unwrap();
        let Utility::Prepare {
            name,
            types,
            query,
            query_offset,
        } = u
        else {
            panic!("not a PREPARE");
        };
        assert_eq!(name, "q");
        assert_eq!(types[0].name, "int");
        assert_eq!(types[1].name, "numeric(10, 2)");
        assert_eq!(types[1].offset, 16);
        assert_eq!(query, "select $1");
        assert_eq!(query_offset, 35);
        let e = parse_prepare("prepare bad as create table zz(a int)").unwrap_err();
        assert_eq!(e.message, "syntax error at or near \"create\"");
        assert_eq!(e.position, Some(16));
        assert!(parse_prepare("prepare \"Q\" as values (1)").is_ok());
    }

    #[test]
    fn execute_forms() {
        let Utility::Execute {
            name,
            args,
            args_offset,
        } = parse_execute("execute q(1, f(2, 3))").unwrap()
        else {
            panic!("not an EXECUTE");
        };
        assert_eq!(
            (name.as_str(), args.as_str(), args_offset),
            ("q", "1, f(2, 3)", 10)
        );
        let Utility::Execute { args, .. } = parse_execute("EXECUTE q;").unwrap() else {
            panic!("not an EXECUTE");
        };
        assert!(args.is_empty());
        assert!(parse_execute("execute q(1) x").is_err());
    }
}
