//! Storage layout seen from SQL: UPDATEs that do not change an index's key leave that index
//! untouched (keel's stable row roots; keel-only), fillfactor leaves room on heap pages, and
//! VACUUM VERBOSE reports like PostgreSQL 15.

use keel_e2e::{Engine, Server};
use std::time::Duration;

fn sizes(srv: &Server) -> (u64, u64, u64) {
    let out = srv.query(
        "select pg_relation_size('hu'), pg_relation_size('hu_pkey'), pg_relation_size('hu_k')",
    );
    let v: Vec<u64> = out
        .split('|')
        .map(|s| {
            s.trim()
                .parse()
                .unwrap_or_else(|e| panic!("size {s:?}: {e}"))
        })
        .collect();
    match v.as_slice() {
        [h, p, k] => (*h, *p, *k),
        _ => panic!("sizes: {out:?}"),
    }
}

/// Keel's design (crates/access/README.md): an index whose key columns did not change is not
/// written at all. PostgreSQL may add index entries for non-HOT updates, so this is keel-only.
#[test]
fn non_key_updates_never_grow_indexes() {
    const N: u32 = 20_000;
    let srv = Server::start(&[]);
    if srv.engine != Engine::Keel {
        return;
    }
    srv.query(&format!(
        "create table hu (id int primary key, k int not null, payload int not null, filler text); \
         create index hu_k on hu (k); \
         insert into hu select g, g, 0, repeat('f', 40) from generate_series(1, {N}) g"
    ));
    let (heap0, pkey0, k0) = sizes(&srv);
    assert!(heap0 > 0 && pkey0 > 0 && k0 > 0, "{heap0} {pkey0} {k0}");

    // 20k random non-key UPDATEs from 8 clients.
    let script = srv.scratch().join("update_payload.sql");
    std::fs::write(
        &script,
        format!("\\set id random(1, {N})\nupdate hu set payload = payload + 1 where id = :id;\n"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let f = format!("-f{}", script.display());
    let out = srv.pgbench(
        &[
            "-n", &f, "-c", "8", "-j", "2", "-t", "2500", "-M", "prepared",
        ],
        Duration::from_secs(120),
    );
    out.assert_success();
    let rep = keel_e2e::parse_report(&out.stdout);
    assert_eq!(rep.processed, Some(20_000), "{out}");
    assert_eq!(rep.failed.unwrap_or(0), 0, "{out}");
    assert_eq!(
        srv.query("select sum(payload), count(*) from hu"),
        format!("20000|{N}"),
        "the heap was not updated as expected"
    );
    // Also a full-table non-key update in one statement.
    assert_eq!(
        srv.query("update hu set filler = repeat('g', 40)"),
        format!("UPDATE {N}")
    );
    let (heap1, pkey1, k1) = sizes(&srv);
    assert_eq!(pkey1, pkey0, "primary key index grew on non-key updates");
    assert_eq!(k1, k0, "secondary index grew on non-key updates");
    eprintln!("heap {heap0} -> {heap1}, pkey {pkey0}, hu_k {k0}");

    // Changing the secondary key writes new entries into that index only.
    assert_eq!(
        srv.query("update hu set k = k + 1000000 where id <= 5000"),
        "UPDATE 5000"
    );
    let (_, pkey2, k2) = sizes(&srv);
    assert_eq!(
        pkey2, pkey0,
        "primary key index grew on a secondary-key update"
    );
    assert!(
        k2 > k0,
        "secondary index did not grow on key changes: {k0} -> {k2}"
    );
    assert_eq!(srv.query("select id from hu where k = 1000042"), "42");
    assert_eq!(srv.query("select count(*) from hu where k = 42"), "0");
}

fn fillfactor_ratio(srv: &Server) -> f64 {
    srv.query(
        "create table ff50 (id int, v text) with (fillfactor = 50); \
         create table ff100 (id int, v text) with (fillfactor = 100); \
         insert into ff50 select g, repeat('z', 100) from generate_series(1, 10000) g; \
         insert into ff100 select g, repeat('z', 100) from generate_series(1, 10000) g",
    );
    let out = srv.query("select pg_relation_size('ff50'), pg_relation_size('ff100')");
    let v: Vec<f64> = out
        .split('|')
        .map(|s| s.trim().parse().unwrap_or_else(|e| panic!("{s:?}: {e}")))
        .collect();
    eprintln!("{:?}: fillfactor 50 / 100 sizes {v:?}", srv.engine);
    v[0] / v[1]
}

#[test]
fn fillfactor_50_doubles_the_heap() {
    for srv in [Server::start(&[]), Server::oracle(&[])] {
        let r = fillfactor_ratio(&srv);
        assert!(
            (1.7..=2.3).contains(&r),
            "{:?}: fillfactor 50 heap is {r:.2}x the fillfactor 100 heap, expected ~2x",
            srv.engine
        );
    }
}

fn vacuum_verbose(srv: &Server) -> String {
    srv.query(
        "create table vt (id int primary key, v int); \
         insert into vt select g, g from generate_series(1, 1000) g; \
         delete from vt where id <= 100",
    );
    let out = srv.psql(&["-v", "ON_ERROR_STOP=1", "-c", "vacuum verbose vt"]);
    out.assert_success();
    out.stderr
}

#[test]
fn vacuum_verbose_prints_postgres_info_lines() {
    let keel = vacuum_verbose(&Server::start(&[]));
    let pg = vacuum_verbose(&Server::oracle(&[]));
    let first = pg
        .lines()
        .find(|l| l.starts_with("INFO:"))
        .unwrap_or_else(|| panic!("PostgreSQL printed no INFO line: {pg}"));
    assert_eq!(first, "INFO:  vacuuming \"postgres.public.vt\"", "{pg}");
    assert!(
        keel.lines().any(|l| l == first),
        "keel's VACUUM VERBOSE lacks {first:?}:\n{keel}\n--- PostgreSQL ---\n{pg}"
    );
    // The second INFO line PostgreSQL prints starts the same way in keel.
    let finished = "INFO:  finished vacuuming \"postgres.public.vt\": index scans:";
    assert!(pg.lines().any(|l| l.starts_with(finished)), "{pg}");
    assert!(
        keel.lines().any(|l| l.starts_with(finished)),
        "keel lacks {finished:?}:\n{keel}\n--- PostgreSQL ---\n{pg}"
    );
}
