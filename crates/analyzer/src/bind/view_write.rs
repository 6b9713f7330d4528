//! Writes through an automatically updatable view, as PostgreSQL's rewriteTargetView does
//! them: the write becomes one on the view's base table. A view column that is a plain
//! column of the base relation can be written; the others (computed ones) are read-only
//! (0A000 when written). UPDATE and DELETE see only the rows the view shows: its WHERE (and
//! those of the views below it) joins the statement's. RETURNING reads the view's columns,
//! computed from the written base row. The base table's own triggers and constraints apply;
//! the view's statement triggers do not fire (nor do they in PostgreSQL).
//!
//! The write is first bound against the view's columns, as any write to a view is, then moved
//! onto the base table by substituting, in every expression, each view column by its
//! expression over the base row (`substituted`).

use super::Binder;
use crate::expr::{Expr, Special, SubKind, SubPlan};
use crate::query::{ModifyKind, ModifyQuery, Rel};
use keel_catalog::{TableDef, TriggerTiming, ViewDef};
use keel_common::{PgError, PgResult, sqlstate};
use std::sync::Arc;

/// A view resolved onto its base table.
pub(crate) struct Updatable {
    pub base: Arc<TableDef>,
    /// Each view column as an expression over the base table's row.
    pub exprs: Vec<Expr>,
    /// The conditions of the view (and the views below it) over the base row.
    pub pred: Option<Expr>,
}

impl Updatable {
    fn base_column(&self, i: usize) -> Option<usize> {
        match self.exprs.get(i) {
            Some(Expr::Col(j, _)) => Some(*j),
            _ => None,
        }
    }
}

/// `rel` (a simple view's rows) resolved onto its base table; None when it is not one table
/// below projections, filters and sorts.
fn flatten(rel: &Rel) -> PgResult<Option<Updatable>> {
    Ok(match rel {
        Rel::Scan { table, .. } => {
            let exprs = (table.columns.iter().enumerate())
                .map(|(i, c)| Expr::Col(i, c.ty.id))
                .collect();
            Some(Updatable {
                base: table.clone(),
                exprs,
                pred: None,
            })
        }
        Rel::Filter { input, pred } => match flatten(input)? {
            Some(u) => {
                let p2 = substituted(pred, &u.exprs)?;
                let pred = Some(match u.pred {
                    Some(p) => Expr::and(p, p2),
                    None => p2,
                });
                Some(Updatable { pred, ..u })
            }
            None => None,
        },
        Rel::Project {
            input,
            exprs,
            srf: None,
        } => match flatten(input)? {
            Some(u) => {
                let exprs = exprs
                    .iter()
                    .map(|e| substituted(e, &u.exprs))
                    .collect::<PgResult<_>>()?;
                Some(Updatable { exprs, ..u })
            }
            None => None,
        },
        Rel::Sort { input, .. } => flatten(input)?,
        _ => None,
    })
}

/// `e` with each column reference `Col(i)` replaced by `with[i]`.
pub(crate) fn substituted(e: &Expr, with: &[Expr]) -> PgResult<Expr> {
    keel_common::stack::check()?;
    let s = |e: &Expr| substituted(e, with);
    let b = |e: &Expr| substituted(e, with).map(Box::new);
    let all = |v: &[Expr]| v.iter().map(s).collect::<PgResult<Vec<_>>>();
    Ok(match e {
        Expr::Col(i, _) => with
            .get(*i)
            .cloned()
            .ok_or_else(|| PgError::internal("view column out of range"))?,
        Expr::Const(..) | Expr::Param(..) | Expr::Outer(..) => e.clone(),
        Expr::Native(n) => s(&n.source)?,
        Expr::Bin { op, f, l, r, ty } => Expr::Bin {
            op,
            f: *f,
            l: b(l)?,
            r: b(r)?,
            ty: *ty,
        },
        Expr::Un { f, arg, ty } => Expr::Un {
            f: *f,
            arg: b(arg)?,
            ty: *ty,
        },
        Expr::Not(a) => Expr::Not(b(a)?),
        Expr::And(a) => Expr::And(all(a)?),
        Expr::Or(a) => Expr::Or(all(a)?),
        Expr::IsNull(a, n) => Expr::IsNull(b(a)?, *n),
        Expr::Distinct { l, r, eq, negated } => Expr::Distinct {
            l: b(l)?,
            r: b(r)?,
            eq: *eq,
            negated: *negated,
        },
        Expr::IsBool {
            arg,
            value,
            negated,
        } => Expr::IsBool {
            arg: b(arg)?,
            value: *value,
            negated: *negated,
        },
        Expr::Cast { arg, from, to, ctx } => Expr::Cast {
            arg: b(arg)?,
            from: *from,
            to: *to,
            ctx: *ctx,
        },
        Expr::Func { f, args } => Expr::Func {
            f: *f,
            args: all(args)?,
        },
        Expr::Special(sp, ty) => Expr::Special(
            match sp {
                Special::Setval(q, a, v) => {
                    Special::Setval(q.clone(), b(a)?, v.as_deref().map(b).transpose()?)
                }
                Special::Sleep(a) => Special::Sleep(b(a)?),
                Special::RegClassName(a) => Special::RegClassName(b(a)?),
                Special::Advisory(c, args) => Special::Advisory(*c, all(args)?),
                Special::UserFunction(c, args) => Special::UserFunction(c.clone(), all(args)?),
                Special::TableOid(t, args) => Special::TableOid(t.clone(), all(args)?),
                other => other.clone(),
            },
            *ty,
        ),
        Expr::Case { whens, default, ty } => Expr::Case {
            whens: whens
                .iter()
                .map(|(w, t)| Ok((s(w)?, s(t)?)))
                .collect::<PgResult<_>>()?,
            default: b(default)?,
            ty: *ty,
        },
        Expr::Coalesce(a, ty) => Expr::Coalesce(all(a)?, *ty),
        Expr::MinMax { args, greatest, ty } => Expr::MinMax {
            args: all(args)?,
            greatest: *greatest,
            ty: *ty,
        },
        Expr::Array(a) => Expr::Array(Box::new(a.map_children(&mut |c| s(c))?)),
        Expr::Row(r) => Expr::Row(Box::new(r.map_children(&mut |c| s(c))?)),
        // The subquery's own query reads its own rows; its outer arguments and left operand
        // are evaluated on this row. `cmp` reads [lhs, subquery value], not this row.
        Expr::SubPlan(sp) => Expr::SubPlan(Arc::new(SubPlan {
            id: sp.id,
            kind: match &sp.kind {
                SubKind::Quantified { lhs, cmp, all } => SubKind::Quantified {
                    lhs: b(lhs)?,
                    cmp: cmp.clone(),
                    all: *all,
                },
                k => k.clone(),
            },
            query: sp.query.clone(),
            outer_args: all(&sp.outer_args)?,
            ty: sp.ty,
        })),
    })
}

impl Binder<'_> {
    /// `view` resolved onto its base table, or 0A000 when keel cannot write through
    /// it (a view below it with INSTEAD OF triggers, or a shape PostgreSQL rewrites that keel
    /// does not).
    pub(crate) fn updatable(&mut self, view: &ViewDef) -> PgResult<Updatable> {
        let mut below = super::view::base_view(view, self.catalog);
        while let Some(v) = below {
            if v.triggers
                .iter()
                .any(|t| t.row && t.timing == TriggerTiming::InsteadOf)
            {
                return Err(PgError::unsupported(format!(
                    "writing through view \"{}\" into view \"{}\", which has INSTEAD OF triggers",
                    view.name, v.name
                )));
            }
            below = super::view::base_view(&v, self.catalog);
        }
        let rel = self.view_rows(view)?;
        match flatten(&rel)? {
            Some(u) => Ok(u),
            None => Err(PgError::unsupported(format!(
                "writing through view \"{}\", which keel cannot resolve onto its base table",
                view.name
            ))),
        }
    }

    /// The write `m`, bound against the view's columns, as the same write on the base
    /// table. `given` marks, for INSERT, the view columns the statement gives values to.
    pub(crate) fn onto_base(
        &mut self,
        m: ModifyQuery,
        view: &ViewDef,
        upd: Updatable,
        given: &[bool],
    ) -> PgResult<ModifyQuery> {
        let base = upd.base.clone();
        let read_only = |verb: &str, i: usize| {
            PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!(
                    "cannot {verb} column \"{}\" of view \"{}\"",
                    view.columns[i].name, view.name
                ),
            )
            .with_detail(
                "View columns that are not columns of their base relation are not updatable.",
            )
        };
        let with_view = |f: Option<Expr>| -> PgResult<Option<Expr>> {
            let f = f.map(|f| substituted(&f, &upd.exprs)).transpose()?;
            Ok(match (upd.pred.clone(), f) {
                (Some(p), Some(f)) => Some(Expr::and(p, f)),
                (p, f) => p.or(f),
            })
        };
        let (kind, refs) = match m.kind {
            ModifyKind::Insert { source, row } => {
                let mut full = Vec::with_capacity(base.columns.len());
                for j in 0..base.columns.len() {
                    full.push(self.default_expr(&base, j)?);
                }
                for (i, e) in row.into_iter().enumerate() {
                    if !given.get(i).copied().unwrap_or(false) {
                        continue;
                    }
                    match upd.base_column(i) {
                        Some(j) => full[j] = e,
                        None => return Err(read_only("insert into", i)),
                    }
                }
                (ModifyKind::Insert { source, row: full }, Vec::new())
            }
            ModifyKind::Update { filter, set } => {
                let mut base_set = Vec::with_capacity(set.len());
                for (i, e) in set {
                    let j = upd.base_column(i).ok_or_else(|| read_only("update", i))?;
                    base_set.push((j, substituted(&e, &upd.exprs)?));
                }
                let kind = ModifyKind::Update {
                    filter: with_view(filter)?,
                    set: base_set,
                };
                (kind, self.ref_checks(&base))
            }
            ModifyKind::Delete { filter } => {
                let kind = ModifyKind::Delete {
                    filter: with_view(filter)?,
                };
                (kind, self.ref_checks(&base))
            }
        };
        let returning = match m.returning {
            Some((exprs, cols)) => Some((
                exprs
                    .iter()
                    .map(|e| substituted(e, &upd.exprs))
                    .collect::<PgResult<_>>()?,
                cols,
            )),
            None => None,
        };
        let fks = match kind {
            ModifyKind::Delete { .. } => Vec::new(),
            _ => self.fk_checks(&base),
        };
        Ok(ModifyQuery {
            types: base.columns.iter().map(|c| c.ty.id).collect(),
            fks,
            refs,
            checks: self.check_exprs(&base)?,
            table: base,
            kind,
            returning,
            instead_of: None,
            on_conflict: None,
        })
    }
}
