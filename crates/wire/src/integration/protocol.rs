//! The protocol layer driven by tokio-postgres and by raw bytes.

use super::common::{conn_str, start};
use keel_wire::{AuthMethod, ServeConfig};
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_postgres::{NoTls, SimpleQueryMessage};

async fn connect(port: u16) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(&conn_str(port), NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
}

fn rows_of(msgs: &[SimpleQueryMessage]) -> Vec<String> {
    msgs.iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("NULL").to_string()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simple_query_rows_errors_and_empty() {
    let srv = start(ServeConfig::default(), None).await;
    let c = connect(srv.port).await;
    let msgs = c.simple_query("select 3").await.unwrap();
    assert_eq!(rows_of(&msgs), vec!["1", "2", "3"]);
    assert!(matches!(
        msgs.last(),
        Some(SimpleQueryMessage::CommandComplete(3))
    ));
    let err = c.simple_query("error").await.unwrap_err();
    let db = err.as_db_error().unwrap();
    assert_eq!(db.code().code(), "42601");
    assert_eq!(
        db.position(),
        Some(&tokio_postgres::error::ErrorPosition::Original(1))
    );
    // The connection is usable after an error.
    assert_eq!(
        rows_of(&c.simple_query("select 1; select 2").await.unwrap()),
        vec!["1", "1", "2"]
    );
    assert!(rows_of(&c.simple_query("").await.unwrap()).is_empty());
    // Transaction status flows into ReadyForQuery.
    c.simple_query("begin").await.unwrap();
    assert!(c.simple_query("error").await.is_err());
    assert_eq!(
        c.simple_query("select 1")
            .await
            .unwrap_err()
            .as_db_error()
            .unwrap()
            .code()
            .code(),
        "25P02"
    );
    c.simple_query("rollback").await.unwrap();
    assert_eq!(
        rows_of(&c.simple_query("select 1").await.unwrap()),
        vec!["1"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extended_named_statements_and_params() {
    let srv = start(ServeConfig::default(), None).await;
    let c = connect(srv.port).await;
    let st = c.prepare("select $1").await.unwrap();
    assert_eq!(st.params(), &[tokio_postgres::types::Type::TEXT]);
    assert_eq!(st.columns()[0].name(), "echo");
    for v in ["a", "bb", ""] {
        let rows = c.query(&st, &[&v]).await.unwrap();
        let got: &str = rows[0].get(0);
        assert_eq!(got, v);
    }
    let none: Option<&str> = None;
    let rows = c.query(&st, &[&none]).await.unwrap();
    assert_eq!(rows[0].get::<_, Option<&str>>(0), None);
    // Unnamed statement path (query with a string).
    let rows = c.query("select 5", &[]).await.unwrap();
    assert_eq!(rows.len(), 5);
    // Errors in Parse come back and the connection survives.
    let e = c.prepare("error").await.unwrap_err();
    assert_eq!(e.as_db_error().unwrap().code().code(), "42601");
    assert_eq!(c.query("select 2", &[]).await.unwrap().len(), 2);
    // Notices reach the client without disturbing results.
    c.batch_execute("notice").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn portal_max_rows_suspends() {
    let srv = start(ServeConfig::default(), None).await;
    let mut c = connect(srv.port).await;
    let tx = c.transaction().await.unwrap();
    let st = tx.prepare("select 10").await.unwrap();
    let portal = tx.bind(&st, &[]).await.unwrap();
    let mut total = 0;
    let mut batches = 0;
    loop {
        let rows = tx.query_portal(&portal, 3).await.unwrap();
        if rows.is_empty() {
            break;
        }
        total += rows.len();
        batches += 1;
    }
    assert_eq!((total, batches), (10, 4));
    tx.commit().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_request_interrupts_a_query() {
    let srv = start(ServeConfig::default(), None).await;
    let c = connect(srv.port).await;
    let token = c.cancel_token();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        token.cancel_query(NoTls).await.unwrap();
    });
    let t0 = std::time::Instant::now();
    let e = c.simple_query("sleep").await.unwrap_err();
    assert_eq!(e.as_db_error().unwrap().code().code(), "57014");
    assert!(t0.elapsed() < Duration::from_secs(10));
    canceller.await.unwrap();
    // A cancel that arrived while idle does not hit the next query.
    assert_eq!(
        rows_of(&c.simple_query("select 1").await.unwrap()),
        vec!["1"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scram_login() {
    let srv = start(
        ServeConfig {
            auth: AuthMethod::ScramSha256,
            ..Default::default()
        },
        Some("s3cret"),
    )
    .await;
    let good = format!("{} password=s3cret", conn_str(srv.port));
    let (c, conn) = tokio_postgres::connect(&good, NoTls).await.unwrap();
    tokio::spawn(conn);
    assert_eq!(
        rows_of(&c.simple_query("select 1").await.unwrap()),
        vec!["1"]
    );
    let bad = format!("{} password=nope", conn_str(srv.port));
    let e = tokio_postgres::connect(&bad, NoTls).await.err().unwrap();
    let db = e.as_db_error().unwrap();
    assert_eq!(db.code().code(), "28P01");
    assert_eq!(
        db.message(),
        "password authentication failed for user \"tester\""
    );
    // A second login reuses the cached verifier.
    let (c2, conn2) = tokio_postgres::connect(&good, NoTls).await.unwrap();
    tokio::spawn(conn2);
    c2.simple_query("select 1").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_many_connections() {
    let srv = start(
        ServeConfig {
            max_connections: 1,
            ..Default::default()
        },
        None,
    )
    .await;
    let c = connect(srv.port).await;
    let e = tokio_postgres::connect(&conn_str(srv.port), NoTls)
        .await
        .err()
        .unwrap();
    let db = e.as_db_error().unwrap();
    assert_eq!(
        (db.code().code(), db.message()),
        ("53300", "sorry, too many clients already")
    );
    c.simple_query("select 1").await.unwrap();
    drop(c);
    // The slot is released when the connection ends.
    for _ in 0..100 {
        if tokio_postgres::connect(&conn_str(srv.port), NoTls)
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("slot never released");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_failure_is_reported() {
    let srv = start(ServeConfig::default(), None).await;
    let s = format!("host=127.0.0.1 port={} user=u dbname=nodb", srv.port);
    let e = tokio_postgres::connect(&s, NoTls).await.err().unwrap();
    assert_eq!(e.as_db_error().unwrap().code().code(), "3D000");
}

// ---- raw protocol ----------------------------------------------------------------------------

fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

fn startup_packet(version: i32) -> Vec<u8> {
    let mut body = version.to_be_bytes().to_vec();
    body.extend_from_slice(b"user\0raw\0database\0db\0\0");
    let mut v = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    v.extend(body);
    v
}

/// Reads backend messages until ReadyForQuery or EOF; returns (tag, body) pairs.
async fn read_until_ready(s: &mut TcpStream) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    loop {
        let mut hdr = [0u8; 5];
        if s.read_exact(&mut hdr).await.is_err() {
            return out;
        }
        let len = i32::from_be_bytes([hdr[1], hdr[2], hdr[3], hdr[4]]) as usize;
        let mut body = vec![0; len - 4];
        s.read_exact(&mut body).await.unwrap();
        let done = hdr[0] == b'Z';
        out.push((hdr[0], body));
        if done {
            return out;
        }
    }
}

async fn raw_session(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    s.write_all(&startup_packet(196608)).await.unwrap();
    let msgs = read_until_ready(&mut s).await;
    let tags: Vec<u8> = msgs.iter().map(|m| m.0).collect();
    assert_eq!(tags.first(), Some(&b'R'));
    assert!(tags.contains(&b'K') && tags.contains(&b'S'));
    s
}

fn tags(msgs: &[(u8, Vec<u8>)]) -> String {
    msgs.iter().map(|m| m.0 as char).collect()
}

fn error_message(body: &[u8]) -> (String, String, String) {
    let mut sev = String::new();
    let mut code = String::new();
    let mut m = String::new();
    for f in body.split(|&b| b == 0).filter(|f| !f.is_empty()) {
        let v = String::from_utf8_lossy(&f[1..]).to_string();
        match f[0] {
            b'S' => sev = v,
            b'C' => code = v,
            b'M' => m = v,
            _ => {}
        }
    }
    (sev, code, m)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_skip_until_sync() {
    let srv = start(ServeConfig::default(), None).await;
    let mut s = raw_session(srv.port).await;
    let mut batch = Vec::new();
    batch.extend(msg(b'P', b"\0error\0\0\0"));
    batch.extend(msg(b'B', b"\0\0\0\0\0\0\0\0"));
    batch.extend(msg(b'E', b"\0\0\0\0\0"));
    batch.extend(msg(b'Q', b"select 1\0")); // skipped too
    batch.extend(msg(b'S', b""));
    batch.extend(msg(b'P', b"\0select 2\0\0\0"));
    batch.extend(msg(b'B', b"\0\0\0\0\0\0\0\0"));
    batch.extend(msg(b'D', b"P\0"));
    batch.extend(msg(b'E', b"\0\0\0\0\0"));
    batch.extend(msg(b'C', b"S\0"));
    batch.extend(msg(b'S', b""));
    s.write_all(&batch).await.unwrap();
    let first = read_until_ready(&mut s).await;
    assert_eq!(tags(&first), "EZ");
    assert_eq!(error_message(&first[0].1).1, "42601");
    let second = read_until_ready(&mut s).await;
    assert_eq!(tags(&second), "12TDDC3Z");
    // Describe of a missing statement, then Execute with max_rows, PortalSuspended.
    let mut batch = Vec::new();
    batch.extend(msg(b'P', b"s\0select 3\0\0\0"));
    batch.extend(msg(b'D', b"Ss\0"));
    batch.extend(msg(b'B', b"p\0s\0\0\0\0\0\0\0"));
    batch.extend(msg(
        b'E',
        &[b"p\0".as_slice(), &2i32.to_be_bytes()].concat(),
    ));
    batch.extend(msg(
        b'E',
        &[b"p\0".as_slice(), &2i32.to_be_bytes()].concat(),
    ));
    batch.extend(msg(b'H', b""));
    s.write_all(&batch).await.unwrap();
    // Flush makes the results visible before Sync.
    let mut got = Vec::new();
    while got.len() < 9 {
        let mut hdr = [0u8; 5];
        s.read_exact(&mut hdr).await.unwrap();
        let len = i32::from_be_bytes([hdr[1], hdr[2], hdr[3], hdr[4]]) as usize;
        let mut body = vec![0; len - 4];
        s.read_exact(&mut body).await.unwrap();
        got.push((hdr[0], body));
    }
    assert_eq!(tags(&got), "1tT2DDsDC");
    s.write_all(&msg(b'S', b"")).await.unwrap();
    assert_eq!(tags(&read_until_ready(&mut s).await), "Z");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_in_and_out() {
    let srv = start(ServeConfig::default(), None).await;
    let mut s = raw_session(srv.port).await;
    s.write_all(&msg(b'Q', b"copy t from stdin\0"))
        .await
        .unwrap();
    // CopyInResponse arrives flushed, before any data is sent.
    let mut hdr = [0u8; 5];
    s.read_exact(&mut hdr).await.unwrap();
    assert_eq!(hdr[0], b'G');
    let mut rest = vec![0; i32::from_be_bytes([hdr[1], hdr[2], hdr[3], hdr[4]]) as usize - 4];
    s.read_exact(&mut rest).await.unwrap();
    let mut batch = Vec::new();
    batch.extend(msg(b'd', b"1\n2\n"));
    batch.extend(msg(b'H', b""));
    batch.extend(msg(b'd', b"3\n"));
    batch.extend(msg(b'c', b""));
    s.write_all(&batch).await.unwrap();
    let r = read_until_ready(&mut s).await;
    assert_eq!(tags(&r), "CZ");
    assert_eq!(r[0].1, b"COPY 3\0");
    // CopyFail -> 57014 with the client's message.
    s.write_all(&msg(b'Q', b"copy t from stdin\0"))
        .await
        .unwrap();
    s.read_exact(&mut hdr).await.unwrap();
    s.read_exact(&mut rest).await.unwrap();
    let mut batch = msg(b'd', b"1\n");
    batch.extend(msg(b'f', b"user gave up\0"));
    s.write_all(&batch).await.unwrap();
    let r = read_until_ready(&mut s).await;
    assert_eq!(tags(&r), "EZ");
    let (_, code, m) = error_message(&r[0].1);
    assert_eq!(
        (code.as_str(), m.as_str()),
        ("57014", "COPY from stdin failed: user gave up")
    );
    // COPY TO STDOUT.
    s.write_all(&msg(b'Q', b"copy t to stdout\0"))
        .await
        .unwrap();
    let r = read_until_ready(&mut s).await;
    assert_eq!(tags(&r), "HdddcCZ");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_and_protocol_violations_disconnect_cleanly() {
    let srv = start(ServeConfig::default(), None).await;
    // Unknown message type.
    let mut s = raw_session(srv.port).await;
    s.write_all(&msg(b'x', b"hello")).await.unwrap();
    let r = read_until_ready(&mut s).await;
    assert_eq!(tags(&r), "E");
    assert_eq!(
        error_message(&r[0].1),
        (
            "FATAL".into(),
            "08P01".into(),
            "invalid frontend message type 120".into()
        )
    );
    // Bad length.
    let mut s = raw_session(srv.port).await;
    s.write_all(&[b'Q', 0, 0, 0, 2]).await.unwrap();
    let r = read_until_ready(&mut s).await;
    assert_eq!(error_message(&r[0].1).2, "invalid message length");
    // Oversized Sync.
    let mut s = raw_session(srv.port).await;
    s.write_all(&[b'S', 0x7f, 0, 0, 0]).await.unwrap();
    let r = read_until_ready(&mut s).await;
    assert_eq!(error_message(&r[0].1).2, "invalid message length");
    // Malformed body: ERROR, and the session goes on.
    let mut s = raw_session(srv.port).await;
    s.write_all(&msg(b'Q', b"no terminator")).await.unwrap();
    let r = read_until_ready(&mut s).await;
    assert_eq!(tags(&r), "EZ");
    assert_eq!(
        error_message(&r[0].1),
        (
            "ERROR".into(),
            "08P01".into(),
            "invalid string in message".into()
        )
    );
    s.write_all(&msg(b'Q', b"select 1\0")).await.unwrap();
    assert_eq!(tags(&read_until_ready(&mut s).await), "TDCZ");
    // Pure garbage instead of a startup packet.
    let mut s = TcpStream::connect(("127.0.0.1", srv.port)).await.unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let r = read_until_ready(&mut s).await;
    assert_eq!(error_message(&r[0].1).0, "FATAL");
    // Unsupported protocol version.
    let mut s = TcpStream::connect(("127.0.0.1", srv.port)).await.unwrap();
    s.write_all(&startup_packet(0x0002_0000)).await.unwrap();
    let r = read_until_ready(&mut s).await;
    assert_eq!(error_message(&r[0].1).1, "0A000");
    // SSLRequest is answered 'N', then a normal startup works.
    let mut s = TcpStream::connect(("127.0.0.1", srv.port)).await.unwrap();
    s.write_all(&[0, 0, 0, 8, 4, 210, 22, 47]).await.unwrap();
    let mut n = [0u8; 1];
    s.read_exact(&mut n).await.unwrap();
    assert_eq!(&n, b"N");
    s.write_all(&startup_packet(196608)).await.unwrap();
    assert_eq!(
        read_until_ready(&mut s).await.last().map(|m| m.0),
        Some(b'Z')
    );
    // Random bytes after startup, many times: the server survives and every backend ends.
    let before = srv.terminated.load(Ordering::SeqCst);
    let mut seed = 0x1234_5678u64;
    for i in 0..50 {
        let mut s = raw_session(srv.port).await;
        let mut junk = vec![0u8; 64 + i * 7];
        for b in junk.iter_mut() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            *b = seed as u8;
        }
        let _ = s.write_all(&junk).await;
        let _ = tokio::time::timeout(Duration::from_millis(500), read_until_ready(&mut s)).await;
    }
    // A client that vanishes mid-message is just a disconnect.
    let mut s = raw_session(srv.port).await;
    s.write_all(&[b'Q', 0, 0, 1, 0, b's']).await.unwrap();
    drop(s);
    let c = connect(srv.port).await;
    assert_eq!(rows_of(&c.simple_query("select 2").await.unwrap()).len(), 2);
    for _ in 0..100 {
        if srv.terminated.load(Ordering::SeqCst) >= before + 51 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "backends not terminated: {}",
        srv.terminated.load(Ordering::SeqCst) - before
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_results_are_flushed_while_executing() {
    let srv = start(ServeConfig::default(), None).await;
    let c = connect(srv.port).await;
    let msgs = c.simple_query("select 200000").await.unwrap();
    assert_eq!(rows_of(&msgs).len(), 200_000);
    let msgs = c.simple_query("fatal").await;
    assert!(msgs.is_err());
    assert!(
        c.simple_query("select 1").await.is_err(),
        "FATAL closes the connection"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_idle_sessions_with_57p01() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let terminated = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let factory = std::sync::Arc::new(super::common::TestFactory {
        password: None,
        terminated: terminated.clone(),
    });
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(keel_wire::serve_until(
        listener,
        factory,
        ServeConfig::default(),
        async {
            let _ = rx.await;
        },
    ));
    let mut s = raw_session(port).await;
    tx.send(()).unwrap();
    let r = read_until_ready(&mut s).await;
    assert_eq!(
        error_message(&r[0].1),
        (
            "FATAL".into(),
            "57P01".into(),
            "terminating connection due to administrator command".into()
        )
    );
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(terminated.load(Ordering::SeqCst), 1);
    assert!(
        TcpStream::connect(("127.0.0.1", port)).await.is_err(),
        "listener closed"
    );
}

/// Reads from `s` until EOF or `within` passes; returns the bytes and whether EOF came.
async fn until_closed(s: &mut TcpStream, within: Duration) -> (Vec<u8>, bool) {
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (got, true),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Err(_) => return (got, false),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unauthenticated_connections_hold_no_slot_and_are_bounded() {
    let srv = start(
        ServeConfig {
            max_connections: 2,
            max_pending_startups: 8,
            authentication_timeout: Duration::from_secs(60),
            ..Default::default()
        },
        None,
    )
    .await;
    // 20 silent sockets: the 12 oldest are pushed out (closed, nothing sent), the newest 8 wait.
    let mut silent = Vec::new();
    for _ in 0..20 {
        silent.push(TcpStream::connect(("127.0.0.1", srv.port)).await.unwrap());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for (i, s) in silent.iter_mut().enumerate() {
        let (got, closed) =
            until_closed(s, Duration::from_millis(if i < 12 { 2000 } else { 100 })).await;
        assert!(got.is_empty(), "socket {i} was sent {got:?}");
        assert_eq!(closed, i < 12, "socket {i}");
    }
    // They hold none of the two slots: two clients log in, a third gets 53300.
    let a = connect(srv.port).await;
    let b = connect(srv.port).await;
    let e = tokio_postgres::connect(&conn_str(srv.port), NoTls)
        .await
        .err()
        .unwrap();
    assert_eq!(e.as_db_error().unwrap().code().code(), "53300");
    a.simple_query("select 1").await.unwrap();
    b.simple_query("select 1").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authentication_timeout_closes_silently() {
    let srv = start(
        ServeConfig {
            authentication_timeout: Duration::from_millis(300),
            auth: AuthMethod::ScramSha256,
            ..Default::default()
        },
        Some("pw"),
    )
    .await;
    // Silent from the start.
    let mut s = TcpStream::connect(("127.0.0.1", srv.port)).await.unwrap();
    let t = std::time::Instant::now();
    let (got, closed) = until_closed(&mut s, Duration::from_secs(5)).await;
    assert!(closed && got.is_empty(), "{got:?}");
    assert!(
        t.elapsed() >= Duration::from_millis(250),
        "{:?}",
        t.elapsed()
    );
    // Stalled in the SASL exchange: the SASL request, then nothing more.
    let mut s = TcpStream::connect(("127.0.0.1", srv.port)).await.unwrap();
    s.write_all(&startup_packet(196608)).await.unwrap();
    let (got, closed) = until_closed(&mut s, Duration::from_secs(5)).await;
    assert!(closed);
    // Exactly one message, the SASL request: no error is sent.
    assert_eq!(got.first(), Some(&b'R'), "{got:?}");
    let len = u32::from_be_bytes([got[1], got[2], got[3], got[4]]) as usize;
    assert_eq!(got.len(), 1 + len, "{got:?}");
}
