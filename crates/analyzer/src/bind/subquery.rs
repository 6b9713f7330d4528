//! Subqueries in expressions: scalar, EXISTS, IN, ANY/ALL, and references to columns of
//! enclosing queries (correlation).
//!
//! While a subquery is bound, each enclosing level is a [`Frame`] on `Binder::outer`. A column
//! not found in the subquery's own scope is looked up in the frames, innermost first; the
//! enclosing level's expression for it is appended to that frame's `refs` and the subquery
//! sees `Expr::Outer(k)`. A reference two levels up goes through the middle level's frame the
//! same way, so every level only ever passes values one level down.

use super::{AggCtx, Binder, Scope, binary_op_name};
use crate::expr::{Expr, SubKind, SubPlan};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::CastContext;
use keel_types::{SqlType, TypeId};
use sqlparser::ast::{self, Spanned};
use std::sync::Arc;

/// One enclosing query level.
pub struct Frame {
    pub scope: Scope,
    /// When the enclosing level is aggregated: its group keys (outer references must be one).
    pub group: Option<Vec<Expr>>,
    /// Expressions of the enclosing level whose values the subquery reads as `Expr::Outer`.
    pub refs: Vec<Expr>,
}

/// Whether a lookup error means "not in this scope" (so an enclosing level may have it).
pub fn is_undefined(e: &PgError) -> bool {
    e.code == sqlstate::UNDEFINED_COLUMN
        || (e.code == sqlstate::UNDEFINED_TABLE && e.message.starts_with("missing FROM-clause"))
}

impl Binder<'_> {
    /// Resolves a column of an enclosing query; `err` is the error to report when no level has it.
    pub(crate) fn outer_column(
        &mut self,
        qual: Option<&str>,
        name: &str,
        err: PgError,
    ) -> PgResult<Expr> {
        let d = self.outer.len() - 1;
        match self.resolve_outer(d, qual, name) {
            Err(e) if is_undefined(&e) => Err(err),
            r => r,
        }
    }

    /// An expression valid one level inside frame `d` for the column.
    fn resolve_outer(&mut self, d: usize, qual: Option<&str>, name: &str) -> PgResult<Expr> {
        let e = match self.column(qual, name, &self.outer[d].scope) {
            Ok(Expr::Col(i, ty)) => match &self.outer[d].group {
                None => Expr::Col(i, ty),
                Some(g) => match g
                    .iter()
                    .position(|k| matches!(k, Expr::Col(gi, _) if *gi == i))
                {
                    Some(p) => Expr::Col(p, ty),
                    None => {
                        let shown = match qual {
                            Some(q) => format!("{q}.{name}"),
                            None => name.to_string(),
                        };
                        return Err(PgError::new(
                            sqlstate::GROUPING_ERROR,
                            format!("subquery uses ungrouped column \"{shown}\" from outer query"),
                        ));
                    }
                },
            },
            Ok(other) => other,
            Err(e) if is_undefined(&e) && d > 0 => self.resolve_outer(d - 1, qual, name)?,
            Err(e) => return Err(e),
        };
        let ty = e.ty();
        let refs = &mut self.outer[d].refs;
        refs.push(e);
        Ok(Expr::Outer(refs.len() - 1, ty))
    }

    /// Binds a subquery one level inside `scope`; returns its plan, output types and the
    /// enclosing-level expressions it references.
    pub(super) fn bind_subquery(
        &mut self,
        q: &ast::Query,
        scope: &Scope,
        agg: &Option<&mut AggCtx>,
    ) -> PgResult<(crate::query::Rel, Vec<TypeId>, Vec<Expr>)> {
        let frame = match agg.as_deref() {
            Some(a) => Frame {
                scope: a.input.clone(),
                group: Some(a.group.clone()),
                refs: vec![],
            },
            None => Frame {
                scope: scope.clone(),
                group: None,
                refs: vec![],
            },
        };
        // The enclosing SELECT watches `agg_seen` to detect its own aggregates.
        let agg_seen = self.agg_seen;
        self.outer.push(frame);
        let r = self.query(q);
        let frame = self.outer.pop();
        self.agg_seen = agg_seen;
        let plan = r?;
        let types = plan.columns.iter().map(|c| c.ty).collect();
        Ok((plan.root, types, frame.map(|f| f.refs).unwrap_or_default()))
    }

    pub(super) fn subplan(
        &mut self,
        kind: SubKind,
        plan: crate::query::Rel,
        outer_args: Vec<Expr>,
        ty: TypeId,
    ) -> Expr {
        let id = self.next_subplan;
        self.next_subplan += 1;
        Expr::SubPlan(Arc::new(SubPlan {
            id,
            kind,
            query: plan,
            outer_args,
            ty,
        }))
    }

    pub(crate) fn subquery_expr(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        use ast::Expr as E;
        match e {
            E::Subquery(q) => {
                let (plan, types, refs) = self.bind_subquery(q, scope, agg)?;
                if types.len() != 1 {
                    let err = PgError::new(
                        sqlstate::SYNTAX_ERROR,
                        "subquery must return only one column",
                    );
                    return Err(match self.position_near(e.span().start, true) {
                        Some(p) => err.with_position(p),
                        None => err,
                    });
                }
                Ok(self.subplan(SubKind::Scalar, plan, refs, types[0]))
            }
            E::Exists { subquery, negated } => {
                let (plan, _, refs) = self.bind_subquery(subquery, scope, agg)?;
                let x = self.subplan(SubKind::Exists, plan, refs, TypeId::Bool);
                Ok(if *negated { Expr::Not(Box::new(x)) } else { x })
            }
            E::InSubquery {
                expr,
                subquery,
                negated,
            } => {
                let x = self.quantified(expr, "=", subquery, false, scope, agg, e)?;
                Ok(if *negated { Expr::Not(Box::new(x)) } else { x })
            }
            E::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | E::AllOp {
                left,
                compare_op,
                right,
            } => {
                let E::Subquery(q) = right.as_ref() else {
                    return Err(PgError::unsupported("ANY/ALL over an array"));
                };
                let op = binary_op_name(compare_op)?;
                let all = matches!(e, E::AllOp { .. });
                self.quantified(left, op, q, all, scope, agg, e)
            }
            _ => Err(PgError::internal("not a subquery expression")),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn quantified(
        &mut self,
        lhs: &ast::Expr,
        op: &'static str,
        q: &ast::Query,
        all: bool,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
        whole: &ast::Expr,
    ) -> PgResult<Expr> {
        if let ast::Expr::Tuple(_) = lhs {
            return Err(PgError::unsupported(
                "row constructors with IN/ANY/ALL subqueries",
            ));
        }
        let mut l = self.expr(lhs, scope, agg)?;
        let (plan, types, refs) = self.bind_subquery(q, scope, agg)?;
        if types.len() != 1 {
            let msg = if types.len() > 1 {
                "subquery has too many columns"
            } else {
                "subquery has too few columns"
            };
            let err = PgError::new(sqlstate::SYNTAX_ERROR, msg);
            let _ = whole;
            return Err(match self.position_near(lhs.span().end, false) {
                Some(p) => err.with_position(p),
                None => err,
            });
        }
        let sub_ty = types[0];
        if l.ty() == TypeId::Unknown && sub_ty != TypeId::Unknown {
            l = self.coerce_in(l, SqlType::new(sub_ty), CastContext::Implicit)?;
        }
        let cmp = self
            .binary(op, Expr::Col(0, l.ty()), Expr::Col(1, sub_ty))
            .map_err(|err| {
                let at = (err.code == sqlstate::UNDEFINED_FUNCTION)
                    .then(|| self.operator_position_between(lhs, q.span().start))
                    .flatten();
                match at {
                    Some(p) => err.or_position(p),
                    None => err,
                }
            })?;
        if cmp.ty() != TypeId::Bool {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                "op ANY/ALL (array) requires operator to yield boolean",
            ));
        }
        let kind = SubKind::Quantified {
            lhs: Box::new(l),
            cmp: Box::new(cmp),
            all,
        };
        Ok(self.subplan(kind, plan, refs, TypeId::Bool))
    }
}
