//! PostgreSQL's limits on names and row widths, answered as PostgreSQL 15 answers them: every
//! identifier over 63 bytes is truncated (at a character boundary) with NOTICE 42622, so the
//! same long name in CREATE TABLE and SELECT reaches the same table; more than 1664 select-list
//! entries fail with 54011, as do more than 1600 columns in CREATE TABLE. Each statement runs
//! on PostgreSQL 15 and on keel; notices, errors, column names and rows must be equal.

use keel_e2e::Server;
use keel_e2e::raw::{self, Msg, RawConn};

/// Everything a client sees of one statement that these limits can change.
#[derive(Debug, PartialEq)]
struct Answer {
    /// (SQLSTATE, message) of each notice, in order.
    notices: Vec<(String, String)>,
    /// (SQLSTATE, message) of the error.
    error: Option<(String, String)>,
    /// Column names of the RowDescription.
    columns: Vec<String>,
    rows: usize,
    tag: Option<String>,
}

fn field(body: &[u8], tag: u8) -> String {
    body.split(|b| *b == 0)
        .find(|f| f.first() == Some(&tag))
        .map(|f| String::from_utf8_lossy(&f[1..]).into_owned())
        .unwrap_or_default()
}

fn column_names(body: &[u8]) -> Vec<String> {
    let n = u16::from_be_bytes([body[0], body[1]]) as usize;
    let mut at = 2;
    let mut names = Vec::with_capacity(n);
    for _ in 0..n {
        let end = at + body[at..].iter().position(|b| *b == 0).unwrap_or(0);
        names.push(String::from_utf8_lossy(&body[at..end]).into_owned());
        // name, NUL, table oid (4), attnum (2), type oid (4), typlen (2), typmod (4), format (2)
        at = end + 1 + 18;
    }
    names
}

fn answer(conn: &mut RawConn, sql: &str) -> Answer {
    conn.send(&raw::query_message(sql)).expect("send");
    let msgs: Vec<Msg> = conn.read_until_ready().expect("an answer");
    Answer {
        notices: msgs
            .iter()
            .filter(|(t, _)| *t == b'N')
            .map(|(_, b)| (field(b, b'C'), field(b, b'M')))
            .collect(),
        error: msgs
            .iter()
            .find(|(t, _)| *t == b'E')
            .map(|(_, b)| (field(b, b'C'), field(b, b'M'))),
        columns: msgs
            .iter()
            .find(|(t, _)| *t == b'T')
            .map(|(_, b)| column_names(b))
            .unwrap_or_default(),
        rows: msgs.iter().filter(|(t, _)| *t == b'D').count(),
        tag: msgs
            .iter()
            .find(|(t, _)| *t == b'C')
            .map(|(_, b)| String::from_utf8_lossy(&b[..b.len() - 1]).into_owned()),
    }
}

#[test]
fn long_names_and_wide_rows_as_in_postgresql() {
    let pg = Server::oracle(&[]);
    let srv = Server::start(&[]);
    let mut pg_conn = RawConn::login(pg.port()).expect("login to PostgreSQL");
    let mut conn = RawConn::login(srv.port()).expect("login");

    let long = format!("T{}", "a".repeat(69));
    let long_other_tail = format!("t{}b", "a".repeat(70));
    let accented = "é".repeat(40);
    let ones = |n: usize| vec!["1"; n].join(", ");
    let columns = |n: usize| {
        (0..n)
            .map(|i| format!("c{i} int"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let statements = [
        format!("create table {long} (x int)"),
        format!("insert into {long} values (1)"),
        // Same first 63 bytes: the same table.
        format!("select x as {long} from {long_other_tail}"),
        format!("select 1 as \"{accented}\""),
        format!("select {}", ones(1664)),
        format!("select {}", ones(1665)),
        format!("create table wide ({})", columns(1601)),
        format!("create table wide ({})", columns(1600)),
        "select count(*) from wide".to_string(),
    ];
    for sql in &statements {
        let expected = answer(&mut pg_conn, sql);
        let got = answer(&mut conn, sql);
        let shown: String = sql.chars().take(80).collect();
        eprintln!("{shown}: {:?} {:?}", got.error, got.notices.len());
        assert_eq!(got, expected, "{shown}");
    }
}
