//! Selectivity estimators for the planner, after PostgreSQL's `selfuncs.c` and
//! `clausesel.c`: the fraction of a table's rows a predicate keeps. Without statistics they
//! return PostgreSQL's defaults (`selfuncs.h`).

use crate::ColumnStats;
use crate::scalar::convert_to_scalar;
use keel_types::ops::compare_typed;
use keel_types::{Datum, TypeId};
use std::cmp::Ordering;

/// `x = const` without statistics on a table of at least 200 rows.
pub const DEFAULT_EQ_SEL: f64 = 0.005;
/// `x < const` and the like without statistics.
pub const DEFAULT_INEQ_SEL: f64 = 0.3333333333333333;
/// `x > a AND x < b` when either side had to use a default.
pub const DEFAULT_RANGE_INEQ_SEL: f64 = 0.005;
/// PostgreSQL's page size, which its density estimate for never-analyzed tables assumes.
const BLCKSZ: f64 = 8192.0;
/// Distinct values assumed when nothing better is known.
pub const DEFAULT_NUM_DISTINCT: f64 = 200.0;
/// `x IS NULL` without statistics (and `IS NOT NULL`: 1 minus it).
pub const DEFAULT_UNK_SEL: f64 = 0.005;
pub const DEFAULT_NOT_UNK_SEL: f64 = 1.0 - DEFAULT_UNK_SEL;

/// What the estimators know about one column of one table.
#[derive(Clone, Copy, Debug)]
pub struct Column<'a> {
    pub ty: TypeId,
    /// The column's statistics, if the table was analyzed.
    pub stats: Option<&'a ColumnStats>,
    /// The planner's estimate of the table's current rows (see `estimate_tuples`), 0 when
    /// unknown.
    pub tuples: f64,
    /// A unique index covers exactly this column.
    pub unique: bool,
}

/// The comparison of an inequality, with the column on the left (`x < const`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ineq {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Ineq {
    fn is_gt(self) -> bool {
        matches!(self, Ineq::Gt | Ineq::Ge)
    }
    fn is_eq(self) -> bool {
        matches!(self, Ineq::Le | Ineq::Ge)
    }
    fn holds(self, ord: Ordering) -> bool {
        match self {
            Ineq::Lt => ord == Ordering::Less,
            Ineq::Le => ord != Ordering::Greater,
            Ineq::Gt => ord == Ordering::Greater,
            Ineq::Ge => ord != Ordering::Less,
        }
    }
    /// The same comparison with its operands swapped (`const < x` is `x > const`).
    pub fn commute(self) -> Ineq {
        match self {
            Ineq::Lt => Ineq::Gt,
            Ineq::Le => Ineq::Ge,
            Ineq::Gt => Ineq::Lt,
            Ineq::Ge => Ineq::Le,
        }
    }
}

fn clamp_probability(p: f64) -> f64 {
    p.clamp(0.0, 1.0)
}

/// A row count as the planner keeps it: at least 1, a whole number (`clamp_row_est`).
pub fn clamp_row_est(rows: f64) -> f64 {
    if rows.is_nan() || rows <= 1.0 {
        1.0
    } else {
        rows.round_ties_even()
    }
}

/// The number of rows the planner assumes a table has now: the analyzed density
/// (`reltuples / relpages`) times the pages it has now. A table never analyzed is assumed
/// to hold at least 10 pages, packed with rows of `tuple_width` bytes (PostgreSQL's
/// `table_block_relation_estimate_size`).
pub fn estimate_tuples(stats: Option<&crate::TableStats>, cur_pages: u32, tuple_width: f64) -> f64 {
    let analyzed = stats.map(|s| (s.reltuples, s.relpages));
    let mut pages = cur_pages as f64;
    if cur_pages < 10 && analyzed.is_none() {
        pages = 10.0;
    }
    if pages == 0.0 {
        return 0.0;
    }
    let density = match analyzed {
        Some((tuples, relpages)) if relpages > 0 => tuples / relpages as f64,
        _ => {
            // Page header 24 bytes; per tuple a 24-byte header and a 4-byte line pointer.
            (BLCKSZ - 24.0) / (tuple_width + 28.0)
        }
    };
    (density * pages).round_ties_even()
}

/// Distinct non-null values of the column, and whether that is a default guess
/// (`get_variable_numdistinct`).
pub fn num_distinct(col: &Column) -> (f64, bool) {
    let mut stadistinct = match col.stats {
        Some(s) => s.n_distinct as f64,
        None if col.ty == TypeId::Bool => 2.0,
        None => 0.0,
    };
    if col.unique {
        let null_frac = col.stats.map_or(0.0, |s| s.null_frac as f64);
        stadistinct = -(1.0 - null_frac);
    }
    if stadistinct > 0.0 {
        return (clamp_row_est(stadistinct), false);
    }
    if col.tuples <= 0.0 {
        return (DEFAULT_NUM_DISTINCT, true);
    }
    if stadistinct < 0.0 {
        return (clamp_row_est(-stadistinct * col.tuples), false);
    }
    if col.tuples < DEFAULT_NUM_DISTINCT {
        return (clamp_row_est(col.tuples), false);
    }
    (DEFAULT_NUM_DISTINCT, true)
}

/// `x = value` (`var_eq_const`): an MCV's own frequency; otherwise what the MCVs and nulls
/// leave, spread evenly over the other distinct values, and never above the least common MCV.
pub fn eq_sel(col: &Column, value: &Datum) -> f64 {
    if value.is_null() {
        return 0.0;
    }
    if col.unique && col.tuples >= 1.0 {
        return 1.0 / col.tuples;
    }
    let selec = match col.stats {
        Some(s) => {
            let hit = s
                .mcv_values
                .iter()
                .position(|m| compare_typed(m, value, col.ty) == Ordering::Equal);
            match hit {
                Some(i) => s.mcv_freqs[i] as f64,
                None => {
                    let sumcommon: f64 = s.mcv_freqs.iter().map(|&f| f as f64).sum();
                    let mut selec = clamp_probability(1.0 - sumcommon - s.null_frac as f64);
                    let other = num_distinct(col).0 - s.mcv_freqs.len() as f64;
                    if other > 1.0 {
                        selec /= other;
                    }
                    if let Some(&least) = s.mcv_freqs.last()
                        && selec > least as f64
                    {
                        selec = least as f64;
                    }
                    selec
                }
            }
        }
        None => 1.0 / num_distinct(col).0,
    };
    clamp_probability(selec)
}

/// `x <> value` (`neqsel`): the rows that are neither equal nor null.
pub fn neq_sel(col: &Column, value: &Datum) -> f64 {
    if value.is_null() {
        return 0.0;
    }
    let null_frac = col.stats.map_or(0.0, |s| s.null_frac as f64);
    clamp_probability(1.0 - eq_sel(col, value) - null_frac)
}

/// `x op value` for `<`, `<=`, `>`, `>=` (`scalarineqsel`): matching MCVs counted exactly,
/// the histogram interpolated for the rest.
pub fn ineq_sel(col: &Column, op: Ineq, value: &Datum) -> f64 {
    if value.is_null() {
        return 0.0;
    }
    let Some(s) = col.stats else {
        return DEFAULT_INEQ_SEL;
    };
    let mut mcv_selec = 0.0;
    let mut sumcommon = 0.0;
    for (m, &f) in s.mcv_values.iter().zip(&s.mcv_freqs) {
        if op.holds(compare_typed(m, value, col.ty)) {
            mcv_selec += f as f64;
        }
        sumcommon += f as f64;
    }
    let hist_selec = histogram_sel(col, s, op, value);
    let mut selec = 1.0 - s.null_frac as f64 - sumcommon;
    match hist_selec {
        Some(h) => selec *= h,
        // No histogram: assume half of the remaining values match.
        None => selec *= 0.5,
    }
    clamp_probability(selec + mcv_selec)
}

/// The fraction of the histogram's population satisfying `x op value`
/// (`ineq_histogram_selectivity`), None without a histogram.
fn histogram_sel(col: &Column, s: &ColumnStats, op: Ineq, value: &Datum) -> Option<f64> {
    let hist = &s.histogram;
    if hist.len() < 2 {
        return None;
    }
    let (isgt, iseq) = (op.is_gt(), op.is_eq());
    // Binary search for the first bound where "bound op value" flips (probing with the
    // operator itself, so equal bounds land on the side the operator puts them).
    let (mut lo, mut hi) = (0usize, hist.len());
    while lo < hi {
        let probe = (lo + hi) / 2;
        let mut ltcmp = op.holds(compare_typed(&hist[probe], value, col.ty));
        if isgt {
            ltcmp = !ltcmp;
        }
        if ltcmp {
            lo = probe + 1;
        } else {
            hi = probe;
        }
    }
    let histfrac = if lo == 0 {
        0.0
    } else if lo >= hist.len() {
        1.0
    } else {
        let i = lo;
        let mut eq_selec = 0.0;
        if i == 1 || isgt == iseq {
            let other = num_distinct(col).0 - s.mcv_freqs.len() as f64;
            if other > 1.0 {
                eq_selec = 1.0 / other;
            }
        }
        let binfrac = match convert_to_scalar(value, &hist[i - 1], &hist[i], col.ty) {
            Some((val, low, high)) => {
                if high <= low {
                    0.5
                } else if val <= low {
                    0.0
                } else if val >= high {
                    1.0
                } else {
                    let f = (val - low) / (high - low);
                    if f.is_nan() || !(0.0..=1.0).contains(&f) {
                        0.5
                    } else {
                        f
                    }
                }
            }
            None => 0.5,
        };
        // An estimate of "x <= value"; the first bin is narrower by eq_selec, since its
        // left bound is the leftmost value of its bucket, not the rightmost.
        let mut histfrac = ((i - 1) as f64 + binfrac) / (hist.len() - 1) as f64;
        if i == 1 {
            histfrac += eq_selec * (1.0 - binfrac);
        }
        if isgt == iseq {
            histfrac -= eq_selec;
        }
        histfrac
    };
    let hist_selec = if isgt { 1.0 - histfrac } else { histfrac };
    // Bounds may be stale: never believe less than a hundredth of a bin, either way.
    let cutoff = 0.01 / (hist.len() - 1) as f64;
    Some(hist_selec.clamp(cutoff, 1.0 - cutoff))
}

/// `x > a AND x < b` from the selectivities of its two halves (`clauselist_selectivity`'s
/// range pairing): their overlap, nulls counted back once.
pub fn range_sel(col: &Column, lo_sel: f64, hi_sel: f64) -> f64 {
    if lo_sel == DEFAULT_INEQ_SEL || hi_sel == DEFAULT_INEQ_SEL {
        return DEFAULT_RANGE_INEQ_SEL;
    }
    let s = hi_sel + lo_sel - 1.0 + null_test_sel(col, true);
    if s <= 0.0 {
        if s < -0.01 {
            // The two halves exclude each other by more than rounding: no data to go on.
            DEFAULT_RANGE_INEQ_SEL
        } else {
            1.0e-10
        }
    } else {
        s
    }
}

/// `x IS NULL` (`is_null`) or `x IS NOT NULL` (`nulltestsel`).
pub fn null_test_sel(col: &Column, is_null: bool) -> f64 {
    match (col.stats, is_null) {
        (Some(s), true) => s.null_frac as f64,
        (Some(s), false) => 1.0 - s.null_frac as f64,
        (None, true) => DEFAULT_UNK_SEL,
        (None, false) => DEFAULT_NOT_UNK_SEL,
    }
}

/// `a = b` joining two columns (`eqjoinsel_inner`). With MCV lists on both sides, the
/// matching MCV pairs count exactly and the rest is spread over the remaining distinct
/// values; otherwise the non-null fractions divided by the larger distinct count.
pub fn eqjoin_sel(a: &Column, b: &Column) -> f64 {
    let (nd1, _) = num_distinct(a);
    let (nd2, _) = num_distinct(b);
    let nullfrac1 = a.stats.map_or(0.0, |s| s.null_frac as f64);
    let nullfrac2 = b.stats.map_or(0.0, |s| s.null_frac as f64);
    fn mcvs<'a>(c: &Column<'a>) -> Option<(&'a [Datum], &'a [f32])> {
        c.stats
            .filter(|s| !s.mcv_values.is_empty())
            .map(|s| (s.mcv_values.as_slice(), s.mcv_freqs.as_slice()))
    }
    let selec = match (mcvs(a), mcvs(b)) {
        (Some((v1, f1)), Some((v2, f2))) => {
            let mut matched1 = vec![false; v1.len()];
            let mut matched2 = vec![false; v2.len()];
            let (mut matchprodfreq, mut nmatches) = (0.0, 0.0);
            for (i, x) in v1.iter().enumerate() {
                for (j, y) in v2.iter().enumerate() {
                    if matched2[j] || compare_typed(x, y, a.ty) != Ordering::Equal {
                        continue;
                    }
                    matched1[i] = true;
                    matched2[j] = true;
                    matchprodfreq += f1[i] as f64 * f2[j] as f64;
                    nmatches += 1.0;
                    break;
                }
            }
            let matchprodfreq = clamp_probability(matchprodfreq);
            let sums = |f: &[f32], m: &[bool]| {
                let (mut matched, mut unmatched) = (0.0, 0.0);
                for (x, &hit) in f.iter().zip(m) {
                    if hit {
                        matched += *x as f64;
                    } else {
                        unmatched += *x as f64;
                    }
                }
                (clamp_probability(matched), clamp_probability(unmatched))
            };
            let (matchfreq1, unmatchfreq1) = sums(f1, &matched1);
            let (matchfreq2, unmatchfreq2) = sums(f2, &matched2);
            let otherfreq1 = clamp_probability(1.0 - nullfrac1 - matchfreq1 - unmatchfreq1);
            let otherfreq2 = clamp_probability(1.0 - nullfrac2 - matchfreq2 - unmatchfreq2);
            let (n1, n2) = (v1.len() as f64, v2.len() as f64);
            let mut totalsel1 = matchprodfreq;
            if nd2 > n2 {
                totalsel1 += unmatchfreq1 * otherfreq2 / (nd2 - n2);
            }
            if nd2 > nmatches {
                totalsel1 += otherfreq1 * (otherfreq2 + unmatchfreq2) / (nd2 - nmatches);
            }
            let mut totalsel2 = matchprodfreq;
            if nd1 > n1 {
                totalsel2 += unmatchfreq2 * otherfreq1 / (nd1 - n1);
            }
            if nd1 > nmatches {
                totalsel2 += otherfreq2 * (otherfreq1 + unmatchfreq1) / (nd1 - nmatches);
            }
            totalsel1.min(totalsel2)
        }
        _ => (1.0 - nullfrac1) * (1.0 - nullfrac2) / nd1.max(nd2),
    };
    clamp_probability(selec)
}
