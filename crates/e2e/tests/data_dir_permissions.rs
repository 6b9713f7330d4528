//! The data directory is private, as PostgreSQL's: directories 0700 and files 0600 whatever
//! the umask the server was started with, and a server refuses to start on a directory others
//! may read, with PostgreSQL 15's FATAL and DETAIL lines.

use keel_e2e::{Server, cmd, workspace_root};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

/// Every directory and file below `dir` with group or other bits set.
fn loose_entries(dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let m = mode(&p);
        if m & 0o077 != 0 {
            out.push(format!("{} {m:o}", p.display()));
        }
        if p.is_dir() {
            loose_entries(&p, out);
        }
    }
}

/// The FATAL and DETAIL lines of a log, without PostgreSQL's timestamp and pid prefix.
fn fatal_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|l| {
            ["FATAL:  ", "DETAIL:  "]
                .iter()
                .find_map(|tag| l.find(tag).map(|i| l[i..].to_string()))
        })
        .collect()
}

#[test]
fn data_directory_is_private_and_loose_permissions_refuse_start() {
    // What PostgreSQL 15 says when its data directory is opened up.
    let mut pg = Server::oracle(&[]);
    pg.stop();
    let pg_dir = pg.data_dir().to_path_buf();
    cmd::chmod(&pg_dir, 0o755);
    let mut start = Command::new(workspace_root().join("scripts/pg15"));
    start
        .arg("start")
        .arg(&pg_dir)
        .arg(keel_e2e::free_port().to_string());
    assert!(!cmd::run(start, None, keel_e2e::server::start_timeout()).success());
    let expected: Vec<String> = fatal_lines(&pg.log())
        .into_iter()
        .map(|l| l.replace(&pg_dir.display().to_string(), "DIR"))
        .collect();
    assert_eq!(
        expected.len(),
        2,
        "PostgreSQL's refusal: {expected:?}\n{}",
        pg.log()
    );
    cmd::chmod(&pg_dir, 0o700);

    // Keel, started with a permissive umask by the harness: everything it creates is private.
    // SAFETY: umask(2) swaps this test process's mask; the keel child inherits it.
    let old = unsafe { libc::umask(0o022) };
    let mut srv = Server::start(&[]);
    srv.query("create table p (id int primary key, t text)");
    srv.query("insert into p select g, repeat('x', 100) from generate_series(1, 2000) g");
    srv.query("checkpoint");
    let dir = srv.data_dir().to_path_buf();
    assert_eq!(mode(&dir), 0o700, "data directory");
    let mut loose = Vec::new();
    loose_entries(&dir, &mut loose);
    assert!(loose.is_empty(), "readable by others: {loose:?}");

    // Opened up: keel refuses to start, with PostgreSQL's lines.
    srv.stop();
    cmd::chmod(&dir, 0o755);
    let out = Command::new(keel_e2e::keel_bin())
        .arg("--data-dir")
        .arg(&dir)
        .arg("--port")
        .arg(keel_e2e::free_port().to_string())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run keel: {e}"));
    // SAFETY: as above, restoring the mask.
    unsafe { libc::umask(old) };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "keel started on a 0755 data directory"
    );
    let got: Vec<String> = fatal_lines(&stderr)
        .into_iter()
        .map(|l| l.replace(&dir.display().to_string(), "DIR"))
        .collect();
    assert_eq!(got, expected, "keel said:\n{stderr}");

    // 0750 (group read) is allowed, as in PostgreSQL, and the rows are all there.
    cmd::chmod(&dir, 0o750);
    srv.restart();
    assert_eq!(srv.query("select count(*) from p"), "2000");
}
