//! SQL-level cursors: `DECLARE name [BINARY] [ASENSITIVE | INSENSITIVE] [[NO] SCROLL] CURSOR
//! [{WITH | WITHOUT} HOLD] FOR query`, `FETCH` / `MOVE [direction] [FROM | IN] name` and
//! `CLOSE name | ALL`, with PostgreSQL's grammar for the direction.

use crate::split::{Tok, syntax_near};
use crate::utility::Utility;
use keel_common::{PgError, PgResult, sqlstate};

/// A FETCH / MOVE direction, reduced as PostgreSQL's grammar reduces it: NEXT is FORWARD 1,
/// PRIOR BACKWARD 1, FIRST ABSOLUTE 1, LAST ABSOLUTE -1, ALL FORWARD ALL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fetch {
    /// `FORWARD n` (a negative count goes backward; [`Fetch::ALL`] for ALL).
    Forward(i64),
    Backward(i64),
    Absolute(i64),
    Relative(i64),
}

impl Fetch {
    /// The count of FORWARD ALL / BACKWARD ALL.
    pub const ALL: i64 = i64::MAX;
}

/// `DECLARE`: `toks` are the statement's tokens, `text` the statement.
pub(crate) fn parse_declare(toks: &[Tok], text: &str) -> PgResult<Utility> {
    let mut i = 1;
    let name = match toks.get(i) {
        Some(Tok::Word(w) | Tok::Quoted(w)) => w.clone(),
        t => return Err(syntax_near(t)),
    };
    i += 1;
    let word = |i: usize, w: &str| toks.get(i).is_some_and(|t| t.is_word(w));
    let mut binary = false;
    let mut scroll = None;
    let mut hold = false;
    loop {
        if word(i, "binary") {
            binary = true;
        } else if word(i, "insensitive") || word(i, "asensitive") {
        } else if word(i, "scroll") {
            scroll = Some(true);
        } else if word(i, "no") && word(i + 1, "scroll") {
            scroll = Some(false);
            i += 1;
        } else {
            break;
        }
        i += 1;
    }
    if !word(i, "cursor") {
        return Err(syntax_near(toks.get(i)));
    }
    i += 1;
    if word(i, "with") && word(i + 1, "hold") {
        hold = true;
        i += 2;
    } else if word(i, "without") && word(i + 1, "hold") {
        i += 2;
    }
    if !word(i, "for") {
        return Err(syntax_near(toks.get(i)));
    }
    let query = query_after_for(text)?;
    if binary {
        return Err(PgError::unsupported("DECLARE ... BINARY CURSOR"));
    }
    Ok(Utility::DeclareCursor {
        name,
        scroll,
        hold,
        query: query.0,
        query_offset: query.1,
    })
}

/// The query after DECLARE's `CURSOR ... FOR`, and its character offset in `text`.
fn query_after_for(text: &str) -> PgResult<(String, usize)> {
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::tokenizer::{Token, Tokenizer};
    let toks = Tokenizer::new(&PostgreSqlDialect {}, text)
        .tokenize_with_location()
        .map_err(|e| PgError::new(sqlstate::SYNTAX_ERROR, e.to_string()))?;
    let mut seen_cursor = false;
    for t in &toks {
        let Token::Word(w) = &t.token else { continue };
        if w.quote_style.is_some() {
            continue;
        }
        if w.value.eq_ignore_ascii_case("cursor") {
            seen_cursor = true;
        } else if seen_cursor && w.value.eq_ignore_ascii_case("for") {
            let at = crate::symmetric::offset(text, t.span.end);
            let q = text[at..].trim_end().trim_end_matches(';').to_string();
            return Ok((q, text[..at].chars().count()));
        }
    }
    Err(syntax_near(None))
}

/// `FETCH` (`is_move` false) or `MOVE`, after its first word.
pub(crate) fn parse_fetch(toks: &[Tok], is_move: bool) -> PgResult<Utility> {
    let mut i = 1;
    let word = |i: usize, w: &str| toks.get(i).is_some_and(|t| t.is_word(w));
    let count = |i: usize| -> Option<i64> {
        match toks.get(i) {
            Some(Tok::Num(n)) => n.parse().ok(),
            Some(Tok::Punct('-')) => match toks.get(i + 1) {
                Some(Tok::Num(n)) => n.parse::<i64>().ok().map(|v| -v),
                _ => None,
            },
            Some(Tok::Punct('+')) => match toks.get(i + 1) {
                Some(Tok::Num(n)) => n.parse().ok(),
                _ => None,
            },
            _ => None,
        }
    };
    let width = |i: usize| {
        if matches!(toks.get(i), Some(Tok::Punct(_))) {
            2
        } else {
            1
        }
    };
    let mut dir = Fetch::Forward(1);
    if word(i, "next") {
        i += 1;
    } else if word(i, "prior") {
        dir = Fetch::Backward(1);
        i += 1;
    } else if word(i, "first") {
        dir = Fetch::Absolute(1);
        i += 1;
    } else if word(i, "last") {
        dir = Fetch::Absolute(-1);
        i += 1;
    } else if word(i, "all") {
        dir = Fetch::Forward(Fetch::ALL);
        i += 1;
    } else if word(i, "absolute") || word(i, "relative") {
        let n = count(i + 1).ok_or_else(|| syntax_near(toks.get(i + 1)))?;
        dir = if word(i, "absolute") {
            Fetch::Absolute(n)
        } else {
            Fetch::Relative(n)
        };
        i += 1 + width(i + 1);
    } else if word(i, "forward") || word(i, "backward") {
        let back = word(i, "backward");
        i += 1;
        let n = if word(i, "all") {
            i += 1;
            Fetch::ALL
        } else if let Some(n) = count(i) {
            i += width(i);
            n
        } else {
            1
        };
        dir = if back {
            Fetch::Backward(n)
        } else {
            Fetch::Forward(n)
        };
    } else if let Some(n) = count(i) {
        dir = Fetch::Forward(n);
        i += width(i);
    }
    if word(i, "from") || word(i, "in") {
        i += 1;
    }
    let name = match toks.get(i) {
        Some(Tok::Word(w) | Tok::Quoted(w)) => w.clone(),
        t => return Err(syntax_near(t)),
    };
    if let Some(t) = toks.get(i + 1) {
        return Err(syntax_near(Some(t)));
    }
    Ok(Utility::Fetch { is_move, dir, name })
}

/// `CLOSE name | ALL`.
pub(crate) fn parse_close(toks: &[Tok]) -> PgResult<Utility> {
    let name = match toks.get(1) {
        Some(Tok::Word(w)) if w == "all" => None,
        Some(Tok::Word(w) | Tok::Quoted(w)) => Some(w.clone()),
        t => return Err(syntax_near(t)),
    };
    if let Some(t) = toks.get(2) {
        return Err(syntax_near(Some(t)));
    }
    Ok(Utility::CloseCursor(name))
}
