//! The SQL pipeline's front: [`prepare`] takes one statement's text through the parser
//! (keel-parser), the analyzer (keel-analyzer) and the planner (keel-planner) into a
//! [`Prepared`]: a plan with typed parameters, built once and executed many times (the
//! extended protocol's hot path). The executor (keel-executor) runs it; DDL goes to
//! keel-commands. The modules re-exported here are those crates' public faces.

pub use keel_analyzer::bind;
pub use keel_commands::ddl;
pub use keel_commands::ddl_locks;
pub use keel_commands::{body_position, plpgsql_check};
pub use keel_executor::{eval_array_assign, exec, interrupt, sqlfunc, trigger};
pub use keel_parser::{
    cursor_stmt, names, parse, partition_cmd, prepare_stmt, split, syntax, utility,
};
pub use keel_planner::plan;
pub use keel_planner::touches;
pub mod create_as;
pub mod execute_args;
pub mod explain;
pub use sqlparser::ast;

/// Expressions: the analyzer's data and the executor's evaluation.
pub mod expr {
    pub use keel_analyzer::expr::*;
    pub use keel_executor::eval::*;
}

use keel_analyzer::Analyzed;
use keel_catalog::Catalog;
use keel_common::{PgError, PgResult};
use keel_parser::Parsed;
use keel_types::TypeId;
use plan::{ModifyPlan, OutColumn, QueryPlan};
use std::sync::Arc;
use utility::Utility;

pub use expr::{SessionFuncs, version_string};

pub enum Stmt {
    Query(QueryPlan),
    Modify(ModifyPlan),
    /// DDL is bound when executed (it needs the transaction's catalog at that time).
    Ddl(Box<ast::Statement>),
    Utility(Utility),
    /// CREATE TABLE AS and SELECT INTO: the DDL that makes the table (bound when executed,
    /// as DDL is), then, unless WITH NO DATA, the query's rows inserted into it.
    CreateTableAs {
        create: Box<ast::Statement>,
        with_data: bool,
    },
    /// EXPLAIN of a query or a write (`explain.rs`).
    Explain(Box<explain::Explain>),
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
    /// `RelSizes::stats_generation` when it was planned; re-plan when the statistics
    /// changed since (ANALYZE, auto-analyze).
    pub stats_generation: u64,
    /// Notices of the scanner (identifiers truncated to 63 bytes), sent before it runs.
    pub notices: Vec<PgError>,
    /// The relation locks running it takes ([`Prepared::locks`]), worked out once.
    pub lock_list: std::sync::OnceLock<Vec<(u32, keel_access::LockMode)>>,
}

impl Prepared {
    /// The relation locks running this statement takes, as (table oid, mode): ACCESS SHARE
    /// on every table a query reads, ROW EXCLUSIVE on a write's target, ROW SHARE on the
    /// tables its foreign keys refer to; EXPLAIN takes those of what it explains. Utility
    /// and DDL statements lock for themselves.
    pub fn locks(&self) -> &[(u32, keel_access::LockMode)] {
        self.lock_list.get_or_init(|| stmt_locks(&self.stmt))
    }

    /// Row shape, or None when the statement returns no rows.
    pub fn columns(&self) -> Option<&[OutColumn]> {
        match &self.stmt {
            Stmt::Query(q) => Some(&q.columns),
            Stmt::Modify(m) => m.returning.as_ref().map(|r| r.1.as_slice()),
            Stmt::Utility(Utility::Show(_)) | Stmt::Utility(Utility::ShowAll) => None,
            Stmt::Explain(e) => Some(&e.columns),
            _ => None,
        }
    }
}

fn stmt_locks(stmt: &Stmt) -> Vec<(u32, keel_access::LockMode)> {
    match stmt {
        Stmt::Query(q) => query_locks(q),
        Stmt::Modify(m) => modify_locks(m),
        Stmt::Explain(e) => stmt_locks(&e.stmt),
        _ => Vec::new(),
    }
}

/// The relation locks running query `q` takes (see [`Prepared::locks`]).
pub fn query_locks(q: &QueryPlan) -> Vec<(u32, keel_access::LockMode)> {
    touch_locks(&q.touches())
}

/// The relation locks running write `m` takes (see [`Prepared::locks`]).
pub fn modify_locks(m: &ModifyPlan) -> Vec<(u32, keel_access::LockMode)> {
    touch_locks(&m.touches())
}

fn touch_locks(touches: &keel_planner::touches::Touches) -> Vec<(u32, keel_access::LockMode)> {
    use keel_access::LockMode;
    use keel_planner::touches::Touch;
    touches
        .iter()
        .map(|(t, how)| {
            let mode = match how {
                Touch::Read => LockMode::AccessShare,
                Touch::KeyShare => LockMode::RowShare,
                Touch::Write => LockMode::RowExclusive,
            };
            (t.oid, mode)
        })
        .collect()
}

/// Relation sizes for the planner, read from the engine.
pub struct EngineSizes<'a>(pub &'a keel_access::Engine);

impl keel_planner::RelSizes for EngineSizes<'_> {
    fn relation_bytes(&self, table: &keel_catalog::TableDef) -> u64 {
        self.0.relation_size(table.relfile)
    }

    fn table_stats(&self, table: &keel_catalog::TableDef) -> Option<Arc<keel_planner::TableStats>> {
        self.0.table_stats(table.oid)
    }

    fn stats_generation(&self) -> u64 {
        self.0.stats_generation()
    }

    fn index_bytes(&self, index: &keel_catalog::IndexDef) -> u64 {
        self.0.relation_size(index.relfile)
    }

    fn pages_all_visible(&self, table: &keel_catalog::TableDef) -> u64 {
        self.0.pages_all_visible(table.relfile)
    }
}

pub use keel_planner::{NoSizes, RelSizes};

/// Parses, analyzes and plans one statement (`text` is one element of
/// [`split::split_statements`]).
pub fn prepare(
    catalog: Arc<Catalog>,
    sizes: &dyn RelSizes,
    text: &str,
    char_offset: usize,
    param_types: &[TypeId],
) -> PgResult<Prepared> {
    prepare_in_body(catalog, sizes, text, char_offset, param_types, None)
}

/// [`prepare`] of a statement of a PL/pgSQL body whose variables became parameters `pl_vars`
/// (see [`bind::PlVars`]).
pub fn prepare_in_body(
    catalog: Arc<Catalog>,
    sizes: &dyn RelSizes,
    text: &str,
    char_offset: usize,
    param_types: &[TypeId],
    pl_vars: Option<&bind::PlVars>,
) -> PgResult<Prepared> {
    if explain::is_explain(text) {
        return explain::prepare_explain(catalog, sizes, text, char_offset, param_types, pl_vars);
    }
    // Read before planning: statistics that change while it plans make it plan again.
    let stats_generation = sizes.stats_generation();
    let parsed = keel_parser::parse_statement(text, char_offset)?;
    let mut notices = Some(parsed.notices);
    let mut mk = |stmt, params| Prepared {
        text: text.to_string(),
        char_offset,
        stmt,
        params,
        catalog: catalog.clone(),
        stats_generation,
        notices: notices.take().unwrap_or_default(),
        lock_list: std::sync::OnceLock::new(),
    };
    let (stmt, parsed_text, lock_strengths, with_data) = match parsed.parsed {
        Parsed::Empty => return Ok(mk(Stmt::Empty, vec![])),
        Parsed::Utility(u) => {
            // DECLARE's query is analyzed now, as PostgreSQL's is: its errors come at Parse
            // and its parameters are the statement's.
            let params = match &u {
                Utility::DeclareCursor {
                    query,
                    query_offset,
                    ..
                } => {
                    let at = char_offset + query_offset;
                    prepare_in_body(catalog.clone(), sizes, query, at, param_types, pl_vars)?.params
                }
                _ => param_types.to_vec(),
            };
            return Ok(mk(Stmt::Utility(u), params));
        }
        Parsed::Statement {
            stmt,
            text,
            lock_strengths,
            with_data,
        } => (select_into_as_create(stmt), text, lock_strengths, with_data),
    };
    let (analyzed, params) = keel_analyzer::analyze_in_body(
        &catalog,
        &stmt,
        &parsed_text,
        char_offset,
        param_types,
        lock_strengths,
        pl_vars,
    )?;
    let s = match analyzed {
        Analyzed::Query(q) => Stmt::Query(keel_planner::plan_query(&catalog, sizes, &q)?),
        Analyzed::Modify(m) => Stmt::Modify(keel_planner::plan_modify(&catalog, sizes, &m)?),
        Analyzed::Ddl(stmt) if is_create_as(&stmt) => Stmt::CreateTableAs {
            create: stmt,
            with_data,
        },
        Analyzed::Ddl(stmt) => Stmt::Ddl(stmt),
    };
    Ok(mk(s, params))
}

fn is_create_as(stmt: &ast::Statement) -> bool {
    matches!(stmt, ast::Statement::CreateTable(c) if c.query.is_some())
}

/// `SELECT ... INTO [TEMP | UNLOGGED] [TABLE] name ...` is CREATE TABLE name AS the query
/// without its INTO, as in PostgreSQL's grammar.
fn select_into_as_create(mut stmt: Box<ast::Statement>) -> Box<ast::Statement> {
    let ast::Statement::Query(q) = stmt.as_mut() else {
        return stmt;
    };
    let ast::SetExpr::Select(sel) = q.body.as_mut() else {
        return stmt;
    };
    let name = match sel.into.as_ref().map(|i| i.targets.as_slice()) {
        Some([ast::Expr::Identifier(id)]) => ast::ObjectName::from(vec![id.clone()]),
        Some([ast::Expr::CompoundIdentifier(ids)]) => ast::ObjectName::from(ids.clone()),
        _ => return stmt,
    };
    let Some(into) = sel.into.take() else {
        return stmt;
    };
    let create = ast::helpers::stmt_create_table::CreateTableBuilder::new(name)
        .temporary(into.temporary)
        .unlogged(into.unlogged)
        .query(Some(q.clone()))
        .build();
    Box::new(ast::Statement::CreateTable(create))
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
        Stmt::Ddl(d) => ddl_command_name(d),
        Stmt::CreateTableAs {
            with_data: true, ..
        } => format!("SELECT {rows}"),
        Stmt::CreateTableAs { .. } => "CREATE TABLE AS".into(),
        _ => String::new(),
    }
}

/// A DDL statement's command name as PostgreSQL's errors give it ("DROP TABLE", "CREATE TABLE
/// AS"): its leading keywords, the object kind included.
fn ddl_command_name(stmt: &ast::Statement) -> String {
    if let ast::Statement::CreateTable(c) = stmt
        && c.query.is_some()
    {
        return "CREATE TABLE AS".into();
    }
    let text = stmt.to_string().to_uppercase();
    let mut words = text.split_whitespace();
    let first = words.next().unwrap_or_default();
    let skip = [
        "OR",
        "REPLACE",
        "UNIQUE",
        "TEMPORARY",
        "TEMP",
        "UNLOGGED",
        "IF",
        "NOT",
        "EXISTS",
    ];
    let kind = words.find(|w| !skip.contains(w)).unwrap_or_default();
    format!("{first} {kind}").trim().to_string()
}

#[cfg(test)]
mod tests;
// Engine-backed tests, written against the public API (`keel_sql::...`): part of the
// unit-test binary so CI links the engine once for this crate, not once per test file.
#[cfg(test)]
extern crate self as keel_sql;
#[cfg(test)]
mod exec_tests;
