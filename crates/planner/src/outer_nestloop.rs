//! A LEFT join as a parameterized nested loop: for each preserved row, the nullable table is
//! probed through an index whose leading columns the ON clause's equalities give (PostgreSQL's
//! `Nested Loop Left Join` over a parameterized index or bitmap scan). It wins over a hash
//! join when the preserved side has few rows: the probes cost the preserved rows times one
//! probe, the hash join a whole scan of the nullable table.

use crate::Planner;
use crate::access::{conjuncts, remap};
use crate::cost::{leaf_estimate, table_info};
use crate::paths;
use crate::plan::{Access, Plan};
use keel_analyzer::expr::Expr;
use keel_catalog::TableDef;
use std::ops::Range;
use std::sync::Arc;

/// PostgreSQL's fuzz factor when comparing path costs (`add_path`): totals within 1% tie,
/// and the lower startup cost wins the tie.
const FUZZ: f64 = 1.01;

/// The nullable side of a LEFT join, read one table through an index per preserved row.
pub(crate) struct Probe<'a> {
    pub table: &'a Arc<TableDef>,
    pub alias: Option<&'a String>,
    /// Conditions on the nullable table alone (its own row layout).
    pub filter: Option<&'a Expr>,
}

/// The plan of a LEFT join as an index nested loop, and its estimated cost.
pub(crate) struct NestLoop {
    pub plan: Plan,
    pub cost: f64,
}

impl Planner<'_> {
    /// The cheapest index nested loop of `outer` (the preserved side, `pres` in the written
    /// layout) probing `probe` (the nullable side, `null`), with `on` (written layout) what
    /// remains of the ON clause; None when no index serves its equalities. The plan's rows are
    /// the preserved columns followed by the nullable ones.
    pub(crate) fn outer_nestloop(
        &self,
        outer: &Plan,
        outer_rows: f64,
        probe: Probe<'_>,
        on: Option<&Expr>,
        (pres, null): (Range<usize>, Range<usize>),
    ) -> Option<NestLoop> {
        // Equalities `nullable column = expression over the preserved side`, the expression
        // re-based to the preserved row, and the conjunct with a parameter in its place.
        let mut keys: Vec<(Expr, Expr)> = Vec::new();
        let mut parts = Vec::new();
        if let Some(on) = on {
            conjuncts(on.clone(), &mut parts);
        }
        let only = |e: &Expr, r: &Range<usize>| {
            super::outer::cols(e)
                .is_some_and(|cs| !cs.is_empty() && cs.iter().all(|c| r.contains(c)))
        };
        for p in &parts {
            let Expr::Bin {
                op: "=",
                f,
                l,
                r,
                ty,
            } = p
            else {
                continue;
            };
            for (a, b) in [(l, r), (r, l)] {
                if let Expr::Col(c, t) = a.as_ref()
                    && null.contains(c)
                    && b.ty() == *t
                    && only(b, &pres)
                {
                    let param = Expr::Bin {
                        op: "=",
                        f: *f,
                        l: Box::new(Expr::Col(c - null.start, *t)),
                        r: Box::new(Expr::Param(keys.len(), *t)),
                        ty: *ty,
                    };
                    keys.push((param, remap((**b).clone(), &|i| i - pres.start)));
                    break;
                }
            }
        }
        if keys.is_empty() {
            return None;
        }
        let mut pred_parts: Vec<Expr> = keys.iter().map(|k| k.0.clone()).collect();
        if let Some(f) = probe.filter {
            conjuncts(f.clone(), &mut pred_parts);
        }
        let pred = Expr::And(pred_parts);
        let paths = paths::scan_paths(
            self.catalog,
            self.sizes,
            probe.table,
            Some(&pred),
            None,
            None,
        );
        let uses_key = |a: &Access| match a {
            Access::Index { eq, .. } => eq.iter().any(|e| matches!(e, Expr::Param(..))),
            Access::Seq => false,
        };
        let mut best: Option<&paths::ScanPath> = None;
        for p in paths.iter().filter(|p| uses_key(&p.access)) {
            let better = best.is_none_or(|b| {
                p.total * FUZZ < b.total || (p.total <= b.total * FUZZ && p.startup < b.startup)
            });
            if better {
                best = Some(p);
            }
        }
        let best = best?;
        let mut access = best.access.clone();
        if let Access::Index { eq, .. } = &mut access {
            for e in eq.iter_mut() {
                if let Expr::Param(k, _) = e
                    && let Some(key) = keys.get(*k)
                {
                    *e = key.1.clone();
                }
            }
        }
        let outer_cost = self.plan_cost(outer)?;
        // Written layout -> preserved columns, then nullable ones.
        let to = |g: usize| {
            if pres.contains(&g) {
                g - pres.start
            } else {
                pres.len() + g - null.start
            }
        };
        Some(NestLoop {
            cost: outer_cost + outer_rows * best.total,
            plan: Plan::IndexNestLoop {
                outer: Box::new(outer.clone()),
                table: probe.table.clone(),
                alias: probe.alias.cloned(),
                access,
                inner_filter: probe.filter.cloned(),
                join_filter: on.map(|e| remap(e.clone(), &to)),
                outer_width: pres.len(),
                left_join: true,
                inner_columns: None,
            },
        })
    }

    /// Estimated cost of a planned scan (through projections), or None.
    pub(crate) fn plan_cost(&self, p: &Plan) -> Option<f64> {
        match p {
            Plan::Scan {
                table,
                access,
                filter,
                ..
            } => {
                let info = table_info(self.sizes, table);
                Some(leaf_estimate(self.catalog, &info, table, access, filter.as_ref()).cost)
            }
            Plan::Project {
                input, srf: None, ..
            } => self.plan_cost(input),
            _ => None,
        }
    }
}
