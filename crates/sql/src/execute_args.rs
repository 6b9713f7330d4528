//! EXECUTE's argument list: parsed as the select list of `select <arguments>` placed so that
//! each argument keeps its position in the query string, counted against the prepared
//! statement's parameters, then bound and coerced to their types.

use keel_analyzer::expr::Expr;
use keel_catalog::Catalog;
use keel_common::{PgError, PgResult, sqlstate};
use keel_parser::Parsed;
use keel_types::TypeId;
use sqlparser::ast;

const HEAD: &str = "select ";

/// The arguments `args` (at character `at` of the query string) of `EXECUTE name`, bound to
/// the statement's parameter types `targets`.
pub fn bind_execute_args(
    catalog: &Catalog,
    name: &str,
    args: &str,
    at: usize,
    targets: &[TypeId],
) -> PgResult<Vec<Expr>> {
    let wrong = |got: usize| {
        PgError::new(
            sqlstate::SYNTAX_ERROR,
            format!("wrong number of parameters for prepared statement \"{name}\""),
        )
        .with_detail(format!(
            "Expected {} parameters but got {got}.",
            targets.len()
        ))
    };
    if args.trim().is_empty() {
        return match targets.len() {
            0 => Ok(Vec::new()),
            _ => Err(wrong(0)),
        };
    }
    // EXECUTE's own word and name come before the arguments: there is room for the head.
    let offset = at.saturating_sub(HEAD.len());
    let text = format!("{HEAD}{args}");
    let parsed = keel_parser::parse_statement(&text, offset)?;
    let Parsed::Statement { stmt, text, .. } = parsed.parsed else {
        return Err(PgError::internal(
            "EXECUTE arguments did not parse as a select list",
        ));
    };
    let ast::Statement::Query(q) = stmt.as_ref() else {
        return Err(PgError::internal(
            "EXECUTE arguments did not parse as a select list",
        ));
    };
    let ast::SetExpr::Select(sel) = q.body.as_ref() else {
        return Err(PgError::internal(
            "EXECUTE arguments did not parse as a select list",
        ));
    };
    let mut exprs = Vec::with_capacity(sel.projection.len());
    for item in &sel.projection {
        match item {
            ast::SelectItem::UnnamedExpr(e) => exprs.push(e.clone()),
            _ => {
                return Err(PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    "syntax error in EXECUTE arguments",
                ));
            }
        }
    }
    if exprs.len() != targets.len() {
        return Err(wrong(exprs.len()));
    }
    keel_analyzer::bind::execute_args::bind_execute_args(catalog, &exprs, &text, offset, targets)
}
