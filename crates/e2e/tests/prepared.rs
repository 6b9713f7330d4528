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

type Param<'a> = &'a (dyn tokio_postgres::types::ToSql + Sync);

/// The count and least id a `select count(*), min(id) ...` statement gives for `params`.
async fn one(c: &Client, st: &Statement, params: &[Param<'_>]) -> (i64, Option<i32>) {
    let rows = within("query", c.query(st, params)).await.unwrap();
    (rows[0].get(0), rows[0].get(1))
}

/// `column = $1` filters are tested on the rows' stored bytes before decoding: a parameter
/// of the column's type, of another type (int8 against int4), NULL, and a text parameter
/// through an index scan with a filter, all give the rows PostgreSQL gives.
async fn parameters_in_filters(conn: String) {
    let c = connect(&conn).await;
    exec(
        &c,
        "drop table if exists pf; create table pf (id int primary key, i int, t text);
         insert into pf select g, g % 100, 'k' || (g % 50) from generate_series(1, 3000) g",
    )
    .await;
    let count = |sql: &'static str| {
        let c = &c;
        async move { within(sql, c.prepare(sql)).await.unwrap() }
    };
    let by_t = count("select count(*), min(id) from pf where t = $1").await;
    let by_i = count("select count(*), min(id) from pf where i = $1").await;
    let by_i8 = count("select count(*), min(id) from pf where i = $1::int8").await;
    let by_both = count("select count(*), min(id) from pf where t = $1 and i = $2").await;
    let first = count("select id from pf where t = $1 order by id limit 1").await;
    assert_eq!(one(&c, &by_t, &[&"k7"]).await, (60, Some(7)));
    assert_eq!(one(&c, &by_t, &[&"k77"]).await, (0, None));
    assert_eq!(one(&c, &by_t, &[&None::<&str>]).await, (0, None));
    assert_eq!(one(&c, &by_i, &[&42i32]).await, (30, Some(42)));
    assert_eq!(one(&c, &by_i8, &[&42i64]).await, (30, Some(42)));
    assert_eq!(one(&c, &by_both, &[&"k42", &42i32]).await, (30, Some(42)));
    assert_eq!(one(&c, &by_both, &[&"k43", &42i32]).await, (0, None));
    let rows = within("query", c.query(&first, &[&"k49"])).await.unwrap();
    assert_eq!(rows[0].get::<_, i32>(0), 49);
}

#[test]
fn parameters_in_equality_filters() {
    let rt = runtime();
    for srv in [Server::start(&[]), Server::oracle(&[])] {
        eprintln!("parameters on {:?}", srv.engine);
        rt.block_on(parameters_in_filters(srv.conn_str()));
    }
}
