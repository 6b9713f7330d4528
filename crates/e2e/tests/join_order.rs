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
    let rows = c
        .simple_query(&format!("explain (costs off) {sql}"))
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
