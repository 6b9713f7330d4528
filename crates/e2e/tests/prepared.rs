//! Prepared statements across sessions and DDL, run against keel and against PostgreSQL 15
//! with the same assertions. Keel shares one plan per statement text among all sessions
//! (crates/session/src/plan_cache.rs); these scenarios check that sharing never shows one
//! session a plan made for another catalog: after DDL committed elsewhere, inside a block with
//! the session's own uncommitted DDL, and after that block rolls back.

use keel_e2e::Server;
use keel_e2e::client::{connect, exec, runtime, within};
use tokio_postgres::{Client, Statement};

const SQL: &str = "select v from ps where id = $1";

async fn v_of(c: &Client, st: &Statement) -> Vec<String> {
    within(SQL, c.query(st, &[&1i32]))
        .await
        .unwrap_or_else(|e| panic!("{SQL}: {e:?}"))
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect()
}

async fn recreate(c: &Client, v: &str) {
    exec(
        c,
        &format!(
            "drop table if exists ps; create table ps (id int primary key, v text);
             insert into ps values (1, '{v}')"
        ),
    )
    .await;
}

async fn scenario(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    recreate(&a, "one").await;
    let sa = within("prepare", a.prepare(SQL)).await.unwrap();
    let sb = within("prepare", b.prepare(SQL)).await.unwrap();
    assert_eq!(v_of(&a, &sa).await, ["one"]);
    assert_eq!(v_of(&b, &sb).await, ["one"]);

    // DDL committed by another session: both prepared statements follow the new table.
    recreate(&b, "uno").await;
    assert_eq!(v_of(&a, &sa).await, ["uno"]);
    assert_eq!(v_of(&b, &sb).await, ["uno"]);
    let c = connect(&conn).await;
    let sc = within("prepare", c.prepare(SQL)).await.unwrap();
    assert_eq!(v_of(&c, &sc).await, ["uno"]);

    // Uncommitted DDL is seen by its own session only, and forgotten at rollback.
    exec(&b, "begin").await;
    recreate(&b, "eins").await;
    assert_eq!(v_of(&b, &sb).await, ["eins"]);
    let inner = within("prepare", b.prepare(SQL)).await.unwrap();
    assert_eq!(v_of(&b, &inner).await, ["eins"]);
    exec(&b, "rollback").await;
    assert_eq!(v_of(&b, &sb).await, ["uno"]);
    assert_eq!(v_of(&b, &inner).await, ["uno"]);
    assert_eq!(v_of(&a, &sa).await, ["uno"]);

    // A statement that drops every portal, its own included, run through a portal.
    within("discard all", c.execute("discard all", &[]))
        .await
        .unwrap();
    let again = within("prepare", c.prepare(SQL)).await.unwrap();
    assert_eq!(v_of(&c, &again).await, ["uno"]);
}

#[test]
fn prepared_statements_follow_ddl_in_every_session() {
    let rt = runtime();
    for srv in [Server::start(&[]), Server::oracle(&[])] {
        eprintln!("scenario on {:?}", srv.engine);
        rt.block_on(scenario(srv.conn_str()));
    }
}
