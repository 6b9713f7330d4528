//! INSERT ... ON CONFLICT under contention (crates/access/src/upsert.rs): 32 sessions upsert
//! the same 100 keys, starting from an empty table, so every key's first statements race to
//! insert it. PostgreSQL's guarantee must hold: each statement either inserts or updates,
//! none fails with 23505, and no increment is lost. A second table with two unique
//! indexes (both arbiters under a bare DO NOTHING) and a third one updated only when a WHERE
//! allows it take the other paths of the protocol. The same script runs on PostgreSQL 15,
//! where it must pass too.

use keel_e2e::Server;
use keel_e2e::pgbench::parse_report;
use std::time::Duration;

const SCRIPT: &str = "\\set k random(1, 100)
INSERT INTO uc VALUES (:k, 1) ON CONFLICT (k) DO UPDATE SET n = uc.n + excluded.n;
INSERT INTO ud VALUES (:k, -(:k::int), 1) ON CONFLICT DO NOTHING;
INSERT INTO ue AS e VALUES (:k, 1) ON CONFLICT (k) DO UPDATE SET n = e.n + 1 WHERE e.n < 1000000;
";

fn run(srv: &Server) {
    srv.query(
        "DROP TABLE IF EXISTS uc, ud, ue; \
         CREATE TABLE uc (k int PRIMARY KEY, n bigint NOT NULL); \
         CREATE TABLE ud (a int PRIMARY KEY, b int UNIQUE, n int); \
         CREATE TABLE ue (k int PRIMARY KEY, n bigint NOT NULL)",
    );
    let script = srv.scratch().join("upsert.sql");
    std::fs::write(&script, SCRIPT).expect("write script");
    let script = script.to_string_lossy().to_string();
    let out = srv.pgbench(
        &[
            "-n", "-M", "prepared", "-c", "32", "-j", "2", "-T", "10", "-f", &script,
        ],
        Duration::from_secs(180),
    );
    out.assert_success();
    let r = parse_report(&out.stdout);
    let processed = r.processed.expect("pgbench reported no transaction count");
    assert!(processed > 0, "no transaction completed: {out}");
    assert_eq!(r.failed, Some(0), "an upsert failed: {out}");
    for table in ["uc", "ue"] {
        let total: u64 = srv
            .query(&format!("SELECT sum(n) FROM {table}"))
            .parse()
            .expect("sum");
        assert_eq!(total, processed, "{table}: upserts lost or doubled");
    }
    let keys: u64 = srv.query("SELECT count(*) FROM uc").parse().expect("count");
    assert!(keys <= 100, "more rows than keys: {keys}");
    assert_eq!(
        srv.query("SELECT count(*) FROM ud WHERE n = 1 AND b = -a"),
        keys.to_string(),
        "DO NOTHING kept a row per key"
    );
}

#[test]
fn concurrent_upserts_of_new_keys_insert_or_update() {
    run(&Server::start(&[]));
    run(&Server::oracle(&[]));
}
