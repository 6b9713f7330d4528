//! A toy Backend for driving the protocol layer from real clients. Its "SQL":
//! `select N` (N int4 rows), `select $1` (echo), `error`, `fatal`, `sleep` (waits for cancel),
//! `notice`, `begin`/`commit`/`rollback`, `copy ... from stdin`, `copy ... to stdout`, and empty
//! statements; `;` separates statements in a simple query.
#![allow(dead_code)]

use bytes::Bytes;
use keel_common::{PgError, PgResult, Severity};
use keel_wire::{
    Backend, BackendFactory, CancelToken, Client, ExecuteOutcome, FieldDescription, ServeConfig,
    StartupInfo,
};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub struct TestFactory {
    pub password: Option<String>,
    pub terminated: Arc<AtomicUsize>,
}

impl BackendFactory for TestFactory {
    type Backend = TestBackend;
    fn connect(
        &self,
        startup: &StartupInfo,
        cancel: Arc<CancelToken>,
        _pid: i32,
    ) -> PgResult<TestBackend> {
        if startup.database == "nodb" {
            return Err(PgError::fatal("3D000", "database \"nodb\" does not exist"));
        }
        Ok(TestBackend {
            cancel,
            statements: HashMap::new(),
            portals: HashMap::new(),
            status: b'I',
            terminated: self.terminated.clone(),
        })
    }
    fn verifier_for(&self, _user: &str) -> Option<Arc<keel_wire::scram::Verifier>> {
        self.password
            .as_deref()
            .map(|p| Arc::new(keel_wire::scram::Verifier::derive(p)))
    }
}

struct Portal {
    sql: String,
    params: Vec<Option<Bytes>>,
    pos: u32,
}

pub struct TestBackend {
    cancel: Arc<CancelToken>,
    statements: HashMap<String, String>,
    portals: HashMap<String, Portal>,
    status: u8,
    terminated: Arc<AtomicUsize>,
}

fn int_field(name: &str) -> FieldDescription {
    FieldDescription {
        name: name.into(),
        table_oid: 0,
        column_attnum: 0,
        type_oid: 23,
        type_len: 4,
        type_modifier: -1,
        format: 0,
    }
}

fn text_field(name: &str) -> FieldDescription {
    FieldDescription {
        name: name.into(),
        table_oid: 0,
        column_attnum: 0,
        type_oid: 25,
        type_len: -1,
        type_modifier: -1,
        format: 0,
    }
}

fn row_count(sql: &str) -> Option<u32> {
    sql.strip_prefix("select ")?.trim().parse().ok()
}

fn shape(sql: &str) -> Option<Vec<FieldDescription>> {
    if sql == "select $1" {
        Some(vec![text_field("echo")])
    } else if row_count(sql).is_some() {
        Some(vec![int_field("n")])
    } else {
        None
    }
}

impl TestBackend {
    async fn one<C: Client>(&mut self, sql: &str, client: &mut C) -> PgResult<()> {
        let lower = sql.trim().to_ascii_lowercase();
        if self.status == b'E' && lower != "rollback" && lower != "commit" {
            return Err(PgError::new(
                "25P02",
                "current transaction is aborted, commands ignored until end of transaction block",
            ));
        }
        let r = self.run(&lower, client).await;
        if r.is_err() && self.status == b'T' {
            self.status = b'E';
        }
        r
    }

    async fn run<C: Client>(&mut self, sql: &str, client: &mut C) -> PgResult<()> {
        if sql.is_empty() {
            client.empty_query();
            return Ok(());
        }
        if let Some(n) = row_count(sql) {
            client.row_description(&[int_field("n")]);
            let mut buf = itoa_buf();
            for i in 1..=n {
                let s = fmt_int(&mut buf, i);
                client.data_row(&[Some(s)]);
            }
            client.command_complete(&format!("SELECT {n}"));
            return Ok(());
        }
        match sql {
            "error" => {
                Err(PgError::new("42601", "syntax error at or near \"error\"").with_position(1))
            }
            "fatal" => Err(PgError::fatal("XX000", "fatal test error")),
            "notice" => {
                client.notice(
                    &PgError::notice(Severity::Notice, "00000", "hello notice").with_detail("d"),
                );
                client.command_complete("DO");
                Ok(())
            }
            "sleep" => {
                tokio::select! {
                    _ = self.cancel.cancelled() => Err(PgError::new("57014", "canceling statement due to user request")),
                    _ = tokio::time::sleep(Duration::from_secs(20)) => { client.command_complete("SLEEP"); Ok(()) }
                }
            }
            "begin" | "start transaction" => {
                self.status = b'T';
                client.command_complete("BEGIN");
                Ok(())
            }
            "commit" | "rollback" => {
                let tag = if sql == "commit" && self.status != b'E' {
                    "COMMIT"
                } else {
                    "ROLLBACK"
                };
                self.status = b'I';
                client.command_complete(tag);
                Ok(())
            }
            s if s.starts_with("copy") && s.ends_with("from stdin") => {
                client.copy_in_start(false, 1).await?;
                let mut lines = 0;
                let mut data = Vec::new();
                while let Some(chunk) = client.copy_in_next().await? {
                    data.extend_from_slice(&chunk);
                }
                for l in data.split(|&b| b == b'\n') {
                    if !l.is_empty() && l != b"\\." {
                        lines += 1;
                    }
                }
                client.command_complete(&format!("COPY {lines}"));
                Ok(())
            }
            s if s.starts_with("copy") && s.ends_with("to stdout") => {
                client.copy_out_start(false, 1);
                for l in ["a\n", "b\n", "c\n"] {
                    client.copy_out_data(l.as_bytes());
                }
                client.copy_out_done();
                client.command_complete("COPY 3");
                Ok(())
            }
            other => Err(PgError::new(
                "42601",
                format!("syntax error at or near \"{other}\""),
            )),
        }
    }
}

fn itoa_buf() -> [u8; 12] {
    [0; 12]
}

fn fmt_int(buf: &mut [u8; 12], mut v: u32) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &buf[i..]
}

impl Backend for TestBackend {
    fn startup_parameters(&self) -> Vec<(String, String)> {
        [
            ("server_version", "15.18"),
            ("server_encoding", "UTF8"),
            ("client_encoding", "UTF8"),
            ("DateStyle", "ISO, MDY"),
            ("TimeZone", "UTC"),
            ("integer_datetimes", "on"),
            ("standard_conforming_strings", "on"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
    }

    async fn simple_query<C: Client>(&mut self, sql: &str, client: &mut C) -> PgResult<()> {
        let parts: Vec<&str> = sql.split(';').collect();
        let all_empty = parts.iter().all(|p| p.trim().is_empty());
        if all_empty {
            client.empty_query();
            return Ok(());
        }
        for p in parts.iter().filter(|p| !p.trim().is_empty()) {
            self.one(p, client).await?;
        }
        Ok(())
    }

    fn parse(&mut self, name: &str, sql: &str, _param_types: &[u32]) -> PgResult<()> {
        let sql = sql.trim().to_ascii_lowercase();
        if sql == "error" {
            return Err(PgError::new("42601", "syntax error at or near \"error\""));
        }
        if !name.is_empty() && self.statements.contains_key(name) {
            return Err(PgError::new(
                "42P05",
                format!("prepared statement \"{name}\" already exists"),
            ));
        }
        self.statements.insert(name.to_string(), sql);
        Ok(())
    }

    fn bind(
        &mut self,
        portal: &str,
        statement: &str,
        _pf: &[i16],
        params: &[Option<Bytes>],
        _rf: &[i16],
    ) -> PgResult<()> {
        let sql = self
            .statements
            .get(statement)
            .ok_or_else(|| {
                PgError::new(
                    "26000",
                    format!("prepared statement \"{statement}\" does not exist"),
                )
            })?
            .clone();
        self.portals.insert(
            portal.to_string(),
            Portal {
                sql,
                params: params.to_vec(),
                pos: 0,
            },
        );
        Ok(())
    }

    fn describe_statement(
        &mut self,
        name: &str,
    ) -> PgResult<(Vec<u32>, Option<Vec<FieldDescription>>)> {
        let sql = self.statements.get(name).ok_or_else(|| {
            PgError::new(
                "26000",
                format!("prepared statement \"{name}\" does not exist"),
            )
        })?;
        let params = if sql.contains("$1") { vec![25] } else { vec![] };
        Ok((params, shape(sql)))
    }

    fn describe_portal(&mut self, name: &str) -> PgResult<Option<Vec<FieldDescription>>> {
        let p = self
            .portals
            .get(name)
            .ok_or_else(|| PgError::new("34000", format!("portal \"{name}\" does not exist")))?;
        Ok(shape(&p.sql))
    }

    async fn execute<C: Client>(
        &mut self,
        portal: &str,
        max_rows: u32,
        client: &mut C,
    ) -> PgResult<ExecuteOutcome> {
        let p = self
            .portals
            .get_mut(portal)
            .ok_or_else(|| PgError::new("34000", format!("portal \"{portal}\" does not exist")))?;
        if p.sql == "select $1" {
            let v = p.params.first().cloned().flatten();
            client.data_row(&[v.as_deref()]);
            return Ok(ExecuteOutcome::Complete("SELECT 1".into()));
        }
        if let Some(n) = row_count(&p.sql) {
            let mut buf = itoa_buf();
            let mut sent = 0;
            while p.pos < n {
                if max_rows > 0 && sent == max_rows {
                    return Ok(ExecuteOutcome::Suspended);
                }
                p.pos += 1;
                sent += 1;
                client.data_row(&[Some(fmt_int(&mut buf, p.pos))]);
            }
            return Ok(ExecuteOutcome::Complete(format!("SELECT {sent}")));
        }
        let sql = p.sql.clone();
        if sql.is_empty() {
            return Ok(ExecuteOutcome::Empty);
        }
        let mut tagger = Tagger {
            inner: client,
            tag: None,
        };
        self.one(&sql, &mut tagger).await?;
        Ok(ExecuteOutcome::Complete(tagger.tag.unwrap_or_default()))
    }

    fn close_statement(&mut self, name: &str) {
        self.statements.remove(name);
    }

    fn close_portal(&mut self, name: &str) {
        self.portals.remove(name);
    }

    async fn sync(&mut self) -> PgResult<()> {
        self.portals.remove("");
        Ok(())
    }

    fn ready_for_query(&mut self) -> u8 {
        self.status
    }

    async fn terminate(&mut self) {
        self.terminated.fetch_add(1, Ordering::SeqCst);
    }
}

/// Swallows CommandComplete so that Execute's outcome carries the tag instead.
struct Tagger<'a, C> {
    inner: &'a mut C,
    tag: Option<String>,
}

impl<C: Client> Client for Tagger<'_, C> {
    fn row_description(&mut self, f: &[FieldDescription]) {
        self.inner.row_description(f)
    }
    fn data_row(&mut self, v: &[Option<&[u8]>]) {
        self.inner.data_row(v)
    }
    fn command_complete(&mut self, tag: &str) {
        self.tag = Some(tag.into());
    }
    fn empty_query(&mut self) {}
    fn notice(&mut self, n: &PgError) {
        self.inner.notice(n)
    }
    fn parameter_status(&mut self, a: &str, b: &str) {
        self.inner.parameter_status(a, b)
    }
    async fn copy_in_start(&mut self, binary: bool, columns: usize) -> PgResult<()> {
        self.inner.copy_in_start(binary, columns).await
    }
    async fn copy_in_next(&mut self) -> PgResult<Option<Bytes>> {
        self.inner.copy_in_next().await
    }
    fn copy_out_start(&mut self, binary: bool, columns: usize) {
        self.inner.copy_out_start(binary, columns)
    }
    fn copy_out_data(&mut self, d: &[u8]) {
        self.inner.copy_out_data(d)
    }
    fn copy_out_done(&mut self) {
        self.inner.copy_out_done()
    }
    async fn flush(&mut self) -> PgResult<()> {
        self.inner.flush().await
    }
}

pub struct Server {
    pub port: u16,
    pub terminated: Arc<AtomicUsize>,
}

pub async fn start(config: ServeConfig, password: Option<&str>) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let terminated = Arc::new(AtomicUsize::new(0));
    let factory = Arc::new(TestFactory {
        password: password.map(str::to_string),
        terminated: terminated.clone(),
    });
    tokio::spawn(keel_wire::serve(listener, factory, config));
    Server { port, terminated }
}

pub fn conn_str(port: u16) -> String {
    format!("host=127.0.0.1 port={port} user=tester dbname=testdb")
}
