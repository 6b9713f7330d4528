//! Index scan costs in PostgreSQL's units (one sequential page read = 1.0), for the planner.
//!
//! A simplified version of PostgreSQL 15's `genericcostestimate` + `btcostestimate`
//! (selfuncs.c) and the heap part of `cost_index` (costsize.c), for one scan (no repeated
//! scans in a nested loop, no `= ANY(array)` keys, operands that are constants or parameters):
//!
//! - index entries read: `selectivity * heap_tuples`, rounded, at least 1, at most the
//!   index's entries (1 for equality on every column of a unique index);
//! - index pages read: that fraction of the index's pages, rounded up, each a random read;
//!   every entry read costs `cpu_index_tuple_cost` plus `cpu_operator_cost` per index qual;
//! - the method's own startup (B-tree: the descent, see btree.rs);
//! - heap pages: between the random reads of the Mackert–Lohman estimate (uncorrelated heap)
//!   and one random read plus sequential reads of `selectivity` of the heap (heap in index
//!   order), interpolated by `correlation²`; plus `cpu_tuple_cost` per row fetched.
//!
//! With the same inputs this gives PostgreSQL's figures (tested against EXPLAIN below).

/// Planner cost settings, PostgreSQL's defaults.
#[derive(Clone, Copy, Debug)]
pub struct CostParams {
    pub seq_page_cost: f64,
    pub random_page_cost: f64,
    pub cpu_tuple_cost: f64,
    pub cpu_index_tuple_cost: f64,
    pub cpu_operator_cost: f64,
    /// effective_cache_size, in pages (4GB).
    pub effective_cache_pages: f64,
}

impl Default for CostParams {
    fn default() -> Self {
        CostParams {
            seq_page_cost: 1.0,
            random_page_cost: 4.0,
            cpu_tuple_cost: 0.01,
            cpu_index_tuple_cost: 0.005,
            cpu_operator_cost: 0.0025,
            effective_cache_pages: 524_288.0,
        }
    }
}

/// What the planner knows about one index scan.
#[derive(Clone, Copy, Debug, Default)]
pub struct CostInput {
    /// Size of the index (pg_class.relpages / reltuples of the index).
    pub index_pages: f64,
    pub index_tuples: f64,
    /// Levels above the leaves, when known (B-tree's meta page); estimated otherwise.
    pub tree_height: Option<u32>,
    /// Size of the table.
    pub heap_pages: f64,
    pub heap_tuples: f64,
    /// Fraction of the table's rows the index conditions select (0..=1).
    pub selectivity: f64,
    /// Number of index conditions (each is evaluated once per entry read).
    pub index_quals: u32,
    /// Equality on every column of a unique index: at most one entry matches.
    pub unique_equality: bool,
    /// Correlation between the heap's physical order and the leading index column's order,
    /// -1..=1 (pg_stats.correlation).
    pub correlation: f64,
    /// An index-only scan: heap pages are read only for rows on pages not all-visible.
    pub index_only: bool,
    /// Fraction of the table's pages whose visibility-map bit is set (relallvisible / pages).
    pub all_visible_frac: f64,
}

/// Estimated cost of a scan through an index, heap fetches included.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IndexCost {
    /// Cost before the first row can be returned.
    pub startup: f64,
    /// Cost of returning every row.
    pub total: f64,
    /// Rows fetched from the heap.
    pub rows: f64,
    /// The index's own part of `total`, without the heap fetches: what a bitmap scan of the
    /// index costs (PostgreSQL's `indexTotalCost`).
    pub index_total: f64,
}

/// PostgreSQL's clamp_row_est: at least one row, rounded.
pub fn clamp_rows(n: f64) -> f64 {
    if n <= 1.0 { 1.0 } else { n.round() }
}

/// Index part of the cost, method-independent (genericcostestimate): `(startup, total)` for
/// reading `entries` entries.
pub fn generic_index_cost(input: &CostInput, params: &CostParams, entries: f64) -> (f64, f64) {
    let entries = entries.round().min(input.index_tuples).max(1.0);
    let pages = if input.index_pages > 1.0 && input.index_tuples > 1.0 {
        (entries * input.index_pages / input.index_tuples).ceil()
    } else {
        1.0
    };
    let qual_op_cost = params.cpu_operator_cost * input.index_quals as f64;
    let total =
        pages * params.random_page_cost + entries * (params.cpu_index_tuple_cost + qual_op_cost);
    (0.0, total)
}

/// Heap pages a scan fetching `tuples` rows of a `pages`-page table touches, with a cache of
/// effective_cache_size shared by table and index (Mackert and Lohman, as index_pages_fetched).
fn heap_pages_fetched(tuples: f64, pages: f64, index_pages: f64, params: &CostParams) -> f64 {
    let t = pages.max(1.0);
    let total = (t + index_pages).max(1.0);
    let b = (params.effective_cache_pages * t / total).max(1.0).ceil();
    let n = tuples;
    let fetched = if t <= b {
        let p = (2.0 * t * n) / (2.0 * t + n);
        if p >= t { t } else { p }
    } else {
        let lim = (2.0 * t * b) / (2.0 * t - b);
        if n <= lim {
            (2.0 * t * n) / (2.0 * t + n)
        } else {
            b + (n - lim) * (t - b) / t
        }
    };
    fetched.ceil()
}

/// Adds the heap fetches of an ordered (row-at-a-time) scan to the index part
/// `(index_startup, index_total)` (cost_index).
pub fn with_heap_fetches(
    input: &CostInput,
    params: &CostParams,
    (index_startup, index_total): (f64, f64),
) -> IndexCost {
    let sel = input.selectivity.clamp(0.0, 1.0);
    let rows = clamp_rows(sel * input.heap_tuples);
    // An index-only scan visits the heap only for pages not all-visible (cost_index).
    let not_all_visible = |pages: f64| {
        if input.index_only {
            (pages * (1.0 - input.all_visible_frac.clamp(0.0, 1.0))).ceil()
        } else {
            pages
        }
    };
    let max_io = not_all_visible(heap_pages_fetched(
        rows,
        input.heap_pages,
        input.index_pages,
        params,
    )) * params.random_page_cost;
    let min_pages = not_all_visible((sel * input.heap_pages).ceil());
    let min_io = if min_pages > 0.0 {
        params.random_page_cost + (min_pages - 1.0).max(0.0) * params.seq_page_cost
    } else {
        0.0
    };
    let c2 = input.correlation.clamp(-1.0, 1.0).powi(2);
    let run = (index_total - index_startup)
        + max_io
        + c2 * (min_io - max_io)
        + params.cpu_tuple_cost * rows;
    IndexCost {
        startup: index_startup,
        total: index_startup + run,
        rows,
        index_total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::am;
    use keel_catalog::IndexMethod;

    /// pgbench_accounts at scale 1 after VACUUM ANALYZE on PostgreSQL 15: 1640 heap pages,
    /// 100000 rows, primary key 276 pages with one level above the leaves, correlation 1.
    fn accounts(selectivity: f64, index_quals: u32, unique_equality: bool) -> CostInput {
        CostInput {
            index_pages: 276.0,
            index_tuples: 100_000.0,
            tree_height: Some(1),
            heap_pages: 1640.0,
            heap_tuples: 100_000.0,
            selectivity,
            index_quals,
            unique_equality,
            correlation: 1.0,
            ..Default::default()
        }
    }

    fn btree(input: &CostInput) -> IndexCost {
        am::method(IndexMethod::Btree).cost_estimate(input, &CostParams::default())
    }

    fn assert_cost(c: IndexCost, startup: f64, total: f64) {
        assert!(
            (c.startup - startup).abs() < 0.006 && (c.total - total).abs() < 0.006,
            "{c:?}, expected {startup}..{total}"
        );
    }

    #[test]
    fn btree_costs_match_postgres_explain() {
        // `where aid = 5`: Index Scan ... (cost=0.29..8.31 rows=1)
        assert_cost(btree(&accounts(1e-5, 1, true)), 0.29, 8.31);
        // `where aid < 1000`: (cost=0.29..47.92 rows=950)
        assert_cost(btree(&accounts(0.0095, 1, false)), 0.29, 47.92);
        // `where aid between 1000 and 3000`: (cost=0.29..102.39 rows=2055)
        assert_cost(btree(&accounts(0.02055, 2, false)), 0.29, 102.39);
        // `where aid < 50000` (seq and bitmap scans off): (cost=0.29..2245.58 rows=49845)
        assert_cost(btree(&accounts(0.49845, 1, false)), 0.29, 2245.58);
    }

    /// PostgreSQL 15 on pgbench_accounts at scale 1 after VACUUM ANALYZE (relallvisible =
    /// relpages = 1640): index-only scans read no heap page.
    #[test]
    fn index_only_costs_match_postgres_explain() {
        let only = |sel, quals| CostInput {
            index_only: true,
            all_visible_frac: 1.0,
            ..accounts(sel, quals, false)
        };
        // `select aid ... where aid < 1000`: (cost=0.29..29.41 rows=978)
        assert_cost(btree(&only(0.00978, 1)), 0.29, 29.41);
        // `where aid between 1000 and 3000`: (cost=0.29..62.93 rows=1932)
        assert_cost(btree(&only(0.01932, 2)), 0.29, 62.93);
        // Nothing all-visible: the same as an index scan.
        let mut none = only(0.00978, 1);
        none.all_visible_frac = 0.0;
        let plain = accounts(0.00978, 1, false);
        assert_eq!(btree(&none), btree(&plain));
    }

    #[test]
    fn uncorrelated_heap_costs_more_and_height_is_estimated() {
        let mut input = accounts(0.0095, 1, false);
        let ordered = btree(&input);
        input.correlation = 0.0;
        let random = btree(&input);
        assert!(
            random.total > ordered.total * 10.0,
            "{random:?} vs {ordered:?}"
        );
        input.tree_height = None;
        assert_eq!(btree(&input), random);
        assert_eq!(random.rows, 950.0);
    }
}
