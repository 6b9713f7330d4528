//! Per-column statistics from a row sample: PostgreSQL's `compute_scalar_stats`
//! (src/backend/commands/analyze.c) for types with a total order, which all Keel types have.

use crate::ColumnStats;
use crate::width;
use keel_types::ops::compare_typed;
use keel_types::{Datum, TypeId};
use std::cmp::Ordering;

/// Values wider than this (raw bytes) are left out of the distinct-value and histogram
/// analysis but counted as distinct (PostgreSQL's WIDTH_THRESHOLD).
const WIDTH_THRESHOLD: usize = 1024;

/// Computes the statistics of one column from its values in the sample, given in physical
/// (sample) order. `totalrows` is the table's estimated row count, `target` the statistics
/// target (MCV entries and histogram bins). None when the sample is empty.
pub fn compute_column(
    values: &[&Datum],
    ty: TypeId,
    totalrows: f64,
    target: usize,
) -> Option<ColumnStats> {
    let samplerows = values.len();
    let fixed = width::fixed_len(ty);
    let mut null_cnt = 0usize;
    let mut nonnull_cnt = 0usize;
    let mut toowide_cnt = 0usize;
    let mut total_width = 0f64;
    // (value, position among the analyzed values)
    let mut sorted: Vec<(&Datum, usize)> = Vec::with_capacity(samplerows);
    for &v in values {
        if v.is_null() {
            null_cnt += 1;
            continue;
        }
        nonnull_cnt += 1;
        if fixed.is_none() {
            total_width += width::stored_width(v) as f64;
            if width::raw_size(v) > WIDTH_THRESHOLD {
                toowide_cnt += 1;
                continue;
            }
        }
        let pos = sorted.len();
        sorted.push((v, pos));
    }
    let avg_width = |nonnull: usize| match fixed {
        Some(len) => len,
        None if nonnull > 0 => (total_width / nonnull as f64) as i32,
        None => 0,
    };
    if samplerows == 0 {
        return None;
    }
    let null_frac = (null_cnt as f64 / samplerows as f64) as f32;
    if sorted.is_empty() {
        // Only nulls, or only too-wide values.
        let n_distinct = if nonnull_cnt > 0 {
            (-(1.0 - null_frac as f64)) as f32
        } else {
            0.0
        };
        return Some(ColumnStats {
            ty,
            null_frac: if nonnull_cnt > 0 { null_frac } else { 1.0 },
            avg_width: avg_width(nonnull_cnt),
            n_distinct,
            mcv_values: Vec::new(),
            mcv_freqs: Vec::new(),
            histogram: Vec::new(),
            correlation: None,
        });
    }

    sorted.sort_by(|a, b| compare_typed(a.0, b.0, ty).then(a.1.cmp(&b.1)));
    let values_cnt = sorted.len();

    // Groups of equal values in sorted order; the MCV candidates ("track") are the most
    // repeated ones, ties kept in value order, as PostgreSQL's insertion does.
    let mut ndistinct = 0usize;
    let mut nmultiple = 0usize;
    let mut track: Vec<(usize, usize)> = Vec::new(); // (count, first index in `sorted`)
    let mut corr_xysum = 0f64;
    let mut dups = 0usize;
    for i in 0..values_cnt {
        corr_xysum += i as f64 * sorted[i].1 as f64;
        dups += 1;
        let group_ends = i + 1 == values_cnt
            || compare_typed(sorted[i].0, sorted[i + 1].0, ty) != Ordering::Equal;
        if !group_ends {
            continue;
        }
        ndistinct += 1;
        if dups > 1 {
            nmultiple += 1;
            if track.len() < target || track.last().is_some_and(|t| dups > t.0) {
                if track.len() == target {
                    track.pop();
                }
                let at = track.iter().position(|t| dups > t.0).unwrap_or(track.len());
                track.insert(at, (dups, i + 1 - dups));
            }
        }
        dups = 0;
    }

    let n = (samplerows - null_cnt) as f64;
    let mut n_distinct: f32 = if nmultiple == 0 {
        // No value repeated: assume a unique column.
        (-(1.0 - null_frac as f64)) as f32
    } else if toowide_cnt == 0 && nmultiple == ndistinct {
        // Every value repeated: assume the column has just these values.
        ndistinct as f32
    } else {
        // Haas and Stokes' Duj1 estimator: n*d / (n - f1 + f1*n/N), with f1 the values seen
        // once (too-wide values count as such), d the distinct values seen, N the non-null
        // rows of the table.
        let f1 = (ndistinct - nmultiple + toowide_cnt) as f64;
        let d = f1 + nmultiple as f64;
        let big_n = totalrows * (1.0 - null_frac as f64);
        let mut est = if big_n > 0.0 {
            (n * d) / ((n - f1) + f1 * n / big_n)
        } else {
            0.0
        };
        est = est.max(d).min(big_n);
        (est + 0.5).floor() as f32
    };
    // More distinct values than 10% of the rows: assume they grow with the table.
    if n_distinct as f64 > 0.1 * totalrows {
        n_distinct = (-(n_distinct as f64 / totalrows)) as f32;
    }

    let num_mcv = if track.len() == ndistinct
        && toowide_cnt == 0
        && n_distinct > 0.0
        && track.len() <= target
    {
        // Every value seen is in the list: keep them all.
        track.len()
    } else {
        let counts: Vec<usize> = track.iter().map(|t| t.0).collect();
        analyze_mcv_list(&counts, n_distinct, null_frac, samplerows, totalrows)
    };
    track.truncate(num_mcv);
    let mcv_values: Vec<Datum> = track.iter().map(|t| sorted[t.1].0.clone()).collect();
    let mcv_freqs: Vec<f32> = track
        .iter()
        .map(|t| (t.0 as f64 / samplerows as f64) as f32)
        .collect();

    // Histogram over the values not in the MCV list, `target + 1` bounds at most, each bound
    // the value at an evenly spaced position of what remains.
    let mut histogram = Vec::new();
    let mut num_hist = ndistinct - num_mcv;
    if num_hist > target {
        num_hist = target + 1;
    }
    if num_hist >= 2 {
        let mut mcv_ranges: Vec<(usize, usize)> = track.iter().map(|t| (t.1, t.0)).collect();
        mcv_ranges.sort_unstable();
        let mut rest: Vec<&Datum> = Vec::with_capacity(values_cnt);
        let mut src = 0;
        for (first, count) in mcv_ranges {
            rest.extend(sorted[src..first].iter().map(|v| v.0));
            src = first + count;
        }
        rest.extend(sorted[src..].iter().map(|v| v.0));
        let nvals = rest.len();
        let delta = (nvals - 1) / (num_hist - 1);
        let deltafrac = (nvals - 1) % (num_hist - 1);
        let (mut pos, mut posfrac) = (0usize, 0usize);
        for _ in 0..num_hist {
            histogram.push(rest[pos].clone());
            pos += delta;
            posfrac += deltafrac;
            if posfrac >= num_hist - 1 {
                pos += 1;
                posfrac -= num_hist - 1;
            }
        }
    }

    // Correlation of sorted position i with physical position; both run over 0..values_cnt,
    // so the sums of x and x² are closed forms.
    let correlation = (values_cnt > 1).then(|| {
        let n = values_cnt as f64;
        let xsum = (n - 1.0) * n / 2.0;
        let x2sum = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
        ((n * corr_xysum - xsum * xsum) / (n * x2sum - xsum * xsum)) as f32
    });

    Some(ColumnStats {
        ty,
        null_frac,
        avg_width: avg_width(nonnull_cnt),
        n_distinct,
        mcv_values,
        mcv_freqs,
        histogram,
        correlation,
    })
}

/// How many of the candidate MCVs (counts in decreasing order) are worth keeping: those
/// significantly more common than the average non-MCV value, judged by the hypergeometric
/// sampling error (PostgreSQL's `analyze_mcv_list`, since version 11).
fn analyze_mcv_list(
    counts: &[usize],
    n_distinct: f32,
    null_frac: f32,
    samplerows: usize,
    totalrows: f64,
) -> usize {
    let mut num_mcv = counts.len();
    if samplerows as f64 == totalrows || totalrows <= 1.0 {
        // The whole table was sampled: the counts are exact.
        return num_mcv;
    }
    let mut ndistinct_table = n_distinct as f64;
    if ndistinct_table < 0.0 {
        ndistinct_table = -ndistinct_table * totalrows;
    }
    let samplerows_f = samplerows as f64;
    let mut sumcount: f64 = counts[..num_mcv.saturating_sub(1)]
        .iter()
        .map(|&c| c as f64)
        .sum();
    while num_mcv > 0 {
        let mut selec = (1.0 - sumcount / samplerows_f - null_frac as f64).clamp(0.0, 1.0);
        let otherdistinct = ndistinct_table - (num_mcv as f64 - 1.0);
        if otherdistinct > 1.0 {
            selec /= otherdistinct;
        }
        let big_n = totalrows;
        let n = samplerows_f;
        let count = counts[num_mcv - 1] as f64;
        let k = big_n * count / n;
        let variance = n * k * (big_n - k) * (big_n - n) / (big_n * big_n * (big_n - 1.0));
        let stddev = variance.sqrt();
        if count > selec * samplerows_f + 2.0 * stddev + 0.5 {
            break;
        }
        num_mcv -= 1;
        if num_mcv == 0 {
            break;
        }
        sumcount -= counts[num_mcv - 1] as f64;
    }
    num_mcv
}
