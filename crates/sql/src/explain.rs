//! `EXPLAIN [ ( option [, ...] ) ] statement` and `EXPLAIN [ ANALYZE ] [ VERBOSE ] statement`:
//! the prefix is read here, the statement after it is prepared as any other, and the result is
//! a [`Stmt::Explain`]. Options are checked as PostgreSQL's `ExplainQuery` checks them.

use crate::{Prepared, RelSizes, Stmt};
use keel_catalog::Catalog;
use keel_common::{PgError, PgResult, sqlstate};
pub use keel_planner::explain::{
    BufferCounts, ExplainOptions, NodeActual, RunPruned, Summary, count_nodes, explain_modify,
    explain_query, run_prunes,
};
use keel_planner::plan::OutColumn;
use keel_types::TypeId;
use std::sync::Arc;

/// A statement to EXPLAIN and how.
pub struct Explain {
    pub opts: ExplainOptions,
    /// The statement explained: `Stmt::Query` or `Stmt::Modify`.
    pub stmt: Stmt,
    /// Time spent parsing, analyzing and planning the statement, in milliseconds.
    pub planning_ms: f64,
    /// Shared-buffer pages planning touched (`Planning:` under BUFFERS).
    pub planning_buffers: BufferCounts,
    /// EXPLAIN's one column, "QUERY PLAN" (text).
    pub columns: Vec<OutColumn>,
}

impl Explain {
    /// The lines of an EXPLAIN without ANALYZE, whose plan is all it shows; `settings` are
    /// the changed planner settings `EXPLAIN (SETTINGS)` lists. `stmt` is the statement
    /// shown: [`Explain::stmt`], or for EXPLAIN EXECUTE the prepared statement's;
    /// `run_pruned` the children its run-time pruning keeps for the parameters.
    pub fn plan_lines(
        &self,
        stmt: &Stmt,
        catalog: &Catalog,
        sizes: &dyn RelSizes,
        settings: Vec<(String, String)>,
        run_pruned: RunPruned,
    ) -> PgResult<Vec<String>> {
        let summary = Summary {
            settings,
            planning_buffers: self.opts.buffers.then_some(self.planning_buffers),
            planning_ms: self.opts.summary.then_some(self.planning_ms),
            triggers: None,
            execution_ms: None,
            run_pruned,
        };
        Ok(match stmt {
            Stmt::Query(q) => explain_query(q, catalog, sizes, &self.opts, None, &summary),
            Stmt::Modify(m) => explain_modify(m, catalog, sizes, &self.opts, None, &summary),
            // EXPLAIN EXECUTE where no session's prepared statements are in reach (a
            // function body).
            _ => return Err(PgError::unsupported("EXPLAIN EXECUTE inside a function")),
        })
    }
}

/// One word or symbol of the prefix, and the byte offset after it.
fn next_token(text: &str, mut at: usize) -> Option<(String, usize)> {
    let b = text.as_bytes();
    loop {
        while at < b.len() && b[at].is_ascii_whitespace() {
            at += 1;
        }
        if text[at..].starts_with("--") {
            at += text[at..].find('\n').map_or(text.len() - at, |n| n + 1);
            continue;
        }
        if text[at..].starts_with("/*") {
            at += text[at..].find("*/").map_or(text.len() - at, |n| n + 2);
            continue;
        }
        break;
    }
    if at >= b.len() {
        return None;
    }
    let c = b[at];
    if c == b'(' || c == b')' || c == b',' {
        return Some(((c as char).to_string(), at + 1));
    }
    if c == b'\'' {
        let end = text[at + 1..].find('\'')? + at + 1;
        return Some((text[at + 1..end].to_string(), end + 1));
    }
    let start = at;
    while at < b.len() && (b[at].is_ascii_alphanumeric() || b[at] == b'_') {
        at += 1;
    }
    if at == start {
        return Some(((c as char).to_string(), at + 1));
    }
    Some((text[start..at].to_ascii_lowercase(), at))
}

/// Whether `text` is an EXPLAIN statement.
pub fn is_explain(text: &str) -> bool {
    next_token(text, 0).is_some_and(|(w, _)| w == "explain")
}

fn syntax(msg: impl Into<String>) -> PgError {
    PgError::new(sqlstate::SYNTAX_ERROR, msg)
}

fn boolean(name: &str, value: Option<&str>) -> PgResult<bool> {
    match value {
        None => Ok(true),
        Some("true" | "on" | "1") => Ok(true),
        Some("false" | "off" | "0") => Ok(false),
        Some(_) => Err(syntax(format!("{name} requires a Boolean value"))),
    }
}

/// Reads the EXPLAIN prefix of `text`: the options and the byte offset where the explained
/// statement starts.
pub fn parse_prefix(text: &str) -> PgResult<(ExplainOptions, usize)> {
    let mut opts = ExplainOptions::default();
    let Some((_, mut at)) = next_token(text, 0) else {
        return Err(syntax("syntax error at end of input"));
    };
    let mut timing_set = false;
    let mut summary_set = None;
    match next_token(text, at) {
        Some((p, after)) if p == "(" => {
            at = after;
            loop {
                let Some((name, after)) = next_token(text, at) else {
                    return Err(syntax("syntax error at end of input"));
                };
                at = after;
                let (value, after) = match next_token(text, at) {
                    Some((v, a)) if v != "," && v != ")" => (Some(v), a),
                    _ => (None, at),
                };
                at = after;
                let v = value.as_deref();
                match name.as_str() {
                    "analyze" | "analyse" => opts.analyze = boolean(&name, v)?,
                    "verbose" => opts.verbose = boolean(&name, v)?,
                    "costs" => opts.costs = boolean(&name, v)?,
                    "buffers" => opts.buffers = boolean(&name, v)?,
                    "settings" => opts.settings = boolean(&name, v)?,
                    "wal" => {
                        boolean(&name, v)?;
                    }
                    "timing" => {
                        opts.timing = boolean(&name, v)?;
                        timing_set = true;
                    }
                    "summary" => summary_set = Some(boolean(&name, v)?),
                    "format" => match v {
                        Some("text") => opts.json = false,
                        Some("json") => opts.json = true,
                        Some(f @ ("xml" | "yaml")) => {
                            return Err(PgError::unsupported(format!(
                                "EXPLAIN (FORMAT {})",
                                f.to_ascii_uppercase()
                            )));
                        }
                        Some(f) => {
                            return Err(PgError::new(
                                sqlstate::INVALID_PARAMETER_VALUE,
                                format!(
                                    "unrecognized value for EXPLAIN option \"format\": \"{f}\""
                                ),
                            ));
                        }
                        None => return Err(syntax("format requires a parameter")),
                    },
                    _ => return Err(syntax(format!("unrecognized EXPLAIN option \"{name}\""))),
                }
                match next_token(text, at) {
                    Some((p, after)) if p == "," => at = after,
                    Some((p, after)) if p == ")" => {
                        at = after;
                        break;
                    }
                    _ => return Err(syntax("syntax error in EXPLAIN options")),
                }
            }
        }
        _ => {
            for word in ["analyze", "verbose"] {
                match next_token(text, at) {
                    Some((w, after)) if w == word || (word == "analyze" && w == "analyse") => {
                        if word == "analyze" {
                            opts.analyze = true;
                        } else {
                            opts.verbose = true;
                        }
                        at = after;
                    }
                    _ => {}
                }
            }
        }
    }
    if timing_set && opts.timing && !opts.analyze {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            "EXPLAIN option TIMING requires ANALYZE",
        ));
    }
    if !opts.analyze {
        opts.timing = false;
    }
    opts.summary = summary_set.unwrap_or(opts.analyze);
    Ok((opts, at))
}

/// Prepares `EXPLAIN ... stmt`: the statement is planned now (and timed, for `Planning Time`).
pub(crate) fn prepare_explain(
    catalog: Arc<Catalog>,
    sizes: &dyn RelSizes,
    text: &str,
    char_offset: usize,
    param_types: &[TypeId],
    pl_vars: Option<&crate::bind::PlVars>,
) -> PgResult<Prepared> {
    let (opts, at) = parse_prefix(text)?;
    let inner_text = &text[at..];
    let inner_offset = char_offset + text[..at].chars().count();
    let started = std::time::Instant::now();
    let pages = keel_storage::usage::current();
    let mut inner = crate::prepare_in_body(
        catalog.clone(),
        sizes,
        inner_text,
        inner_offset,
        param_types,
        pl_vars,
    )?;
    let planning_ms = started.elapsed().as_secs_f64() * 1e3;
    // Planning runs on this thread from start to end: the counters' difference is its own.
    let pages = keel_storage::usage::current() - pages;
    let planning_buffers = BufferCounts {
        hit: pages.hit,
        read: pages.read,
        dirtied: pages.dirtied,
        written: pages.written,
        temp_read: pages.temp_read,
        temp_written: pages.temp_written,
    };
    match &mut inner.stmt {
        Stmt::Query(_) | Stmt::Modify(_) => {}
        // EXPLAIN EXECUTE: the session explains the named statement; its arguments' offset
        // becomes one in this statement.
        Stmt::Utility(crate::utility::Utility::Execute { args_offset, .. }) => {
            *args_offset += text[..at].chars().count();
        }
        Stmt::Empty => return Err(syntax("syntax error at end of input")),
        _ => {
            return Err(PgError::unsupported(
                "EXPLAIN of statements other than SELECT, INSERT, UPDATE and DELETE",
            ));
        }
    }
    let columns = vec![OutColumn {
        name: "QUERY PLAN".to_string(),
        ty: TypeId::Text,
        typmod: -1,
        table_oid: 0,
        attnum: 0,
    }];
    Ok(Prepared {
        text: text.to_string(),
        char_offset,
        stmt: Stmt::Explain(Box::new(Explain {
            opts,
            stmt: inner.stmt,
            planning_ms,
            planning_buffers,
            columns,
        })),
        params: inner.params,
        catalog,
        stats_generation: inner.stats_generation,
        notices: inner.notices,
        lock_list: std::sync::OnceLock::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(text: &str) -> PgResult<(ExplainOptions, String)> {
        parse_prefix(text).map(|(o, at)| (o, text[at..].trim().to_string()))
    }

    #[test]
    fn prefix_forms() {
        let (o, rest) = opts("EXPLAIN select 1").unwrap();
        assert!(!o.analyze && o.costs && !o.summary && !o.timing);
        assert_eq!(rest, "select 1");
        let (o, rest) = opts("explain analyse\n  update t set a = 1").unwrap();
        assert!(o.analyze && o.timing && o.summary);
        assert_eq!(rest, "update t set a = 1");
        let (o, _) =
            opts("explain (analyze, costs off, timing false, summary off, buffers) select 1")
                .unwrap();
        assert!(o.analyze && !o.costs && !o.timing && !o.summary && o.buffers);
        let (o, _) = opts("explain (summary) select 1").unwrap();
        assert!(o.summary && !o.analyze);
        let (o, rest) = opts("/* c */ explain (format text) -- x\n select 1").unwrap();
        assert!(!o.json);
        // The statement's own text starts after the options (a comment there is its own).
        assert_eq!(rest, "-- x\n select 1");
    }

    #[test]
    fn option_errors_as_postgres() {
        let code = |t: &str| opts(t).err().map(|e| (e.code, e.message.clone()));
        assert_eq!(
            code("explain (timing) select 1"),
            Some((
                "22023",
                "EXPLAIN option TIMING requires ANALYZE".to_string()
            ))
        );
        assert_eq!(
            code("explain (bogus) select 1"),
            Some(("42601", "unrecognized EXPLAIN option \"bogus\"".to_string()))
        );
        assert_eq!(
            code("explain (analyze maybe) select 1"),
            Some(("42601", "analyze requires a Boolean value".to_string()))
        );
        assert_eq!(
            code("explain (format yaml) select 1").map(|c| c.0),
            Some("0A000")
        );
        let (o, _) = opts("explain (verbose, format json, settings) select 1").unwrap();
        assert!(o.verbose && o.json && o.settings);
        let (o, _) = opts("explain analyze verbose select 1").unwrap();
        assert!(o.analyze && o.verbose);
    }
}
