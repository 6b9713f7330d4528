//! The protocol layer driven by the real `psql` binary (skipped when psql is not installed).

use super::common::start;
use keel_wire::{AuthMethod, ServeConfig};
use std::io::Write;
use std::process::{Command, Stdio};

fn have_psql() -> bool {
    Command::new("psql").arg("--version").output().is_ok()
}

/// Runs psql with `args`, feeding `stdin`; returns (exit code, stdout, stderr).
async fn psql(
    port: u16,
    password: Option<&str>,
    args: &[&str],
    stdin: &str,
) -> (i32, String, String) {
    let port = port.to_string();
    let mut cmd = Command::new("psql");
    cmd.args([
        "-X",
        "-A",
        "-t",
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "-U",
        "tester",
        "-d",
        "testdb",
    ])
    .args(args)
    .env_remove("PGPASSWORD")
    .env("PGCONNECT_TIMEOUT", "10")
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    if let Some(p) = password {
        cmd.env("PGPASSWORD", p);
    } else {
        cmd.arg("-w");
    }
    let stdin = stdin.to_string();
    tokio::task::spawn_blocking(move || {
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn psql_simple_extended_errors_and_copy() {
    if !have_psql() {
        eprintln!("psql not installed; skipping");
        return;
    }
    let srv = start(ServeConfig::default(), None).await;
    let (code, out, err) = psql(srv.port, None, &["-c", "select 3"], "").await;
    assert_eq!((code, out.as_str()), (0, "1\n2\n3\n"), "{err}");

    // Errors carry position and code; ON_ERROR_STOP makes psql exit 3.
    let script = "\\set VERBOSITY verbose\nselect 1;\nerror;\nselect 2;\n";
    let (code, out, err) = psql(srv.port, None, &["-v", "ON_ERROR_STOP=1"], script).await;
    assert_eq!(code, 3);
    assert_eq!(out, "1\n");
    assert!(
        err.contains("ERROR:  42601: syntax error at or near \"error\""),
        "{err}"
    );

    // Notices are printed.
    let (_, _, err) = psql(srv.port, None, &["-c", "notice"], "").await;
    assert!(err.contains("NOTICE:  hello notice"), "{err}");

    // \copy from stdin and to stdout.
    let (code, out, err) = psql(
        srv.port,
        None,
        &["-c", "\\copy t from stdin"],
        "1\n2\n3\n4\n\\.\n",
    )
    .await;
    assert_eq!((code, out.as_str()), (0, "COPY 4\n"), "{err}");
    let (code, out, err) = psql(srv.port, None, &["-c", "\\copy t to stdout"], "").await;
    assert_eq!((code, out.as_str()), (0, "a\nb\nc\n"), "{err}");

    // Transaction state in the prompt-independent way: psql reports the failed block.
    let script = "begin;\nerror;\nselect 1;\nrollback;\nselect 1;\n";
    let (_, out, err) = psql(srv.port, None, &[], script).await;
    assert!(err.contains("current transaction is aborted"), "{err}");
    assert_eq!(out, "BEGIN\nROLLBACK\n1\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn psql_scram_login() {
    if !have_psql() {
        return;
    }
    let srv = start(
        ServeConfig {
            auth: AuthMethod::ScramSha256,
            ..Default::default()
        },
        Some("pw"),
    )
    .await;
    let (code, out, err) = psql(srv.port, Some("pw"), &["-c", "select 1"], "").await;
    assert_eq!((code, out.as_str()), (0, "1\n"), "{err}");
    let (code, _, err) = psql(srv.port, Some("wrong"), &["-c", "select 1"], "").await;
    assert_eq!(code, 2);
    assert!(
        err.contains("password authentication failed for user \"tester\""),
        "{err}"
    );
    // No password available (-w): psql gives up after seeing the SASL request.
    let (code, _, err) = psql(srv.port, None, &["-c", "select 1"], "").await;
    assert_eq!(code, 2, "{err}");
}
