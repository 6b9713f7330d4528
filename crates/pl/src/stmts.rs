//! The statements, one parser each, following PostgreSQL 15's pl_gram.y rule by rule.

use crate::ast::*;
use crate::parser::{PResult, Parser, Term};
use crate::token::{Tok, is_reserved};
use keel_common::sqlstate;

/// Words that start a query in `FOR r IN <query>`; any other lone name there is a cursor.
const QUERY_WORDS: &[&str] = &[
    "select", "with", "values", "table", "explain", "show", "insert", "update", "delete", "merge",
    "fetch",
];

impl Parser<'_> {
    /// `target {:= | =} expr;`
    pub(crate) fn assignment(&mut self) -> PResult<StmtKind> {
        let start = self.pos;
        let t = self.peek();
        let name = match &t.tok {
            Tok::Ident { name, .. } => name.clone(),
            _ => self.src[t.start..t.end].to_string(),
        };
        self.advance();
        let mut path = Vec::new();
        loop {
            if self.at_char(b'.') {
                self.advance();
                if let Tok::Ident { name, .. } = &self.peek().tok {
                    path.push(TargetPart::Field(name.clone()));
                }
                self.advance();
            } else if self.at_char(b'[') {
                let open = self.advance();
                let close = self.subscript_end()?;
                path.push(TargetPart::Subscript(self.text(open + 1, close)));
                self.pos = close + 1;
            } else {
                break;
            }
        }
        let text = self.text(start, self.pos);
        // `:=` or `=`, known to be here.
        self.advance();
        let (expr, end) = self.read_sql(&[Term::Semi], ";", false, true)?;
        if !self.tok(end).is_char(b';') {
            return Err(self.syntax_error(end));
        }
        Ok(StmtKind::Assign {
            target: AssignTarget { name, path, text },
            expr,
        })
    }

    /// The index of the `]` closing the subscript that starts at `pos`. PostgreSQL reads the
    /// whole assignment as one construct, so an unclosed bracket is "mismatched parentheses".
    fn subscript_end(&self) -> PResult<usize> {
        let mut depth = 1usize;
        let mut i = self.pos;
        loop {
            let t = self.tok(i);
            if matches!(t.tok, Tok::Eof | Tok::Error(_)) || t.is_char(b';') {
                return Err(self.yyerror(i, "mismatched parentheses"));
            }
            if t.is_char(b'[') || t.is_char(b'(') {
                depth += 1;
            } else if t.is_char(b']') || t.is_char(b')') {
                depth -= 1;
                if depth == 0 {
                    return Ok(i);
                }
            }
            i += 1;
        }
    }

    pub(crate) fn if_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        let (cond, _) = self.expr(&[Term::Kw("then")], "THEN")?;
        let then_body = self.stmts()?;
        let mut elsifs = Vec::new();
        while self.at_kw("elsif") || self.at_kw("elseif") {
            let i = self.advance();
            let (cond, _) = self.expr(&[Term::Kw("then")], "THEN")?;
            let body = self.stmts()?;
            elsifs.push(ElsIf {
                line: self.line_of_tok(i),
                cond,
                body,
            });
        }
        let else_body = if self.at_kw("else") {
            self.advance();
            Some(self.stmts()?)
        } else {
            None
        };
        self.expect_kw("end")?;
        self.expect_kw("if")?;
        self.expect_char(b';')?;
        Ok(StmtKind::If {
            cond,
            then_body,
            elsifs,
            else_body,
        })
    }

    pub(crate) fn case_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        // A simple CASE's selector ends at the first WHEN, which it consumes.
        let mut pending_when = None;
        let expr = if self.at_kw("when") {
            None
        } else {
            let (e, end) = self.expr(&[Term::Kw("when")], "WHEN")?;
            pending_when = Some(end);
            Some(e)
        };
        let mut whens = Vec::new();
        loop {
            let when = match pending_when.take() {
                Some(i) => i,
                None if self.at_kw("when") => self.advance(),
                None if whens.is_empty() => return Err(self.syntax_error(self.pos)),
                None => break,
            };
            let (e, _) = self.expr(&[Term::Kw("then")], "THEN")?;
            let body = self.stmts()?;
            whens.push(CaseWhen {
                line: self.line_of_tok(when),
                expr: e,
                body,
            });
        }
        let else_body = if self.at_kw("else") {
            self.advance();
            Some(self.stmts()?)
        } else {
            None
        };
        self.expect_kw("end")?;
        self.expect_kw("case")?;
        self.expect_char(b';')?;
        Ok(StmtKind::Case {
            expr,
            whens,
            else_body,
        })
    }

    /// The loop variable(s) of FOR and FOREACH.
    fn for_targets(&mut self) -> PResult<Vec<VarRef>> {
        let mut out = Vec::new();
        loop {
            match self.var_ref() {
                Some(v) => out.push(v),
                None => return Err(self.syntax_error(self.pos)),
            }
            if !self.at_char(b',') {
                return Ok(out);
            }
            self.advance();
        }
    }

    pub(crate) fn for_stmt(&mut self, label: Option<String>) -> PResult<StmtKind> {
        self.advance();
        let first_target = self.pos;
        let targets = self.for_targets()?;
        self.expect_kw("in")?;
        if self.at_kw("execute") {
            self.advance();
            let (query, end) =
                self.expr(&[Term::Kw("loop"), Term::Kw("using")], "LOOP or USING")?;
            let params = if self.tok(end).is_kw("using") {
                self.using_list(&[Term::Kw("loop")], ", or LOOP")?.0
            } else {
                Vec::new()
            };
            let body = self.loop_body(&label)?;
            return Ok(StmtKind::ForExecute {
                label,
                targets,
                query,
                params,
                body,
            });
        }
        if let Some(cursor_end) = self.cursor_loop_ahead() {
            if targets.len() > 1 {
                return Err(self.ereport(
                    first_target,
                    sqlstate::SYNTAX_ERROR,
                    "cursor FOR loop must have only one target variable".into(),
                ));
            }
            let Some(cursor) = self.var_ref() else {
                return Err(self.syntax_error(self.pos));
            };
            let args = if self.at_char(b'(') {
                let open = self.advance();
                let text = self.text(open + 1, cursor_end - 1);
                self.pos = cursor_end;
                Some(text)
            } else {
                None
            };
            self.expect_kw("loop")?;
            let body = self.loop_body(&label)?;
            return Ok(StmtKind::ForCursor {
                label,
                var: targets[0].names.join("."),
                cursor,
                args,
                body,
            });
        }
        let reverse_at = self.pos;
        let reverse = self.at_kw("reverse");
        if reverse {
            self.advance();
        }
        let (first, end) = self.expr(&[Term::DotDot, Term::Kw("loop")], "LOOP")?;
        if self.tok(end).tok == Tok::DotDot {
            if targets.len() > 1 {
                return Err(self.ereport(
                    first_target,
                    sqlstate::SYNTAX_ERROR,
                    "integer FOR loop must have only one target variable".into(),
                ));
            }
            let (upper, end) = self.expr(&[Term::Kw("loop"), Term::Kw("by")], "LOOP")?;
            let step = if self.tok(end).is_kw("by") {
                Some(self.expr(&[Term::Kw("loop")], "LOOP")?.0)
            } else {
                None
            };
            let body = self.loop_body(&label)?;
            return Ok(StmtKind::ForInt {
                label,
                var: targets[0].names.join("."),
                var_offset: targets[0].offset,
                reverse,
                lower: first,
                upper,
                step,
                body,
            });
        }
        if reverse {
            return Err(self.ereport(
                reverse_at,
                sqlstate::SYNTAX_ERROR,
                "cannot specify REVERSE in query FOR loop".into(),
            ));
        }
        let body = self.loop_body(&label)?;
        Ok(StmtKind::ForQuery {
            label,
            targets,
            query: first,
            body,
        })
    }

    /// After `FOR x IN`: whether what follows is `cursor [(args)] LOOP`; if so, the index of
    /// the LOOP token.
    fn cursor_loop_ahead(&self) -> Option<usize> {
        let Tok::Ident { name, quoted } = &self.peek().tok else {
            return None;
        };
        if !*quoted && (is_reserved(name) || QUERY_WORDS.contains(&name.as_str())) {
            return None;
        }
        if *name == "reverse" && !*quoted {
            return None;
        }
        let mut i = self.pos + 1;
        if self.tok(i).is_char(b'(') {
            let mut depth = 0usize;
            loop {
                let t = self.tok(i);
                if matches!(t.tok, Tok::Eof | Tok::Error(_)) || t.is_char(b';') {
                    return None;
                }
                if t.is_char(b'(') {
                    depth += 1;
                } else if t.is_char(b')') {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                i += 1;
            }
            i += 1;
        }
        self.tok(i).is_kw("loop").then_some(i)
    }

    pub(crate) fn foreach_stmt(&mut self, label: Option<String>) -> PResult<StmtKind> {
        self.advance();
        let targets = self.for_targets()?;
        let mut slice = 0;
        if self.at_kw("slice") {
            self.advance();
            let t = self.peek();
            let text = &self.src[t.start..t.end];
            slice = match (&t.tok, text.parse::<i32>()) {
                (Tok::Number, Ok(n)) => n,
                _ => return Err(self.syntax_error(self.pos)),
            };
            self.advance();
        }
        self.expect_kw("in")?;
        self.expect_kw("array")?;
        let (array, _) = self.expr(&[Term::Kw("loop")], "LOOP")?;
        let body = self.loop_body(&label)?;
        Ok(StmtKind::Foreach {
            label,
            targets,
            slice,
            array,
            body,
        })
    }

    pub(crate) fn exit_stmt(&mut self) -> PResult<StmtKind> {
        let kw = self.advance();
        let is_exit = self.tok(kw).is_kw("exit");
        let label_at = self.pos;
        let label = self.name_at(self.pos);
        if label.is_some() {
            self.advance();
        }
        let cond = if self.at_kw("when") {
            self.advance();
            let (c, end) = self.expr(&[Term::Semi], ";")?;
            if !self.tok(end).is_char(b';') {
                return Err(self.syntax_error(end));
            }
            Some(c)
        } else {
            self.expect_char(b';')?;
            None
        };
        let what = if is_exit { "EXIT" } else { "CONTINUE" };
        match &label {
            Some(l) => {
                let found = self
                    .scopes
                    .iter()
                    .rev()
                    .find(|(name, _)| name.as_deref() == Some(l.as_str()));
                match found {
                    None => {
                        return Err(self.ereport(
                            label_at,
                            sqlstate::SYNTAX_ERROR,
                            format!("there is no label \"{l}\" attached to any block or loop enclosing this statement"),
                        ));
                    }
                    Some((_, false)) if !is_exit => {
                        return Err(self.ereport(
                            label_at,
                            sqlstate::SYNTAX_ERROR,
                            format!("block label \"{l}\" cannot be used in CONTINUE"),
                        ));
                    }
                    Some(_) => {}
                }
            }
            None if !self.scopes.iter().any(|(_, is_loop)| *is_loop) => {
                let msg = if is_exit {
                    format!("{what} cannot be used outside a loop, unless it has a label")
                } else {
                    format!("{what} cannot be used outside a loop")
                };
                return Err(self.ereport(kw, sqlstate::SYNTAX_ERROR, msg));
            }
            None => {}
        }
        Ok(StmtKind::Exit {
            is_exit,
            label,
            cond,
        })
    }

    /// An optional expression up to `;` (RETURN, RETURN NEXT).
    fn opt_expr_semi(&mut self) -> PResult<Option<SqlText>> {
        if self.at_char(b';') {
            self.advance();
            return Ok(None);
        }
        let (e, end) = self.expr(&[Term::Semi], ";")?;
        if !self.tok(end).is_char(b';') {
            return Err(self.syntax_error(end));
        }
        Ok(Some(e))
    }

    pub(crate) fn return_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        if self.at_end() {
            return Err(self.yyerror(self.pos, "unexpected end of function definition"));
        }
        if self.at_kw("next") {
            self.advance();
            return Ok(StmtKind::ReturnNext {
                expr: self.opt_expr_semi()?,
            });
        }
        if self.at_kw("query") {
            self.advance();
            if self.at_kw("execute") {
                self.advance();
                let (query, end) = self.expr(&[Term::Semi, Term::Kw("using")], "; or USING")?;
                let params = if self.tok(end).is_kw("using") {
                    self.using_list(&[Term::Semi], ", or ;")?.0
                } else {
                    Vec::new()
                };
                return Ok(StmtKind::ReturnQuery {
                    dynamic: true,
                    query,
                    params,
                });
            }
            let (query, end) = self.read_sql(&[Term::Semi], ";", false, false)?;
            if !self.tok(end).is_char(b';') {
                return Err(self.syntax_error(end));
            }
            return Ok(StmtKind::ReturnQuery {
                dynamic: false,
                query,
                params: Vec::new(),
            });
        }
        Ok(StmtKind::Return {
            expr: self.opt_expr_semi()?,
        })
    }

    pub(crate) fn assert_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        let (cond, end) = self.expr(&[Term::Comma, Term::Semi], ", or ;")?;
        let message = if self.tok(end).is_char(b',') {
            let (m, end) = self.expr(&[Term::Semi], ";")?;
            if !self.tok(end).is_char(b';') {
                return Err(self.syntax_error(end));
            }
            Some(m)
        } else {
            None
        };
        Ok(StmtKind::Assert { cond, message })
    }

    pub(crate) fn execute_stmt(&mut self) -> PResult<StmtKind> {
        self.advance();
        let (query, mut end) = self.expr(
            &[Term::Kw("into"), Term::Kw("using"), Term::Semi],
            "INTO or USING or ;",
        )?;
        let mut into = None;
        let mut params = Vec::new();
        loop {
            let t = self.tok(end);
            if t.is_kw("into") {
                if into.is_some() {
                    return Err(self.syntax_error(end));
                }
                into = Some(self.read_into(true)?);
                end = self.advance();
            } else if t.is_kw("using") {
                if !params.is_empty() {
                    return Err(self.syntax_error(end));
                }
                let (p, e) = self.using_list(&[Term::Semi, Term::Kw("into")], ", or ; or INTO")?;
                params = p;
                end = e;
            } else if t.is_char(b';') {
                break;
            } else {
                return Err(self.syntax_error(end));
            }
        }
        Ok(StmtKind::Execute {
            query,
            into,
            params,
        })
    }

    pub(crate) fn getdiag_stmt(&mut self) -> PResult<StmtKind> {
        let get = self.advance();
        let mut stacked = false;
        if self.at_kw("current") {
            self.advance();
        } else if self.at_kw("stacked") {
            self.advance();
            stacked = true;
        }
        self.expect_kw("diagnostics")?;
        let table = [
            ("row_count", DiagItem::RowCount),
            ("pg_context", DiagItem::PgContext),
            ("pg_exception_detail", DiagItem::PgExceptionDetail),
            ("pg_exception_hint", DiagItem::PgExceptionHint),
            ("pg_exception_context", DiagItem::PgExceptionContext),
            ("column_name", DiagItem::ColumnName),
            ("constraint_name", DiagItem::ConstraintName),
            ("pg_datatype_name", DiagItem::PgDatatypeName),
            ("message_text", DiagItem::MessageText),
            ("table_name", DiagItem::TableName),
            ("schema_name", DiagItem::SchemaName),
            ("returned_sqlstate", DiagItem::ReturnedSqlstate),
        ];
        let mut items = Vec::new();
        loop {
            let Some(target) = self.var_ref() else {
                return Err(self.syntax_error(self.pos));
            };
            if !(self.at_char(b'=') || self.peek().tok == Tok::ColonEquals) {
                return Err(self.syntax_error(self.pos));
            }
            self.advance();
            let Some((_, item)) = table.iter().find(|(k, _)| self.at_kw(k)) else {
                return Err(self.yyerror(self.pos, "unrecognized GET DIAGNOSTICS item"));
            };
            items.push((target, *item));
            self.advance();
            if self.at_char(b',') {
                self.advance();
                continue;
            }
            self.expect_char(b';')?;
            break;
        }
        for (_, item) in &items {
            let current_only = *item == DiagItem::RowCount;
            let stacked_only = !matches!(item, DiagItem::RowCount | DiagItem::PgContext);
            let area = if stacked && current_only {
                Some("STACKED")
            } else if !stacked && stacked_only {
                Some("CURRENT")
            } else {
                None
            };
            if let Some(area) = area {
                return Err(self.ereport(
                    get,
                    sqlstate::SYNTAX_ERROR,
                    format!(
                        "diagnostics item {} is not allowed in GET {area} DIAGNOSTICS",
                        item.name()
                    ),
                ));
            }
        }
        Ok(StmtKind::GetDiagnostics { stacked, items })
    }

    pub(crate) fn transaction_stmt(&mut self) -> PResult<StmtKind> {
        let kw = self.advance();
        let mut chain = false;
        if self.at_kw("and") {
            self.advance();
            if self.at_kw("no") {
                self.advance();
            } else {
                chain = true;
            }
            self.expect_kw("chain")?;
        }
        self.expect_char(b';')?;
        Ok(if self.tok(kw).is_kw("commit") {
            StmtKind::Commit { chain }
        } else {
            StmtKind::Rollback { chain }
        })
    }

    /// Any other SQL statement, up to `;` at parenthesis depth 0, with an `INTO` clause
    /// (not INSERT INTO / MERGE INTO / IMPORT ... INTO) taken out and blanked.
    pub(crate) fn sql_statement(&mut self) -> PResult<StmtKind> {
        let first = self.pos;
        let import = self.peek().is_kw("import");
        let create_routine = self.peek().is_kw("create") && {
            let mut i = first + 1;
            if self.tok(i).is_kw("or") && self.tok(i + 1).is_kw("replace") {
                i += 2;
            }
            self.tok(i).is_kw("function") || self.tok(i).is_kw("procedure")
        };
        let mut depth = 0usize;
        let mut begin_depth = 0usize;
        let mut into: Option<Into> = None;
        let mut blank: Option<(usize, usize)> = None;
        let mut prev: Option<usize> = None;
        loop {
            let i = self.pos;
            let t = self.tok(i);
            if t.is_char(b';') && depth == 0 && begin_depth == 0 {
                break;
            }
            if matches!(t.tok, Tok::Eof | Tok::Error(_)) {
                return Err(self.yyerror(i, "unexpected end of function definition"));
            }
            if t.is_char(b'(') || t.is_char(b'[') {
                depth += 1;
            } else if t.is_char(b')') || t.is_char(b']') {
                if depth == 0 {
                    return Err(self.syntax_error(i));
                }
                depth -= 1;
            } else if create_routine
                && ((t.is_kw("begin") && self.tok(i + 1).is_kw("atomic"))
                    || (begin_depth > 0 && t.is_kw("case")))
            {
                begin_depth += 1;
            } else if begin_depth > 0 && t.is_kw("end") {
                begin_depth -= 1;
            }
            let after_insert = prev.is_some_and(|p| {
                let p = self.tok(p);
                p.is_kw("insert") || p.is_kw("merge")
            });
            if t.is_kw("into") && !after_insert && !import {
                if into.is_some() {
                    return Err(self.yyerror(i, "INTO specified more than once"));
                }
                let into_start = t.start;
                self.advance();
                into = Some(self.read_into(true)?);
                blank = Some((into_start, self.peek().start));
                prev = Some(self.pos - 1);
                continue;
            }
            prev = Some(i);
            self.advance();
        }
        let end = self.pos;
        self.advance();
        let mut sql = self.text(first, end);
        if let Some((from, to)) = blank {
            let rel_from = from - sql.offset;
            let rel_to = (to - sql.offset).min(sql.text.len());
            if rel_from <= rel_to {
                sql.text
                    .replace_range(rel_from..rel_to, &" ".repeat(rel_to - rel_from));
            }
            sql.text.truncate(sql.text.trim_end().len());
        }
        Ok(StmtKind::Sql { sql, into })
    }
}
