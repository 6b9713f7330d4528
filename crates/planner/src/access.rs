//! Planning helpers: conjuncts, column ranges and hash-join keys.

use keel_analyzer::expr::Expr;

pub(crate) fn conjuncts(e: Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::And(args) => args.into_iter().for_each(|a| conjuncts(a, out)),
        e => out.push(e),
    }
}

/// Widens `lo..hi` to the columns `e` references. What it does not look into (subqueries,
/// functions with special evaluation) counts as referencing every column, so such an
/// expression is never taken as one side's join key ([`shift`] could not re-base it).
pub(crate) fn col_range(e: &Expr, lo: &mut usize, hi: &mut usize) {
    match e {
        Expr::Col(i, _) => {
            *lo = (*lo).min(*i);
            *hi = (*hi).max(*i + 1);
        }
        Expr::Const(..) | Expr::Param(..) | Expr::Outer(..) => {}
        Expr::Native(n) => col_range(&n.source, lo, hi),
        Expr::Bin { l, r, .. } | Expr::Distinct { l, r, .. } => {
            col_range(l, lo, hi);
            col_range(r, lo, hi);
        }
        Expr::And(args) | Expr::Or(args) => args.iter().for_each(|a| col_range(a, lo, hi)),
        Expr::Un { arg, .. }
        | Expr::Not(arg)
        | Expr::IsNull(arg, _)
        | Expr::IsBool { arg, .. }
        | Expr::Cast { arg, .. } => col_range(arg, lo, hi),
        Expr::Func { args, .. } | Expr::Coalesce(args, _) | Expr::MinMax { args, .. } => {
            args.iter().for_each(|a| col_range(a, lo, hi))
        }
        Expr::Case { whens, default, .. } => {
            for (a, b) in whens {
                col_range(a, lo, hi);
                col_range(b, lo, hi);
            }
            col_range(default, lo, hi);
        }
        Expr::Array(a) => a.for_each_child(&mut |c| col_range(c, lo, hi)),
        Expr::Row(r) => r.for_each_child(&mut |c| col_range(c, lo, hi)),
        Expr::Special(..) | Expr::SubPlan(_) => {
            *lo = 0;
            *hi = usize::MAX;
        }
    }
}

/// Equi-join keys `left_expr = right_expr` from an ON clause (right exprs re-based to the
/// right row).
pub fn equi_keys(on: &Expr, left_width: usize) -> Option<(Vec<Expr>, Vec<Expr>)> {
    let mut parts = Vec::new();
    conjuncts(on.clone(), &mut parts);
    let (mut lk, mut rk) = (Vec::new(), Vec::new());
    for p in parts {
        if let Expr::Bin { op: "=", l, r, .. } = p {
            let side = |e: &Expr| {
                let (mut lo, mut hi) = (usize::MAX, 0);
                col_range(e, &mut lo, &mut hi);
                if hi == 0 {
                    None
                } else if hi <= left_width {
                    Some(true)
                } else if lo >= left_width {
                    Some(false)
                } else {
                    None
                }
            };
            match (side(&l), side(&r)) {
                (Some(true), Some(false)) if l.ty() == r.ty() => {
                    lk.push(*l);
                    rk.push(shift(*r, left_width));
                }
                (Some(false), Some(true)) if l.ty() == r.ty() => {
                    lk.push(*r);
                    rk.push(shift(*l, left_width));
                }
                _ => {}
            }
        }
    }
    if lk.is_empty() { None } else { Some((lk, rk)) }
}

/// Re-bases the column references of a key expression that [`col_range`] placed on the right
/// side: every variant `col_range` descends into is rebuilt here.
fn shift(e: Expr, by: usize) -> Expr {
    remap(e, &|i| i - by)
}

/// Rewrites every column reference `Col(i)` to `Col(to(i))`. Only for expressions
/// [`col_range`] sees fully into (no subquery, no special function): those keep their
/// references as they are.
pub(crate) fn remap(e: Expr, to: &dyn Fn(usize) -> usize) -> Expr {
    let sh = |e: Box<Expr>| Box::new(remap(*e, to));
    let all = |v: Vec<Expr>| v.into_iter().map(|a| remap(a, to)).collect::<Vec<_>>();
    match e {
        Expr::Col(i, t) => Expr::Col(to(i), t),
        // Programs are made after every rewrite; should one meet one, it goes back to a tree.
        Expr::Native(n) => remap(n.source.clone(), to),
        Expr::Bin { op, f, l, r, ty } => Expr::Bin {
            op,
            f,
            l: sh(l),
            r: sh(r),
            ty,
        },
        Expr::And(args) => Expr::And(all(args)),
        Expr::Or(args) => Expr::Or(all(args)),
        Expr::Distinct { l, r, eq, negated } => Expr::Distinct {
            l: sh(l),
            r: sh(r),
            eq,
            negated,
        },
        Expr::Un { f, arg, ty } => Expr::Un {
            f,
            arg: sh(arg),
            ty,
        },
        Expr::Not(arg) => Expr::Not(sh(arg)),
        Expr::IsNull(arg, negated) => Expr::IsNull(sh(arg), negated),
        Expr::IsBool {
            arg,
            value,
            negated,
        } => Expr::IsBool {
            arg: sh(arg),
            value,
            negated,
        },
        Expr::Cast { arg, from, to, ctx } => Expr::Cast {
            arg: sh(arg),
            from,
            to,
            ctx,
        },
        Expr::Func { f, args } => Expr::Func { f, args: all(args) },
        Expr::Coalesce(args, t) => Expr::Coalesce(all(args), t),
        Expr::MinMax { args, greatest, ty } => Expr::MinMax {
            args: all(args),
            greatest,
            ty,
        },
        Expr::Case { whens, default, ty } => Expr::Case {
            whens: whens
                .into_iter()
                .map(|(a, b)| (remap(a, to), remap(b, to)))
                .collect(),
            default: sh(default),
            ty,
        },
        Expr::Array(a) => match a.map_children(&mut |c| Ok(remap(c.clone(), to))) {
            Ok(m) => Expr::Array(Box::new(m)),
            Err(_) => Expr::Array(a),
        },
        Expr::Row(r) => match r.map_children(&mut |c| Ok(remap(c.clone(), to))) {
            Ok(m) => Expr::Row(Box::new(m)),
            Err(_) => Expr::Row(r),
        },
        other @ (Expr::Const(..)
        | Expr::Param(..)
        | Expr::Outer(..)
        | Expr::Special(..)
        | Expr::SubPlan(_)) => other,
    }
}
