//! SELECT ... FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE between concurrent sessions,
//! each scenario run against keel and against PostgreSQL 15 with the same assertions: SKIP
//! LOCKED and NOWAIT, shared locks held by several transactions at once and what they admit,
//! READ COMMITTED's re-check of a row updated meanwhile, locks of a rolled-back savepoint,
//! and a deadlock through row locks.

use keel_e2e::client::{
    assert_blocked, connect, exec, on_both, rows, settle_deadlock, sqlstate, try_affected, value,
    within,
};
use std::time::Duration;

/// How long a statement must stay pending to count as blocked.
const BLOCKED: Duration = Duration::from_millis(500);

fn column(r: Vec<Vec<String>>) -> String {
    r.into_iter()
        .map(|mut row| row.swap_remove(0))
        .collect::<Vec<_>>()
        .join(",")
}

async fn skip_locked_and_nowait(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(&a, "create table q (id int primary key, state text)").await;
    exec(
        &a,
        "insert into q select g, 'new' from generate_series(1, 5) g",
    )
    .await;
    let take = "select id from q where state = 'new' order by id limit 1 for update skip locked";
    exec(&a, "begin").await;
    assert_eq!(value(&a, take).await, "1");
    exec(&b, "begin").await;
    // The row A holds is passed over, and does not count towards the LIMIT.
    assert_eq!(value(&b, take).await, "2");
    assert_eq!(
        column(rows(&b, "select id from q order by id for update skip locked").await),
        "2,3,4,5"
    );
    match try_affected(&b, "select id from q where id = 1 for update nowait").await {
        Err(e) => {
            assert_eq!(sqlstate(&e), "55P03", "{e:?}");
            let msg = e.as_db_error().map(|d| d.message().to_string());
            assert_eq!(
                msg.as_deref(),
                Some("could not obtain lock on row in relation \"q\"")
            );
        }
        Ok(_) => panic!("NOWAIT locked a row another transaction holds"),
    }
    exec(&b, "rollback").await;
    // Without either, the locker waits for the holder.
    let sel = Box::pin(rows(&b, "select id, state from q where id = 1 for update"));
    let sel = assert_blocked("FOR UPDATE of a locked row", sel, BLOCKED).await;
    exec(&a, "update q set state = 'taken' where id = 1; commit").await;
    assert_eq!(
        within("FOR UPDATE after the holder committed", sel).await,
        vec![vec!["1".to_string(), "taken".to_string()]]
    );
    exec(&a, "drop table q").await;
}

#[test]
fn skip_locked_passes_over_held_rows_and_nowait_fails() {
    on_both(&[], skip_locked_and_nowait);
}

async fn shared_locks(conn: String) {
    let (a, b, c) = (
        connect(&conn).await,
        connect(&conn).await,
        connect(&conn).await,
    );
    exec(&a, "create table sh (id int primary key, v int)").await;
    exec(&a, "insert into sh values (1, 0), (2, 0)").await;

    // Two transactions share a row; a writer waits for both.
    exec(&a, "begin; select * from sh where id = 1 for share").await;
    exec(&b, "begin; select * from sh where id = 1 for share").await;
    let upd = Box::pin(try_affected(&c, "update sh set v = 1 where id = 1"));
    let upd = assert_blocked("UPDATE of a row two sessions share", upd, BLOCKED).await;
    exec(&a, "commit").await;
    let upd = assert_blocked("UPDATE while one sharer remains", upd, BLOCKED).await;
    exec(&b, "commit").await;
    let n = within("UPDATE after both sharers", upd).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));

    // KEY SHARE admits NO KEY UPDATE but not UPDATE; SHARE admits neither.
    exec(&a, "begin; select * from sh where id = 2 for key share").await;
    exec(&b, "begin").await;
    assert_eq!(
        value(
            &b,
            "select id from sh where id = 2 for no key update nowait"
        )
        .await,
        "2"
    );
    match try_affected(&c, "select id from sh where id = 2 for update nowait").await {
        Err(e) => assert_eq!(sqlstate(&e), "55P03", "{e:?}"),
        Ok(_) => panic!("FOR UPDATE was granted beside a KEY SHARE lock"),
    }
    match try_affected(&c, "select id from sh where id = 2 for share nowait").await {
        Err(e) => assert_eq!(sqlstate(&e), "55P03", "{e:?}"),
        Ok(_) => panic!("FOR SHARE was granted beside a NO KEY UPDATE lock"),
    }
    exec(&b, "rollback").await;
    exec(&a, "rollback").await;

    // A DELETE waits for a KEY SHARE holder; a reader never waits.
    exec(&a, "begin; select * from sh where id = 2 for key share").await;
    assert_eq!(value(&c, "select count(*) from sh").await, "2");
    let del = Box::pin(try_affected(&c, "delete from sh where id = 2"));
    let del = assert_blocked("DELETE of a KEY SHARE locked row", del, BLOCKED).await;
    exec(&a, "commit").await;
    let n = within("DELETE after the locker", del).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));
    exec(&a, "drop table sh").await;
}

#[test]
fn shared_locks_are_held_together_and_conflict_as_in_postgres() {
    on_both(&[], shared_locks);
}

async fn recheck(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(
        &a,
        "create table rq (id int primary key, state text, n int)",
    )
    .await;
    exec(
        &a,
        "insert into rq values (1, 'new', 0), (2, 'new', 0), (3, 'new', 0)",
    )
    .await;
    // READ COMMITTED: a row updated while the locker waited is re-read; it is returned with
    // its new values if it still matches, and left out if it no longer does.
    exec(&a, "begin").await;
    exec(&a, "update rq set state = 'done' where id = 1").await;
    exec(&a, "update rq set n = 7 where id = 2").await;
    let sel = Box::pin(rows(
        &b,
        "select id, n from rq where state = 'new' order by id for update",
    ));
    let sel = assert_blocked("FOR UPDATE of rows being updated", sel, BLOCKED).await;
    exec(&a, "commit").await;
    assert_eq!(
        within("FOR UPDATE after the updater committed", sel).await,
        vec![
            vec!["2".to_string(), "7".to_string()],
            vec!["3".to_string(), "0".to_string()]
        ]
    );
    // REPEATABLE READ fails instead.
    exec(&b, "begin isolation level repeatable read").await;
    assert_eq!(value(&b, "select count(*) from rq").await, "3");
    exec(&a, "update rq set n = 8 where id = 3").await;
    match try_affected(&b, "select * from rq where id = 3 for share").await {
        Err(e) => assert_eq!(sqlstate(&e), "40001", "{e:?}"),
        Ok(_) => panic!("REPEATABLE READ locked a row updated after its snapshot"),
    }
    exec(&b, "rollback").await;
    exec(&a, "drop table rq").await;
}

#[test]
fn read_committed_rechecks_a_row_updated_meanwhile() {
    on_both(&[], recheck);
}

async fn savepoint_and_deadlock(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(&a, "create table sl (id int primary key)").await;
    exec(&a, "insert into sl values (1), (2)").await;
    // A lock taken inside a savepoint ends with it.
    exec(
        &a,
        "begin; savepoint s; select * from sl where id = 1 for update",
    )
    .await;
    match try_affected(&b, "select * from sl where id = 1 for update nowait").await {
        Err(e) => assert_eq!(sqlstate(&e), "55P03", "{e:?}"),
        Ok(_) => panic!("a row locked in a savepoint was free"),
    }
    exec(&a, "rollback to s").await;
    assert_eq!(
        value(&b, "select id from sl where id = 1 for update nowait").await,
        "1"
    );
    exec(&a, "rollback").await;

    // Two lockers that want each other's rows: one fails with 40P01.
    exec(&a, "begin; select * from sl where id = 1 for update").await;
    exec(&b, "begin; select * from sl where id = 2 for update").await;
    let la = Box::pin(try_affected(&a, "select * from sl where id = 2 for update"));
    let la = assert_blocked("A waits for B's row", la, Duration::from_millis(200)).await;
    let lb = Box::pin(try_affected(&b, "select * from sl where id = 1 for update"));
    settle_deadlock(&a, &b, la, lb).await;
    exec(&a, "drop table sl").await;
}

#[test]
fn savepoint_rollback_frees_row_locks_and_deadlocks_are_found() {
    on_both(&[("deadlock_timeout", "200ms")], savepoint_and_deadlock);
}

async fn foreign_key_locks(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(
        &a,
        "create table fp (id int primary key, v int); \
         create table fc (id int primary key, pid int references fp (id)); \
         insert into fp values (1, 0), (2, 0), (3, 0)",
    )
    .await;
    // A child row's check locks its parent FOR KEY SHARE: a non-key UPDATE of the parent
    // goes through, a DELETE waits and then finds the child.
    exec(&a, "begin; insert into fc values (1, 1)").await;
    assert_eq!(
        within(
            "non-key UPDATE of a parent row",
            try_affected(&b, "update fp set v = 5 where id = 1")
        )
        .await
        .map_err(|e| format!("{e:?}")),
        Ok(1)
    );
    let del = Box::pin(try_affected(&b, "delete from fp where id = 1"));
    let del = assert_blocked("DELETE of a parent row a child checked", del, BLOCKED).await;
    exec(&a, "commit").await;
    match within("DELETE after the child committed", del).await {
        Err(e) => assert_eq!(sqlstate(&e), "23503", "{e:?}"),
        Ok(n) => panic!("the parent of a committed child was deleted ({n} rows)"),
    }
    // A key UPDATE of the parent waits as well.
    exec(&a, "begin; insert into fc values (2, 2)").await;
    let upd = Box::pin(try_affected(&b, "update fp set id = 20 where id = 2"));
    let upd = assert_blocked("key UPDATE of a parent row a child checked", upd, BLOCKED).await;
    exec(&a, "commit").await;
    match within("key UPDATE after the child committed", upd).await {
        Err(e) => assert_eq!(sqlstate(&e), "23503", "{e:?}"),
        Ok(n) => panic!("the key of a referenced parent changed ({n} rows)"),
    }
    // A child inserted while its parent's DELETE is open waits, and then fails.
    exec(&a, "begin; delete from fp where id = 3").await;
    let ins = Box::pin(try_affected(&b, "insert into fc values (3, 3)"));
    let ins = assert_blocked(
        "child INSERT while its parent is being deleted",
        ins,
        BLOCKED,
    )
    .await;
    exec(&a, "commit").await;
    match within("child INSERT after the parent's DELETE", ins).await {
        Err(e) => assert_eq!(sqlstate(&e), "23503", "{e:?}"),
        Ok(n) => panic!("a child of a deleted parent was inserted ({n} rows)"),
    }
    assert_eq!(
        value(
            &a,
            "select count(*) from fc left join fp on fp.id = fc.pid where fp.id is null"
        )
        .await,
        "0"
    );
    exec(&a, "drop table fc; drop table fp").await;
}

#[test]
fn foreign_key_checks_lock_the_parent_for_key_share() {
    on_both(&[], foreign_key_locks);
}
