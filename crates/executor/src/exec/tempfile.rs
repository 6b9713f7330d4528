//! Temporary files for rows a statement holds past work_mem (a write's input in
//! [`super::tuplestore`], a sort's runs in [`super::sort_spill`]), and the one row format both
//! write into them.
//!
//! A file lives in the data directory's `pgsql_tmp` and is unlinked as soon as it is created:
//! its space is freed when the last handle closes (the operator is dropped, on success, error
//! or cancel alike), or when the server dies, so no crash leaves one behind.
//!
//! Row format: the number of values (u16) and each value's type OID (u32, 0 for NULL), the
//! row's length (u32) and the row in the on-disk row format (`keel_types::row`) under those
//! types, all little-endian. Each value is written under the type its variant stands for
//! (`Datum::natural_type`), so it reads back as the very same variant whatever the plan's
//! declared types.

use super::Row;
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::TypeId;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Creates an empty temporary file in `dir` (created if missing), already unlinked; the path
/// it had names it in errors.
pub(crate) fn create(dir: &Path) -> PgResult<(File, PathBuf)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("pgsql_tmp{}.{n}", std::process::id()));
    std::fs::create_dir_all(dir).map_err(|e| file_error("create", &path, e))?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| file_error("create temporary", &path, e))?;
    // Unlinked at once: the data lives as long as the open file, and no crash leaves it.
    std::fs::remove_file(&path).map_err(|e| file_error("remove", &path, e))?;
    Ok((file, path))
}

/// The error PostgreSQL's temporary files give: ENOSPC is 53100 (disk full).
pub(crate) fn file_error(what: &str, path: &Path, e: std::io::Error) -> PgError {
    let code = if e.kind() == std::io::ErrorKind::StorageFull {
        sqlstate::DISK_FULL
    } else {
        sqlstate::IO_ERROR
    };
    // "No space left on device (os error 28)" -> PostgreSQL's %m, without the number.
    let text = e.to_string();
    let text = match text.rfind(" (os error ") {
        Some(i) => &text[..i],
        None => &text,
    };
    let shown = path
        .parent()
        .and_then(Path::file_name)
        .map(|d| Path::new(d).join(path.file_name().unwrap_or_default()))
        .unwrap_or_else(|| path.to_path_buf());
    PgError::new(
        code,
        format!("could not {what} file \"{}\": {text}", shown.display()),
    )
}

/// Appends `row` to `out` in the format above.
pub(crate) fn encode_row(row: &[keel_types::Datum], out: &mut Vec<u8>) {
    // A composite is written as `record`: its stored form names its own type.
    let types: Vec<TypeId> = row
        .iter()
        .map(|d| match d.natural_type() {
            Some(TypeId::Composite(_)) => TypeId::Record,
            t => t.unwrap_or(TypeId::Text),
        })
        .collect();
    out.extend_from_slice(&(row.len() as u16).to_le_bytes());
    for (d, t) in row.iter().zip(&types) {
        let oid = if d.is_null() { 0 } else { t.oid() };
        out.extend_from_slice(&oid.to_le_bytes());
    }
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    keel_types::row::encode_row(row, &types, out);
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// XX001: a temporary file ended inside a record.
pub(crate) fn truncated() -> PgError {
    PgError::new(
        sqlstate::DATA_CORRUPTED,
        "temporary file record is truncated",
    )
}

/// Reads a record of a temporary file front to back; a record shorter than what it claims is
/// XX001 (the file was damaged under the server), never a panic.
pub(crate) struct Cursor<'b> {
    bytes: &'b [u8],
}

impl<'b> Cursor<'b> {
    pub fn new(bytes: &'b [u8]) -> Cursor<'b> {
        Cursor { bytes }
    }

    pub fn take(&mut self, n: usize) -> PgResult<&'b [u8]> {
        if n > self.bytes.len() {
            return Err(truncated());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    pub fn u8(&mut self) -> PgResult<u8> {
        Ok(self.take(1)?[0])
    }

    pub fn u16(&mut self) -> PgResult<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub fn u32(&mut self) -> PgResult<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A row written by [`encode_row`].
    pub fn row(&mut self) -> PgResult<Row> {
        let n = self.u16()? as usize;
        let types: Vec<TypeId> = self
            .take(4 * n)?
            .chunks_exact(4)
            .map(|c| {
                let oid = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                TypeId::from_oid(oid).unwrap_or(TypeId::Text)
            })
            .collect();
        let len = self.u32()? as usize;
        keel_types::row::decode_row(self.take(len)?, &types)
    }
}
