//! The I/O seam: every file, directory and fsync operation of the storage layer (relation
//! files, WAL segments, the checkpointer's writeback) and of the access layer's metadata files
//! (control file, catalog, commit bitmap, sequences) goes through [`Fs`] and the [`FsFile`]s
//! it opens.
//!
//! [`OsFs`] is the real thing: plain `pread`/`pwrite`/`fdatasync` on `std::fs::File`, one
//! `Box<dyn FsFile>` per open file (a relation file is opened once and cached, so the only
//! cost per page I/O is one indirect call beside the syscall). [`sim::SimFs`] (feature `sim`)
//! is the test double: an in-memory file system that forgets unsynced writes on a simulated
//! power loss, tears writes, and fails chosen writes and fsyncs with ENOSPC or EIO.
//!
//! What the storage layer may assume of an implementation (the fault model, README.md):
//! - a completed `sync_data`/`sync_all` makes that file's data and size durable;
//! - a new, renamed or removed name is durable only after `sync_dir` of its directory;
//! - anything else may be lost, or (a write) land partially, at a power loss;
//! - any write, set_len or sync may fail; a failed write may have written a prefix.

#[cfg(any(test, feature = "sim"))]
pub mod sim;

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// How [`Fs::open`] treats a missing or existing file. Files are always opened read-write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// The file must exist.
    Existing,
    /// Create the file if it is missing; keep its contents otherwise.
    Create,
    /// Create the file, or empty it if it exists.
    Truncate,
}

/// An open file: positioned reads and writes, size, durability.
pub trait FsFile: Send + Sync {
    /// Reads at `off`; fewer bytes than asked (0 at the end of the file) are not an error.
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize>;
    /// Writes at `off`; may write fewer bytes than given (a short write: e.g. a full disk).
    fn write_at(&self, buf: &[u8], off: u64) -> io::Result<usize>;
    /// The file's size in bytes.
    fn size(&self) -> io::Result<u64>;
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// `fdatasync`: the data and whatever metadata is needed to read it back (the size).
    fn sync_data(&self) -> io::Result<()>;
    /// `fsync`: as `sync_data`, plus the rest of the inode's metadata.
    fn sync_all(&self) -> io::Result<()>;
    /// Asks for writeback of a range to start, without waiting (a hint: may do nothing).
    fn start_writeback(&self, _off: u64, _len: u64) {}

    /// Reads until `buf` is full or the file ends; returns the bytes read.
    fn read_full_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.read_at(&mut buf[done..], off + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    /// Writes all of `buf`, retrying short writes; the error of the first write that wrote
    /// nothing ends it (`WriteZero` if it reported no error).
    fn write_all_at(&self, buf: &[u8], off: u64) -> io::Result<()> {
        let mut done = 0;
        while done < buf.len() {
            match self.write_at(&buf[done..], off + done as u64) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// A file system: opening files and changing names.
pub trait Fs: Send + Sync {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Box<dyn FsFile>>;
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// Renames `from` to `to`, replacing `to` if it exists; atomic.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Renames `from` to `to`, failing with `AlreadyExists` if `to` exists; atomic.
    fn rename_noreplace(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Makes the names created, renamed or removed in `dir` durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// The names of the entries of `dir`.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    fn exists(&self, path: &Path) -> bool;
    /// What PostgreSQL's PANIC does after a failed WAL write or fsync, once the message is
    /// logged: [`OsFs`] aborts the process (nothing it did since could be trusted to be
    /// durable); the simulator records it and returns, and the caller then refuses further
    /// work, so a test can "restart" on what the simulated disk kept.
    fn panic(&self, message: &str);

    /// The whole contents of a file.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let f = self.open(path, OpenMode::Existing)?;
        let mut buf = vec![0u8; f.size()? as usize];
        let n = f.read_full_at(&mut buf, 0)?;
        buf.truncate(n);
        Ok(buf)
    }
}

/// The operating system's file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct OsFs;

struct OsFile(File);

impl FsFile for OsFile {
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
        self.0.read_at(buf, off)
    }

    fn write_at(&self, buf: &[u8], off: u64) -> io::Result<usize> {
        self.0.write_at(buf, off)
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }

    fn sync_all(&self) -> io::Result<()> {
        self.0.sync_all()
    }

    fn start_writeback(&self, off: u64, len: u64) {
        use std::os::fd::AsRawFd;
        // SAFETY: a plain syscall on a descriptor this file owns; no memory is passed. A hint:
        // its result does not matter (the fsync after it reports failures).
        unsafe {
            libc::sync_file_range(
                self.0.as_raw_fd(),
                off as i64,
                len as i64,
                libc::SYNC_FILE_RANGE_WRITE,
            );
        }
    }
}

impl Fs for OsFs {
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Box<dyn FsFile>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(mode != OpenMode::Existing)
            .truncate(mode == OpenMode::Truncate)
            .open(path)?;
        Ok(Box::new(OsFile(file)))
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn rename_noreplace(&self, from: &Path, to: &Path) -> io::Result<()> {
        use std::os::unix::ffi::OsStrExt;
        let c =
            |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
        let (from, to) = (c(from)?, c(to)?);
        // SAFETY: both paths are valid NUL-terminated strings for the duration of the call.
        let r = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::RENAME_NOREPLACE,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        Ok(std::fs::read_dir(dir)?
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .collect())
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn panic(&self, message: &str) {
        use std::io::Write;
        // Not eprintln!: that panics when stderr cannot be written (a log on the full disk),
        // and this must abort whatever happens.
        let _ = writeln!(io::stderr(), "PANIC:  {message}");
        std::process::abort();
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }
}

/// Writes a small file atomically: a temporary file beside it, fsync, rename over the old one,
/// fsync the directory. On failure the temporary file is removed, so a full disk leaves
/// nothing behind.
pub fn write_atomic(fs: &dyn Fs, dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let written = fs
        .open(&tmp, OpenMode::Truncate)
        .and_then(|f| {
            f.write_all_at(bytes, 0)?;
            f.sync_all()
        })
        .and_then(|()| fs.rename(&tmp, &dir.join(name)));
    if let Err(e) = written {
        let _ = fs.remove(&tmp);
        return Err(e);
    }
    fs.sync_dir(dir)
}
