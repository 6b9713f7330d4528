//! The analyzer: a parsed statement to a typed query tree.
//!
//! [`bind`] resolves names against the catalog and types every expression, following
//! PostgreSQL's rules (unknown literals and parameters take their type from context). The
//! result, a [`query::Query`] or [`query::ModifyQuery`], says *what* the statement computes;
//! it makes no choice of access path, join order or join method: that is the planner's.
//! Expressions ([`expr::Expr`]) are plain data; the executor evaluates them.

pub mod bind;
pub mod expr;
pub mod native;
pub mod query;
pub mod srf;

use keel_catalog::Catalog;
use keel_common::{PgError, PgResult};
use keel_types::TypeId;
use query::{ModifyQuery, Query};
use sqlparser::ast;

/// What a statement is, once analyzed.
pub enum Analyzed {
    Query(Query),
    Modify(ModifyQuery),
    /// DDL is bound when executed (it needs the transaction's catalog at that time).
    Ddl(Box<ast::Statement>),
}

/// Analyzes one parsed statement. `text` is the text it was parsed from and `char_offset` its
/// character offset in the query string (for error positions). Returns the tree and the
/// final parameter types (unresolved ones are text).
pub fn analyze(
    catalog: &Catalog,
    stmt: &ast::Statement,
    text: &str,
    char_offset: usize,
    param_types: &[TypeId],
    lock_strengths: Vec<query::LockStrength>,
) -> PgResult<(Analyzed, Vec<TypeId>)> {
    analyze_in_body(
        catalog,
        stmt,
        text,
        char_offset,
        param_types,
        lock_strengths,
        None,
    )
}

/// [`analyze`] of a statement of a PL/pgSQL body whose variables became parameters `pl_vars`.
pub fn analyze_in_body(
    catalog: &Catalog,
    stmt: &ast::Statement,
    text: &str,
    char_offset: usize,
    param_types: &[TypeId],
    lock_strengths: Vec<query::LockStrength>,
    pl_vars: Option<&bind::PlVars>,
) -> PgResult<(Analyzed, Vec<TypeId>)> {
    let mut b = bind::Binder::new(catalog, param_types, text, char_offset);
    b.lock_strengths = lock_strengths;
    b.pl_vars = pl_vars.cloned();
    let a = match stmt {
        ast::Statement::Query(q) => Analyzed::Query(b.query(q)?),
        ast::Statement::Insert(i) => Analyzed::Modify(b.insert(i)?),
        ast::Statement::Update(u) => Analyzed::Modify(b.update(u)?),
        ast::Statement::Delete(d) => Analyzed::Modify(b.delete(d)?),
        ast::Statement::CreateTable(ct) if ct.query.is_some() => {
            // Bound here for errors at their place in the statement; the DDL binds it again
            // against the catalog it changes.
            bind::view::bind_create_as(catalog, ct, text, char_offset)?;
            Analyzed::Ddl(Box::new(stmt.clone()))
        }
        ast::Statement::CreateTable(_)
        | ast::Statement::Drop { .. }
        | ast::Statement::CreateIndex(_)
        | ast::Statement::AlterTable(_)
        | ast::Statement::Truncate(_)
        | ast::Statement::CreateSequence { .. }
        | ast::Statement::CreateFunction(_)
        | ast::Statement::AlterFunction(_)
        | ast::Statement::DropFunction(_)
        | ast::Statement::CreateTrigger(_)
        | ast::Statement::CreateType { .. }
        | ast::Statement::DropTrigger(_) => Analyzed::Ddl(Box::new(stmt.clone())),
        ast::Statement::CreateView(cv) => {
            // Bound here for errors at their place in the statement; the DDL binds it again
            // against the catalog it changes.
            bind::view::bind_view(catalog, cv, text, char_offset)?;
            Analyzed::Ddl(Box::new(stmt.clone()))
        }
        other => {
            let s = other.to_string();
            let words: Vec<&str> = s.split_whitespace().take(2).collect();
            return Err(PgError::unsupported(format!(
                "statement {}",
                words.join(" ").to_uppercase()
            )));
        }
    };
    Ok((a, b.finish_params()))
}
