//! Join order: for joins of three and four tables where the table with the fewest rows is the
//! wrong place to start, the planner's exhaustive (dynamic programming) search must join the
//! tables in the order PostgreSQL 15 does. The order is read from `EXPLAIN (COSTS OFF)`: the
//! set of tables under each join node. Join methods and which side of a join is printed first
//! are not compared here (keel has no Materialize node, and it hashes the side with fewer
//! values); the EXPLAIN corpus compares whole plans.

use keel_e2e::Server;
use keel_e2e::client::{self, connect};
use std::path::Path;
use tokio_postgres::SimpleQueryMessage;

const QUERIES: &[&str] = &[
    "select c.name, b.v, a.id from dpc c join dpb b on b.c_id = c.id \
     join dpa a on a.b_id = b.id where a.tag = 7",
    "select c.name, b.v, a.id, d.label from dpc c join dpb b on b.c_id = c.id \
     join dpa a on a.b_id = b.id join dpd d on d.id = a.d_id where a.tag = 7",
];

/// The tables under each join node of `plan`, each set sorted, the sets sorted: the join
/// order without the join methods or the sides' print order.
fn join_sets(plan: &str) -> Vec<Vec<String>> {
    let lines: Vec<(usize, &str)> = plan
        .lines()
        .map(|l| (l.len() - l.trim_start().len(), l.trim_start()))
        .collect();
    let table = |l: &str| {
        if !l.contains("Scan") || l.contains("Bitmap Index Scan") {
            return None;
        }
        let (_, rest) = l.rsplit_once(" on ")?;
        rest.split_whitespace().next().map(str::to_string)
    };
    let mut sets = Vec::new();
    for (i, &(depth, l)) in lines.iter().enumerate() {
        if !(l.contains("Join") && !l.starts_with("Join Filter") || l.contains("Nested Loop")) {
            continue;
        }
        let mut set: Vec<String> = lines[i + 1..]
            .iter()
            .take_while(|(d, _)| *d > depth)
            .filter_map(|(_, l)| table(l))
            .collect();
        set.sort();
        sets.push(set);
    }
    sets.sort();
    sets
}

async fn explain(c: &tokio_postgres::Client, sql: &str) -> String {
    explain_with(c, "costs off", sql).await
}

async fn explain_with(c: &tokio_postgres::Client, options: &str, sql: &str) -> String {
    let rows = c
        .simple_query(&format!("explain ({options}) {sql}"))
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows.iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn join_order_matches_postgres() {
    let (target, oracle) = (Server::start(&[]), Server::oracle(&[]));
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/explain/join_order.sql");
    let schema = schema.to_string_lossy();
    for s in [&target, &oracle] {
        let out = s.psql(&["-q", "-v", "ON_ERROR_STOP=1", "-f", &schema]);
        assert!(
            out.success(),
            "{:?}: loading the schema failed:\n{out}",
            s.engine
        );
    }
    client::runtime().block_on(async {
        let t = connect(&target.conn_str()).await;
        let o = connect(&oracle.conn_str()).await;
        o.simple_query("set max_parallel_workers_per_gather = 0")
            .await
            .expect("oracle setting");
        let mut differ = Vec::new();
        for q in QUERIES {
            let (got, want) = (explain(&t, q).await, explain(&o, q).await);
            if join_sets(&got) != join_sets(&want) {
                differ.push(format!("{q}\n  keel:\n{got}\n  PostgreSQL 15:\n{want}"));
            }
        }
        assert!(
            differ.is_empty(),
            "join orders differ from PostgreSQL 15:\n{}",
            differ.join("\n\n")
        );
    });
}

/// The estimated rows of each scan that probes an index with another table's column (an
/// index nested loop's inner side, PostgreSQL's parameterized index or bitmap heap scan), by
/// the relation it reads ("dpb b").
fn probe_rows(plan: &str) -> Vec<(String, f64)> {
    let lines: Vec<&str> = plan.lines().map(str::trim_start).collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let l = l.trim_start_matches("->  ");
        let Some((name, rest)) = l.split_once("  (cost=") else {
            continue;
        };
        let probes = lines.get(i + 1).is_some_and(|c| {
            (c.starts_with("Index Cond:") || c.starts_with("Recheck Cond:"))
                && c.contains(" = ")
                && c.contains('.')
        });
        let rows = rest
            .split_once("rows=")
            .and_then(|(_, r)| r.split_whitespace().next())
            .and_then(|r| r.parse::<f64>().ok());
        let relation = name.split_once(" on ").map(|(_, r)| r.to_string());
        if let (true, Some(relation), Some(rows)) = (probes, relation, rows) {
            out.push((relation, rows));
        }
    }
    out
}

/// An index nested loop's inner scan is estimated per probe, as PostgreSQL estimates it: the
/// rows one outer row's key finds, not the table's. The same probes on both engines must
/// agree within a factor of three.
#[test]
fn index_probe_estimates_match_postgres() {
    let (target, oracle) = (Server::start(&[]), Server::oracle(&[]));
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/explain/join_order.sql");
    let schema = schema.to_string_lossy();
    for s in [&target, &oracle] {
        let out = s.psql(&["-q", "-v", "ON_ERROR_STOP=1", "-f", &schema]);
        assert!(
            out.success(),
            "{:?}: loading the schema failed:\n{out}",
            s.engine
        );
    }
    client::runtime().block_on(async {
        let t = connect(&target.conn_str()).await;
        let o = connect(&oracle.conn_str()).await;
        let mut compared = 0;
        // dpb_c_id is not unique: each dpc row's key finds 10 of dpb's 20,000 rows.
        let probe_by_fk = "select c.name, b.v from dpc c join dpb b on b.c_id = c.id where c.id < 4";
        for q in QUERIES.iter().chain([&probe_by_fk]) {
            let got = explain_with(&t, "costs on", q).await;
            let want = explain_with(&o, "costs on", q).await;
            for (name, rows) in probe_rows(&got) {
                let Some((_, pg)) = probe_rows(&want).into_iter().find(|(n, _)| *n == name) else {
                    continue;
                };
                compared += usize::from(name == "dpb b");
                assert!(
                    rows <= pg.max(1.0) * 3.0 && pg <= rows.max(1.0) * 3.0,
                    "{name}: keel estimates {rows} rows per probe, PostgreSQL 15 {pg}\n{got}\n{want}"
                );
            }
        }
        assert!(compared > 0, "no probe of dpb by c_id in both engines' plans");
    });
}
