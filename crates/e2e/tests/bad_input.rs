//! Hostile and broken clients: raw garbage, truncated frames, absurd lengths, and sessions
//! that vanish mid-transaction or mid-COPY. The server must stay up, other sessions must carry
//! on, locks held by a vanished session must be released, its uncommitted work must stay
//! invisible, and committed rows must survive (including a restart).

use keel_e2e::Server;
use keel_e2e::raw::{self, RawConn};
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A deterministic byte soup (xorshift), so failures reproduce.
fn garbage(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect()
}

fn assert_alive(srv: &mut Server, watcher: &mut RawConn, after: &str) {
    assert!(srv.is_running(), "server died after {after}");
    watcher
        .simple("select 1")
        .unwrap_or_else(|e| panic!("existing session broken after {after}: {e}"));
    RawConn::login(srv.port())
        .and_then(|mut c| c.simple("select 2"))
        .unwrap_or_else(|e| panic!("new session refused after {after}: {e}"));
}

/// Sends `bytes` on a fresh connection, then waits for the server to close it or go quiet.
fn poke(port: u16, bytes: &[u8], quiet: Duration) -> (Vec<u8>, bool) {
    let mut c = match RawConn::connect(port) {
        Ok(c) => c,
        Err(e) => panic!("connect: {e}"),
    };
    // The server may hang up before we finish writing: that is fine.
    let _ = c.stream.write_all(bytes);
    c.drain(quiet)
}

#[test]
fn garbage_and_malformed_frames_do_not_hurt_the_server() {
    let mut srv = Server::start(&[]);
    let port = srv.port();
    let mut watcher = RawConn::login(port).unwrap_or_else(|e| panic!("login: {e}"));
    watcher
        .simple("create table keep (id int); insert into keep values (1), (2), (3)")
        .unwrap_or_else(|e| panic!("{e}"));

    for seed in 1..=5u64 {
        poke(port, &garbage(8192, seed), Duration::from_secs(2));
        assert_alive(&mut srv, &mut watcher, &format!("garbage seed {seed}"));
    }

    // Truncated startup packet: claims 100 bytes, sends 10, hangs up.
    let mut truncated = 100u32.to_be_bytes().to_vec();
    truncated.extend_from_slice(&196608u32.to_be_bytes());
    truncated.extend_from_slice(b"us");
    poke(port, &truncated, Duration::from_millis(300));
    assert_alive(&mut srv, &mut watcher, "truncated startup packet");

    // Oversized startup length: must be refused at once, not buffered for 2 GB.
    let mut huge = 0x7fff_fff0u32.to_be_bytes().to_vec();
    huge.extend_from_slice(&196608u32.to_be_bytes());
    let t = Instant::now();
    let (_, closed) = poke(port, &huge, Duration::from_secs(10));
    assert!(
        closed,
        "server kept a connection with a 2 GB startup length open"
    );
    assert!(t.elapsed() < Duration::from_secs(10));
    assert_alive(&mut srv, &mut watcher, "oversized startup length");

    // Too-small startup length.
    poke(port, &2u32.to_be_bytes(), Duration::from_secs(2));
    assert_alive(&mut srv, &mut watcher, "startup length 2");

    // After a good login: oversized message length, length < 4, unknown message type,
    // truncated Query, garbage.
    let bad_frames: Vec<(&str, Vec<u8>, bool)> = vec![
        (
            "Query with 2 GB length",
            [&b"Q"[..], &0x7fff_ff00u32.to_be_bytes()].concat(),
            true,
        ),
        (
            "Query with length 0",
            [&b"Q"[..], &0u32.to_be_bytes()].concat(),
            true,
        ),
        (
            "unknown message type",
            [&[0xffu8][..], &4u32.to_be_bytes()].concat(),
            true,
        ),
        (
            "truncated Query",
            [&b"Q"[..], &100u32.to_be_bytes(), &b"select"[..]].concat(),
            false,
        ),
        ("garbage after login", garbage(4096, 99), false),
    ];
    for (what, frame, must_close) in bad_frames {
        let mut c = RawConn::login(port).unwrap_or_else(|e| panic!("login: {e}"));
        let _ = c.stream.write_all(&frame);
        let (_, closed) = c.drain(Duration::from_secs(if must_close { 10 } else { 1 }));
        if must_close {
            assert!(
                closed,
                "{what}: server should report an error and close the connection"
            );
        }
        c.vanish();
        assert_alive(&mut srv, &mut watcher, what);
    }

    // Many half-open connections at once, then all vanish.
    let conns: Vec<TcpStream> = (0..50)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", port)).ok())
        .collect();
    drop(conns);
    assert_alive(&mut srv, &mut watcher, "50 idle connections dropped");

    let rows = watcher
        .simple("select count(*) from keep")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        rows.iter().any(|(t, b)| *t == b'D' && b.ends_with(b"3")),
        "{rows:?}"
    );
}

#[test]
fn disconnect_mid_transaction_releases_locks_and_discards_work() {
    let mut srv = Server::start(&[]);
    let setup = "create table acct (id int primary key, v int not null); \
                 insert into acct select g, 100 from generate_series(1, 10) g";
    srv.query(setup);

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    rt.block_on(async {
        // A long-lived session that must not notice anything.
        let (client, conn) = tokio_postgres::connect(&srv.conn_str(), tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|e| panic!("connect: {e:?}"));
        let bg = tokio::spawn(conn);

        for round in 0..3 {
            let mut a = RawConn::login(srv.port()).unwrap_or_else(|e| panic!("{e}"));
            a.simple("begin").unwrap_or_else(|e| panic!("{e}"));
            a.simple("update acct set v = v + 1000 where id = 1")
                .unwrap_or_else(|e| panic!("{e}"));
            a.simple("insert into acct values (100, 1)")
                .unwrap_or_else(|e| panic!("{e}"));
            // Vanish while holding the row lock on id 1; on the last round, mid-statement.
            if round == 2 {
                let _ = a.send(&raw::query_message("select pg_sleep(0.5)"));
            }
            a.vanish();

            // The row lock must be released: this update must not wait forever.
            let upd = tokio::time::timeout(
                Duration::from_secs(20),
                client.execute("update acct set v = v + 1 where id = 1", &[]),
            )
            .await;
            match upd {
                Ok(Ok(n)) => assert_eq!(n, 1),
                Ok(Err(e)) => panic!("round {round}: update failed: {e:?}"),
                Err(_) => panic!("round {round}: row lock of a vanished session never released"),
            }
        }
        let one = |sql: &'static str| {
            let client = &client;
            async move {
                client
                    .query_one(sql, &[])
                    .await
                    .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
            }
        };
        let v: i32 = one("select v from acct where id = 1").await.get(0);
        let n: i64 = one("select count(*) from acct").await.get(0);
        assert_eq!(
            (v, n),
            (103, 10),
            "vanished sessions' work must be rolled back"
        );
        drop(client);
        let _ = bg.await;
    });

    srv.stop();
    srv.restart();
    assert_eq!(srv.query("select v from acct where id = 1"), "103");
    assert_eq!(srv.query("select count(*), sum(v) from acct"), "10|1003");
}

#[test]
fn disconnect_mid_copy_keeps_committed_rows_only() {
    let mut srv = Server::start(&[]);
    srv.query("create table c (id int, s text); insert into c values (1, 'a'), (2, 'b'), (3, 'c')");
    let mut watcher = RawConn::login(srv.port()).unwrap_or_else(|e| panic!("{e}"));

    let variants: [&[u8]; 3] = [
        b"",                                          // vanish right after CopyInResponse
        b"12\tz",                                     // half a row
        &[b'd', 0, 0, 0x03, 0xe8, b'1', b'3', b'\t'], // CopyData frame cut short
    ];
    for (i, tail) in variants.iter().enumerate() {
        let mut a = RawConn::login(srv.port()).unwrap_or_else(|e| panic!("{e}"));
        a.send(&raw::query_message("copy c from stdin"))
            .unwrap_or_else(|e| panic!("{e}"));
        a.read_until(b'G')
            .unwrap_or_else(|e| panic!("no CopyInResponse: {e}"));
        a.send(&raw::copy_data(b"10\tx\n11\ty\n"))
            .unwrap_or_else(|e| panic!("{e}"));
        if i == 1 {
            let _ = a.send(&raw::copy_data(tail));
        } else {
            let _ = a.send(tail);
        }
        a.vanish();
        assert!(
            srv.is_running(),
            "server died after a client vanished mid-COPY ({i})"
        );
        let rows = watcher
            .simple("select count(*) from c")
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            rows.iter()
                .any(|(t, b)| *t == b'D' && b.ends_with(b"\x013")),
            "an abandoned COPY must add no rows (variant {i}): {rows:?}"
        );
    }

    // A COPY that completes still works afterwards, and everything committed survives a restart.
    let mut a = RawConn::login(srv.port()).unwrap_or_else(|e| panic!("{e}"));
    a.send(&raw::query_message("copy c from stdin"))
        .unwrap_or_else(|e| panic!("{e}"));
    a.read_until(b'G').unwrap_or_else(|e| panic!("{e}"));
    a.send(&raw::copy_data(b"4\td\n5\te\n"))
        .unwrap_or_else(|e| panic!("{e}"));
    a.send(&raw::copy_done()).unwrap_or_else(|e| panic!("{e}"));
    let msgs = a.read_until_ready().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !msgs.iter().any(|(t, _)| *t == b'E'),
        "complete COPY failed: {msgs:?}"
    );
    srv.stop();
    srv.restart();
    assert_eq!(
        srv.query("select id, s from c order by id"),
        "1|a\n2|b\n3|c\n4|d\n5|e"
    );
}
