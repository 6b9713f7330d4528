//! EXPLAIN's text format against PostgreSQL 15, for plans that are the same on both by
//! construction: a single-table scan of a table without indexes, a primary-key lookup, a sort,
//! aggregates, a limit, a hash join of two tables without indexes (the smaller one hashed), and
//! INSERT / UPDATE / DELETE. Expected output is what the oracle prints at test time; EXPLAIN
//! ANALYZE is compared with TIMING and SUMMARY off (row counts, loops and `Rows Removed by
//! Filter` are compared exactly). Also: EXPLAIN ANALYZE of an UPDATE really updates, options are
//! checked as PostgreSQL checks them, and COSTS / TIMING / SUMMARY have PostgreSQL's layout.

use keel_e2e::Server;
use keel_e2e::client::{self, connect, exec, value};
use tokio_postgres::{Client, SimpleQueryMessage};

/// `big` (10,000 rows) and `small` (100) have no index; `p` has a primary key. ANALYZE gives
/// PostgreSQL the statistics that make it hash `small` rather than merge-join; keel plans
/// from relation sizes, which give the same choice.
const SCHEMA: &[&str] = &[
    "create table big (a int, b text)",
    "create table small (a int, c text)",
    "create table p (id int primary key, v int)",
    "insert into big select i, 'b' || (i % 10) from generate_series(1, 10000) i",
    "insert into small select i, 'c' || i from generate_series(1, 100) i",
    "insert into p select i, i from generate_series(1, 1000) i",
];

/// Statements whose EXPLAIN (COSTS OFF) must print the same on both.
const PLANS: &[&str] = &[
    "select * from big where a > 9990",
    "select a from big where b = 'b3'",
    "select * from big where b like 'b1%'",
    "select * from p where id = 42",
    "select * from big order by b desc, a",
    "select count(*) from big",
    "select b, count(*) from big group by b",
    "select b, count(*) from big group by b order by 2 desc",
    "select * from big limit 5",
    "select big.a, small.c from big join small on big.a = small.a",
    "select big.a, s.c from big join small s on big.a = s.a where s.c like 'c1%'",
    "select 1 + 2",
    "insert into big values (1, 'x')",
    "update big set b = 'y' where a = 5",
    "update p set v = 0 where id = 7",
    "delete from big where a < 3",
    "delete from p where id = 8",
];

/// Statements whose EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) must print the same
/// (each in a transaction rolled back afterwards).
const ANALYZED: &[&str] = &[
    "select * from big where a > 9990",
    "select * from p where id = 42",
    "select count(*) from big",
    "select * from big limit 5",
    "update big set b = 'y' where a = 5",
    "update p set v = 0 where id = 7",
    "delete from big where a < 3",
];

/// The rows of `sql` joined by newlines, or the error as `ERROR <sqlstate>: <message>`.
async fn run(c: &Client, sql: &str) -> String {
    match c.simple_query(sql).await {
        Ok(msgs) => msgs
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("NULL").to_string()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Err(e) => match e.as_db_error() {
            Some(d) => format!("ERROR {}: {}", d.code().code(), d.message()),
            None => format!("ERROR: {e}"),
        },
    }
}

async fn load(c: &Client, oracle: bool) {
    for s in SCHEMA {
        exec(c, s).await;
    }
    if oracle {
        exec(c, "analyze").await;
        exec(c, "set max_parallel_workers_per_gather = 0").await;
    }
}

/// Replaces every number in `line` with `N` (costs, times, widths).
fn mask_numbers(line: &str) -> String {
    let mut out = String::new();
    let mut in_num = false;
    for ch in line.chars() {
        if ch.is_ascii_digit() || (in_num && ch == '.') {
            if !in_num {
                out.push('N');
                in_num = true;
            }
        } else {
            in_num = false;
            out.push(ch);
        }
    }
    out
}

#[test]
fn explain_matches_postgres() {
    let (target, oracle) = (Server::start(&[]), Server::oracle(&[]));
    let rt = client::runtime();
    rt.block_on(async {
        let t = connect(&target.conn_str()).await;
        let o = connect(&oracle.conn_str()).await;
        load(&t, false).await;
        load(&o, true).await;
        let mut failures = Vec::new();
        let mut compare = |what: String, got: String, want: String| {
            if got != want {
                failures.push(format!(
                    "--- {what}\n  keel:\n{got}\n  PostgreSQL 15:\n{want}"
                ));
            }
        };
        for q in PLANS {
            let sql = format!("explain (costs off) {q}");
            compare(sql.clone(), run(&t, &sql).await, run(&o, &sql).await);
        }
        for q in ANALYZED {
            let sql = format!("explain (analyze, costs off, timing off, summary off) {q}");
            let mut got = String::new();
            let mut want = String::new();
            for (c, out) in [(&t, &mut got), (&o, &mut want)] {
                exec(c, "begin").await;
                *out = run(c, &sql).await;
                exec(c, "rollback").await;
            }
            compare(sql, got, want);
        }
        // The layout of costs, times and the summary, numbers masked.
        for sql in [
            "explain select * from big where a > 9990",
            "explain analyze select * from big where a > 9990",
            "explain (analyze, timing off) select * from p where id = 42",
            "explain (summary) select * from p where id = 42",
            "explain (analyze, costs off) select count(*) from big",
        ] {
            let mask = |s: String| s.lines().map(mask_numbers).collect::<Vec<_>>().join("\n");
            compare(
                sql.to_string(),
                mask(run(&t, sql).await),
                mask(run(&o, sql).await),
            );
        }
        // Options are checked as PostgreSQL checks them.
        for sql in [
            "explain (timing) select 1",
            "explain (analyze maybe) select 1",
            "explain (format blah) select 1",
            "explain (bogus) select 1",
        ] {
            compare(sql.to_string(), run(&t, sql).await, run(&o, sql).await);
        }
        assert!(
            failures.is_empty(),
            "{} EXPLAIN outputs differ from PostgreSQL 15:\n\n{}",
            failures.len(),
            failures.join("\n\n")
        );
    });
}

#[test]
fn explain_analyze_update_really_updates() {
    let target = Server::start(&[]);
    let rt = client::runtime();
    rt.block_on(async {
        let c = connect(&target.conn_str()).await;
        exec(&c, "create table t (id int primary key, v text)").await;
        exec(
            &c,
            "insert into t select i, 'old' from generate_series(1, 10) i",
        )
        .await;
        let plan = run(&c, "explain analyze update t set v = 'new' where id = 3").await;
        assert!(plan.starts_with("Update on t"), "{plan}");
        assert_eq!(value(&c, "select v from t where id = 3").await, "new");
        // Plain EXPLAIN does not run the statement.
        run(&c, "explain update t set v = 'newer' where id = 4").await;
        assert_eq!(value(&c, "select v from t where id = 4").await, "old");
        let plan = run(&c, "explain analyze delete from t where v = 'old'").await;
        assert!(plan.contains("Rows Removed by Filter: 1"), "{plan}");
        assert_eq!(value(&c, "select count(*) from t").await, "1");
    });
}
