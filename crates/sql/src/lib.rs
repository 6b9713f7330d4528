//! The SQL layer: parse -> bind -> plan -> execute.
//!
//! - [`split`] cuts a query string into statements (keeping offsets for error positions);
//!   [`utility`] parses the utility commands by hand; everything else goes to `sqlparser`.
//! - [`prepare`] binds one statement against a catalog into a [`Prepared`]: a plan with typed
//!   parameters, built once and executed many times (the extended protocol's hot path).
//! - [`exec`] runs plans: queries are pulled to completion; writes run in a [`exec::ModifyExec`]
//!   that can suspend on a row lock and resume exactly where it stopped (see README.md).
//! - [`ddl`] runs DDL against the transaction's pending catalog.

pub mod bind;
mod copy_options;
pub mod ddl;
mod ddl_alter;
mod ddl_index;
mod ddl_sequence;
pub mod exec;
pub mod expr;
pub mod interrupt;
pub mod names;
pub mod parse;
pub mod plan;
pub mod split;
mod symmetric;
pub mod syntax;
pub mod utility;

use keel_catalog::Catalog;
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::TypeId;
use plan::{ModifyPlan, OutColumn, QueryPlan};
use sqlparser::ast;
use std::sync::Arc;
use utility::Utility;

pub use expr::{SessionFuncs, version_string};

pub enum Stmt {
    Query(QueryPlan),
    Modify(ModifyPlan),
    /// DDL is bound when executed (it needs the transaction's catalog at that time).
    Ddl(Box<ast::Statement>),
    Utility(Utility),
    Empty,
}

/// A bound statement.
pub struct Prepared {
    pub text: String,
    /// Character offset of `text` in the query string it came from.
    pub char_offset: usize,
    pub stmt: Stmt,
    /// Final parameter types (unresolved ones are text).
    pub params: Vec<TypeId>,
    /// The catalog it was planned against; re-plan when the session's catalog differs.
    pub catalog: Arc<Catalog>,
    /// Notices of the scanner (identifiers truncated to 63 bytes), sent before it runs.
    pub notices: Vec<PgError>,
}

impl Prepared {
    /// Row shape, or None when the statement returns no rows.
    pub fn columns(&self) -> Option<&[OutColumn]> {
        match &self.stmt {
            Stmt::Query(q) => Some(&q.columns),
            Stmt::Modify(m) => m.returning.as_ref().map(|r| r.1.as_slice()),
            Stmt::Utility(Utility::Show(_)) | Stmt::Utility(Utility::ShowAll) => None,
            _ => None,
        }
    }
}

fn parse_error(e: sqlparser::parser::ParserError, text: &str, char_offset: usize) -> PgError {
    let msg = e.to_string();
    // "... found: X at Line: l, Column: c"
    let near = msg
        .split("found: ")
        .nth(1)
        .map(|r| r.split(" at Line:").next().unwrap_or(r).to_string());
    let err = match near.as_deref() {
        Some("EOF") | None => PgError::new(sqlstate::SYNTAX_ERROR, "syntax error at end of input"),
        Some(tok) => PgError::new(
            sqlstate::SYNTAX_ERROR,
            format!("syntax error at or near \"{tok}\""),
        ),
    };
    let reported = (|| {
        let rest = msg.split("Line: ").nth(1)?;
        let mut it = rest.split(", Column: ");
        let line: u64 = it.next()?.trim().parse().ok()?;
        let col: u64 = it.next()?.trim().parse().ok()?;
        Some((line, col))
    })();
    // sqlparser sometimes reports the location of a later token; PostgreSQL points at the
    // offending token itself, so take the last token with that text at or before the
    // reported location.
    let pos = reported.and_then(|(line, col)| {
        let tok = near.as_deref()?;
        let dialect = sqlparser::dialect::PostgreSqlDialect {};
        let toks = sqlparser::tokenizer::Tokenizer::new(&dialect, text)
            .tokenize_with_location()
            .ok()?;
        let at = toks
            .iter()
            .rev()
            .filter(|t| (t.span.start.line, t.span.start.column) <= (line, col))
            .find(|t| t.token.to_string() == tok)
            .map(|t| t.span.start)
            .unwrap_or(sqlparser::tokenizer::Location { line, column: col });
        parse::char_position(text, at)
    });
    let end = text.trim_end().chars().count() + 1;
    let pos = match (pos, near.as_deref()) {
        (Some(p), Some(t)) if t != "EOF" => p,
        _ => end,
    };
    // Where the scan recognizes PostgreSQL's failure point, it is the one to report.
    if let Some(e) = syntax::pg_error_token(text)
        && (e.certain || e.pos < pos)
    {
        let p = e.pos;
        let msg = match e.token {
            Some(t) => format!("syntax error at or near \"{t}\""),
            None => "syntax error at end of input".into(),
        };
        return PgError::new(sqlstate::SYNTAX_ERROR, msg).with_position((char_offset + p) as u32);
    }
    err.with_position((char_offset + pos) as u32)
}

/// Parses and binds one statement (`text` is one element of [`split::split_statements`]).
pub fn prepare(
    catalog: Arc<Catalog>,
    text: &str,
    char_offset: usize,
    param_types: &[TypeId],
) -> PgResult<Prepared> {
    // Identifiers over 63 bytes are truncated in the text (keeping every position), as
    // PostgreSQL's scanner does; the original text stays the statement's text.
    let (parsed_text, notices) = match names::truncate_identifiers(text) {
        Some((t, n)) => (std::borrow::Cow::Owned(t), n),
        None => (std::borrow::Cow::Borrowed(text), Vec::new()),
    };
    let mut notices = Some(notices);
    let mut mk = |stmt, params| Prepared {
        text: text.to_string(),
        char_offset,
        stmt,
        params,
        catalog: catalog.clone(),
        notices: notices.take().unwrap_or_default(),
    };
    if split::strip_comments_ws(text).is_empty() {
        return Ok(mk(Stmt::Empty, vec![]));
    }
    if let Some(u) = utility::parse_utility(text)? {
        return Ok(mk(Stmt::Utility(u), param_types.to_vec()));
    }
    let text: &str = &parsed_text;
    let reordered = utility::reorder_create_sequence(text)?;
    let mut stmts = match reordered.as_deref() {
        Some(seq) => parse::statements(seq)
            .map_err(|f| f.into_error(char_offset, |e| parse_error(e, seq, char_offset)))?,
        None => {
            let rewritten = symmetric::rewrite(text);
            match parse::statements(&rewritten) {
                Ok(s) => s,
                Err(parse::Failure::Syntax(e)) => syntax::trim_without_characters(&rewritten)
                    .and_then(|t| parse::statements(&t).ok())
                    .ok_or_else(|| {
                        syntax::unsupported_statement(text)
                            .unwrap_or_else(|| parse_error(e, text, char_offset))
                    })?,
                Err(f) => {
                    return Err(f.into_error(char_offset, |e| parse_error(e, text, char_offset)));
                }
            }
        }
    };
    let Some(stmt) = stmts.pop() else {
        return Ok(mk(Stmt::Empty, vec![]));
    };
    let mut b = bind::Binder::new(&catalog, param_types, text, char_offset);
    let s = match &stmt {
        ast::Statement::Query(q) => Stmt::Query(b.query(q)?),
        ast::Statement::Insert(i) => Stmt::Modify(b.insert(i)?),
        ast::Statement::Update(u) => Stmt::Modify(b.update(u)?),
        ast::Statement::Delete(d) => Stmt::Modify(b.delete(d)?),
        ast::Statement::CreateTable(_)
        | ast::Statement::Drop { .. }
        | ast::Statement::CreateIndex(_)
        | ast::Statement::AlterTable(_)
        | ast::Statement::Truncate(_)
        | ast::Statement::CreateSequence { .. } => Stmt::Ddl(Box::new(stmt.clone())),
        other => {
            let s = other.to_string();
            let words: Vec<&str> = s.split_whitespace().take(2).collect();
            return Err(PgError::unsupported(format!(
                "statement {}",
                words.join(" ").to_uppercase()
            )));
        }
    };
    let params = b.finish_params();
    Ok(mk(s, params))
}

/// The CommandComplete tag for a finished statement.
pub fn command_tag(stmt: &Stmt, rows: u64) -> String {
    match stmt {
        Stmt::Query(_) => format!("SELECT {rows}"),
        Stmt::Modify(m) => match m.kind {
            plan::ModifyKind::Insert { .. } => format!("INSERT 0 {rows}"),
            plan::ModifyKind::Update { .. } => format!("UPDATE {rows}"),
            plan::ModifyKind::Delete { .. } => format!("DELETE {rows}"),
        },
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests;
