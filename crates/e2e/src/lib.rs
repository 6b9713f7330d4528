//! Helpers for Keel's end-to-end tests (the tests are in `tests/`): start the real `keel`
//! binary or a throwaway PostgreSQL 15, crash and restart it, and drive it with the real
//! `psql` and `pgbench`. See README.md for the environment variables.

pub mod client;
pub mod cmd;
pub mod files;
pub mod hostile;
pub mod pgbench;
pub mod raw;
pub mod server;
pub mod tmpfs;
pub mod trace;

pub use cmd::{CmdOutput, TempDir};
pub use pgbench::{PgbenchReport, Sums, logged_done, parse_report};
pub use server::{Engine, Server, free_port, keel_bin, workspace_root};

/// `KEEL_E2E_FULL=1` selects the full sizes (scale 10, 30 s runs) over the quick ones.
pub fn full() -> bool {
    std::env::var("KEEL_E2E_FULL").as_deref() == Ok("1")
}

/// An integer from the environment, or `default`.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
