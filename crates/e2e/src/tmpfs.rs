//! A small tmpfs for disk-full tests: mounted on a fresh directory, unmounted (and the
//! directory removed) on drop, whatever the test did. Mounting needs root, as the tests have
//! here and in CI.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// A mounted tmpfs of a fixed size.
#[derive(Debug)]
pub struct Tmpfs {
    path: PathBuf,
}

impl Tmpfs {
    /// Mounts a tmpfs of `mb` megabytes on a new directory under the temp dir; panics if it
    /// cannot (not root).
    pub fn mount(mb: u64) -> Tmpfs {
        let dir = crate::TempDir::new("tmpfs");
        let path = dir.path().to_path_buf();
        // The directory outlives the TempDir guard: Drop unmounts, then removes it.
        std::mem::forget(dir);
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={mb}m,mode=0777"),
                "tmpfs",
            ])
            .arg(&path)
            .output();
        match out {
            Ok(o) if o.status.success() => Tmpfs { path },
            Ok(o) => {
                let _ = std::fs::remove_dir(&path);
                panic!(
                    "mount -t tmpfs on {} failed (the disk-full tests run as root): {}",
                    path.display(),
                    String::from_utf8_lossy(&o.stderr)
                )
            }
            Err(e) => panic!("cannot run mount: {e}"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Remounts the file system with a new size of `mb` megabytes, keeping its files, as an
    /// administrator gives a full disk more room.
    pub fn resize(&self, mb: u64) {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,size={mb}m")])
            .arg(&self.path)
            .output()
            .unwrap_or_else(|e| panic!("cannot run mount: {e}"));
        assert!(
            out.status.success(),
            "mount -o remount,size={mb}m {} failed: {}",
            self.path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Bytes an unprivileged writer can still allocate (statvfs `f_bavail * f_frsize`).
    pub fn free_bytes(&self) -> u64 {
        free_bytes(&self.path)
    }

    /// Starts filling the file system with `filler`, 1 MB at a time every `pace`, until a
    /// write fails; then keeps taking whatever space comes free (a page at a time) until the
    /// [`Filler`] is stopped. The disk stays full for as long as it runs.
    pub fn fill(&self, pace: Duration) -> Filler {
        let path = self.path.join("filler");
        let stop = Arc::new(AtomicBool::new(false));
        let full = Arc::new(AtomicBool::new(false));
        let written = Arc::new(AtomicU64::new(0));
        let (s, f, w) = (stop.clone(), full.clone(), written.clone());
        let thread = std::thread::spawn(move || {
            let mut file = match std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
            {
                Ok(file) => file,
                Err(e) => panic!("cannot create {}: {e}", path.display()),
            };
            let chunk = vec![0x5Au8; 1 << 20];
            let page = vec![0x5Au8; 4096];
            while !s.load(Ordering::Acquire) {
                let buf = if f.load(Ordering::Acquire) {
                    &page
                } else {
                    &chunk
                };
                match file.write(buf) {
                    Ok(n) if n == buf.len() => {
                        w.fetch_add(n as u64, Ordering::Relaxed);
                        if !f.load(Ordering::Acquire) {
                            std::thread::sleep(pace);
                        }
                    }
                    Ok(n) => {
                        w.fetch_add(n as u64, Ordering::Relaxed);
                        f.store(true, Ordering::Release);
                    }
                    Err(_) => {
                        f.store(true, Ordering::Release);
                        std::thread::sleep(Duration::from_millis(2));
                    }
                }
            }
        });
        Filler {
            path: self.path.join("filler"),
            stop,
            full,
            written,
            thread: Some(thread),
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazy, so a straggling process (a killed server's child) cannot keep it mounted.
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
        let _ = std::fs::remove_dir(&self.path);
    }
}

/// Free bytes of the file system holding `path`.
pub fn free_bytes(path: &Path) -> u64 {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return 0;
    };
    // SAFETY: statvfs fills the zeroed struct we pass; `c` is a valid NUL-terminated path.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            panic!(
                "statvfs {}: {}",
                path.display(),
                std::io::Error::last_os_error()
            );
        }
        st.f_bavail as u64 * st.f_frsize as u64
    }
}

/// A running filler (see [`Tmpfs::fill`]).
pub struct Filler {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    full: Arc<AtomicBool>,
    written: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Filler {
    /// Whether a write has failed: the disk is full.
    pub fn disk_full(&self) -> bool {
        self.full.load(Ordering::Acquire)
    }

    pub fn bytes(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// Stops filling; the file stays.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Stops filling and removes the file: the space is free again.
    pub fn remove(mut self) {
        self.stop();
        if let Err(e) = std::fs::remove_file(&self.path) {
            panic!("cannot remove {}: {e}", self.path.display());
        }
    }
}

impl Drop for Filler {
    fn drop(&mut self) {
        self.stop();
    }
}
