//! LEFT and RIGHT joins: where their predicates go, and which side is hashed.
//!
//! PostgreSQL's rules (optimizer/README, "outer joins"; `distribute_qual_to_rels`,
//! `reduce_outer_joins`):
//! - a WHERE conjunct over the preserved side only is applied below the join, at that side
//!   (the join cannot turn a failing preserved row into a passing one: it only adds columns);
//! - an ON conjunct over the nullable side only filters that side's rows before the join (a
//!   nullable row failing it could match nothing anyway);
//! - a WHERE conjunct strict in the nullable side (false or NULL when its columns are NULL)
//!   removes every NULL-extended row, so the join is an inner join (`IS NULL` is not strict);
//! - other conjuncts stay where they were written.
//!
//! The hash table is built on the side whose build and probe cost less (PostgreSQL's
//! `cost_hashjoin`: each build row costs a tuple and an operator per key, each probe row an
//! operator per key): the nullable side (`Hash Left Join`) or the preserved one (`Hash Right
//! Join`, its unmatched rows emitted NULL-extended once the probe side ends). A projection
//! restores the written column order when the inputs are swapped.

use crate::Planner;
use crate::access::{col_range, conjuncts, equi_keys, remap};
use crate::cost::{CPU_OPERATOR_COST, CPU_TUPLE_COST, leaf_estimate, table_info};
use crate::outer_nestloop::Probe;
use crate::plan::Plan;
use keel_analyzer::expr::Expr;
use keel_analyzer::query::Rel;
use keel_common::PgResult;
use keel_types::TypeId;

/// Comparison operators: strict (a NULL operand gives NULL, which WHERE rejects).
const STRICT_OPS: [&str; 6] = ["=", "<>", "<", "<=", ">", ">="];

/// Columns `e` references, when all are visible (no subquery, no special function).
pub(crate) fn cols(e: &Expr) -> Option<Vec<usize>> {
    let (mut lo, mut hi) = (usize::MAX, 0);
    col_range(e, &mut lo, &mut hi);
    if hi == usize::MAX || e.has_subplan() {
        return None;
    }
    let mut out = Vec::new();
    let mut todo = vec![e];
    while let Some(e) = todo.pop() {
        if let Expr::Col(i, _) = e {
            out.push(*i);
        }
        e.for_each_child(&mut |c| todo.push(c));
    }
    Some(out)
}

/// Whether WHERE conjunct `e` rejects every row whose columns in `range` are all NULL: a
/// strict comparison with such a column as an operand, or `IS NOT NULL` of one.
pub(crate) fn strict_in(e: &Expr, range: &std::ops::Range<usize>) -> bool {
    let direct = |x: &Expr| matches!(x, Expr::Col(c, _) if range.contains(c));
    match e {
        Expr::Bin { op, l, r, .. } if STRICT_OPS.contains(op) => direct(l) || direct(r),
        Expr::IsNull(arg, true) => direct(arg),
        _ => false,
    }
}

/// Column types of a relation, where they are known without planning it.
fn rel_types(r: &Rel) -> Option<Vec<TypeId>> {
    match r {
        Rel::Scan { table, .. } => Some(table.columns.iter().map(|c| c.ty.id).collect()),
        Rel::Filter { input, .. } => rel_types(input),
        Rel::Join { left, right, .. } => {
            let mut t = rel_types(left)?;
            t.extend(rel_types(right)?);
            Some(t)
        }
        Rel::Project {
            exprs, srf: None, ..
        } => Some(exprs.iter().map(Expr::ty).collect()),
        _ => None,
    }
}

fn filtered(input: &Rel, parts: Vec<Expr>) -> Rel {
    match parts.into_iter().reduce(Expr::and) {
        Some(pred) => Rel::Filter {
            input: Box::new(input.clone()),
            pred,
        },
        None => input.clone(),
    }
}

impl Planner<'_> {
    /// Plans `r` when it is a LEFT or RIGHT join, possibly under a WHERE; None otherwise.
    pub(crate) fn plan_outer(&mut self, r: &Rel) -> PgResult<Option<Plan>> {
        let (join, pred) = match r {
            Rel::Filter { input, pred } if matches!(input.as_ref(), Rel::Join { .. }) => {
                (input.as_ref(), Some(pred))
            }
            Rel::Join { .. } => (r, None),
            _ => return Ok(None),
        };
        let Rel::Join {
            left,
            right,
            on,
            left_join,
            right_join,
            left_width,
            right_width,
        } = join
        else {
            return Ok(None);
        };
        let (lw, rw) = (*left_width, *right_width);
        if *left_join == *right_join {
            return Ok(None);
        }
        let (pres, null) = if *left_join {
            (0..lw, lw..lw + rw)
        } else {
            (lw..lw + rw, 0..lw)
        };
        let mut where_parts = Vec::new();
        if let Some(p) = pred {
            conjuncts(p.clone(), &mut where_parts);
        }
        // reduce_outer_joins: a strict condition on the nullable side makes it an inner join.
        if let Some(pred) = pred
            && where_parts.iter().any(|c| strict_in(c, &null))
        {
            let inner = Rel::Filter {
                input: Box::new(Rel::Join {
                    left: left.clone(),
                    right: right.clone(),
                    on: on.clone(),
                    left_join: false,
                    right_join: false,
                    left_width: lw,
                    right_width: rw,
                }),
                pred: pred.clone(),
            };
            return self.rel(&inner).map(Some);
        }
        let within = |e: &Expr, range: &std::ops::Range<usize>| {
            cols(e).is_some_and(|cs| !cs.is_empty() && cs.iter().all(|c| range.contains(c)))
        };
        // WHERE conjuncts over the preserved side go below the join.
        let (mut down_pres, mut above) = (Vec::new(), Vec::new());
        for c in where_parts {
            if within(&c, &pres) {
                down_pres.push(remap(c, &|i| i - pres.start));
            } else {
                above.push(c);
            }
        }
        // ON conjuncts over the nullable side filter it before the join.
        let (mut down_null, mut on_rest) = (Vec::new(), Vec::new());
        if let Some(on) = on {
            let mut parts = Vec::new();
            conjuncts(on.clone(), &mut parts);
            for c in parts {
                if within(&c, &null) {
                    down_null.push(remap(c, &|i| i - null.start));
                } else {
                    on_rest.push(c);
                }
            }
        }
        let (pres_rel, null_rel) = if *left_join {
            (left.as_ref(), right.as_ref())
        } else {
            (right.as_ref(), left.as_ref())
        };
        let null_filter = down_null.clone().into_iter().reduce(Expr::and);
        let pres_plan = self.rel(&filtered(pres_rel, down_pres))?;
        let null_plan = self.rel(&filtered(null_rel, down_null))?;
        let on = on_rest.into_iter().reduce(Expr::and);
        self.exprs(&on);
        let types = rel_types(left).zip(rel_types(right));
        // A few preserved rows: probe the nullable table per row instead of hashing it all.
        if let Rel::Scan { table, alias } = null_rel
            && let Some((lt, rt)) = &types
            && let Some(hash_cost) = self.hash_cost(&pres_plan, &null_plan, on.as_ref(), lw)
            && let Some(rows) = self.plan_rows(&pres_plan)
            && let Some(nl) = self.outer_nestloop(
                &pres_plan,
                rows,
                Probe {
                    table,
                    alias: alias.as_ref(),
                    filter: null_filter.as_ref(),
                },
                on.as_ref(),
                (pres.clone(), null.clone()),
            )
            && nl.cost < hash_cost
        {
            let mut plan = nl.plan;
            if *right_join {
                // Preserved (right) columns come first: restore [left, right].
                let exprs = lt
                    .iter()
                    .chain(rt)
                    .enumerate()
                    .map(|(g, t)| Expr::Col(if g < lw { g + rw } else { g - lw }, *t))
                    .collect();
                plan = Plan::Project {
                    input: Box::new(plan),
                    exprs,
                    srf: None,
                };
            }
            return Ok(Some(self.above(plan, above)));
        }
        let (lplan, rplan) = if *left_join {
            (pres_plan, null_plan)
        } else {
            (null_plan, pres_plan)
        };
        let hash = on.as_ref().and_then(|on| equi_keys(on, lw));
        let swap = match (&hash, types) {
            (Some((keys, _)), Some((lt, rt))) => self
                .build_right_cheaper(&lplan, &rplan, keys.len())
                .is_some_and(|keep| !keep)
                .then_some((lt, rt)),
            _ => None,
        };
        let plan = match swap {
            None => Plan::Join {
                left: Box::new(lplan),
                right: Box::new(rplan),
                on,
                left_join: *left_join,
                right_join: *right_join,
                left_width: lw,
                right_width: rw,
                hash,
                rows: None,
            },
            Some((lt, rt)) => {
                // The right input probes, the left one is hashed: columns are [right, left].
                let to = |g: usize| if g < lw { g + rw } else { g - lw };
                let on = on.map(|e| remap(e, &to));
                let hash = on.as_ref().and_then(|on| equi_keys(on, rw));
                let exprs = lt
                    .iter()
                    .chain(&rt)
                    .enumerate()
                    .map(|(g, t)| Expr::Col(to(g), *t))
                    .collect();
                Plan::Project {
                    input: Box::new(Plan::Join {
                        left: Box::new(rplan),
                        right: Box::new(lplan),
                        on,
                        left_join: *right_join,
                        right_join: *left_join,
                        left_width: rw,
                        right_width: lw,
                        hash,
                        rows: None,
                    }),
                    exprs,
                    srf: None,
                }
            }
        };
        Ok(Some(self.above(plan, above)))
    }

    /// `plan` under the WHERE conjuncts that stay above the join.
    fn above(&mut self, plan: Plan, above: Vec<Expr>) -> Plan {
        match above.into_iter().reduce(Expr::and) {
            Some(pred) => {
                self.exprs([&pred]);
                Plan::Filter {
                    input: Box::new(plan),
                    pred,
                }
            }
            None => plan,
        }
    }

    /// Estimated cost of a hash join of the two planned inputs on `on`'s equalities (hashing
    /// the cheaper side), or None without keys or estimates.
    fn hash_cost(&self, left: &Plan, right: &Plan, on: Option<&Expr>, lw: usize) -> Option<f64> {
        let (keys, _) = equi_keys(on?, lw)?;
        let (l, r) = (self.plan_rows(left)?, self.plan_rows(right)?);
        let inputs = self.plan_cost(left)? + self.plan_cost(right)?;
        let per_key = CPU_OPERATOR_COST * keys.len() as f64;
        let cost = |build: f64, probe: f64| (per_key + CPU_TUPLE_COST) * build + per_key * probe;
        Some(inputs + cost(r, l).min(cost(l, r)))
    }

    /// Whether hashing `right` and probing with `left` costs no more than the other way
    /// round, with `keys` hash keys (PostgreSQL's `initial_cost_hashjoin`: a build row costs
    /// a tuple and an operator per key, a probe row an operator per key; the inputs' own
    /// costs are the same either way). None when an input's rows are not estimated.
    fn build_right_cheaper(&self, left: &Plan, right: &Plan, keys: usize) -> Option<bool> {
        let (l, r) = (self.plan_rows(left)?, self.plan_rows(right)?);
        let per_key = CPU_OPERATOR_COST * keys as f64;
        let cost = |build: f64, probe: f64| (per_key + CPU_TUPLE_COST) * build + per_key * probe;
        Some(cost(r, l) <= cost(l, r))
    }

    /// Estimated rows of a planned scan (through projections), or None.
    fn plan_rows(&self, p: &Plan) -> Option<f64> {
        match p {
            Plan::Scan {
                table,
                access,
                filter,
                ..
            } => {
                let info = table_info(self.sizes, table);
                Some(leaf_estimate(self.catalog, &info, table, access, filter.as_ref()).rows)
            }
            Plan::Project {
                input, srf: None, ..
            } => self.plan_rows(input),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use keel_types::Datum;

    fn cmp(op: &'static str, l: Expr, r: Expr) -> Expr {
        fn f(_: &Datum, _: &Datum) -> keel_common::PgResult<Datum> {
            Ok(Datum::Null)
        }
        Expr::Bin {
            op,
            f,
            l: Box::new(l),
            r: Box::new(r),
            ty: TypeId::Bool,
        }
    }

    #[test]
    fn strictness_in_the_nullable_side() {
        let nullable = 2..4;
        let col = |i| Expr::Col(i, TypeId::Int4);
        let five = || Expr::Const(Datum::Int4(5), TypeId::Int4);
        assert!(strict_in(&cmp("=", col(3), five()), &nullable));
        assert!(strict_in(&cmp(">", five(), col(2)), &nullable));
        assert!(strict_in(&Expr::IsNull(Box::new(col(2)), true), &nullable));
        // IS NULL keeps the NULL-extended rows; a preserved column says nothing of them.
        assert!(!strict_in(
            &Expr::IsNull(Box::new(col(2)), false),
            &nullable
        ));
        assert!(!strict_in(&cmp("=", col(0), five()), &nullable));
        assert!(!strict_in(
            &Expr::Or(vec![cmp("=", col(3), five()), cmp("=", col(0), five())]),
            &nullable
        ));
    }
}
