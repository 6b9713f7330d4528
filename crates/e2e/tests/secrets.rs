//! The server's password is not readable through SQL. Keel keeps only its SCRAM verifier, and
//! `keel_password` answers like any name PostgreSQL 15 does not know (42704). keel.conf and
//! `-c` take either a password or a verifier in PostgreSQL's `pg_authid` form; the verifier
//! used here is one PostgreSQL 15 derived itself.

use keel_e2e::Server;
use keel_e2e::client::{self, runtime};

const PASSWORD: &str = "e2e-s3cret-pw";

/// (SQLSTATE, message) of `sql` on a session that must fail it.
async fn failure(c: &tokio_postgres::Client, sql: &str) -> (String, String) {
    match client::within(sql, c.simple_query(sql)).await {
        Ok(r) => panic!("{sql}: succeeded with {} messages", r.len()),
        Err(e) => (
            client::sqlstate(&e),
            e.as_db_error()
                .map(|d| d.message().to_string())
                .unwrap_or_default(),
        ),
    }
}

/// What every session sees of the password: nothing. Returns the answers to SHOW and
/// current_setting for comparison with PostgreSQL's.
async fn probe(c: &tokio_postgres::Client, secrets: &[&str]) -> Vec<(String, String)> {
    let mut answers = Vec::new();
    for sql in [
        "show keel_password",
        "select current_setting('keel_password')",
        "set keel_password = 'x'",
    ] {
        answers.push(failure(c, sql).await);
    }
    let all = client::rows(c, "show all").await;
    for row in &all {
        assert_ne!(row[0], "keel_password", "SHOW ALL lists the password");
        for s in secrets {
            assert!(
                !row.iter().any(|v| v.contains(s)),
                "SHOW ALL shows a secret: {row:?}"
            );
        }
    }
    answers
}

#[test]
fn the_password_is_not_readable_through_sql() {
    let rt = runtime();
    // PostgreSQL 15: its verifier for PASSWORD, and its answers for an unknown setting.
    let oracle = Server::oracle(&[]);
    let (verifier, pg_answers) = rt.block_on(async {
        let c = client::connect(&oracle.conn_str()).await;
        client::exec(&c, &format!("create user e2e_u password '{PASSWORD}'")).await;
        let v = client::value(
            &c,
            "select rolpassword from pg_authid where rolname = 'e2e_u'",
        )
        .await;
        (v, probe(&c, &[PASSWORD]).await)
    });
    assert!(verifier.starts_with("SCRAM-SHA-256$4096:"), "{verifier}");
    assert_eq!(
        pg_answers[0],
        (
            "42704".to_string(),
            "unrecognized configuration parameter \"keel_password\"".to_string()
        )
    );

    // Keel given the plaintext password, then PostgreSQL's verifier: the same password logs
    // in, and SQL sees neither.
    for secret in [PASSWORD, verifier.as_str()] {
        let srv = Server::start(&[("auth_method", "scram-sha-256"), ("keel_password", secret)]);
        rt.block_on(async {
            let good = format!("{} password={PASSWORD}", srv.conn_str());
            let c = client::connect(&good).await;
            let answers = probe(&c, &[PASSWORD, &verifier]).await;
            assert_eq!(answers, pg_answers, "keel given {secret}");
            let bad = format!("{} password=wrong", srv.conn_str());
            match tokio_postgres::connect(&bad, tokio_postgres::NoTls).await {
                Ok(_) => panic!("a wrong password logged in"),
                Err(e) => assert_eq!(client::sqlstate(&e), "28P01"),
            }
        });
        let log = srv.log();
        assert!(
            !log.contains(PASSWORD) && !log.contains(&verifier),
            "the log shows a secret:\n{log}"
        );
    }
}
