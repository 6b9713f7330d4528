//! A full disk does not take the data down (issue 27, item 8). Keel's data directory lives on
//! a 64 MB tmpfs; a filler file fills it while rows are being inserted:
//! - the INSERT that needs a new page fails with 53100 and PostgreSQL 15's message and hint
//!   (`could not extend file "...": No space left on device`, `Check free disk space.`; the
//!   text is taken from PostgreSQL 15 on its own full tmpfs in the same test);
//! - SELECTs from another session, reading the whole table through a small buffer pool (so
//!   they evict dirty pages), keep working while the disk is full;
//! - more WAL (DELETE + ROLLBACK rounds, which need no new pages) then runs into a WAL
//!   segment that cannot be created: keel PANICs, as PostgreSQL does;
//! - a start with the disk still full fails and leaves the free space as it was;
//! - with the filler removed and the disk grown, keel starts and every acknowledged INSERT
//!   is there.

use keel_e2e::client::{connect, runtime, within};
use keel_e2e::server::{Engine, Server};
use keel_e2e::tmpfs::Tmpfs;
use std::time::{Duration, Instant};
use tokio_postgres::Client;

const DISK_MB: u64 = 64;
/// Rows per INSERT statement, and their width: about 100 kB a statement.
const BATCH: i64 = 100;
const PAD: usize = 1000;
const PAGE: u64 = 8192;

/// A server error's SQLSTATE, message (with the quoted file path masked) and hint.
#[derive(Debug, PartialEq, Eq)]
struct DbErr {
    code: String,
    message: String,
    hint: Option<String>,
}

fn db_err(e: &tokio_postgres::Error) -> DbErr {
    let Some(db) = e.as_db_error() else {
        panic!("not a server error: {e:?}");
    };
    // `could not extend file "base/5/16384": ...` (PostgreSQL) vs `"base/16385"` (keel).
    let message = match (db.message().find('"'), db.message().rfind('"')) {
        (Some(a), Some(b)) if b > a => {
            format!("{}\"FILE\"{}", &db.message()[..a], &db.message()[b + 1..])
        }
        _ => db.message().to_string(),
    };
    DbErr {
        code: db.code().code().to_string(),
        message,
        hint: db.hint().map(str::to_string),
    }
}

fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {timeout:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Inserts batch `n` (ids `n * BATCH ..`) as one statement.
async fn insert_batch(c: &Client, n: i64) -> Result<u64, tokio_postgres::Error> {
    let sql = format!(
        "insert into t select g, repeat('x', {PAD}) from generate_series({}, {}) g",
        n * BATCH,
        n * BATCH + BATCH - 1
    );
    within(&sql, c.execute(sql.as_str(), &[])).await
}

/// The error PostgreSQL 15 gives for an INSERT that needs a new page on a full disk.
fn pg_reference() -> DbErr {
    let disk = Tmpfs::mount(DISK_MB);
    let srv = Server::start_with_data_in(Engine::Pg, Some(disk.path()), &[]);
    srv.query("create table t (id int primary key, pad text)");
    let filler = disk.fill(Duration::ZERO);
    wait_until("PostgreSQL's disk full", Duration::from_secs(30), || {
        filler.disk_full()
    });
    let err = runtime().block_on(async {
        let c = connect(&srv.conn_str()).await;
        for n in 0..1000 {
            if let Err(e) = insert_batch(&c, n).await {
                return db_err(&e);
            }
        }
        panic!("PostgreSQL inserted 100,000 rows on a full disk");
    });
    // Room for PostgreSQL's shutdown checkpoint.
    filler.remove();
    drop(srv);
    err
}

#[test]
fn a_full_disk_fails_inserts_not_selects_and_restart_recovers_every_acknowledged_row() {
    let reference = pg_reference();
    assert_eq!(reference.code, "53100", "PostgreSQL: {reference:?}");

    let disk = Tmpfs::mount(DISK_MB);
    // A buffer pool much smaller than the table: SELECTs evict dirty pages.
    let mut srv = Server::start_with_data_in(
        Engine::Keel,
        Some(disk.path()),
        &[("shared_buffers", "4MB")],
    );
    srv.query("create table t (id int primary key, pad text)");
    let rt = runtime();
    let mut filler = None;
    let acked: Vec<i64> = rt.block_on(async {
        let writer = connect(&srv.conn_str()).await;
        let reader = connect(&srv.conn_str()).await;
        // Some data first, then the filler runs alongside the load, at about 50 MB/s: faster
        // than the rows go in, so the disk is full before the WAL (about the size of the
        // data) could outgrow the two segments it has.
        let mut acked = Vec::new();
        let mut n = 0;
        while n < 40 {
            insert_batch(&writer, n)
                .await
                .unwrap_or_else(|e| panic!("{e:?}"));
            acked.push(n);
            n += 1;
        }
        filler = Some(disk.fill(Duration::from_millis(20)));
        let mut selects = 0;
        let err = loop {
            match insert_batch(&writer, n).await {
                Ok(_) => acked.push(n),
                Err(e) => break e,
            }
            n += 1;
            if n % 10 == 0 {
                let r = within(
                    "select",
                    reader.query_one("select count(*), sum(length(pad)) from t", &[]),
                )
                .await;
                let row = r.unwrap_or_else(|e| panic!("SELECT while the disk fills: {e:?}"));
                assert!(row.get::<_, i64>(0) >= acked.len() as i64 * BATCH);
                selects += 1;
            }
        };
        // The first failure may be a short write, when the last free page went to keel
        // ("wrote only 4096 of 8192 bytes at block N", as PostgreSQL says then too).
        let first = db_err(&err);
        assert_eq!(first.code, "53100", "{first:?}");
        assert!(
            first
                .message
                .starts_with("could not extend file \"FILE\": "),
            "{first:?}"
        );
        assert_eq!(first.hint, reference.hint);
        // With every page taken (the filler grabs any that come free), the same INSERT
        // fails as PostgreSQL's does.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !filler.as_ref().is_some_and(|f| f.disk_full()) {
            assert!(
                Instant::now() < deadline,
                "the filler never found the disk full"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let again = insert_batch(&writer, n).await.err().map(|e| db_err(&e));
        assert_eq!(
            again.as_ref(),
            Some(&reference),
            "keel's error on a full disk vs PostgreSQL 15's"
        );
        // The disk is full: SELECTs (whole-table scans through 4 MB of buffers) still work.
        for _ in 0..5 {
            let row = within(
                "select",
                reader.query_one("select count(*), sum(length(pad)) from t", &[]),
            )
            .await
            .unwrap_or_else(|e| panic!("SELECT on a full disk: {e:?}"));
            assert_eq!(row.get::<_, i64>(0), acked.len() as i64 * BATCH);
            selects += 1;
        }
        assert!(selects >= 5);

        // WAL with no new pages, until a segment cannot be created: PANIC. The DELETE's
        // collected input must stay in memory: past work_mem it would go to a temporary file,
        // which the full disk refuses (53100) before any WAL segment is needed.
        within("set work_mem", writer.batch_execute("set work_mem = '1GB'"))
            .await
            .unwrap_or_else(|e| panic!("set work_mem: {e:?}"));
        let started = Instant::now();
        loop {
            let r = within(
                "delete",
                writer.batch_execute("begin; delete from t; rollback"),
            )
            .await;
            if r.is_err() {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "keel wrote 60 s of WAL on a full disk without failing"
            );
        }
        acked
    });
    let status = srv.wait_exit(Duration::from_secs(30));
    assert!(
        status.is_some_and(|s| !s.success()),
        "keel did not stop after the WAL write failed: {status:?}"
    );
    let log = srv.log();
    assert!(
        log.lines()
            .any(|l| l.starts_with("PANIC:  could not") && l.ends_with("No space left on device")),
        "no PANIC for the WAL's ENOSPC in the log:\n{}",
        keel_e2e::cmd::tail(&log, 2000)
    );

    // Still full: the start fails, and leaves the space as it was.
    let mut filler = filler.unwrap_or_else(|| panic!("no filler"));
    filler.stop();
    let before = disk.free_bytes();
    let failed = srv.try_restart();
    let after = disk.free_bytes();
    assert!(failed.is_err(), "keel started on a full disk");
    assert!(
        before.abs_diff(after) <= 2 * PAGE,
        "a failed start changed the free space from {before} to {after} bytes"
    );

    // Space again: keel starts, and every acknowledged row is there. How much the filler
    // held depends on how it raced the INSERTs; the disk also grows by two WAL segments, so
    // the start never depends on that race (the recovery's first WAL write may need a new
    // 16 MB segment, as PostgreSQL's does).
    filler.remove();
    disk.resize(DISK_MB + 32);
    srv.restart();
    let expect_count = acked.len() as i64 * BATCH;
    let expect_sum: i64 = acked
        .iter()
        .map(|&n| (n * BATCH..n * BATCH + BATCH).sum::<i64>())
        .sum();
    assert_eq!(
        srv.query("select count(*), sum(id), sum(length(pad)) from t"),
        format!("{expect_count}|{expect_sum}|{}", expect_count * PAD as i64)
    );
    // And it takes new rows.
    srv.query(&format!(
        "insert into t select g, 'after' from generate_series({}, {}) g",
        10_000_000, 10_000_099
    ));
    assert_eq!(
        srv.query("select count(*) from t where pad = 'after'"),
        "100"
    );
}
