//! Locking clauses: SELECT ... FOR UPDATE | NO KEY UPDATE | SHARE | KEY SHARE [OF t]
//! [NOWAIT | SKIP LOCKED], over one table. The table's rows (filtered and sorted) are locked
//! below the select list and LIMIT (`Rel::LockRows`), as PostgreSQL's LockRows node sits
//! below its Limit: rows skipped or no longer matching do not count towards the limit.

use super::Binder;
use crate::query::{LockStrength, LockWait, Rel};
use keel_common::{PgError, PgResult, sqlstate};
use sqlparser::ast::{self, Spanned};

/// A statement's locking clauses, merged as PostgreSQL merges those naming one table: the
/// strongest lock, NOWAIT over SKIP LOCKED over waiting.
pub struct Locking {
    strength: LockStrength,
    wait: LockWait,
    of: Vec<ast::ObjectName>,
}

impl Binder<'_> {
    /// The clauses of `q`, checked against what PostgreSQL refuses before binding.
    pub(super) fn locking(&self, q: &ast::Query) -> PgResult<Option<Locking>> {
        if q.locks.is_empty() {
            return Ok(None);
        }
        // Strengths the parser had to rewrite come in text order; the statement's own
        // clauses are its last ones.
        let rewritten = self
            .lock_strengths
            .len()
            .checked_sub(q.locks.len())
            .map(|from| &self.lock_strengths[from..]);
        let mut out = Locking {
            strength: LockStrength::KeyShare,
            wait: LockWait::Block,
            of: Vec::new(),
        };
        for (i, l) in q.locks.iter().enumerate() {
            let s = match (rewritten, &l.lock_type) {
                (Some(r), _) if !r.is_empty() => r[i],
                (_, ast::LockType::Update) => LockStrength::Update,
                (_, ast::LockType::Share) => LockStrength::Share,
            };
            out.strength = out.strength.max(s);
            let w = match l.nonblock {
                None => LockWait::Block,
                Some(ast::NonBlock::SkipLocked) => LockWait::SkipLocked,
                Some(ast::NonBlock::Nowait) => LockWait::Nowait,
            };
            out.wait = out.wait.max(w);
            out.of.extend(l.of.iter().cloned());
        }
        let clause = out.strength.clause();
        let refuse = |what: &str| {
            Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!("{clause} is not allowed with {what}"),
            ))
        };
        if self.query_depth > 1 {
            return Err(PgError::unsupported(format!("{clause} in a subquery")));
        }
        match q.body.as_ref() {
            ast::SetExpr::Select(s) => {
                if s.distinct.is_some() {
                    return refuse("DISTINCT clause");
                }
                let grouped = match &s.group_by {
                    ast::GroupByExpr::Expressions(e, _) => !e.is_empty(),
                    ast::GroupByExpr::All(_) => true,
                };
                if grouped {
                    return refuse("GROUP BY clause");
                }
                if s.having.is_some() {
                    return refuse("HAVING clause");
                }
            }
            ast::SetExpr::SetOperation { .. } => return refuse("UNION/INTERSECT/EXCEPT"),
            _ => {}
        }
        Ok(Some(out))
    }

    /// Puts the row locking below the select list of the bound SELECT `plan`.
    pub(super) fn lock_rows(&self, plan: Rel, l: Locking) -> PgResult<Rel> {
        let clause = l.strength.clause();
        let Rel::Project { input, exprs, srf } = plan else {
            return Err(PgError::unsupported(format!(
                "{clause} on a query without a table"
            )));
        };
        let (table, alias, recheck) = match one_table(&input) {
            Some(t) => t,
            None if contains_agg(&input) => {
                return Err(PgError::new(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    format!("{clause} is not allowed with aggregate functions"),
                ));
            }
            None => {
                return Err(PgError::unsupported(format!(
                    "{clause} over a join, a subquery or a function in FROM"
                )));
            }
        };
        for name in &l.of {
            let named = name.0.last().and_then(|p| p.as_ident()).map(super::fold);
            let matches = match (&alias, named.as_deref()) {
                (Some(a), Some(n)) => a == n,
                (None, Some(n)) => n == table.name,
                _ => false,
            };
            if !matches {
                return Err(self.at(
                    PgError::new(
                        sqlstate::UNDEFINED_TABLE,
                        format!(
                            "relation \"{}\" in {clause} clause not found in FROM clause",
                            named.unwrap_or_default()
                        ),
                    ),
                    name.span(),
                ));
            }
        }
        let recheck = recheck.cloned();
        Ok(Rel::Project {
            input: Box::new(Rel::LockRows {
                input,
                table,
                recheck,
                strength: l.strength,
                wait: l.wait,
            }),
            exprs,
            srf,
        })
    }
}

/// The table under a sort and a filter, its alias and the filter: the shapes a one-table
/// SELECT binds to.
fn one_table(
    r: &Rel,
) -> Option<(
    std::sync::Arc<keel_catalog::TableDef>,
    Option<String>,
    Option<&crate::expr::Expr>,
)> {
    match r {
        Rel::Sort { input, .. } => one_table(input),
        Rel::Filter { input, pred } => match input.as_ref() {
            Rel::Scan { table, alias } => Some((table.clone(), alias.clone(), Some(pred))),
            _ => None,
        },
        Rel::Scan { table, alias } => Some((table.clone(), alias.clone(), None)),
        _ => None,
    }
}

fn contains_agg(r: &Rel) -> bool {
    match r {
        Rel::Agg { .. } => true,
        Rel::Sort { input, .. } | Rel::Filter { input, .. } | Rel::Limit { input, .. } => {
            contains_agg(input)
        }
        _ => false,
    }
}
