//! Access paths to one table and their costs: a sequential scan, or a scan through any index
//! whose method can serve the WHERE's conjuncts (equality on leading key columns, then a range
//! on the next one), or an index scan read in key order to give an ORDER BY its rows without a
//! sort. The cheapest wins, by the access method's own cost estimate (`IndexAm::cost_estimate`)
//! against `seq_page_cost * pages + cpu_tuple_cost * rows`, as PostgreSQL's `cost_seqscan` /
//! `cost_index` compare them.

use crate::RelSizes;
use crate::access::conjuncts;
use crate::cost::{
    self, CPU_OPERATOR_COST, CPU_TUPLE_COST, RANDOM_PAGE_COST, SEQ_PAGE_COST, TableInfo,
};
use crate::plan::{Access, SortKey};
use keel_access::am::{self, CostInput, CostParams};
use keel_analyzer::expr::Expr;
use keel_catalog::{Catalog, IndexDef, TableDef};
use std::sync::Arc;

const PAGE_SIZE: f64 = 8192.0;

/// One way to read a table, with its estimated cost.
#[derive(Clone)]
pub(crate) struct ScanPath {
    pub access: Access,
    /// Cost before the first row (PostgreSQL's startup cost).
    pub startup: f64,
    /// Cost of reading every row the path returns, the filter included.
    pub total: f64,
    /// Rows out, after the filter.
    pub rows: f64,
    /// Rows come in the order asked of [`scan_paths`].
    pub ordered: bool,
}

impl ScanPath {
    /// Cost of reading `fraction` of the rows (a LIMIT stops early), as PostgreSQL's
    /// fractional path comparison.
    pub fn cost_for(&self, fraction: f64) -> f64 {
        self.startup + (self.total - self.startup) * fraction.clamp(0.0, 1.0)
    }
}

/// `column op value` conjuncts of a WHERE, the column on the left; with the conjunct itself.
pub(crate) struct Qual<'e> {
    pub col: usize,
    op: &'static str,
    value: &'e Expr,
    pub clause: &'e Expr,
}

pub(crate) fn quals(parts: &[Expr]) -> Vec<Qual<'_>> {
    parts
        .iter()
        .filter_map(|p| {
            // A composite's IS NOT NULL looks at its fields (`(,)` is not NOT NULL), which
            // no index range can answer.
            if let Expr::IsNull(arg, true) = p
                && let Expr::Col(col, ty) = arg.as_ref()
                && !matches!(
                    ty,
                    keel_types::TypeId::Composite(_) | keel_types::TypeId::Record
                )
            {
                return Some(Qual {
                    col: *col,
                    op: "IS NOT NULL",
                    value: p,
                    clause: p,
                });
            }
            let (col, op, value) = cost::column_clause(p)?;
            Some(Qual {
                col,
                op,
                value,
                clause: p,
            })
        })
        .collect()
}

/// The index access `quals` allow on `idx` (equalities on its leading columns, then bounds on
/// the next), and the conjuncts it uses.
pub(crate) fn index_access<'e>(idx: &Arc<IndexDef>, quals: &[Qual<'e>]) -> (Access, Vec<&'e Expr>) {
    let mut used = Vec::new();
    let mut eq = Vec::new();
    for col in &idx.columns {
        match quals.iter().find(|q| q.col == *col && q.op == "=") {
            Some(q) => {
                eq.push(q.value.clone());
                used.push(q.clause);
            }
            None => break,
        }
    }
    let (mut lower, mut upper, mut not_null) = (None, None, false);
    if let Some(next) = idx.columns.get(eq.len()) {
        for q in quals.iter().filter(|q| q.col == *next) {
            let bound = match q.op {
                ">" => &mut lower,
                ">=" => &mut lower,
                "<" => &mut upper,
                "<=" => &mut upper,
                _ => continue,
            };
            if bound.is_none() {
                *bound = Some((q.value.clone(), matches!(q.op, ">=" | "<=")));
                used.push(q.clause);
            }
        }
        // A bound implies it (the operators are strict); alone it is a range of its own.
        if let Some(q) = quals
            .iter()
            .find(|q| q.col == *next && q.op == "IS NOT NULL")
        {
            used.push(q.clause);
            not_null = lower.is_none() && upper.is_none();
        }
    }
    (
        Access::Index {
            index: idx.clone(),
            eq,
            lower,
            upper,
            bitmap: false,
            index_only: false,
            backward: false,
            not_null,
        },
        used,
    )
}

/// Cost of a scan of `table` through `idx` whose index conditions are `used`, returning the
/// rows of which a fraction `filter_sel` pass the whole filter of `filter_quals` conditions.
#[allow(clippy::too_many_arguments)]
fn index_path(
    catalog: &Catalog,
    sizes: &dyn RelSizes,
    info: &TableInfo,
    table: &TableDef,
    access: Access,
    used: &[&Expr],
    filter_sel: f64,
    filter_quals: usize,
) -> ScanPath {
    let (index, unique_equality, index_only) = match &access {
        Access::Index {
            index,
            eq,
            index_only,
            ..
        } => (
            index.clone(),
            index.unique && eq.len() == index.columns.len(),
            *index_only,
        ),
        Access::Seq => return seq_path(info, filter_sel, filter_quals),
    };
    let sel = match used {
        [] => 1.0,
        [one] => cost::selectivity(catalog, info, table, one),
        many => cost::selectivity(
            catalog,
            info,
            table,
            &Expr::And(many.iter().map(|e| (*e).clone()).collect()),
        ),
    };
    let correlation = index
        .columns
        .first()
        .and_then(|&c| {
            let ty = table.columns.get(c)?.ty.id;
            info.stats.as_deref()?.column(c, ty)?.correlation
        })
        .map_or(0.0, f64::from)
        // btcostestimate: the leading column's order says less about a multi-column
        // index's order.
        * if index.columns.len() > 1 { 0.75 } else { 1.0 };
    let input = CostInput {
        index_pages: (sizes.index_bytes(&index) as f64 / PAGE_SIZE)
            .ceil()
            .max(1.0),
        index_tuples: info.rows,
        tree_height: None,
        heap_pages: info.pages,
        heap_tuples: info.rows,
        selectivity: sel,
        index_quals: used.len() as u32,
        unique_equality,
        correlation,
        index_only,
        all_visible_frac: info.all_visible_frac,
    };
    let c = am::method(index.method).cost_estimate(&input, &CostParams::default());
    // Every fetched row is checked against the whole filter (index entries may be stale).
    let check = c.rows * CPU_OPERATOR_COST * filter_quals as f64;
    let rows = keel_stats::select::clamp_row_est(info.rows * filter_sel).min(c.rows);
    if let Access::Index { bitmap: true, .. } = access {
        return bitmap_path(info, access, c, filter_quals, rows);
    }
    ScanPath {
        access,
        startup: c.startup,
        total: c.total + check,
        rows,
        ordered: false,
    }
}

/// A bitmap heap scan over the index scan costed `c` (PostgreSQL's `cost_bitmap_heap_scan`
/// with one index): the index part is paid before the first row (plus a tenth of an
/// operator per entry to build the bitmap); each heap page holding a match is read once,
/// priced between a random read (few pages) and a sequential one (most of the table).
fn bitmap_path(
    info: &TableInfo,
    access: Access,
    c: am::IndexCost,
    filter_quals: usize,
    rows: f64,
) -> ScanPath {
    let tuples = c.rows;
    let t = info.pages.max(1.0);
    let pages = ((2.0 * t * tuples) / (2.0 * t + tuples)).min(t).ceil();
    let per_page = if pages >= 2.0 {
        RANDOM_PAGE_COST - (RANDOM_PAGE_COST - SEQ_PAGE_COST) * (pages / t).sqrt()
    } else {
        RANDOM_PAGE_COST
    };
    let startup = c.index_total + 0.1 * CPU_OPERATOR_COST * tuples;
    let run =
        pages * per_page + tuples * (CPU_TUPLE_COST + CPU_OPERATOR_COST * filter_quals as f64);
    ScanPath {
        access,
        startup,
        total: startup + run,
        rows,
        ordered: false,
    }
}

/// A sequential scan checking `filter_quals` conditions on every row.
fn seq_path(info: &TableInfo, filter_sel: f64, filter_quals: usize) -> ScanPath {
    ScanPath {
        access: Access::Seq,
        startup: 0.0,
        total: info.pages * SEQ_PAGE_COST
            + info.rows * (CPU_TUPLE_COST + CPU_OPERATOR_COST * filter_quals as f64),
        rows: keel_stats::select::clamp_row_est(info.rows * filter_sel),
        ordered: false,
    }
}

/// Every path to `table`'s rows passing `pred`: the sequential scan first, then one per index
/// the conjuncts can use (and, with `order`, per index read in that order). With `returns`
/// (the columns read above the scan and by `pred`), also an index-only scan through each
/// index that holds all of them and can give them back.
pub(crate) fn scan_paths(
    catalog: &Catalog,
    sizes: &dyn RelSizes,
    table: &Arc<TableDef>,
    pred: Option<&Expr>,
    order: Option<&[SortKey]>,
    returns: Option<&[usize]>,
) -> Vec<ScanPath> {
    let info = cost::table_info(sizes, table);
    let mut parts = Vec::new();
    if let Some(p) = pred {
        conjuncts(p.clone(), &mut parts);
    }
    let filter_sel = pred.map_or(1.0, |p| cost::selectivity(catalog, &info, table, p));
    let nquals = parts.len();
    let mut paths = vec![seq_path(&info, filter_sel, nquals)];
    let quals = quals(&parts);
    // A partitioned table's indexes are empty: its partitions' are read (partition.rs).
    let indexes = catalog
        .indexes_of(table.oid)
        .filter(|_| table.partition_key().is_none());
    for idx in indexes {
        let caps = am::method(idx.method).capabilities();
        if !caps.has_ordered_scan {
            continue;
        }
        let (access, used) = index_access(idx, &quals);
        let direction = match (order, &access) {
            (Some(keys), Access::Index { eq, .. }) if caps.can_order => {
                index_order(idx, eq.len(), keys)
            }
            _ => None,
        };
        let ordered = direction.is_some();
        let mut access = access;
        if let (Some(true), Access::Index { backward, .. }) = (direction, &mut access) {
            *backward = true;
        }
        let index_only = returns.is_some_and(|cols| covers(table, idx, cols));
        if used.is_empty() && !ordered && !index_only {
            continue;
        }
        if caps.has_bitmap_scan && !used.is_empty() {
            let mut bitmap = access.clone();
            if let Access::Index { bitmap: b, .. } = &mut bitmap {
                *b = true;
            }
            paths.push(index_path(
                catalog, sizes, &info, table, bitmap, &used, filter_sel, nquals,
            ));
        }
        if index_only {
            let mut only = access.clone();
            if let Access::Index { index_only, .. } = &mut only {
                *index_only = true;
            }
            let mut path = index_path(
                catalog, sizes, &info, table, only, &used, filter_sel, nquals,
            );
            path.ordered = ordered;
            paths.push(path);
            if used.is_empty() && !ordered {
                continue;
            }
        }
        let mut path = index_path(
            catalog, sizes, &info, table, access, &used, filter_sel, nquals,
        );
        path.ordered = ordered;
        paths.push(path);
    }
    paths
}

/// Whether `idx` holds every column of `cols` and its method can give their values back
/// (an index-only scan can then answer without the heap).
pub(crate) fn covers(table: &TableDef, idx: &IndexDef, cols: &[usize]) -> bool {
    let am = am::method(idx.method);
    cols.iter().all(|c| idx.columns.contains(c))
        && idx.columns.iter().all(|&c| {
            table
                .columns
                .get(c)
                .is_some_and(|col| am.can_return(col.ty.id))
        })
}

/// In which direction a scan of `idx` whose first `eq` columns are fixed by equality returns
/// rows in `keys` order: `Some(false)` forward, when the keys are the next index columns in
/// order, ascending with NULLs last (the B-tree key order); `Some(true)` backward, when they
/// are all descending with NULLs first (its reverse); None otherwise. Keys on the fixed
/// columns may come anywhere, in any direction.
pub(crate) fn index_order(idx: &IndexDef, eq: usize, keys: &[SortKey]) -> Option<bool> {
    let mut next = eq;
    let mut backward = None;
    for k in keys {
        let Expr::Col(c, _) = &k.expr else {
            return None;
        };
        if idx.columns[..eq].contains(c) {
            continue;
        }
        let desc = match (k.desc, k.nulls_first) {
            (false, false) => false,
            (true, true) => true,
            _ => return None,
        };
        if idx.columns.get(next) != Some(c) || *backward.get_or_insert(desc) != desc {
            return None;
        }
        next += 1;
    }
    Some(backward.unwrap_or(false))
}

/// The cheapest way to read `table`'s rows passing `pred`, regardless of order.
pub(crate) fn cheapest(
    catalog: &Catalog,
    sizes: &dyn RelSizes,
    table: &Arc<TableDef>,
    pred: Option<&Expr>,
) -> ScanPath {
    let mut paths = scan_paths(catalog, sizes, table, pred, None, None);
    let mut best = paths.swap_remove(0);
    for p in paths {
        if p.total < best.total {
            best = p;
        }
    }
    best
}

/// PostgreSQL's `cost_sort` for `rows` rows in memory: two operator calls per comparison,
/// `rows * log2(rows)` comparisons, or `rows * log2(2 * bound)` when only the first `bound`
/// rows are wanted (a top-N heap).
pub(crate) fn sort_cost(rows: f64, bound: Option<f64>) -> f64 {
    let rows = rows.max(2.0);
    let cmp = 2.0 * CPU_OPERATOR_COST;
    match bound {
        Some(b) if 2.0 * b < rows => cmp * rows * (2.0 * b.max(1.0)).log2(),
        _ => cmp * rows * rows.log2(),
    }
}

/// The cheapest way to read `table`'s rows passing `pred` in `keys` order when only the first
/// `goal` rows may be read: an index read in that order (`.1` false: no sort needed), or the
/// cheapest path followed by a sort. `returns` as [`scan_paths`]'s.
pub(crate) fn cheapest_sorted(
    catalog: &Catalog,
    sizes: &dyn RelSizes,
    table: &Arc<TableDef>,
    (pred, returns): (Option<&Expr>, Option<&[usize]>),
    keys: &[SortKey],
    goal: Option<f64>,
) -> (ScanPath, bool) {
    let paths = scan_paths(catalog, sizes, table, pred, Some(keys), returns);
    let mut best: Option<(f64, &ScanPath, bool)> = None;
    for p in &paths {
        let (cost, sort) = if p.ordered {
            let fraction = goal.map_or(1.0, |g| g / p.rows.max(1.0));
            (p.cost_for(fraction), false)
        } else {
            (p.total + sort_cost(p.rows, goal), true)
        };
        if best.as_ref().is_none_or(|b| cost < b.0) {
            best = Some((cost, p, sort));
        }
    }
    match best {
        Some((_, p, sort)) => (p.clone(), sort),
        None => (seq_path(&cost::table_info(sizes, table), 1.0, 0), true),
    }
}
