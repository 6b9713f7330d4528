//! SERIALIZABLE specs from PostgreSQL's isolation suite (src/test/isolation/specs), each run
//! in every interleaving of its sessions' steps against keel and against PostgreSQL 15; the
//! traces (rows, blocks, SQLSTATEs, final tables) must be identical.
//!
//! - read-write-unique: a serialization failure masked by a unique violation is reported
//!   as 40001, not 23505.
//! - receipt-report: the read-only anomaly of Fekete, O'Neil and O'Neil: a read-only
//!   transaction that sees one writer's effect but not the other's.
//! - classroom-scheduling: a phantom through a range read on a two-column primary key.
//! - index range: write skew through B-tree range reads and inserts (key-range locks).
//! - TRUNCATE: write skew where one side's write is a TRUNCATE (it writes every row its
//!   table had), and a read of a table that is truncated afterwards still conflicts with
//!   writes to the table's new file.

use keel_e2e::Server;
use keel_e2e::client::runtime;
use keel_e2e::trace::{Step, interleavings, trace};

const BEGIN: &str = "begin isolation level serializable";

fn compare(name: &str, setup: &str, sessions: &[&[&str]], check: &str) {
    compare_orders(name, setup, &interleavings(sessions), check);
}

/// `compare` over the given orders only.
fn compare_orders(name: &str, setup: &str, orders: &[Vec<Step<'_>>], check: &str) {
    let rt = runtime();
    let keel = Server::start(&[]);
    let pg = Server::oracle(&[]);
    let mut failures = Vec::new();
    let mut serialization_failures = 0;
    for steps in orders {
        let ours = rt.block_on(trace(&keel.conn_str(), setup, BEGIN, steps, check));
        let theirs = rt.block_on(trace(&pg.conn_str(), setup, BEGIN, steps, check));
        if theirs.iter().any(|l| l.contains("ERROR 40001")) {
            serialization_failures += 1;
        }
        if ours != theirs {
            failures.push(format!(
                "keel:\n    {}\n  postgres:\n    {}",
                ours.join("\n    "),
                theirs.join("\n    ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{name}: {} of {} orders differ:\n{}",
        failures.len(),
        orders.len(),
        failures.join("\n")
    );
    // Not a comparison of two empty outcomes: PostgreSQL cancels some orders.
    assert!(serialization_failures > 0, "{name}: no order failed");
}

#[test]
fn read_write_unique_reports_the_serialization_failure_before_the_duplicate() {
    compare(
        "read-write-unique",
        "drop table if exists test; create table test (i integer primary key)",
        &[
            &[
                "select * from test",
                "insert into test values (42)",
                "commit",
            ],
            &[
                "select * from test",
                "insert into test values (42)",
                "commit",
            ],
        ],
        "select * from test",
    );
}

#[test]
fn receipt_report_read_only_anomaly() {
    compare(
        "receipt-report",
        "drop table if exists ctl, receipt; \
         create table ctl (k text not null primary key, deposit_date date not null); \
         insert into ctl values ('receipt', date '2008-12-22'); \
         create table receipt (receipt_no int not null primary key, deposit_date date not null, \
                               amount numeric(13,2)); \
         insert into receipt values (1, (select deposit_date from ctl where k = 'receipt'), 1.00); \
         insert into receipt values (2, (select deposit_date from ctl where k = 'receipt'), 2.00)",
        &[
            &[
                "insert into receipt values (3, (select deposit_date from ctl where k = 'receipt'), 4.00)",
                "commit",
            ],
            &[
                "update ctl set deposit_date = date '2008-12-23' where k = 'receipt'",
                "commit",
            ],
            &[
                "select * from ctl where k = 'receipt'",
                "select * from receipt where deposit_date = date '2008-12-22' order by receipt_no",
                "commit",
            ],
        ],
        "select receipt_no, deposit_date, amount from receipt order by receipt_no",
    );
}

#[test]
fn classroom_scheduling_phantom_through_a_range_read() {
    let at = |t: &str| format!("timestamp with time zone '2010-04-01 {t}'");
    let setup = format!(
        "drop table if exists room_reservation; \
         create table room_reservation (room_id text not null, start_time timestamp with time zone not null, \
           end_time timestamp with time zone not null, description text not null, \
           constraint room_reservation_pkey primary key (room_id, start_time)); \
         insert into room_reservation values ('101', {}, {}, 'Bob')",
        at("10:00"),
        at("11:00")
    );
    let rx1 = format!(
        "select count(*) from room_reservation where room_id = '101' and start_time < {} and end_time > {}",
        at("14:00"),
        at("13:00")
    );
    let wy1 = format!(
        "insert into room_reservation values ('101', {}, {}, 'Carol')",
        at("13:00"),
        at("14:00")
    );
    let ry2 = format!(
        "select count(*) from room_reservation where room_id = '101' and start_time < {} and end_time > {}",
        at("14:30"),
        at("13:30")
    );
    let wx2 = format!(
        "update room_reservation set start_time = {}, end_time = {} where room_id = '101' and start_time = {}",
        at("13:30"),
        at("14:30"),
        at("10:00")
    );
    compare(
        "classroom-scheduling",
        &setup,
        &[&[&rx1, &wy1, "commit"], &[&ry2, &wx2, "commit"]],
        "select room_id, description from room_reservation order by start_time",
    );
}

#[test]
fn write_skew_through_index_range_reads() {
    // Two doctors on call: each checks that someone else is on call in the shift (a range
    // read on the primary key) and goes off; one must fail.
    compare(
        "index range",
        "drop table if exists oncall; \
         create table oncall (shift int, doctor int, on_call bool not null, primary key (shift, doctor)); \
         insert into oncall select s, d, true from generate_series(1, 50) s, generate_series(1, 2) d",
        &[
            &[
                "select count(*) from oncall where shift = 7 and on_call",
                "update oncall set on_call = false where shift = 7 and doctor = 1",
                "commit",
            ],
            &[
                "select count(*) from oncall where shift = 7 and on_call",
                "update oncall set on_call = false where shift = 7 and doctor = 2",
                "commit",
            ],
        ],
        "select count(*) from oncall where on_call",
    );
}

#[test]
fn truncate_is_a_write_of_every_row() {
    compare(
        "truncate write skew",
        "drop table if exists a, b; create table a (i int); insert into a values (1); \
         create table b (i int)",
        &[
            &[
                "select count(*) from a",
                "insert into b values (1)",
                "commit",
            ],
            &["select count(*) from b", "truncate a", "commit"],
        ],
        "select (select count(*) from a) as a, (select count(*) from b) as b",
    );
}

#[test]
fn reads_before_a_truncate_conflict_with_writes_after_it() {
    // Session 1 reads a and writes b; session 3 read b before that and writes a after
    // session 2 truncated it (a new file): 1 ->rw 3 ->rw 1 must still be seen.
    let order: Vec<Step<'_>> = vec![
        (1, "select count(*) from a"),
        (3, "select count(*) from b"),
        (1, "insert into b values (1)"),
        (1, "commit"),
        (2, "truncate a"),
        (2, "commit"),
        (3, "insert into a values (5)"),
        (3, "commit"),
    ];
    compare_orders(
        "read before truncate",
        "drop table if exists a, b; create table a (i int); insert into a values (1); \
         create table b (i int)",
        &[order],
        "select (select count(*) from a) as a, (select count(*) from b) as b",
    );
}

/// The schedules a spec expands to: every interleaving of its sessions' steps.
#[test]
fn interleavings_count_multinomially() {
    let a: &[&str] = &["a1", "a2"];
    let b: &[&str] = &["b1", "b2"];
    let c: &[&str] = &["c1", "c2", "c3"];
    assert_eq!(interleavings(&[a, b]).len(), 6);
    assert_eq!(interleavings(&[a, b, c]).len(), 210);
}
