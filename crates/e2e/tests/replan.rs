//! Plans follow ANALYZE: a statement prepared over the extended protocol before its table was
//! analyzed gets, at its next execution after ANALYZE, the plan the new statistics call for,
//! and so does the same text prepared in another session (the server's shared plan cache).
//! The statement is an `EXPLAIN (COSTS OFF)`, so the plan is what it returns; the expected
//! output is PostgreSQL 15's for the same steps (PostgreSQL plans EXPLAIN at each execution).

use keel_e2e::Server;
use keel_e2e::client::{self, connect};
use tokio_postgres::Client;

const EXPLAIN: &str = "explain (costs off) select id from rp where k = 1";

async fn simple(c: &Client, sql: &str) {
    c.simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

async fn plan(c: &Client, stmt: &tokio_postgres::Statement) -> String {
    c.query(stmt, &[])
        .await
        .expect("explain")
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The plans the steps give on `server`: before the load, after it and ANALYZE, in a second
/// session, and after a delete and ANALYZE.
async fn steps(server: &Server) -> Vec<String> {
    let a = connect(&server.conn_str()).await;
    let b = connect(&server.conn_str()).await;
    simple(
        &a,
        "create table rp (id int, k int, pad text); create index rp_k on rp (k); \
         insert into rp select g, g % 3, 'row ' || g from generate_series(1, 30) g; \
         analyze rp",
    )
    .await;
    let stmt = a.prepare(EXPLAIN).await.expect("prepare");
    let mut out = vec![plan(&a, &stmt).await];
    simple(
        &a,
        "insert into rp select g, g, 'row ' || g from generate_series(31, 60000) g; analyze rp",
    )
    .await;
    out.push(plan(&a, &stmt).await);
    let other = b.prepare(EXPLAIN).await.expect("prepare");
    out.push(plan(&b, &other).await);
    simple(&a, "delete from rp where id > 30; analyze rp").await;
    out.push(plan(&a, &stmt).await);
    out.push(plan(&b, &other).await);
    out
}

#[test]
fn prepared_plans_follow_analyze() {
    let (target, oracle) = (Server::start(&[]), Server::oracle(&[]));
    client::runtime().block_on(async {
        let want = steps(&oracle).await;
        let got = steps(&target).await;
        assert_ne!(
            want[0], want[1],
            "the oracle's plan changes with the statistics"
        );
        assert_eq!(got, want, "plans after each step differ from PostgreSQL 15");
    });
}
