//! Running client binaries (psql, pgbench) with a deadline and captured output.
//!
//! Every external command gets a timeout: a hung server must fail one test, not hang CI.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// What a finished (or killed) command left behind.
#[derive(Debug, Clone)]
pub struct CmdOutput {
    /// Exit code; `None` when killed by a signal or by our timeout.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
    /// The command line, for failure messages.
    pub cmdline: String,
}

impl CmdOutput {
    pub fn success(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }

    /// The SQLSTATE of the first error psql printed (run with `-v VERBOSITY=verbose`), or
    /// "ok" when none.
    pub fn first_sqlstate(&self) -> String {
        self.stderr
            .lines()
            .find_map(|l| l.strip_prefix("ERROR:  "))
            .map_or("ok".into(), |e| e.chars().take(5).collect())
    }

    /// Panics with the full command output unless the command exited 0.
    pub fn assert_success(&self) -> &Self {
        assert!(self.success(), "command failed: {self}");
        self
    }
}

impl std::fmt::Display for CmdOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` exit={:?} timed_out={}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.cmdline,
            self.code,
            self.timed_out,
            tail(&self.stdout, 4000),
            tail(&self.stderr, 4000)
        )
    }
}

/// The last `max` bytes of `s` (on a char boundary), for readable failure messages.
pub fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Environment every client gets: no user rc files, no pager, C locale, no stray PG* settings.
pub fn client_env(cmd: &mut Command) {
    for var in [
        "PGHOST",
        "PGPORT",
        "PGUSER",
        "PGDATABASE",
        "PGPASSWORD",
        "PGOPTIONS",
        "PGSERVICE",
        "PGSSLMODE",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("PSQLRC", "/dev/null")
        .env("PAGER", "cat")
        .env("PSQL_PAGER", "cat")
        .env("LC_ALL", "C")
        .env("PGCONNECT_TIMEOUT", "10")
        .env("PGTZ", "UTC");
}

fn wait_deadline(child: &mut Child, timeout: Duration) -> (Option<ExitStatus>, bool) {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return (Some(st), false),
            Ok(None) => {}
            Err(_) => return (None, false),
        }
        if start.elapsed() >= timeout {
            let _ = child.kill();
            return (child.wait().ok(), true);
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `cmd` with optional stdin, capturing stdout and stderr separately.
pub fn run(mut cmd: Command, stdin: Option<&[u8]>, timeout: Duration) -> CmdOutput {
    let cmdline = describe(&cmd);
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => panic!("cannot spawn `{cmdline}`: {e}"),
    };
    let feeder = match (stdin, child.stdin.take()) {
        (Some(data), Some(mut pipe)) => {
            let data = data.to_vec();
            Some(thread::spawn(move || {
                let _ = pipe.write_all(&data);
            }))
        }
        _ => None,
    };
    let out = child.stdout.take().map(reader);
    let err = child.stderr.take().map(reader);
    let (status, timed_out) = wait_deadline(&mut child, timeout);
    if let Some(f) = feeder {
        let _ = f.join();
    }
    CmdOutput {
        code: status.and_then(|s| s.code()),
        stdout: out.map(join_reader).unwrap_or_default(),
        stderr: err.map(join_reader).unwrap_or_default(),
        timed_out,
        cmdline,
    }
}

/// Runs `cmd` with stdout and stderr sent into one pipe, so the interleaving psql produces
/// (results on stdout, errors on stderr) is kept as a terminal would show it. The result is
/// in `stdout`; `stderr` is empty.
pub fn run_merged(mut cmd: Command, stdin: Option<&[u8]>, timeout: Duration) -> CmdOutput {
    let cmdline = describe(&cmd);
    let (rd, wr) = match std::io::pipe() {
        Ok(p) => p,
        Err(e) => panic!("pipe: {e}"),
    };
    let wr2 = match wr.try_clone() {
        Ok(w) => w,
        Err(e) => panic!("pipe clone: {e}"),
    };
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(wr)
    .stderr(wr2);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => panic!("cannot spawn `{cmdline}`: {e}"),
    };
    // Drop our copies of the write ends (held by `cmd`) so the reader sees EOF.
    drop(cmd);
    let feeder = match (stdin, child.stdin.take()) {
        (Some(data), Some(mut pipe)) => {
            let data = data.to_vec();
            Some(thread::spawn(move || {
                let _ = pipe.write_all(&data);
            }))
        }
        _ => None,
    };
    let out = reader(rd);
    let (status, timed_out) = wait_deadline(&mut child, timeout);
    if let Some(f) = feeder {
        let _ = f.join();
    }
    CmdOutput {
        code: status.and_then(|s| s.code()),
        stdout: join_reader(out),
        stderr: String::new(),
        timed_out,
        cmdline,
    }
}

fn reader<R: Read + Send + 'static>(mut r: R) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

fn join_reader(h: thread::JoinHandle<Vec<u8>>) -> String {
    String::from_utf8_lossy(&h.join().unwrap_or_default()).into_owned()
}

/// A scratch directory removed on drop (kept when `KEEL_E2E_KEEP=1`, for post-mortems).
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// A new directory under the system's temp dir.
    pub fn new(tag: &str) -> TempDir {
        TempDir::new_in(&std::env::temp_dir(), tag)
    }

    /// A new directory under `parent` (e.g. a small tmpfs).
    pub fn new_in(parent: &Path, tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = parent.join(format!(
            "keel-e2e-{tag}-{}-{}-{nanos}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        if let Err(e) = std::fs::create_dir_all(&path) {
            panic!("cannot create {}: {e}", path.display());
        }
        // World-accessible so the postgres user (PG oracle) can write below it.
        chmod(&path, 0o777);
        TempDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var("KEEL_E2E_KEEP").as_deref() == Ok("1") {
            eprintln!("keeping {}", self.path.display());
            return;
        }
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

pub fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
}
