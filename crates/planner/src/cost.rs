//! Row and cost estimates, in PostgreSQL's cost units (a sequential page read costs 1.0).
//!
//! Without statistics the estimates follow PostgreSQL's defaults for a table never analyzed:
//! its row count comes from its size on disk and an assumed tuple width, an equality keeps
//! 0.5% of the rows (DEFAULT_EQ_SEL), an inequality a third (DEFAULT_INEQ_SEL), a range on
//! both sides 0.5% (DEFAULT_RANGE_INEQ_SEL).

use crate::RelSizes;
use crate::plan::Access;
use keel_analyzer::expr::Expr;
use keel_catalog::TableDef;

pub const SEQ_PAGE_COST: f64 = 1.0;
pub const RANDOM_PAGE_COST: f64 = 4.0;
pub const CPU_TUPLE_COST: f64 = 0.01;
pub const CPU_OPERATOR_COST: f64 = 0.0025;
const PAGE_SIZE: f64 = 8192.0;
/// Tuple header and line pointer, per row on a heap page.
const ROW_OVERHEAD: f64 = 48.0;
/// Assumed width of a column of variable length.
const VARLENA_WIDTH: f64 = 32.0;

pub fn eq_sel() -> f64 {
    0.005
}
const INEQ_SEL: f64 = 1.0 / 3.0;
const RANGE_SEL: f64 = 0.005;
/// A condition the estimator does not look into.
const OTHER_SEL: f64 = 0.5;

#[derive(Clone, Copy, Debug)]
pub struct Estimate {
    pub rows: f64,
    pub cost: f64,
}

/// Pages of `t`; at least 10, as PostgreSQL assumes for a table never vacuumed, so a plan made
/// while a table is still empty does not bet on it staying so.
pub fn table_pages(sizes: &dyn RelSizes, t: &TableDef) -> f64 {
    (sizes.relation_bytes(t) as f64 / PAGE_SIZE).max(10.0)
}

/// Estimated live rows of `t`.
pub fn table_rows(sizes: &dyn RelSizes, t: &TableDef) -> f64 {
    let width: f64 = t
        .columns
        .iter()
        .map(|c| match c.ty.id.typlen() {
            n if n > 0 => n as f64,
            _ => VARLENA_WIDTH,
        })
        .sum();
    let per_page = (PAGE_SIZE / (width + ROW_OVERHEAD)).floor().max(1.0);
    (table_pages(sizes, t) * per_page).max(1.0)
}

fn conjunct_sel(e: &Expr) -> f64 {
    match e {
        Expr::And(args) => args.iter().map(conjunct_sel).product(),
        Expr::Bin { op: "=", .. } => eq_sel(),
        Expr::Bin {
            op: "<" | ">" | "<=" | ">=",
            ..
        } => INEQ_SEL,
        _ => OTHER_SEL,
    }
}

/// Rows and cost of scanning `table` through `access`, keeping rows that pass `filter`.
pub fn leaf_estimate(
    sizes: &dyn RelSizes,
    table: &TableDef,
    access: &Access,
    filter: Option<&Expr>,
) -> Estimate {
    let rows = table_rows(sizes, table);
    let pages = table_pages(sizes, table);
    let sel = filter.map_or(1.0, conjunct_sel);
    match access {
        Access::Seq => Estimate {
            rows: (rows * sel).max(1.0),
            cost: pages * SEQ_PAGE_COST + rows * CPU_TUPLE_COST,
        },
        Access::Index {
            index,
            eq,
            lower,
            upper,
        } => {
            let fetched = if index.unique && eq.len() == index.columns.len() {
                1.0
            } else {
                let mut s = eq_sel().powi(eq.len() as i32);
                s *= match (lower, upper) {
                    (Some(_), Some(_)) => RANGE_SEL,
                    (Some(_), None) | (None, Some(_)) => INEQ_SEL,
                    (None, None) => 1.0,
                };
                (rows * s).max(1.0)
            };
            Estimate {
                rows: (rows * sel).min(fetched).max(1.0),
                cost: RANDOM_PAGE_COST + fetched * (RANDOM_PAGE_COST + CPU_TUPLE_COST),
            }
        }
    }
}
