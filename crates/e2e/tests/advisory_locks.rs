//! Advisory locks between sessions, each scenario run against keel and against PostgreSQL 15
//! with the same assertions: a held key blocks another session until unlocked, shared and
//! exclusive modes, transaction-level locks end with the transaction and session-level ones
//! outlive it, a vanished client's locks are released, a wait ends at statement_timeout, and
//! a deadlock through an advisory lock and a row lock is found.

use keel_e2e::client::{
    assert_blocked, connect, exec, on_both, settle_deadlock, sqlstate, try_affected, value, within,
};
use std::time::Duration;

/// How long a statement must stay pending to count as blocked.
const BLOCKED: Duration = Duration::from_millis(500);

async fn blocking_and_modes(conn: String) {
    let (a, b, c) = (
        connect(&conn).await,
        connect(&conn).await,
        connect(&conn).await,
    );
    exec(&a, "select pg_advisory_lock(42)").await;
    assert_eq!(value(&b, "select pg_try_advisory_lock(42)").await, "f");
    // A two-int key is another key.
    assert_eq!(value(&b, "select pg_try_advisory_lock(0, 42)").await, "t");
    let wait = Box::pin(try_affected(&b, "select pg_advisory_lock(42)"));
    let wait = assert_blocked("pg_advisory_lock of a held key", wait, BLOCKED).await;
    assert_eq!(value(&a, "select pg_advisory_unlock(42)").await, "t");
    within("pg_advisory_lock after the unlock", wait)
        .await
        .unwrap_or_else(|e| panic!("lock: {e:?}"));
    exec(&b, "select pg_advisory_unlock_all()").await;

    // Shared holders together; exclusive excluded.
    exec(&a, "select pg_advisory_lock_shared(7)").await;
    assert_eq!(
        value(&b, "select pg_try_advisory_lock_shared(7)").await,
        "t"
    );
    assert_eq!(value(&c, "select pg_try_advisory_lock(7)").await, "f");
    exec(&a, "select pg_advisory_unlock_shared(7)").await;
    assert_eq!(value(&c, "select pg_try_advisory_lock(7)").await, "f");
    exec(&b, "select pg_advisory_unlock_shared(7)").await;
    assert_eq!(value(&c, "select pg_try_advisory_lock(7)").await, "t");
    exec(&c, "select pg_advisory_unlock_all()").await;

    // Transaction level ends with the transaction; session level outlives it.
    exec(
        &a,
        "begin; select pg_advisory_xact_lock(8); select pg_advisory_lock(9)",
    )
    .await;
    assert_eq!(value(&b, "select pg_try_advisory_lock(8)").await, "f");
    exec(&a, "commit").await;
    assert_eq!(value(&b, "select pg_try_advisory_lock(8)").await, "t");
    assert_eq!(value(&b, "select pg_try_advisory_lock(9)").await, "f");
    exec(&a, "begin; select pg_advisory_xact_lock(10); rollback").await;
    assert_eq!(value(&b, "select pg_try_advisory_lock(10)").await, "t");
    exec(&a, "select pg_advisory_unlock_all()").await;
    exec(&b, "select pg_advisory_unlock_all()").await;
    assert_eq!(
        value(
            &c,
            "select count(*) from pg_locks where locktype = 'advisory'"
        )
        .await,
        "0"
    );
}

#[test]
fn advisory_locks_block_share_and_end_with_their_level() {
    on_both(&[], blocking_and_modes);
}

async fn vanished_and_timeout(conn: String) {
    let a = connect(&conn).await;
    let b = connect(&conn).await;
    exec(
        &b,
        "select pg_advisory_lock(11); begin; select pg_advisory_xact_lock(12)",
    )
    .await;
    let wait = Box::pin(try_affected(&a, "select pg_advisory_lock(11)"));
    let wait = assert_blocked("pg_advisory_lock of a held key", wait, BLOCKED).await;
    drop(b);
    within("pg_advisory_lock after the holder vanished", wait)
        .await
        .unwrap_or_else(|e| panic!("lock: {e:?}"));
    assert_eq!(value(&a, "select pg_try_advisory_xact_lock(12)").await, "t");

    let c = connect(&conn).await;
    exec(&c, "set statement_timeout = '300ms'").await;
    match try_affected(&c, "select pg_advisory_lock(11)").await {
        Err(e) => assert_eq!(sqlstate(&e), "57014", "{e:?}"),
        Ok(_) => panic!("a held advisory lock was granted"),
    }
    exec(&a, "select pg_advisory_unlock_all()").await;
}

#[test]
fn a_vanished_holder_frees_its_keys_and_waits_end_at_statement_timeout() {
    on_both(&[], vanished_and_timeout);
}

async fn mixed_deadlock(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(
        &a,
        "create table ad (id int primary key, v int); insert into ad values (1, 0)",
    )
    .await;
    exec(&a, "begin; update ad set v = 1 where id = 1").await;
    exec(&b, "begin; select pg_advisory_xact_lock(5)").await;
    let la = Box::pin(try_affected(&a, "select pg_advisory_xact_lock(5)"));
    let la = assert_blocked("A waits for B's key", la, Duration::from_millis(200)).await;
    let lb = Box::pin(try_affected(&b, "update ad set v = 2 where id = 1"));
    settle_deadlock(&a, &b, la, lb).await;
    exec(&a, "drop table ad").await;
}

#[test]
fn a_deadlock_through_an_advisory_lock_and_a_row_is_detected() {
    on_both(&[("deadlock_timeout", "200ms")], mixed_deadlock);
}
