//! The contract between the protocol layer and the session layer.

use keel_common::{Oid, PgError, PgResult};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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
#[derive(Default)]
pub struct CancelToken {
    requested: AtomicBool,
    notify: tokio::sync::Notify,
}

impl CancelToken {
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

    /// Resolves when `cancel()` is called (after this future is first polled).
    pub async fn cancelled(&self) {
        let notified = self.notify.notified();
        if self.is_cancelled() {
            return;
        }
        notified.await;
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
