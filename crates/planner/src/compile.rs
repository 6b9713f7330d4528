//! The last pass over a finished plan: the expressions the executor evaluates per row get
//! their integer and float8 arithmetic compiled into programs (`keel_analyzer::native`).
//! It runs after every rewrite (join re-basing, index-only column pruning), which match on
//! the tree forms; EXPLAIN deparses a program's source, so its output does not change.
//!
//! Index keys, hash keys, sort keys and `op ANY (array)` comparisons stay trees: the
//! executor reads some of their shapes, and they are evaluated once per probe or key.

use crate::plan::{ModifyKind, ModifyPlan, Plan, Recheck};
use keel_analyzer::expr::{ArrayExpr, Expr};
use keel_analyzer::native::Native;
use std::sync::Arc;

/// Compiles the per-row expressions of `plan` and of the statement's `subplans`.
pub(crate) fn query(plan: &mut Plan, subplans: &mut [Option<Plan>]) {
    node(plan);
    subplans.iter_mut().flatten().for_each(node);
}

pub(crate) fn modify(m: &mut ModifyPlan, subplans: &mut [Option<Plan>]) {
    match &mut m.kind {
        ModifyKind::Insert { source, row } => {
            node(source);
            row.iter_mut().for_each(expr);
        }
        ModifyKind::Update { filter, set, .. } => {
            filter.iter_mut().for_each(expr);
            set.iter_mut().for_each(|(_, e)| expr(e));
        }
        ModifyKind::Delete { filter, .. } => filter.iter_mut().for_each(expr),
    }
    if let Some((r, _)) = &mut m.returning {
        r.iter_mut().for_each(expr);
    }
    m.checks.iter_mut().for_each(|(_, e)| expr(e));
    if let Some(u) = m
        .on_conflict
        .as_mut()
        .and_then(|oc| Arc::make_mut(oc).update.as_mut())
    {
        u.set.iter_mut().for_each(|(_, e)| expr(e));
        u.filter.iter_mut().for_each(expr);
    }
    if let Some(rows) = m.instead_of.as_mut().and_then(|i| i.rows.as_mut()) {
        node(rows);
    }
    if let Some(t) = m.targets.as_mut() {
        node(t);
    }
    subplans.iter_mut().flatten().for_each(node);
}

fn node(plan: &mut Plan) {
    // A plan too deep to walk here (a UNION of thousands of branches) keeps its trees.
    if keel_common::stack::check().is_err() {
        return;
    }
    match plan {
        Plan::Scan { filter, run, .. } => {
            filter.iter_mut().for_each(expr);
            if let Recheck::Residual(Some(r)) = &mut run.recheck {
                expr(r);
            }
        }
        Plan::Values { rows } => rows.iter_mut().flatten().for_each(expr),
        Plan::Function { funcs, .. } => funcs
            .iter_mut()
            .for_each(|f| f.args.iter_mut().for_each(expr)),
        Plan::SystemView(_) | Plan::NamedRows { .. } => {}
        Plan::Append { children, .. } => children.iter_mut().for_each(node),
        Plan::Filter { input, pred } => {
            node(input);
            expr(pred);
        }
        Plan::Project { input, exprs, srf } => {
            node(input);
            exprs.iter_mut().for_each(expr);
            if let Some(s) = srf {
                s.funcs
                    .iter_mut()
                    .for_each(|f| f.args.iter_mut().for_each(expr));
            }
        }
        Plan::Join {
            left, right, on, ..
        } => {
            node(left);
            node(right);
            on.iter_mut().for_each(expr);
        }
        Plan::IndexNestLoop {
            outer,
            inner_filter,
            join_filter,
            ..
        } => {
            node(outer);
            inner_filter.iter_mut().for_each(expr);
            join_filter.iter_mut().for_each(expr);
        }
        Plan::SemiJoin { input, inner, .. } => {
            node(input);
            node(inner);
        }
        Plan::Agg { input, aggs, .. } => {
            node(input);
            for a in aggs {
                a.args.iter_mut().for_each(expr);
                a.filter.iter_mut().for_each(expr);
            }
        }
        Plan::Sort { input, .. }
        | Plan::LockRows { input, .. }
        | Plan::Limit { input, .. }
        | Plan::Distinct { input, .. } => node(input),
        Plan::SetOp { left, right, .. } => {
            node(left);
            node(right);
        }
    }
}

/// Replaces each largest compilable subtree of `root` by its program. Iterative: operator
/// chains can nest hundreds of thousands deep.
pub(crate) fn expr(root: &mut Expr) {
    let mut todo = vec![root];
    while let Some(e) = todo.pop() {
        if let Some(n) = Native::compile(e) {
            *e = Expr::Native(Arc::new(n));
            continue;
        }
        match e {
            Expr::Bin { l, r, .. } | Expr::Distinct { l, r, .. } => {
                todo.push(l);
                todo.push(r);
            }
            Expr::Un { arg, .. }
            | Expr::Not(arg)
            | Expr::IsNull(arg, _)
            | Expr::IsBool { arg, .. }
            | Expr::Cast { arg, .. } => todo.push(arg),
            Expr::And(args)
            | Expr::Or(args)
            | Expr::Func { args, .. }
            | Expr::Coalesce(args, _)
            | Expr::MinMax { args, .. } => todo.extend(args.iter_mut()),
            Expr::Case { whens, default, .. } => {
                for (w, t) in whens {
                    todo.push(w);
                    todo.push(t);
                }
                todo.push(default);
            }
            Expr::Row(r) => todo.extend(r.children_mut()),
            Expr::Array(a) => match &mut **a {
                ArrayExpr::Ctor { elems, .. } => todo.extend(elems.iter_mut()),
                ArrayExpr::Subscript { arr, subs, .. } => {
                    todo.push(arr);
                    for s in subs {
                        todo.extend(s.lower.iter_mut().chain(s.upper.iter_mut()));
                    }
                }
                ArrayExpr::Assign {
                    arr, subs, value, ..
                } => {
                    todo.push(arr);
                    for s in subs {
                        todo.extend(s.lower.iter_mut().chain(s.upper.iter_mut()));
                    }
                    todo.push(value);
                }
                ArrayExpr::Quantified { lhs, arr, .. } => {
                    todo.push(lhs);
                    todo.push(arr);
                }
            },
            Expr::Const(..)
            | Expr::Col(..)
            | Expr::Param(..)
            | Expr::Outer(..)
            | Expr::Special(..)
            | Expr::SubPlan(_)
            | Expr::Native(_) => {}
        }
    }
}
