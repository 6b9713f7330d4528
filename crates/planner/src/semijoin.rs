//! Correlated `EXISTS` / `NOT EXISTS` in a WHERE clause as semi- and anti-joins, as PostgreSQL
//! pulls them up: run as a subplan, the subquery scans its table once per outer row; as a hash
//! semi-join, once per statement.
//!
//! Taken: a WHERE conjunct `[NOT] EXISTS (SELECT ... FROM t WHERE ...)` over one table whose
//! WHERE conjuncts are either equalities between a column of `t` and an outer column (of the
//! same type), at least one, or free of outer references and subqueries. Anything else (an
//! aggregate, LIMIT, a join, an outer reference elsewhere) stays a subplan.
//!
//! Also taken, as PostgreSQL's `convert_ANY_sublink_to_join`: a WHERE conjunct
//! `x IN (SELECT e FROM t [WHERE ...])`, uncorrelated, with `=` between operands of one type.
//! In a WHERE a NULL comparison rejects the row as false does, so the semi-join's plain
//! equality (NULL matches nothing) gives the same rows. `NOT IN` is never an anti-join: a
//! NULL among the subquery's values makes it NULL for every row, which an anti-join cannot
//! express; it stays a (hashed) subplan.

use crate::access::{col_range, conjuncts, remap};
use keel_analyzer::expr::{Expr, SubKind, SubPlan};
use keel_analyzer::query::Rel;
use keel_catalog::Catalog;
use keel_types::TypeId;

pub(crate) struct Semi {
    /// The subquery's table with its uncorrelated conjuncts.
    pub inner: Rel,
    pub outer_keys: Vec<Expr>,
    pub inner_keys: Vec<Expr>,
    pub anti: bool,
    /// For `IN`: the bound comparison over `[lhs, subquery value]` (its `=` operator).
    pub cmp: Option<Expr>,
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
    if let SubKind::Quantified { lhs, cmp, all } = &sp.kind {
        return if anti || *all {
            None
        } else {
            in_join(sp, lhs, cmp)
        };
    }
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
        cmp: None,
    })
}

/// `lhs IN (SELECT e FROM t [WHERE local])` as a semi-join on `lhs = e`: uncorrelated, `cmp`
/// an equality of the two operands as they are (same type, no cast), the body one table.
fn in_join(sp: &SubPlan, lhs: &Expr, cmp: &Expr) -> Option<Semi> {
    if !sp.outer_args.is_empty() || correlated(lhs) {
        return None;
    }
    let Expr::Bin { op: "=", l, r, .. } = cmp else {
        return None;
    };
    match (l.as_ref(), r.as_ref()) {
        (Expr::Col(0, t), Expr::Col(1, u)) if t == u && lhs.ty() == *t => {}
        _ => return None,
    }
    let Rel::Project {
        input,
        exprs,
        srf: None,
    } = &sp.query
    else {
        return None;
    };
    let [e] = exprs.as_slice() else {
        return None;
    };
    let scan = match input.as_ref() {
        Rel::Filter { input, pred } if !correlated(pred) => input.as_ref(),
        other => other,
    };
    if !matches!(scan, Rel::Scan { .. }) || correlated(e) || e.ty() != lhs.ty() {
        return None;
    }
    Some(Semi {
        inner: input.as_ref().clone(),
        outer_keys: vec![lhs.clone()],
        inner_keys: vec![e.clone()],
        anti: false,
        cmp: Some(cmp.clone()),
    })
}

/// PostgreSQL's `reduce_unique_semijoins`: an `IN` semi-join whose subquery returns each key
/// at most once (a unique index's columns are all among its keys, plain columns of its one
/// table) is an inner join, which the join search may then order either way. `input` is the
/// WHERE's input and `pred` the WHERE; the result is the same rows in the same layout:
/// `input` joined to the subquery's table under the WHERE, projected back to `input`'s columns.
pub(crate) fn unique_in_as_join(catalog: &Catalog, input: &Rel, pred: &Expr) -> Option<Rel> {
    let types = base_types(input)?;
    let lw = types.len();
    let mut parts = Vec::new();
    conjuncts(pred.clone(), &mut parts);
    let at = parts.iter().position(|p| {
        semi_join(p).is_some_and(|s| s.cmp.is_some() && unique_inner(catalog, &s).is_some())
    })?;
    let s = semi_join(&parts.remove(at))?;
    let (table, alias, local) = unique_inner(catalog, &s)?;
    let Some(Expr::Bin { op, f, ty, .. }) = s.cmp else {
        return None;
    };
    let shifted = |e: &Expr| {
        let (mut lo, mut hi) = (usize::MAX, 0);
        col_range(e, &mut lo, &mut hi);
        (hi != usize::MAX).then(|| remap(e.clone(), &|i| i + lw))
    };
    let mut conj = parts;
    for (o, i) in s.outer_keys.iter().zip(&s.inner_keys) {
        conj.push(Expr::Bin {
            op,
            f,
            l: Box::new(o.clone()),
            r: Box::new(shifted(i)?),
            ty,
        });
    }
    if let Some(local) = local {
        conj.push(shifted(&local)?);
    }
    let rw = table.columns.len();
    let join = Rel::Join {
        left: Box::new(input.clone()),
        right: Box::new(Rel::Scan { table, alias }),
        on: None,
        left_join: false,
        right_join: false,
        left_width: lw,
        right_width: rw,
    };
    let filtered = Rel::Filter {
        input: Box::new(join),
        pred: conj.into_iter().reduce(Expr::and)?,
    };
    crate::joins::flatten(&filtered)?;
    Some(Rel::Project {
        input: Box::new(filtered),
        exprs: types
            .into_iter()
            .enumerate()
            .map(|(i, t)| Expr::Col(i, t))
            .collect(),
        srf: None,
    })
}

/// The subquery table of `s`, its alias and its own conditions, when a unique index of the
/// table has all its columns among `s`'s inner keys (so each key value comes at most once).
fn unique_inner(
    catalog: &Catalog,
    s: &Semi,
) -> Option<(
    std::sync::Arc<keel_catalog::TableDef>,
    Option<String>,
    Option<Expr>,
)> {
    let (scan, local) = match &s.inner {
        Rel::Filter { input, pred } => (input.as_ref(), Some(pred.clone())),
        other => (other, None),
    };
    let Rel::Scan { table, alias } = scan else {
        return None;
    };
    let keys: Vec<usize> = s
        .inner_keys
        .iter()
        .filter_map(|k| match k {
            Expr::Col(c, _) => Some(*c),
            _ => None,
        })
        .collect();
    catalog
        .indexes_of(table.oid)
        .any(|ix| ix.unique && ix.columns.iter().all(|c| keys.contains(c)))
        .then(|| (table.clone(), alias.clone(), local))
}

/// The column types of a relation the join search flattens (base tables under inner joins
/// and WHEREs), or None for anything else.
fn base_types(rel: &Rel) -> Option<Vec<TypeId>> {
    match rel {
        Rel::Scan { table, .. } => Some(table.columns.iter().map(|c| c.ty.id).collect()),
        Rel::Filter { input, .. } => base_types(input),
        Rel::Join {
            left,
            right,
            left_join: false,
            right_join: false,
            ..
        } => {
            let mut t = base_types(left)?;
            t.extend(base_types(right)?);
            Some(t)
        }
        _ => None,
    }
}

/// PostgreSQL's `subplan_is_hashable` for keel's subqueries: `lhs IN / = ANY (SELECT one
/// column ...)`, uncorrelated, comparing with `=` operands of one type. Such a subquery's
/// result is hashed once per execution and each probe is a lookup (EXPLAIN prints
/// `hashed SubPlan N`). PostgreSQL also gives up hashing when the estimated result exceeds
/// `hash_mem`; keel hashes regardless (the keys are charged to the statement's memory).
/// Returns the compared type when hashed.
pub fn hashed_subplan(sp: &SubPlan) -> Option<TypeId> {
    let SubKind::Quantified {
        cmp, all: false, ..
    } = &sp.kind
    else {
        return None;
    };
    if !sp.outer_args.is_empty() {
        return None;
    }
    let Expr::Bin { op: "=", l, r, .. } = cmp.as_ref() else {
        return None;
    };
    match (l.as_ref(), r.as_ref()) {
        (Expr::Col(0, t), Expr::Col(1, u)) if t == u => Some(*t),
        _ => None,
    }
}
