//! Generated hostile input against a started keel, in bounded time, on every run: deeply
//! nested and long-chained SQL (crates/e2e/src/hostile.rs) and random protocol frames. After
//! each input the server must still be the same process and a second session must answer a
//! control query. Each run draws a new seed (printed; `KEEL_E2E_SEED` replays one);
//! `KEEL_E2E_SURVIVAL_SECS` sets the time spent on each half (default 30 s).

use keel_e2e::Server;
use keel_e2e::hostile::{self, Rng};
use keel_e2e::raw::{self, RawConn};
use std::io::Write;
use std::time::{Duration, Instant};

fn seed() -> u64 {
    std::env::var("KEEL_E2E_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
}

fn budget() -> Duration {
    Duration::from_secs(
        std::env::var("KEEL_E2E_SURVIVAL_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(30),
    )
}

/// The server is the same process and another session answers within 5 s.
fn assert_alive(srv: &mut Server, pid: Option<u32>, watcher: &mut RawConn, after: &str) {
    assert!(srv.is_running(), "server died after {after}");
    assert_eq!(srv.pid(), pid, "server restarted after {after}");
    let t = Instant::now();
    watcher
        .simple("select 1")
        .unwrap_or_else(|e| panic!("control session broken after {after}: {e}"));
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "control query took {:?} after {after}",
        t.elapsed()
    );
}

fn short(s: &str) -> String {
    if s.len() <= 200 {
        return s.to_string();
    }
    format!("{} ... ({} bytes)", &s[..200], s.len())
}

#[test]
fn generated_sql_never_takes_the_server_down() {
    let seed = seed();
    eprintln!("survival SQL seed {seed} (KEEL_E2E_SEED={seed} replays it)");
    let mut rng = Rng::new(seed);
    let mut srv = Server::start(&[]);
    let pid = srv.pid();
    let mut watcher = RawConn::login(srv.port()).expect("login");
    let mut client = RawConn::login(srv.port()).expect("login");
    client
        .simple("set statement_timeout = '5s'")
        .expect("set statement_timeout");
    let (start, mut n, mut errors) = (Instant::now(), 0, 0);
    while start.elapsed() < budget() {
        let sql = hostile::statement(&mut rng);
        client.send(&raw::query_message(&sql)).expect("send");
        // The reply must come: the statement's own deadline is 5 s, the read timeout 30 s.
        let msgs = client
            .read_until_ready()
            .unwrap_or_else(|e| panic!("no answer to {} (seed {seed}): {e}", short(&sql)));
        if let Some((_, body)) = msgs.iter().find(|(t, _)| *t == b'E') {
            errors += 1;
            // XX000 is a caught panic: a bug, even though the server survived it.
            assert_ne!(
                raw::error_code(body).as_deref(),
                Some("XX000"),
                "internal error for {} (seed {seed}): {}",
                short(&sql),
                String::from_utf8_lossy(body)
            );
        }
        assert_alive(&mut srv, pid, &mut watcher, &short(&sql));
        n += 1;
    }
    eprintln!("{n} generated statements, {errors} answered with an error");
}

#[test]
fn generated_protocol_frames_never_take_the_server_down() {
    let seed = seed();
    eprintln!("survival frames seed {seed} (KEEL_E2E_SEED={seed} replays it)");
    let mut rng = Rng::new(seed);
    let mut srv = Server::start(&[]);
    let pid = srv.pid();
    let mut watcher = RawConn::login(srv.port()).expect("login");
    let (start, mut n) = (Instant::now(), 0);
    while start.elapsed() < budget() {
        let mut c = RawConn::login(srv.port()).expect("login");
        let frames: Vec<u8> = (0..rng.size(8))
            .flat_map(|_| hostile::protocol_frame(&mut rng))
            .collect();
        // The server may close the connection before we finish: that is fine.
        let _ = c.stream.write_all(&frames);
        let _ = c.stream.write_all(&raw::query_message("select 1"));
        c.drain(Duration::from_millis(50));
        c.vanish();
        assert_alive(&mut srv, pid, &mut watcher, &format!("frames {frames:?}"));
        n += 1;
    }
    eprintln!("{n} connections of generated frames");
}
