//! Three real client drivers round-trip arrays against keel and against PostgreSQL 15:
//! psycopg 3 (Python), node-postgres (JavaScript) and pgjdbc (Java), each running its program
//! from `crates/e2e/drivers/`. A program creates a table of int4[], int8[], text[] and
//! float8[] columns, inserts rows through parameters (NULL elements, empty arrays, text
//! needing quotes and escapes, extreme int8 and float8 values, two-dimensional arrays),
//! selects them back, runs `where id = any(<list parameter>)`, and reads arrays the server
//! builds (several dimensions, lower bounds other than 1), with parameters and results in
//! text and in binary; node-postgres also sends hand-built binary int4[] parameters, malformed
//! ones included. It prints each value with its driver-side type and the bytes the server
//! sent. The transcript from keel must equal PostgreSQL's, line for line; expected values come
//! only from PostgreSQL. psycopg also runs server-side cursors (DECLARE / FETCH / CLOSE over
//! the extended protocol). `scripts/test` installs the drivers; a missing one fails the test.

use keel_e2e::cmd::{self, CmdOutput};
use keel_e2e::{Server, workspace_root};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(120);
const JDBC_JAR: &str = "/usr/share/java/postgresql.jar";

fn drivers_dir() -> PathBuf {
    workspace_root().join("crates/e2e/drivers")
}

/// Fails the test unless `check` runs and exits 0: the driver is not installed.
fn require(what: &str, mut check: Command) {
    let ok = check.output().map(|o| o.status.success()).unwrap_or(false);
    assert!(
        ok,
        "{what} is not installed; scripts/test installs it (see its driver section)"
    );
}

/// Runs one driver program against `server`; its stdout, the transcript.
fn transcript(server: &Server, mut program: Command) -> String {
    cmd::client_env(&mut program);
    let out: CmdOutput = cmd::run(program, None, TIMEOUT);
    assert!(
        out.success(),
        "driver program failed against {:?}: {out}",
        server.engine
    );
    out.stdout
}

/// The lines of every section whose label contains `key`.
fn sections<'a>(t: &'a str, key: &str) -> Vec<Vec<&'a str>> {
    split(t)
        .into_iter()
        .filter(|(label, _)| label.contains(key))
        .map(|(_, lines)| lines)
        .collect()
}

/// The transcript PostgreSQL gave must exercise what the test is about: for each `(label,
/// rows)`, every section so labelled (text and binary runs) ends with that many rows, and at
/// least `min_sections` such sections exist.
fn assert_meaningful(driver: &str, pg: &str, expect: &[(&str, usize)], min_sections: usize) {
    for (label, rows) in expect {
        let found = sections(pg, label);
        assert!(
            found.len() >= min_sections,
            "{driver}: PostgreSQL's transcript has {} sections `{label}`, expected {min_sections}:\n{pg}",
            found.len()
        );
        for s in found {
            let want = format!("rows {rows}");
            assert!(
                s.contains(&want.as_str()),
                "{driver}: section `{label}` on PostgreSQL lacks `{want}`: {s:#?}"
            );
        }
    }
}

/// A transcript cut into its sections: (`-- label` line, the lines up to the next label).
fn split(t: &str) -> Vec<(&str, Vec<&str>)> {
    let mut out: Vec<(&str, Vec<&str>)> = vec![("(before the first section)", Vec::new())];
    for line in t.lines() {
        match (line.strip_prefix("-- "), out.last_mut()) {
            (Some(label), _) => out.push((label, Vec::new())),
            (None, Some(section)) => section.1.push(line),
            (None, None) => {}
        }
    }
    out
}

/// Section-by-section comparison; the message shows each differing section on both servers.
fn assert_same(driver: &str, keel: &str, pg: &str) {
    if keel == pg {
        return;
    }
    let (k, p) = (split(keel), split(pg));
    let mut report = String::new();
    let mut differing = 0;
    for i in 0..k.len().max(p.len()) {
        let (a, b) = (k.get(i), p.get(i));
        if a == b {
            continue;
        }
        differing += 1;
        if differing <= 20 {
            let show = |s: Option<&(&str, Vec<&str>)>| match s {
                Some((label, lines)) => format!("-- {label}\n{}", lines.join("\n")),
                None => "<none>".to_string(),
            };
            report.push_str(&format!(
                "keel:\n{}\npostgres:\n{}\n\n",
                cmd::tail(&show(a), 1500),
                cmd::tail(&show(b), 1500)
            ));
        }
    }
    panic!(
        "{driver}: {differing} sections of keel's transcript differ from PostgreSQL 15's:\n\n{report}"
    );
}

/// Starts keel and PostgreSQL, runs the program `make(server)` builds against each, and
/// compares the transcripts.
fn compare(driver: &str, make: impl Fn(&Server) -> Command, expect: &[(&str, usize)]) -> String {
    let (keel, pg) = (Server::start(&[]), Server::oracle(&[]));
    let want = transcript(&pg, make(&pg));
    assert_meaningful(driver, &want, expect, 2);
    let got = transcript(&keel, make(&keel));
    assert_same(driver, &got, &want);
    want
}

fn require_psycopg() {
    require("psycopg 3 (pip install \"psycopg[binary]\")", {
        let mut c = Command::new("python3");
        c.args(["-c", "import psycopg"]);
        c
    });
}

fn libpq_url(s: &Server) -> String {
    format!("postgres://postgres@127.0.0.1:{}/postgres", s.port())
}

#[test]
fn psycopg_round_trips_arrays() {
    require_psycopg();
    let script = drivers_dir().join("python/arrays.py");
    let pg = compare(
        "psycopg",
        |s| {
            let mut c = Command::new("python3");
            c.arg(&script)
                .arg(s.conn_str())
                .env("PYTHONIOENCODING", "utf-8");
            c
        },
        &[
            ("select all", 5),
            ("id = any([1, 3, 4])", 3),
            ("id = any([])", 0),
            ("id = any(5000 ids)", 1),
            ("uuid: select b binary", 3),
        ],
    );
    // Binary really was used: a binary cursor's int4[] comes as array_send bytes.
    assert!(pg.contains("wire b:00000001"), "no binary array in:\n{pg}");
    assert!(
        pg.contains("wire b:a0eebc999c0b4ef8bb6d6bb9bd380a11"),
        "no binary uuid in:\n{pg}"
    );
}

/// psycopg's server-side cursors: DECLARE with a parameter over the extended protocol,
/// Describe of the cursor's portal, FETCH in batches (text and binary), scrolling, WITH HOLD.
#[test]
fn psycopg_server_side_cursors_fetch_in_batches() {
    require_psycopg();
    let script = drivers_dir().join("python/server_cursor.py");
    compare(
        "psycopg",
        |s| {
            let mut c = Command::new("python3");
            c.arg(&script).arg(s.conn_str());
            c
        },
        &[("batches of 7", 22), ("scroll", 14)],
    );
}

#[test]
fn node_postgres_round_trips_arrays() {
    let dir = drivers_dir().join("node");
    require("node", {
        let mut c = Command::new("node");
        c.arg("--version");
        c
    });
    require("node-postgres (npm ci in crates/e2e/drivers/node)", {
        let mut c = Command::new("node");
        c.current_dir(&dir).args(["-e", "require('pg')"]);
        c
    });
    let script = dir.join("arrays.js");
    let pg = compare(
        "node-postgres",
        |s| {
            let mut c = Command::new("node");
            c.current_dir(&dir).arg(&script).arg(libpq_url(s));
            c
        },
        &[
            ("select all", 5),
            ("id = any([1,3,4])", 3),
            ("id = any([])", 0),
            ("id = any(binary int4[])", 2),
            ("binary int4[] parameter, lower bound 0", 1),
        ],
    );
    assert!(pg.contains("wire b:00000001"), "no binary array in:\n{pg}");
}

/// Compiles the JDBC program into `dir` (javac at test time: no build step elsewhere).
fn compile_java(dir: &Path) {
    let mut c = Command::new("javac");
    c.args(["-nowarn", "-encoding", "UTF-8", "-d"])
        .arg(dir)
        .args(["-cp", JDBC_JAR])
        .arg(drivers_dir().join("java/Arrays.java"));
    cmd::run(c, None, TIMEOUT).assert_success();
}

#[test]
fn jdbc_round_trips_arrays() {
    require("javac", {
        let mut c = Command::new("javac");
        c.arg("-version");
        c
    });
    assert!(
        Path::new(JDBC_JAR).exists(),
        "pgjdbc is not installed ({JDBC_JAR}: apt-get install libpostgresql-jdbc-java); \
         scripts/test installs it"
    );
    let classes = keel_e2e::TempDir::new("jdbc-classes");
    compile_java(classes.path());
    let class_path = format!("{JDBC_JAR}:{}", classes.path().display());
    let pg = compare(
        "pgjdbc",
        |s| {
            let mut c = Command::new("java");
            c.args([
                "-Dfile.encoding=UTF-8",
                "-Dstdout.encoding=UTF-8",
                "-Dsun.stdout.encoding=UTF-8",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                &class_path,
                "Arrays",
            ])
            .arg(s.port().to_string());
            c
        },
        &[
            ("select all", 5),
            ("id = any(createArrayOf int4 {1,3,4})", 3),
            ("id = any(int[] {})", 0),
            ("id = any(long[] {1, 2^40})", 1),
        ],
    );
    // binaryTransfer=true really was binary: row 1's int4[] as array_send bytes.
    assert!(
        pg.contains("| 0000000100000000000000170000000500000001"),
        "no binary array in:\n{pg}"
    );
}
