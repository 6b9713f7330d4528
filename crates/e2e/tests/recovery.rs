//! Crash recovery of special cases: UNLOGGED tables (emptied after a crash, kept after a clean
//! shutdown), torn pages repaired from full-page images in the WAL, and a corrupt page after a
//! clean shutdown (nothing to repair it from) reported as XX001 without taking the server down.
//!
//! The UNLOGGED and torn-page scenarios run against keel and against PostgreSQL 15 with the
//! same assertions; the checksum scenario is keel-only (PostgreSQL's default initdb has no
//! data checksums, so it would not notice).

use keel_e2e::Server;
use keel_e2e::client::{connect, runtime, sqlstate, try_affected, value};
use keel_e2e::files::{BLOCK, relation_file, scribble_blocks};

fn unlogged(mut srv: Server) {
    let engine = srv.engine;
    srv.query(
        "create table logged_t (id int primary key, v text not null); \
         create unlogged table unlogged_t (id int primary key, v text not null); \
         create index unlogged_v on unlogged_t (v); \
         insert into logged_t select g, 'l' || g::text from generate_series(1, 500) g; \
         insert into unlogged_t select g, 'u' || g::text from generate_series(1, 500) g",
    );
    assert_eq!(srv.query("select count(*) from unlogged_t"), "500");

    srv.crash();
    srv.restart();
    assert_eq!(
        srv.query("select count(*) from unlogged_t"),
        "0",
        "{engine:?}: unlogged table not emptied by crash recovery"
    );
    assert_eq!(
        srv.query("select count(*), sum(id) from logged_t"),
        "500|125250",
        "{engine:?}: logged table lost committed rows"
    );
    // The indexes were reset too: the old keys are free again, and lookups find the new rows.
    srv.query("insert into unlogged_t select g, 'again' || g::text from generate_series(1, 300) g");
    assert_eq!(
        srv.query("select v from unlogged_t where id = 7"),
        "again7",
        "{engine:?}"
    );
    assert_eq!(
        srv.query("select id from unlogged_t where v = 'again250'"),
        "250",
        "{engine:?}"
    );
    assert_eq!(
        srv.query("select count(*) from unlogged_t where v = 'u7'"),
        "0"
    );

    // A clean shutdown keeps the unlogged rows.
    srv.stop();
    srv.restart();
    assert_eq!(
        srv.query("select count(*), sum(id) from unlogged_t"),
        "300|45150",
        "{engine:?}: unlogged rows lost across a clean restart"
    );
    assert_eq!(
        srv.query("select v from unlogged_t where id = 300"),
        "again300"
    );
    assert_eq!(srv.query("select count(*) from logged_t"), "500");
}

#[test]
fn unlogged_table_is_emptied_by_crash_and_kept_by_clean_shutdown() {
    unlogged(Server::start(&[]));
    unlogged(Server::oracle(&[]));
}

const ROWS: u32 = 3000;

fn torn(mut srv: Server) {
    let engine = srv.engine;
    srv.query(&format!(
        "create table torn_t (id int primary key, v text not null); \
         insert into torn_t select g, repeat('x', 80) || g::text from generate_series(1, {ROWS}) g"
    ));
    srv.query("checkpoint");
    // Every heap page changes after the checkpoint, so each gets a full-page image.
    assert_eq!(
        srv.query("update torn_t set v = 'updated-' || id::text"),
        format!("UPDATE {ROWS}"),
        "{engine:?}"
    );
    let file = relation_file(&srv, "torn_t");
    srv.crash();
    let blocks = scribble_blocks(&file, None, BLOCK / 2, BLOCK);
    assert!(
        blocks >= 4,
        "{engine:?}: only {blocks} blocks in {}",
        file.display()
    );
    srv.restart();
    assert_eq!(
        srv.query("select count(*), sum(id) from torn_t"),
        format!("{ROWS}|{}", ROWS as u64 * (ROWS as u64 + 1) / 2),
        "{engine:?}: rows lost after torn pages"
    );
    assert_eq!(
        srv.query("select count(*) from torn_t where v = 'updated-' || id::text"),
        ROWS.to_string(),
        "{engine:?}: rows without their updated value after torn pages"
    );
    assert_eq!(
        srv.query("select v from torn_t where id = 1234"),
        "updated-1234"
    );
}

#[test]
fn torn_pages_are_repaired_from_full_page_images() {
    torn(Server::start(&[]));
    torn(Server::oracle(&[]));
}

#[test]
fn corrupt_page_after_clean_shutdown_is_xx001_and_server_stays_up() {
    let mut srv = Server::start(&[]);
    if srv.engine != keel_e2e::Engine::Keel {
        return; // PostgreSQL without data checksums does not detect this.
    }
    srv.query(
        "create table bad_t (id int, v text not null); \
         insert into bad_t select g, repeat('y', 100) from generate_series(1, 2000) g; \
         create table good_t (id int); insert into good_t values (1), (2), (3)",
    );
    srv.query("checkpoint");
    srv.stop();
    let file = relation_file(&srv, "bad_t");
    scribble_blocks(&file, Some(&[2]), BLOCK / 2, BLOCK);
    srv.restart();
    let rt = runtime();
    rt.block_on(async {
        let c = connect(&srv.conn_str()).await;
        match try_affected(&c, "select count(*) from bad_t").await {
            Err(e) => assert_eq!(sqlstate(&e), "XX001", "{e:?}"),
            Ok(_) => panic!("a scan over a corrupt page succeeded"),
        }
        // The same session and new ones keep working; other tables are readable.
        assert_eq!(value(&c, "select count(*) from good_t").await, "3");
        let d = connect(&srv.conn_str()).await;
        assert_eq!(value(&d, "select 1").await, "1");
        match try_affected(&d, "select sum(id) from bad_t").await {
            Err(e) => assert_eq!(sqlstate(&e), "XX001", "{e:?}"),
            Ok(_) => panic!("second scan over a corrupt page succeeded"),
        }
        assert_eq!(value(&d, "select sum(id) from good_t").await, "6");
    });
    assert!(srv.is_running(), "keel died on a corrupt page");
}

/// A second keel on a live data directory must refuse to start: were it to run recovery and
/// write its own WAL there, both servers would lose committed rows. Keel-only: the check is of
/// the keel binary's start-up (PostgreSQL's postmaster.pid check behaves the same way).
#[test]
fn a_second_server_on_a_live_data_directory_refuses_to_start() {
    let srv = Server::start(&[]);
    if srv.engine != keel_e2e::Engine::Keel {
        return;
    }
    srv.query(
        "create table kept (id int primary key); insert into kept select generate_series(1, 100)",
    );
    let mut child = std::process::Command::new(keel_e2e::keel_bin())
        .arg("--data-dir")
        .arg(srv.data_dir())
        .arg("--port")
        .arg(keel_e2e::free_port().to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run a second keel");
    // A second keel that (wrongly) starts never exits on its own: give it the start timeout.
    let deadline = std::time::Instant::now() + keel_e2e::server::start_timeout();
    while child.try_wait().expect("wait for keel").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let second = child.wait_with_output().expect("second keel's output");
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "second keel started: {stderr}");
    assert!(
        stderr.contains("FATAL:  lock file \"postmaster.pid\" already exists"),
        "{stderr}"
    );
    assert!(stderr.contains("HINT:  Is another keel (PID "), "{stderr}");
    assert!(
        !stderr.contains("redo"),
        "second keel replayed the WAL: {stderr}"
    );
    // The first server is undisturbed.
    srv.query("insert into kept values (101)");
    assert_eq!(srv.query("select count(*), sum(id) from kept"), "101|5151");
}

/// Views, their INSTEAD OF triggers and a CREATE OR REPLACE are catalog changes: committed,
/// they survive a SIGKILL.
fn views(mut srv: Server) {
    let engine = srv.engine;
    srv.query(
        "create table vk_t (a int primary key, b int); \
         insert into vk_t select g, g * 10 from generate_series(1, 50) g; \
         create view vk_v as select a, b from vk_t where a <= 10; \
         create or replace view vk_v as select a, b, b + 1 as b1 from vk_t where a <= 10; \
         create view vk_w as select a from vk_v where a > 5; \
         create function vk_f() returns trigger language plpgsql as \
           $$ begin insert into vk_t values (new.a, null); return new; end $$; \
         create trigger vk_ins instead of insert on vk_w for each row execute function vk_f()",
    );
    srv.crash();
    srv.restart();
    assert_eq!(
        srv.query("select count(*), sum(b1) from vk_v"),
        "10|560",
        "{engine:?}: view lost or changed by crash recovery"
    );
    assert_eq!(srv.query("select count(*) from vk_w"), "5", "{engine:?}");
    srv.query("insert into vk_w values (60)");
    assert_eq!(
        srv.query("select count(*) from vk_t where b is null"),
        "1",
        "{engine:?}: INSTEAD OF trigger did not run"
    );
    assert_eq!(srv.query("select count(*) from vk_t"), "51", "{engine:?}");
}

#[test]
fn views_and_their_triggers_survive_a_crash() {
    views(Server::start(&[]));
    views(Server::oracle(&[]));
}
