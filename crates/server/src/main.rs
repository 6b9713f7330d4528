//! The `keel` server binary: reads settings (defaults, `keel.conf`, flags), opens the engine,
//! listens, and serves the PostgreSQL protocol until SIGINT/SIGTERM, then checkpoints and exits.

mod config;
mod datadir;
mod limits;

use clap::Parser;
use config::Cli;
use keel_access::Engine;
use keel_common::{PgResult, Settings};
use keel_session::SessionFactory;
use keel_wire::scram::Verifier;
use keel_wire::{AuthMethod, BackendFactory, CancelToken, ServeConfig, StartupInfo};
use std::process::ExitCode;
use std::sync::Arc;

/// Every row, value and hash-table entry of the executor is a heap allocation; mimalloc's
/// thread-local free lists make them a few instructions each, where glibc's malloc spends
/// a quarter of a join's time (measured on the join benchmark's scripts).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The session factory with the server's authentication policy on top: under scram-sha-256
/// every user's password is `keel_password` (Keel has no roles catalog with passwords yet),
/// of which the server keeps only the SCRAM verifier.
struct ServerFactory {
    sessions: SessionFactory,
    verifier: Option<Arc<Verifier>>,
}

impl BackendFactory for ServerFactory {
    type Backend = <SessionFactory as BackendFactory>::Backend;

    fn connect(
        &self,
        startup: &StartupInfo,
        cancel: Arc<CancelToken>,
        pid: i32,
    ) -> PgResult<Self::Backend> {
        self.sessions.connect(startup, cancel, pid)
    }

    fn verifier_for(&self, _user: &str) -> Option<Arc<Verifier>> {
        self.verifier.clone()
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let data_dir = cli.data_dir.clone();
    let boot = match config::build_settings(&cli, &data_dir) {
        Ok(b) => b,
        Err(msg) => {
            eprintln!("FATAL:  {msg}");
            return ExitCode::FAILURE;
        }
    };
    let fd_limit = limits::raise_fd_limit();
    if let Err(msg) = datadir::prepare(&data_dir) {
        eprintln!("FATAL:  {msg}");
        return ExitCode::FAILURE;
    }
    // Sessions run on per-core shards (keel_wire::ServeConfig::shards); this runtime only
    // accepts connections and runs start-up, shutdown and signal handling.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("FATAL:  could not start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(boot, data_dir, fd_limit)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("FATAL:  {msg}");
            ExitCode::FAILURE
        }
    }
}

async fn run(
    boot: config::Boot,
    data_dir: std::path::PathBuf,
    fd_limit: u64,
) -> Result<(), String> {
    // The handlers go in before anything else: a SIGTERM that arrives while the engine
    // recovers, or between "ready to accept connections" and the first poll of the serving
    // loop, is then a fast shutdown, not the signal's default action (death by SIGTERM).
    let shutdown = shutdown_signal(Signals::install());
    let settings: Settings = boot.settings;
    let port = settings.int("port") as u16;
    let mut listeners = Vec::new();
    for host in config::listen_hosts(settings.raw("listen_addresses")) {
        match tokio::net::TcpListener::bind((host.as_str(), port)).await {
            Ok(l) => {
                let family = match l.local_addr() {
                    Ok(a) if a.is_ipv6() => "IPv6",
                    _ => "IPv4",
                };
                let shown = l
                    .local_addr()
                    .map(|a| a.ip().to_string())
                    .unwrap_or(host.clone());
                eprintln!("LOG:  listening on {family} address \"{shown}\", port {port}");
                listeners.push(l);
            }
            Err(e) => eprintln!("LOG:  could not bind to address \"{host}\", port {port}: {e}"),
        }
    }
    if listeners.is_empty() {
        return Err("could not create any TCP/IP sockets".into());
    }

    let engine = {
        let settings = settings.clone();
        let dir = data_dir.clone();
        tokio::task::spawn_blocking(move || Engine::open(&dir, &settings))
            .await
            .map_err(|e| format!("engine start-up failed: {e}"))?
            .map_err(|e| match e.hint.clone() {
                // main prints "FATAL:  {msg}"; the hint goes on its own line, as postgres's.
                Some(h) => format!("{}\nHINT:  {h}", e.message),
                None => e.into_report().message,
            })?
    };
    let auth = if settings.raw("auth_method") == "scram-sha-256" {
        AuthMethod::ScramSha256
    } else {
        AuthMethod::Trust
    };
    let verifier = match auth {
        AuthMethod::ScramSha256 => boot.verifier,
        AuthMethod::Trust => None,
    };
    let factory = Arc::new(ServerFactory {
        sessions: SessionFactory::new(engine.clone(), settings.clone()),
        verifier,
    });
    let max_connections = settings.int("max_connections").max(1) as usize;
    let config = ServeConfig {
        max_connections,
        authentication_timeout: std::time::Duration::from_secs(
            settings.int("authentication_timeout").max(1) as u64,
        ),
        max_pending_startups: limits::max_pending_startups(fd_limit, max_connections as u64),
        auth,
        shards: std::thread::available_parallelism().map_or(1, |n| n.get()),
        idle_spin: std::time::Duration::from_micros(settings.int("keel_idle_spin_us") as u64),
        ..ServeConfig::default()
    };
    eprintln!("LOG:  database system is ready to accept connections");
    let served = keel_wire::serve_listeners(listeners, factory, config, shutdown).await;
    // Sessions have ended (or been stopped) by now, whether serving ended well or not: write
    // the shutdown checkpoint, then give the data directory up.
    tokio::task::spawn_blocking(move || {
        engine.shutdown();
        engine.release_data_dir();
    })
    .await
    .map_err(|e| format!("shutdown checkpoint failed: {e}"))?;
    served.map_err(|e| format!("server failed: {e}"))?;
    eprintln!("LOG:  database system is shut down");
    Ok(())
}

/// SIGTERM and SIGINT, caught from the moment they are installed.
struct Signals {
    term: Option<tokio::signal::unix::Signal>,
    int: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn install() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        let one = |kind: SignalKind, name: &str| match signal(kind) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("LOG:  could not install {name} handler: {e}");
                None
            }
        };
        Signals {
            term: one(SignalKind::terminate(), "SIGTERM"),
            int: one(SignalKind::interrupt(), "SIGINT"),
        }
    }
}

/// Resolves on SIGINT or SIGTERM (both handled as postgres's fast shutdown).
async fn shutdown_signal(mut signals: Signals) {
    async fn recv(s: &mut Option<tokio::signal::unix::Signal>) {
        match s {
            Some(s) => {
                s.recv().await;
            }
            None => std::future::pending().await,
        }
    }
    tokio::select! {
        _ = recv(&mut signals.term) => {}
        _ = recv(&mut signals.int) => {}
    }
    eprintln!("LOG:  received fast shutdown request");
}
