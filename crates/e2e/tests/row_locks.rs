//! Row locks between concurrent sessions, each scenario run against keel and against
//! PostgreSQL 15 with the same assertions (so what is asserted is PostgreSQL's behaviour):
//! READ COMMITTED re-evaluation after a concurrent update, REPEATABLE READ serialization
//! failures, deadlock detection, cancelling a lock wait or a pg_sleep, hundreds of waiters on
//! one row, and a session that disconnects while holding a row lock.

use keel_e2e::Server;
use keel_e2e::client::{
    affected, assert_blocked, connect, exec, on_both, rows, runtime, sqlstate, try_affected, value,
    within,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio_postgres::NoTls;

/// How long a statement must stay pending to count as blocked.
const BLOCKED: Duration = Duration::from_millis(500);

async fn read_committed(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(
        &a,
        "create table rc (id int primary key, v text not null); \
         insert into rc values (1, 'x'), (2, 'x')",
    )
    .await;

    // B's UPDATE waits for A, then applies to A's committed version.
    exec(&a, "begin; update rc set v = v || 'A' where id = 1").await;
    let upd = Box::pin(try_affected(&b, "update rc set v = v || 'B' where id = 1"));
    let upd = assert_blocked("RC update of a locked row", upd, BLOCKED).await;
    exec(&a, "commit").await;
    let n = within("RC update after commit", upd).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));
    assert_eq!(value(&a, "select v from rc where id = 1").await, "xAB");

    // A's update makes B's WHERE false: B re-checks it on the new version and updates nothing.
    exec(&a, "begin; update rc set v = 'y' where id = 2").await;
    let upd = Box::pin(try_affected(
        &b,
        "update rc set v = v || 'B' where id = 2 and v = 'x'",
    ));
    let upd = assert_blocked("RC conditional update", upd, BLOCKED).await;
    exec(&a, "commit").await;
    let n = within("RC conditional update after commit", upd).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(0));
    assert_eq!(value(&b, "select v from rc where id = 2").await, "y");

    // A rolls back: B applies to the original version.
    exec(&a, "begin; update rc set v = 'z' where id = 2").await;
    let upd = Box::pin(try_affected(&b, "update rc set v = v || 'B' where id = 2"));
    let upd = assert_blocked("RC update, holder rolls back", upd, BLOCKED).await;
    exec(&a, "rollback").await;
    let n = within("RC update after rollback", upd).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));
    assert_eq!(value(&a, "select v from rc where id = 2").await, "yB");
    exec(&a, "drop table rc").await;
}

#[test]
fn read_committed_update_waits_then_applies_to_the_new_version() {
    on_both(&[], read_committed);
}

async fn repeatable_read(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(
        &a,
        "create table rr (id int primary key, v text not null); insert into rr values (1, 'x')",
    )
    .await;

    // A commits: B, whose snapshot predates A's commit, must fail with 40001.
    exec(&a, "begin; update rr set v = v || 'A' where id = 1").await;
    exec(&b, "begin isolation level repeatable read").await;
    assert_eq!(value(&b, "select v from rr where id = 1").await, "x");
    let upd = Box::pin(try_affected(&b, "update rr set v = v || 'B' where id = 1"));
    let upd = assert_blocked("RR update of a locked row", upd, BLOCKED).await;
    exec(&a, "commit").await;
    match within("RR update after commit", upd).await {
        Err(e) => assert_eq!(sqlstate(&e), "40001", "{e:?}"),
        Ok(n) => panic!("RR update after a concurrent commit succeeded ({n} rows)"),
    }
    exec(&b, "rollback").await;
    assert_eq!(value(&b, "select v from rr where id = 1").await, "xA");

    // A rolls back: B's update succeeds.
    exec(&a, "begin; update rr set v = 'gone' where id = 1").await;
    exec(&b, "begin isolation level repeatable read").await;
    assert_eq!(value(&b, "select v from rr where id = 1").await, "xA");
    let upd = Box::pin(try_affected(&b, "update rr set v = v || 'B' where id = 1"));
    let upd = assert_blocked("RR update, holder rolls back", upd, BLOCKED).await;
    exec(&a, "rollback").await;
    let n = within("RR update after rollback", upd).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));
    exec(&b, "commit").await;
    assert_eq!(value(&a, "select v from rr where id = 1").await, "xAB");
    exec(&a, "drop table rr").await;
}

#[test]
fn repeatable_read_update_fails_after_concurrent_commit_succeeds_after_rollback() {
    on_both(&[], repeatable_read);
}

async fn deadlock(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(
        &a,
        "create table dl (id int primary key, v int not null); insert into dl values (1, 0), (2, 0)",
    )
    .await;
    exec(&a, "begin").await;
    exec(&a, "update dl set v = v + 1 where id = 1").await;
    exec(&b, "begin").await;
    exec(&b, "update dl set v = v + 10 where id = 2").await;
    let ua = Box::pin(try_affected(&a, "update dl set v = v + 1 where id = 2"));
    let mut ua = assert_blocked("A waits for B", ua, Duration::from_millis(200)).await;
    let t = Instant::now();
    let mut ub = Box::pin(try_affected(&b, "update dl set v = v + 10 where id = 1"));
    // The first to finish must be the deadlock victim, within ~deadlock_timeout.
    let first = tokio::time::timeout(Duration::from_secs(5), async {
        tokio::select! {
            r = &mut ua => (true, r),
            r = &mut ub => (false, r),
        }
    })
    .await;
    let (a_first, r) = match first {
        Ok(x) => x,
        Err(_) => panic!("deadlock not detected within 5 s"),
    };
    let took = t.elapsed();
    assert!(
        took < Duration::from_secs(3),
        "deadlock took {took:?} to detect"
    );
    // The victim's update fails with 40P01. Its locks are released as soon as it has the
    // error (PostgreSQL aborts right after reporting), so the survivor's update may complete
    // at almost the same moment and be seen first: accept either order.
    let (a_lost, survivor_done) = match r {
        Err(e) => {
            assert_eq!(sqlstate(&e), "40P01", "{e:?}");
            (a_first, false)
        }
        Ok(n) => {
            assert_eq!(n, 1, "the survivor's update");
            let other = if a_first {
                within("the deadlock victim", &mut ub).await
            } else {
                within("the deadlock victim", &mut ua).await
            };
            match other {
                Err(e) => assert_eq!(sqlstate(&e), "40P01", "{e:?}"),
                Ok(n) => panic!("both deadlocked updates finished normally ({n} rows)"),
            }
            (!a_first, true)
        }
    };
    let (loser, winner, winner_adds) = if a_lost { (&a, &b, 10) } else { (&b, &a, 1) };
    exec(loser, "rollback").await;
    if !survivor_done {
        let n = if a_lost {
            within("the deadlock survivor", &mut ub).await
        } else {
            within("the deadlock survivor", &mut ua).await
        };
        assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));
    }
    exec(winner, "commit").await;
    assert_eq!(
        rows(&a, "select id, v from dl order by id").await,
        vec![
            vec!["1".to_string(), winner_adds.to_string()],
            vec!["2".to_string(), winner_adds.to_string()]
        ]
    );
    exec(&a, "drop table dl").await;
}

#[test]
fn deadlock_is_detected_and_one_session_proceeds() {
    on_both(&[("deadlock_timeout", "1s")], deadlock);
}

/// PostgreSQL aborts a transaction at its first error and releases its row locks then; the
/// block only waits for ROLLBACK. So the survivor of a deadlock (or any session queued behind a
/// failed transaction) proceeds without waiting for the failed session's ROLLBACK.
async fn error_releases_locks(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(
        &a,
        "create table el (id int primary key, v int not null); insert into el values (1, 0)",
    )
    .await;
    exec(&a, "begin").await;
    assert_eq!(affected(&a, "update el set v = 100 where id = 1").await, 1);
    match try_affected(&a, "select 1/0").await {
        Err(e) => assert_eq!(sqlstate(&e), "22012", "{e:?}"),
        Ok(_) => panic!("1/0 succeeded"),
    }
    // A is in an aborted block and has not rolled back yet.
    let n = match tokio::time::timeout(
        Duration::from_secs(2),
        try_affected(&b, "update el set v = v + 1 where id = 1"),
    )
    .await
    {
        Ok(r) => r,
        Err(_) => panic!("row lock of a failed transaction held until its ROLLBACK"),
    };
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));
    exec(&a, "rollback").await;
    assert_eq!(value(&a, "select v from el where id = 1").await, "1");
    exec(&a, "drop table el").await;
}

#[test]
fn failed_transaction_block_releases_row_locks_at_the_error() {
    on_both(&[], error_releases_locks);
}

async fn cancel_lock_wait(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(
        &a,
        "create table cl (id int primary key, v int not null); insert into cl values (1, 0)",
    )
    .await;
    exec(&a, "begin; update cl set v = 1 where id = 1").await;
    exec(&b, "begin").await;
    let upd = Box::pin(try_affected(&b, "update cl set v = 2 where id = 1"));
    let upd = assert_blocked("update of a locked row", upd, BLOCKED).await;
    let token = b.cancel_token();
    if let Err(e) = within("cancel request", token.cancel_query(NoTls)).await {
        panic!("cancel_query: {e:?}");
    }
    match within("cancelled update", upd).await {
        Err(e) => assert_eq!(sqlstate(&e), "57014", "{e:?}"),
        Ok(n) => panic!("cancelled update finished normally ({n} rows)"),
    }
    // B's transaction is aborted: statements fail with 25P02 until it rolls back.
    match try_affected(&b, "select 1").await {
        Err(e) => assert_eq!(sqlstate(&e), "25P02", "{e:?}"),
        Ok(_) => panic!("a statement ran in an aborted transaction"),
    }
    exec(&b, "rollback").await;
    assert_eq!(value(&b, "select 1").await, "1");
    exec(&a, "commit").await;
    assert_eq!(value(&b, "select v from cl where id = 1").await, "1");
    // And B's lock wait left nothing behind: B can now take the row.
    assert_eq!(affected(&b, "update cl set v = 3 where id = 1").await, 1);
    exec(&a, "drop table cl").await;
}

#[test]
fn cancel_of_a_lock_wait_gives_57014_and_the_transaction_rolls_back() {
    on_both(&[], cancel_lock_wait);
}

async fn cancel_sleep(conn: String) {
    let sleeper = connect(&conn).await;
    // More sessions than shards: some share the sleeper's worker and must still be served.
    let mut others = Vec::new();
    for _ in 0..4 {
        others.push(connect(&conn).await);
    }
    let sleep = Box::pin(try_affected(&sleeper, "select pg_sleep(600)"));
    let sleep = assert_blocked("pg_sleep", sleep, BLOCKED).await;
    for (i, c) in others.iter().enumerate() {
        for _ in 0..20 {
            assert_eq!(
                value(c, &format!("select {i} + 1")).await,
                (i + 1).to_string()
            );
        }
    }
    let started = Instant::now();
    if let Err(e) = within("cancel request", sleeper.cancel_token().cancel_query(NoTls)).await {
        panic!("cancel_query: {e:?}");
    }
    match within("cancelled pg_sleep", sleep).await {
        Err(e) => assert_eq!(sqlstate(&e), "57014", "{e:?}"),
        Ok(n) => panic!("cancelled pg_sleep finished normally ({n} rows)"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(value(&sleeper, "select 1").await, "1");
}

#[test]
fn cancel_of_pg_sleep_gives_57014_and_other_sessions_run_meanwhile() {
    on_both(&[], cancel_sleep);
}

async fn disconnect_releases(conn: String) {
    let a = connect(&conn).await;
    exec(
        &a,
        "create table dc (id int primary key, v text not null); \
         insert into dc values (1, 'orig'), (2, 'orig')",
    )
    .await;
    // Polite disconnect (Terminate message) and hard one (socket closed, no Terminate).
    for (id, hard) in [(1, false), (2, true)] {
        let (c, conn_task) = {
            let fut = tokio_postgres::connect(&conn, NoTls);
            let (c, connection) = match within("connect", fut).await {
                Ok(x) => x,
                Err(e) => panic!("connect: {e:?}"),
            };
            (c, tokio::spawn(connection))
        };
        exec(&c, "begin").await;
        let sql = format!("update dc set v = 'dirty' where id = {id}");
        assert_eq!(affected(&c, &sql).await, 1);
        exec(&c, "insert into dc values (100, 'uncommitted')").await;
        if hard {
            conn_task.abort();
            drop(c);
        } else {
            drop(c);
            let _ = conn_task.await;
        }
        let t = Instant::now();
        let sql = format!("update dc set v = v || '+' where id = {id}");
        let n = match tokio::time::timeout(Duration::from_secs(5), try_affected(&a, &sql)).await {
            Ok(Ok(n)) => n,
            Ok(Err(e)) => panic!("{sql}: {e:?}"),
            Err(_) => panic!("row lock of a disconnected session (hard={hard}) not released"),
        };
        assert_eq!(n, 1);
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "row lock released only after {:?}",
            t.elapsed()
        );
    }
    assert_eq!(
        rows(&a, "select id, v from dc order by id").await,
        vec![
            vec!["1".to_string(), "orig+".to_string()],
            vec!["2".to_string(), "orig+".to_string()]
        ],
        "a disconnected session's changes must be invisible"
    );
    exec(&a, "drop table dc").await;
}

#[test]
fn disconnect_mid_transaction_discards_changes_and_releases_row_lock() {
    on_both(&[], disconnect_releases);
}

/// Keel only (300 PostgreSQL backends would dominate the run): 255 sessions queue on one row
/// lock behind a holder, and yet another session still answers at once.
#[test]
fn many_waiters_on_one_row_do_not_stall_other_sessions() {
    const WAITERS: usize = 255;
    let srv = Server::start(&[("max_connections", "300")]);
    let conn = srv.conn_str();
    let rt = runtime();
    rt.block_on(async {
        let holder = connect(&conn).await;
        exec(
            &holder,
            "create table hot (id int primary key, n int not null); insert into hot values (1, 0)",
        )
        .await;
        exec(&holder, "begin; update hot set n = n + 1 where id = 1").await;
        let sent = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for _ in 0..WAITERS {
            let c = connect(&conn).await;
            exec(&c, "begin").await;
            let (sent, done) = (sent.clone(), done.clone());
            tasks.push(tokio::spawn(async move {
                sent.fetch_add(1, Ordering::SeqCst);
                let r = c
                    .simple_query("update hot set n = n + 1 where id = 1")
                    .await;
                done.fetch_add(1, Ordering::SeqCst);
                r.map_err(|e| format!("{e:?}"))?;
                c.batch_execute("commit")
                    .await
                    .map_err(|e| format!("{e:?}"))
            }));
        }
        let t = Instant::now();
        while sent.load(Ordering::SeqCst) < WAITERS && t.elapsed() < Duration::from_secs(10) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(
            done.load(Ordering::SeqCst),
            0,
            "an update finished while the holder still had the row locked"
        );

        // The 256th session: queries answer promptly while 255 sessions wait.
        let probe = connect(&conn).await;
        for i in 0..20 {
            let t = Instant::now();
            assert_eq!(value(&probe, "select 1").await, "1");
            let took = t.elapsed();
            assert!(
                took < Duration::from_millis(200),
                "select 1 #{i} took {took:?} with {WAITERS} lock waiters"
            );
        }
        assert_eq!(
            value(&probe, "select n from hot where id = 1").await,
            "0",
            "readers do not wait for row locks"
        );

        exec(&holder, "commit").await;
        for (i, task) in tasks.into_iter().enumerate() {
            match tokio::time::timeout(Duration::from_secs(30), task).await {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(e))) => panic!("waiter {i}: {e}"),
                Ok(Err(e)) => panic!("waiter {i} panicked: {e}"),
                Err(_) => panic!("waiter {i} still blocked 30 s after the holder committed"),
            }
        }
        assert_eq!(
            value(&probe, "select n from hot where id = 1").await,
            (WAITERS + 1).to_string()
        );
    });
}
