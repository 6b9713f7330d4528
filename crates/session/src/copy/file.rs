//! COPY's two ends: the client (CopyData messages) or a file the server opens itself
//! (`COPY t FROM '/path'`, `COPY t TO '/path'`), as PostgreSQL's `BeginCopyFrom` and
//! `BeginCopyTo` open it.
//!
//! Keel has no roles yet: every user may read and write server files, as PostgreSQL's
//! superusers (and members of pg_read_server_files / pg_write_server_files) may.

use keel_common::{PgError, PgResult, sqlstate};
use keel_wire::Client;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Bytes COPY FROM reads from a file at a time.
const READ_CHUNK: usize = 64 << 10;

/// Where COPY FROM reads its data.
pub(super) enum CopyInput {
    Client,
    File { file: File, path: String },
}

/// Where COPY TO writes its lines.
pub(super) enum CopyOutput {
    Client,
    File { file: BufWriter<File>, path: String },
}

/// PostgreSQL's hint for a file COPY cannot open, when the cause is that the file is not
/// where (or not whose) the client thought: it may have meant psql's `\copy`.
fn client_side_hint(e: &std::io::Error, reading: bool) -> Option<String> {
    let (verb, what) = if reading {
        ("FROM", "read")
    } else {
        ("TO", "write")
    };
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
    )
    .then(|| {
        format!(
            "COPY {verb} instructs the PostgreSQL server process to {what} a file. You may want \
             a client-side facility such as psql's \\copy."
        )
    })
}

fn open_error(path: &str, e: std::io::Error, reading: bool) -> PgError {
    let mode = if reading { "reading" } else { "writing" };
    let hint = client_side_hint(&e, reading);
    let err = PgError::io(format!("could not open file \"{path}\" for {mode}"), e);
    match hint {
        Some(h) => err.with_hint(h),
        None => err,
    }
}

fn is_directory(path: &str) -> PgError {
    PgError::new(
        sqlstate::WRONG_OBJECT_TYPE,
        format!("\"{path}\" is a directory"),
    )
}

impl CopyInput {
    /// The file of `COPY ... FROM 'path'`; a relative path is read from the data directory,
    /// the server's working directory in PostgreSQL.
    pub(super) fn open(file: Option<&str>, data_dir: &Path) -> PgResult<CopyInput> {
        let Some(path) = file else {
            return Ok(CopyInput::Client);
        };
        let full: PathBuf = data_dir.join(path);
        let f = File::open(&full).map_err(|e| open_error(path, e, true))?;
        let meta = f
            .metadata()
            .map_err(|e| PgError::io(format!("could not stat file \"{path}\""), e))?;
        if meta.is_dir() {
            return Err(is_directory(path));
        }
        Ok(CopyInput::File {
            file: f,
            path: path.to_string(),
        })
    }

    pub(super) fn is_client(&self) -> bool {
        matches!(self, CopyInput::Client)
    }

    /// The next piece of the data, None at its end.
    pub(super) async fn next<C: Client>(
        &mut self,
        client: &mut C,
    ) -> PgResult<Option<bytes::Bytes>> {
        match self {
            CopyInput::Client => client.copy_in_next().await,
            CopyInput::File { file, path } => {
                let mut buf = vec![0; READ_CHUNK];
                let n = file.read(&mut buf).map_err(|e| {
                    PgError::io(format!("could not read from COPY file \"{path}\""), e)
                })?;
                buf.truncate(n);
                Ok((n > 0).then(|| bytes::Bytes::from(buf)))
            }
        }
    }
}

impl CopyOutput {
    /// The file of `COPY ... TO 'path'`, created or truncated; it must be an absolute path.
    pub(super) fn open(file: Option<&str>) -> PgResult<CopyOutput> {
        let Some(path) = file else {
            return Ok(CopyOutput::Client);
        };
        if !Path::new(path).is_absolute() {
            return Err(PgError::new(
                sqlstate::INVALID_NAME,
                "relative path not allowed for COPY to file",
            ));
        }
        // A directory fails to open, with EISDIR's text, as PostgreSQL's fopen does.
        let f = File::create(path).map_err(|e| open_error(path, e, false))?;
        Ok(CopyOutput::File {
            file: BufWriter::new(f),
            path: path.to_string(),
        })
    }

    pub(super) fn is_client(&self) -> bool {
        matches!(self, CopyOutput::Client)
    }

    pub(super) fn write<C: Client>(&mut self, client: &mut C, line: &[u8]) -> PgResult<()> {
        match self {
            CopyOutput::Client => {
                client.copy_out_data(line);
                Ok(())
            }
            CopyOutput::File { file, path } => file
                .write_all(line)
                .map_err(|e| PgError::io(format!("could not write to COPY file \"{path}\""), e)),
        }
    }

    /// Flushes a file's buffered lines (the client's are flushed by the protocol loop).
    pub(super) fn finish(&mut self) -> PgResult<()> {
        match self {
            CopyOutput::Client => Ok(()),
            CopyOutput::File { file, path } => file
                .flush()
                .map_err(|e| PgError::io(format!("could not write to COPY file \"{path}\""), e)),
        }
    }
}
