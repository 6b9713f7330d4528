//! Connections that never authenticate cannot lock clients out: they hold no max_connections
//! slot, authentication_timeout closes them, and with a thousand of them open a real client
//! still logs in at once.

use keel_e2e::Server;
use keel_e2e::client::{self, runtime};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Waits for the server to close `s`; returns what it sent and how long after `start` it
/// closed (None: still open `within` after `start`).
fn wait_closed(s: &mut TcpStream, start: Instant, within: Duration) -> (Vec<u8>, Option<Duration>) {
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        let left = within.saturating_sub(start.elapsed());
        if left.is_zero() {
            return (got, None);
        }
        let _ = s.set_read_timeout(Some(left));
        match s.read(&mut buf) {
            Ok(0) => return (got, Some(start.elapsed())),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return (got, None);
            }
            Err(_) => return (got, Some(start.elapsed())),
        }
    }
}

#[test]
fn a_thousand_silent_sockets_do_not_lock_clients_out() {
    let srv = Server::start(&[("max_connections", "20")]);
    let silent: Vec<TcpStream> = (0..1000)
        .map(|i| {
            TcpStream::connect(("127.0.0.1", srv.port()))
                .unwrap_or_else(|e| panic!("silent socket {i}: {e}"))
        })
        .collect();
    let rt = runtime();
    rt.block_on(async {
        // A real client logs in promptly, and so do 19 more: max_connections is theirs.
        let t = Instant::now();
        let first = client::connect(&srv.conn_str()).await;
        assert_eq!(client::value(&first, "select 1").await, "1");
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "login took {:?} with 1,000 silent sockets open",
            t.elapsed()
        );
        let mut others = Vec::new();
        for _ in 0..19 {
            others.push(client::connect(&srv.conn_str()).await);
        }
        // The 21st authenticated client is over the limit (PostgreSQL's 53300 and message).
        match tokio_postgres::connect(&srv.conn_str(), tokio_postgres::NoTls).await {
            Ok(_) => panic!("a 21st session was let in with max_connections = 20"),
            Err(e) => {
                let db = e.as_db_error().unwrap_or_else(|| panic!("{e:?}"));
                assert_eq!(
                    (db.code().code(), db.message()),
                    ("53300", "sorry, too many clients already")
                );
            }
        }
        // A cancel request still works on the full server.
        let cancel = others[0].cancel_token();
        let sleeper = &others[0];
        let sleep = sleeper.simple_query("select pg_sleep(60)");
        let canceller = async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cancel
                .cancel_query(tokio_postgres::NoTls)
                .await
                .unwrap_or_else(|e| panic!("cancel: {e}"));
        };
        let (r, ()) =
            client::within("cancelled sleep", async { tokio::join!(sleep, canceller) }).await;
        match r {
            Ok(_) => panic!("pg_sleep(60) was not cancelled"),
            Err(e) => assert_eq!(client::sqlstate(&e), "57014"),
        }
        for c in &others {
            assert_eq!(client::value(c, "select 2").await, "2");
        }
    });
    drop(silent);
}

/// A socket that sends nothing, and one that sends half a startup packet, are closed after
/// authentication_timeout with nothing sent (PostgreSQL 15's behaviour, checked on it too).
fn slow_starts_are_closed(srv: &Server) {
    let start = Instant::now();
    let mut silent =
        TcpStream::connect(("127.0.0.1", srv.port())).unwrap_or_else(|e| panic!("connect: {e}"));
    let mut partial =
        TcpStream::connect(("127.0.0.1", srv.port())).unwrap_or_else(|e| panic!("connect: {e}"));
    partial
        .write_all(&[0, 0, 0, 40, 0, 3])
        .unwrap_or_else(|e| panic!("write: {e}"));
    for (what, s) in [("silent", &mut silent), ("partial", &mut partial)] {
        let (got, closed) = wait_closed(s, start, Duration::from_secs(15));
        assert!(got.is_empty(), "{:?} {what}: sent {got:?}", srv.engine);
        let after = closed.unwrap_or_else(|| panic!("{:?} {what}: still open", srv.engine));
        assert!(
            after >= Duration::from_millis(1500) && after < Duration::from_secs(8),
            "{:?} {what}: closed after {after:?} with authentication_timeout = 2s",
            srv.engine
        );
    }
}

#[test]
fn authentication_timeout_closes_connections_that_do_not_start() {
    slow_starts_are_closed(&Server::start(&[("authentication_timeout", "2s")]));
    slow_starts_are_closed(&Server::oracle(&[("authentication_timeout", "2s")]));
}
