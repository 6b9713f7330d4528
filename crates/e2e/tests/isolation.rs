//! Isolation specs: the classic anomalies (dirty write, dirty read, lost update with plain
//! read-modify-write and via SELECT FOR UPDATE, read skew, write skew, anti-dependency cycle, update after a concurrent
//! delete) under READ COMMITTED and REPEATABLE READ, each run against keel and against
//! PostgreSQL 15 with the same assertions, so what is asserted is PostgreSQL's behaviour:
//! which statement blocks, which fails with which SQLSTATE, and what each session sees.
//! (Plain UPDATE-vs-UPDATE waits, RR 40001 on UPDATE, deadlocks, cancel and disconnect are in
//! row_locks.rs and not repeated here.)

use keel_e2e::client::{
    affected, assert_blocked, connect, exec, on_both, rows, sqlstate, try_affected, value, within,
};
use std::time::Duration;

/// How long a statement must stay pending to count as blocked.
const BLOCKED: Duration = Duration::from_millis(500);

const LEVELS: [&str; 2] = ["read committed", "repeatable read"];

async fn dirty_write(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(&a, "create table dw (id int primary key, v int not null)").await;
    for level in LEVELS {
        exec(&a, "delete from dw; insert into dw values (1, 0)").await;
        // An uncommitted insert of key 2 blocks a second insert of key 2; the holder commits:
        // the waiter fails with 23505.
        exec(&a, &format!("begin isolation level {level}")).await;
        exec(&a, "insert into dw values (2, 1)").await;
        exec(&b, &format!("begin isolation level {level}")).await;
        let ins = Box::pin(try_affected(&b, "insert into dw values (2, 2)"));
        let ins = assert_blocked("insert of a key another session inserted", ins, BLOCKED).await;
        exec(&a, "commit").await;
        match within("insert after the holder committed", ins).await {
            Err(e) => assert_eq!(sqlstate(&e), "23505", "{level}: {e:?}"),
            Ok(n) => panic!("{level}: duplicate insert succeeded ({n} rows)"),
        }
        exec(&b, "rollback").await;
        // Same, but the holder rolls back: the waiter's insert goes in.
        exec(&a, &format!("begin isolation level {level}")).await;
        exec(&a, "insert into dw values (3, 1)").await;
        exec(&b, &format!("begin isolation level {level}")).await;
        let ins = Box::pin(try_affected(&b, "insert into dw values (3, 2)"));
        let ins = assert_blocked("insert of a key, holder rolls back", ins, BLOCKED).await;
        exec(&a, "rollback").await;
        let n = within("insert after the holder rolled back", ins).await;
        assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1), "{level}");
        exec(&b, "commit").await;
        assert_eq!(value(&a, "select v from dw where id = 3").await, "2");
        // A DELETE of a row with an uncommitted UPDATE waits; the updater rolls back, and the
        // delete removes the original row.
        exec(&a, &format!("begin isolation level {level}")).await;
        exec(&a, "update dw set v = 99 where id = 1").await;
        exec(&b, &format!("begin isolation level {level}")).await;
        let del = Box::pin(try_affected(&b, "delete from dw where id = 1"));
        let del = assert_blocked("delete of an updated row", del, BLOCKED).await;
        exec(&a, "rollback").await;
        let n = within("delete after rollback", del).await;
        assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1), "{level}");
        exec(&b, "commit").await;
        assert_eq!(value(&a, "select count(*) from dw where id = 1").await, "0");
    }
    exec(&a, "drop table dw").await;
}

#[test]
fn dirty_write_waits_for_the_holder_then_fails_or_proceeds() {
    on_both(&[], dirty_write);
}

async fn dirty_read(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(
        &a,
        "create table dr (id int primary key, v int not null); insert into dr values (1, 10), (2, 20)",
    )
    .await;
    for level in LEVELS {
        exec(&a, "begin").await;
        exec(&a, "insert into dr values (3, 30)").await;
        exec(&a, "update dr set v = v + 1 where id = 1").await;
        exec(&a, "delete from dr where id = 2").await;
        // A sees its own changes ...
        assert_eq!(
            rows(&a, "select id, v from dr order by id").await,
            vec![vec!["1", "11"], vec!["3", "30"]]
        );
        // ... B sees none of them, and its reads do not block.
        exec(&b, &format!("begin isolation level {level}")).await;
        assert_eq!(
            rows(&b, "select id, v from dr order by id").await,
            vec![vec!["1", "10"], vec!["2", "20"]],
            "{level}"
        );
        exec(&a, "rollback").await;
        assert_eq!(
            rows(&b, "select id, v from dr order by id").await,
            vec![vec!["1", "10"], vec!["2", "20"]],
            "{level}"
        );
        exec(&b, "commit").await;
    }
    exec(&a, "drop table dr").await;
}

#[test]
fn dirty_read_uncommitted_changes_are_invisible_and_reads_do_not_block() {
    on_both(&[], dirty_read);
}

async fn lost_update_for_update(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(
        &a,
        "create table lu (id int primary key, v int not null); insert into lu values (1, 0)",
    )
    .await;
    // READ COMMITTED: read-modify-write under SELECT FOR UPDATE. B's FOR UPDATE waits and
    // then returns A's committed value, so both increments survive.
    exec(&a, "begin").await;
    assert_eq!(
        value(&a, "select v from lu where id = 1 for update").await,
        "0"
    );
    exec(&b, "begin").await;
    let sel = Box::pin(rows(&b, "select v from lu where id = 1 for update"));
    let sel = assert_blocked("RC select for update of a locked row", sel, BLOCKED).await;
    exec(&a, "update lu set v = 1 where id = 1").await;
    exec(&a, "commit").await;
    assert_eq!(
        within("RC for update after commit", sel).await,
        vec![vec!["1"]]
    );
    exec(&b, "update lu set v = 2 where id = 1").await;
    exec(&b, "commit").await;
    assert_eq!(value(&a, "select v from lu").await, "2");

    // REPEATABLE READ: B's FOR UPDATE waits, then fails with 40001 (A changed the row).
    exec(&a, "begin isolation level repeatable read").await;
    assert_eq!(
        value(&a, "select v from lu where id = 1 for update").await,
        "2"
    );
    exec(&b, "begin isolation level repeatable read").await;
    assert_eq!(value(&b, "select v from lu where id = 1").await, "2");
    let sel = Box::pin(b.simple_query("select v from lu where id = 1 for update"));
    let sel = assert_blocked("RR select for update of a locked row", sel, BLOCKED).await;
    exec(&a, "update lu set v = 3 where id = 1").await;
    exec(&a, "commit").await;
    match within("RR for update after commit", sel).await {
        Err(e) => assert_eq!(sqlstate(&e), "40001", "{e:?}"),
        Ok(_) => panic!("RR select for update after a concurrent commit succeeded"),
    }
    exec(&b, "rollback").await;

    // REPEATABLE READ, holder only locked (no change) and commits: B gets the row.
    exec(&a, "begin isolation level repeatable read").await;
    assert_eq!(
        value(&a, "select v from lu where id = 1 for update").await,
        "3"
    );
    exec(&b, "begin isolation level repeatable read").await;
    assert_eq!(value(&b, "select v from lu where id = 1").await, "3");
    let sel = Box::pin(rows(&b, "select v from lu where id = 1 for update"));
    let sel = assert_blocked("RR for update, holder only locked", sel, BLOCKED).await;
    exec(&a, "commit").await;
    assert_eq!(
        within("RR for update after lock-only commit", sel).await,
        vec![vec!["3"]]
    );
    exec(&b, "commit").await;
    exec(&a, "drop table lu").await;
}

#[test]
fn lost_update_select_for_update_waits_rc_sees_new_value_rr_fails_40001() {
    on_both(&[], lost_update_for_update);
}

async fn lost_update(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(
        &a,
        "create table lp (id int primary key, v int not null); insert into lp values (1, 10)",
    )
    .await;
    // Hermitage P4, read-modify-write with values computed by the client: both read 10 and
    // write 11. B's UPDATE blocks on A's row lock. READ COMMITTED then applies it to A's
    // committed version (A's increment is lost, as in PostgreSQL); REPEATABLE READ fails
    // B with 40001 and A's value stays.
    for level in LEVELS {
        exec(&a, "update lp set v = 10").await;
        exec(&a, &format!("begin isolation level {level}")).await;
        exec(&b, &format!("begin isolation level {level}")).await;
        assert_eq!(value(&a, "select v from lp where id = 1").await, "10");
        assert_eq!(value(&b, "select v from lp where id = 1").await, "10");
        assert_eq!(affected(&a, "update lp set v = 11 where id = 1").await, 1);
        let upd = Box::pin(try_affected(&b, "update lp set v = 11 where id = 1"));
        let upd = assert_blocked("second writer of the row", upd, BLOCKED).await;
        exec(&a, "commit").await;
        let outcome = within("second writer after commit", upd).await;
        if level == "read committed" {
            assert_eq!(outcome.map_err(|e| format!("{e:?}")), Ok(1), "{level}");
            exec(&b, "commit").await;
        } else {
            match outcome {
                Err(e) => assert_eq!(sqlstate(&e), "40001", "{e:?}"),
                Ok(n) => panic!("RR lost update: second writer updated {n} rows"),
            }
            exec(&b, "rollback").await;
        }
        assert_eq!(value(&a, "select v from lp").await, "11", "{level}");
    }
    exec(&a, "drop table lp").await;
}

#[test]
fn lost_update_rc_overwrites_rr_fails_40001() {
    on_both(&[], lost_update);
}

async fn read_skew(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(
        &a,
        "create table rs (id int primary key, v int not null); insert into rs values (1, 50), (2, 50)",
    )
    .await;
    // A reads x; B moves 10 from x to y and commits; A reads y. RC takes a new snapshot per
    // statement and sees the new y (x + y = 110: the skew); RR keeps its snapshot (100).
    for (level, y_seen) in [("read committed", "60"), ("repeatable read", "50")] {
        exec(&a, "update rs set v = 50").await;
        exec(&a, &format!("begin isolation level {level}")).await;
        assert_eq!(value(&a, "select v from rs where id = 1").await, "50");
        exec(&b, "begin").await;
        assert_eq!(
            affected(&b, "update rs set v = v - 10 where id = 1").await,
            1
        );
        assert_eq!(
            affected(&b, "update rs set v = v + 10 where id = 2").await,
            1
        );
        exec(&b, "commit").await;
        assert_eq!(
            value(&a, "select v from rs where id = 2").await,
            y_seen,
            "{level}"
        );
        // Within one statement both levels are consistent.
        assert_eq!(value(&a, "select sum(v) from rs").await, "100", "{level}");
        exec(&a, "commit").await;
    }
    exec(&a, "drop table rs").await;
}

#[test]
fn read_skew_visible_in_read_committed_not_in_repeatable_read() {
    on_both(&[], read_skew);
}

async fn write_skew(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(
        &a,
        "create table ws (id int primary key, on_call boolean not null); \
         insert into ws values (1, true), (2, true)",
    )
    .await;
    for level in LEVELS {
        exec(&a, "update ws set on_call = true").await;
        // Both check that two doctors are on call, each takes a different one off: no row is
        // written twice, so nothing blocks and both commit (write skew, allowed below
        // SERIALIZABLE in PostgreSQL).
        exec(&a, &format!("begin isolation level {level}")).await;
        exec(&b, &format!("begin isolation level {level}")).await;
        assert_eq!(
            value(&a, "select count(*) from ws where on_call").await,
            "2"
        );
        assert_eq!(
            value(&b, "select count(*) from ws where on_call").await,
            "2"
        );
        assert_eq!(
            affected(&a, "update ws set on_call = false where id = 1").await,
            1
        );
        assert_eq!(
            affected(&b, "update ws set on_call = false where id = 2").await,
            1
        );
        exec(&a, "commit").await;
        exec(&b, "commit").await;
        assert_eq!(
            value(&a, "select count(*) from ws where on_call").await,
            "0",
            "{level}"
        );
    }
    exec(&a, "drop table ws").await;
}

#[test]
fn write_skew_both_commit_in_rc_and_rr() {
    on_both(&[], write_skew);
}

async fn anti_dependency_cycle(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(
        &a,
        "create table ad (id int primary key, grp int not null, v int not null)",
    )
    .await;
    for (i, level) in LEVELS.iter().enumerate() {
        let base = (i as i32 + 1) * 100;
        // Each reads the other's group (an empty predicate), then inserts into its own: each
        // read misses the other's insert (rw-antidependency both ways: a cycle). Below
        // SERIALIZABLE both commit, and under RR each still sees its old snapshot.
        exec(&a, &format!("begin isolation level {level}")).await;
        exec(&b, &format!("begin isolation level {level}")).await;
        assert_eq!(
            value(
                &a,
                &format!("select count(*) from ad where grp = {}", base + 2)
            )
            .await,
            "0"
        );
        assert_eq!(
            value(
                &b,
                &format!("select count(*) from ad where grp = {}", base + 1)
            )
            .await,
            "0"
        );
        exec(
            &a,
            &format!("insert into ad values ({}, {}, 1)", base + 1, base + 1),
        )
        .await;
        exec(
            &b,
            &format!("insert into ad values ({}, {}, 1)", base + 2, base + 2),
        )
        .await;
        exec(&a, "commit").await;
        // B: RC sees A's committed row at its next statement, RR does not.
        let seen = value(
            &b,
            &format!("select count(*) from ad where grp = {}", base + 1),
        )
        .await;
        assert_eq!(
            seen,
            if *level == "read committed" { "1" } else { "0" },
            "{level}"
        );
        exec(&b, "commit").await;
        assert_eq!(
            value(
                &a,
                &format!(
                    "select count(*) from ad where id > {base} and id < {}",
                    base + 100
                )
            )
            .await,
            "2",
            "{level}"
        );
    }
    exec(&a, "drop table ad").await;
}

#[test]
fn anti_dependency_cycle_both_commit_rr_keeps_its_snapshot() {
    on_both(&[], anti_dependency_cycle);
}

async fn update_after_delete(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(&a, "create table ud (id int primary key, v int not null)").await;
    for level in LEVELS {
        exec(&a, "delete from ud; insert into ud values (1, 0)").await;
        exec(&a, "begin").await;
        assert_eq!(affected(&a, "delete from ud where id = 1").await, 1);
        exec(&b, &format!("begin isolation level {level}")).await;
        assert_eq!(value(&b, "select count(*) from ud").await, "1");
        let upd = Box::pin(try_affected(&b, "update ud set v = v + 1 where id = 1"));
        let upd = assert_blocked("update of a row being deleted", upd, BLOCKED).await;
        exec(&a, "commit").await;
        // RC: the row is gone, 0 rows updated. RR: 40001.
        match (
            level,
            within("update after the delete committed", upd).await,
        ) {
            ("read committed", Ok(n)) => assert_eq!(n, 0),
            ("repeatable read", Err(e)) => assert_eq!(sqlstate(&e), "40001", "{e:?}"),
            (l, r) => panic!("{l}: unexpected {r:?}"),
        }
        exec(&b, "rollback").await;
    }
    exec(&a, "drop table ud").await;
}

#[test]
fn update_after_concurrent_delete_rc_updates_nothing_rr_fails_40001() {
    on_both(&[], update_after_delete);
}

async fn serializable_forms(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    // Every way of asking for SERIALIZABLE gives it.
    for (set, reset) in [
        ("begin isolation level serializable", "rollback"),
        (
            "start transaction isolation level serializable, read write",
            "rollback",
        ),
        (
            "set session characteristics as transaction isolation level serializable; begin",
            "rollback; set session characteristics as transaction isolation level read committed",
        ),
        (
            "set default_transaction_isolation = 'serializable'; begin",
            "rollback; reset default_transaction_isolation",
        ),
        (
            "begin; set transaction_isolation = serializable",
            "rollback",
        ),
    ] {
        // One statement per query: in a multi-statement query PostgreSQL fixes the implicit
        // block's level before a SET in it runs.
        for sql in set.split("; ") {
            exec(&a, sql).await;
        }
        assert_eq!(
            value(&a, "show transaction_isolation").await,
            "serializable",
            "{set}"
        );
        exec(&a, reset).await;
    }
    exec(&a, "create table ser (id int primary key, v int)").await;
    // READ ONLY DEFERRABLE with no read-write serializable transaction running: no wait.
    exec(
        &b,
        "begin isolation level serializable read only deferrable",
    )
    .await;
    assert_eq!(value(&b, "select count(*) from ser").await, "0");
    exec(&b, "commit").await;
    // With one running, the first statement waits until it ends.
    exec(&a, "begin isolation level serializable").await;
    assert_eq!(value(&a, "select count(*) from ser").await, "0");
    exec(
        &b,
        "begin isolation level serializable read only deferrable",
    )
    .await;
    let sel = Box::pin(rows(&b, "select count(*) from ser"));
    let sel = assert_blocked("deferrable read-only snapshot", sel, BLOCKED).await;
    exec(&a, "insert into ser values (1, 1)").await;
    exec(&a, "commit").await;
    // The snapshot it waited to trust was taken before that commit.
    assert_eq!(
        within("deferrable after commit", sel).await,
        vec![vec!["0"]]
    );
    exec(&b, "commit").await;
    exec(&a, "drop table ser").await;
}

#[test]
fn serializable_is_accepted_in_every_form_and_deferrable_waits_for_a_safe_snapshot() {
    on_both(&[], serializable_forms);
}
