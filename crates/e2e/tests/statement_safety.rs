//! One statement cannot take its session or the server down: arithmetic on hostile values
//! answers as PostgreSQL 15 does (it used to panic the session thread), and a large result
//! read slowly by its client is streamed, not held whole in keel's memory.

use keel_e2e::Server;
use keel_e2e::raw::{self, RawConn};
use std::io::Read;
use std::time::{Duration, Instant};

/// Statements whose operands once reached a panic (num-bigint divided by zero inside numeric
/// power), or sit at the edges of the arithmetic: each must answer as PostgreSQL does.
const HOSTILE_ARITHMETIC: &[&str] = &[
    "select (-1.0) ^ 2147483648",
    "select (-1.0) ^ 2147483649",
    "select (-2.0) ^ 2147483648",
    "select (-0.5) ^ 2147483649 = 0",
    "select (-1.0) ^ 4000000001.0",
    "select power(-1.0, 9999999999)",
    "select 0.0 ^ 2147483648",
    "select (-9223372036854775808)::int8 / -1",
    "select (-2147483648)::int4 / -1",
    "select (-32768)::int2 / (-1)::int2",
    "select (-9223372036854775808)::int8 % -1",
    "select abs((-2147483648)::int4)",
    "select -((-9223372036854775808)::int8)",
    "select 10::numeric ^ 131072",
    "select 1e-16383::numeric ^ 2",
    "select 10::numeric ^ 131071 > 0",
    "select mod(5::numeric, 0)",
    "select 1::float8 / 0",
    "select 'NaN'::numeric ^ 'Infinity'::numeric",
];

fn answers(srv: &Server, sql: &str) -> String {
    let out = srv.psql(&["-v", "VERBOSITY=verbose", "-Atc", sql]);
    // Error text up to the SQLSTATE and message; LOCATION lines differ between servers.
    let err: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("ERROR:"))
        .collect();
    format!("{}{}", out.stdout.trim(), err.join("\n"))
}

#[test]
fn hostile_arithmetic_answers_as_postgresql_and_the_session_survives() {
    let mut keel = Server::start(&[]);
    let pg = Server::oracle(&[]);
    let pid = keel.pid();
    let mut watcher = RawConn::login(keel.port()).expect("login");
    for sql in HOSTILE_ARITHMETIC {
        let expected = answers(&pg, sql);
        assert_eq!(answers(&keel, sql), expected, "{sql}");
        // The same statement inside a block: the session answers the next statement.
        let mut c = RawConn::login(keel.port()).expect("login");
        c.send(&raw::query_message(&format!("begin; {sql};")))
            .unwrap();
        c.read_until_ready().expect("statement answered");
        c.send(&raw::query_message("rollback")).unwrap();
        c.read_until_ready()
            .expect("session usable after the statement");
        watcher.simple("select 1").expect("another session answers");
    }
    assert!(keel.is_running());
    assert_eq!(keel.pid(), pid);
}

/// A chain of products whose scale passes NUMERIC_DSCALE_MAX is rounded at every step; the
/// rounding is linear in the digits, so 3,000 factors (a 112,384-digit result) answer as
/// PostgreSQL does well inside a 5 s statement_timeout. A digit-by-digit rounding took 5.6 s
/// here, and 36 s for the 5,800 factors the survival test once drew.
#[test]
fn a_long_product_chain_answers_within_its_timeout() {
    let keel = Server::start(&[]);
    let pg = Server::oracle(&[]);
    let factor = "99999999999999999999999999999999.999999";
    let sql = format!(
        "set statement_timeout = '5s'; select length(({})::text)",
        vec![factor; 3000].join(" * ")
    );
    let expected = answers(&pg, &sql);
    assert!(expected.ends_with("112384"), "{expected}");
    assert_eq!(answers(&keel, &sql), expected);
}

/// A 200 MB result whose client reads it slowly: keel's peak RSS must not grow by anything
/// near the result's size (before streaming it held every row until the last was computed).
#[test]
fn a_large_result_read_slowly_is_streamed() {
    let keel = Server::start(&[]);
    let mut c = RawConn::login(keel.port()).expect("login");
    // Warm up the process (first-use allocations, shard threads) before the baseline.
    c.simple("select repeat('x', 1000) from generate_series(1, 2000)")
        .expect("warm-up");
    let before = keel.proc_status_kb("VmHWM").expect("VmHWM");
    c.send(&raw::query_message(
        "select repeat('x', 1000) from generate_series(1, 200000)",
    ))
    .unwrap();
    let mut buf = vec![0u8; 64 << 10];
    let mut got = 0usize;
    let start = Instant::now();
    // The first 16 MB slowly: keel must wait for us rather than run ahead.
    while got < 16 << 20 {
        let n = c.stream.read(&mut buf).expect("read");
        assert!(n > 0, "connection closed early");
        got += n;
        std::thread::sleep(Duration::from_millis(2));
    }
    let during = keel.proc_status_kb("VmHWM").expect("VmHWM");
    // Then the rest, until ReadyForQuery.
    let mut tail = Vec::new();
    loop {
        let n = c.stream.read(&mut buf).expect("read");
        assert!(n > 0, "connection closed early");
        got += n;
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > 64 {
            tail.drain(..tail.len() - 64);
        }
        // ReadyForQuery 'Z', length 5, status 'I' ends the response.
        if tail.ends_with(&[b'Z', 0, 0, 0, 5, b'I']) {
            break;
        }
    }
    let after = keel.proc_status_kb("VmHWM").expect("VmHWM");
    eprintln!(
        "VmHWM before {before} kB, after 16 MB read slowly {during} kB, at the end {after} kB; {got} bytes in {:?}",
        start.elapsed()
    );
    assert!(got > 200_000_000, "the whole result arrived ({got} bytes)");
    assert!(
        after.saturating_sub(before) < 64 << 10,
        "peak RSS grew by {} kB for a 200 MB result",
        after.saturating_sub(before)
    );
    c.simple("select 1").expect("session usable");
}
