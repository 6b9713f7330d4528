//! The recursive-descent parser: blocks, declarations, statement dispatch, and the reader
//! that cuts embedded SQL out of the body (PostgreSQL's `read_sql_construct`).

use crate::ast::*;
use crate::conditions::{Condition, condition_sqlstates, is_valid_sqlstate};
use crate::error::PlSyntaxError;
use crate::token::{Tok, Token, is_reserved, lex_error, tokenize};
use keel_common::{PgError, sqlstate};

/// Boxed: the error is large and the happy path should not pay for moving it around.
pub(crate) type PResult<T> = Result<T, Box<PlSyntaxError>>;

/// Nesting beyond this many blocks/statements fails as PostgreSQL's parser stack does
/// ("memory exhausted"), whatever the thread's stack would allow.
const MAX_NESTING: usize = 5000;

/// PL/pgSQL's unreserved keywords: names a variable may take, but that cannot start a SQL
/// statement (a statement starting with one that is not a PL/pgSQL statement is an error).
const UNRESERVED: &[&str] = &[
    "absolute",
    "alias",
    "and",
    "array",
    "assert",
    "backward",
    "call",
    "chain",
    "close",
    "collate",
    "column",
    "column_name",
    "commit",
    "constant",
    "constraint",
    "constraint_name",
    "continue",
    "current",
    "cursor",
    "datatype",
    "debug",
    "default",
    "detail",
    "diagnostics",
    "do",
    "dump",
    "elseif",
    "elsif",
    "errcode",
    "error",
    "exception",
    "exit",
    "fetch",
    "first",
    "forward",
    "get",
    "hint",
    "import",
    "info",
    "insert",
    "is",
    "last",
    "log",
    "merge",
    "message",
    "message_text",
    "move",
    "next",
    "no",
    "notice",
    "open",
    "option",
    "perform",
    "pg_context",
    "pg_datatype_name",
    "pg_exception_context",
    "pg_exception_detail",
    "pg_exception_hint",
    "print_strict_params",
    "prior",
    "query",
    "raise",
    "relative",
    "return",
    "returned_sqlstate",
    "reverse",
    "rollback",
    "row_count",
    "rowtype",
    "schema",
    "schema_name",
    "scroll",
    "slice",
    "sqlstate",
    "stacked",
    "table",
    "table_name",
    "type",
    "use_column",
    "use_variable",
    "variable_conflict",
    "warning",
];

/// A token that ends a piece of embedded SQL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Term {
    Semi,
    Comma,
    DotDot,
    Char(u8),
    Kw(&'static str),
}

pub(crate) struct Parser<'a> {
    pub src: &'a str,
    pub toks: Vec<Token>,
    pub pos: usize,
    line_starts: Vec<usize>,
    /// Labels of the enclosing blocks and loops, innermost last: (label, is_loop).
    pub scopes: Vec<(Option<String>, bool)>,
    depth: usize,
}

impl<'a> Parser<'a> {
    pub fn new(src: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(
            src.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Parser {
            src,
            toks: tokenize(src),
            pos: 0,
            line_starts,
            scopes: Vec::new(),
            depth: 0,
        }
    }

    // ---- tokens ---------------------------------------------------------------------------

    pub fn peek(&self) -> &Token {
        self.tok(self.pos)
    }

    pub fn tok(&self, i: usize) -> &Token {
        // The list always ends with Eof; indexes past it read as that Eof.
        let last = self.toks.len() - 1;
        &self.toks[i.min(last)]
    }

    pub fn advance(&mut self) -> usize {
        let i = self.pos;
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        i
    }

    pub fn at_kw(&self, kw: &str) -> bool {
        self.peek().is_kw(kw)
    }

    pub fn at_char(&self, c: u8) -> bool {
        self.peek().is_char(c)
    }

    pub fn at_end(&self) -> bool {
        matches!(self.peek().tok, Tok::Eof | Tok::Error(_))
    }

    pub fn line_at(&self, offset: usize) -> u32 {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i as u32 + 1,
            Err(i) => i as u32,
        }
    }

    pub fn line_of_tok(&self, i: usize) -> u32 {
        self.line_at(self.tok(i).start)
    }

    /// The text of tokens `from..to`, from the first token's start to the last one's end.
    pub fn text(&self, from: usize, to: usize) -> SqlText {
        let start = self.tok(from).start;
        let end = if to > from {
            self.tok(to - 1).end
        } else {
            start
        };
        SqlText {
            text: self.src[start..end].to_string(),
            offset: start,
            line: self.line_at(start),
        }
    }

    // ---- errors ---------------------------------------------------------------------------

    /// PostgreSQL's `yyerror(msg)` at token `i`.
    pub fn yyerror(&self, i: usize, msg: &str) -> Box<PlSyntaxError> {
        let t = self.tok(i);
        match &t.tok {
            Tok::Error(m) => lex_error(self.src, t, m),
            Tok::Eof => PlSyntaxError::near(self.src, t.start, "", msg),
            _ => PlSyntaxError::near(self.src, t.start, &self.src[t.start..t.end], msg),
        }
    }

    pub fn syntax_error(&self, i: usize) -> Box<PlSyntaxError> {
        self.yyerror(i, "syntax error")
    }

    /// An `ereport` with a cursor position at token `i`.
    pub fn ereport(&self, i: usize, code: &'static str, msg: String) -> Box<PlSyntaxError> {
        let t = self.tok(i);
        match &t.tok {
            Tok::Error(m) => lex_error(self.src, t, m),
            _ => PlSyntaxError::at(self.src, t.start, PgError::new(code, msg)),
        }
    }

    pub fn expect_kw(&mut self, kw: &str) -> PResult<usize> {
        if self.at_kw(kw) {
            Ok(self.advance())
        } else {
            Err(self.syntax_error(self.pos))
        }
    }

    pub fn expect_char(&mut self, c: u8) -> PResult<usize> {
        if self.at_char(c) {
            Ok(self.advance())
        } else {
            Err(self.syntax_error(self.pos))
        }
    }

    // ---- names ----------------------------------------------------------------------------

    /// An identifier usable as a name here: quoted, or unquoted and not reserved.
    pub fn name_at(&self, i: usize) -> Option<String> {
        match &self.tok(i).tok {
            Tok::Ident { name, quoted: true } => Some(name.clone()),
            Tok::Ident {
                name,
                quoted: false,
            } if !is_reserved(name) => Some(name.clone()),
            _ => None,
        }
    }

    /// A variable reference: `name[.name...]` or `$n`, or `None` (nothing consumed).
    pub fn var_ref(&mut self) -> Option<VarRef> {
        let offset = self.peek().start;
        let first = if self.peek().tok == Tok::Param {
            let t = self.peek();
            self.src[t.start..t.end].to_string()
        } else {
            self.name_at(self.pos)?
        };
        self.advance();
        let mut names = vec![first];
        while self.at_char(b'.') {
            match &self.tok(self.pos + 1).tok {
                Tok::Ident { name, .. } => {
                    names.push(name.clone());
                    self.advance();
                    self.advance();
                }
                _ => break,
            }
        }
        Some(VarRef { names, offset })
    }

    /// `INTO`'s target list, after INTO: `[STRICT] ref [, ref ...]` (`strict_ok` false for
    /// FETCH, which takes no STRICT).
    pub fn read_into(&mut self, strict_ok: bool) -> PResult<Into> {
        let strict = strict_ok && self.at_kw("strict");
        if strict {
            self.advance();
        }
        let mut targets = Vec::new();
        loop {
            match self.var_ref() {
                Some(v) => targets.push(v),
                None => return Err(self.syntax_error(self.pos)),
            }
            if !self.at_char(b',') {
                break;
            }
            self.advance();
        }
        Ok(Into { strict, targets })
    }

    // ---- embedded SQL ---------------------------------------------------------------------

    fn term_matches(&self, i: usize, terms: &[Term]) -> bool {
        let t = self.tok(i);
        terms.iter().any(|term| match term {
            Term::Semi => t.is_char(b';'),
            Term::Comma => t.is_char(b','),
            Term::DotDot => t.tok == Tok::DotDot,
            Term::Char(c) => t.is_char(*c),
            Term::Kw(k) => t.is_kw(k),
        })
    }

    /// Reads embedded SQL up to one of `terms` at parenthesis depth 0 and consumes the
    /// terminator. Returns the text and the terminator's token index.
    ///
    /// As in PostgreSQL, the end of the body also ends the text when fewer than three
    /// terminators are given (the caller then fails on what it expected next); otherwise it is
    /// `missing "<expected>" at end of SQL expression|statement`. Empty text is `missing
    /// expression` / `missing SQL statement` unless `allow_empty`.
    pub fn read_sql(
        &mut self,
        terms: &[Term],
        expected: &str,
        is_expr: bool,
        allow_empty: bool,
    ) -> PResult<(SqlText, usize)> {
        let start = self.pos;
        let eof_ends = terms.len() < 3;
        let mut depth = 0usize;
        loop {
            let i = self.pos;
            let t = self.tok(i);
            let end = matches!(t.tok, Tok::Eof | Tok::Error(_));
            if depth == 0 && (self.term_matches(i, terms) || (end && eof_ends)) {
                break;
            }
            if t.is_char(b'(') || t.is_char(b'[') {
                depth += 1;
            } else if t.is_char(b')') || t.is_char(b']') {
                if depth == 0 {
                    return Err(self.yyerror(i, "mismatched parentheses"));
                }
                depth -= 1;
            }
            if end || t.is_char(b';') {
                if depth != 0 {
                    return Err(self.yyerror(i, "mismatched parentheses"));
                }
                let what = if is_expr { "expression" } else { "statement" };
                return Err(self.ereport(
                    i,
                    sqlstate::SYNTAX_ERROR,
                    format!("missing \"{expected}\" at end of SQL {what}"),
                ));
            }
            self.advance();
        }
        let end = self.pos;
        if end == start && !allow_empty {
            let msg = if is_expr {
                "missing expression"
            } else {
                "missing SQL statement"
            };
            return Err(self.yyerror(end, msg));
        }
        let text = self.text(start, end);
        if !self.at_end() {
            self.advance();
        }
        Ok((text, end))
    }

    /// An expression up to `terms` (which must not be empty).
    pub fn expr(&mut self, terms: &[Term], expected: &str) -> PResult<(SqlText, usize)> {
        self.read_sql(terms, expected, true, false)
    }

    /// Comma-separated expressions after USING, up to one of `ends`.
    pub fn using_list(&mut self, ends: &[Term], expected: &str) -> PResult<(Vec<SqlText>, usize)> {
        let mut params = Vec::new();
        let mut terms = vec![Term::Comma];
        terms.extend_from_slice(ends);
        loop {
            let (e, end) = self.expr(&terms, expected)?;
            params.push(e);
            if !self.tok(end).is_char(b',') {
                return Ok((params, end));
            }
        }
    }

    // ---- structure ------------------------------------------------------------------------

    /// Guards one level of nesting against stack overflow.
    pub fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.yyerror(self.pos, "memory exhausted"));
        }
        let line = self.line_of_tok(self.pos);
        keel_common::stack::check().map_err(|e| PlSyntaxError::unplaced(e, line))
    }

    pub fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// `<<label>>`, if present.
    pub fn opt_label(&mut self) -> PResult<Option<String>> {
        if self.peek().tok != Tok::LessLess {
            return Ok(None);
        }
        self.advance();
        let Some(name) = self.name_at(self.pos) else {
            return Err(self.syntax_error(self.pos));
        };
        self.advance();
        if self.peek().tok != Tok::GreaterGreater {
            return Err(self.syntax_error(self.pos));
        }
        self.advance();
        Ok(Some(name))
    }

    /// The optional label after END / END LOOP, checked against the opening label.
    pub fn end_label(&mut self, label: &Option<String>) -> PResult<()> {
        let Some(end) = self.name_at(self.pos) else {
            return Ok(());
        };
        let i = self.advance();
        match label {
            None => Err(self.ereport(
                i,
                sqlstate::SYNTAX_ERROR,
                format!("end label \"{end}\" specified for unlabeled block"),
            )),
            Some(l) if *l != end => Err(self.ereport(
                i,
                sqlstate::SYNTAX_ERROR,
                format!("end label \"{end}\" differs from block's label \"{l}\""),
            )),
            Some(_) => Ok(()),
        }
    }

    /// `#option dump`, `#print_strict_params on|off`, `#variable_conflict ...`.
    pub fn compile_options(&mut self) -> PResult<CompileOptions> {
        let mut o = CompileOptions::default();
        while self.at_char(b'#') {
            self.advance();
            if self.at_kw("option") {
                self.advance();
                self.expect_kw("dump")?;
                o.dump = true;
            } else if self.at_kw("print_strict_params") {
                self.advance();
                o.print_strict_params = Some(if self.at_kw("on") {
                    true
                } else if self.at_kw("off") {
                    false
                } else {
                    return Err(self.syntax_error(self.pos));
                });
                self.advance();
            } else if self.at_kw("variable_conflict") {
                self.advance();
                o.variable_conflict = Some(if self.at_kw("error") {
                    VariableConflict::Error
                } else if self.at_kw("use_variable") {
                    VariableConflict::UseVariable
                } else if self.at_kw("use_column") {
                    VariableConflict::UseColumn
                } else {
                    return Err(self.syntax_error(self.pos));
                });
                self.advance();
            } else {
                return Err(self.syntax_error(self.pos));
            }
        }
        Ok(o)
    }

    /// `[DECLARE ...] BEGIN ... [EXCEPTION ...] END [label]` (the label already read).
    pub fn block(&mut self, label: Option<String>) -> PResult<Block> {
        self.enter()?;
        let mut decls = Vec::new();
        if self.at_kw("declare") {
            self.advance();
            self.decls(&mut decls)?;
        }
        let begin = self.expect_kw("begin")?;
        let line = self.line_of_tok(begin);
        self.scopes.push((label.clone(), false));
        let body = self.stmts()?;
        let mut exceptions = None;
        if self.at_kw("exception") {
            self.advance();
            exceptions = Some(self.handlers()?);
        }
        self.expect_kw("end")?;
        self.end_label(&label)?;
        self.scopes.pop();
        self.leave();
        Ok(Block {
            label,
            line,
            decls,
            body,
            exceptions,
        })
    }

    fn handlers(&mut self) -> PResult<Vec<ExceptionHandler>> {
        let mut out = Vec::new();
        while self.at_kw("when") || out.is_empty() {
            let when = self.expect_kw("when")?;
            let mut conditions = Vec::new();
            loop {
                conditions.push(self.condition()?);
                if !self.at_kw("or") {
                    break;
                }
                self.advance();
            }
            self.expect_kw("then")?;
            let body = self.stmts()?;
            out.push(ExceptionHandler {
                line: self.line_of_tok(when),
                conditions,
                body,
            });
        }
        Ok(out)
    }

    fn condition(&mut self) -> PResult<Condition> {
        let Some(name) = self.name_at(self.pos) else {
            return Err(self.syntax_error(self.pos));
        };
        let i = self.advance();
        if name == "sqlstate" && !matches!(self.tok(i).tok, Tok::Ident { quoted: true, .. }) {
            let code = self.sqlstate_literal()?;
            return Ok(Condition::SqlState(code));
        }
        if name == "others" {
            return Ok(Condition::Others);
        }
        if condition_sqlstates(&name).is_empty() {
            return Err(unrecognized_condition(&name, self.line_of_tok(i)));
        }
        Ok(Condition::Name(name))
    }

    /// The `'xxxxx'` after SQLSTATE.
    pub fn sqlstate_literal(&mut self) -> PResult<String> {
        let i = self.pos;
        let Tok::Str(code) = &self.peek().tok else {
            return Err(self.syntax_error(i));
        };
        if !is_valid_sqlstate(code) {
            return Err(self.yyerror(i, "invalid SQLSTATE code"));
        }
        let code = code.clone();
        self.advance();
        Ok(code)
    }

    /// Statements up to END, ELSE, ELSIF, WHEN, EXCEPTION or the end of the body.
    pub fn stmts(&mut self) -> PResult<Vec<Stmt>> {
        let mut out = Vec::new();
        loop {
            if self.at_end() {
                return Ok(out);
            }
            let stop = ["end", "else", "elsif", "elseif", "when", "exception"]
                .iter()
                .any(|k| self.at_kw(k));
            if stop && !self.assignment_ahead() {
                return Ok(out);
            }
            out.push(self.stmt()?);
        }
    }

    /// Whether the tokens at `pos` are `name[.f | [i]]... :=` or `=`: an assignment.
    pub fn assignment_ahead(&self) -> bool {
        let mut i = self.pos;
        match &self.tok(i).tok {
            Tok::Param => {}
            Tok::Ident { name, quoted } if *quoted || !is_reserved(name) => {}
            _ => return false,
        }
        i += 1;
        loop {
            let t = self.tok(i);
            if t.is_char(b'.') && matches!(self.tok(i + 1).tok, Tok::Ident { .. }) {
                i += 2;
            } else if t.is_char(b'[') {
                // As PostgreSQL's scanner: a name followed by `[` starts an assignment.
                if i == self.pos + 1 {
                    return true;
                }
                let mut depth = 0usize;
                loop {
                    let t = self.tok(i);
                    if matches!(t.tok, Tok::Eof | Tok::Error(_)) || t.is_char(b';') {
                        return false;
                    }
                    if t.is_char(b'[') || t.is_char(b'(') {
                        depth += 1;
                    } else if t.is_char(b']') || t.is_char(b')') {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            break;
                        }
                    }
                    i += 1;
                }
                i += 1;
            } else {
                return t.tok == Tok::ColonEquals || t.is_char(b'=');
            }
        }
    }

    /// One statement.
    fn stmt(&mut self) -> PResult<Stmt> {
        self.enter()?;
        let r = self.stmt_inner();
        self.leave();
        r
    }

    fn stmt_inner(&mut self) -> PResult<Stmt> {
        if self.peek().tok == Tok::LessLess {
            let label = self.opt_label()?;
            return self.labelled(label);
        }
        let i = self.pos;
        let offset = self.peek().start;
        let line = self.line_at(offset);
        if self.assignment_ahead() {
            let kind = self.assignment()?;
            return Ok(Stmt { line, offset, kind });
        }
        let word = match &self.peek().tok {
            Tok::Ident {
                name,
                quoted: false,
            } => name.clone(),
            Tok::Ident { quoted: true, .. } => {
                let kind = self.sql_statement()?;
                return Ok(Stmt { line, offset, kind });
            }
            _ => return Err(self.syntax_error(i)),
        };
        let kind = match word.as_str() {
            "begin" | "declare" | "loop" | "while" | "for" | "foreach" => {
                return self.labelled(None);
            }
            "if" => self.if_stmt()?,
            "case" => self.case_stmt()?,
            "exit" | "continue" => self.exit_stmt()?,
            "return" => self.return_stmt()?,
            "raise" => StmtKind::Raise(self.raise_stmt()?),
            "assert" => self.assert_stmt()?,
            "execute" => self.execute_stmt()?,
            "perform" => {
                self.advance();
                let (query, _) = self.read_sql(&[Term::Semi], ";", false, true)?;
                StmtKind::Perform { query }
            }
            "get" => self.getdiag_stmt()?,
            "open" => self.open_stmt()?,
            "fetch" | "move" => self.fetch_stmt()?,
            "close" => {
                self.advance();
                let Some(cursor) = self.var_ref() else {
                    return Err(self.syntax_error(self.pos));
                };
                self.expect_char(b';')?;
                StmtKind::Close { cursor }
            }
            "null" => {
                self.advance();
                self.expect_char(b';')?;
                StmtKind::Null
            }
            "commit" | "rollback" => self.transaction_stmt()?,
            "call" | "do" => {
                let (sql, _) = self.read_sql(&[Term::Semi], ";", false, false)?;
                StmtKind::Call {
                    is_call: word == "call",
                    sql,
                }
            }
            "import" | "insert" | "merge" => self.sql_statement()?,
            w if is_reserved(w) || UNRESERVED.contains(&w) => {
                return Err(self.syntax_error(i));
            }
            _ => self.sql_statement()?,
        };
        Ok(Stmt { line, offset, kind })
    }

    /// A block or loop, after its optional label.
    fn labelled(&mut self, label: Option<String>) -> PResult<Stmt> {
        let i = self.pos;
        let offset = self.peek().start;
        let line = self.line_at(offset);
        let kind = if self.at_kw("begin") || self.at_kw("declare") {
            let b = self.block(label)?;
            self.expect_char(b';')?;
            // A block's line is its BEGIN's.
            return Ok(Stmt {
                line: b.line,
                offset,
                kind: StmtKind::Block(b),
            });
        } else if self.at_kw("loop") {
            self.advance();
            let body = self.loop_body(&label)?;
            StmtKind::Loop { label, body }
        } else if self.at_kw("while") {
            self.advance();
            let (cond, _) = self.expr(&[Term::Kw("loop")], "LOOP")?;
            let body = self.loop_body(&label)?;
            StmtKind::While { label, cond, body }
        } else if self.at_kw("for") {
            self.for_stmt(label)?
        } else if self.at_kw("foreach") {
            self.foreach_stmt(label)?
        } else {
            return Err(self.syntax_error(i));
        };
        Ok(Stmt { line, offset, kind })
    }

    /// `stmts END LOOP [label];`, with the loop's label in scope.
    pub fn loop_body(&mut self, label: &Option<String>) -> PResult<Vec<Stmt>> {
        self.scopes.push((label.clone(), true));
        let body = self.stmts()?;
        self.expect_kw("end")?;
        self.expect_kw("loop")?;
        self.end_label(label)?;
        self.expect_char(b';')?;
        self.scopes.pop();
        Ok(body)
    }
}

pub(crate) fn unrecognized_condition(name: &str, line: u32) -> Box<PlSyntaxError> {
    PlSyntaxError::unplaced(
        PgError::new(
            sqlstate::UNDEFINED_OBJECT,
            format!("unrecognized exception condition \"{name}\""),
        ),
        line,
    )
}
