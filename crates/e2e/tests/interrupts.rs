//! statement_timeout and CancelRequest stop every long-running statement shape promptly:
//! joins (a 3-way cross join, a hash join), aggregation, DISTINCT, UNION / INTERSECT /
//! EXCEPT, a big ORDER BY, a correlated subquery run per row, generate_series, repeat() over
//! big strings, CREATE INDEX, ADD UNIQUE, VACUUM and COPY FROM STDIN of an endless stream.
//!
//! For each shape, keel with `statement_timeout = 1s` must answer 57014 within 1 s + MARGIN
//! of sending it, with the SQLSTATE and message PostgreSQL 15 gives for the same statement
//! on the same data (run here too), and a CancelRequest must end it within MARGIN. After each,
//! the session answers `select 1`, and another session is answered throughout.
//!
//! The target is 100 ms; MARGIN allows for a shared 2-core machine. The latencies are printed
//! (`cargo test ... -- --nocapture`).

use keel_e2e::Server;
use keel_e2e::client::{connect, exec, runtime, value, within};
use keel_e2e::raw::{self, RawConn};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_postgres::NoTls;

const TIMEOUT: Duration = Duration::from_secs(1);
const MARGIN: Duration = Duration::from_millis(500);

/// The same data on both servers. `vb` holds three million rows of an aborted transaction, for
/// VACUUM to remove.
const SETUP: &[&str] = &[
    "create table c1 (id int, k int, t text)",
    "insert into c1 select g, g % 100, md5(g::text) from generate_series(1, 2000) g",
    "create table big (id int, k int, t text)",
    "insert into big select g, g % 1000, md5(g::text) from generate_series(1, 2000000) g",
    "create table vb (id int, t text)",
    "begin",
    "insert into vb select g, md5(g::text) from generate_series(1, 3000000) g",
    "rollback",
    "create table cp (a int, b text)",
];

/// A statement that runs for seconds on both servers.
struct Shape {
    name: &'static str,
    sql: &'static str,
    /// When the CancelRequest goes out after the statement was sent.
    cancel_after: Duration,
}

const SOON: Duration = Duration::from_millis(300);

/// Marks COPY FROM STDIN, which a client drives by streaming data (see `copy_stream`).
const COPY: &str = "copy cp from stdin";

const SHAPES: &[Shape] = &[
    Shape {
        name: "3-way cross join",
        sql: "select count(*) from c1 a, c1 b, c1 c",
        cancel_after: SOON,
    },
    Shape {
        name: "hash join",
        // The filter sits inside the subquery so the build side is 100,000 rows: keel does not push
        // WHERE below a join yet, and hashing all of `big` can reach the statement memory limit
        // (53200) before the 1 s timeout on a fast machine.
        sql: "select count(*) from big a join (select * from big where id <= 100000) b on a.k = b.k",
        cancel_after: SOON,
    },
    Shape {
        name: "GROUP BY",
        sql: "select count(*) from (select g % 100000, count(*) \
              from generate_series(1, 100000000) g group by 1) s",
        cancel_after: SOON,
    },
    Shape {
        name: "DISTINCT",
        sql: "select count(*) from (select distinct g % 100000 \
              from generate_series(1, 100000000) g) s",
        cancel_after: SOON,
    },
    Shape {
        name: "UNION",
        sql: "select count(*) from (select g % 100000 from generate_series(1, 100000000) g \
              union select 1) s",
        cancel_after: SOON,
    },
    Shape {
        name: "INTERSECT",
        sql: "select count(*) from (select g % 100000 from generate_series(1, 100000000) g \
              intersect select g from generate_series(1, 10) g) s",
        cancel_after: SOON,
    },
    Shape {
        name: "EXCEPT",
        sql: "select count(*) from (select g % 100000 from generate_series(1, 100000000) g \
              except select g from generate_series(1, 10) g) s",
        cancel_after: SOON,
    },
    // A million sort keys that are dear to compute: about 3.5 s on both servers, and within
    // keel's statement memory limit at the default work_mem (5 M plain integers pass it in a
    // third of a second, and answer 53200). The comparison phase's checks are covered by the
    // unit tests of exec/runs.rs.
    Shape {
        name: "ORDER BY",
        sql: "select count(*) from (select md5(md5(md5(md5(md5(md5(g::text)))))) \
              from generate_series(1, 1000000) g order by 1 offset 0) s",
        cancel_after: SOON,
    },
    Shape {
        name: "correlated subquery",
        sql: "select count(*) from big a where (select count(*) from c1 b where b.k = a.k) > 5",
        cancel_after: SOON,
    },
    Shape {
        // Scans whose equality filter is tested on stored bytes, rejecting every row before
        // it is decoded: the executor's checks must still run.
        name: "filter no row passes",
        sql: "select count(*) from c1 a \
              where (select count(*) from big b where b.k = 1001 and b.id <> a.id) > 0",
        cancel_after: SOON,
    },
    Shape {
        name: "generate_series",
        sql: "select count(*) from generate_series(1, 1000000000)",
        cancel_after: SOON,
    },
    // Each row's repeat() builds 320 MB: the interrupt comes inside the function.
    Shape {
        name: "repeat()",
        sql: "select count(*) from c1 where length(repeat(t, 10000000)) > 0",
        cancel_after: SOON,
    },
    Shape {
        name: "CREATE INDEX",
        sql: "create index big_t on big (t)",
        cancel_after: SOON,
    },
    Shape {
        name: "ADD UNIQUE",
        sql: "alter table big add constraint big_t_key unique (t)",
        cancel_after: SOON,
    },
    // Keel runs VACUUM FULL as VACUUM (big: 2 M live rows, then vb's dead ones); PostgreSQL
    // rewrites both tables.
    Shape {
        name: "VACUUM",
        sql: "vacuum full big, vb",
        cancel_after: SOON,
    },
    Shape {
        name: "COPY FROM STDIN",
        sql: COPY,
        cancel_after: SOON,
    },
];

/// How a statement ended: SQLSTATE and message, or "ok" if it did not fail.
#[derive(Clone, Debug, PartialEq)]
struct Outcome {
    code: String,
    message: String,
}

fn outcome(r: Result<Vec<tokio_postgres::SimpleQueryMessage>, tokio_postgres::Error>) -> Outcome {
    match r {
        Ok(_) => Outcome {
            code: "ok".into(),
            message: String::new(),
        },
        Err(e) => match e.as_db_error() {
            Some(db) => Outcome {
                code: db.code().code().into(),
                message: db.message().into(),
            },
            None => Outcome {
                code: String::new(),
                message: e.to_string(),
            },
        },
    }
}

/// The message ('M' field) of an ErrorResponse body.
fn error_message(body: &[u8]) -> String {
    body.split(|b| *b == 0)
        .find(|f| f.first() == Some(&b'M'))
        .map(|f| String::from_utf8_lossy(&f[1..]).into_owned())
        .unwrap_or_default()
}

/// Sends a CancelRequest for backend (pid, secret).
fn cancel_request(port: u16, (pid, secret): (i32, i32)) {
    let mut packet = Vec::with_capacity(16);
    packet.extend_from_slice(&16u32.to_be_bytes());
    packet.extend_from_slice(&80_877_102u32.to_be_bytes());
    packet.extend_from_slice(&pid.to_be_bytes());
    packet.extend_from_slice(&secret.to_be_bytes());
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port))
        .unwrap_or_else(|e| panic!("cancel connection: {e}"));
    s.write_all(&packet)
        .unwrap_or_else(|e| panic!("cancel request: {e}"));
}

/// Logs in over a raw connection; returns it with its BackendKeyData.
fn raw_login(port: u16) -> (RawConn, (i32, i32)) {
    let mut c = RawConn::connect(port).unwrap_or_else(|e| panic!("connect: {e}"));
    c.send(&raw::startup_message("postgres", "postgres"))
        .unwrap_or_else(|e| panic!("startup: {e}"));
    let msgs = c
        .read_until_ready()
        .unwrap_or_else(|e| panic!("login: {e}"));
    let (_, key) = msgs
        .iter()
        .find(|(t, _)| *t == b'K')
        .unwrap_or_else(|| panic!("no BackendKeyData in {msgs:?}"));
    let int = |i: usize| i32::from_be_bytes([key[i], key[i + 1], key[i + 2], key[i + 3]]);
    (c, (int(0), int(4)))
}

/// COPY FROM STDIN fed by an endless stream of rows until the server reports an error:
/// with `timeout` set as statement_timeout, or cancelled `cancel_after` after the COPY
/// started. Returns the error and its delay after the start (timeout) or the cancel.
fn copy_stream(
    port: u16,
    timeout: Option<&str>,
    cancel_after: Option<Duration>,
) -> (Outcome, Duration) {
    let (mut c, key) = raw_login(port);
    if let Some(t) = timeout {
        c.simple(&format!("set statement_timeout = '{t}'"))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    c.send(&raw::query_message(COPY))
        .unwrap_or_else(|e| panic!("{e}"));
    let start = Instant::now();
    c.read_until(b'G')
        .unwrap_or_else(|e| panic!("CopyInResponse: {e}"));
    let stop = Arc::new(AtomicBool::new(false));
    let mut out = c.stream.try_clone().unwrap_or_else(|e| panic!("{e}"));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut chunk = String::new();
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                chunk.clear();
                for _ in 0..1000 {
                    n += 1;
                    chunk.push_str(&format!("{n}\trow {n} of an endless stream\n"));
                }
                if out.write_all(&raw::copy_data(chunk.as_bytes())).is_err() {
                    return;
                }
            }
            let _ = out.write_all(&raw::copy_done());
        })
    };
    let canceller = cancel_after.map(|after| {
        std::thread::spawn(move || {
            std::thread::sleep(after.saturating_sub(start.elapsed()));
            let at = Instant::now();
            cancel_request(port, key);
            at
        })
    });
    let msgs = c
        .read_until(b'E')
        .unwrap_or_else(|e| panic!("COPY error: {e}"));
    let ended = Instant::now();
    stop.store(true, Ordering::Relaxed);
    let _ = writer.join();
    let from = match canceller {
        Some(t) => t.join().unwrap_or_else(|_| panic!("canceller")),
        None => start,
    };
    let (_, body) = msgs.last().cloned().unwrap_or_default();
    let got = Outcome {
        code: raw::error_code(&body).unwrap_or_default(),
        message: error_message(&body),
    };
    c.read_until_ready()
        .unwrap_or_else(|e| panic!("after COPY error: {e}"));
    let one = c.simple("select 1").unwrap_or_else(|e| panic!("{e}"));
    assert!(one.iter().any(|(t, _)| *t == b'D'), "select 1 after COPY");
    (got, ended.saturating_duration_since(from))
}

/// Runs `sql` with statement_timeout = 1s on `conn`; returns how it ended and how long it ran.
async fn timed_out(conn: &tokio_postgres::Client, sql: &str) -> (Outcome, Duration) {
    let start = Instant::now();
    let r = within(sql, conn.simple_query(sql)).await;
    (outcome(r), start.elapsed())
}

/// Runs `sql` on `conn` (statement_timeout 30 s as a safety net) and cancels it after
/// `after`; returns how it ended and how long after the CancelRequest it did.
async fn cancelled(
    conn: &tokio_postgres::Client,
    sql: &str,
    after: Duration,
) -> (Outcome, Duration) {
    let token = conn.cancel_token();
    let canceller = async {
        tokio::time::sleep(after).await;
        let at = Instant::now();
        if let Err(e) = token.cancel_query(NoTls).await {
            panic!("cancel_query: {e}");
        }
        at
    };
    let run = async {
        let r = conn.simple_query(sql).await;
        (r, Instant::now())
    };
    let (at, (r, ended)) = within(sql, async { tokio::join!(canceller, run) }).await;
    (outcome(r), ended.saturating_duration_since(at))
}

/// PostgreSQL's answer to each shape run past a 1 s statement_timeout, and its answer to a
/// cancelled statement.
fn oracle(pg: &Server) -> (Vec<Outcome>, Outcome) {
    let conn_str = pg.conn_str();
    let port = pg.port();
    runtime().block_on(async move {
        let c = connect(&conn_str).await;
        for s in SETUP {
            exec(&c, s).await;
        }
        exec(&c, "set statement_timeout = '1s'").await;
        let mut got = Vec::new();
        for shape in SHAPES {
            let o = if shape.sql == COPY {
                tokio::task::spawn_blocking(move || copy_stream(port, Some("1s"), None).0)
                    .await
                    .unwrap_or_else(|e| panic!("{e}"))
            } else {
                timed_out(&c, shape.sql).await.0
            };
            got.push(o);
        }
        exec(&c, "set statement_timeout = 0").await;
        let (cancel, _) = cancelled(&c, "select count(*) from c1 a, c1 b, c1 c", SOON).await;
        (got, cancel)
    })
}

/// Another session's `select 1` latencies while the statements run.
struct Probe {
    stop: Arc<AtomicBool>,
    worst: Arc<Mutex<(Duration, u32)>>,
}

impl Probe {
    fn start(conn_str: String) -> Probe {
        let stop = Arc::new(AtomicBool::new(false));
        let worst = Arc::new(Mutex::new((Duration::ZERO, 0)));
        let (s, w) = (stop.clone(), worst.clone());
        tokio::spawn(async move {
            let c = connect(&conn_str).await;
            while !s.load(Ordering::Relaxed) {
                let t = Instant::now();
                assert_eq!(value(&c, "select 1").await, "1");
                let took = t.elapsed();
                if let Ok(mut w) = w.lock() {
                    w.0 = w.0.max(took);
                    w.1 += 1;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        Probe { stop, worst }
    }

    /// The slowest answer and the number of answers since the last call.
    fn take(&self) -> (Duration, u32) {
        match self.worst.lock() {
            Ok(mut w) => std::mem::replace(&mut *w, (Duration::ZERO, 0)),
            Err(_) => panic!("probe panicked"),
        }
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

struct Measured {
    name: &'static str,
    timeout: (Outcome, Duration),
    cancel: (Outcome, Duration),
    probe: (Duration, u32),
}

fn keel_runs(srv: &Server) -> Vec<Measured> {
    let conn_str = srv.conn_str();
    let port = srv.port();
    runtime().block_on(async move {
        let setup = connect(&conn_str).await;
        for s in SETUP {
            exec(&setup, s).await;
        }
        let probe = Probe::start(conn_str.clone());
        let t = connect(&conn_str).await;
        exec(&t, "set statement_timeout = '1s'").await;
        let c = connect(&conn_str).await;
        exec(&c, "set statement_timeout = '30s'").await;
        probe.take();
        let mut out = Vec::new();
        for shape in SHAPES {
            let (timeout, cancel) = if shape.sql == COPY {
                let after = shape.cancel_after;
                tokio::task::spawn_blocking(move || {
                    (
                        copy_stream(port, Some("1s"), None),
                        copy_stream(port, Some("30s"), Some(after)),
                    )
                })
                .await
                .unwrap_or_else(|e| panic!("{e}"))
            } else {
                let timeout = timed_out(&t, shape.sql).await;
                assert_eq!(value(&t, "select 1").await, "1", "{}", shape.name);
                let cancel = cancelled(&c, shape.sql, shape.cancel_after).await;
                assert_eq!(value(&c, "select 1").await, "1", "{}", shape.name);
                (timeout, cancel)
            };
            let m = Measured {
                name: shape.name,
                timeout,
                cancel,
                probe: probe.take(),
            };
            eprintln!(
                "{:20} timeout: {:?} after {:?}; cancel: {:?} after {:?}; other session: {} answers, slowest {:?}",
                m.name, m.timeout.0.code, m.timeout.1, m.cancel.0.code, m.cancel.1, m.probe.1, m.probe.0
            );
            out.push(m);
        }
        out
    })
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[test]
fn every_long_statement_stops_at_its_timeout_or_cancel() {
    let keel = Server::start(&[]);
    let pg = Server::oracle(&[]);
    // PostgreSQL's runs go alongside keel's (keel's latencies are what is measured).
    let ((expected, pg_cancel), measured) = std::thread::scope(|s| {
        let pg_side = s.spawn(|| oracle(&pg));
        let measured = keel_runs(&keel);
        let pg_side = pg_side
            .join()
            .unwrap_or_else(|_| panic!("the PostgreSQL side panicked"));
        (pg_side, measured)
    });
    assert_eq!(
        pg_cancel.code, "57014",
        "PostgreSQL, cancelled: {pg_cancel:?}"
    );
    let mut failures = Vec::new();
    for (m, want) in measured.iter().zip(&expected) {
        assert_eq!(
            want.code, "57014",
            "{}: PostgreSQL must run it past its timeout: {want:?}",
            m.name
        );
        let (got, took) = &m.timeout;
        if got != want {
            failures.push(format!(
                "{}: timeout gave {got:?}, PostgreSQL {want:?}",
                m.name
            ));
        }
        if *took < TIMEOUT || *took > TIMEOUT + MARGIN {
            failures.push(format!("{}: timeout error after {took:?}", m.name));
        }
        let (got, took) = &m.cancel;
        if *got != pg_cancel {
            failures.push(format!(
                "{}: cancel gave {got:?}, PostgreSQL {pg_cancel:?}",
                m.name
            ));
        }
        if *took > MARGIN {
            failures.push(format!("{}: cancel took {took:?}", m.name));
        }
        let (slowest, answers) = m.probe;
        if answers == 0 || slowest > MARGIN {
            failures.push(format!(
                "{}: the other session answered {answers} times, slowest {slowest:?}",
                m.name
            ));
        }
    }
    eprintln!(
        "medians: timeout error {:?} past the deadline, cancel {:?} after the request",
        median(
            measured
                .iter()
                .map(|m| m.timeout.1.saturating_sub(TIMEOUT))
                .collect()
        ),
        median(measured.iter().map(|m| m.cancel.1).collect()),
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
