//! Failed logins and authentication timeouts are logged as PostgreSQL 15 logs them: the same
//! FATAL line naming the user, and a DETAIL line. PostgreSQL's DETAIL names the pg_hba.conf
//! line that matched; keel has no pg_hba.conf, and names the client's address there.

use keel_e2e::client::{self, runtime};
use keel_e2e::raw::{self, RawConn};
use keel_e2e::{Engine, Server, TempDir};
use std::time::{Duration, Instant};

const USER: &str = "e2e_u";
const PASSWORD: &str = "e2e-pw";

/// The log's FATAL lines and the DETAIL line after each, without PostgreSQL's prefix.
fn fatal_with_detail(log: &str) -> Vec<(String, String)> {
    let strip = |l: &str, tag: &str| l.find(tag).map(|i| l[i..].to_string());
    let lines: Vec<&str> = log.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let fatal = strip(l, "FATAL:  ")?;
            let detail = lines
                .get(i + 1)
                .and_then(|d| strip(d, "DETAIL:  "))
                .unwrap_or_default();
            Some((fatal, detail))
        })
        .collect()
}

/// Waits until the log has `n` FATAL lines (the server writes them as the connection ends).
fn wait_for_fatals(srv: &Server, n: usize) -> Vec<(String, String)> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let f = fatal_with_detail(&srv.log());
        if f.len() >= n || Instant::now() > deadline {
            return f;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A wrong password, then a client that stops answering in the SASL exchange until
/// authentication_timeout (2 s) ends it. Returns the logged (FATAL, DETAIL) pairs.
fn failed_logins(srv: &Server) -> Vec<(String, String)> {
    let rt = runtime();
    rt.block_on(async {
        let bad = format!(
            "host=127.0.0.1 port={} user={USER} dbname=postgres password=wrong",
            srv.port()
        );
        match tokio_postgres::connect(&bad, tokio_postgres::NoTls).await {
            Ok(_) => panic!("{:?}: a wrong password logged in", srv.engine),
            Err(e) => assert_eq!(client::sqlstate(&e), "28P01"),
        }
        let good = format!(
            "host=127.0.0.1 port={} user={USER} dbname=postgres password={PASSWORD}",
            srv.port()
        );
        client::connect(&good).await;
    });
    let mut stalled = RawConn::connect(srv.port()).unwrap_or_else(|e| panic!("connect: {e}"));
    stalled
        .send(&raw::startup_message(USER, "postgres"))
        .unwrap_or_else(|e| panic!("startup: {e}"));
    let (_, closed) = stalled.drain(Duration::from_secs(10));
    assert!(closed, "{:?}: stalled login still open", srv.engine);
    wait_for_fatals(srv, 2)
}

#[test]
fn failed_logins_and_authentication_timeouts_are_logged() {
    // PostgreSQL 15 with scram-sha-256 for USER over TCP (pg_hba.conf of our own).
    let hba_dir = TempDir::new("hba");
    let hba = hba_dir.path().join("pg_hba.conf");
    std::fs::write(
        &hba,
        format!(
            "local all all trust\nhost all {USER} 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 trust\n"
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let hba_setting = hba.display().to_string();
    let pg = Server::start_engine(
        Engine::Pg,
        &[
            ("hba_file", hba_setting.as_str()),
            ("authentication_timeout", "2s"),
        ],
    );
    pg.query(&format!("create user {USER} password '{PASSWORD}'"));
    let expected = failed_logins(&pg);

    let keel = Server::start(&[
        ("auth_method", "scram-sha-256"),
        ("keel_password", PASSWORD),
        ("authentication_timeout", "2s"),
    ]);
    let got = failed_logins(&keel);

    let fatals = |v: &[(String, String)]| v.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>();
    assert_eq!(
        fatals(&expected),
        vec![
            format!("FATAL:  password authentication failed for user \"{USER}\""),
            "FATAL:  canceling authentication due to timeout".to_string(),
        ],
        "PostgreSQL's log:\n{}",
        pg.log()
    );
    assert!(
        expected[0]
            .1
            .starts_with("DETAIL:  Connection matched pg_hba.conf line"),
        "{expected:?}"
    );
    assert_eq!(
        fatals(&got),
        fatals(&expected),
        "keel's log:\n{}",
        keel.log()
    );
    for (fatal, detail) in &got {
        assert!(
            detail.starts_with("DETAIL:  Connection from host=127.0.0.1 port="),
            "{fatal}: {detail}"
        );
    }
}
