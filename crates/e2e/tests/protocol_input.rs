//! Values a client smuggles through the protocol: Bind messages with more parameters than a
//! signed 16-bit count holds, and text values carrying NUL bytes or invalid UTF-8. Each
//! scenario runs on keel and on PostgreSQL 15 with the same assertions.

use keel_e2e::Server;
use keel_e2e::raw::{self, Msg, RawConn};

fn frame(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![tag];
    v.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
    v.extend_from_slice(body);
    v
}

fn parse(sql: &str) -> Vec<u8> {
    let mut b = b"\0".to_vec();
    b.extend_from_slice(sql.as_bytes());
    b.push(0);
    b.extend_from_slice(&0u16.to_be_bytes());
    frame(b'P', &b)
}

/// Bind of the unnamed statement: all parameters in `format`, `None` = SQL NULL.
fn bind(format: i16, params: &[Option<&[u8]>]) -> Vec<u8> {
    let mut b = b"\0\0".to_vec();
    b.extend_from_slice(&1u16.to_be_bytes());
    b.extend_from_slice(&format.to_be_bytes());
    b.extend_from_slice(&(params.len() as u16).to_be_bytes());
    for p in params {
        match p {
            Some(v) => {
                b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                b.extend_from_slice(v);
            }
            None => b.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    b.extend_from_slice(&0u16.to_be_bytes());
    frame(b'B', &b)
}

fn execute_sync() -> Vec<u8> {
    let mut v = frame(b'E', b"\0\0\0\0\0");
    v.extend(frame(b'S', b""));
    v
}

/// (SQLSTATE, message) of the first ErrorResponse, if any.
fn first_error(msgs: &[Msg]) -> Option<(String, String)> {
    let (_, body) = msgs.iter().find(|(t, _)| *t == b'E')?;
    let message = body
        .split(|b| *b == 0)
        .find(|f| f.first() == Some(&b'M'))
        .map(|f| String::from_utf8_lossy(&f[1..]).into_owned())
        .unwrap_or_default();
    Some((raw::error_code(body).unwrap_or_default(), message))
}

fn round_trip(c: &mut RawConn, bytes: &[u8]) -> Vec<Msg> {
    c.send(bytes).unwrap_or_else(|e| panic!("send: {e}"));
    c.read_until_ready().unwrap_or_else(|e| panic!("read: {e}"))
}

fn bind_counts(srv: &Server) {
    let mut c = RawConn::login(srv.port()).unwrap_or_else(|e| panic!("login: {e}"));
    for n in [32_768usize, 40_000, 65_535] {
        let params = vec![None; n];
        let mut m = parse("select $1::int");
        m.extend(bind(0, &params));
        m.extend(frame(b'S', b""));
        let msgs = round_trip(&mut c, &m);
        assert_eq!(
            first_error(&msgs),
            Some((
                "08P01".to_string(),
                format!(
                    "bind message supplies {n} parameters, but prepared statement \"\" requires 1"
                )
            )),
            "{:?}: Bind with {n} parameters",
            srv.engine
        );
    }
    // The session goes on.
    c.simple("select 1").unwrap_or_else(|e| panic!("{e}"));
}

fn nul_in_text(srv: &Server) {
    let mut c = RawConn::login(srv.port()).unwrap_or_else(|e| panic!("login: {e}"));
    c.simple("create table nul_t (a text)")
        .unwrap_or_else(|e| panic!("{e}"));
    let cases: [(i16, &[u8], &str); 4] = [
        (0, b"a\0b", "0x00"),
        (1, b"a\0b", "0x00"),
        (0, b"a\xff", "0xff"),
        (0, b"a\xff\0", "0xff"),
    ];
    for (format, value, bad) in cases {
        let mut m = parse("insert into nul_t values ($1)");
        m.extend(bind(format, &[Some(value)]));
        m.extend(execute_sync());
        let msgs = round_trip(&mut c, &m);
        assert_eq!(
            first_error(&msgs),
            Some((
                "22021".to_string(),
                format!("invalid byte sequence for encoding \"UTF8\": {bad}")
            )),
            "{:?}: format {format} parameter {value:?}",
            srv.engine
        );
    }
    // COPY text data with a raw NUL and with the \0 escape: 22021 as well.
    for data in [&b"x\0y\n"[..], b"x\\0y\n"] {
        c.send(&raw::query_message("copy nul_t from stdin"))
            .unwrap_or_else(|e| panic!("{e}"));
        let start = c.read_until(b'G').unwrap_or_else(|e| panic!("{e}"));
        assert!(first_error(&start).is_none(), "{start:?}");
        let mut m = raw::copy_data(data);
        m.extend(raw::copy_done());
        let msgs = round_trip(&mut c, &m);
        assert_eq!(
            first_error(&msgs),
            Some((
                "22021".to_string(),
                "invalid byte sequence for encoding \"UTF8\": 0x00".to_string()
            )),
            "{:?}: COPY {data:?}",
            srv.engine
        );
    }
    let msgs = c
        .simple("select count(*) from nul_t")
        .unwrap_or_else(|e| panic!("{e}"));
    let row = msgs
        .iter()
        .find(|(t, _)| *t == b'D')
        .map(|(_, b)| b.clone());
    assert_eq!(
        row.as_deref(),
        Some(&b"\x00\x01\x00\x00\x00\x010"[..]),
        "{:?}: nothing may have been stored",
        srv.engine
    );
}

#[test]
fn bind_accepts_up_to_65535_parameters_and_reports_the_count_mismatch() {
    bind_counts(&Server::start(&[]));
    bind_counts(&Server::oracle(&[]));
}

#[test]
fn text_values_with_nul_or_invalid_utf8_are_22021() {
    nul_in_text(&Server::start(&[]));
    nul_in_text(&Server::oracle(&[]));
}
