//! PostgreSQL-style errors: severity, SQLSTATE, message, detail, hint, cursor position.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Fatal,
    Panic,
    Warning,
    Notice,
    Info,
    Debug,
    Log,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "ERROR",
            Severity::Fatal => "FATAL",
            Severity::Panic => "PANIC",
            Severity::Warning => "WARNING",
            Severity::Notice => "NOTICE",
            Severity::Info => "INFO",
            Severity::Debug => "DEBUG",
            Severity::Log => "LOG",
        }
    }
}

/// An error (or notice) as the wire protocol reports it. The report lives on the heap: a
/// `PgResult<T>` is then `T` plus at most a pointer, so the per-row paths that return
/// `PgResult<Datum>` move 32 bytes instead of the report's hundred-odd, and `?` on the happy
/// path copies no error-sized frame. Fields are read and written through `Deref`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgError(Box<ErrorReport>);

/// The fields of a [`PgError`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorReport {
    pub severity: Severity,
    /// Five-character SQLSTATE, e.g. `"42P01"`.
    pub code: &'static str,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    /// 1-based character offset into the query string, as in PostgreSQL's `P` field.
    pub position: Option<u32>,
    /// The object the error is about (PostgreSQL's `s`, `t`, `c`, `d`, `n` fields).
    pub objects: Option<Box<ErrorObjects>>,
    /// Keel has not built what the statement needs ([`PgError::unsupported`]). PostgreSQL
    /// would have run it, so a PL/pgSQL `WHEN OTHERS` handler does not catch it: a program
    /// that went on would do what it would not do on PostgreSQL.
    pub unbuilt: bool,
    /// PostgreSQL reports this error without a cursor position though the statement's
    /// analysis raised it ([`PgError::unplaced`]): no caller adds one.
    pub unplaced: bool,
}

/// Names of the database objects an error concerns, shown by `\set VERBOSITY verbose`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorObjects {
    pub schema: Option<String>,
    pub table: Option<String>,
    pub column: Option<String>,
    pub datatype: Option<String>,
    pub constraint: Option<String>,
    /// PostgreSQL's `W` field: where the error happened, innermost first, one line each
    /// (`PL/pgSQL function inline_code_block line 3 at RAISE`).
    pub context: Option<String>,
    /// PostgreSQL's `q` and `p` fields: the statement inside a function body that failed and
    /// the cursor position in it.
    pub internal_query: Option<String>,
    pub internal_position: Option<u32>,
}

pub type PgResult<T> = Result<T, PgError>;

impl std::ops::Deref for PgError {
    type Target = ErrorReport;
    #[inline]
    fn deref(&self) -> &ErrorReport {
        &self.0
    }
}

impl std::ops::DerefMut for PgError {
    #[inline]
    fn deref_mut(&mut self) -> &mut ErrorReport {
        &mut self.0
    }
}

impl PgError {
    #[cold]
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self::notice(Severity::Error, code, message)
    }

    #[cold]
    pub fn fatal(code: &'static str, message: impl Into<String>) -> Self {
        Self::notice(Severity::Fatal, code, message)
    }

    /// A notice-level message (NoticeResponse), e.g. `INFO` lines of VACUUM VERBOSE.
    #[cold]
    pub fn notice(severity: Severity, code: &'static str, message: impl Into<String>) -> Self {
        PgError(Box::new(ErrorReport {
            severity,
            code,
            message: message.into(),
            detail: None,
            hint: None,
            position: None,
            objects: None,
            unbuilt: false,
            unplaced: false,
        }))
    }

    /// The report, owned: for moving its fields out.
    pub fn into_report(self) -> ErrorReport {
        *self.0
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// Appends a CONTEXT line (the caller's place comes after the callee's).
    pub fn with_context_line(mut self, line: impl Into<String>) -> Self {
        let o = self.objects_mut();
        match &mut o.context {
            Some(c) => {
                c.push('\n');
                c.push_str(&line.into());
            }
            None => o.context = Some(line.into()),
        }
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_position(mut self, position: u32) -> Self {
        self.position = Some(position);
        self
    }

    pub fn objects_mut(&mut self) -> &mut ErrorObjects {
        self.objects.get_or_insert_with(Default::default)
    }

    /// The table (in schema `public`) the error is about.
    pub fn with_table(mut self, table: impl Into<String>) -> Self {
        let o = self.objects_mut();
        o.schema = Some("public".into());
        o.table = Some(table.into());
        self
    }

    pub fn with_column(mut self, column: impl Into<String>) -> Self {
        self.objects_mut().column = Some(column.into());
        self
    }

    pub fn with_constraint(mut self, constraint: impl Into<String>) -> Self {
        self.objects_mut().constraint = Some(constraint.into());
        self
    }

    pub fn with_datatype(mut self, datatype: impl Into<String>) -> Self {
        let o = self.objects_mut();
        o.schema = Some("pg_catalog".into());
        o.datatype = Some(datatype.into());
        self
    }

    /// An error PostgreSQL reports without a cursor position (see [`ErrorReport::unplaced`]).
    pub fn unplaced(mut self) -> Self {
        self.unplaced = true;
        self
    }

    /// Sets the position only if none was set closer to the error's source.
    pub fn or_position(mut self, position: u32) -> Self {
        if self.position.is_none() && !self.unplaced {
            self.position = Some(position);
        }
        self
    }

    /// A feature Keel does not implement yet (SQLSTATE 0A000).
    pub fn unsupported(what: impl fmt::Display) -> Self {
        let mut e = PgError::new(
            crate::sqlstate::FEATURE_NOT_SUPPORTED,
            format!("{what} is not supported"),
        );
        e.unbuilt = true;
        e
    }

    /// An internal invariant broke (SQLSTATE XX000).
    pub fn internal(message: impl Into<String>) -> Self {
        PgError::new(crate::sqlstate::INTERNAL_ERROR, message)
    }

    /// An I/O error from the operating system: `{context}: {text}`, the text as PostgreSQL's
    /// `%m` prints it (no "(os error N)"), and the SQLSTATE PostgreSQL's
    /// `errcode_for_file_access` gives: 53100 for a full disk, 58030 otherwise.
    pub fn io(context: impl fmt::Display, err: std::io::Error) -> Self {
        PgError::new(io_sqlstate(&err), format!("{context}: {}", io_text(&err)))
    }
}

/// The SQLSTATE of a failed file operation, as PostgreSQL's `errcode_for_file_access` maps
/// `errno`: a missing file 58P01, an existing one 58P02, no permission 42501, a full disk
/// 53100, anything else 58030.
pub fn io_sqlstate(err: &std::io::Error) -> &'static str {
    use crate::sqlstate;
    match err.raw_os_error() {
        Some(libc::ENOENT) => sqlstate::UNDEFINED_FILE,
        Some(libc::EEXIST) => sqlstate::DUPLICATE_FILE,
        Some(libc::EACCES | libc::EPERM) => sqlstate::INSUFFICIENT_PRIVILEGE,
        Some(libc::ENOSPC) => sqlstate::DISK_FULL,
        _ if err.kind() == std::io::ErrorKind::StorageFull => sqlstate::DISK_FULL,
        _ => sqlstate::IO_ERROR,
    }
}

/// An I/O error's text without Rust's " (os error N)" suffix, as `strerror` gives it.
pub fn io_text(err: &std::io::Error) -> String {
    let text = err.to_string();
    match err.raw_os_error() {
        Some(code) => text
            .strip_suffix(&format!(" (os error {code})"))
            .map(str::to_string)
            .unwrap_or(text),
        None => text,
    }
}

impl fmt::Display for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:  {} ({})",
            self.severity.as_str(),
            self.message,
            self.code
        )
    }
}

impl std::error::Error for PgError {}

/// `pg_err!(code, "format", args...)` builds a [`PgError`] with the given SQLSTATE.
#[macro_export]
macro_rules! pg_err {
    ($code:expr, $($arg:tt)+) => {
        $crate::PgError::new($code, format!($($arg)+))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_carry_postgres_sqlstate_and_strerror_text() {
        let full = PgError::io(
            "could not write file \"xact\"",
            std::io::Error::from_raw_os_error(libc::ENOSPC),
        );
        assert_eq!(full.code, crate::sqlstate::DISK_FULL);
        assert_eq!(
            full.message,
            "could not write file \"xact\": No space left on device"
        );
        let eio = PgError::io("x", std::io::Error::from_raw_os_error(libc::EIO));
        assert_eq!(eio.code, crate::sqlstate::IO_ERROR);
        assert_eq!(eio.message, "x: Input/output error");
    }
}
