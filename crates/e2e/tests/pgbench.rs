//! pgbench against the server under test: client- and server-side initialization, then
//! tpcb-like, simple-update (-N) and select-only (-S) in each query mode, with the
//! bookkeeping invariants of the pgbench tables checked after every run.
//!
//! Quick by default (scale 2, 5 s per run); `KEEL_E2E_FULL=1` uses scale 10 and 30 s.

use keel_e2e::{CmdOutput, PgbenchReport, Server, Sums, env_u64, full, parse_report};
use std::time::Duration;

fn scale() -> u64 {
    env_u64("KEEL_E2E_SCALE", if full() { 10 } else { 2 })
}

fn secs() -> u64 {
    env_u64("KEEL_E2E_PGBENCH_SECS", if full() { 30 } else { 5 })
}

const CLIENTS: u64 = 16;

fn init(srv: &Server, server_side: bool) {
    let s = scale().to_string();
    let mut args = vec!["-i", "-q", "-s", &s];
    if server_side {
        args.extend(["-I", "dtGvpf"]);
    }
    let out = srv.pgbench(&args, Duration::from_secs(600));
    out.assert_success();
    let sc = scale() as i64;
    assert_eq!(
        Sums::counts(srv),
        [100_000 * sc, 10 * sc, sc, 0],
        "row counts (accounts, tellers, branches, history) after pgbench -i"
    );
    let sums = Sums::read(srv);
    assert_eq!(
        (sums.accounts, sums.tellers, sums.branches, sums.history),
        (0, 0, 0, 0)
    );
}

fn bench(srv: &Server, mode: &str, workload: &[&str]) -> (PgbenchReport, CmdOutput) {
    let (c, t) = (CLIENTS.to_string(), secs().to_string());
    let mut args = vec!["-n", "-M", mode, "-c", &c, "-j", "2", "-T", &t];
    args.extend_from_slice(workload);
    let out = srv.pgbench(&args, Duration::from_secs(secs() + 180));
    let rep = parse_report(&out.stdout);
    assert!(out.success(), "pgbench {workload:?} -M {mode}: {out}");
    assert_eq!(
        rep.failed,
        Some(0),
        "number of failed transactions must be 0: {out}"
    );
    assert!(rep.tps.is_some_and(|t| t > 0.0), "tps must be > 0: {out}");
    assert!(
        rep.processed.is_some_and(|p| p > 0),
        "no transactions: {out}"
    );
    eprintln!(
        "{mode} {workload:?}: {} tx, tps {:.1}",
        rep.processed.unwrap_or(0),
        rep.tps.unwrap_or(0.0)
    );
    (rep, out)
}

fn run_all_workloads(mode: &str, server_side_init: bool) {
    let srv = Server::start(&[("max_connections", "100")]);
    init(&srv, server_side_init);

    // tpcb-like: each transaction adds one delta to an account, a teller, a branch and history.
    let (rep, _) = bench(&srv, mode, &[]);
    let s1 = Sums::read(&srv);
    s1.assert_tpcb();
    assert_eq!(
        s1.history_rows as u64,
        rep.processed.unwrap_or(0),
        "one history row per processed tpcb-like transaction: {s1:?}"
    );

    // simple-update (-N) skips tellers and branches.
    let (rep, _) = bench(&srv, mode, &["-N"]);
    let s2 = Sums::read(&srv);
    assert_eq!(
        s2.accounts - s1.accounts,
        s2.history - s1.history,
        "-N: account deltas must equal history deltas: {s1:?} -> {s2:?}"
    );
    assert_eq!(
        (s2.tellers, s2.branches),
        (s1.tellers, s1.branches),
        "-N must not touch tellers/branches"
    );
    assert_eq!(
        (s2.history_rows - s1.history_rows) as u64,
        rep.processed.unwrap_or(0),
        "one history row per processed -N transaction"
    );

    // select-only (-S) changes nothing.
    bench(&srv, mode, &["-S"]);
    assert_eq!(Sums::read(&srv), s2, "-S must not change any table");
}

#[test]
fn pgbench_simple_protocol() {
    run_all_workloads("simple", false);
}

#[test]
fn pgbench_extended_protocol() {
    run_all_workloads("extended", false);
}

#[test]
fn pgbench_prepared_server_side_init() {
    run_all_workloads("prepared", true);
}

/// `-I dtGvpf` must leave primary keys (p) and foreign keys (f) that are enforced.
#[test]
fn pgbench_server_side_init_constraints() {
    let srv = Server::start(&[]);
    init(&srv, true);
    let dup = srv.psql(&[
        "-v",
        "VERBOSITY=verbose",
        "-c",
        "\\set VERBOSITY verbose",
        "-c",
        "insert into pgbench_accounts values (1, 1, 0, '')",
    ]);
    assert!(
        !dup.success() && dup.stderr.contains("23505"),
        "duplicate aid must violate the primary key (23505): {dup}"
    );
    let fk = srv.psql(&[
        "-c",
        "\\set VERBOSITY verbose",
        "-c",
        // An aid beyond every scale (scale 10 has aids up to 1,000,000).
        "insert into pgbench_history values (1, 1, 2000000000, 0, now(), '')",
    ]);
    assert!(
        !fk.success() && fk.stderr.contains("23503"),
        "an unknown aid must violate the foreign key (23503): {fk}"
    );
}
