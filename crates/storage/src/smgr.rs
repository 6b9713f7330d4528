//! Relation files: one file per relation under `<data>/base/<relfile>`, addressed in 8 kB
//! blocks. Handles are cached; extension is serialized per relation.

use crate::page::PAGE_SIZE;
use keel_common::{BlockNo, PgError, PgResult, RelFileId};
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

pub struct RelFile {
    pub id: RelFileId,
    file: File,
    /// Logical size in blocks (blocks handed out by `extend`, written or not).
    nblocks: AtomicU32,
    extend_lock: Mutex<()>,
    /// UNLOGGED: writes skip the WAL.
    pub unlogged: AtomicBool,
}

impl RelFile {
    pub fn nblocks(&self) -> BlockNo {
        self.nblocks.load(Ordering::Acquire)
    }

    pub fn read_block(&self, block: BlockNo, buf: &mut [u8; PAGE_SIZE]) -> PgResult<()> {
        let off = block as u64 * PAGE_SIZE as u64;
        let mut done = 0;
        while done < PAGE_SIZE {
            match self.file.read_at(&mut buf[done..], off + done as u64) {
                Ok(0) => {
                    // Past the end of the file: a block that was allocated but never written.
                    buf[done..].fill(0);
                    break;
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(PgError::io(
                        format!("could not read block {block} of relation {}", self.id),
                        e,
                    ));
                }
            }
        }
        Ok(())
    }

    pub fn write_block(&self, block: BlockNo, buf: &[u8; PAGE_SIZE]) -> PgResult<()> {
        let off = block as u64 * PAGE_SIZE as u64;
        self.file.write_all_at(buf, off).map_err(|e| {
            PgError::io(
                format!("could not write block {block} of relation {}", self.id),
                e,
            )
        })
    }

    /// Allocates the next block number. The page itself is created in the buffer pool and
    /// reaches the file when written out.
    pub fn extend(&self) -> BlockNo {
        let _g = self.extend_lock.lock();
        self.nblocks.fetch_add(1, Ordering::AcqRel)
    }

    /// Makes sure the file covers at least `nblocks` blocks (used by recovery).
    pub fn ensure_nblocks(&self, nblocks: BlockNo) {
        let _g = self.extend_lock.lock();
        if self.nblocks.load(Ordering::Acquire) < nblocks {
            self.nblocks.store(nblocks, Ordering::Release);
        }
    }

    pub fn sync(&self) -> PgResult<()> {
        self.file
            .sync_data()
            .map_err(|e| PgError::io(format!("could not fsync relation {}", self.id), e))
    }

    /// Asks the kernel to start writing `nblocks` blocks from `block` to the device, without
    /// waiting (PostgreSQL's checkpoint_flush_after). Only a hint: errors are ignored, and the
    /// fsync that follows is what makes the blocks durable and reports failures.
    pub fn start_writeback(&self, block: BlockNo, nblocks: u32) {
        use std::os::fd::AsRawFd;
        let off = block as i64 * PAGE_SIZE as i64;
        let len = nblocks as i64 * PAGE_SIZE as i64;
        // SAFETY: a plain syscall on a descriptor this RelFile owns; no memory is passed.
        unsafe {
            libc::sync_file_range(self.file.as_raw_fd(), off, len, libc::SYNC_FILE_RANGE_WRITE);
        }
    }

    /// Size in bytes as pg_relation_size reports it.
    pub fn size_bytes(&self) -> u64 {
        self.nblocks() as u64 * PAGE_SIZE as u64
    }

    pub fn truncate(&self) -> PgResult<()> {
        let _g = self.extend_lock.lock();
        self.file
            .set_len(0)
            .map_err(|e| PgError::io(format!("could not truncate relation {}", self.id), e))?;
        self.nblocks.store(0, Ordering::Release);
        Ok(())
    }
}

/// The set of open relation files.
pub struct Smgr {
    dir: PathBuf,
    files: RwLock<HashMap<RelFileId, Arc<RelFile>>>,
}

impl Smgr {
    pub fn new(data_dir: &Path) -> PgResult<Smgr> {
        let dir = data_dir.join("base");
        std::fs::create_dir_all(&dir)
            .map_err(|e| PgError::io("could not create base directory", e))?;
        Ok(Smgr {
            dir,
            files: RwLock::new(HashMap::new()),
        })
    }

    pub fn path(&self, id: RelFileId) -> PathBuf {
        self.dir.join(id.to_string())
    }

    /// Opens (creating when `create`) relation file `id`.
    pub fn open(&self, id: RelFileId, create: bool) -> PgResult<Arc<RelFile>> {
        if let Some(f) = self.files.read().get(&id) {
            return Ok(f.clone());
        }
        let mut files = self.files.write();
        if let Some(f) = files.get(&id) {
            return Ok(f.clone());
        }
        let path = self.path(id);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .open(&path)
            .map_err(|e| PgError::io(format!("could not open file \"{}\"", path.display()), e))?;
        let len = file
            .metadata()
            .map_err(|e| PgError::io(format!("could not stat file \"{}\"", path.display()), e))?
            .len();
        let rel = Arc::new(RelFile {
            id,
            file,
            nblocks: AtomicU32::new(len.div_ceil(PAGE_SIZE as u64) as u32),
            extend_lock: Mutex::new(()),
            unlogged: AtomicBool::new(false),
        });
        files.insert(id, rel.clone());
        Ok(rel)
    }

    pub fn exists(&self, id: RelFileId) -> bool {
        self.files.read().contains_key(&id) || self.path(id).exists()
    }

    /// Closes and deletes a relation file. Buffers must have been discarded first.
    pub fn remove(&self, id: RelFileId) -> PgResult<()> {
        self.files.write().remove(&id);
        match std::fs::remove_file(self.path(id)) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(PgError::io(format!("could not remove relation {id}"), e)),
        }
    }

    pub fn open_files(&self) -> Vec<Arc<RelFile>> {
        self.files.read().values().cloned().collect()
    }

    /// Relation file ids present on disk.
    pub fn list_on_disk(&self) -> PgResult<Vec<RelFileId>> {
        let mut out = Vec::new();
        let entries = std::fs::read_dir(&self.dir)
            .map_err(|e| PgError::io("could not list base directory", e))?;
        for entry in entries.flatten() {
            if let Some(id) = entry.file_name().to_str().and_then(|n| n.parse().ok()) {
                out.push(id);
            }
        }
        Ok(out)
    }

    /// fsyncs the directory so file creations and removals are durable.
    pub fn sync_dir(&self) -> PgResult<()> {
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| PgError::io("could not fsync base directory", e))
    }
}
