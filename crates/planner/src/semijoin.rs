//! Correlated `EXISTS` / `NOT EXISTS` in a WHERE clause as semi- and anti-joins, as PostgreSQL
//! pulls them up: run as a subplan, the subquery scans its table once per outer row; as a hash
//! semi-join, once per statement.
//!
//! Taken: a WHERE conjunct `[NOT] EXISTS (SELECT ... FROM t WHERE ...)` over one table whose
//! WHERE conjuncts are either equalities between a column of `t` and an outer column (of the
//! same type), at least one, or free of outer references and subqueries. Anything else (an
//! aggregate, LIMIT, a join, an outer reference elsewhere) stays a subplan.

use crate::access::conjuncts;
use keel_analyzer::expr::{Expr, SubKind};
use keel_analyzer::query::Rel;

pub(crate) struct Semi {
    /// The subquery's table with its uncorrelated conjuncts.
    pub inner: Rel,
    pub outer_keys: Vec<Expr>,
    pub inner_keys: Vec<Expr>,
    pub anti: bool,
}

/// Whether `e` reads an outer reference or runs a subquery (walked without recursion).
fn correlated(e: &Expr) -> bool {
    let mut todo = vec![e];
    while let Some(e) = todo.pop() {
        if matches!(e, Expr::Outer(..) | Expr::SubPlan(_)) {
            return true;
        }
        e.for_each_child(&mut |c| todo.push(c));
    }
    false
}

/// The semi-join `conj` amounts to, if it is one.
pub(crate) fn semi_join(conj: &Expr) -> Option<Semi> {
    let (sp, anti) = match conj {
        Expr::SubPlan(sp) => (sp, false),
        Expr::Not(e) => match e.as_ref() {
            Expr::SubPlan(sp) => (sp, true),
            _ => return None,
        },
        _ => return None,
    };
    if !matches!(sp.kind, SubKind::Exists) {
        return None;
    }
    // EXISTS reads no column of the select list.
    let body = match &sp.query {
        Rel::Project {
            input, srf: None, ..
        } => input.as_ref(),
        other => other,
    };
    let Rel::Filter { input, pred } = body else {
        return None;
    };
    let Rel::Scan { table, alias } = input.as_ref() else {
        return None;
    };
    let mut parts = Vec::new();
    conjuncts(pred.clone(), &mut parts);
    let (mut outer_keys, mut inner_keys, mut local) = (Vec::new(), Vec::new(), Vec::new());
    for p in parts {
        if let Expr::Bin { op: "=", l, r, .. } = &p {
            let pair = match (l.as_ref(), r.as_ref()) {
                (Expr::Col(c, t), Expr::Outer(k, u)) | (Expr::Outer(k, u), Expr::Col(c, t))
                    if t == u =>
                {
                    Some((*c, *t, *k))
                }
                _ => None,
            };
            if let Some((c, t, k)) = pair {
                let outer = sp.outer_args.get(k)?;
                if outer.ty() != t {
                    return None;
                }
                inner_keys.push(Expr::Col(c, t));
                outer_keys.push(outer.clone());
                continue;
            }
        }
        if correlated(&p) {
            return None;
        }
        local.push(p);
    }
    if inner_keys.is_empty() {
        return None;
    }
    let scan = Rel::Scan {
        table: table.clone(),
        alias: alias.clone(),
    };
    let inner = match local.into_iter().reduce(Expr::and) {
        Some(pred) => Rel::Filter {
            input: Box::new(scan),
            pred,
        },
        None => scan,
    };
    Some(Semi {
        inner,
        outer_keys,
        inner_keys,
        anti,
    })
}
