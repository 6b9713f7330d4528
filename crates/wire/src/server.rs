//! The accept loop and the state shared by all connections: the cancel registry (pid, secret ->
//! CancelToken), the count of authenticated connections, and the connections still in startup
//! or authentication.

use crate::backend::{BackendFactory, CancelToken};
use crate::protocol;
use crate::shards::Shards;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};

/// How clients authenticate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AuthMethod {
    /// Anyone may connect as anyone (PostgreSQL's `trust`).
    #[default]
    Trust,
    /// SASL SCRAM-SHA-256 against [`BackendFactory::verifier_for`]; a user without a password
    /// cannot log in.
    ScramSha256,
}

impl std::str::FromStr for AuthMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "trust" => Ok(AuthMethod::Trust),
            "scram-sha-256" => Ok(AuthMethod::ScramSha256),
            other => Err(format!("unknown authentication method \"{other}\"")),
        }
    }
}

#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Authenticated connections beyond this get FATAL 53300 `sorry, too many clients
    /// already`. A connection counts from the end of authentication.
    pub max_connections: usize,
    /// How long a connection may take from accept to the end of authentication
    /// (PostgreSQL's `authentication_timeout`); then it is closed.
    pub authentication_timeout: Duration,
    /// At most this many connections may be in startup or authentication at once; a new one
    /// beyond it closes the oldest (see README, "Connection states").
    pub max_pending_startups: usize,
    pub auth: AuthMethod,
    /// How long a shutdown waits for connections to end before `serve_until` returns anyway.
    pub shutdown_grace: Duration,
    /// Session shards (single-worker runtimes, see shards.rs); 0 runs sessions on the
    /// caller's runtime.
    pub shards: usize,
    /// How long an idle shard polls its sockets before it sleeps (see spin.rs); zero never.
    pub idle_spin: Duration,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            max_connections: 100,
            authentication_timeout: Duration::from_secs(60),
            max_pending_startups: 10_000,
            auth: AuthMethod::Trust,
            shutdown_grace: Duration::from_secs(5),
            shards: 0,
            idle_spin: Duration::ZERO,
        }
    }
}

struct Registered {
    secret: i32,
    token: Arc<CancelToken>,
}

pub(crate) struct Shared<F> {
    pub factory: Arc<F>,
    pub config: ServeConfig,
    registry: Mutex<HashMap<i32, Registered>>,
    next_pid: AtomicI32,
    /// Authenticated connections (each holds a [`Slot`]).
    live: AtomicUsize,
    /// Connections in startup or authentication, oldest first.
    pending: Mutex<Pending>,
    /// Sessions in a command cycle, for response batching under load.
    pub busy: crate::busy::Busy,
    /// Flips to true when the server shuts down; idle connections then end.
    pub shutdown: watch::Receiver<bool>,
}

/// Removes a connection from the registry when its task ends, however it ends (panics included).
pub(crate) struct Registration<F: BackendFactory> {
    shared: Arc<Shared<F>>,
    pub pid: i32,
    pub secret: i32,
    pub token: Arc<CancelToken>,
}

impl<F: BackendFactory> Drop for Registration<F> {
    fn drop(&mut self) {
        if let Ok(mut reg) = self.shared.registry.lock() {
            reg.remove(&self.pid);
        }
    }
}

/// One of `max_connections`, held by an authenticated connection until it closes.
pub(crate) struct Slot<F: BackendFactory> {
    shared: Arc<Shared<F>>,
}

impl<F: BackendFactory> Drop for Slot<F> {
    fn drop(&mut self) {
        self.shared.live.fetch_sub(1, Ordering::AcqRel);
    }
}

#[derive(Default)]
struct Pending {
    next: u64,
    /// By arrival: the signal that closes each one.
    waiting: BTreeMap<u64, Arc<Notify>>,
}

/// Marks a connection as not yet authenticated, from accept until it authenticates or closes.
pub(crate) struct PendingStartup<F: BackendFactory> {
    shared: Arc<Shared<F>>,
    id: u64,
    evict: Arc<Notify>,
}

impl<F: BackendFactory> PendingStartup<F> {
    /// Resolves when a newer connection pushed this one out of the pending set.
    pub async fn evicted(&self) {
        self.evict.notified().await
    }
}

impl<F: BackendFactory> Drop for PendingStartup<F> {
    fn drop(&mut self) {
        if let Ok(mut p) = self.shared.pending.lock() {
            p.waiting.remove(&self.id);
        }
    }
}

impl<F: BackendFactory> Shared<F> {
    pub fn register(self: &Arc<Self>) -> Registration<F> {
        let token = Arc::new(CancelToken::default());
        let secret = rand::random::<i32>();
        let mut reg = match self.registry.lock() {
            Ok(r) => r,
            Err(p) => p.into_inner(),
        };
        let pid = loop {
            let pid = self.next_pid.fetch_add(1, Ordering::Relaxed);
            if pid <= 0 {
                // Wrapped around: start over above the range used by system processes.
                self.next_pid.store(1000, Ordering::Relaxed);
                continue;
            }
            if !reg.contains_key(&pid) {
                break pid;
            }
        };
        reg.insert(
            pid,
            Registered {
                secret,
                token: token.clone(),
            },
        );
        Registration {
            shared: self.clone(),
            pid,
            secret,
            token,
        }
    }

    /// Handles a CancelRequest: a wrong secret is ignored silently, as in PostgreSQL.
    pub fn cancel(&self, pid: i32, secret: i32) {
        let token = match self.registry.lock() {
            Ok(reg) => reg
                .get(&pid)
                .filter(|r| r.secret == secret)
                .map(|r| r.token.clone()),
            Err(_) => None,
        };
        if let Some(t) = token {
            t.cancel();
        }
    }

    /// Whether every slot is taken now: checked after the startup packet, before
    /// authentication, as PostgreSQL does (so a client of a full server learns it without
    /// authenticating, and CancelRequests, which come instead of a startup packet, still work).
    pub fn full(&self) -> bool {
        self.live.load(Ordering::Acquire) >= self.config.max_connections
    }

    /// Takes a slot once the connection has authenticated; `None` when all are taken.
    pub fn try_slot(self: &Arc<Self>) -> Option<Slot<F>> {
        let n = self.live.fetch_add(1, Ordering::AcqRel) + 1;
        let slot = Slot {
            shared: self.clone(),
        };
        // Over the limit: dropping the slot gives it back.
        (n <= self.config.max_connections).then_some(slot)
    }

    /// Enters a new connection in the pending set. When the set is full, the oldest pending
    /// connection is closed: a flood of sockets that never authenticate then pushes out its
    /// own older sockets, and a real client, which authenticates within milliseconds, is
    /// pushed out only if the flood opens `max_pending_startups` sockets in that time.
    /// (Refusing the newest instead would let the flood hold every place for
    /// authentication_timeout.)
    fn pending_startup(self: &Arc<Self>) -> PendingStartup<F> {
        let evict = Arc::new(Notify::new());
        let mut p = match self.pending.lock() {
            Ok(p) => p,
            Err(poisoned) => poisoned.into_inner(),
        };
        while p.waiting.len() >= self.config.max_pending_startups.max(1) {
            match p.waiting.pop_first() {
                // notify_one keeps a permit: the victim sees it even if not waiting yet.
                Some((_, victim)) => victim.notify_one(),
                None => break,
            }
        }
        let id = p.next;
        p.next += 1;
        p.waiting.insert(id, evict.clone());
        PendingStartup {
            shared: self.clone(),
            id,
            evict,
        }
    }

    /// Open connections: authenticated ones and those still starting up.
    pub fn connections(&self) -> usize {
        let pending = self.pending.lock().map_or(0, |p| p.waiting.len());
        self.live.load(Ordering::Acquire) + pending
    }
}

/// Serves connections until the process ends.
pub async fn serve<F: BackendFactory>(
    listener: TcpListener,
    factory: Arc<F>,
    config: ServeConfig,
) -> std::io::Result<()> {
    serve_until(listener, factory, config, std::future::pending()).await
}

/// Serves connections until `shutdown` resolves; then stops accepting, ends idle connections
/// with FATAL 57P01 (their backends are terminated, rolling back), and waits up to
/// `shutdown_grace` for busy ones.
pub async fn serve_until<F: BackendFactory>(
    listener: TcpListener,
    factory: Arc<F>,
    config: ServeConfig,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    serve_listeners(vec![listener], factory, config, shutdown).await
}

/// [`serve_until`] on several listening sockets (one per `listen_addresses` entry) sharing one
/// connection limit and one cancel registry.
pub async fn serve_listeners<F: BackendFactory>(
    listeners: Vec<TcpListener>,
    factory: Arc<F>,
    config: ServeConfig,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = watch::channel(false);
    let grace = config.shutdown_grace;
    let shared = Arc::new(Shared {
        factory,
        config,
        registry: Mutex::new(HashMap::new()),
        next_pid: AtomicI32::new(std::process::id().max(1000) as i32),
        live: AtomicUsize::new(0),
        pending: Mutex::new(Pending::default()),
        busy: crate::busy::Busy::new(),
        shutdown: stop_rx.clone(),
    });
    let shards = match shared.config.shards {
        0 => None,
        n => Some(Arc::new(Shards::new(n, shared.config.idle_spin)?)),
    };
    let mut acceptors = Vec::new();
    for listener in listeners {
        let shared = shared.clone();
        let shards = shards.clone();
        let mut stop = stop_rx.clone();
        acceptors.push(tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    a = listener.accept() => a,
                    _ = stop.wait_for(|s| *s) => return,
                };
                match accepted {
                    Ok((stream, _addr)) => {
                        let _ = stream.set_nodelay(true);
                        let pending = shared.pending_startup();
                        start_session(stream, shared.clone(), pending, shards.as_deref());
                    }
                    Err(e) => {
                        // EMFILE and friends: back off instead of spinning.
                        eprintln!("LOG:  could not accept new connection: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            }
        }));
    }
    shutdown.await;
    let _ = stop_tx.send(true);
    for a in acceptors {
        let _ = a.await;
    }
    if let Ok(reg) = shared.registry.lock() {
        for r in reg.values() {
            r.token.cancel();
        }
    }
    let deadline = tokio::time::Instant::now() + grace;
    while shared.connections() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Sessions still running after the grace period are dropped with their shard; the shard
    // threads are waited for (another grace period at most) so that, when this returns, no
    // session is left writing while the caller shuts the engine down.
    if let Some(shards) = shards.and_then(Arc::into_inner) {
        let _ = tokio::task::spawn_blocking(move || shards.stop(grace)).await;
    }
    Ok(())
}

/// Runs a connection on the least loaded shard, or on this runtime when there are none.
fn start_session<F: BackendFactory>(
    stream: TcpStream,
    shared: Arc<Shared<F>>,
    pending: PendingStartup<F>,
    shards: Option<&Shards>,
) {
    let Some(shards) = shards else {
        tokio::spawn(protocol::run(stream, shared, pending));
        return;
    };
    // The socket moves to the shard's event loop: deregistered here, registered there.
    let socket = match stream.into_std() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("LOG:  could not hand over connection: {e}");
            return;
        }
    };
    let (shard, placement) = shards.place();
    placement.watch(std::os::fd::AsRawFd::as_raw_fd(&socket));
    shard.spawn(async move {
        let _placement = placement;
        match TcpStream::from_std(socket) {
            Ok(stream) => protocol::run(stream, shared, pending).await,
            Err(e) => eprintln!("LOG:  could not hand over connection: {e}"),
        }
    });
}
