//! Crash safety under load: run tpcb-like with a per-transaction log (`pgbench -l`), kill the
//! server (SIGKILL for keel) halfway through, restart it on the same data dir, and check that
//! every transaction pgbench saw commit survived and the balances still add up.
//!
//! Matching: the log names client and transaction number, not the account. But each committed
//! tpcb-like transaction inserts exactly one pgbench_history row and pgbench logs a transaction
//! only after COMMIT returned, so, per round:
//!   logged-as-done <= new history rows <= logged-as-done + clients
//! (the upper bound allows for one commit per client that was durable but not yet acknowledged
//! when the server died). The four balance sums must agree after recovery, so no transaction is
//! half-applied.
//!
//! Rounds repeat on the same data dir: `KEEL_E2E_CRASH_ROUNDS` (default 10),
//! `KEEL_E2E_CRASH_AFTER_MS` (default 2000; pgbench runs for twice that).

use keel_e2e::{Server, Sums, env_u64, full, logged_done};
use std::thread;
use std::time::Duration;

const CLIENTS: u64 = 8;

#[test]
fn crash_under_tpcb_load_loses_no_acknowledged_commit() {
    let rounds = env_u64("KEEL_E2E_CRASH_ROUNDS", 10);
    let crash_after = Duration::from_millis(env_u64("KEEL_E2E_CRASH_AFTER_MS", 2000));
    let scale = env_u64("KEEL_E2E_SCALE", if full() { 10 } else { 2 }).to_string();
    let mut srv = Server::start(&[("synchronous_commit", "on")]);
    srv.pgbench(&["-i", "-q", "-s", &scale], Duration::from_secs(600))
        .assert_success();

    let modes = ["prepared", "simple", "extended"];
    let mut total_logged = 0;
    for round in 0..rounds {
        let before = Sums::read(&srv);
        before.assert_tpcb();
        let logdir = srv.scratch().join(format!("pgbench-log-{round}"));
        std::fs::create_dir_all(&logdir).unwrap_or_else(|e| panic!("{e}"));
        let prefix = format!("--log-prefix={}", logdir.join("tx").display());
        let secs = (crash_after.as_secs_f64() * 2.0).ceil().max(1.0) as u64;
        let (c, t) = (CLIENTS.to_string(), secs.to_string());
        let mode = modes[round as usize % modes.len()];
        let mut cmd = srv.pgbench_cmd();
        cmd.args([
            "-n", "-l", &prefix, "-M", mode, "-c", &c, "-j", "2", "-T", &t,
        ])
        .arg("postgres");
        let load =
            thread::spawn(move || keel_e2e::cmd::run(cmd, None, Duration::from_secs(secs + 120)));
        thread::sleep(crash_after);
        srv.crash();
        let out = match load.join() {
            Ok(o) => o,
            Err(_) => panic!("pgbench thread panicked"),
        };
        assert!(!out.timed_out, "pgbench hung after the crash: {out}");
        srv.restart();

        let done = logged_done(&logdir);
        let after = Sums::read(&srv);
        eprintln!(
            "round {round} ({mode}): {done} tx logged, {} new history rows",
            after.history_rows - before.history_rows
        );
        assert!(
            done > 0,
            "round {round}: pgbench completed no transaction before the crash: {out}"
        );
        after.assert_tpcb();
        let new_rows = (after.history_rows - before.history_rows) as u64;
        assert!(
            new_rows >= done,
            "round {round}: {done} commits acknowledged but only {new_rows} history rows survived"
        );
        assert!(
            new_rows <= done + CLIENTS,
            "round {round}: {new_rows} new history rows but only {done} commits logged \
             (at most {CLIENTS} in flight)"
        );
        total_logged += done;
    }
    // A clean stop/start after all that keeps everything too.
    let last = Sums::read(&srv);
    srv.stop();
    srv.restart();
    assert_eq!(Sums::read(&srv), last, "clean restart changed the data");
    assert!(last.history_rows as u64 >= total_logged);
}
