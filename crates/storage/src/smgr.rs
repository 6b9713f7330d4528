//! Relation files: one file per relation under `<data>/base/<relfile>`, addressed in 8 kB
//! blocks. Handles are cached; extension is serialized per relation.
//!
//! Extension writes the new block (zeros) to the file at once, as PostgreSQL's `mdextend`
//! does: the disk space a page needs is claimed when the page is handed out, so a full disk
//! fails the INSERT that needs the page (53100) rather than a later write of it (an eviction
//! during a SELECT, a checkpoint, or crash recovery, which then could not complete). A failed
//! extension cuts the file back, so it leaves no partial block.

use crate::io::{Fs, FsFile, OpenMode, OsFs};
use crate::page::PAGE_SIZE;
use keel_common::error::{io_sqlstate, io_text};
use keel_common::{BlockNo, PgError, PgResult, RelFileId, sqlstate};
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// The zero page an extension writes.
static ZERO_PAGE: [u8; PAGE_SIZE] = [0u8; PAGE_SIZE];

pub struct RelFile {
    pub id: RelFileId,
    file: Box<dyn FsFile>,
    /// Size in blocks: blocks handed out by `extend` (on disk since), or found by recovery
    /// (written when their pages are).
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
        match self.file.read_full_at(buf, off) {
            Ok(n) => {
                // Past the end of the file: a block recovery knows of but has not written yet.
                buf[n..].fill(0);
                Ok(())
            }
            Err(e) => Err(PgError::io(
                format!("could not read block {block} of relation {}", self.id),
                e,
            )),
        }
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

    /// Adds a block to the end of the file, written as zeros, and returns its number. The
    /// page itself is built in the buffer pool; the space it will be written to is claimed
    /// here. Fails with PostgreSQL's `mdextend` errors (53100 on a full disk, with its hint),
    /// leaving the file as it was.
    pub fn extend(&self) -> PgResult<BlockNo> {
        let _g = self.extend_lock.lock();
        let block = self.nblocks.load(Ordering::Acquire);
        let off = block as u64 * PAGE_SIZE as u64;
        let fail = |e: PgError| {
            // A short write left part of a block: cut it off again.
            let _ = self.file.set_len(off);
            Err(e.with_hint("Check free disk space."))
        };
        let name = format!("base/{}", self.id);
        match self.file.write_at(&ZERO_PAGE, off) {
            Ok(PAGE_SIZE) => {}
            Ok(n) => {
                return fail(PgError::new(
                    sqlstate::DISK_FULL,
                    format!(
                        "could not extend file \"{name}\": wrote only {n} of {PAGE_SIZE} bytes at block {block}"
                    ),
                ));
            }
            Err(e) => {
                return fail(PgError::new(
                    io_sqlstate(&e),
                    format!("could not extend file \"{name}\": {}", io_text(&e)),
                ));
            }
        }
        self.nblocks.store(block + 1, Ordering::Release);
        Ok(block)
    }

    /// Makes sure the relation covers at least `nblocks` blocks (used by recovery; the
    /// blocks reach the file when their pages are written).
    pub fn ensure_nblocks(&self, nblocks: BlockNo) {
        let _g = self.extend_lock.lock();
        if self.nblocks.load(Ordering::Acquire) < nblocks {
            self.nblocks.store(nblocks, Ordering::Release);
        }
    }

    pub fn sync(&self) -> PgResult<()> {
        self.file
            .sync_data()
            .map_err(|e| PgError::io(format!("could not fsync file \"base/{}\"", self.id), e))
    }

    /// Asks the kernel to start writing `nblocks` blocks from `block` to the device, without
    /// waiting (PostgreSQL's checkpoint_flush_after). Only a hint: errors are ignored, and the
    /// fsync that follows is what makes the blocks durable and reports failures.
    pub fn start_writeback(&self, block: BlockNo, nblocks: u32) {
        let off = block as u64 * PAGE_SIZE as u64;
        self.file
            .start_writeback(off, nblocks as u64 * PAGE_SIZE as u64);
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
    fs: Arc<dyn Fs>,
    dir: PathBuf,
    files: RwLock<HashMap<RelFileId, Arc<RelFile>>>,
}

impl Smgr {
    /// Relation files of `data_dir` on the operating system's file system.
    pub fn new(data_dir: &Path) -> PgResult<Smgr> {
        Smgr::on(Arc::new(OsFs), data_dir)
    }

    pub fn on(fs: Arc<dyn Fs>, data_dir: &Path) -> PgResult<Smgr> {
        let dir = data_dir.join("base");
        fs.create_dir_all(&dir)
            .map_err(|e| PgError::io("could not create base directory", e))?;
        Ok(Smgr {
            fs,
            dir,
            files: RwLock::new(HashMap::new()),
        })
    }

    /// The file system the relation files live on.
    pub fn fs(&self) -> &Arc<dyn Fs> {
        &self.fs
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
        let mode = if create {
            OpenMode::Create
        } else {
            OpenMode::Existing
        };
        let file = self
            .fs
            .open(&path, mode)
            .map_err(|e| PgError::io(format!("could not open file \"{}\"", path.display()), e))?;
        let len = file
            .size()
            .map_err(|e| PgError::io(format!("could not stat file \"{}\"", path.display()), e))?;
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
        self.files.read().contains_key(&id) || self.fs.exists(&self.path(id))
    }

    /// Closes and deletes a relation file. Buffers must have been discarded first.
    pub fn remove(&self, id: RelFileId) -> PgResult<()> {
        self.files.write().remove(&id);
        match self.fs.remove(&self.path(id)) {
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
        let names = self
            .fs
            .list(&self.dir)
            .map_err(|e| PgError::io("could not list base directory", e))?;
        Ok(names.iter().filter_map(|n| n.parse().ok()).collect())
    }

    /// fsyncs the directory so file creations and removals are durable.
    pub fn sync_dir(&self) -> PgResult<()> {
        self.fs
            .sync_dir(&self.dir)
            .map_err(|e| PgError::io("could not fsync base directory", e))
    }
}
