//! RAISE: level, message or condition, parameters, USING options.

use crate::ast::*;
use crate::conditions::condition_sqlstate;
use crate::error::PlSyntaxError;
use crate::parser::{PResult, Parser, Term, unrecognized_condition};
use crate::token::Tok;
use keel_common::{PgError, sqlstate};

impl Parser<'_> {
    pub(crate) fn raise_stmt(&mut self) -> PResult<Raise> {
        let raise_at = self.advance();
        let mut r = Raise {
            level: RaiseLevel::Exception,
            condition: None,
            message: None,
            params: Vec::new(),
            options: Vec::new(),
        };
        if self.at_end() {
            return Err(self.yyerror(self.pos, "unexpected end of function definition"));
        }
        if self.at_char(b';') {
            self.advance();
            return Ok(r);
        }
        let levels = [
            ("exception", RaiseLevel::Exception),
            ("warning", RaiseLevel::Warning),
            ("notice", RaiseLevel::Notice),
            ("info", RaiseLevel::Info),
            ("log", RaiseLevel::Log),
            ("debug", RaiseLevel::Debug),
        ];
        if let Some((_, level)) = levels.iter().find(|(k, _)| self.at_kw(k)) {
            r.level = *level;
            self.advance();
            if self.at_end() {
                return Err(self.yyerror(self.pos, "unexpected end of function definition"));
            }
        }
        // `end` is the index of the token that ended the message/condition part: `;`, USING
        // (both already consumed) or a token still to be judged.
        let mut end_consumed = false;
        if let Tok::Str(msg) = &self.peek().tok {
            r.message = Some(msg.clone());
            self.advance();
            if !(self.at_char(b',') || self.at_char(b';') || self.at_kw("using")) {
                return Err(self.syntax_error(self.pos));
            }
            while self.at_char(b',') {
                self.advance();
                let (e, end) = self.expr(
                    &[Term::Comma, Term::Semi, Term::Kw("using")],
                    ", or ; or USING",
                )?;
                r.params.push(e);
                // Step back onto the terminator so the checks below see it.
                self.pos = end;
            }
        } else if !self.at_kw("using") {
            if self.at_kw("sqlstate") {
                self.advance();
                r.condition = Some(RaiseCondition::SqlState(self.sqlstate_literal()?));
            } else if let Some(name) = self.name_at(self.pos) {
                if condition_sqlstate(&name).is_none() {
                    return Err(unrecognized_condition(&name, self.line_of_tok(self.pos)));
                }
                r.condition = Some(RaiseCondition::Name(name));
                self.advance();
            } else {
                return Err(self.syntax_error(self.pos));
            }
            if !(self.at_char(b';') || self.at_kw("using")) {
                return Err(self.syntax_error(self.pos));
            }
        }
        if self.at_char(b';') {
            self.advance();
            end_consumed = true;
        }
        if !end_consumed {
            // USING
            self.advance();
            self.raise_options(&mut r)?;
        }
        if let Some(msg) = &r.message {
            let expected = count_placeholders(msg);
            let line = self.line_of_tok(raise_at);
            let problem = if expected < r.params.len() {
                Some("too many parameters specified for RAISE")
            } else if expected > r.params.len() {
                Some("too few parameters specified for RAISE")
            } else {
                None
            };
            if let Some(p) = problem {
                return Err(PlSyntaxError::unplaced(
                    PgError::new(sqlstate::SYNTAX_ERROR, p),
                    line,
                ));
            }
        }
        Ok(r)
    }

    fn raise_options(&mut self, r: &mut Raise) -> PResult<()> {
        let kinds = [
            ("errcode", RaiseOptionKind::Errcode),
            ("message", RaiseOptionKind::Message),
            ("detail", RaiseOptionKind::Detail),
            ("hint", RaiseOptionKind::Hint),
            ("column", RaiseOptionKind::Column),
            ("constraint", RaiseOptionKind::Constraint),
            ("datatype", RaiseOptionKind::Datatype),
            ("table", RaiseOptionKind::Table),
            ("schema", RaiseOptionKind::Schema),
        ];
        loop {
            if self.at_end() {
                return Err(self.yyerror(self.pos, "unexpected end of function definition"));
            }
            let Some((_, kind)) = kinds.iter().find(|(k, _)| self.at_kw(k)) else {
                return Err(self.yyerror(self.pos, "unrecognized RAISE statement option"));
            };
            let kind = *kind;
            self.advance();
            if !(self.at_char(b'=') || self.peek().tok == Tok::ColonEquals) {
                return Err(self.yyerror(self.pos, "syntax error, expected \"=\""));
            }
            self.advance();
            let (e, end) = self.expr(&[Term::Comma, Term::Semi], ", or ;")?;
            r.options.push((kind, e));
            if self.tok(end).is_char(b';') {
                return Ok(());
            }
        }
    }
}

/// `%` placeholders in a RAISE format (`%%` is a literal percent sign).
fn count_placeholders(msg: &str) -> usize {
    let b = msg.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if b.get(i + 1) == Some(&b'%') {
                i += 1;
            } else {
                n += 1;
            }
        }
        i += 1;
    }
    n
}
