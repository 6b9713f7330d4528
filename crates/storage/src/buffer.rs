//! The shared buffer pool: a fixed array of 8 kB frames sized by `shared_buffers`, a sharded
//! page table, and clock-sweep replacement.
//!
//! Protocol (see README.md):
//! - A frame is *pinned* (pin count > 0) while any guard refers to it; only unpinned frames
//!   are replaced. Lookups pin under the page-table shard lock, so a replacer that sees
//!   `pin == 1` (its own claim) under that lock knows nobody else can reach the frame.
//! - The content latch (a reader-writer lock per frame) is held only while the page is read
//!   or changed in memory, never across network I/O or a WAL flush wait. The one exception is
//!   the read of a missing page into its frame, during which the new frame is latched
//!   exclusively so others wait for the read instead of seeing garbage.
//! - A dirty page is written out only after the WAL is flushed up to the page's LSN
//!   (write-ahead rule); its checksum is stamped on the copy that goes to disk.

use crate::page::{self, LinePointer, PAGE_SIZE, PageRead, layout};
use crate::smgr::{RelFile, Smgr};
use crate::usage;
use crate::wal::Wal;
use keel_common::{BlockNo, PgError, PgResult, RelFileId, sqlstate};
use parking_lot::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use rustc_hash::FxHashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};

const EMPTY: u64 = u64::MAX;
const SHARDS: usize = 128;
const MAX_USAGE: u8 = 5;

fn tag_of(rel: RelFileId, block: BlockNo) -> u64 {
    ((rel as u64) << 32) | block as u64
}

fn shard_of(tag: u64) -> usize {
    (tag.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) as usize % SHARDS
}

type PageBuf = Box<[u8; PAGE_SIZE]>;

struct Frame {
    data: RwLock<PageBuf>,
    tag: AtomicU64,
    pin: AtomicU32,
    usage: AtomicU8,
    dirty: AtomicBool,
    /// False while the page is being read in, or after that read failed.
    valid: AtomicBool,
    /// The heap's pruning hint for the page in this frame (see `PageMut::prune_after`); 0,
    /// "may prune", whenever a page is read in.
    prune_after: AtomicU64,
}

pub struct BufferPool {
    frames: Box<[Frame]>,
    shards: Box<[Mutex<FxHashMap<u64, u32>>]>,
    hand: AtomicUsize,
    pub smgr: Arc<Smgr>,
    pub wal: Arc<Wal>,
    /// During crash recovery a page that fails its checksum is treated as new: the WAL holds
    /// a full-page image for every page that could have been torn.
    recovery: AtomicBool,
}

impl BufferPool {
    pub fn new(smgr: Arc<Smgr>, wal: Arc<Wal>, nframes: usize) -> BufferPool {
        let nframes = nframes.max(16);
        let frames = (0..nframes)
            .map(|_| Frame {
                data: RwLock::new(Box::new([0u8; PAGE_SIZE])),
                tag: AtomicU64::new(EMPTY),
                pin: AtomicU32::new(0),
                usage: AtomicU8::new(0),
                dirty: AtomicBool::new(false),
                valid: AtomicBool::new(false),
                prune_after: AtomicU64::new(0),
            })
            .collect();
        let shards = (0..SHARDS)
            .map(|_| Mutex::new(FxHashMap::default()))
            .collect();
        BufferPool {
            frames,
            shards,
            hand: AtomicUsize::new(0),
            smgr,
            wal,
            recovery: AtomicBool::new(false),
        }
    }

    pub fn set_recovery(&self, on: bool) {
        self.recovery.store(on, Ordering::SeqCst);
    }

    /// Pins and share-latches a page.
    pub fn read(&self, rel: &Arc<RelFile>, block: BlockNo) -> PgResult<PageRef<'_>> {
        let frame = self.pin_frame(rel, block, false)?;
        let guard = self.frames[frame].data.read();
        Ok(PageRef {
            pool: self,
            frame,
            guard: Some(guard),
            block,
            pinned: true,
        })
    }

    /// Pins a page without latching it: [`BufferPool::read_pinned`] then latches it as often
    /// as needed without looking it up or pinning it again (a scan reading several rows of
    /// one page in a row). The frame cannot be replaced until [`BufferPool::unpin_page`];
    /// the caller must call it exactly once.
    pub fn pin_page(&self, rel: &Arc<RelFile>, block: BlockNo) -> PgResult<PinId> {
        let frame = self.pin_frame(rel, block, false)?;
        Ok(PinId { frame, block })
    }

    /// Gives back a pin of [`BufferPool::pin_page`].
    pub fn unpin_page(&self, pin: PinId) {
        self.unpin(pin.frame);
    }

    /// Share-latches the page `pin` holds; the page must be dropped before the pin is given
    /// back.
    pub fn read_pinned(&self, pin: PinId) -> PageRef<'_> {
        PageRef {
            pool: self,
            frame: pin.frame,
            guard: Some(self.frames[pin.frame].data.read()),
            block: pin.block,
            pinned: false,
        }
    }

    /// Pins and share-latches a page only if no one holds it exclusively right now (for
    /// reading a second page while holding another page's latch without risking deadlock).
    pub fn try_read(&self, rel: &Arc<RelFile>, block: BlockNo) -> PgResult<Option<PageRef<'_>>> {
        let frame = self.pin_frame(rel, block, false)?;
        match self.frames[frame].data.try_read() {
            Some(guard) => Ok(Some(PageRef {
                pool: self,
                frame,
                guard: Some(guard),
                block,
                pinned: true,
            })),
            None => {
                self.unpin(frame);
                Ok(None)
            }
        }
    }

    /// Pins and exclusively latches a page.
    pub fn write(&self, rel: &Arc<RelFile>, block: BlockNo) -> PgResult<PageMut<'_>> {
        self.write_page(rel, block, false)
    }

    fn write_page(
        &self,
        rel: &Arc<RelFile>,
        block: BlockNo,
        extending: bool,
    ) -> PgResult<PageMut<'_>> {
        let frame = self.pin_frame(rel, block, extending)?;
        let guard = self.frames[frame].data.write();
        Ok(PageMut::new(self, frame, guard, rel.clone(), block))
    }

    /// Appends a new, all-zero page (disk space claimed, smgr.rs) and returns it latched.
    pub fn extend(&self, rel: &Arc<RelFile>) -> PgResult<PageMut<'_>> {
        let block = rel.extend()?;
        let mut page = self.write_page(rel, block, true)?;
        // A block past the old end reads as zeros, but a stale frame cannot exist for it:
        // relation files only grow through here (truncation discards buffers first).
        page.zero();
        Ok(page)
    }

    /// Pins the frame holding a page, reading it in when missing. Counts the access into
    /// this thread's [`usage`](crate::usage): a hit, a read, or (`extending`: a new block)
    /// a write, as PostgreSQL counts a relation extension.
    fn pin_frame(&self, rel: &Arc<RelFile>, block: BlockNo, extending: bool) -> PgResult<usize> {
        let tag = tag_of(rel.id, block);
        let shard = &self.shards[shard_of(tag)];
        loop {
            {
                let map = shard.lock();
                if let Some(&f) = map.get(&tag) {
                    let frame = &self.frames[f as usize];
                    frame.pin.fetch_add(1, Ordering::AcqRel);
                    drop(map);
                    if frame.usage.load(Ordering::Relaxed) < MAX_USAGE {
                        frame.usage.fetch_add(1, Ordering::Relaxed);
                    }
                    if !frame.valid.load(Ordering::Acquire) {
                        // Being read in: wait for the reader's latch, then re-check.
                        drop(frame.data.read());
                        if !frame.valid.load(Ordering::Acquire) {
                            frame.pin.fetch_sub(1, Ordering::AcqRel);
                            return Err(PgError::new(
                                sqlstate::IO_ERROR,
                                format!("could not read block {block} of relation {}", rel.id),
                            ));
                        }
                    }
                    usage::count_hit();
                    return Ok(f as usize);
                }
            }
            let victim = self.find_victim()?;
            let frame = &self.frames[victim];
            let mut guard = frame.data.write();
            frame.valid.store(false, Ordering::Release);
            {
                let mut map = shard.lock();
                if map.contains_key(&tag) {
                    // Someone else read it in meanwhile: give our frame back and use theirs.
                    drop(map);
                    drop(guard);
                    frame.pin.fetch_sub(1, Ordering::AcqRel);
                    continue;
                }
                frame.tag.store(tag, Ordering::Release);
                map.insert(tag, victim as u32);
            }
            frame.usage.store(1, Ordering::Relaxed);
            frame.dirty.store(false, Ordering::Release);
            frame.prune_after.store(0, Ordering::Relaxed);
            let loaded = self.load(rel, block, &mut guard);
            if let Err(e) = loaded {
                let mut map = shard.lock();
                map.remove(&tag);
                frame.tag.store(EMPTY, Ordering::Release);
                drop(map);
                drop(guard);
                frame.pin.fetch_sub(1, Ordering::AcqRel);
                return Err(e);
            }
            frame.valid.store(true, Ordering::Release);
            if extending {
                usage::count_written();
            } else {
                usage::count_read();
            }
            return Ok(victim);
        }
    }

    fn load(&self, rel: &RelFile, block: BlockNo, buf: &mut [u8; PAGE_SIZE]) -> PgResult<()> {
        if block >= rel.nblocks() {
            buf.fill(0);
            return Ok(());
        }
        rel.read_block(block, buf)?;
        if !page::verify_checksum(buf, block) {
            if self.recovery.load(Ordering::Relaxed) {
                buf.fill(0);
                return Ok(());
            }
            return Err(PgError::new(
                sqlstate::DATA_CORRUPTED,
                format!("invalid page in block {block} of relation base/{}", rel.id),
            ));
        }
        Ok(())
    }

    /// Claims an unpinned frame (pin = 1), writing it out first if dirty, and removes its old
    /// page-table entry.
    fn find_victim(&self) -> PgResult<usize> {
        let n = self.frames.len();
        for _ in 0..n * (MAX_USAGE as usize + 2) {
            let i = self.hand.fetch_add(1, Ordering::Relaxed) % n;
            let f = &self.frames[i];
            if f.pin.load(Ordering::Acquire) != 0 {
                continue;
            }
            if f.usage.load(Ordering::Relaxed) > 0 {
                f.usage.fetch_sub(1, Ordering::Relaxed);
                continue;
            }
            if f.pin
                .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                continue;
            }
            let tag = f.tag.load(Ordering::Acquire);
            if tag != EMPTY {
                if f.dirty.load(Ordering::Acquire) {
                    // Never wait for a victim's latch: our caller may hold another page's
                    // latch, and the victim's holder may be waiting for it.
                    match self.write_out(i, false) {
                        Ok(true) => {}
                        Ok(false) => {
                            f.pin.fetch_sub(1, Ordering::AcqRel);
                            continue;
                        }
                        Err(e) => {
                            f.pin.fetch_sub(1, Ordering::AcqRel);
                            return Err(e);
                        }
                    }
                }
                let mut map = self.shards[shard_of(tag)].lock();
                if f.pin.load(Ordering::Acquire) != 1 || f.dirty.load(Ordering::Acquire) {
                    drop(map);
                    f.pin.fetch_sub(1, Ordering::AcqRel);
                    continue;
                }
                map.remove(&tag);
                f.tag.store(EMPTY, Ordering::Release);
            }
            return Ok(i);
        }
        Err(PgError::new(
            sqlstate::OUT_OF_MEMORY,
            "no unpinned buffers available",
        ))
    }

    /// Writes a pinned frame's page to its file (WAL first), clearing its dirty flag. With
    /// `wait` false, gives up (Ok(false)) instead of waiting for the content latch.
    fn write_out(&self, i: usize, wait: bool) -> PgResult<bool> {
        let f = &self.frames[i];
        let tag = f.tag.load(Ordering::Acquire);
        if tag == EMPTY {
            return Ok(true);
        }
        let (rel_id, block) = ((tag >> 32) as RelFileId, tag as BlockNo);
        let mut copy: PageBuf = Box::new([0u8; PAGE_SIZE]);
        {
            let g = if wait {
                f.data.read()
            } else {
                match f.data.try_read() {
                    Some(g) => g,
                    None => return Ok(false),
                }
            };
            f.dirty.store(false, Ordering::Release);
            copy.copy_from_slice(&g[..]);
        }
        let lsn = page::get_u64(&copy[..], layout::LSN);
        if lsn != 0 {
            self.wal.flush_blocking(lsn)?;
        }
        let rel = match self.smgr.open(rel_id, false) {
            Ok(r) => r,
            // Dropped relation: its pages need not reach disk.
            Err(_) => return Ok(true),
        };
        page::set_checksum(&mut copy, block);
        let r = rel.write_block(block, &copy);
        if r.is_err() {
            f.dirty.store(true, Ordering::Release);
        } else {
            usage::count_written();
        }
        r.map(|_| true)
    }

    /// Writes every dirty page at once. Returns the number written.
    pub fn flush_all(&self) -> PgResult<usize> {
        let mut written = 0;
        for page in self.dirty_pages() {
            written += self.write_dirty(page)? as usize;
        }
        Ok(written)
    }

    /// The pages dirty now, in file and block order, so that writing them in turn writes
    /// each file sequentially. A checkpoint takes this list right after its redo point: every
    /// change before the redo point is on one of these pages.
    pub fn dirty_pages(&self) -> Vec<DirtyPage> {
        let mut pages: Vec<DirtyPage> = (0..self.frames.len())
            .filter_map(|i| {
                let f = &self.frames[i];
                let tag = f.tag.load(Ordering::Acquire);
                (f.dirty.load(Ordering::Acquire) && tag != EMPTY).then_some(DirtyPage {
                    tag,
                    frame: i as u32,
                })
            })
            .collect();
        pages.sort_unstable_by_key(|p| p.tag);
        pages
    }

    /// Writes `page` (WAL first) if its frame still holds that page and it is still dirty;
    /// returns whether it wrote. A page written meanwhile by replacement, or replaced, needs
    /// nothing more: its changes up to then reached the file.
    pub fn write_dirty(&self, page: DirtyPage) -> PgResult<bool> {
        let i = page.frame as usize;
        let f = &self.frames[i];
        {
            let map = self.shards[shard_of(page.tag)].lock();
            if map.get(&page.tag) != Some(&page.frame) || !f.dirty.load(Ordering::Acquire) {
                return Ok(false);
            }
            f.pin.fetch_add(1, Ordering::AcqRel);
        }
        let r = self.write_out(i, true);
        f.pin.fetch_sub(1, Ordering::AcqRel);
        r
    }

    /// Forgets every buffered page of a relation (before its file is removed or truncated).
    pub fn discard_rel(&self, rel: RelFileId) {
        for (i, f) in self.frames.iter().enumerate() {
            let tag = f.tag.load(Ordering::Acquire);
            if tag == EMPTY || (tag >> 32) as RelFileId != rel {
                continue;
            }
            let mut map = self.shards[shard_of(tag)].lock();
            if map.get(&tag) == Some(&(i as u32)) {
                map.remove(&tag);
                f.dirty.store(false, Ordering::Release);
                f.tag.store(EMPTY, Ordering::Release);
                f.usage.store(0, Ordering::Relaxed);
            }
        }
    }

    fn unpin(&self, frame: usize) {
        self.frames[frame].pin.fetch_sub(1, Ordering::AcqRel);
    }

    fn mark_dirty(&self, frame: usize) {
        let dirty = &self.frames[frame].dirty;
        // Counted when the page turns dirty (PostgreSQL's `dirtied`). A plain load first: no
        // read-modify-write on a path every write takes; a race can at worst count twice.
        if !dirty.load(Ordering::Relaxed) {
            usage::count_dirtied();
        }
        dirty.store(true, Ordering::Release);
    }

    pub fn nframes(&self) -> usize {
        self.frames.len()
    }
}

/// A page that was dirty when [`BufferPool::dirty_pages`] looked: its frame and its tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirtyPage {
    tag: u64,
    frame: u32,
}

impl DirtyPage {
    pub fn rel(&self) -> RelFileId {
        (self.tag >> 32) as RelFileId
    }

    pub fn block(&self) -> BlockNo {
        self.tag as BlockNo
    }
}

/// A pinned, share-latched page.
pub struct PageRef<'a> {
    pool: &'a BufferPool,
    frame: usize,
    guard: Option<RwLockReadGuard<'a, PageBuf>>,
    block: BlockNo,
    /// It holds its own pin (false: a [`Pin`] holds it, see `read_pinned`).
    pinned: bool,
}

/// A pin taken by [`BufferPool::pin_page`]: which frame, holding which block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PinId {
    frame: usize,
    block: BlockNo,
}

impl PinId {
    pub fn block(&self) -> BlockNo {
        self.block
    }
}

impl PageRef<'_> {
    pub fn block(&self) -> BlockNo {
        self.block
    }
}

impl PageRead for PageRef<'_> {
    fn data(&self) -> &[u8; PAGE_SIZE] {
        match &self.guard {
            Some(g) => g,
            None => unreachable!("guard is only taken in drop"),
        }
    }
}

impl Drop for PageRef<'_> {
    fn drop(&mut self) {
        self.guard.take();
        if self.pinned {
            self.pool.unpin(self.frame);
        }
    }
}

/// A pinned, exclusively latched page. Every change goes through its methods, which record
/// the changed byte ranges; [`Wal::log`] turns them into a WAL record.
pub struct PageMut<'a> {
    pool: &'a BufferPool,
    frame: usize,
    guard: Option<RwLockWriteGuard<'a, PageBuf>>,
    pub(crate) rel: Arc<RelFile>,
    block: BlockNo,
    /// Byte ranges changed since the last WAL record or compaction, as (offset, length); their
    /// bytes are read from the page when the record is built.
    pub(crate) changes: Vec<(u16, u16)>,
    /// Changes up to and including the latest compaction, already encoded as WAL ranges
    /// (`[off][len][bytes]`, a compaction as `[COMPACT][0]`), and how many there are. The
    /// bytes of ranges before a compaction are taken at compaction time, because it moves them.
    pub(crate) settled: Vec<u8>,
    pub(crate) settled_ops: u16,
    /// The page was (re)initialized since the last WAL record: redo starts from zeros.
    pub(crate) fresh: bool,
}

impl<'a> PageMut<'a> {
    fn new(
        pool: &'a BufferPool,
        frame: usize,
        guard: RwLockWriteGuard<'a, PageBuf>,
        rel: Arc<RelFile>,
        block: BlockNo,
    ) -> Self {
        PageMut {
            pool,
            frame,
            guard: Some(guard),
            rel,
            block,
            changes: Vec::new(),
            settled: Vec::new(),
            settled_ops: 0,
            fresh: false,
        }
    }

    pub fn block(&self) -> BlockNo {
        self.block
    }

    pub fn rel_id(&self) -> RelFileId {
        self.rel.id
    }

    /// A hint the heap keeps with the buffered page: a prune finds nothing to reclaim while
    /// the vacuum horizon is below this CSN. Kept in memory only (it is a CSN, and CSNs are
    /// not comparable across restarts); 0 when the page is read in.
    pub fn prune_after(&self) -> u64 {
        self.pool.frames[self.frame]
            .prune_after
            .load(Ordering::Relaxed)
    }

    /// Sets the hint; the caller holds the page's exclusive latch, as every reader of it does.
    pub fn set_prune_after(&self, csn: u64) {
        self.pool.frames[self.frame]
            .prune_after
            .store(csn, Ordering::Relaxed);
    }

    /// Whether changes were made that are not yet WAL-logged.
    pub fn changed(&self) -> bool {
        !self.changes.is_empty() || self.settled_ops > 0
    }

    /// Forgets the recorded changes (they were logged, or the relation is unlogged).
    pub(crate) fn clear_changes(&mut self) {
        self.changes.clear();
        self.settled.clear();
        self.settled_ops = 0;
        self.fresh = false;
    }

    /// Encodes the pending ranges, with their current bytes, after the settled ones.
    fn settle_changes(&mut self) {
        let page: &[u8; PAGE_SIZE] = match &self.guard {
            Some(g) => g,
            None => unreachable!("guard is only taken in drop"),
        };
        encode_ranges(page, &self.changes, &mut self.settled);
        self.settled_ops += self.changes.len() as u16;
        self.changes.clear();
    }

    pub fn is_unlogged(&self) -> bool {
        self.rel.unlogged.load(Ordering::Relaxed)
    }

    fn buf(&mut self) -> &mut [u8; PAGE_SIZE] {
        match &mut self.guard {
            Some(g) => g,
            None => unreachable!("guard is only taken in drop"),
        }
    }

    fn touch(&mut self, off: usize, len: usize) {
        if len == 0 {
            return;
        }
        if let Some(last) = self.changes.last_mut() {
            let end = last.0 as usize + last.1 as usize;
            if off >= last.0 as usize && off <= end {
                let new_end = end.max(off + len);
                last.1 = (new_end - last.0 as usize) as u16;
                return;
            }
        }
        self.changes.push((off as u16, len as u16));
    }

    /// Overwrites bytes at `off`.
    pub fn write(&mut self, off: usize, bytes: &[u8]) {
        self.buf()[off..off + bytes.len()].copy_from_slice(bytes);
        self.touch(off, bytes.len());
    }

    /// Mutable access to a range, recorded as changed.
    pub fn range_mut(&mut self, off: usize, len: usize) -> &mut [u8] {
        self.touch(off, len);
        &mut self.buf()[off..off + len]
    }

    fn zero(&mut self) {
        self.buf().fill(0);
        self.clear_changes();
        self.fresh = true;
    }

    /// Formats the page: no items, `special_size` bytes of special space at the end.
    pub fn init(&mut self, kind: u16, special_size: usize) {
        let lsn = self.lsn();
        self.zero();
        let special = (PAGE_SIZE - special_size) as u16;
        let b = self.buf();
        b[layout::LSN..layout::LSN + 8].copy_from_slice(&lsn.to_le_bytes());
        b[layout::LOWER..layout::LOWER + 2]
            .copy_from_slice(&(page::HEADER_SIZE as u16).to_le_bytes());
        b[layout::UPPER..layout::UPPER + 2].copy_from_slice(&special.to_le_bytes());
        b[layout::SPECIAL..layout::SPECIAL + 2].copy_from_slice(&special.to_le_bytes());
        b[layout::KIND..layout::KIND + 2].copy_from_slice(&kind.to_le_bytes());
        self.touch(0, page::HEADER_SIZE);
    }

    pub fn set_flags(&mut self, flags: u16) {
        self.write(layout::FLAGS, &flags.to_le_bytes());
    }

    pub fn special_mut(&mut self) -> &mut [u8] {
        let off = self.special_offset();
        self.range_mut(off, PAGE_SIZE - off)
    }

    fn set_lower(&mut self, v: usize) {
        self.write(layout::LOWER, &(v as u16).to_le_bytes());
    }

    fn set_upper(&mut self, v: usize) {
        self.write(layout::UPPER, &(v as u16).to_le_bytes());
    }

    pub fn set_lp(&mut self, slot: u16, lp: LinePointer) {
        let at = page::HEADER_SIZE + slot as usize * page::LP_SIZE;
        self.write(at, &page::encode_lp(lp));
    }

    /// Copies `item` into free space and returns its offset (no line pointer).
    fn place(&mut self, item: &[u8]) -> u16 {
        let upper = self.upper() - item.len();
        self.write(upper, item);
        self.set_upper(upper);
        upper as u16
    }

    /// Adds an item, reusing an unused slot if there is one. None if it does not fit.
    pub fn add_item(&mut self, item: &[u8]) -> Option<u16> {
        if !self.fits(item.len()) {
            return None;
        }
        let slot = match (0..self.slot_count()).find(|&s| self.lp(s) == LinePointer::Unused) {
            Some(s) => s,
            None => {
                let s = self.slot_count();
                let lower = self.lower();
                self.set_lower(lower + page::LP_SIZE);
                s
            }
        };
        let off = self.place(item);
        self.set_lp(
            slot,
            LinePointer::Normal {
                off,
                len: item.len() as u16,
            },
        );
        Some(slot)
    }

    /// Inserts an item at line-pointer position `slot`, shifting later pointers up (ordered
    /// pages such as B-tree nodes). False if it does not fit.
    pub fn insert_item_at(&mut self, slot: u16, item: &[u8]) -> bool {
        if self.free_space() < item.len() + page::LP_SIZE || slot > self.slot_count() {
            return false;
        }
        let lower = self.lower();
        let at = page::HEADER_SIZE + slot as usize * page::LP_SIZE;
        self.buf().copy_within(at..lower, at + page::LP_SIZE);
        self.touch(at, lower + page::LP_SIZE - at);
        self.set_lower(lower + page::LP_SIZE);
        let off = self.place(item);
        self.set_lp(
            slot,
            LinePointer::Normal {
                off,
                len: item.len() as u16,
            },
        );
        true
    }

    /// Removes line pointer `slot`, shifting later pointers down. The item's bytes become
    /// garbage until [`PageMut::compact`].
    pub fn remove_item_at(&mut self, slot: u16) {
        let lower = self.lower();
        let at = page::HEADER_SIZE + slot as usize * page::LP_SIZE;
        if at + page::LP_SIZE > lower {
            return;
        }
        self.buf().copy_within(at + page::LP_SIZE..lower, at);
        self.touch(at, lower - at);
        self.set_lower(lower - page::LP_SIZE);
    }

    /// Mutable access to a normal item's bytes (same length).
    pub fn item_mut(&mut self, slot: u16) -> &mut [u8] {
        match self.lp(slot) {
            LinePointer::Normal { off, len } => self.range_mut(off as usize, len as usize),
            _ => &mut [],
        }
    }

    /// Overwrites `bytes` at offset `at` within a normal item (only those bytes are logged).
    pub fn write_in_item(&mut self, slot: u16, at: usize, bytes: &[u8]) {
        if let LinePointer::Normal { off, len } = self.lp(slot)
            && at + bytes.len() <= len as usize
        {
            self.write(off as usize + at, bytes);
        }
    }

    /// Replaces a normal item with one of the same or smaller length in place, or else
    /// relocates it within the page. False if it does not fit.
    pub fn replace_item(&mut self, slot: u16, item: &[u8]) -> bool {
        if let LinePointer::Normal { off, len } = self.lp(slot) {
            if item.len() <= len as usize {
                self.write(off as usize, item);
                self.set_lp(
                    slot,
                    LinePointer::Normal {
                        off,
                        len: item.len() as u16,
                    },
                );
                return true;
            }
            if self.free_space() < item.len() {
                self.compact();
                if self.free_space() < item.len() {
                    return false;
                }
            }
            let off = self.place(item);
            self.set_lp(
                slot,
                LinePointer::Normal {
                    off,
                    len: item.len() as u16,
                },
            );
            return true;
        }
        false
    }

    /// Defragments items so all free space is contiguous. Slot numbers do not change. Logged
    /// as an operation, not as bytes: redo runs [`PageMut::compact_in_place`] on the same
    /// page state and gets the same layout.
    pub fn compact(&mut self) {
        self.settle_changes();
        self.settled
            .extend_from_slice(&crate::wal::record::COMPACT.to_le_bytes());
        self.settled.extend_from_slice(&0u16.to_le_bytes());
        self.settled_ops += 1;
        self.compact_in_place();
    }

    /// The compaction itself, unrecorded: items are placed from the special space down, in
    /// slot order, and the gap between line pointers and items is zeroed.
    pub(crate) fn compact_in_place(&mut self) {
        let special = self.special_offset();
        let n = self.slot_count();
        let lower = self.lower();
        let before: [u8; PAGE_SIZE] = *self.data();
        let b = self.buf();
        let mut upper = special;
        for s in 0..n {
            let at = page::HEADER_SIZE + s as usize * page::LP_SIZE;
            let lp = page::decode_lp(&before[at..at + page::LP_SIZE]);
            if let LinePointer::Normal { off, len } = lp {
                let (off, len) = (off as usize, len as usize);
                upper -= len;
                b[upper..upper + len].copy_from_slice(&before[off..off + len]);
                let lp = page::encode_lp(LinePointer::Normal {
                    off: upper as u16,
                    len: len as u16,
                });
                b[at..at + page::LP_SIZE].copy_from_slice(&lp);
            }
        }
        b[lower..upper].fill(0);
        b[layout::UPPER..layout::UPPER + 2].copy_from_slice(&(upper as u16).to_le_bytes());
    }

    /// Removes trailing unused line pointers.
    pub fn trim_slots(&mut self) {
        let mut n = self.slot_count();
        while n > 0 && self.lp(n - 1) == LinePointer::Unused {
            n -= 1;
        }
        self.set_lower(page::HEADER_SIZE + n as usize * page::LP_SIZE);
    }

    pub(crate) fn set_lsn(&mut self, lsn: u64) {
        self.buf()[layout::LSN..layout::LSN + 8].copy_from_slice(&lsn.to_le_bytes());
    }

    pub(crate) fn raw(&self) -> &[u8; PAGE_SIZE] {
        self.data()
    }

    /// Replaces the whole image (redo of a full-page image).
    pub(crate) fn restore(&mut self, image: &[u8]) {
        self.buf().copy_from_slice(image);
    }

    /// Applies one recorded range (redo).
    pub(crate) fn apply(&mut self, off: usize, bytes: &[u8]) {
        self.buf()[off..off + bytes.len()].copy_from_slice(bytes);
    }

    pub(crate) fn zero_for_redo(&mut self) {
        self.buf().fill(0);
    }

    pub(crate) fn mark_dirty(&self) {
        self.pool.mark_dirty(self.frame);
    }
}

/// Appends `changes` as WAL ranges, `[off: u16][len: u16][bytes]` each, with their bytes from
/// `page`.
pub(crate) fn encode_ranges(page: &[u8; PAGE_SIZE], changes: &[(u16, u16)], out: &mut Vec<u8>) {
    for &(off, len) in changes {
        out.extend_from_slice(&off.to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&page[off as usize..off as usize + len as usize]);
    }
}

impl PageRead for PageMut<'_> {
    fn data(&self) -> &[u8; PAGE_SIZE] {
        match &self.guard {
            Some(g) => g,
            None => unreachable!("guard is only taken in drop"),
        }
    }
}

impl Drop for PageMut<'_> {
    fn drop(&mut self) {
        if self.changed() || self.fresh {
            // Unlogged relations and error paths: the change stays in memory and reaches
            // disk with the page; only WAL-logged changes survive a crash.
            self.pool.mark_dirty(self.frame);
        }
        self.guard.take();
        self.pool.unpin(self.frame);
    }
}
