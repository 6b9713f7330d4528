//! Starting, crashing and restarting a server under test: the `keel` binary, or a throwaway
//! PostgreSQL 15 (via `scripts/pg15`) used as the oracle or as a stand-in target.
//!
//! Parallel tests never share a port or a directory: each server binds a port the OS handed
//! out (127.0.0.1:0) and lives in its own temp dir.

use crate::cmd::{self, CmdOutput, TempDir};
use std::fs::OpenOptions;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Which engine a [`Server`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Keel,
    Pg,
}

impl Engine {
    /// The engine under test: `KEEL_E2E_TARGET=pg` swaps keel for PostgreSQL 15, which is how
    /// the harness itself is validated.
    pub fn under_test() -> Engine {
        match std::env::var("KEEL_E2E_TARGET").as_deref() {
            Ok("pg") | Ok("postgres") | Ok("pg15") => Engine::Pg,
            _ => Engine::Keel,
        }
    }
}

/// The cargo workspace root (two levels above this crate).
pub fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| here.to_path_buf())
}

/// Path of the keel binary: `KEEL_BIN`, else `<target>/release/keel`.
pub fn keel_bin() -> PathBuf {
    if let Ok(p) = std::env::var("KEEL_BIN") {
        return PathBuf::from(p);
    }
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| workspace_root().join("target"));
    target.join("release").join("keel")
}

/// A TCP port nobody listens on right now. The listener is dropped before the server binds,
/// so a race is possible; `Server::start_*` retries on another port if the bind fails.
pub fn free_port() -> u16 {
    match TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()) {
        Ok(a) => a.port(),
        Err(e) => panic!("cannot find a free port: {e}"),
    }
}

fn env_secs(name: &str, default: u64) -> Duration {
    Duration::from_secs(
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default),
    )
}

/// How long a server may take to become ready (crash recovery included).
pub fn start_timeout() -> Duration {
    env_secs("KEEL_E2E_START_TIMEOUT", 120)
}

/// Default deadline for one psql invocation.
pub fn psql_timeout() -> Duration {
    env_secs("KEEL_E2E_PSQL_TIMEOUT", 120)
}

const READY: &str = "database system is ready to accept connections";

/// A running server in its own temp dir. Stopped (SIGTERM / `pg_ctl -m fast`) on drop.
#[derive(Debug)]
pub struct Server {
    pub engine: Engine,
    port: u16,
    root: TempDir,
    /// Where the data directory lives when not under `root` (removed on drop).
    _data_root: Option<TempDir>,
    data: PathBuf,
    settings: Vec<(String, String)>,
    child: Option<Child>,
}

impl Server {
    /// The engine under test (see [`Engine::under_test`]) with extra settings.
    pub fn start(settings: &[(&str, &str)]) -> Server {
        Server::start_engine(Engine::under_test(), settings)
    }

    /// A PostgreSQL 15 oracle, whatever the target.
    pub fn oracle(settings: &[(&str, &str)]) -> Server {
        Server::start_engine(Engine::Pg, settings)
    }

    pub fn start_engine(engine: Engine, settings: &[(&str, &str)]) -> Server {
        Server::start_with_data_in(engine, None, settings)
    }

    /// As `start_engine`, with the data directory on the file system of `data_parent` (a
    /// small tmpfs, say); keel's log stays in the server's temp dir.
    pub fn start_with_data_in(
        engine: Engine,
        data_parent: Option<&Path>,
        settings: &[(&str, &str)],
    ) -> Server {
        let tag = match engine {
            Engine::Keel => "keel",
            Engine::Pg => "pg",
        };
        let root = TempDir::new(tag);
        let data_root = data_parent.map(|p| TempDir::new_in(p, tag));
        let data = data_root.as_ref().unwrap_or(&root).path().join("data");
        let mut srv = Server {
            engine,
            port: 0,
            root,
            _data_root: data_root,
            data,
            settings: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            child: None,
        };
        let mut last_err = String::new();
        for _ in 0..3 {
            srv.port = free_port();
            match srv.launch() {
                Ok(()) => return srv,
                Err(e) => last_err = e,
            }
        }
        panic!("{engine:?} did not start: {last_err}");
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn data_dir(&self) -> &Path {
        &self.data
    }

    /// A scratch directory beside the data dir, removed with the server.
    pub fn scratch(&self) -> &Path {
        self.root.path()
    }

    /// libpq / tokio-postgres connection string.
    pub fn conn_str(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname=postgres",
            self.port
        )
    }

    fn log_path(&self) -> PathBuf {
        match self.engine {
            Engine::Keel => self.root.path().join("keel.log"),
            Engine::Pg => self.data.join("server.log"),
        }
    }

    /// The server log so far (all starts appended).
    pub fn log(&self) -> String {
        std::fs::read(self.log_path())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    fn launch(&mut self) -> Result<(), String> {
        match self.engine {
            Engine::Keel => self.launch_keel(),
            Engine::Pg => self.launch_pg(),
        }
    }

    fn launch_keel(&mut self) -> Result<(), String> {
        let log_path = self.log_path();
        let log_start = std::fs::metadata(&log_path).map(|m| m.len()).unwrap_or(0) as usize;
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| format!("open {}: {e}", log_path.display()))?;
        let log2 = log.try_clone().map_err(|e| e.to_string())?;
        let bin = keel_bin();
        let mut cmd = Command::new(&bin);
        cmd.arg("--data-dir")
            .arg(&self.data)
            .arg("--port")
            .arg(self.port.to_string())
            .arg("--listen")
            .arg("127.0.0.1");
        for (k, v) in &self.settings {
            cmd.arg("-c").arg(format!("{k}={v}"));
        }
        cmd.stdin(Stdio::null()).stdout(log).stderr(log2);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot spawn {}: {e}", bin.display()))?;
        let deadline = Instant::now() + start_timeout();
        loop {
            if let Ok(Some(st)) = child.try_wait() {
                return Err(format!(
                    "keel exited with {st} before ready; log:\n{}",
                    cmd::tail(&self.log(), 4000)
                ));
            }
            let log = self.log();
            if log.get(log_start..).is_some_and(|l| l.contains(READY))
                && TcpStream::connect(("127.0.0.1", self.port)).is_ok()
            {
                self.child = Some(child);
                return Ok(());
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "keel not ready after {:?}; log:\n{}",
                    start_timeout(),
                    cmd::tail(&self.log(), 4000)
                ));
            }
            thread::sleep(Duration::from_millis(25));
        }
    }

    fn launch_pg(&mut self) -> Result<(), String> {
        let mut cmd = Command::new(workspace_root().join("scripts/pg15"));
        cmd.arg("start").arg(&self.data).arg(self.port.to_string());
        for (k, v) in &self.settings {
            cmd.arg(format!("{k}={v}"));
        }
        let out = cmd::run(cmd, None, start_timeout());
        if out.success() {
            Ok(())
        } else {
            Err(format!("{out}\nlog:\n{}", cmd::tail(&self.log(), 4000)))
        }
    }

    /// The keel process id (None for the PostgreSQL oracle or a stopped server).
    pub fn pid(&self) -> Option<u32> {
        match self.engine {
            Engine::Keel => self.child.as_ref().map(Child::id),
            Engine::Pg => None,
        }
    }

    /// A line of /proc/<pid>/status in kB (`VmHWM`, `VmRSS`) of the keel process.
    pub fn proc_status_kb(&self, field: &str) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()?)).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }

    /// Is the server process still alive?
    pub fn is_running(&mut self) -> bool {
        match self.engine {
            Engine::Keel => match &mut self.child {
                Some(c) => matches!(c.try_wait(), Ok(None)),
                None => false,
            },
            Engine::Pg => {
                let pid = std::fs::read_to_string(self.data.join("postmaster.pid"))
                    .ok()
                    .and_then(|s| s.lines().next().and_then(|l| l.trim().parse::<i32>().ok()));
                // SAFETY: signal 0 only checks that the process exists.
                pid.is_some_and(|p| unsafe { libc::kill(p, 0) } == 0)
            }
        }
    }

    /// Clean shutdown: SIGTERM and wait (keel), `pg_ctl stop -m fast` (PG).
    /// Panics if keel does not exit within the start timeout or exits non-zero.
    pub fn stop(&mut self) {
        match self.engine {
            Engine::Keel => {
                if let Some(mut c) = self.child.take() {
                    // SAFETY: plain kill(2) on our own child's pid.
                    unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
                    let deadline = Instant::now() + start_timeout();
                    loop {
                        match c.try_wait() {
                            Ok(Some(st)) => {
                                assert!(st.success(), "keel exited with {st} on SIGTERM");
                                return;
                            }
                            Ok(None) if Instant::now() < deadline => {
                                thread::sleep(Duration::from_millis(25))
                            }
                            _ => {
                                let _ = c.kill();
                                let _ = c.wait();
                                panic!("keel did not shut down on SIGTERM");
                            }
                        }
                    }
                }
            }
            Engine::Pg => {
                let mut cmd = Command::new(workspace_root().join("scripts/pg15"));
                cmd.arg("stop").arg(&self.data);
                cmd::run(cmd, None, start_timeout());
            }
        }
    }

    /// Crash: SIGKILL (keel); `pg_ctl stop -m immediate` (PG: no checkpoint, recovery on start).
    pub fn crash(&mut self) {
        match self.engine {
            Engine::Keel => {
                if let Some(mut c) = self.child.take() {
                    let _ = c.kill();
                    let _ = c.wait();
                }
            }
            Engine::Pg => {
                let mut cmd = Command::new("runuser");
                cmd.args(["-u", "postgres", "--", "/usr/lib/postgresql/15/bin/pg_ctl"])
                    .arg("-D")
                    .arg(&self.data)
                    .args(["-m", "immediate", "-w", "stop"]);
                cmd::run(cmd, None, start_timeout()).assert_success();
            }
        }
    }

    /// Start again on the same data dir and port (after `stop` or `crash`).
    pub fn restart(&mut self) {
        if let Err(e) = self.try_restart() {
            panic!("{:?} did not restart: {e}", self.engine);
        }
    }

    /// Start again on the same data dir and port; Err (with the log's tail) if the server
    /// exits or is not ready within the start timeout.
    pub fn try_restart(&mut self) -> Result<(), String> {
        self.launch()
    }

    /// Waits up to `timeout` for keel to exit by itself (a PANIC); its exit status, or None
    /// if it is still running (or not keel).
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            let c = self.child.as_mut()?;
            if let Ok(Some(st)) = c.try_wait() {
                self.child = None;
                return Some(st);
            }
            if Instant::now() > deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(25));
        }
    }

    /// A psql command against this server; add arguments, then run it with [`cmd::run`].
    pub fn psql_cmd(&self) -> Command {
        let mut c = Command::new("psql");
        cmd::client_env(&mut c);
        c.args([
            "-X",
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-p",
        ])
        .arg(self.port.to_string());
        c
    }

    /// `psql -X ... <args>`, stdout and stderr captured separately.
    pub fn psql(&self, args: &[&str]) -> CmdOutput {
        let mut c = self.psql_cmd();
        c.args(args);
        cmd::run(c, None, psql_timeout())
    }

    /// `psql -X ... <args>` reading `input` on stdin, stdout and stderr merged in order.
    pub fn psql_merged(&self, args: &[&str], input: &str, cwd: &Path) -> CmdOutput {
        let mut c = self.psql_cmd();
        c.args(args).current_dir(cwd);
        cmd::run_merged(c, Some(input.as_bytes()), psql_timeout())
    }

    /// One query through psql in unaligned tuples-only mode, stopping on error; returns stdout
    /// trimmed. Panics on failure.
    pub fn query(&self, sql: &str) -> String {
        let out = self.psql(&["-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql]);
        out.assert_success();
        out.stdout.trim().to_string()
    }

    /// A pgbench command against this server; add arguments, then run it.
    pub fn pgbench_cmd(&self) -> Command {
        let mut c = Command::new("pgbench");
        cmd::client_env(&mut c);
        c.args(["-h", "127.0.0.1", "-U", "postgres", "-p"])
            .arg(self.port.to_string());
        c
    }

    /// `pgbench <args> postgres` with a deadline of `timeout`.
    pub fn pgbench(&self, args: &[&str], timeout: Duration) -> CmdOutput {
        let mut c = self.pgbench_cmd();
        c.args(args).arg("postgres");
        cmd::run(c, None, timeout)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if thread::panicking() {
            eprintln!(
                "--- {:?} log tail ({}) ---\n{}",
                self.engine,
                self.log_path().display(),
                cmd::tail(&self.log(), 3000)
            );
        }
        match self.engine {
            Engine::Keel => {
                if let Some(mut c) = self.child.take() {
                    // SAFETY: plain kill(2) on our own child's pid.
                    unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
                    let deadline = Instant::now() + Duration::from_secs(10);
                    while matches!(c.try_wait(), Ok(None)) && Instant::now() < deadline {
                        thread::sleep(Duration::from_millis(25));
                    }
                    let _ = c.kill();
                    let _ = c.wait();
                }
            }
            Engine::Pg => {
                if self.data.join("postmaster.pid").exists() {
                    let mut cmd = Command::new(workspace_root().join("scripts/pg15"));
                    cmd.arg("stop").arg(&self.data);
                    cmd::run(cmd, None, Duration::from_secs(60));
                }
            }
        }
    }
}
