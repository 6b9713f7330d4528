//! Row and cost estimates, in PostgreSQL's cost units (a sequential page read costs 1.0).
//!
//! A table's rows are its analyzed density times the pages it has now (keel-stats'
//! `estimate_tuples`: at least 10 pages and an assumed tuple width when never analyzed). A
//! condition's selectivity comes from the column's statistics through keel-stats' estimators
//! (PostgreSQL's `selfuncs.c`): MCVs and histogram for `column op constant`, distinct values
//! for `column = parameter`, the null fraction for IS NULL, and a range bounded on both sides
//! paired as `clauselist_selectivity` does. Without statistics they give PostgreSQL's defaults.

use crate::RelSizes;
use crate::plan::Access;
use keel_analyzer::expr::Expr;
use keel_catalog::{Catalog, TableDef};
use keel_stats::TableStats;
use keel_stats::select::{self, Column, Ineq};
use std::sync::Arc;

pub const SEQ_PAGE_COST: f64 = 1.0;
pub const RANDOM_PAGE_COST: f64 = 4.0;
pub const CPU_TUPLE_COST: f64 = 0.01;
pub const CPU_OPERATOR_COST: f64 = 0.0025;
const PAGE_SIZE: f64 = 8192.0;
/// Assumed width of a column of variable length.
const VARLENA_WIDTH: f64 = 32.0;
/// A condition the estimator does not look into (PostgreSQL's boolean default).
const OTHER_SEL: f64 = 0.5;

pub fn eq_sel() -> f64 {
    select::DEFAULT_EQ_SEL
}

#[derive(Clone, Copy, Debug)]
pub struct Estimate {
    pub rows: f64,
    pub cost: f64,
}

/// What the planner knows of one table's size and contents.
pub struct TableInfo {
    pub rows: f64,
    pub pages: f64,
    pub stats: Option<Arc<TableStats>>,
    /// Fraction of the pages all-visible (PostgreSQL's `allvisfrac`).
    pub all_visible_frac: f64,
}

pub fn table_info(sizes: &dyn RelSizes, t: &TableDef) -> TableInfo {
    let pages = (sizes.relation_bytes(t) as f64 / PAGE_SIZE).ceil();
    let stats = sizes.table_stats(t);
    let width: f64 = t
        .columns
        .iter()
        .map(|c| match c.ty.id.typlen() {
            n if n > 0 => n as f64,
            _ => VARLENA_WIDTH,
        })
        .sum();
    let rows = select::estimate_tuples(stats.as_deref(), pages as u32, width).max(1.0);
    let all_visible = sizes.pages_all_visible(t) as f64;
    TableInfo {
        rows,
        pages: pages.max(10.0),
        stats,
        all_visible_frac: if pages <= 0.0 || all_visible <= 0.0 {
            0.0
        } else if all_visible >= pages {
            1.0
        } else {
            all_visible / pages
        },
    }
}

/// The estimator's view of column `i` of `t`.
pub fn column<'a>(catalog: &Catalog, info: &'a TableInfo, t: &TableDef, i: usize) -> Column<'a> {
    let ty = t
        .columns
        .get(i)
        .map_or(keel_types::TypeId::Text, |c| c.ty.id);
    Column {
        ty,
        stats: info.stats.as_deref().and_then(|s| s.column(i, ty)),
        tuples: info.rows,
        unique: catalog
            .indexes_of(t.oid)
            .any(|x| x.unique && x.columns == [i]),
    }
}

/// Distinct values of column `i` of `t`, and whether that is only the default guess.
pub fn distinct(catalog: &Catalog, info: &TableInfo, t: &TableDef, i: usize) -> (f64, bool) {
    select::num_distinct(&column(catalog, info, t, i))
}

fn ineq_of(op: &str) -> Option<Ineq> {
    Some(match op {
        "<" => Ineq::Lt,
        "<=" => Ineq::Le,
        ">" => Ineq::Gt,
        ">=" => Ineq::Ge,
        _ => return None,
    })
}

/// `column op value` with the column on the left, if `e` is one.
pub(crate) fn column_clause(e: &Expr) -> Option<(usize, &'static str, &Expr)> {
    let Expr::Bin { op, l, r, .. } = e else {
        return None;
    };
    match (l.as_ref(), r.as_ref()) {
        (Expr::Col(c, t), v) if v.is_row_independent() && v.ty() == *t => Some((*c, op, v)),
        (v, Expr::Col(c, t)) if v.is_row_independent() && v.ty() == *t => {
            let flipped = match *op {
                "<" => ">",
                ">" => "<",
                "<=" => ">=",
                ">=" => "<=",
                o => o,
            };
            Some((*c, flipped, v))
        }
        _ => None,
    }
}

struct Scope<'a> {
    catalog: &'a Catalog,
    info: &'a TableInfo,
    table: &'a TableDef,
}

impl Scope<'_> {
    fn clause_sel(&self, e: &Expr) -> f64 {
        match e {
            Expr::And(args) => self.list_sel(args),
            Expr::Or(args) => {
                1.0 - args
                    .iter()
                    .map(|a| 1.0 - self.clause_sel(a))
                    .product::<f64>()
            }
            Expr::Not(a) => 1.0 - self.clause_sel(a),
            Expr::IsNull(a, negated) => match a.as_ref() {
                Expr::Col(c, _) => select::null_test_sel(
                    &column(self.catalog, self.info, self.table, *c),
                    !negated,
                ),
                _ => select::DEFAULT_UNK_SEL,
            },
            e => match column_clause(e) {
                Some((c, op, v)) => {
                    let col = column(self.catalog, self.info, self.table, c);
                    match (op, v) {
                        ("=", Expr::Const(d, _)) => select::eq_sel(&col, d),
                        ("=", _) => {
                            // A parameter: one of the column's distinct values.
                            let (nd, _) = select::num_distinct(&col);
                            let nulls = col.stats.map_or(0.0, |s| s.null_frac as f64);
                            ((1.0 - nulls) / nd.max(1.0)).min(1.0)
                        }
                        ("<>", Expr::Const(d, _)) => select::neq_sel(&col, d),
                        (op, Expr::Const(d, _)) => match ineq_of(op) {
                            Some(i) => select::ineq_sel(&col, i, d),
                            None => OTHER_SEL,
                        },
                        (op, _) if ineq_of(op).is_some() => select::DEFAULT_INEQ_SEL,
                        _ => OTHER_SEL,
                    }
                }
                None => OTHER_SEL,
            },
        }
    }

    /// Conjuncts: a column bounded on both sides counts as one range, the rest multiply.
    fn list_sel(&self, parts: &[Expr]) -> f64 {
        let mut s = 1.0;
        // Per column: (selectivity of its `>` side, of its `<` side).
        let mut ranges: Vec<(usize, Option<f64>, Option<f64>)> = Vec::new();
        for p in parts {
            if let Some((c, op, _)) = column_clause(p)
                && let Some(i) = ineq_of(op)
            {
                let sel = self.clause_sel(p);
                let at = match ranges.iter().position(|r| r.0 == c) {
                    Some(at) => at,
                    None => {
                        ranges.push((c, None, None));
                        ranges.len() - 1
                    }
                };
                let slot = if matches!(i, Ineq::Gt | Ineq::Ge) {
                    &mut ranges[at].1
                } else {
                    &mut ranges[at].2
                };
                *slot = Some(slot.map_or(sel, |o: f64| o.min(sel)));
                continue;
            }
            s *= self.clause_sel(p);
        }
        for (c, lo, hi) in ranges {
            s *= match (lo, hi) {
                (Some(lo), Some(hi)) => {
                    select::range_sel(&column(self.catalog, self.info, self.table, c), lo, hi)
                }
                (Some(x), None) | (None, Some(x)) => x,
                (None, None) => 1.0,
            };
        }
        s
    }
}

/// Fraction of `table`'s rows that pass `pred`.
pub fn selectivity(catalog: &Catalog, info: &TableInfo, table: &TableDef, pred: &Expr) -> f64 {
    Scope {
        catalog,
        info,
        table,
    }
    .clause_sel(pred)
    .clamp(0.0, 1.0)
}

/// Rows and cost of scanning `table` through `access`, keeping rows that pass `filter`.
pub fn leaf_estimate(
    catalog: &Catalog,
    info: &TableInfo,
    table: &TableDef,
    access: &Access,
    filter: Option<&Expr>,
) -> Estimate {
    let sel = filter.map_or(1.0, |f| selectivity(catalog, info, table, f));
    let rows = select::clamp_row_est(info.rows * sel);
    match access {
        Access::Seq => Estimate {
            rows,
            cost: info.pages * SEQ_PAGE_COST + info.rows * CPU_TUPLE_COST,
        },
        Access::Index { index, eq, .. } => {
            // Rows the index returns: those its own conditions keep (the filter holds them and
            // perhaps more, so the filter's rows bound them from below).
            let fetched = if index.unique && eq.len() == index.columns.len() {
                1.0
            } else {
                rows
            };
            Estimate {
                rows: rows.min(fetched).max(1.0),
                cost: RANDOM_PAGE_COST + fetched * (RANDOM_PAGE_COST + CPU_TUPLE_COST),
            }
        }
    }
}

/// One probe of an index nested loop: `access`'s equality keys come from the outer row, so
/// each matches about one in as many rows as its leading column has distinct values (every
/// key, for a unique index), and `filter` (the inner side's own conditions) keeps its share
/// of those. The planner prices the loop with the same per-probe rows.
pub fn probe_estimate(
    catalog: &Catalog,
    info: &TableInfo,
    table: &TableDef,
    access: &Access,
    filter: Option<&Expr>,
) -> Estimate {
    let Access::Index { index, eq, .. } = access else {
        return leaf_estimate(catalog, info, table, access, filter);
    };
    let fetched = if index.unique && eq.len() == index.columns.len() {
        1.0
    } else {
        let nd = index
            .columns
            .first()
            .map_or(1.0, |&c| distinct(catalog, info, table, c).0);
        (info.rows / nd.max(1.0)).max(1.0)
    };
    let sel = filter.map_or(1.0, |f| selectivity(catalog, info, table, f));
    Estimate {
        rows: (fetched * sel).max(1.0),
        cost: RANDOM_PAGE_COST + fetched * (RANDOM_PAGE_COST + CPU_TUPLE_COST),
    }
}
