//! DDL across a SIGKILL: tables, indexes and sequences are created, altered, renamed,
//! truncated and dropped, partly before a CHECKPOINT (so recovery replays catalog changes on
//! top of a checkpointed catalog that already holds some of the same relations), then the
//! server is killed and restarted.
//!
//! "The catalog before the crash" is made by a twin server that runs the same statements and
//! is never killed: DDL assigns oids and relation files from a counter, so equal statements
//! give equal catalogs. For keel the two catalogs saved by a clean shutdown (catalog.json) must
//! be byte-equal; for both keel and PostgreSQL (`KEEL_E2E_TARGET=pg`) what SQL sees must be the
//! same: the same relations answer, with the same columns and rows.

use keel_e2e::Server;
use keel_e2e::server::Engine;

/// Before the checkpoint.
const FIRST: &[&str] = &[
    "create table keep_t (id int primary key, v text)",
    "create index keep_v on keep_t (v)",
    "insert into keep_t select g, 'k' || g::text from generate_series(1, 200) g",
    "create table alter_t (id serial primary key, a int)",
    "insert into alter_t (a) select g from generate_series(1, 50) g",
    "create table drop_later (id int primary key)",
    "create table rename_me (id int primary key, w int)",
    "create sequence free_seq",
];

/// After the checkpoint, before the kill: only the log has these.
const SECOND: &[&str] = &[
    "alter table alter_t add column b text",
    "update alter_t set b = 'b' || a::text",
    "alter table alter_t rename column a to a2",
    "create index alter_b on alter_t (b)",
    "drop table drop_later",
    "alter table rename_me rename to renamed",
    "alter table renamed rename column w to w2",
    "insert into renamed values (1, 10), (2, 20)",
    "drop index keep_v",
    "create index keep_v2 on keep_t (v, id)",
    "truncate keep_t",
    "insert into keep_t values (1, 'after truncate')",
    "create table new_t (id bigserial primary key, x int not null, check (x > 0))",
    "insert into new_t (x) values (5), (6)",
    "drop sequence free_seq",
    "create sequence other_seq start 100",
    "create table new_t2 (id int primary key, r int references new_t (id))",
    "begin; create table rolled_back (id int); rollback",
];

/// What SQL sees of the catalog: every relation of the script, answered or not, with its rows.
const PROBES: &[&str] = &[
    "select id, v from keep_t order by id",
    "select id, b from alter_t order by id limit 3",
    "select count(*) from alter_t where b = 'b7'",
    "select * from renamed order by id",
    "select w2 from renamed where id = 2",
    "select id, x from new_t order by id",
    "select nextval('other_seq')",
    "select nextval('alter_t_id_seq')",
    "select count(*) from new_t2",
];

const GONE: &[&str] = &[
    "select * from drop_later",
    "select * from rename_me",
    "select a from alter_t",
    "select * from rolled_back",
    "select nextval('free_seq')",
];

fn run_all(servers: &[&Server], stmts: &[&str]) {
    for s in stmts {
        for srv in servers {
            srv.query(s);
        }
    }
}

fn probe(srv: &Server) -> Vec<String> {
    let mut out: Vec<String> = PROBES.iter().map(|q| srv.query(q)).collect();
    for q in GONE {
        let r = srv.psql(&["-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", q]);
        out.push(format!("{q}: ok={}", r.success()));
    }
    // A new relation gets a fresh oid and relation file that collide with nothing.
    srv.query("create table after_crash (id int primary key)");
    srv.query("insert into after_crash values (1)");
    out.push(srv.query("select count(*) from after_crash"));
    out
}

#[test]
fn ddl_across_a_sigkill_recovers_the_same_catalog() {
    let mut crashed = Server::start(&[("checkpoint_timeout", "3600")]);
    let mut twin = Server::start(&[("checkpoint_timeout", "3600")]);
    run_all(&[&crashed, &twin], FIRST);
    crashed.query("checkpoint");
    twin.query("checkpoint");
    run_all(&[&crashed, &twin], SECOND);

    crashed.crash();
    crashed.restart();

    if crashed.engine == Engine::Keel {
        // The catalog saved by a clean shutdown of each, byte for byte (JSON in oid order).
        crashed.stop();
        twin.stop();
        let read = |s: &Server| {
            std::fs::read(s.data_dir().join("catalog.json"))
                .unwrap_or_else(|e| panic!("read catalog.json: {e}"))
        };
        let (a, b) = (read(&crashed), read(&twin));
        assert!(
            a == b,
            "catalog after recovery differs from the one before the crash:\nrecovered: {}\nbefore: {}",
            String::from_utf8_lossy(&a),
            String::from_utf8_lossy(&b)
        );
        crashed.restart();
        twin.restart();
    }

    let (got, want) = (probe(&crashed), probe(&twin));
    assert_eq!(got, want, "what SQL sees differs after the crash");
    assert_eq!(want[0], "1|after truncate");
    assert!(want.iter().filter(|l| l.ends_with("ok=false")).count() == GONE.len());
}
