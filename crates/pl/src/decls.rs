//! The DECLARE section: variables, aliases and cursors, and how a declared type is read.

use crate::ast::*;
use crate::parser::{PResult, Parser, Term};
use crate::token::Tok;
use keel_common::sqlstate;

impl Parser<'_> {
    /// The DECLARE section, up to BEGIN.
    pub(crate) fn decls(&mut self, out: &mut Vec<Decl>) -> PResult<()> {
        loop {
            if self.at_kw("begin") {
                return Ok(());
            }
            if self.at_kw("declare") {
                self.advance();
                continue;
            }
            if self.peek().tok == Tok::LessLess {
                return Err(self.ereport(
                    self.pos,
                    sqlstate::SYNTAX_ERROR,
                    "block label must be placed before DECLARE, not after".into(),
                ));
            }
            let i = self.pos;
            let Some(name) = self.name_at(i) else {
                return Err(self.syntax_error(i));
            };
            let duplicate = out.iter().any(|d| match d {
                Decl::Var(v) => v.name == name,
                Decl::Alias { name: n, .. } => *n == name,
                Decl::Cursor(c) => c.name == name,
            });
            if duplicate {
                return Err(self.yyerror(i, "duplicate declaration"));
            }
            self.advance();
            let offset = self.tok(i).start;
            let line = self.line_at(offset);
            if self.at_kw("alias") {
                self.advance();
                self.expect_kw("for")?;
                let Some(target) = self.var_ref() else {
                    return Err(self.syntax_error(self.pos));
                };
                self.expect_char(b';')?;
                out.push(Decl::Alias {
                    name,
                    line,
                    offset,
                    target: target.names,
                });
            } else if self.at_kw("cursor") || self.at_kw("scroll") || self.at_kw("no") {
                out.push(Decl::Cursor(self.cursor_decl(name, line, offset)?));
            } else {
                out.push(Decl::Var(self.var_decl(name, line, offset)?));
            }
        }
    }

    fn var_decl(&mut self, name: String, line: u32, offset: usize) -> PResult<VarDecl> {
        let constant = self.at_kw("constant");
        if constant {
            self.advance();
        }
        let data_type = self.data_type()?;
        let mut collate = None;
        if self.at_kw("collate") {
            self.advance();
            let Some(v) = self.var_ref() else {
                return Err(self.syntax_error(self.pos));
            };
            collate = Some(v.names.join("."));
        }
        let mut not_null = false;
        let not_at = self.pos;
        if self.at_kw("not") {
            self.advance();
            self.expect_kw("null")?;
            not_null = true;
        }
        let mut default = None;
        if self.at_char(b';') {
            self.advance();
        } else if self.peek().tok == Tok::ColonEquals || self.at_char(b'=') || self.at_kw("default")
        {
            self.advance();
            let (e, _) = self.expr(&[Term::Semi], ";")?;
            default = Some(e);
        } else {
            return Err(self.syntax_error(self.pos));
        }
        if not_null && default.is_none() {
            return Err(self.ereport(
                not_at,
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                format!(
                    "variable \"{name}\" must have a default value, since it's declared NOT NULL"
                ),
            ));
        }
        Ok(VarDecl {
            name,
            line,
            offset,
            constant,
            data_type,
            collate,
            not_null,
            default,
        })
    }

    fn cursor_decl(&mut self, name: String, line: u32, offset: usize) -> PResult<CursorDecl> {
        let mut scroll = None;
        if self.at_kw("no") {
            self.advance();
            self.expect_kw("scroll")?;
            scroll = Some(false);
        } else if self.at_kw("scroll") {
            self.advance();
            scroll = Some(true);
        }
        self.expect_kw("cursor")?;
        let mut args = Vec::new();
        if self.at_char(b'(') {
            self.advance();
            loop {
                let Some(arg) = self.name_at(self.pos) else {
                    return Err(self.syntax_error(self.pos));
                };
                self.advance();
                args.push((arg, self.data_type()?));
                if self.at_char(b',') {
                    self.advance();
                    continue;
                }
                self.expect_char(b')')?;
                break;
            }
        }
        if self.at_kw("for") || self.at_kw("is") {
            self.advance();
        } else {
            return Err(self.syntax_error(self.pos));
        }
        let (query, _) = self.read_sql(&[Term::Semi], ";", false, false)?;
        Ok(CursorDecl {
            name,
            line,
            offset,
            scroll,
            args,
            query,
        })
    }

    /// A declared type (PostgreSQL's `read_datatype`): `name%TYPE`, `name%ROWTYPE`, or the
    /// tokens up to what may follow a type in a declaration.
    fn data_type(&mut self) -> PResult<DataType> {
        let start = self.pos;
        // name[.name...] % TYPE | ROWTYPE
        let mut i = start;
        let mut names = Vec::new();
        while let Tok::Ident { name, .. } = &self.tok(i).tok {
            names.push(name.clone());
            if self.tok(i + 1).is_char(b'.') {
                i += 2;
            } else {
                i += 1;
                break;
            }
        }
        if !names.is_empty() && self.tok(i).is_char(b'%') {
            let t = self.tok(i + 1);
            let kind = if t.is_kw("type") {
                Some(TypeKind::TypeOf(names))
            } else if t.is_kw("rowtype") {
                Some(TypeKind::RowTypeOf(names))
            } else {
                None
            };
            if let Some(kind) = kind {
                self.pos = i + 2;
                return Ok(DataType {
                    text: self.text(start, self.pos),
                    kind,
                });
            }
        }
        let mut depth = 0usize;
        loop {
            let t = self.peek();
            if t.is_char(b';') {
                break;
            }
            if matches!(t.tok, Tok::Eof | Tok::Error(_)) {
                let msg = if depth != 0 {
                    "mismatched parentheses"
                } else {
                    "incomplete data type declaration"
                };
                return Err(self.yyerror(self.pos, msg));
            }
            if t.is_kw("collate")
                || t.is_kw("not")
                || t.is_char(b'=')
                || t.tok == Tok::ColonEquals
                || t.is_kw("default")
            {
                break;
            }
            if depth == 0 && (t.is_char(b',') || t.is_char(b')')) {
                break;
            }
            if t.is_char(b'(') {
                depth += 1;
            } else if t.is_char(b')') {
                depth -= 1;
            }
            self.advance();
        }
        if self.pos == start {
            return Err(self.yyerror(self.pos, "missing data type declaration"));
        }
        Ok(DataType {
            text: self.text(start, self.pos),
            kind: TypeKind::Named,
        })
    }
}
