//! Planner statistics, as PostgreSQL's ANALYZE gathers them and its planner reads them.
//!
//! - [`sample`]: which blocks and rows ANALYZE reads (a block sample, then a reservoir of
//!   `300 × default_statistics_target` rows), and the row count extrapolated from it.
//! - [`compute`]: per-column statistics from a sample (PostgreSQL's `compute_scalar_stats`):
//!   null fraction, average width, n_distinct (Haas–Stokes), most common values, an
//!   equi-depth histogram of the rest, and the correlation of physical and logical order.
//! - [`select`]: selectivity estimators over those statistics (`selfuncs.c`), with
//!   PostgreSQL's defaults when there are none.
//! - [`pg_stats_rows`]: the rows PostgreSQL's `pg_stats` view would show.
//! - [`codec`]: the byte form kept in the WAL and in checkpoints.
//!
//! Everything here is pure computation over values: no locks, no I/O. See README.md.

pub mod codec;
pub mod compute;
mod pgstats;
pub mod sample;
pub mod scalar;
pub mod select;
mod width;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_select;

pub use compute::compute_column;
pub use pgstats::{PgStatsRow, pg_stats_rows};

use keel_types::{Datum, TypeId};

/// PostgreSQL's `default_statistics_target`: MCV list length and histogram bins per column.
pub const DEFAULT_STATISTICS_TARGET: usize = 100;

/// Rows ANALYZE samples for a statistics target (PostgreSQL's `std_typanalyze`: 300 rows per
/// bin, from the Chaudhuri–Motwani–Narasayya bound on histogram error).
pub fn sample_rows_for(target: usize) -> usize {
    300 * target
}

/// Statistics of one column, the content of one `pg_statistic` row. Fractions are `f32` as
/// PostgreSQL stores them (`float4`), so estimates computed from them round as its do.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnStats {
    /// The column's type when analyzed; statistics of a column whose type changed since are
    /// not used.
    pub ty: TypeId,
    pub null_frac: f32,
    /// Average stored width in bytes of the non-null values (varlena headers included).
    pub avg_width: i32,
    /// Distinct non-null values: > 0 an absolute count, < 0 minus a fraction of the rows
    /// (it scales with the table), 0 unknown.
    pub n_distinct: f32,
    /// Most common values, most common first, with their frequencies among all rows.
    pub mcv_values: Vec<Datum>,
    pub mcv_freqs: Vec<f32>,
    /// Equi-depth histogram bounds of the values not in the MCV list (empty: none).
    pub histogram: Vec<Datum>,
    /// Correlation between physical row order and the column's sort order, when the sample
    /// had at least two non-null values.
    pub correlation: Option<f32>,
}

/// Statistics of one table: PostgreSQL's `pg_class.reltuples` / `relpages` and one
/// `ColumnStats` per column (by position; `None` where nothing could be computed).
#[derive(Clone, Debug, PartialEq)]
pub struct TableStats {
    pub reltuples: f64,
    pub relpages: u32,
    pub columns: Vec<Option<ColumnStats>>,
}

impl TableStats {
    /// The statistics of column `index` (0-based), if it was analyzed as type `ty`.
    pub fn column(&self, index: usize, ty: TypeId) -> Option<&ColumnStats> {
        self.columns
            .get(index)
            .and_then(|c| c.as_ref())
            .filter(|c| c.ty == ty)
    }
}
