//! Views in FROM and as the target of a write.
//!
//! A view reference expands to its stored query, bound on its own (no outer columns, no WITH
//! queries of the referencing statement, no parameters), as PostgreSQL's rewriter substitutes
//! the view's `_RETURN` rule: the result is a subquery in FROM, which the planner flattens
//! like any other, so a WHERE on the view reaches the scans below it. The view's columns are
//! those CREATE VIEW recorded: a `SELECT *` in its text that now yields more columns is cut
//! back to them.
//!
//! A write to a view runs the view's INSTEAD OF row triggers for each row (an INSERT's rows,
//! or the view's rows an UPDATE or DELETE selects). A view without such a trigger for the
//! operation is written through to its base table when it is automatically updatable (one
//! table or view in FROM, no aggregates, DISTINCT, set operations ...: view_write.rs); one
//! that is not fails as PostgreSQL's does (55000, with the reason as DETAIL).

use super::{Binder, Scope, ScopeCol, fold};
use crate::expr::Expr;
use crate::query::Rel;
use keel_catalog::{Catalog, ColumnDef, TriggerTiming, ViewDef};
use keel_common::Oid;
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::{SqlType, TypeId};
use sqlparser::ast;
use std::sync::Arc;

/// How deep views may read views: beyond it the definitions form a cycle (CREATE OR REPLACE
/// VIEW can make one), reported as PostgreSQL's rewriter reports it.
const MAX_VIEW_DEPTH: u32 = 100;

/// The operation a write to a view performs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewWrite {
    Insert,
    Update,
    Delete,
}

impl Binder<'_> {
    /// The view `name` names, if it names one (unqualified or in `public`).
    pub fn view_named(&self, name: &ast::ObjectName) -> Option<Arc<ViewDef>> {
        let (schema, n) = super::object_name(name);
        if schema.as_deref().is_some_and(|s| s != "public") {
            return None;
        }
        self.catalog.views.by_name(&n).cloned()
    }

    /// `view [AS alias (cols)]` in FROM: the view's query and a scope of its columns.
    pub(crate) fn view_item(
        &mut self,
        view: &ViewDef,
        alias: Option<&ast::TableAlias>,
    ) -> PgResult<(Rel, Scope)> {
        let rel = self.view_rows(view)?;
        let qual = alias.map_or_else(|| view.name.clone(), |a| fold(&a.name));
        let cols = view
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| ScopeCol {
                qualifier: Some(qual.clone()),
                name: alias
                    .and_then(|a| a.columns.get(i))
                    .map_or_else(|| c.name.clone(), |a| fold(&a.name)),
                ty: c.ty.id,
                typmod: c.ty.typmod,
                table_oid: view.oid,
                attnum: (i + 1) as i16,
                hidden: false,
            })
            .collect();
        Ok((rel, Scope { cols }))
    }

    /// The view's rows: its query bound against this statement's catalog, projected to the
    /// columns CREATE VIEW recorded.
    pub fn view_rows(&mut self, view: &ViewDef) -> PgResult<Rel> {
        self.read_relations.push(view.oid);
        if self.view_depth >= MAX_VIEW_DEPTH {
            return Err(PgError::new(
                sqlstate::INVALID_OBJECT_DEFINITION,
                format!(
                    "infinite recursion detected in rules for relation \"{}\"",
                    view.name
                ),
            ));
        }
        let query = parse_view_query(view)?;
        let mut b = Binder::new(self.catalog, &[], &view.query, 0);
        b.next_subplan = self.next_subplan;
        b.view_depth = self.view_depth + 1;
        b.no_new_params = true;
        b.query_depth = self.query_depth;
        // Positions would point into the view's text, not the statement's.
        let q = b.query(&query).map_err(|mut e| {
            e.position = None;
            e
        })?;
        self.next_subplan = b.next_subplan;
        let n = view.columns.len();
        let same = q.columns.len() >= n
            && q.columns
                .iter()
                .zip(&view.columns)
                .all(|(o, c)| o.ty == c.ty.id);
        if !same {
            return Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!(
                    "the columns of view \"{}\" no longer match its definition",
                    view.name
                ),
            ));
        }
        if q.columns.len() == n {
            return Ok(q.root);
        }
        let exprs = view
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| Expr::Col(i, c.ty.id))
            .collect();
        Ok(Rel::Project {
            input: Box::new(q.root),
            exprs,
            srf: None,
        })
    }

    /// How `op` on `view` runs: by its INSTEAD OF row triggers (true) when it has one for
    /// the operation (enabled or not, as PostgreSQL decides), else through to its base
    /// table (false) when it is automatically updatable; else PostgreSQL's error (55000).
    pub fn check_view_write(&self, view: &ViewDef, op: ViewWrite) -> PgResult<bool> {
        let has_trigger = view.triggers.iter().any(|t| {
            t.row
                && t.timing == TriggerTiming::InsteadOf
                && match op {
                    ViewWrite::Insert => t.on_insert,
                    ViewWrite::Update => t.on_update,
                    ViewWrite::Delete => t.on_delete,
                }
        });
        if has_trigger {
            return Ok(true);
        }
        let (verb, event, word) = match op {
            ViewWrite::Insert => ("insert into", "INSERT", "inserting into"),
            ViewWrite::Update => ("update", "UPDATE", "updating"),
            ViewWrite::Delete => ("delete from", "DELETE", "deleting from"),
        };
        match not_updatable_reason(&parse_view_query(view)?, self.catalog) {
            Some(reason) => Err(PgError::new(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("cannot {verb} view \"{}\"", view.name),
            )
            .with_detail(reason)
            .with_hint(format!(
                "To enable {word} the view, provide an INSTEAD OF {event} trigger or an \
                 unconditional ON {event} DO INSTEAD rule."
            ))),
            None => Ok(false),
        }
    }
}

/// The view a simple view reads from, when its one FROM item is a view.
pub(crate) fn base_view(view: &ViewDef, cat: &Catalog) -> Option<Arc<ViewDef>> {
    let q = parse_view_query(view).ok()?;
    let ast::SetExpr::Select(s) = q.body.as_ref() else {
        return None;
    };
    match s.from.as_slice() {
        [twj] => match &twj.relation {
            ast::TableFactor::Table { name, .. } => {
                cat.views.by_name(&super::object_name(name).1).cloned()
            }
            _ => None,
        },
        _ => None,
    }
}

/// The view's stored query, parsed.
pub fn parse_view_query(view: &ViewDef) -> PgResult<ast::Query> {
    let mut stmts = keel_parser::parse::statements(&view.query).map_err(|f| {
        f.into_error(0, |e| {
            PgError::internal(format!("bad definition of view \"{}\": {e}", view.name))
        })
    })?;
    match (stmts.pop(), stmts.is_empty()) {
        (Some(ast::Statement::Query(q)), true) => Ok(*q),
        _ => Err(PgError::internal(format!(
            "bad definition of view \"{}\"",
            view.name
        ))),
    }
}

/// Why a view's query cannot be written through (PostgreSQL's
/// `view_query_is_auto_updatable` DETAIL), or None when it can be.
fn not_updatable_reason(q: &ast::Query, cat: &keel_catalog::Catalog) -> Option<&'static str> {
    if q.with.is_some() {
        return Some("Views containing WITH are not automatically updatable.");
    }
    let ast::SetExpr::Select(s) = q.body.as_ref() else {
        return Some(
            "Views containing UNION, INTERSECT, or EXCEPT are not automatically updatable.",
        );
    };
    if s.distinct.is_some() {
        return Some("Views containing DISTINCT are not automatically updatable.");
    }
    let grouped = match &s.group_by {
        ast::GroupByExpr::All(_) => true,
        ast::GroupByExpr::Expressions(e, _) => !e.is_empty(),
    };
    if grouped {
        return Some("Views containing GROUP BY are not automatically updatable.");
    }
    if s.having.is_some() {
        return Some("Views containing HAVING are not automatically updatable.");
    }
    if q.limit_clause.is_some() || q.fetch.is_some() {
        return Some("Views containing LIMIT or OFFSET are not automatically updatable.");
    }
    let single = match s.from.as_slice() {
        [twj] if twj.joins.is_empty() => match &twj.relation {
            ast::TableFactor::Table { name, args, .. } => {
                let n = super::object_name(name).1;
                args.is_none()
                    && (cat.table_by_name(&n).is_some() || cat.views.by_name(&n).is_some())
            }
            _ => false,
        },
        _ => false,
    };
    let text = s
        .projection
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>();
    if text.iter().any(|t| calls_any(t, super::is_aggregate_name)) {
        return Some("Views that return aggregate functions are not automatically updatable.");
    }
    if text.iter().any(|t| has_window(t)) {
        return Some("Views that return window functions are not automatically updatable.");
    }
    if text
        .iter()
        .any(|t| calls_any(t, |n| crate::srf::SetFunc::by_name(n).is_some()))
    {
        return Some("Views that return set-returning functions are not automatically updatable.");
    }
    if !single {
        return Some(
            "Views that do not select from a single table or view are not automatically updatable.",
        );
    }
    None
}

/// Whether some unquoted word of the SQL text that `is` accepts is followed by a token `next`
/// accepts (tokens, so quoted strings and identifiers never match).
fn word_before(
    text: &str,
    is: impl Fn(&str) -> bool,
    next: impl Fn(&sqlparser::tokenizer::Token) -> bool,
) -> bool {
    use sqlparser::tokenizer::{Token, Tokenizer};
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let Ok(tokens) = Tokenizer::new(&dialect, text).tokenize() else {
        return false;
    };
    let tokens: Vec<_> = tokens
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    tokens.windows(2).any(|w| match w {
        [Token::Word(word), t] => {
            word.quote_style.is_none() && is(&word.value.to_lowercase()) && next(t)
        }
        _ => false,
    })
}

/// Whether the SQL text calls a function whose name `is` accepts: a word followed by `(`.
fn calls_any(text: &str, is: impl Fn(&str) -> bool) -> bool {
    word_before(text, is, |t| {
        matches!(t, sqlparser::tokenizer::Token::LParen)
    })
}

/// Whether the SQL text has a window clause: `OVER (` or `OVER name`.
fn has_window(text: &str) -> bool {
    use sqlparser::tokenizer::Token;
    word_before(
        text,
        |w| w == "over",
        |t| matches!(t, Token::LParen | Token::Word(_)),
    )
}

/// The columns a CREATE VIEW's query yields, named by its column list where that gives
/// names, and the relations it reads (`text` and `char_offset` place errors in the
/// statement).
pub fn bind_view(
    cat: &Catalog,
    cv: &ast::CreateView,
    text: &str,
    char_offset: usize,
) -> PgResult<(Vec<ColumnDef>, Vec<Oid>)> {
    let names: Vec<String> = cv.columns.iter().map(|c| fold(&c.name)).collect();
    let too_many = "CREATE VIEW specifies more column names than columns";
    query_columns(cat, &cv.query, &names, too_many, text, char_offset)
}

/// The columns of the table a CREATE TABLE AS makes (see [`bind_view`]).
pub fn bind_create_as(
    cat: &Catalog,
    ct: &ast::CreateTable,
    text: &str,
    char_offset: usize,
) -> PgResult<(Vec<ColumnDef>, Vec<Oid>)> {
    let Some(q) = &ct.query else {
        return Err(PgError::internal("CREATE TABLE AS without a query"));
    };
    let names: Vec<String> = ct.columns.iter().map(|c| fold(&c.name)).collect();
    query_columns(
        cat,
        q,
        &names,
        "too many column names were specified",
        text,
        char_offset,
    )
}

/// The columns `query` yields, the first ones renamed by `names`, and the relations it reads.
fn query_columns(
    cat: &Catalog,
    query: &ast::Query,
    names: &[String],
    too_many: &str,
    text: &str,
    char_offset: usize,
) -> PgResult<(Vec<ColumnDef>, Vec<Oid>)> {
    let mut b = Binder::new(cat, &[], text, char_offset);
    b.no_new_params = true;
    let q = b.query(query)?;
    if names.len() > q.columns.len() {
        return Err(PgError::new(sqlstate::SYNTAX_ERROR, too_many));
    }
    let mut columns: Vec<ColumnDef> = Vec::with_capacity(q.columns.len());
    for (i, c) in q.columns.iter().enumerate() {
        let name = names.get(i).cloned().unwrap_or_else(|| c.name.clone());
        if columns.iter().any(|o| o.name == name) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_COLUMN,
                format!("column \"{name}\" specified more than once"),
            ));
        }
        // An unknown-typed literal becomes text, as PostgreSQL 10+ resolves view columns.
        let ty = match c.ty {
            TypeId::Unknown => SqlType::new(TypeId::Text),
            t => SqlType::with_typmod(t, c.typmod),
        };
        columns.push(ColumnDef {
            name,
            ty,
            not_null: false,
            default: None,
        });
    }
    let mut reads = Vec::new();
    for oid in b.read_relations {
        if !reads.contains(&oid) {
            reads.push(oid);
        }
    }
    Ok((columns, reads))
}
