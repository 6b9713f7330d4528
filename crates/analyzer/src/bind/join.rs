//! FROM-clause joins: [INNER] / LEFT / RIGHT / FULL / CROSS, with ON, USING or NATURAL.
//!
//! USING and NATURAL: the join condition is the equality of the named columns; a projection
//! then puts the merged columns first (COALESCE of both sides for FULL, the outer side for
//! LEFT/RIGHT), followed by all left and all right columns, where the sides' copies of the
//! merged columns are `hidden` (reachable only qualified), as PostgreSQL's `*` expansion and
//! name resolution require.

use super::{Binder, Scope, ScopeCol, fold};
use crate::expr::Expr;
use crate::query::Rel;
use keel_common::{PgError, PgResult, sqlstate};
use sqlparser::ast;

impl Binder<'_> {
    pub(crate) fn bind_from_joins(&mut self, twj: &ast::TableWithJoins) -> PgResult<(Rel, Scope)> {
        let (mut plan, mut scope) = self.bind_from_item(&twj.relation)?;
        for j in &twj.joins {
            if let ast::JoinOperator::CrossJoin(_) = &j.join_operator
                && let Some((rp, rs)) = self.lateral_function(&j.relation, &mut plan, &scope)?
                && let Rel::Project { srf: Some(_), .. } = &rp
            {
                (plan, scope) = (rp, rs);
                continue;
            }
            let (rplan, rscope) = self.bind_from_item(&j.relation)?;
            use ast::JoinOperator as J;
            let (left_join, right_join, cons) = match &j.join_operator {
                J::Join(c) | J::Inner(c) => (false, false, Some(c)),
                J::Left(c) | J::LeftOuter(c) => (true, false, Some(c)),
                J::Right(c) | J::RightOuter(c) => (false, true, Some(c)),
                J::FullOuter(c) => (true, true, Some(c)),
                J::CrossJoin(_) => (false, false, None),
                _ => return Err(PgError::unsupported("this join type")),
            };
            let left_width = scope.cols.len();
            let right_width = rscope.cols.len();
            let using: Vec<String> = match cons {
                Some(ast::JoinConstraint::Using(names)) => {
                    names.iter().map(|n| super::object_name(n).1).collect()
                }
                Some(ast::JoinConstraint::Natural) => scope
                    .cols
                    .iter()
                    .filter(|c| !c.hidden)
                    .filter(|c| rscope.cols.iter().any(|r| !r.hidden && r.name == c.name))
                    .map(|c| c.name.clone())
                    .fold(Vec::new(), |mut v, n| {
                        if !v.contains(&n) {
                            v.push(n);
                        }
                        v
                    }),
                _ => vec![],
            };
            let mut pairs = Vec::new();
            for name in &using {
                let find = |s: &Scope, side: &str| -> PgResult<(usize, ast::Ident)> {
                    let mut it = s
                        .cols
                        .iter()
                        .enumerate()
                        .filter(|(_, c)| !c.hidden && &c.name == name);
                    let first = it.next().ok_or_else(|| {
                        PgError::new(
                            sqlstate::UNDEFINED_COLUMN,
                            format!(
                                "column \"{name}\" specified in USING clause does not exist in {side} table"
                            ),
                        )
                    })?;
                    if it.next().is_some() {
                        return Err(PgError::new(
                            sqlstate::DUPLICATE_COLUMN,
                            format!(
                                "common column name \"{name}\" appears more than once in {side} table"
                            ),
                        ));
                    }
                    Ok((first.0, ast::Ident::new(name.clone())))
                };
                let (li, _) = find(&scope, "left")?;
                let (ri, _) = find(&rscope, "right")?;
                pairs.push((li, left_width + ri));
            }
            scope.cols.extend(rscope.cols);
            let on = match cons {
                Some(ast::JoinConstraint::On(e)) => Some(self.bool_expr(e, &scope, &mut None)?),
                Some(ast::JoinConstraint::Using(_)) | Some(ast::JoinConstraint::Natural) => {
                    let mut acc: Option<Expr> = None;
                    for &(li, ri) in &pairs {
                        let (lt, rt) = (scope.cols[li].ty, scope.cols[ri].ty);
                        let eq = self.binary("=", Expr::Col(li, lt), Expr::Col(ri, rt))?;
                        acc = Some(match acc {
                            None => eq,
                            Some(p) => Expr::and(p, eq),
                        });
                    }
                    acc
                }
                Some(ast::JoinConstraint::None) | None => None,
            };
            plan = Rel::Join {
                left: Box::new(plan),
                right: Box::new(rplan),
                on,
                left_join,
                right_join,
                left_width,
                right_width,
            };
            if !pairs.is_empty() {
                (plan, scope) = merge_using(plan, scope, &pairs, left_join, right_join);
            }
        }
        Ok((plan, scope))
    }
}

/// The USING projection: merged columns, then every joined column (copies hidden).
fn merge_using(
    plan: Rel,
    scope: Scope,
    pairs: &[(usize, usize)],
    left_join: bool,
    right_join: bool,
) -> (Rel, Scope) {
    let mut exprs = Vec::new();
    let mut cols = Vec::new();
    for &(li, ri) in pairs {
        let (l, r) = (&scope.cols[li], &scope.cols[ri]);
        let e = match (left_join, right_join) {
            (true, true) => Expr::Coalesce(vec![Expr::Col(li, l.ty), Expr::Col(ri, l.ty)], l.ty),
            (false, true) => Expr::Col(ri, r.ty),
            _ => Expr::Col(li, l.ty),
        };
        exprs.push(e);
        cols.push(ScopeCol {
            qualifier: None,
            ..l.clone()
        });
    }
    for (i, c) in scope.cols.into_iter().enumerate() {
        exprs.push(Expr::Col(i, c.ty));
        let hidden = c.hidden || pairs.iter().any(|&(l, r)| l == i || r == i);
        cols.push(ScopeCol { hidden, ..c });
    }
    let _ = fold;
    (
        Rel::Project {
            input: Box::new(plan),
            exprs,
            srf: None,
        },
        Scope { cols },
    )
}
