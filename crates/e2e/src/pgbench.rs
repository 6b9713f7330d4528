//! Reading pgbench's report, its per-transaction logs, and the pgbench tables' bookkeeping
//! invariants.

use crate::server::Server;
use std::path::Path;

/// Transactions the per-transaction logs (`pgbench -l`) in `dir` record as completed (time
/// field numeric; not "failed"/"skipped"): pgbench logs one only after its COMMIT returned.
pub fn logged_done(dir: &Path) -> u64 {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut done = 0;
    for e in entries.flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() >= 6 && f[2].parse::<u64>().is_ok() {
                done += 1;
            }
        }
    }
    done
}

/// The numbers pgbench prints at the end of a run.
#[derive(Debug, Clone, Default)]
pub struct PgbenchReport {
    pub processed: Option<u64>,
    pub failed: Option<u64>,
    /// "tps = X (without initial connection time)".
    pub tps: Option<f64>,
}

/// Parses pgbench 15's summary lines.
pub fn parse_report(stdout: &str) -> PgbenchReport {
    let mut r = PgbenchReport::default();
    for line in stdout.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("number of transactions actually processed:") {
            r.processed = first_number(rest).map(|v| v as u64);
        } else if let Some(rest) = line.strip_prefix("number of failed transactions:") {
            r.failed = first_number(rest).map(|v| v as u64);
        } else if let Some(rest) = line.strip_prefix("tps =") {
            r.tps = first_number(rest);
        }
    }
    r
}

fn first_number(s: &str) -> Option<f64> {
    s.split_whitespace()
        .next()
        .and_then(|w| w.split('/').next())
        .and_then(|w| w.parse().ok())
}

/// sum(abalance), sum(tbalance), sum(bbalance), sum(delta), count(history).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sums {
    pub accounts: i64,
    pub tellers: i64,
    pub branches: i64,
    pub history: i64,
    pub history_rows: i64,
}

impl Sums {
    /// One plain query per number (no scalar subqueries), so the check itself needs only
    /// aggregates from the server under test.
    pub fn read(srv: &Server) -> Sums {
        let num = |sql: &str| -> i64 {
            let out = srv.query(sql);
            match out.parse() {
                Ok(v) => v,
                Err(_) if out.is_empty() => 0, // sum over no rows is NULL
                Err(_) => panic!("{sql}: unexpected output {out:?}"),
            }
        };
        Sums {
            accounts: num("select sum(abalance) from pgbench_accounts"),
            tellers: num("select sum(tbalance) from pgbench_tellers"),
            branches: num("select sum(bbalance) from pgbench_branches"),
            history: num("select sum(delta) from pgbench_history"),
            history_rows: num("select count(*) from pgbench_history"),
        }
    }

    /// Row counts of accounts, tellers, branches, history.
    pub fn counts(srv: &Server) -> [i64; 4] {
        [
            "pgbench_accounts",
            "pgbench_tellers",
            "pgbench_branches",
            "pgbench_history",
        ]
        .map(|t| {
            let sql = format!("select count(*) from {t}");
            let out = srv.query(&sql);
            out.parse()
                .unwrap_or_else(|_| panic!("{sql}: unexpected output {out:?}"))
        })
    }

    /// tpcb-like invariant: every transaction adds the same delta to one account, one teller,
    /// one branch and one history row.
    pub fn assert_tpcb(&self) {
        assert!(
            self.accounts == self.tellers
                && self.tellers == self.branches
                && self.branches == self.history,
            "balance sums disagree: {self:?}"
        );
    }
}
