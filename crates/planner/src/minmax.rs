//! `min(col)` / `max(col)` through an index, as PostgreSQL's planagg.c: an aggregate query
//! without GROUP BY over one table whose aggregates are all min or max of a column becomes,
//! per aggregate, the subquery `(SELECT col FROM t WHERE <where> AND col IS NOT NULL ORDER BY
//! col [DESC] LIMIT 1)`, evaluated once (an InitPlan), when an index read in that order makes
//! those subqueries cheaper than reading the table. min skips NULLs, and so does the
//! `IS NOT NULL` condition; an empty table gives NULL either way.

use crate::access::conjuncts;
use crate::paths::{self, ScanPath};
use crate::plan::Plan;
use crate::{Planner, cost, semijoin};
use keel_analyzer::expr::{Expr, SubKind, SubPlan};
use keel_analyzer::query::{AggCall, Rel, SortKey};
use keel_catalog::TableDef;
use keel_common::PgResult;
use keel_types::{Datum, TypeId};
use std::sync::Arc;

/// One aggregate's column and whether it is max.
struct MinMax {
    col: usize,
    ty: TypeId,
    max: bool,
}

fn min_max(a: &AggCall) -> Option<MinMax> {
    let max = match a.name.as_str() {
        "min" => false,
        "max" => true,
        _ => return None,
    };
    if a.distinct || !a.order.is_empty() || a.filter.is_some() {
        return None;
    }
    match a.args.as_slice() {
        [Expr::Col(col, ty)] => Some(MinMax {
            col: *col,
            ty: *ty,
            max,
        }),
        _ => None,
    }
}

impl Planner<'_> {
    /// The plan of `Agg { input, group: [], aggs }` through indexes, if every aggregate is a
    /// min or max that an index serves and that is cheaper.
    pub(crate) fn min_max_by_index(
        &mut self,
        input: &Rel,
        aggs: &[AggCall],
    ) -> PgResult<Option<Plan>> {
        if aggs.is_empty() || self.next_subplan.is_none() {
            return Ok(None);
        }
        let Some(wanted) = aggs.iter().map(min_max).collect::<Option<Vec<_>>>() else {
            return Ok(None);
        };
        let (table, alias, pred) = match input {
            Rel::Scan { table, alias } => (table, alias, None),
            Rel::Filter { input, pred } => match input.as_ref() {
                Rel::Scan { table, alias } if !pred.has_subplan() => (table, alias, Some(pred)),
                _ => return Ok(None),
            },
            _ => return Ok(None),
        };
        if let Some(p) = pred {
            let mut parts = Vec::new();
            conjuncts(p.clone(), &mut parts);
            if parts.iter().any(|p| semijoin::semi_join(p).is_some()) {
                return Ok(None);
            }
        }
        // The plain plan: read the rows once, one comparison per aggregate and row.
        let all = paths::cheapest(self.catalog, self.sizes, table, pred);
        let plain = all.total + all.rows * cost::CPU_OPERATOR_COST * aggs.len() as f64;
        let mut subqueries = Vec::new();
        let mut by_index = 0.0;
        for m in &wanted {
            let (rel, path) = self.first_by_index(table, alias, pred, m);
            let Some(path) = path else {
                return Ok(None);
            };
            by_index += path.cost_for(1.0 / path.rows.max(1.0));
            subqueries.push((rel, m.ty));
        }
        if by_index >= plain {
            return Ok(None);
        }
        let mut exprs = Vec::new();
        for (query, ty) in subqueries {
            let Some(id) = self.next_subplan else {
                return Ok(None);
            };
            self.next_subplan = id.checked_add(1);
            let plan = self.rel(&query)?;
            if self.subplans.len() <= id as usize {
                self.subplans.resize(id as usize + 1, None);
            }
            self.subplans[id as usize] = Some(plan);
            exprs.push(Expr::SubPlan(Arc::new(SubPlan {
                id,
                kind: SubKind::Scalar,
                query,
                outer_args: Vec::new(),
                ty,
            })));
        }
        Ok(Some(Plan::Project {
            input: Box::new(Plan::Values {
                rows: vec![Vec::new()],
            }),
            exprs,
            srf: None,
        }))
    }

    /// The subquery giving `m`'s value, and the ordered index path it would take (None when
    /// no index gives that order without a sort).
    fn first_by_index(
        &self,
        table: &Arc<TableDef>,
        alias: &Option<String>,
        pred: Option<&Expr>,
        m: &MinMax,
    ) -> (Rel, Option<ScanPath>) {
        let col = Expr::Col(m.col, m.ty);
        let not_null = Expr::IsNull(Box::new(col.clone()), true);
        let pred = match pred {
            Some(p) => Expr::and(p.clone(), not_null),
            None => not_null,
        };
        let keys = vec![SortKey {
            expr: col.clone(),
            desc: m.max,
            nulls_first: m.max,
        }];
        let (path, sort) = paths::cheapest_sorted(
            self.catalog,
            self.sizes,
            table,
            (Some(&pred), None),
            &keys,
            Some(1.0),
        );
        let rel = Rel::Limit {
            input: Box::new(Rel::Project {
                input: Box::new(Rel::Sort {
                    input: Box::new(Rel::Filter {
                        input: Box::new(Rel::Scan {
                            table: table.clone(),
                            alias: alias.clone(),
                        }),
                        pred,
                    }),
                    keys,
                }),
                exprs: vec![col],
                srf: None,
            }),
            limit: Some(Expr::Const(Datum::Int8(1), TypeId::Int8)),
            offset: None,
        };
        (rel, (!sort).then_some(path))
    }
}
