//! The data directory lock: one server per data directory.
//!
//! A second server on a live directory would replay the WAL over pages the first is still
//! writing and interleave its own log records with the first's; both lose committed rows.
//! PostgreSQL guards against this with `postmaster.pid`; keel uses the same file name and
//! the same first lines (PID, data directory, start time, port, socket directory, listen
//! address), and holds an exclusive `flock(2)` on it until `Engine::release_data_dir` (the
//! keel binary's last step) or process exit.
//!
//! A lock rather than a PID check: the kernel drops it when the process dies, SIGKILL
//! included, so a stale file never blocks a restart and a recycled PID never fools it.
//! A clean shutdown deletes the file while still holding the lock. A starter that opened the
//! file just before the delete would then hold a lock on an unlinked file, so after locking
//! it checks that the path still names the file it locked, and starts over if not.

use keel_common::error::{PgError, PgResult};
use keel_common::sqlstate;
use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

pub(crate) const LOCK_FILE: &str = "postmaster.pid";

/// Held for as long as this process owns the data directory.
pub(crate) struct DirLock {
    file: File,
    path: PathBuf,
}

impl DirLock {
    /// Takes the lock, or fails with a FATAL naming the process that holds it.
    pub(crate) fn acquire(data_dir: &Path, port: i64, listen: &str) -> PgResult<DirLock> {
        let path = data_dir.join(LOCK_FILE);
        let io = |e: std::io::Error| PgError::io("could not lock data directory", e);
        for _ in 0..100 {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => return Err(held_by_other(data_dir, &path)),
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
            let same = match std::fs::metadata(&path) {
                Ok(m) => m.ino() == file.metadata().map_err(io)?.ino(),
                Err(_) => false,
            };
            if !same {
                continue;
            }
            let lock = DirLock { file, path };
            lock.describe(data_dir, port, listen).map_err(io)?;
            return Ok(lock);
        }
        Err(PgError::fatal(
            sqlstate::OBJECT_IN_USE,
            format!("could not lock data directory \"{}\"", data_dir.display()),
        ))
    }

    /// Writes PostgreSQL's first six postmaster.pid lines.
    fn describe(&self, data_dir: &Path, port: i64, listen: &str) -> std::io::Result<()> {
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let dir = std::fs::canonicalize(data_dir).unwrap_or_else(|_| data_dir.to_path_buf());
        let text = format!(
            "{}\n{}\n{started}\n{port}\n\n{listen}\n",
            std::process::id(),
            dir.display()
        );
        // Overwrite, then cut: a reader never finds the file empty.
        self.file.write_all_at(text.as_bytes(), 0)?;
        self.file.set_len(text.len() as u64)
    }

    /// Ends ownership at a clean shutdown: deletes the file, then unlocks it.
    pub(crate) fn release(self) {
        let _ = std::fs::remove_file(&self.path);
        drop(self.file);
    }
}

fn held_by_other(data_dir: &Path, path: &Path) -> PgError {
    let pid = std::fs::read_to_string(path)
        .ok()
        .and_then(|s| s.lines().next().map(|l| l.trim().to_string()))
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    PgError::fatal(
        sqlstate::OBJECT_IN_USE,
        format!("lock file \"{LOCK_FILE}\" already exists"),
    )
    .with_hint(format!(
        "Is another keel (PID {pid}) running in data directory \"{}\"?",
        data_dir.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_owner_is_refused_until_release() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(dir.path(), 5433, "127.0.0.1").unwrap();
        let text = std::fs::read_to_string(dir.path().join(LOCK_FILE)).unwrap();
        assert_eq!(
            text.lines().next(),
            Some(std::process::id().to_string().as_str())
        );
        assert_eq!(text.lines().nth(3), Some("5433"));

        let err = DirLock::acquire(dir.path(), 5433, "127.0.0.1")
            .err()
            .unwrap();
        assert_eq!(err.code, sqlstate::OBJECT_IN_USE);
        assert_eq!(err.message, "lock file \"postmaster.pid\" already exists");
        assert!(
            err.hint
                .as_ref()
                .unwrap()
                .contains(&std::process::id().to_string())
        );

        first.release();
        assert!(!dir.path().join(LOCK_FILE).exists());
        DirLock::acquire(dir.path(), 5433, "127.0.0.1")
            .unwrap()
            .release();
    }

    #[test]
    fn a_stale_file_does_not_block() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(LOCK_FILE), "999999\n/gone\n").unwrap();
        let lock = DirLock::acquire(dir.path(), 5433, "*").unwrap();
        let text = std::fs::read_to_string(dir.path().join(LOCK_FILE)).unwrap();
        assert_eq!(
            text.lines().next(),
            Some(std::process::id().to_string().as_str())
        );
        drop(lock);
    }
}
