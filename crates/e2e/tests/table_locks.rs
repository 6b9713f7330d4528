//! Relation locks between concurrent sessions, each scenario run against keel and against
//! PostgreSQL 15 with the same assertions: TRUNCATE and DROP TABLE against concurrent writers
//! and readers (no committed row is lost), LOCK TABLE's modes, NOWAIT, lock_timeout,
//! deadlocks through table locks, and a client that vanishes holding one.

use keel_e2e::client::{
    assert_blocked, connect, exec, on_both, rows, settle_deadlock, sqlstate, try_affected, value,
    within,
};
use std::time::{Duration, Instant};

/// How long a statement must stay pending to count as blocked.
const BLOCKED: Duration = Duration::from_millis(500);

async fn truncate_against_writers(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(&a, "create table tw (id int primary key, v text)").await;
    exec(&a, "insert into tw values (1, 'old')").await;

    // An INSERT waits for the open TRUNCATE and then goes into the new, empty table: the row
    // it committed is there afterwards.
    exec(&a, "begin; truncate tw").await;
    let ins = Box::pin(try_affected(&b, "insert into tw values (2, 'during')"));
    let ins = assert_blocked("INSERT during an open TRUNCATE", ins, BLOCKED).await;
    exec(&a, "commit").await;
    let n = within("INSERT after the TRUNCATE committed", ins).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));
    assert_eq!(
        value(&a, "select string_agg(v, ',') from tw").await,
        "during"
    );

    // A TRUNCATE waits for an open writer, and then removes its committed row.
    exec(&b, "begin; insert into tw values (3, 'open')").await;
    let tr = Box::pin(try_affected(&a, "truncate tw"));
    let tr = assert_blocked("TRUNCATE during an open INSERT", tr, BLOCKED).await;
    exec(&b, "commit").await;
    within("TRUNCATE after the INSERT committed", tr)
        .await
        .unwrap_or_else(|e| panic!("truncate: {e:?}"));
    assert_eq!(value(&a, "select count(*) from tw").await, "0");

    // A TRUNCATE that rolls back keeps every row, and the waiting UPDATE then finds them.
    exec(&a, "insert into tw values (4, 'kept')").await;
    exec(&a, "begin; truncate tw").await;
    let upd = Box::pin(try_affected(&b, "update tw set v = 'updated' where id = 4"));
    let upd = assert_blocked("UPDATE during an open TRUNCATE", upd, BLOCKED).await;
    exec(&a, "rollback").await;
    let n = within("UPDATE after the TRUNCATE rolled back", upd).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));
    assert_eq!(value(&a, "select v from tw").await, "updated");
    exec(&a, "drop table tw").await;
}

#[test]
fn truncate_waits_for_writers_and_writers_wait_for_truncate() {
    on_both(&[], truncate_against_writers);
}

async fn readers_and_ddl(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(&a, "create table rd (id int primary key)").await;
    exec(&a, "insert into rd select generate_series(1, 100)").await;

    // A reader's open transaction holds ACCESS SHARE: TRUNCATE waits for it.
    exec(&a, "begin; select count(*) from rd").await;
    let tr = Box::pin(try_affected(&b, "truncate rd"));
    let tr = assert_blocked("TRUNCATE while a reader's transaction is open", tr, BLOCKED).await;
    exec(&a, "commit").await;
    within("TRUNCATE after the reader", tr)
        .await
        .unwrap_or_else(|e| panic!("truncate: {e:?}"));

    // A reader waits for an open DROP TABLE and then finds the table gone.
    exec(&a, "begin; drop table rd").await;
    let sel = Box::pin(try_affected(&b, "select * from rd"));
    let sel = assert_blocked("SELECT during an open DROP TABLE", sel, BLOCKED).await;
    exec(&a, "commit").await;
    match within("SELECT after the DROP", sel).await {
        Err(e) => assert_eq!(sqlstate(&e), "42P01", "{e:?}"),
        Ok(n) => panic!("a dropped table answered {n} rows"),
    }
}

#[test]
fn readers_wait_for_drop_and_truncate_waits_for_readers() {
    on_both(&[], readers_and_ddl);
}

async fn lock_table_modes(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(&a, "create table lm (id int)").await;

    // SHARE lets readers through and holds writers back.
    exec(&a, "begin; lock table lm in share mode").await;
    assert_eq!(value(&b, "select count(*) from lm").await, "0");
    let ins = Box::pin(try_affected(&b, "insert into lm values (1)"));
    let ins = assert_blocked("INSERT under a SHARE lock", ins, BLOCKED).await;
    exec(&a, "commit").await;
    let n = within("INSERT after the SHARE lock", ins).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));

    // ACCESS EXCLUSIVE (the default) holds readers back too; NOWAIT fails at once with 55P03.
    exec(&a, "begin; lock table lm").await;
    exec(&b, "begin").await;
    let t = Instant::now();
    match try_affected(&b, "lock table lm in access share mode nowait").await {
        Err(e) => {
            assert_eq!(sqlstate(&e), "55P03", "{e:?}");
            let msg = e.as_db_error().map(|d| d.message().to_string());
            assert_eq!(
                msg.as_deref(),
                Some("could not obtain lock on relation \"lm\"")
            );
        }
        Ok(_) => panic!("NOWAIT took a lock held ACCESS EXCLUSIVE elsewhere"),
    }
    assert!(t.elapsed() < Duration::from_secs(2), "NOWAIT waited");
    exec(&b, "rollback").await;

    // lock_timeout ends a wait with 55P03.
    exec(&b, "set lock_timeout = '200ms'").await;
    let t = Instant::now();
    match try_affected(&b, "select * from lm").await {
        Err(e) => {
            assert_eq!(sqlstate(&e), "55P03", "{e:?}");
            let msg = e.as_db_error().map(|d| d.message().to_string());
            assert_eq!(
                msg.as_deref(),
                Some("canceling statement due to lock timeout")
            );
        }
        Ok(_) => panic!("a read went through ACCESS EXCLUSIVE"),
    }
    assert!(t.elapsed() >= Duration::from_millis(150));
    exec(&b, "reset lock_timeout").await;

    // Weak modes share: ROW EXCLUSIVE alongside ROW SHARE and ACCESS SHARE.
    exec(&a, "commit").await;
    exec(&a, "begin; lock table lm in row exclusive mode").await;
    exec(&b, "begin; lock table lm in row share mode nowait").await;
    exec(&b, "lock table lm in access share mode nowait").await;
    exec(&b, "commit").await;
    exec(&a, "commit").await;

    // Outside a transaction block.
    match try_affected(&a, "lock table lm").await {
        Err(e) => assert_eq!(sqlstate(&e), "25P01", "{e:?}"),
        Ok(_) => panic!("LOCK TABLE outside a block"),
    }
    exec(&a, "drop table lm").await;
}

#[test]
fn lock_table_modes_nowait_and_lock_timeout() {
    on_both(&[], lock_table_modes);
}

async fn table_deadlock(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(&a, "create table d1 (id int); create table d2 (id int)").await;
    exec(&a, "begin; lock table d1").await;
    exec(&b, "begin; lock table d2").await;
    let la = Box::pin(try_affected(&a, "insert into d2 values (1)"));
    let la = assert_blocked("A waits for B's lock", la, Duration::from_millis(200)).await;
    let lb = Box::pin(try_affected(&b, "select * from d1"));
    settle_deadlock(&a, &b, la, lb).await;
    exec(&a, "drop table d1; drop table d2").await;
}

#[test]
fn a_deadlock_through_table_locks_is_detected() {
    on_both(&[("deadlock_timeout", "200ms")], table_deadlock);
}

async fn vanished_holder(conn: String) {
    let a = connect(&conn).await;
    exec(&a, "create table vh (id int)").await;
    let b = connect(&conn).await;
    exec(&b, "begin; lock table vh").await;
    let sel = Box::pin(try_affected(&a, "select * from vh"));
    let sel = assert_blocked("SELECT under ACCESS EXCLUSIVE", sel, BLOCKED).await;
    drop(b);
    let n = within("SELECT after the holder vanished", sel).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(0));
    exec(&a, "drop table vh").await;
}

#[test]
fn a_vanished_client_releases_its_table_locks() {
    on_both(&[], vanished_holder);
}

async fn concurrent_ddl(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(&a, "create table cd (id int); insert into cd values (1)").await;

    // DDL on other tables commits while A's DDL transaction is open; A's commit keeps both.
    exec(&a, "begin; create table cd_a (id int)").await;
    exec(&b, "create table cd_b (id int)").await;
    exec(&b, "alter table cd add column z int").await;
    // A changes the table B changed: it sees B's column and adds its own.
    exec(&a, "alter table cd add column w int").await;
    exec(&a, "insert into cd_a values (1)").await;
    exec(&a, "commit").await;
    exec(&b, "insert into cd (id, z, w) values (2, 3, 4)").await;
    assert_eq!(
        rows(&b, "select * from cd order by id").await,
        vec![vec!["1", "NULL", "NULL"], vec!["2", "3", "4"]]
    );
    assert_eq!(value(&b, "select count(*) from cd_a").await, "1");
    assert_eq!(value(&b, "select count(*) from cd_b").await, "0");

    // A TRUNCATE's transaction and a CREATE TABLE elsewhere both commit.
    exec(&a, "begin; truncate cd").await;
    exec(&b, "create table cd_c (id int)").await;
    exec(&a, "commit").await;
    assert_eq!(value(&b, "select count(*) from cd").await, "0");
    exec(
        &a,
        "drop table cd; drop table cd_a; drop table cd_b; drop table cd_c",
    )
    .await;
}

#[test]
fn concurrent_ddl_on_different_tables_all_commits() {
    on_both(&[], concurrent_ddl);
}

async fn maintenance_and_ddl(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(&a, "create table mt (id int)").await;
    exec(&a, "insert into mt select generate_series(1, 1000)").await;
    // VACUUM and ANALYZE take SHARE UPDATE EXCLUSIVE: they wait for an open TRUNCATE and
    // then work on the table as it is after it.
    for stmt in ["vacuum mt", "analyze mt", "vacuum analyze mt"] {
        exec(&a, "begin; truncate mt").await;
        let m = Box::pin(try_affected(&b, stmt));
        let m = assert_blocked(stmt, m, BLOCKED).await;
        exec(&a, "insert into mt values (1); commit").await;
        within(stmt, m)
            .await
            .unwrap_or_else(|e| panic!("{stmt}: {e:?}"));
    }
    assert_eq!(value(&b, "select count(*) from mt").await, "1");
    exec(&a, "drop table mt").await;
}

#[test]
fn vacuum_and_analyze_wait_for_truncate() {
    on_both(&[], maintenance_and_ddl);
}

async fn foreign_key_locks(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(&a, "create table fk_parent (id int primary key)").await;
    exec(&a, "insert into fk_parent values (1)").await;
    // Adding a foreign key takes SHARE ROW EXCLUSIVE on the referenced table: it waits for
    // an open writer of it.
    exec(&a, "begin; insert into fk_parent values (2)").await;
    let ct = Box::pin(try_affected(
        &b,
        "create table fk_child (id int references fk_parent)",
    ));
    let ct = assert_blocked("CREATE TABLE ... REFERENCES during a write", ct, BLOCKED).await;
    exec(&a, "commit").await;
    within("CREATE TABLE after the write", ct)
        .await
        .unwrap_or_else(|e| panic!("create table: {e:?}"));
    // A write checked against the referenced table takes ROW SHARE on it: EXCLUSIVE holds
    // it back, ACCESS SHARE readers are let through meanwhile.
    exec(&a, "begin; lock table fk_parent in exclusive mode").await;
    assert_eq!(value(&b, "select count(*) from fk_parent").await, "2");
    let ins = Box::pin(try_affected(&b, "insert into fk_child values (1)"));
    let ins = assert_blocked("a checked INSERT under EXCLUSIVE", ins, BLOCKED).await;
    exec(&a, "commit").await;
    let n = within("the checked INSERT after the lock", ins).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));
    exec(&a, "drop table fk_child; drop table fk_parent").await;
}

#[test]
fn foreign_keys_lock_the_table_they_refer_to() {
    on_both(&[], foreign_key_locks);
}

async fn locks_view(conn: String) {
    let (a, b, c) = (
        connect(&conn).await,
        connect(&conn).await,
        connect(&conn).await,
    );
    exec(&a, "create table lv (id int)").await;
    let b_pid = value(&b, "select pg_backend_pid()").await;
    let view = format!(
        "select mode, granted, fastpath, pid = {b_pid} from pg_locks \
         where locktype = 'relation' and pid <> pg_backend_pid() order by granted desc, mode"
    );
    // A weak lock sits on the fast path until a strong request moves it to the shared table.
    exec(&b, "begin; lock table lv in row exclusive mode").await;
    assert_eq!(
        rows(&a, &view).await,
        vec![vec!["RowExclusiveLock", "t", "t", "t"]]
    );
    exec(&c, "begin").await;
    let strong = Box::pin(try_affected(&c, "lock table lv in share mode"));
    let strong = assert_blocked("SHARE behind ROW EXCLUSIVE", strong, BLOCKED).await;
    assert_eq!(
        rows(&a, &view).await,
        vec![
            vec!["RowExclusiveLock", "t", "f", "t"],
            vec!["ShareLock", "f", "f", "f"]
        ]
    );
    exec(&b, "commit").await;
    within("SHARE after the commit", strong)
        .await
        .unwrap_or_else(|e| panic!("lock table: {e:?}"));
    assert_eq!(
        rows(&a, &view).await,
        vec![vec!["ShareLock", "t", "f", "f"]]
    );
    exec(&c, "commit").await;

    // A writer holds its transaction id; a session waiting for its row asks for it.
    exec(&a, "insert into lv values (1)").await;
    exec(&b, "begin; update lv set id = 2").await;
    let upd = Box::pin(try_affected(&c, "update lv set id = 3"));
    let upd = assert_blocked("UPDATE of a row another writer holds", upd, BLOCKED).await;
    assert_eq!(
        rows(
            &a,
            &format!(
                "select h.mode, w.mode, w.granted from pg_locks h join pg_locks w \
                 on w.transactionid = h.transactionid and w.pid <> h.pid \
                 where h.locktype = 'transactionid' and h.granted and h.pid = {b_pid}"
            )
        )
        .await,
        vec![vec!["ExclusiveLock", "ShareLock", "f"]]
    );
    exec(&b, "commit").await;
    within("UPDATE after the holder committed", upd)
        .await
        .unwrap_or_else(|e| panic!("update: {e:?}"));
    exec(&a, "drop table lv").await;
}

#[test]
fn pg_locks_shows_relation_locks_held_and_awaited() {
    on_both(&[], locks_view);
}
