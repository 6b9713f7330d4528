//! WAL segment files: creation, recycling, listing.
//!
//! A segment is created whole or not at all, as PostgreSQL's `XLogFileInit` does: it is
//! zero-filled to its full 16 MB under a temporary name (`xlogtemp.*`), fsynced, and only then
//! renamed to its number. A full disk therefore fails the creation without leaving a
//! half-filled segment behind (the temporary file is removed; one left by a process that died
//! meanwhile is removed at the next start), and a segment in place never needs to grow, so the
//! writer's `fdatasync` never has a size to update.

use super::SEGMENT_SIZE;
use crate::io::{Fs, FsFile, OpenMode};
use keel_common::{PgError, PgResult};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

const TEMP_PREFIX: &str = "xlogtemp.";

/// Makes temporary names unique among this process's creators (the writer, the thread that
/// creates segments ahead).
static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

pub(crate) struct Segments {
    pub(crate) fs: Arc<dyn Fs>,
    pub(crate) dir: PathBuf,
}

pub(crate) fn segment_path(dir: &Path, seg: u64) -> PathBuf {
    dir.join(format!("{seg:016X}"))
}

/// A path inside the WAL directory as errors name it (PostgreSQL names files relative to
/// the data directory: "wal/0000000000000002").
pub(crate) fn shown(path: &Path) -> String {
    match path.file_name() {
        Some(name) => format!("wal/{}", name.to_string_lossy()),
        None => path.display().to_string(),
    }
}

impl Segments {
    pub(crate) fn new(fs: Arc<dyn Fs>, dir: PathBuf) -> Segments {
        Segments { fs, dir }
    }

    pub(crate) fn path(&self, seg: u64) -> PathBuf {
        segment_path(&self.dir, seg)
    }

    /// The segment numbers of the files in the WAL directory.
    pub(crate) fn list(&self) -> PgResult<Vec<u64>> {
        let names = self
            .fs
            .list(&self.dir)
            .map_err(|e| PgError::io("could not list wal directory", e))?;
        Ok(names
            .iter()
            .filter_map(|n| u64::from_str_radix(n, 16).ok())
            .collect())
    }

    /// Removes temporary files a creation left when its process died.
    pub(crate) fn remove_temp_files(&self) -> PgResult<()> {
        let names = self
            .fs
            .list(&self.dir)
            .map_err(|e| PgError::io("could not list wal directory", e))?;
        for name in names.iter().filter(|n| n.starts_with(TEMP_PREFIX)) {
            let path = self.dir.join(name);
            self.fs.remove(&path).map_err(|e| {
                PgError::io(format!("could not remove file \"{}\"", shown(&path)), e)
            })?;
        }
        Ok(())
    }

    /// Opens segment `seg`, creating it (whole) if it is missing. A shorter file (a size
    /// change a power loss undid) is zero-filled to full length, or cut back if that fails.
    pub(crate) fn open(&self, seg: u64) -> PgResult<Box<dyn FsFile>> {
        let path = self.path(seg);
        let open_err = |e| PgError::io(format!("could not open file \"{}\"", shown(&path)), e);
        if !self.fs.exists(&path) {
            self.create(seg)?;
        }
        let file = self.fs.open(&path, OpenMode::Existing).map_err(open_err)?;
        let len = file.size().map_err(open_err)?;
        if len < SEGMENT_SIZE {
            let filled = zero_fill(&*file, &path, len, SEGMENT_SIZE - len).and_then(|()| {
                file.sync_all().map_err(|e| {
                    PgError::io(format!("could not fsync file \"{}\"", shown(&path)), e)
                })
            });
            if let Err(e) = filled {
                let _ = file.set_len(len);
                return Err(e);
            }
        }
        Ok(file)
    }

    /// Creates segment `seg` full-length unless it exists (another creator, or a recycled
    /// file renamed there meanwhile, got there first: that file is as good).
    pub(crate) fn create(&self, seg: u64) -> PgResult<()> {
        let n = TEMP_SEQ.fetch_add(1, Ordering::Relaxed);
        let tmp = self
            .dir
            .join(format!("{TEMP_PREFIX}{seg:X}.{}.{n}", std::process::id()));
        let made = self.fill_temp(&tmp).and_then(|()| {
            match self.fs.rename_noreplace(&tmp, &self.path(seg)) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let _ = self.fs.remove(&tmp);
                    Ok(())
                }
                Err(e) => Err(PgError::io(
                    format!(
                        "could not rename file \"{}\" to \"{}\"",
                        shown(&tmp),
                        shown(&self.path(seg))
                    ),
                    e,
                )),
            }
        });
        if made.is_err() {
            let _ = self.fs.remove(&tmp);
        }
        made
    }

    fn fill_temp(&self, tmp: &Path) -> PgResult<()> {
        let file = self
            .fs
            .open(tmp, OpenMode::Truncate)
            .map_err(|e| PgError::io(format!("could not create file \"{}\"", shown(tmp)), e))?;
        zero_fill(&*file, tmp, 0, SEGMENT_SIZE)?;
        file.sync_all()
            .map_err(|e| PgError::io(format!("could not fsync file \"{}\"", shown(tmp)), e))
    }

    /// Removes segment `seg` (missing is fine).
    pub(crate) fn remove(&self, seg: u64) -> PgResult<()> {
        let path = self.path(seg);
        match self.fs.remove(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(PgError::io(
                format!("could not remove file \"{}\"", shown(&path)),
                e,
            )),
        }
    }

    /// Makes the WAL directory's entries (created, renamed, removed files) durable.
    pub(crate) fn sync_dir(&self) -> PgResult<()> {
        self.fs
            .sync_dir(&self.dir)
            .map_err(|e| PgError::io("could not fsync directory \"wal\"", e))
    }
}

/// Writes zeros over `len` bytes of `file` from `from`.
pub(crate) fn zero_fill(file: &dyn FsFile, path: &Path, from: u64, len: u64) -> PgResult<()> {
    const CHUNK: usize = 1 << 20;
    static ZEROS: [u8; CHUNK] = [0u8; CHUNK];
    let mut pos = from;
    let end = from + len;
    while pos < end {
        let n = ((end - pos) as usize).min(CHUNK);
        file.write_all_at(&ZEROS[..n], pos)
            .map_err(|e| PgError::io(format!("could not write to file \"{}\"", shown(path)), e))?;
        pos += n as u64;
    }
    Ok(())
}
