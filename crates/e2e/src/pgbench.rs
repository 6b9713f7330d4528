//! Reading pgbench's report and the pgbench tables' bookkeeping invariants.

use crate::server::Server;

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
    pub fn read(srv: &Server) -> Sums {
        let out = srv.query(
            "select coalesce((select sum(abalance) from pgbench_accounts),0), \
                    coalesce((select sum(tbalance) from pgbench_tellers),0), \
                    coalesce((select sum(bbalance) from pgbench_branches),0), \
                    coalesce((select sum(delta) from pgbench_history),0), \
                    (select count(*) from pgbench_history)",
        );
        let v: Vec<i64> = out
            .split('|')
            .map(|s| s.trim().parse().unwrap_or(i64::MIN))
            .collect();
        assert_eq!(v.len(), 5, "unexpected sums output {out:?}");
        Sums {
            accounts: v[0],
            tellers: v[1],
            branches: v[2],
            history: v[3],
            history_rows: v[4],
        }
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
