//! The compile-time checks of a PL/pgSQL body that need the SQL grammar or the function's
//! result, made when CREATE FUNCTION stores the body and before a DO block runs (PostgreSQL's
//! `check_function_bodies`, on by default):
//!
//! - every embedded expression and SQL statement must parse: an expression as
//!   `SELECT <expr>`, a statement as written (PostgreSQL's `check_sql_expr`);
//! - RETURN, RETURN NEXT and RETURN QUERY must fit the result: no value in a function
//!   returning void or a set or having OUT parameters, a value everywhere else, and RETURN NEXT
//!   / QUERY only in a set-returning function (PostgreSQL's `make_return_stmt`).
//!
//! Checks run in the body's text order, so the first error is the one PostgreSQL reports.
//! Positions are the body's own (1-based characters); the caller moves them into the
//! statement. Only syntax errors (42601) of embedded SQL fail here: a statement keel's parser
//! knows but does not support yet (0A000) fails when it runs, as before.

use keel_common::{PgError, sqlstate};
use keel_pl::{
    Block, Body, CursorDecl, Decl, FetchDirection, OpenSource, PlSyntaxError, SqlText, Stmt,
    StmtKind,
};

/// Statements of PostgreSQL's whose whole grammar keel's parser does not cover yet: a valid
/// one could fail to parse here, so their syntax is checked when they run. Queries and
/// INSERT / UPDATE / DELETE are checked, and so is a statement starting with a word that
/// begins no statement (PostgreSQL's grammar fails on that word).
const UNCHECKED: &[&str] = &[
    "abort",
    "alter",
    "analyze",
    "begin",
    "call",
    "checkpoint",
    "close",
    "cluster",
    "comment",
    "commit",
    "copy",
    "create",
    "deallocate",
    "declare",
    "discard",
    "do",
    "drop",
    "end",
    "execute",
    "explain",
    "fetch",
    "grant",
    "import",
    "listen",
    "load",
    "lock",
    "merge",
    "move",
    "notify",
    "prepare",
    "reassign",
    "refresh",
    "reindex",
    "release",
    "reset",
    "revoke",
    "rollback",
    "savepoint",
    "security",
    "set",
    "show",
    "start",
    "truncate",
    "unlisten",
    "vacuum",
];

/// `sql` with each `name.*` written as `name` and two spaces (positions unchanged): a whole
/// row used as a value (`new.*::text`, `row(r.*)`), which PostgreSQL's grammar takes anywhere
/// and keel expands from the variable's row type before parsing, parses here as the column
/// reference it stands for.
fn without_row_wildcards(sql: &str) -> std::borrow::Cow<'_, str> {
    let b = sql.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    let mut quote: Option<u8> = None;
    for i in 0..b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'\'' || c == b'"' => quote = Some(c),
            None if c == b'.'
                && b.get(i + 1) == Some(&b'*')
                && i > 0
                && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'"') =>
            {
                let o = out.get_or_insert_with(|| b.to_vec());
                o[i] = b' ';
                o[i + 1] = b' ';
            }
            None => {}
        }
    }
    match out {
        // Only ASCII bytes were replaced, by ASCII spaces.
        Some(o) => std::borrow::Cow::Owned(String::from_utf8(o).unwrap_or_else(|_| sql.into())),
        None => std::borrow::Cow::Borrowed(sql),
    }
}

/// What RETURN may carry in the body being checked.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResultShape {
    pub returns_set: bool,
    pub returns_void: bool,
    /// OUT, INOUT or TABLE parameters (the result is theirs).
    pub out_params: bool,
}

impl ResultShape {
    /// A DO block: a function returning void.
    pub fn do_block() -> ResultShape {
        ResultShape {
            returns_void: true,
            ..ResultShape::default()
        }
    }
}

/// Checks `body`, parsed from `src`.
pub fn check_body(body: &Body, src: &str, shape: ResultShape) -> Result<(), Box<PlSyntaxError>> {
    Checker {
        src,
        shape,
        names: Default::default(),
    }
    .block(&body.block)
}

type Checked = Result<(), Box<PlSyntaxError>>;

struct Checker<'a> {
    src: &'a str,
    shape: ResultShape,
    /// The variables declared in the blocks around the statement being checked, innermost
    /// last, with a bound cursor's declaration.
    names: std::cell::RefCell<Vec<(String, Option<CursorDecl>)>>,
}

impl Checker<'_> {
    fn error_at(&self, offset: usize, error: PgError) -> Box<PlSyntaxError> {
        let offset = offset.min(self.src.len());
        let chars = self.src[..offset].chars().count();
        Box::new(PlSyntaxError {
            error: error.with_position(chars as u32 + 1),
            offset: Some(offset),
            line: keel_pl::line_of(self.src, offset),
        })
    }

    /// `sql` parsed with `prefix` in front; a syntax error's position moves into the body.
    fn parse(&self, prefix: &str, sql: &SqlText) -> Checked {
        if keel_parser::split::strip_comments_ws(&sql.text).is_empty() {
            return Ok(());
        }
        let text = format!("{prefix}{}", without_row_wildcards(&sql.text));
        let Err(e) = keel_parser::parse_statement(&text, 0) else {
            return Ok(());
        };
        if e.code != sqlstate::SYNTAX_ERROR {
            return Ok(());
        }
        let prefix_chars = prefix.chars().count();
        // 0-based character of the error in `sql.text`, then its byte offset in the body.
        let at = e
            .position
            .map_or(0, |p| (p as usize).saturating_sub(1 + prefix_chars));
        let byte = sql
            .text
            .char_indices()
            .nth(at)
            .map_or(sql.text.len(), |(b, _)| b);
        let mut e = e;
        e.position = None;
        Err(self.error_at(sql.offset + byte, e))
    }

    fn expr(&self, e: &SqlText) -> Checked {
        self.parse("SELECT ", e)
    }

    fn opt_expr(&self, e: &Option<SqlText>) -> Checked {
        e.as_ref().map_or(Ok(()), |e| self.expr(e))
    }

    fn exprs(&self, es: &[SqlText]) -> Checked {
        es.iter().try_for_each(|e| self.expr(e))
    }

    fn statement(&self, s: &SqlText) -> Checked {
        let first: String = keel_parser::split::strip_comments_ws(&s.text)
            .chars()
            .take_while(char::is_ascii_alphabetic)
            .collect::<String>()
            .to_ascii_lowercase();
        if UNCHECKED.contains(&first.as_str()) {
            return Ok(());
        }
        self.parse("", s)
    }

    fn block(&self, b: &Block) -> Checked {
        let depth = self.names.borrow().len();
        let r = self.block_in_scope(b);
        self.names.borrow_mut().truncate(depth);
        r
    }

    fn block_in_scope(&self, b: &Block) -> Checked {
        for d in &b.decls {
            match d {
                Decl::Var(v) => {
                    self.opt_expr(&v.default)?;
                    self.names.borrow_mut().push((v.name.clone(), None));
                }
                Decl::Cursor(c) => {
                    self.statement(&c.query)?;
                    self.names
                        .borrow_mut()
                        .push((c.name.clone(), Some(c.clone())));
                }
                Decl::Alias { .. } => {}
            }
        }
        self.stmts(&b.body)?;
        for h in b.exceptions.iter().flatten() {
            self.stmts(&h.body)?;
        }
        Ok(())
    }

    /// The declaration of bound cursor `cursor`, None for another variable (or one of the
    /// function's parameters).
    fn bound_cursor(&self, cursor: &keel_pl::VarRef) -> Option<CursorDecl> {
        let name = cursor.names.join(".");
        let names = self.names.borrow();
        names.iter().rev().find(|(n, _)| *n == name)?.1.clone()
    }

    /// A bound cursor's OPEN arguments: PostgreSQL matches them to its parameters when the
    /// body is compiled.
    fn cursor_args(&self, cursor: &keel_pl::VarRef, args: &Option<SqlText>) -> Checked {
        let (Some(decl), Some(a)) = (self.bound_cursor(cursor), args) else {
            return Ok(());
        };
        match keel_pl::cursor_arguments(&a.text, &cursor.names.join("."), &decl) {
            Ok(_) => Ok(()),
            Err((e, at)) => Err(self.error_at(a.offset + at, e)),
        }
    }

    fn stmts(&self, body: &[Stmt]) -> Checked {
        body.iter().try_for_each(|s| self.stmt(s))
    }

    /// The `;` that ends a statement starting at `from`.
    fn semicolon(&self, from: usize) -> usize {
        self.src[from..]
            .find(';')
            .map_or(self.src.len(), |i| from + i)
    }

    fn stmt(&self, s: &Stmt) -> Checked {
        match &s.kind {
            StmtKind::Block(b) => self.block(b),
            StmtKind::Assign { target, expr } => {
                for part in &target.path {
                    if let keel_pl::TargetPart::Subscript(i) = part
                        && !i.text.contains(':')
                    {
                        self.expr(i)?;
                    }
                }
                self.expr(expr)
            }
            StmtKind::If {
                cond,
                then_body,
                elsifs,
                else_body,
            } => {
                self.expr(cond)?;
                self.stmts(then_body)?;
                for e in elsifs {
                    self.expr(&e.cond)?;
                    self.stmts(&e.body)?;
                }
                else_body.as_ref().map_or(Ok(()), |b| self.stmts(b))
            }
            StmtKind::Case {
                expr,
                whens,
                else_body,
            } => {
                self.opt_expr(expr)?;
                for w in whens {
                    self.expr(&w.expr)?;
                    self.stmts(&w.body)?;
                }
                else_body.as_ref().map_or(Ok(()), |b| self.stmts(b))
            }
            StmtKind::Loop { body, .. } => self.stmts(body),
            StmtKind::While { cond, body, .. } => {
                self.expr(cond)?;
                self.stmts(body)
            }
            StmtKind::ForInt {
                lower,
                upper,
                step,
                body,
                ..
            } => {
                self.expr(lower)?;
                self.expr(upper)?;
                self.opt_expr(step)?;
                self.stmts(body)
            }
            StmtKind::ForQuery { query, body, .. } => {
                self.statement(query)?;
                self.stmts(body)
            }
            StmtKind::ForExecute {
                query,
                params,
                body,
                ..
            } => {
                self.expr(query)?;
                self.exprs(params)?;
                self.stmts(body)
            }
            StmtKind::ForCursor {
                cursor, args, body, ..
            } => {
                if self.bound_cursor(cursor).is_none() {
                    let e = PgError::new(
                        sqlstate::SYNTAX_ERROR,
                        "cursor FOR loop must use a bound cursor variable",
                    );
                    return Err(self.error_at(cursor.offset, e));
                }
                self.cursor_args(cursor, args)?;
                self.stmts(body)
            }
            StmtKind::Foreach { array, body, .. } => {
                self.expr(array)?;
                self.stmts(body)
            }
            StmtKind::Exit { cond, .. } => self.opt_expr(cond),
            StmtKind::Return { expr } => self.return_stmt(s, expr.as_ref()),
            StmtKind::ReturnNext { expr } => {
                self.set_only(s, "RETURN NEXT")?;
                match expr {
                    Some(e) if self.shape.out_params => Err(self.error_at(
                        e.offset,
                        PgError::new(
                            sqlstate::DATATYPE_MISMATCH,
                            "RETURN NEXT cannot have a parameter in function with OUT parameters",
                        ),
                    )),
                    Some(e) => self.expr(e),
                    None if self.shape.out_params => Ok(()),
                    None => Err(self.missing_expression(s)),
                }
            }
            StmtKind::ReturnQuery {
                dynamic,
                query,
                params,
            } => {
                self.set_only(s, "RETURN QUERY")?;
                if *dynamic {
                    self.expr(query)?;
                    self.exprs(params)
                } else {
                    self.statement(query)
                }
            }
            StmtKind::Raise(r) => {
                self.exprs(&r.params)?;
                r.options.iter().try_for_each(|(_, e)| self.expr(e))
            }
            StmtKind::Assert { cond, message } => {
                self.expr(cond)?;
                self.opt_expr(message)
            }
            StmtKind::Execute { query, params, .. } => {
                self.expr(query)?;
                self.exprs(params)
            }
            StmtKind::Perform { query } => self.expr(query),
            StmtKind::Sql { sql, .. } => self.statement(sql),
            StmtKind::Open { cursor, source } => match source {
                OpenSource::Bound { args } => self.cursor_args(cursor, args),
                OpenSource::Query { query, .. } => self.statement(query),
                OpenSource::Execute { query, params, .. } => {
                    self.expr(query)?;
                    self.exprs(params)
                }
            },
            StmtKind::Fetch { direction, .. } => match direction {
                FetchDirection::Absolute(e)
                | FetchDirection::Relative(e)
                | FetchDirection::Count(e) => self.expr(e),
                FetchDirection::Forward(e) | FetchDirection::Backward(e) => self.opt_expr(e),
                _ => Ok(()),
            },
            StmtKind::GetDiagnostics { .. }
            | StmtKind::Close { .. }
            | StmtKind::Null
            | StmtKind::Commit { .. }
            | StmtKind::Rollback { .. }
            | StmtKind::Call { .. } => Ok(()),
        }
    }

    fn missing_expression(&self, s: &Stmt) -> Box<PlSyntaxError> {
        self.error_at(
            self.semicolon(s.offset),
            PgError::new(
                sqlstate::SYNTAX_ERROR,
                "missing expression at or near \";\"",
            ),
        )
    }

    /// RETURN NEXT and RETURN QUERY belong to set-returning functions.
    fn set_only(&self, s: &Stmt, what: &str) -> Checked {
        if self.shape.returns_set {
            return Ok(());
        }
        Err(self.error_at(
            s.offset,
            PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!("cannot use {what} in a non-SETOF function"),
            ),
        ))
    }

    fn return_stmt(&self, s: &Stmt, expr: Option<&SqlText>) -> Checked {
        let refused = if self.shape.returns_set {
            Some("RETURN cannot have a parameter in function returning set")
        } else if self.shape.returns_void {
            Some("RETURN cannot have a parameter in function returning void")
        } else if self.shape.out_params {
            Some("RETURN cannot have a parameter in function with OUT parameters")
        } else {
            None
        };
        match (expr, refused) {
            (Some(e), Some(msg)) => {
                let mut err = PgError::new(sqlstate::DATATYPE_MISMATCH, msg);
                if self.shape.returns_set {
                    err = err.with_hint("Use RETURN NEXT or RETURN QUERY.");
                }
                Err(self.error_at(e.offset, err))
            }
            (Some(e), None) => self.expr(e),
            (None, Some(_)) => Ok(()),
            (None, None) => Err(self.missing_expression(s)),
        }
    }
}
