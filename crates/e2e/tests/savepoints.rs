//! Subtransactions between concurrent sessions, each scenario run against keel and against
//! PostgreSQL 15 with the same assertions: a rollback to a savepoint frees the rows it locked
//! and the unique keys it claimed at once, a released savepoint's locks last until the
//! transaction ends, other sessions see a subtransaction's work exactly when its transaction
//! commits, a deadlock through a subtransaction's row is found, and a client that vanishes
//! inside savepoints frees everything. Then a crash test: pgbench runs a script with nested
//! savepoints, ROLLBACK TO and RELEASE while the server is SIGKILLed, ten times; after each
//! restart the released work of every acknowledged commit is there and no rolled-back row is.

use keel_e2e::client::{
    assert_blocked, connect, deadlock_victim, exec, on_both, try_affected, value, within,
};
use keel_e2e::{Server, env_u64, logged_done};
use std::thread;
use std::time::Duration;

/// How long a statement must stay pending to count as blocked.
const BLOCKED: Duration = Duration::from_millis(500);

async fn rollback_to_frees_rows(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(&a, "create table sr (id int primary key, v int)").await;
    exec(&a, "insert into sr values (1, 0), (2, 0)").await;

    // A row updated inside a savepoint is free again once it is rolled back, while the
    // transaction goes on; the waiter then updates the committed version.
    exec(
        &a,
        "begin; update sr set v = v + 1 where id = 2; savepoint s",
    )
    .await;
    exec(&a, "update sr set v = v + 100 where id = 1").await;
    let upd = Box::pin(try_affected(&b, "update sr set v = v + 10 where id = 1"));
    let upd = assert_blocked("UPDATE of a row a savepoint holds", upd, BLOCKED).await;
    exec(&a, "rollback to s").await;
    let n = within("UPDATE after ROLLBACK TO", upd).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));
    // The row updated before the savepoint is still held.
    let upd2 = Box::pin(try_affected(&b, "update sr set v = v + 10 where id = 2"));
    let upd2 = assert_blocked("UPDATE of a row held before the savepoint", upd2, BLOCKED).await;
    exec(&a, "commit").await;
    let n = within("UPDATE after COMMIT", upd2).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));
    assert_eq!(
        value(
            &a,
            "select string_agg(id || ':' || v, ',' order by id) from sr"
        )
        .await,
        "1:10,2:11"
    );

    // A released savepoint's row lock lasts until the transaction ends; the waiter then
    // re-reads the row and adds to what was committed.
    exec(
        &a,
        "begin; savepoint s; update sr set v = v + 100 where id = 1; release s",
    )
    .await;
    let upd = Box::pin(try_affected(&b, "update sr set v = v + 1 where id = 1"));
    let upd = assert_blocked("UPDATE of a row a released savepoint wrote", upd, BLOCKED).await;
    exec(&a, "commit").await;
    let n = within("UPDATE after COMMIT", upd).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));
    assert_eq!(value(&a, "select v from sr where id = 1").await, "111");

    // A unique key inserted in a savepoint blocks another inserter until rolled back.
    exec(&a, "begin; savepoint s; insert into sr values (5, 5)").await;
    let ins = Box::pin(try_affected(&b, "insert into sr values (5, 50)"));
    let ins = assert_blocked("INSERT of a key a savepoint holds", ins, BLOCKED).await;
    exec(&a, "rollback to s").await;
    let n = within("INSERT after ROLLBACK TO", ins).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));
    exec(&a, "rollback").await;
    assert_eq!(value(&a, "select v from sr where id = 5").await, "50");
    exec(&a, "drop table sr").await;
}

#[test]
fn rollback_to_savepoint_frees_its_rows_and_keys() {
    on_both(&[], rollback_to_frees_rows);
}

async fn visibility(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(&a, "create table sv (id int, note text)").await;
    exec(&a, "begin; insert into sv values (1, 'top'); savepoint s1").await;
    exec(&a, "insert into sv values (2, 'released'); savepoint s2").await;
    exec(
        &a,
        "insert into sv values (3, 'rolled back'); rollback to s2",
    )
    .await;
    exec(
        &a,
        "update sv set note = note || '+' where id = 2; release s1",
    )
    .await;
    assert_eq!(value(&a, "select count(*) from sv").await, "2");
    assert_eq!(value(&b, "select count(*) from sv").await, "0");
    exec(&a, "commit").await;
    assert_eq!(
        value(&b, "select string_agg(id || note, ',' order by id) from sv").await,
        "1top,2released+"
    );
    // A repeatable read snapshot keeps not seeing them after a later commit of more.
    exec(
        &b,
        "begin isolation level repeatable read; select count(*) from sv",
    )
    .await;
    exec(
        &a,
        "begin; savepoint x; insert into sv values (4, 'later'); commit",
    )
    .await;
    assert_eq!(value(&b, "select count(*) from sv").await, "2");
    exec(&b, "commit").await;
    assert_eq!(value(&b, "select count(*) from sv").await, "3");
    exec(&a, "drop table sv").await;
}

#[test]
fn a_subtransactions_work_is_seen_when_its_transaction_commits() {
    on_both(&[], visibility);
}

async fn deadlock_through_savepoint(conn: String) {
    let (a, b) = (connect(&conn).await, connect(&conn).await);
    exec(&a, "create table sd (id int primary key, v int)").await;
    exec(&a, "insert into sd values (1, 0), (2, 0)").await;
    exec(&a, "begin; savepoint s; update sd set v = 1 where id = 1").await;
    exec(&b, "begin; update sd set v = 2 where id = 2").await;
    let la = Box::pin(try_affected(&a, "update sd set v = 1 where id = 2"));
    let mut la = assert_blocked("A waits for B's row", la, Duration::from_millis(200)).await;
    let mut lb = Box::pin(try_affected(&b, "update sd set v = 2 where id = 1"));
    let (victim_is_a, survivor_done) = deadlock_victim(&mut la, &mut lb).await;
    if victim_is_a {
        // The error ended the victim's savepoint level, freeing its row: B goes on.
        exec(&a, "rollback to s").await;
        if !survivor_done {
            within("B after A's savepoint level ended", &mut lb)
                .await
                .unwrap_or_else(|e| panic!("B: {e:?}"));
        }
        exec(&b, "commit").await;
        exec(&a, "commit").await;
        assert_eq!(
            value(&a, "select string_agg(v::text, ',' order by id) from sd").await,
            "2,2"
        );
    } else {
        exec(&b, "rollback").await;
        if !survivor_done {
            within("A after B rolled back", &mut la)
                .await
                .unwrap_or_else(|e| panic!("A: {e:?}"));
        }
        exec(&a, "commit").await;
        assert_eq!(
            value(&a, "select string_agg(v::text, ',' order by id) from sd").await,
            "1,1"
        );
    }
    exec(&a, "drop table sd").await;
}

#[test]
fn a_deadlock_through_a_savepoints_row_is_detected() {
    on_both(&[("deadlock_timeout", "200ms")], deadlock_through_savepoint);
}

async fn vanished_in_savepoints(conn: String) {
    let a = connect(&conn).await;
    exec(
        &a,
        "create table sg (id int primary key, v int); insert into sg values (1, 0)",
    )
    .await;
    let b = connect(&conn).await;
    exec(
        &b,
        "begin; savepoint s1; update sg set v = 1 where id = 1; savepoint s2",
    )
    .await;
    exec(&b, "insert into sg values (2, 2)").await;
    let upd = Box::pin(try_affected(&a, "update sg set v = v + 10 where id = 1"));
    let upd = assert_blocked("UPDATE of a row a savepoint holds", upd, BLOCKED).await;
    drop(b);
    let n = within("UPDATE after the holder vanished", upd).await;
    assert_eq!(n.map_err(|e| format!("{e:?}")), Ok(1));
    assert_eq!(
        value(
            &a,
            "select string_agg(id || ':' || v, ',' order by id) from sg"
        )
        .await,
        "1:10"
    );
    exec(&a, "insert into sg values (2, 20)").await;
    exec(&a, "drop table sg").await;
}

#[test]
fn a_client_vanishing_inside_savepoints_frees_everything() {
    on_both(&[], vanished_in_savepoints);
}

/// One transaction: a row kept at top level, nested savepoints rolled back (two inserts and
/// a counter bump that must vanish), then a released one (an insert and a counter bump that
/// must stay).
const SCRIPT: &str = "\
BEGIN;
INSERT INTO sp_kept VALUES (:client_id);
SAVEPOINT a;
INSERT INTO sp_rolled VALUES (:client_id);
UPDATE sp_counter SET n = n + 1000 WHERE id = :client_id;
SAVEPOINT a2;
INSERT INTO sp_rolled VALUES (:client_id);
RELEASE a2;
ROLLBACK TO a;
SAVEPOINT b;
UPDATE sp_counter SET n = n + 1 WHERE id = :client_id;
SAVEPOINT c;
INSERT INTO sp_released VALUES (:client_id);
RELEASE c;
RELEASE b;
COMMIT;
";

const CLIENTS: u64 = 8;

fn counts(srv: &Server) -> [u64; 4] {
    let out = srv.query(
        "select (select count(*) from sp_kept) || ' ' || (select count(*) from sp_released) \
         || ' ' || (select count(*) from sp_rolled) || ' ' || (select sum(n) from sp_counter)",
    );
    let v: Vec<u64> = out
        .split_whitespace()
        .map(|x| x.parse().unwrap_or_else(|_| panic!("counts: {out:?}")))
        .collect();
    [v[0], v[1], v[2], v[3]]
}

#[test]
fn crash_with_savepoints_keeps_released_work_and_drops_rolled_back_work() {
    let rounds = env_u64("KEEL_E2E_CRASH_ROUNDS", 10);
    let crash_after = Duration::from_millis(env_u64("KEEL_E2E_CRASH_AFTER_MS", 1500));
    let mut srv = Server::start(&[("synchronous_commit", "on")]);
    srv.query(
        "create table sp_kept (client int); create table sp_released (client int); \
         create table sp_rolled (client int); \
         create table sp_counter (id int primary key, n bigint); \
         insert into sp_counter select g, 0 from generate_series(0, 63) g",
    );
    let script = srv.scratch().join("savepoints.sql");
    std::fs::write(&script, SCRIPT).unwrap_or_else(|e| panic!("{e}"));
    let modes = ["prepared", "simple", "extended"];
    let mut total = 0;
    for round in 0..rounds {
        let before = counts(&srv);
        let logdir = srv.scratch().join(format!("sp-log-{round}"));
        std::fs::create_dir_all(&logdir).unwrap_or_else(|e| panic!("{e}"));
        let prefix = format!("--log-prefix={}", logdir.join("tx").display());
        let secs = (crash_after.as_secs_f64() * 2.0).ceil().max(1.0) as u64;
        let (c, t) = (CLIENTS.to_string(), secs.to_string());
        let mode = modes[round as usize % modes.len()];
        let mut cmd = srv.pgbench_cmd();
        cmd.args([
            "-n", "-l", &prefix, "-M", mode, "-c", &c, "-j", "2", "-T", &t,
        ])
        .arg("-f")
        .arg(&script)
        .arg("postgres");
        let load =
            thread::spawn(move || keel_e2e::cmd::run(cmd, None, Duration::from_secs(secs + 120)));
        thread::sleep(crash_after);
        srv.crash();
        let out = load
            .join()
            .unwrap_or_else(|_| panic!("pgbench thread panicked"));
        assert!(!out.timed_out, "pgbench hung after the crash: {out}");
        srv.restart();
        let done = logged_done(&logdir);
        let after = counts(&srv);
        let kept = after[0] - before[0];
        eprintln!("round {round} ({mode}): {done} tx logged, {kept} kept rows");
        assert!(done > 0, "round {round}: no transaction completed: {out}");
        assert!(
            kept >= done && kept <= done + CLIENTS,
            "round {round}: {done} commits acknowledged, {kept} rows kept"
        );
        assert_eq!(
            after[0], after[1],
            "released work differs from committed transactions"
        );
        assert_eq!(after[2], 0, "rolled-back rows survived the crash");
        assert_eq!(
            after[3], after[0],
            "counter bumps differ from committed transactions"
        );
        total += done;
    }
    let last = counts(&srv);
    srv.stop();
    srv.restart();
    assert_eq!(counts(&srv), last, "clean restart changed the data");
    assert!(last[0] >= total);
}
