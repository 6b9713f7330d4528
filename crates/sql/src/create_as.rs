//! The rows of CREATE TABLE AS: once keel-commands has made the table, its query's rows go in
//! through an INSERT planned against the catalog that has it, as any INSERT ... SELECT.

use crate::{Prepared, RelSizes, Stmt};
use keel_analyzer::Analyzed;
use keel_catalog::Catalog;
use keel_common::{PgError, PgResult};
use sqlparser::ast;
use std::sync::Arc;

/// The table a CREATE TABLE AS makes, as its name folds.
pub fn table_name(create: &ast::Statement) -> PgResult<String> {
    let ast::Statement::CreateTable(ct) = create else {
        return Err(PgError::internal("not a CREATE TABLE AS"));
    };
    Ok(keel_analyzer::bind::object_name(&ct.name).1)
}

/// `INSERT INTO table query` for CREATE TABLE AS `create` (of statement text `text`, at
/// `char_offset` in its query string), planned against `catalog`.
pub fn prepare_insert(
    catalog: Arc<Catalog>,
    sizes: &dyn RelSizes,
    create: &ast::Statement,
    text: &str,
    char_offset: usize,
) -> PgResult<Prepared> {
    let ast::Statement::CreateTable(ct) = create else {
        return Err(PgError::internal("not a CREATE TABLE AS"));
    };
    let Some(query) = &ct.query else {
        return Err(PgError::internal("CREATE TABLE AS without a query"));
    };
    let template = sqlparser::parser::Parser::parse_sql(
        &sqlparser::dialect::PostgreSqlDialect {},
        "INSERT INTO t SELECT 1",
    )
    .map_err(|e| PgError::internal(e.to_string()))?;
    let Some(ast::Statement::Insert(mut insert)) = template.into_iter().next() else {
        return Err(PgError::internal("INSERT template"));
    };
    insert.table = ast::TableObject::TableName(ct.name.clone());
    insert.source = Some(query.clone());
    let stmt = ast::Statement::Insert(insert);
    let stats_generation = sizes.stats_generation();
    let (analyzed, params) =
        keel_analyzer::analyze_in_body(&catalog, &stmt, text, char_offset, &[], Vec::new(), None)?;
    let Analyzed::Modify(m) = analyzed else {
        return Err(PgError::internal("INSERT bound as something else"));
    };
    let plan = keel_planner::plan_modify(&catalog, sizes, &m)?;
    Ok(Prepared {
        text: text.to_string(),
        char_offset,
        stmt: Stmt::Modify(plan),
        params,
        catalog,
        stats_generation,
        notices: Vec::new(),
        lock_list: std::sync::OnceLock::new(),
    })
}
