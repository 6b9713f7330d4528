//! Index-only scans: once a plan is built, the columns each node reads from its input are
//! known; a scan whose table is read only in columns some index holds (and can give back) may
//! then run as an index-only scan, which skips the heap for rows on all-visible pages.
//!
//! The pass walks the plan from the root, passing down what each node's parent reads:
//! - a sequential or bitmap scan is replaced by an index-only scan when that path is the
//!   cheapest of all paths to the table (they give no order, so nothing above relies on one);
//! - an index scan (which may have been chosen for its order) becomes an index-only scan of
//!   the same index with the same conditions, which returns the same rows in the same order
//!   and never costs more.
//!
//! What a node reads: the columns its expressions reference (a subquery's outer arguments and
//! IN operand, not its own query), and for nodes that pass rows through (Filter, Sort, Limit,
//! joins) also what their parent reads. Nodes that compare or return whole rows (the root,
//! DISTINCT, set operations, subquery roots) read everything.

use crate::RelSizes;
use crate::paths::{self, covers};
use crate::plan::{Access, Plan};
use crate::scanrun;
use keel_analyzer::expr::{Expr, SubKind};
use keel_catalog::{Catalog, TableDef};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Columns of a node's input that are read: all of them, or these.
#[derive(Clone)]
enum Need {
    All,
    Cols(BTreeSet<usize>),
}

impl Need {
    fn with(mut self, exprs: &[&Expr]) -> Need {
        if let Need::Cols(c) = &mut self {
            for e in exprs {
                columns(e, c);
            }
        }
        self
    }

    /// The part of a joined row's needs that falls on columns `from..from + width`, re-based.
    fn slice(&self, from: usize, width: usize) -> Need {
        match self {
            Need::All => Need::All,
            Need::Cols(c) => Need::Cols(c.range(from..from + width).map(|i| i - from).collect()),
        }
    }
}

fn only(exprs: &[&Expr]) -> Need {
    Need::Cols(BTreeSet::new()).with(exprs)
}

/// Adds the input columns `e` reads to `out` (walked without recursion).
fn columns(e: &Expr, out: &mut BTreeSet<usize>) {
    let mut todo = vec![e];
    while let Some(e) = todo.pop() {
        match e {
            Expr::Col(i, _) => {
                out.insert(*i);
            }
            // `cmp` is bound over [lhs value, subquery value], not over this row.
            Expr::SubPlan(sp) => {
                todo.extend(&sp.outer_args);
                if let SubKind::Quantified { lhs, .. } = &sp.kind {
                    todo.push(lhs);
                }
            }
            _ => e.for_each_child(&mut |c| todo.push(c)),
        }
    }
}

/// Turns scans of `plan` and of the statement's `subplans` into index-only scans where that
/// is cheaper (see the module comment).
pub(crate) fn apply(
    catalog: &Catalog,
    sizes: &dyn RelSizes,
    plan: &mut Plan,
    subplans: &mut [Option<Plan>],
) {
    let pass = Pass { catalog, sizes };
    pass.walk(plan, Need::All);
    for sp in subplans.iter_mut().flatten() {
        pass.walk(sp, Need::All);
    }
}

struct Pass<'a> {
    catalog: &'a Catalog,
    sizes: &'a dyn RelSizes,
}

impl Pass<'_> {
    fn walk(&self, plan: &mut Plan, need: Need) {
        self.walk_goal(plan, need, None);
    }

    /// As `walk`, knowing that at most `goal` rows of `plan` will be read (a LIMIT above).
    fn walk_goal(&self, plan: &mut Plan, need: Need, goal: Option<f64>) {
        if let Some(scan) = self.sorted_scan(plan, &need, goal) {
            *plan = scan;
        }
        match plan {
            Plan::Scan {
                table,
                access,
                filter,
                run,
                ..
            } if run.row_ids => {
                // Under a LockRows: every column of the version it locks, from the heap.
                let cols: Vec<usize> = (0..table.columns.len()).collect();
                *run = scanrun::scan_run(table, access, filter.as_ref(), &cols);
                run.row_ids = true;
            }
            Plan::Scan {
                table,
                access,
                filter,
                run,
                ..
            } => {
                let cols: Vec<usize> = match need.with(&filter.iter().collect::<Vec<_>>()) {
                    Need::Cols(cols) => {
                        let cols: Vec<usize> = cols.into_iter().collect();
                        self.scan(table, access, filter.as_ref(), &cols);
                        cols
                    }
                    Need::All => (0..table.columns.len()).collect(),
                };
                *run = scanrun::scan_run(table, access, filter.as_ref(), &cols);
            }
            Plan::Values { .. }
            | Plan::Function { .. }
            | Plan::SystemView(_)
            | Plan::NamedRows { .. } => {}
            Plan::Filter { input, pred } => self.walk(input, need.with(&[pred])),
            Plan::Append { children, .. } => {
                for c in children {
                    self.walk_goal(c, need.clone(), goal);
                }
            }
            Plan::LockRows { input, .. } => self.walk(input, Need::All),
            Plan::Project { input, exprs, srf } => {
                let goal = if srf.is_none() { goal } else { None };
                // Only the outputs the parent reads: a projection that restores a join's
                // written column order lists every column, and most are never read above.
                let mut read: Vec<&Expr> = match &need {
                    Need::Cols(cols) if srf.is_none() => {
                        cols.iter().filter_map(|&i| exprs.get(i)).collect()
                    }
                    _ => exprs.iter().collect(),
                };
                if let Some(set) = srf {
                    read.extend(set.funcs.iter().flat_map(|f| &f.args));
                }
                let need = only(&read);
                self.walk_goal(input, need, goal);
            }
            Plan::Join {
                left,
                right,
                on,
                left_width,
                right_width,
                hash,
                ..
            } => {
                let need = need.with(&on.iter().collect::<Vec<_>>());
                let (mut l, mut r) = (
                    need.slice(0, *left_width),
                    need.slice(*left_width, *right_width),
                );
                if let Some((lk, rk)) = hash {
                    l = l.with(&lk.iter().collect::<Vec<_>>());
                    r = r.with(&rk.iter().collect::<Vec<_>>());
                }
                self.walk(left, l);
                self.walk(right, r);
            }
            Plan::IndexNestLoop {
                outer,
                table,
                access,
                inner_filter,
                join_filter,
                outer_width,
                inner_columns,
                ..
            } => {
                let joined = need.with(&join_filter.iter().collect::<Vec<_>>());
                let keys: Vec<&Expr> = match access {
                    Access::Index {
                        eq, lower, upper, ..
                    } => eq
                        .iter()
                        .chain(lower.iter().map(|b| &b.0))
                        .chain(upper.iter().map(|b| &b.0))
                        .collect(),
                    Access::Seq => Vec::new(),
                };
                let inner_width = table.columns.len();
                let outer_need = joined.slice(0, *outer_width).with(&keys);
                let inner_need = joined
                    .slice(*outer_width, inner_width)
                    .with(&inner_filter.iter().collect::<Vec<_>>());
                self.walk(outer, outer_need);
                if let Need::Cols(cols) = inner_need {
                    let cols: Vec<usize> = cols.into_iter().collect();
                    same_index_only(table, access, &cols);
                    *inner_columns = scanrun::mask(table, &cols);
                }
            }
            Plan::SemiJoin {
                input,
                inner,
                outer_keys,
                inner_keys,
                ..
            } => {
                self.walk(input, need.with(&outer_keys.iter().collect::<Vec<_>>()));
                self.walk(inner, only(&inner_keys.iter().collect::<Vec<_>>()));
            }
            Plan::Agg {
                input, group, aggs, ..
            } => {
                let mut read: Vec<&Expr> = group.iter().collect();
                for a in aggs.iter() {
                    read.extend(a.args.iter().chain(&a.filter));
                    read.extend(a.order.iter().map(|k| &k.expr));
                }
                self.walk(input, only(&read));
            }
            Plan::Sort { input, keys } => {
                let read: Vec<&Expr> = keys.iter().map(|k| &k.expr).collect();
                self.walk(input, need.with(&read));
            }
            Plan::Limit {
                input,
                limit,
                offset,
            } => {
                let count = |e: &Option<Expr>| match e {
                    None => Some(0.0),
                    Some(Expr::Const(keel_types::Datum::Int8(n), _)) if *n >= 0 => Some(*n as f64),
                    _ => None,
                };
                let goal = match (limit.is_some(), count(limit), count(offset)) {
                    (true, Some(l), Some(o)) => Some(l + o),
                    _ => None,
                };
                self.walk_goal(input, need, goal);
            }
            Plan::Distinct { input, on, .. } => {
                let need = if on.is_empty() {
                    Need::All
                } else {
                    need.with(&on.iter().collect::<Vec<_>>())
                };
                self.walk(input, need);
            }
            Plan::SetOp { left, right, .. } => {
                self.walk(left, Need::All);
                self.walk(right, Need::All);
            }
        }
    }

    /// A sort of a table's scan that an index-only scan read in key order can replace, when
    /// that is the cheapest way to the sorted rows (for the first `goal` of them): the scan.
    fn sorted_scan(&self, plan: &Plan, need: &Need, goal: Option<f64>) -> Option<Plan> {
        let Plan::Sort { input, keys } = plan else {
            return None;
        };
        let Plan::Scan {
            table,
            alias,
            filter,
            ..
        } = input.as_ref()
        else {
            return None;
        };
        let read: Vec<&Expr> = keys.iter().map(|k| &k.expr).chain(filter).collect();
        let Need::Cols(cols) = need.clone().with(&read) else {
            return None;
        };
        let cols: Vec<usize> = cols.into_iter().collect();
        let (path, sort) = paths::cheapest_sorted(
            self.catalog,
            self.sizes,
            table,
            (filter.as_ref(), Some(&cols)),
            keys,
            goal,
        );
        if sort
            || !matches!(
                path.access,
                Access::Index {
                    index_only: true,
                    ..
                }
            )
        {
            return None;
        }
        Some(Plan::Scan {
            table: table.clone(),
            alias: alias.clone(),
            access: path.access,
            filter: filter.clone(),
            run: Default::default(),
        })
    }

    /// A scan of `table` whose rows pass `filter` and of which `cols` are read.
    fn scan(
        &self,
        table: &Arc<TableDef>,
        access: &mut Access,
        filter: Option<&Expr>,
        cols: &[usize],
    ) {
        match access {
            Access::Index { bitmap: false, .. } => same_index_only(table, access, cols),
            Access::Seq | Access::Index { bitmap: true, .. } => {
                let paths =
                    paths::scan_paths(self.catalog, self.sizes, table, filter, None, Some(cols));
                let best = paths.iter().min_by(|a, b| a.total.total_cmp(&b.total));
                if let Some(best) = best
                    && matches!(
                        best.access,
                        Access::Index {
                            index_only: true,
                            ..
                        }
                    )
                {
                    *access = best.access.clone();
                }
            }
        }
    }
}

/// An index scan of `table` becomes index-only when its index holds every column read.
fn same_index_only(table: &TableDef, access: &mut Access, cols: &[usize]) {
    if let Access::Index {
        index,
        bitmap: false,
        index_only,
        ..
    } = access
        && covers(table, index, cols)
    {
        *index_only = true;
    }
}
