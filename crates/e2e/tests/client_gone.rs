//! A statement whose client has gone stops (client_connection_check_interval, on by default
//! in keel at 1 s): the session ends, its transaction rolls back and its row locks are
//! released, as PostgreSQL does with the setting on ("FATAL:  connection to client lost").
//! Observed through a row lock the vanished session held: another session's UPDATE of that
//! row must go through within seconds, and see the row as it was before the vanished
//! session's uncommitted UPDATE.

use keel_e2e::Server;
use keel_e2e::raw::{self, RawConn};
use std::time::{Duration, Instant};

fn login(srv: &Server) -> RawConn {
    RawConn::login(srv.port()).unwrap_or_else(|e| panic!("login: {e}"))
}

fn simple(c: &mut RawConn, sql: &str) -> Vec<raw::Msg> {
    c.simple(sql).unwrap_or_else(|e| panic!("{e}"))
}

/// The first column of the first DataRow, as text.
fn first_value(msgs: &[raw::Msg]) -> String {
    let (_, body) = msgs
        .iter()
        .find(|(t, _)| *t == b'D')
        .unwrap_or_else(|| panic!("no row in {msgs:?}"));
    let len = i32::from_be_bytes([body[2], body[3], body[4], body[5]]) as usize;
    String::from_utf8_lossy(&body[6..6 + len]).into_owned()
}

/// Session B locks row 1 (uncommitted v = 100), starts `running` and vanishes. Returns how
/// long session A's UPDATE of row 1 then waited, and row 1's value after it.
fn vanish_while(srv: &Server, table: &str, running: &str) -> (Duration, String) {
    let mut a = login(srv);
    simple(
        &mut a,
        &format!(
            "create table {table} (id int primary key, v int); insert into {table} values (1, 1), (2, 2)"
        ),
    );
    let mut b = login(srv);
    simple(
        &mut b,
        &format!("begin; update {table} set v = 100 where id = 1"),
    );
    b.send(&raw::query_message(running))
        .unwrap_or_else(|e| panic!("{e}"));
    std::thread::sleep(Duration::from_millis(500));
    b.vanish();
    let t = Instant::now();
    if let Err(e) = a.simple(&format!("update {table} set v = v + 10 where id = 1")) {
        panic!(
            "{running}: the vanished session's row is still locked after {:?} ({e})",
            t.elapsed()
        );
    }
    let waited = t.elapsed();
    let v = first_value(&simple(
        &mut a,
        &format!("select v from {table} where id = 1"),
    ));
    (waited, v)
}

#[test]
fn a_vanished_clients_statement_stops_and_its_locks_are_released() {
    let srv = Server::start(&[]);
    // A long scan and aggregate (~40 s to the end), and a sleep.
    for (i, running) in [
        "select count(*) from generate_series(1, 1000000000)",
        "select count(*) from generate_series(1, 1000000000) g where g % 7 = 3",
        "select pg_sleep(60)",
    ]
    .iter()
    .enumerate()
    {
        let (waited, v) = vanish_while(&srv, &format!("gone{i}"), running);
        assert!(
            waited < Duration::from_secs(5),
            "{running}: the vanished session's row lock was held {waited:?}"
        );
        assert_eq!(
            v, "11",
            "{running}: the vanished session's update must roll back"
        );
    }
    let log = srv.log();
    assert!(
        log.contains("FATAL:  connection to client lost"),
        "log:\n{log}"
    );
}

#[test]
fn a_vanished_client_waiting_on_a_row_lock_ends_too() {
    let srv = Server::start(&[]);
    let mut c = login(&srv);
    simple(
        &mut c,
        "create table gl (id int primary key, v int); insert into gl values (3, 3)",
    );
    // C holds row 3 for the whole test; B locks row 1, then waits for row 3, then vanishes.
    simple(&mut c, "begin; update gl set v = 30 where id = 3");
    let (waited, v) = vanish_while(&srv, "gw", "update gl set v = 31 where id = 3");
    assert!(
        waited < Duration::from_secs(5),
        "the vanished session's row lock was held {waited:?} while it waited for another"
    );
    assert_eq!(v, "11");
    simple(&mut c, "commit");
    assert_eq!(first_value(&simple(&mut c, "select v from gl")), "30");
}

/// PostgreSQL 15 with the setting on logs the same FATAL line (its default is off).
#[test]
fn postgres_logs_connection_to_client_lost() {
    let pg = Server::oracle(&[("client_connection_check_interval", "1000")]);
    let (waited, v) = vanish_while(&pg, "gone", "select pg_sleep(60)");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    assert_eq!(v, "11");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pg.log().contains("FATAL:  connection to client lost") {
        assert!(Instant::now() < deadline, "log:\n{}", pg.log());
        std::thread::sleep(Duration::from_millis(100));
    }
}
