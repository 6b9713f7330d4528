//! The parser: SQL text to syntax trees, with PostgreSQL's error positions.
//!
//! - [`split`] cuts a query string into statements (keeping offsets for error positions);
//! - [`utility`] parses the utility commands (transaction control, SET/SHOW, VACUUM, COPY, ...)
//!   that `sqlparser` does not cover the way PostgreSQL does;
//! - everything else goes to `sqlparser` ([`parse`]), after the scanner's own rules: identifiers
//!   truncated to 63 bytes ([`names`]), `BETWEEN SYMMETRIC` ([`symmetric`]), and PostgreSQL's
//!   error positions for what `sqlparser` reports differently ([`syntax`]).
//!
//! [`parse_statement`] is the entry point: one statement's text to a [`Parsed`].

pub mod atomic_body;
mod copy_options;
pub mod create_as;
pub mod cursor_stmt;
pub mod dialect;
mod do_stmt;
pub mod lockwords;
pub mod names;
pub mod parse;
pub mod partition_cmd;
pub mod prepare_stmt;
pub mod split;
pub mod subscript_target;
pub mod symmetric;
pub mod syntax;
pub mod trigger_args;
pub mod utility;
pub mod variadic_arg;
mod without_oids;

use keel_common::{PgError, PgResult, sqlstate};
use sqlparser::ast;
use utility::Utility;

/// One statement, parsed.
pub enum Parsed {
    /// Only whitespace and comments.
    Empty,
    Utility(Utility),
    Statement {
        stmt: Box<ast::Statement>,
        /// The text it was parsed from (identifiers truncated): error positions refer to it.
        text: String,
        /// The strengths of its locking clauses in text order, when one says KEY (see
        /// lockwords.rs); empty otherwise.
        lock_strengths: Vec<lockwords::LockStrength>,
        /// False for CREATE TABLE AS ... WITH NO DATA (create_as.rs).
        with_data: bool,
    },
}

/// A parsed statement with the scanner's notices (identifiers truncated to 63 bytes).
pub struct ParseResult {
    pub parsed: Parsed,
    pub notices: Vec<PgError>,
}

pub fn parse_error(e: sqlparser::parser::ParserError, text: &str, char_offset: usize) -> PgError {
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

/// Parses one statement (`text` is one element of [`split::split_statements`]; `char_offset` is
/// its character offset in the query string, for error positions).
pub fn parse_statement(text: &str, char_offset: usize) -> PgResult<ParseResult> {
    // Identifiers over 63 bytes are truncated in the text (keeping every position), as
    // PostgreSQL's scanner does; the original text stays the statement's text.
    let (parsed_text, notices) = match names::truncate_identifiers(text) {
        Some((t, n)) => (std::borrow::Cow::Owned(t), n),
        None => (std::borrow::Cow::Borrowed(text), Vec::new()),
    };
    let done = |parsed| ParseResult {
        parsed,
        notices: Vec::new(),
    };
    if split::strip_comments_ws(text).is_empty() {
        return Ok(done(Parsed::Empty));
    }
    // Positions of a utility's errors are in its statement; the query string's are wanted.
    let placed = |mut e: PgError| {
        if let Some(p) = e.position.as_mut() {
            *p += char_offset as u32;
        }
        e
    };
    if let Some(u) = utility::parse_utility(text).map_err(placed)? {
        return Ok(done(Parsed::Utility(u)));
    }
    if let Some(cmd) = partition_cmd::parse(text, char_offset)? {
        return Ok(done(Parsed::Utility(Utility::Partition(Box::new(cmd)))));
    }
    let text: &str = &parsed_text;
    let atomic = atomic_body::rewrite(text);
    let text: &str = atomic.as_deref().unwrap_or(text);
    let reordered = utility::reorder_create_sequence(text)?;
    let mut lock_strengths = Vec::new();
    // (text the targets were found in, that text with their subscripts blanked, targets)
    let mut subscripted = None;
    let trigger_args = trigger_args::rewrite(text);
    let text: &str = trigger_args.as_ref().map_or(text, |(t, _)| t.as_str());
    let create_as = create_as::rewrite(text);
    let text: &str = create_as.as_ref().map_or(text, |c| c.text.as_str());
    let no_oids = without_oids::rewrite(text);
    let text: &str = no_oids.as_deref().unwrap_or(text);
    let variadic = variadic_arg::rewrite(text);
    let text: &str = variadic.as_deref().unwrap_or(text);
    let mut stmts = match reordered.as_deref() {
        Some(seq) => parse::statements(seq)
            .map_err(|f| f.into_error(char_offset, |e| parse_error(e, seq, char_offset)))?,
        None => {
            let rewritten = symmetric::rewrite(text);
            let (rewritten, strengths) = match lockwords::rewrite(&rewritten) {
                (std::borrow::Cow::Owned(t), s) => (std::borrow::Cow::Owned(t), s),
                (std::borrow::Cow::Borrowed(_), s) => (rewritten, s),
            };
            lock_strengths = strengths;
            subscripted = subscript_target::rewrite(&rewritten)
                .map(|(blanked, targets)| (rewritten.to_string(), blanked, targets));
            let rewritten = match &subscripted {
                Some((_, blanked, _)) => std::borrow::Cow::Borrowed(blanked.as_str()),
                None => rewritten,
            };
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
    let Some(mut stmt) = stmts.pop() else {
        return Ok(done(Parsed::Empty));
    };
    if let Some((_, args)) = &trigger_args {
        trigger_args::restore(&mut stmt, args.clone());
    }
    if let Some(c) = &create_as
        && !c.columns.is_empty()
    {
        create_as::restore(&mut stmt, &c.columns);
    }
    if let Some((found_in, _, targets)) = &subscripted {
        subscript_target::restore(&mut stmt, found_in, targets)
            .map_err(|e| PgError::new(sqlstate::SYNTAX_ERROR, e))?;
    }
    Ok(ParseResult {
        parsed: Parsed::Statement {
            stmt: Box::new(stmt),
            text: text.to_string(),
            lock_strengths,
            with_data: create_as.as_ref().is_none_or(|c| c.with_data),
        },
        notices,
    })
}
