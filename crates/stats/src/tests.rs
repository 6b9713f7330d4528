//! Statistics of generated data compared with what PostgreSQL 15 computed for the same rows
//! (testdata/s1.sql ran on PostgreSQL 15, its `pg_stats` rows in testdata/s1_pg15.txt, and
//! the order in which its heap holds the rows, by column `a`, in s1_physical_order.txt:
//! PostgreSQL's bulk insert does not fill the pages strictly in insertion order, and the
//! correlation depends on it).

use crate::*;
use keel_types::numeric::Numeric;
use keel_types::{Datum, TypeId};

/// The rows of testdata/s1.sql, in insertion (physical) order.
pub(crate) fn s1_rows() -> (Vec<(String, TypeId)>, Vec<Vec<Datum>>) {
    let cols = [
        ("a", TypeId::Int4),
        ("b", TypeId::Int4),
        ("c", TypeId::Text),
        ("d", TypeId::Numeric),
        ("e", TypeId::Float8),
        ("f", TypeId::Bool),
        ("g", TypeId::Int4),
        ("h", TypeId::Int4),
    ];
    let four = Numeric::parse("4.0").expect("numeric");
    let rows = (1..=5000i32)
        .map(|g| {
            vec![
                Datum::Int4(g),
                Datum::Int4(g % 10),
                if g % 7 == 0 {
                    Datum::Null
                } else {
                    Datum::Text(format!("v{}", g % 37))
                },
                Datum::Numeric(Box::new(
                    Numeric::from_i64((g % 100) as i64).div(&four).expect("div"),
                )),
                Datum::Float8((g * 37 % 1000) as f64 / 3.0),
                Datum::Bool(g % 3 == 0),
                Datum::Int4(if g <= 2000 {
                    1
                } else if g <= 2600 {
                    2
                } else if g <= 2700 {
                    3
                } else {
                    g
                }),
                Datum::Int4(((g as i64 * 7919) % 3000) as i32),
            ]
        })
        .collect();
    (
        cols.iter().map(|(n, t)| (n.to_string(), *t)).collect(),
        rows,
    )
}

pub(crate) fn analyze(cols: &[(String, TypeId)], rows: &[Vec<Datum>]) -> TableStats {
    let columns = cols
        .iter()
        .enumerate()
        .map(|(i, (_, ty))| {
            let values: Vec<&Datum> = rows.iter().map(|r| &r[i]).collect();
            compute_column(&values, *ty, rows.len() as f64, DEFAULT_STATISTICS_TARGET)
        })
        .collect();
    TableStats {
        reltuples: rows.len() as f64,
        relpages: 46,
        columns,
    }
}

fn render(rows: &[PgStatsRow]) -> Vec<String> {
    rows.iter()
        .map(|r| {
            let c = r.columns();
            c[2..]
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != 1) // `inherited` is not in the captured output
                .map(|(_, v)| v.clone().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

#[test]
fn whole_table_sample_matches_postgres() {
    let (cols, rows) = s1_rows();
    let order = include_str!("../testdata/s1_physical_order.txt");
    let rows: Vec<Vec<Datum>> = order
        .trim()
        .split(',')
        .map(|a| rows[a.parse::<usize>().expect("a") - 1].clone())
        .collect();
    let stats = analyze(&cols, &rows);
    let got = render(&pg_stats_rows("public", "s1", &cols, &stats));
    let want: Vec<&str> = include_str!("../testdata/s1_pg15.txt").lines().collect();
    assert_eq!(got.len(), want.len());
    let mut bad = Vec::new();
    for (g, w) in got.iter().zip(&want) {
        for (i, (a, b)) in g.split('|').zip(w.split('|')).enumerate() {
            if a != b {
                bad.push(format!("{} field {i}: keel {a} pg {b}", &g[..1]));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn codec_round_trips_and_rejects_corruption() {
    let (cols, rows) = s1_rows();
    let stats = analyze(&cols, &rows);
    let mut bytes = Vec::new();
    codec::encode(&stats, &mut bytes);
    assert_eq!(codec::decode(&bytes).expect("decode"), stats);
    for cut in [0, 1, 10, bytes.len() / 2, bytes.len() - 1] {
        assert!(codec::decode(&bytes[..cut]).is_err(), "cut at {cut}");
    }
}

#[test]
fn haas_stokes_on_a_partial_sample() {
    // 30000 sampled of 1,000,000 rows: 10000 values seen once, 10000 seen twice.
    let mut vals: Vec<Datum> = (0..10000).map(Datum::Int4).collect();
    for v in 10000..20000 {
        vals.push(Datum::Int4(v));
        vals.push(Datum::Int4(v));
    }
    let refs: Vec<&Datum> = vals.iter().collect();
    let c = compute_column(&refs, TypeId::Int4, 1_000_000.0, 100).expect("stats");
    // n*d / (n - f1 + f1*n/N) = 30000*20000 / (20000 + 10000*0.03) = 29556.65 -> 29557,
    // under 10% of the rows so kept as a count.
    assert_eq!(c.n_distinct, 29557.0);
    // No candidate is significantly more common than the rest.
    assert!(c.mcv_values.is_empty());
    assert_eq!(c.histogram.len(), 101);
}

#[test]
fn sampler_takes_every_block_of_a_small_table_and_k_of_a_large_one() {
    use rand::SeedableRng;
    let rng = rand::rngs::StdRng::seed_from_u64(7);
    let all: Vec<u32> = sample::BlockSampler::new(50, 30000, rng.clone()).collect();
    assert_eq!(all, (0..50).collect::<Vec<_>>());
    let some: Vec<u32> = sample::BlockSampler::new(100_000, 300, rng).collect();
    assert_eq!(some.len(), 300);
    assert!(some.windows(2).all(|w| w[0] < w[1]));
    assert!(*some.last().expect("blocks") < 100_000);
}

#[test]
fn reservoir_keeps_physical_order() {
    use rand::SeedableRng;
    let mut r = sample::Reservoir::new(100, rand::rngs::StdRng::seed_from_u64(1));
    for i in 0..10_000u64 {
        r.offer(i, i);
    }
    let got = r.finish();
    assert_eq!(got.len(), 100);
    assert!(got.windows(2).all(|w| w[0] < w[1]));
    // Uniform: the mean position is near the middle.
    let mean = got.iter().sum::<u64>() as f64 / 100.0;
    assert!((3000.0..7000.0).contains(&mean), "{mean}");
}
