//! The contract between the protocol layer and the session layer.

use keel_common::{Oid, PgError, PgResult};
use std::future::Future;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What the client sent in its StartupMessage.
#[derive(Clone, Debug, Default)]
pub struct StartupInfo {
    pub user: String,
    pub database: String,
    /// All startup parameters, including `user`, `database`, `application_name`, `options`.
    pub params: Vec<(String, String)>,
}

/// A column of a RowDescription.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDescription {
    pub name: String,
    pub table_oid: Oid,
    pub column_attnum: i16,
    pub type_oid: Oid,
    pub type_len: i16,
    pub type_modifier: i32,
    /// 0 = text, 1 = binary.
    pub format: i16,
}

/// How an Execute ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecuteOutcome {
    /// CommandComplete with this tag (`SELECT 1`, `INSERT 0 1`, `UPDATE 3`, `BEGIN`).
    Complete(String),
    /// The row limit was reached: PortalSuspended.
    Suspended,
    /// The statement was empty: EmptyQueryResponse.
    Empty,
}

/// Set by a CancelRequest from another connection; the session polls it while executing and
/// `notified()` wakes lock waits so they can give up with 57014.
///
/// The protocol layer calls `reset()` when a new command cycle begins (a Query, or the first
/// extended-protocol message after ReadyForQuery), so a cancel that arrives while the session
/// is idle is dropped, as in PostgreSQL.
///
/// It also notices a client that has gone (PostgreSQL's `client_connection_check_interval`):
/// [`interrupted`](Self::interrupted), the executor's interrupt check, and
/// [`cancelled`](Self::cancelled), which lock waits await, poll the client's socket at most
/// once per interval. A closed socket cancels the statement and marks the token
/// [`client_gone`](Self::client_gone); the protocol layer then ends the connection.
pub struct CancelToken {
    requested: AtomicBool,
    notify: tokio::sync::Notify,
    /// The client's socket, -1 when there is none to check. Set by the protocol layer while
    /// the connection's task owns the socket, cleared before the socket is closed.
    socket: AtomicI32,
    /// client_connection_check_interval in milliseconds; 0 turns the check off.
    check_interval_ms: AtomicU32,
    /// When the socket was last polled, in milliseconds since `epoch`.
    last_check_ms: AtomicU64,
    epoch: Instant,
    gone: AtomicBool,
}

impl Default for CancelToken {
    fn default() -> Self {
        CancelToken {
            requested: AtomicBool::new(false),
            notify: tokio::sync::Notify::new(),
            socket: AtomicI32::new(-1),
            check_interval_ms: AtomicU32::new(0),
            last_check_ms: AtomicU64::new(0),
            epoch: Instant::now(),
            gone: AtomicBool::new(false),
        }
    }
}

/// Whether the peer of `fd` has closed its end or the connection failed: one poll(2) with a
/// zero timeout, reading nothing (PostgreSQL's `pq_check_connection`). POLLRDHUP reports a
/// FIN even while unread input is queued.
fn peer_closed(fd: RawFd) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLRDHUP,
        revents: 0,
    };
    // SAFETY: poll(2) on one valid pollfd struct, zero timeout; it only writes `revents`.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && p.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0
}

impl CancelToken {
    /// The client's socket to check while a statement runs (None: stop checking).
    pub(crate) fn set_socket(&self, fd: Option<RawFd>) {
        self.socket.store(fd.unwrap_or(-1), Ordering::Relaxed);
    }

    /// client_connection_check_interval; zero turns the check off.
    pub fn set_check_interval(&self, interval: Duration) {
        let ms = interval.as_millis().min(u32::MAX as u128) as u32;
        self.check_interval_ms.store(ms, Ordering::Relaxed);
    }

    /// The executor's interrupt check: a cancel request, or (at most once per
    /// client_connection_check_interval) a client that has gone.
    #[inline]
    pub fn interrupted(&self) -> bool {
        self.is_cancelled() || self.check_client(false)
    }

    /// True once the client was found gone: the connection is to be ended, not just the
    /// statement.
    pub fn client_gone(&self) -> bool {
        self.gone.load(Ordering::Relaxed)
    }

    /// Polls the client's socket if the interval has passed since the last poll (or at once
    /// with `now`); a closed socket cancels. Cheap when the interval has not passed: a clock
    /// read.
    fn check_client(&self, now: bool) -> bool {
        let interval = self.check_interval_ms.load(Ordering::Relaxed);
        let fd = self.socket.load(Ordering::Relaxed);
        if interval == 0 || fd < 0 {
            return false;
        }
        let elapsed = self.epoch.elapsed().as_millis() as u64;
        let last = self.last_check_ms.load(Ordering::Relaxed);
        if !now && elapsed.saturating_sub(last) < u64::from(interval) {
            return false;
        }
        self.last_check_ms.store(elapsed, Ordering::Relaxed);
        if !peer_closed(fd) {
            return false;
        }
        self.gone.store(true, Ordering::Relaxed);
        self.cancel();
        true
    }

    pub fn cancel(&self) {
        self.requested.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    pub fn is_cancelled(&self) -> bool {
        self.requested.load(Ordering::Relaxed)
    }

    /// Clears a pending cancel; called when a new query starts, as PostgreSQL does.
    pub fn reset(&self) {
        self.requested.store(false, Ordering::SeqCst);
    }

    /// Resolves when `cancel()` is called (after this future is first polled), or when the
    /// client is found gone: while client_connection_check_interval is on, the socket is
    /// polled once per interval.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.notify.notified();
            if self.is_cancelled() {
                return;
            }
            let interval = self.check_interval_ms.load(Ordering::Relaxed);
            if interval == 0 || self.socket.load(Ordering::Relaxed) < 0 {
                return notified.await;
            }
            tokio::select! {
                _ = notified => return,
                _ = tokio::time::sleep(Duration::from_millis(u64::from(interval))) => {
                    if self.check_client(true) {
                        return;
                    }
                }
            }
        }
    }
}

/// Output side of a connection, handed to the backend while it executes.
/// Writes are buffered; the protocol layer flushes.
pub trait Client: Send {
    fn row_description(&mut self, fields: &[FieldDescription]);
    /// One DataRow; `None` is SQL NULL. Values are already encoded in the column's format.
    fn data_row(&mut self, values: &[Option<&[u8]>]);
    fn command_complete(&mut self, tag: &str);
    fn empty_query(&mut self);
    /// A NoticeResponse (severity NOTICE, INFO, WARNING...).
    fn notice(&mut self, notice: &PgError);
    fn parameter_status(&mut self, name: &str, value: &str);
    /// Starts COPY FROM STDIN (CopyInResponse); then call `copy_in_next` until it returns `None`.
    fn copy_in_start(
        &mut self,
        binary: bool,
        columns: usize,
    ) -> impl Future<Output = PgResult<()>> + Send;
    /// The next CopyData payload, `None` on CopyDone, an error (57014) on CopyFail or disconnect.
    fn copy_in_next(&mut self) -> impl Future<Output = PgResult<Option<bytes::Bytes>>> + Send;
    /// Starts COPY TO STDOUT (CopyOutResponse).
    fn copy_out_start(&mut self, binary: bool, columns: usize);
    fn copy_out_data(&mut self, data: &[u8]);
    fn copy_out_done(&mut self);
    /// Flushes buffered output to the socket (e.g. before a long wait).
    fn flush(&mut self) -> impl Future<Output = PgResult<()>> + Send;

    /// True when more than ~64 kB of output is buffered and the socket did not take it
    /// without waiting. A backend producing a long result should then `flush().await` (which
    /// waits for the client to read, bounding memory); ignoring it is correct but buffers the
    /// whole result.
    fn wants_flush(&self) -> bool {
        false
    }
}

/// One session's SQL engine, driven by the protocol loop.
///
/// Errors returned from any method are sent as ErrorResponse. In a simple query the backend
/// has already reported the statements before the failing one; in the extended protocol the
/// protocol layer then skips messages until Sync.
pub trait Backend: Send + 'static {
    /// ParameterStatus values to send after authentication (server_version, client_encoding,
    /// DateStyle, TimeZone, integer_datetimes, standard_conforming_strings, ...).
    fn startup_parameters(&self) -> Vec<(String, String)>;

    /// A Query message: one or more statements separated by `;`. The backend writes each
    /// statement's results itself, including CommandComplete, and EmptyQueryResponse when the
    /// string holds no statement; on error it returns the error after having written the
    /// results of the statements before it. The protocol layer then sends ErrorResponse (if
    /// any) and ReadyForQuery. A FATAL-severity error also closes the connection.
    fn simple_query<C: Client>(
        &mut self,
        sql: &str,
        client: &mut C,
    ) -> impl Future<Output = PgResult<()>> + Send;

    /// Parse: prepare `sql` as statement `name` ("" = unnamed). `param_types` may contain 0s.
    fn parse(&mut self, name: &str, sql: &str, param_types: &[Oid]) -> PgResult<()>;

    /// Bind: create portal `portal` from statement `statement`.
    /// `param_formats` and `result_formats` follow the protocol's 0/1/n convention.
    fn bind(
        &mut self,
        portal: &str,
        statement: &str,
        param_formats: &[i16],
        params: &[Option<bytes::Bytes>],
        result_formats: &[i16],
    ) -> PgResult<()>;

    /// Describe of a statement: parameter type OIDs and the row shape (None = NoData).
    fn describe_statement(
        &mut self,
        name: &str,
    ) -> PgResult<(Vec<Oid>, Option<Vec<FieldDescription>>)>;

    /// Describe of a portal: the row shape (None = NoData).
    fn describe_portal(&mut self, name: &str) -> PgResult<Option<Vec<FieldDescription>>>;

    /// Execute: run portal `portal` for at most `max_rows` rows (0 = all).
    fn execute<C: Client>(
        &mut self,
        portal: &str,
        max_rows: u32,
        client: &mut C,
    ) -> impl Future<Output = PgResult<ExecuteOutcome>> + Send;

    fn close_statement(&mut self, name: &str);
    fn close_portal(&mut self, name: &str);

    /// Sync: ends an implicit transaction started by extended-protocol messages (commits it, or
    /// rolls it back after an error). Awaits the commit's WAL flush.
    fn sync(&mut self) -> impl Future<Output = PgResult<()>> + Send;

    /// Called once an ErrorResponse has been written to the socket: a backend that ends a
    /// failed transaction here (releasing its locks) does so after the client has the error,
    /// as PostgreSQL reports an error before it aborts the transaction.
    fn error_reported(&mut self) {}

    /// The first message of a command cycle arrived (the session is no longer waiting for its
    /// client).
    fn command_started(&mut self) {}

    /// ReadyForQuery is being written: the session now waits for its client. Returns the
    /// status it carries: 'I' idle, 'T' in a transaction block, 'E' in a failed transaction block.
    fn ready_for_query(&mut self) -> u8;

    /// The client is gone (Terminate or EOF): roll back whatever is open.
    fn terminate(&mut self) -> impl Future<Output = ()> + Send;
}

/// Creates a backend per accepted connection, after authentication.
pub trait BackendFactory: Send + Sync + 'static {
    type Backend: Backend;

    /// Fails with 53300 when max_connections is reached, 3D000 for an unknown database.
    fn connect(
        &self,
        startup: &StartupInfo,
        cancel: Arc<CancelToken>,
        pid: i32,
    ) -> PgResult<Self::Backend>;

    /// The SCRAM-SHA-256 verifier of `user`'s password, or None when the user has none (and
    /// cannot log in under scram-sha-256). Never the password itself: the server keeps only
    /// verifiers.
    fn verifier_for(&self, user: &str) -> Option<Arc<crate::scram::Verifier>>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_closed_peer_interrupts_at_most_once_per_interval() {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let token = CancelToken::default();
        token.set_socket(Some(ours.as_raw_fd()));
        // Off until an interval is set.
        drop(theirs);
        assert!(!token.interrupted());
        token.set_check_interval(Duration::from_millis(50));
        // 60 ms after the token was made a poll is due, and finds the peer gone.
        std::thread::sleep(Duration::from_millis(60));
        assert!(token.interrupted());
        assert!(token.client_gone() && token.is_cancelled());

        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let token = CancelToken::default();
        token.set_socket(Some(ours.as_raw_fd()));
        token.set_check_interval(Duration::from_secs(3600));
        // Unread input is not a closed peer.
        std::io::Write::write_all(&mut &theirs, b"x").unwrap();
        assert!(!token.check_client(true));
        // Within the interval the socket is not polled again.
        drop(theirs);
        assert!(!token.interrupted());
        assert!(token.check_client(true));
    }

    #[tokio::test]
    async fn a_lock_wait_ends_when_the_client_goes() {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let token = Arc::new(CancelToken::default());
        token.set_socket(Some(ours.as_raw_fd()));
        token.set_check_interval(Duration::from_millis(20));
        let waiter = tokio::spawn({
            let token = token.clone();
            async move { token.cancelled().await }
        });
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert!(!waiter.is_finished());
        drop(theirs);
        tokio::time::timeout(Duration::from_secs(2), waiter)
            .await
            .unwrap()
            .unwrap();
        assert!(token.client_gone());
    }
}
