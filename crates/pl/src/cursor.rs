//! OPEN, FETCH and MOVE, and the arguments of a bound cursor's OPEN.

use crate::ast::*;
use crate::parser::{PResult, Parser, Term};
use keel_common::sqlstate;

impl Parser<'_> {
    pub(crate) fn open_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        let Some(cursor) = self.var_ref() else {
            return Err(self.syntax_error(self.pos));
        };
        let mut scroll = None;
        if self.at_kw("no") {
            self.advance();
            self.expect_kw("scroll")?;
            scroll = Some(false);
        } else if self.at_kw("scroll") {
            self.advance();
            scroll = Some(true);
        }
        if scroll.is_some() || self.at_kw("for") {
            self.expect_kw("for")?;
            if self.at_kw("execute") {
                self.advance();
                let (query, end) = self.expr(&[Term::Kw("using"), Term::Semi], "USING or ;")?;
                let params = if self.tok(end).is_kw("using") {
                    self.using_list(&[Term::Semi], ", or ;")?.0
                } else {
                    Vec::new()
                };
                return Ok(StmtKind::Open {
                    cursor,
                    source: OpenSource::Execute {
                        scroll,
                        query,
                        params,
                    },
                });
            }
            let (query, end) = self.read_sql(&[Term::Semi], ";", false, false)?;
            if !self.tok(end).is_char(b';') {
                return Err(self.syntax_error(end));
            }
            return Ok(StmtKind::Open {
                cursor,
                source: OpenSource::Query { scroll, query },
            });
        }
        let mut args = None;
        if self.at_char(b'(') {
            self.advance();
            let (a, _) = self.expr(&[Term::Char(b')')], ")")?;
            args = Some(a);
        }
        self.expect_char(b';')?;
        Ok(StmtKind::Open {
            cursor,
            source: OpenSource::Bound { args },
        })
    }

    pub(crate) fn fetch_stmt(&mut self) -> PResult<StmtKind> {
        let kw = self.advance();
        let is_move = self.tok(kw).is_kw("move");
        if self.at_end() {
            return Err(self.yyerror(self.pos, "unexpected end of function definition"));
        }
        let from_in = [Term::Kw("from"), Term::Kw("in")];
        let mut check_from = true;
        let direction = if self.at_kw("next") {
            self.advance();
            FetchDirection::Next
        } else if self.at_kw("prior") {
            self.advance();
            FetchDirection::Prior
        } else if self.at_kw("first") {
            self.advance();
            FetchDirection::First
        } else if self.at_kw("last") {
            self.advance();
            FetchDirection::Last
        } else if self.at_kw("absolute") || self.at_kw("relative") {
            let abs = self.at_kw("absolute");
            self.advance();
            check_from = false;
            let (e, _) = self.expr(&from_in, "FROM or IN")?;
            if abs {
                FetchDirection::Absolute(e)
            } else {
                FetchDirection::Relative(e)
            }
        } else if self.at_kw("all") {
            self.advance();
            FetchDirection::All
        } else if self.at_kw("forward") || self.at_kw("backward") {
            let fwd = self.at_kw("forward");
            self.advance();
            if self.at_kw("from") || self.at_kw("in") {
                self.advance();
                check_from = false;
                if fwd {
                    FetchDirection::Forward(None)
                } else {
                    FetchDirection::Backward(None)
                }
            } else if self.at_kw("all") {
                self.advance();
                if fwd {
                    FetchDirection::ForwardAll
                } else {
                    FetchDirection::BackwardAll
                }
            } else {
                check_from = false;
                let (e, _) = self.expr(&from_in, "FROM or IN")?;
                if fwd {
                    FetchDirection::Forward(Some(e))
                } else {
                    FetchDirection::Backward(Some(e))
                }
            }
        } else if self.at_kw("from") || self.at_kw("in") {
            self.advance();
            check_from = false;
            FetchDirection::Next
        } else if self.name_at(self.pos).is_some()
            && (self.tok(self.pos + 1).is_kw("into") || self.tok(self.pos + 1).is_char(b';'))
        {
            check_from = false;
            FetchDirection::Next
        } else {
            check_from = false;
            let (e, _) = self.expr(&from_in, "FROM or IN")?;
            FetchDirection::Count(e)
        };
        if check_from {
            if self.at_kw("from") || self.at_kw("in") {
                self.advance();
            } else {
                return Err(self.yyerror(self.pos, "expected FROM or IN"));
            }
        }
        let Some(cursor) = self.var_ref() else {
            return Err(self.syntax_error(self.pos));
        };
        let mut into = None;
        if !is_move {
            self.expect_kw("into")?;
            into = Some(self.read_into(false)?);
            let multi = matches!(
                direction,
                FetchDirection::All
                    | FetchDirection::ForwardAll
                    | FetchDirection::BackwardAll
                    | FetchDirection::Count(_)
                    | FetchDirection::Forward(Some(_))
                    | FetchDirection::Backward(Some(_))
            );
            if multi {
                return Err(self.ereport(
                    kw,
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "FETCH statement cannot return multiple rows".into(),
                ));
            }
        }
        self.expect_char(b';')?;
        Ok(StmtKind::Fetch {
            is_move,
            direction,
            cursor,
            into,
        })
    }
}

/// A bound cursor's OPEN arguments in its parameters' order, whether given by position (the
/// i-th argument is the i-th parameter) or as `name := value` / `name => value`. An error
/// comes with the byte offset in `text` PostgreSQL points at: the argument at fault, or the
/// end for too few.
pub fn cursor_arguments(
    text: &str,
    cursor: &str,
    decl: &CursorDecl,
) -> Result<Vec<String>, (keel_common::PgError, usize)> {
    let syntax = |m: String, at: usize| (keel_common::PgError::new(sqlstate::SYNTAX_ERROR, m), at);
    let mut slots: Vec<Option<String>> = vec![None; decl.args.len()];
    for (i, (at, item)) in split_arguments(text).into_iter().enumerate() {
        let (name, value) = named_argument(&item);
        let slot = match name {
            Some(n) => decl.args.iter().position(|(a, _)| *a == n).ok_or_else(|| {
                syntax(
                    format!("cursor \"{cursor}\" has no argument named \"{n}\""),
                    at,
                )
            })?,
            None => i,
        };
        if slot >= slots.len() {
            return Err(syntax(
                format!("too many arguments for cursor \"{cursor}\""),
                at,
            ));
        }
        if slots[slot].is_some() {
            return Err(syntax(
                format!(
                    "value for parameter \"{}\" of cursor \"{cursor}\" specified more than once",
                    decl.args[slot].0
                ),
                at,
            ));
        }
        slots[slot] = Some(value.trim().to_string());
    }
    slots
        .into_iter()
        .map(|v| {
            v.ok_or_else(|| {
                syntax(
                    format!("not enough arguments for cursor \"{cursor}\""),
                    text.len(),
                )
            })
        })
        .collect()
}

/// `text` cut at the commas outside parentheses, brackets and quotes, without its `--`
/// comments: each piece with the byte offset of its first non-blank character.
fn split_arguments(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut start = None;
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if quote.is_none() && c == '-' && chars.peek().is_some_and(|&(_, n)| n == '-') {
            for (_, c) in chars.by_ref() {
                if c == '\n' {
                    break;
                }
            }
            cur.push(' ');
            continue;
        }
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '\'' | '"' => quote = Some(c),
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                ',' if depth == 0 => {
                    out.push((start.take().unwrap_or(i), std::mem::take(&mut cur)));
                    continue;
                }
                _ => {}
            },
        }
        if start.is_none() && !c.is_whitespace() {
            start = Some(i);
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() || !out.is_empty() {
        out.push((start.unwrap_or(text.len()), cur));
    }
    out
}

/// `name := value` or `name => value` as (Some(name), value); anything else positional.
fn named_argument(item: &str) -> (Option<String>, &str) {
    let t = item.trim_start();
    let end = t
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(t.len());
    if end > 0 {
        let rest = t[end..].trim_start();
        for arrow in [":=", "=>"] {
            if let Some(v) = rest.strip_prefix(arrow) {
                return (Some(t[..end].to_lowercase()), v);
            }
        }
    }
    (None, item)
}
