//! The sqllogictest database driver: one tokio-postgres connection per sqllogictest
//! connection, statements sent with the simple query protocol so every value comes back in
//! PostgreSQL's text output format (what psql shows), whatever the type.

use sqllogictest::{AsyncDB, DBOutput, DefaultColumnType};
use std::fmt;
use std::time::Duration;
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

/// How long one record may take before it counts as hung (keel or PostgreSQL not answering).
pub const RECORD_TIMEOUT: Duration = Duration::from_secs(20);

/// An error from the server (with its SQLSTATE) or from the client side (without one).
#[derive(Debug, Clone)]
pub struct SltError {
    pub sqlstate: Option<String>,
    pub message: String,
}

impl fmt::Display for SltError {
    /// `db error: <SQLSTATE>: <message>`, so an inline regex can match either part.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.sqlstate {
            Some(code) => write!(f, "db error: {code}: {}", self.message),
            None => write!(f, "client error: {}", self.message),
        }
    }
}

impl std::error::Error for SltError {}

impl From<tokio_postgres::Error> for SltError {
    fn from(e: tokio_postgres::Error) -> Self {
        match e.as_db_error() {
            Some(db) => SltError {
                sqlstate: Some(db.code().code().to_string()),
                message: db.message().to_string(),
            },
            None => SltError {
                sqlstate: None,
                message: format!("{e:?}"),
            },
        }
    }
}

/// One session against keel or PostgreSQL. `label` is the engine name that `skipif` /
/// `onlyif` conditions see (`keel` or `postgres`).
pub struct PgDb {
    client: Client,
    label: String,
    /// Set after a client-side failure (protocol confusion, timeout): the session's state is
    /// unknown, so later records fail at once instead of each waiting for the deadline.
    broken: Option<String>,
}

impl PgDb {
    /// Connects with a deadline; the connection task runs on the current tokio runtime.
    pub async fn connect(conn_str: &str, label: &str) -> Result<PgDb, SltError> {
        let fut = tokio_postgres::connect(conn_str, NoTls);
        let (client, conn) = match tokio::time::timeout(RECORD_TIMEOUT, fut).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(SltError {
                    sqlstate: None,
                    message: format!("connect {conn_str}: timed out"),
                });
            }
        };
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(PgDb {
            client,
            label: label.to_string(),
            broken: None,
        })
    }
}

/// A value as it appears in a result line: NULL as `NULL`, the empty string as `(empty)`,
/// and line breaks / tabs escaped so one row stays one line. Spaces are kept: results are
/// compared exactly (see [`crate::exact_validator`]).
pub fn render_value(v: Option<&str>) -> String {
    match v {
        None => "NULL".to_string(),
        Some("") => "(empty)".to_string(),
        Some(s) => s
            .replace('\\', "\\\\")
            .replace('\n', "\\n")
            .replace('\r', "\\r")
            .replace('\t', "\\t"),
    }
}

#[async_trait::async_trait]
impl AsyncDB for PgDb {
    type Error = SltError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<Self::ColumnType>, Self::Error> {
        if let Some(why) = &self.broken {
            return Err(SltError {
                sqlstate: None,
                message: format!("session unusable since an earlier record: {why}"),
            });
        }
        let fut = self.client.simple_query(sql);
        let res = match tokio::time::timeout(RECORD_TIMEOUT, fut).await {
            Ok(r) => r.map_err(SltError::from),
            Err(_) => Err(SltError {
                sqlstate: None,
                message: format!("no answer within {RECORD_TIMEOUT:?}"),
            }),
        };
        let msgs = match res {
            Ok(m) => m,
            Err(e) => {
                if e.sqlstate.is_none() {
                    self.broken = Some(e.message.clone());
                }
                return Err(e);
            }
        };
        let mut columns = None;
        let mut rows = Vec::new();
        let mut count = 0;
        for m in &msgs {
            match m {
                SimpleQueryMessage::RowDescription(cols) => columns = Some(cols.len()),
                SimpleQueryMessage::Row(r) => {
                    rows.push((0..r.len()).map(|i| render_value(r.get(i))).collect());
                }
                SimpleQueryMessage::CommandComplete(n) => count = *n,
                _ => {}
            }
        }
        match columns {
            Some(n) => Ok(DBOutput::Rows {
                types: vec![DefaultColumnType::Text; n],
                rows,
            }),
            None => Ok(DBOutput::StatementComplete(count)),
        }
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        &self.label
    }

    async fn sleep(dur: Duration) {
        tokio::time::sleep(dur).await
    }

    fn error_sql_state(err: &Self::Error) -> Option<String> {
        err.sqlstate.clone()
    }
}
