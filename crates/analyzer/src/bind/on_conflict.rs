//! INSERT ... ON CONFLICT: the arbiter indexes and the DO UPDATE action.
//!
//! The arbiters are inferred as PostgreSQL's infer_arbiter_indexes does for the forms keel
//! has (plain unique B-tree indexes, no expressions or predicates): a conflict target of
//! columns names every unique index whose column set is exactly those columns; ON
//! CONSTRAINT names one; no target (DO NOTHING only) means every unique index.

use super::query::table_scope;
use super::{Binder, Scope};
use crate::query::{ConflictUpdate, OnConflict};
use keel_catalog::{IndexDef, TableDef};
use keel_common::{PgError, PgResult, sqlstate};
use sqlparser::ast::{self, Spanned};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Span, Token, Tokenizer};
use std::collections::BTreeSet;
use std::sync::Arc;

impl Binder<'_> {
    pub(super) fn on_conflict(
        &mut self,
        ins: &ast::Insert,
        oc: &ast::OnConflict,
        table: &Arc<TableDef>,
        qual: &str,
    ) -> PgResult<OnConflict> {
        let uniques = || {
            self.catalog
                .indexes_of(table.oid)
                .filter(|i| i.unique)
                .cloned()
                .collect::<Vec<Arc<IndexDef>>>()
        };
        let arbiters = match &oc.conflict_target {
            None => {
                if matches!(oc.action, ast::OnConflictAction::DoUpdate(_)) {
                    let e = PgError::new(
                        sqlstate::SYNTAX_ERROR,
                        "ON CONFLICT DO UPDATE requires inference specification or constraint name",
                    )
                    .with_hint("For example, ON CONFLICT (column_name).");
                    return Err(match self.on_conflict_span(ins) {
                        Some(s) => self.at(e, s),
                        None => e,
                    });
                }
                uniques()
            }
            Some(ast::ConflictTarget::Columns(cols)) => {
                let mut wanted = BTreeSet::new();
                // PostgreSQL places errors in the target at its opening parenthesis.
                let paren = cols.first().map(|c| {
                    let mut s = c.span;
                    s.start.column = s.start.column.saturating_sub(1).max(1);
                    s
                });
                for c in cols {
                    let n = super::fold(c);
                    let i = table.column_index(&n).ok_or_else(|| {
                        self.at(
                            PgError::new(
                                sqlstate::UNDEFINED_COLUMN,
                                format!("column \"{n}\" does not exist"),
                            ),
                            paren.unwrap_or(c.span),
                        )
                    })?;
                    wanted.insert(i);
                }
                let found: Vec<_> = uniques()
                    .into_iter()
                    .filter(|i| i.columns.iter().copied().collect::<BTreeSet<_>>() == wanted)
                    .collect();
                if found.is_empty() {
                    return Err(no_matching_constraint());
                }
                found
            }
            Some(ast::ConflictTarget::OnConstraint(name)) => {
                let n = super::object_name(name).1;
                match self
                    .catalog
                    .indexes_of(table.oid)
                    .find(|i| i.name == n)
                    .cloned()
                {
                    Some(i) if i.unique => vec![i],
                    Some(_) => return Err(no_matching_constraint()),
                    None if table.checks.iter().any(|c| c.name == n)
                        || table.foreign_keys.iter().any(|f| f.name == n) =>
                    {
                        return Err(PgError::new(
                            sqlstate::WRONG_OBJECT_TYPE,
                            "constraint in ON CONFLICT clause has no associated index",
                        ));
                    }
                    None => {
                        return Err(PgError::new(
                            sqlstate::UNDEFINED_OBJECT,
                            format!(
                                "constraint \"{n}\" for table \"{}\" does not exist",
                                table.name
                            ),
                        ));
                    }
                }
            }
        };
        let update = match &oc.action {
            ast::OnConflictAction::DoNothing => None,
            ast::OnConflictAction::DoUpdate(d) => {
                // The existing row under the target's name, then EXCLUDED, the row proposed.
                let mut scope = table_scope(table, qual);
                scope.cols.extend(table_scope(table, "excluded").cols);
                let set = self.assignments(table, &d.assignments, &scope)?;
                let filter = self.conflict_where(&scope, &d.selection)?;
                Some(ConflictUpdate { set, filter })
            }
        };
        Ok(OnConflict {
            arbiters,
            any_unique: oc.conflict_target.is_none(),
            target_name: qual.to_string(),
            update,
        })
    }

    fn conflict_where(
        &mut self,
        scope: &Scope,
        sel: &Option<ast::Expr>,
    ) -> PgResult<Option<crate::expr::Expr>> {
        sel.as_ref()
            .map(|w| self.bool_expr(w, scope, &mut None))
            .transpose()
    }

    /// Where `ON CONFLICT` starts in the statement (its `ON`), for error positions.
    fn on_conflict_span(&self, ins: &ast::Insert) -> Option<Span> {
        let after = ins.source.as_ref().map(|s| s.span().end);
        let toks = Tokenizer::new(&PostgreSqlDialect {}, self.text)
            .tokenize_with_location()
            .ok()?;
        let words: Vec<_> = toks
            .iter()
            .filter(|t| !matches!(t.token, Token::Whitespace(_)))
            .collect();
        words.windows(2).find_map(|w| {
            let is = |t: &Token, k: Keyword| matches!(t, Token::Word(x) if x.keyword == k);
            let late = after.is_none_or(|a| {
                (w[0].span.start.line, w[0].span.start.column) >= (a.line, a.column)
            });
            (late && is(&w[0].token, Keyword::ON) && is(&w[1].token, Keyword::CONFLICT))
                .then_some(w[0].span)
        })
    }
}

fn no_matching_constraint() -> PgError {
    PgError::new(
        sqlstate::INVALID_COLUMN_REFERENCE,
        "there is no unique or exclusion constraint matching the ON CONFLICT specification",
    )
}
