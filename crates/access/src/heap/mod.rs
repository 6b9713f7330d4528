//! Heap tables: rows as version chains hanging off a stable root (see README.md).
//!
//! Latch protocol: at most one heap page latch is held at a time by any operation here, and no
//! index latch is acquired while a heap latch is held (indexes latch first, then heap pages
//! through the unique check). Chain walks validate each hop (`next.xmin == prev.xmax` and the
//! same root) and restart from the root when a concurrent prune moved things.

pub mod prune;
pub mod tuple;

use crate::relstate::RelState;
use keel_common::{PgError, PgResult, Tid, sqlstate};
use keel_storage::page::{HEADER_SIZE, LP_SIZE, LinePointer, PAGE_SIZE, PageRead};
use keel_storage::{BufferPool, PageMut};
use keel_txn::{Snapshot, Strength, TxnManager, XidStatus};
use tuple::{
    CMAX, EXTRA_LOCKERS, FLAGS, HAS_NEXT, HEADER, Header, LOCK_ONLY, NEXT, STRENGTH,
    STRENGTH_SHIFT, XMAX,
};

pub const HEAP_PAGE: u16 = 1;
const MAX_RESTARTS: usize = 16;

/// The largest heap tuple (header included): one item and its line pointer on an empty page,
/// 8160 bytes, which is also PostgreSQL's `MaxHeapTupleSize` for 8 kB pages.
pub const MAX_TUPLE: usize = PAGE_SIZE - HEADER_SIZE - LP_SIZE;

/// Most tuples a heap page can hold (the smallest tuple is a bare header).
const MAX_TUPLES_PER_PAGE: usize = (PAGE_SIZE - HEADER_SIZE) / (HEADER + LP_SIZE);

/// Free space above which a page counts as empty for a tuple that cannot also leave the
/// fillfactor's reserve free: an empty page may still carry unused line pointers.
const NEARLY_EMPTY: usize = MAX_TUPLE - MAX_TUPLES_PER_PAGE / 8 * LP_SIZE;

/// Existing pages an insert tries before it extends the relation. Each failed try removes the
/// page from the candidates, but concurrent inserters may offer new ones: the bound makes sure
/// one insert cannot be turned away forever.
const EXISTING_TRIES: usize = 8;

/// 54000 for a tuple no page can hold (keel has no out-of-line storage yet), with
/// PostgreSQL's message for a row over `MaxHeapTupleSize`.
pub fn check_tuple_size(len: usize) -> PgResult<()> {
    if len > MAX_TUPLE {
        return Err(PgError::new(
            sqlstate::PROGRAM_LIMIT_EXCEEDED,
            format!("row is too big: size {len}, maximum size {MAX_TUPLE}"),
        ));
    }
    Ok(())
}

/// Free bytes (besides the new line pointer) a page needs to take a tuple of `len` bytes and
/// keep `reserve` free. A tuple too large to leave the reserve on any page needs a nearly
/// empty page instead: the fillfactor limits how full a page gets, never whether a row that
/// fits on an empty page can be stored (PostgreSQL's rule).
pub fn target_free_space(len: usize, reserve: usize) -> usize {
    if len + reserve > NEARLY_EMPTY {
        len.max(NEARLY_EMPTY)
    } else {
        len + reserve
    }
}

/// Result of trying to lock a version for UPDATE/DELETE.
#[derive(Debug)]
pub enum LockOutcome {
    /// xmax is now ours.
    Locked,
    Wait(u64),
    /// Replaced by a committed transaction.
    Updated,
    Deleted,
    /// Already updated or deleted by this very command.
    SelfModified,
    /// Updated or deleted by a later command of this transaction that ran while this
    /// command did (a function it called): PostgreSQL's TM_SelfModified with a later cmax.
    ModifiedLater,
    /// Free, but other writers queue for it: join the queue first (fair row locking).
    Queue,
    /// A shared lock, listed beside another transaction's in `RowLockers` (the page only
    /// gained the flag that says so).
    Listed,
    /// Already held at least as strongly by this transaction: nothing was written.
    Held,
    /// Another transaction only locks it: wait until that one is over and visible.
    WaitVisible(u64),
}

/// The new version's tid and the replaced version's row bytes.
pub type NewVersion = (Tid, Vec<u8>);

/// A version as read from a page.
pub struct Version {
    pub tid: Tid,
    pub header: Header,
    pub row: Vec<u8>,
}

pub struct Heap<'a> {
    pub pool: &'a BufferPool,
    pub txns: &'a TxnManager,
    pub rel: &'a RelState,
    /// The last pre-committed transaction a write path treated as committed (early lock
    /// release), 0 if none: the caller must then `note_precommitted_dependency`. Versions are
    /// met in chain order, so the last one's commit record is the latest of those relied on.
    pub built_on_precommit: std::cell::Cell<u64>,
    /// KEY SHARE lockers of a version a NO KEY UPDATE is replacing (set by the lock step):
    /// they keep their lock on the new version, which protects the same key.
    carried: std::cell::RefCell<Vec<u64>>,
    /// A scan's pin on the heap page it read last (`with_pin`): reads of that page latch it
    /// without looking it up and pinning it again.
    pin: Option<&'a PagePin>,
}

/// The heap pages a scan keeps pinned between rows (see `Heap::with_pin`); its owner gives
/// the pins back with [`PagePin::release`]. Two pages, because an index scan over updated
/// rows alternates between the roots' page and the page their newest versions went to; the
/// slot not used last is the one replaced.
#[derive(Default)]
pub struct PagePin {
    slots: [std::cell::Cell<Option<keel_storage::PinId>>; 2],
    victim: std::cell::Cell<usize>,
}

impl PagePin {
    pub fn release(&self, pool: &BufferPool) {
        for slot in &self.slots {
            if let Some(p) = slot.take() {
                pool.unpin_page(p);
            }
        }
    }

    /// The pin held on `block`, pinning it in place of the slot used less recently.
    fn get(
        &self,
        pool: &BufferPool,
        rel: &RelState,
        block: keel_common::BlockNo,
    ) -> PgResult<keel_storage::PinId> {
        for (i, slot) in self.slots.iter().enumerate() {
            if let Some(p) = slot.get()
                && p.block() == block
            {
                self.victim.set(1 - i);
                return Ok(p);
            }
        }
        let i = self.victim.get();
        let p = pool.pin_page(&rel.file, block)?;
        if let Some(old) = self.slots[i].replace(Some(p)) {
            pool.unpin_page(old);
        }
        self.victim.set(1 - i);
        Ok(p)
    }
}

fn corrupt(what: &str, tid: Tid) -> PgError {
    PgError::new(sqlstate::DATA_CORRUPTED, format!("{what} at {tid}"))
}

/// Whether a version is visible to `snap`.
#[inline]
pub fn visible(txns: &TxnManager, snap: &Snapshot, h: &Header) -> bool {
    txns.sees(snap, h.xmin, h.cmin) && (h.deleter() == 0 || !txns.sees(snap, h.xmax, h.cmax))
}

/// [`visible`] for a scan reading version after version: `seen` holds the last creator found
/// committed before the snapshot ([`TxnManager::committed_before`]), whose versions need no second look up
/// in the transaction map. A transaction a snapshot sees stays seen (its commit came before
/// the snapshot's), and rows loaded together share their creator. Start it at `u64::MAX`.
#[inline]
pub fn visible_to_scan(txns: &TxnManager, snap: &Snapshot, h: &Header, seen: &mut u64) -> bool {
    let created = if h.xmin == *seen {
        true
    } else if txns.committed_before(snap, h.xmin) {
        *seen = h.xmin;
        true
    } else {
        txns.sees(snap, h.xmin, h.cmin)
    };
    created && (h.deleter() == 0 || !txns.sees(snap, h.xmax, h.cmax))
}

impl<'a> Heap<'a> {
    pub fn new(pool: &'a BufferPool, txns: &'a TxnManager, rel: &'a RelState) -> Self {
        Heap {
            pool,
            txns,
            rel,
            built_on_precommit: std::cell::Cell::new(0),
            carried: std::cell::RefCell::new(Vec::new()),
            pin: None,
        }
    }

    /// Reads through `pin`: the page read last stays pinned in it (an index scan's
    /// consecutive rows are mostly on one page).
    pub fn with_pin(mut self, pin: &'a PagePin) -> Self {
        self.pin = Some(pin);
        self
    }

    /// Share-latches `block` for a version read, through the scan's pin if it has one.
    fn read_page(&self, block: keel_common::BlockNo) -> PgResult<keel_storage::PageRef<'a>> {
        let Some(pin) = self.pin else {
            return self.pool.read(&self.rel.file, block);
        };
        let held = pin.get(self.pool, self.rel, block)?;
        Ok(self.pool.read_pinned(held))
    }

    /// Inserts a new row version; returns its tid. `reserve` bytes should stay free on the page
    /// afterwards (fillfactor); a row that cannot leave them on any page goes to a (nearly)
    /// empty one, as PostgreSQL's `RelationGetBufferForTuple` does. When `root` is None the
    /// version is its own root. `avoid` is a block not to use (the page an update left).
    ///
    /// Progress: at most `EXISTING_TRIES` existing pages are tried; then the relation is
    /// extended, and a fresh page always takes the row (`len <= MAX_TUPLE`).
    pub fn insert(
        &self,
        row: &[u8],
        xid: u64,
        cid: u32,
        chain: Option<(Tid, Tid)>,
        reserve: usize,
        avoid: Option<u32>,
    ) -> PgResult<Tid> {
        // (root, previous version) for a new version of an existing row.
        let (root, prev) = match chain {
            Some((r, p)) => (Some(r), p),
            None => (None, Tid::INVALID),
        };
        let len = HEADER + row.len();
        check_tuple_size(len)?;
        let need = target_free_space(len, reserve);
        let mut item = tuple::build(xid, cid, root.unwrap_or(Tid::INVALID), prev, row);
        let listed = if root.is_some() {
            self.carry_lockers(&mut item)
        } else {
            Vec::new()
        };
        let mut tries = 0;
        let (mut page, slot) = loop {
            let candidate = if tries < EXISTING_TRIES {
                self.rel.insert_candidate(avoid)
            } else {
                None
            };
            let Some(block) = candidate else {
                let mut page = self.pool.extend(&self.rel.file)?;
                page.init(HEAP_PAGE, 0);
                let Some(slot) = page.add_item(&item) else {
                    return Err(PgError::new(
                        sqlstate::INTERNAL_ERROR,
                        format!("heap tuple of {len} bytes does not fit an empty page"),
                    ));
                };
                self.rel.set_insert_target(page.block());
                break (page, slot);
            };
            tries += 1;
            let mut page = self.pool.write(&self.rel.file, block)?;
            if page.is_new() {
                page.init(HEAP_PAGE, 0);
            }
            if page.kind() == HEAP_PAGE
                && page.free_space() >= need + LP_SIZE
                && let Some(slot) = page.add_item(&item)
            {
                break (page, slot);
            }
            self.rel.page_full(block);
        };
        let tid = Tid::new(page.block(), slot);
        if root.is_none() {
            // The root of a new row is the row itself; its slot is known only once placed.
            item[tuple::ROOT..tuple::ROOT + 6].copy_from_slice(&tuple::tid_bytes(tid));
            page.item_mut(slot)[tuple::ROOT..tuple::ROOT + 6]
                .copy_from_slice(&tuple::tid_bytes(tid));
        }
        self.rel.page_changed(tid.block);
        self.pool.wal.log_pages(xid, &mut [&mut page]);
        self.list_carried(tid, listed);
        Ok(tid)
    }

    /// Gives a new version the KEY SHARE lockers the lock step carried over from the one it
    /// replaces: the first in its xmax (lock-only), the rest to be listed once it is placed.
    fn carry_lockers(&self, item: &mut [u8]) -> Vec<u64> {
        let mut carried = self.carried.take();
        if carried.is_empty() {
            return carried;
        }
        let first = carried.remove(0);
        let mut flags = LOCK_ONLY | ((Strength::KeyShare as u16) << STRENGTH_SHIFT);
        if !carried.is_empty() {
            flags |= EXTRA_LOCKERS;
        }
        item[XMAX..XMAX + 8].copy_from_slice(&first.to_le_bytes());
        item[FLAGS..FLAGS + 2].copy_from_slice(&flags.to_le_bytes());
        carried
    }

    fn list_carried(&self, tid: Tid, listed: Vec<u64>) {
        for x in listed {
            self.txns
                .row_lockers
                .add((self.rel.file.id, tid.to_u64()), x, Strength::KeyShare);
        }
    }

    /// Walks the chain of `root`, calling `f(tid, header, row)` on each version oldest first
    /// (with the version's page share-latched: `f` must not latch pages) until it says
    /// `Done` or `Stop`. Consecutive versions on one page are read under one latch. Restarts
    /// from the root if a hop fails validation (a concurrent prune moved things).
    fn walk<T>(
        &self,
        root: Tid,
        f: impl FnMut(Tid, &Header, &[u8]) -> Walk<T>,
    ) -> PgResult<Option<T>> {
        self.walk_from(root, root, f)
    }

    /// As `walk`, but starting at version `start` of the row (a version the caller knows
    /// cannot have been pruned, e.g. one its snapshot saw); a failed hop restarts from `root`.
    fn walk_from<T>(
        &self,
        root: Tid,
        start: Tid,
        mut f: impl FnMut(Tid, &Header, &[u8]) -> Walk<T>,
    ) -> PgResult<Option<T>> {
        let mut first = start;
        'restart: for _ in 0..MAX_RESTARTS {
            let mut cur = first;
            first = root;
            let mut prev_xmax: Option<u64> = None;
            let mut page = self.read_page(cur.block)?;
            loop {
                if page.block() != cur.block {
                    drop(page);
                    page = self.read_page(cur.block)?;
                }
                let item = match page.lp(cur.slot) {
                    LinePointer::Redirect { block, slot } if cur == root => {
                        cur = Tid::new(block, slot);
                        continue;
                    }
                    LinePointer::Normal { .. } => page.item(cur.slot),
                    _ if prev_xmax.is_none() && cur == root => return Ok(None),
                    _ => continue 'restart,
                };
                if item.len() < HEADER {
                    return Err(corrupt("invalid heap tuple", cur));
                }
                let h = Header::read(item);
                if h.root != root || prev_xmax.is_some_and(|x| x != h.xmin) {
                    if prev_xmax.is_none() && cur == root {
                        // The root slot itself holds another row now: the row is gone.
                        return Ok(None);
                    }
                    continue 'restart;
                }
                match f(cur, &h, &item[HEADER..]) {
                    Walk::Done(t) => return Ok(Some(t)),
                    Walk::Stop => return Ok(None),
                    Walk::Next => {}
                }
                if !h.has_next() {
                    return Ok(None);
                }
                prev_xmax = Some(h.xmax);
                cur = h.next;
            }
        }
        Err(PgError::new(
            sqlstate::INTERNAL_ERROR,
            format!("version chain of {root} keeps changing"),
        ))
    }

    /// Calls `f(tid, header, row)` on each version of `root`, oldest first, while it returns
    /// true. `f` runs with the version's page share-latched and must not latch pages.
    pub fn walk_all(
        &self,
        root: Tid,
        mut f: impl FnMut(Tid, &Header, &[u8]) -> bool,
    ) -> PgResult<()> {
        self.walk(root, |tid, h, row| {
            if f(tid, h, row) {
                Walk::<()>::Next
            } else {
                Walk::Stop
            }
        })?;
        Ok(())
    }

    /// The version of row `root` visible to `snap`, handed to `read` in place under the page's
    /// share latch, so a scan decodes it without copying it out first.
    pub fn fetch_visible<T>(
        &self,
        root: Tid,
        snap: &Snapshot,
        read: impl FnOnce(Tid, &Header, &[u8]) -> T,
    ) -> PgResult<Option<T>> {
        let mut read = Some(read);
        if let Some(hint) = self.rel.latest(root)
            && let Some(found) = self.visible_from(root, hint, snap, &mut read)?
        {
            return Ok(found);
        }
        let txns = self.txns;
        self.walk(root, |tid, h, row| {
            if !txns.sees(snap, h.xmin, h.cmin) {
                // Later versions were created by later committers: none is visible either.
                return Walk::Stop;
            }
            if h.deleter() == 0 || !txns.sees(snap, h.xmax, h.cmax) {
                return match read.take() {
                    Some(read) => Walk::Done(read(tid, h, row)),
                    None => Walk::Stop,
                };
            }
            Walk::Next
        })
    }

    /// Finds the version of `root` visible to `snap` starting from a recent version `hint`:
    /// backwards through `prev` while the version is too new, forwards through `next` while
    /// it was deleted for us. None when a hop fails validation (the caller walks from the
    /// root). Versions between the visible one and the newest are never pruned while `snap`
    /// is published, so a valid walk cannot miss the answer.
    fn visible_from<T>(
        &self,
        root: Tid,
        hint: Tid,
        snap: &Snapshot,
        read: &mut Option<impl FnOnce(Tid, &Header, &[u8]) -> T>,
    ) -> PgResult<Option<Option<T>>> {
        let txns = self.txns;
        let mut cur = hint;
        // (version we came from, the xid that links us to it, true if we moved backwards)
        let mut came: Option<(Tid, u64, bool)> = None;
        let mut page = self.read_page(cur.block)?;
        for _ in 0..256 {
            if page.block() != cur.block {
                drop(page);
                page = self.read_page(cur.block)?;
            }
            let item = match page.lp(cur.slot) {
                LinePointer::Normal { .. } if page.item(cur.slot).len() >= HEADER => {
                    page.item(cur.slot)
                }
                _ => return Ok(None),
            };
            let h = Header::read(item);
            let linked = match came {
                None => true,
                Some((from, x, true)) => h.xmax == x && h.has_next() && h.next == from,
                Some((from, x, false)) => h.xmin == x && h.prev == from,
            };
            if h.root != root || !linked {
                return Ok(None);
            }
            if !txns.sees(snap, h.xmin, h.cmin) {
                if matches!(came, Some((_, _, false))) {
                    return Ok(None);
                }
                if !h.prev.is_valid() {
                    return Ok(Some(None));
                }
                came = Some((cur, h.xmin, true));
                cur = h.prev;
                continue;
            }
            if h.deleter() == 0 || !txns.sees(snap, h.xmax, h.cmax) {
                return Ok(read.take().map(|read| Some(read(cur, &h, &item[HEADER..]))));
            }
            if matches!(came, Some((_, _, true))) {
                return Ok(None);
            }
            if !h.has_next() {
                return Ok(Some(None));
            }
            came = Some((cur, h.xmax, false));
            cur = h.next;
        }
        Ok(None)
    }

    /// Whether a writer may treat `xid` as committed: it did, or it is pre-committed (noted in
    /// `built_on_precommit`).
    fn committed_for_writer(&self, xid: u64) -> bool {
        match self.txns.status(xid) {
            XidStatus::Committed(_) => true,
            XidStatus::Aborted => false,
            XidStatus::InProgress => self.precommitted(xid),
        }
    }

    /// Whether in-progress `xid` is pre-committed; if so, notes that the caller builds on it.
    fn precommitted(&self, xid: u64) -> bool {
        let logged = self.txns.clog.is_logged(xid);
        if logged {
            // The commit queue knows top-level xids.
            self.built_on_precommit.set(self.txns.clog.top_of(xid));
        }
        logged
    }

    /// The newest version of row `root` whose creator committed or pre-committed (or is
    /// top-level transaction `own` or one of its live subtransactions), unless the row was
    /// deleted by such a transaction.
    pub fn fetch_newest(&self, root: Tid, start: Tid, own: u64) -> PgResult<Option<Version>> {
        let committed = |x: u64| self.txns.is_own(x, own) || self.committed_for_writer(x);
        let newest = self.walk_from(root, start, |tid, h, row| {
            if !committed(h.xmin) {
                return Walk::Stop;
            }
            // The next version exists for us only if this one's deleter committed.
            if h.has_next() && h.xmax != 0 && committed(h.xmax) {
                return Walk::Next;
            }
            Walk::Done(Version {
                tid,
                header: *h,
                row: row.to_vec(),
            })
        })?;
        Ok(newest.filter(|v| {
            let gone = v.header.deleter() != 0
                && !self.txns.is_own(v.header.xmax, own)
                && !v.header.has_next()
                && self.committed_for_writer(v.header.xmax);
            !gone
        }))
    }

    /// Locks `version` by (`xid`, `cid`), on a page latched by the caller: with `write`, to
    /// delete or replace it (xmax becomes the writer); otherwise a lock of strength `want`
    /// only (SELECT ... FOR ...). A free row is answered with `Queue` instead when
    /// `must_queue` says other writers wait for it, unless `version` is this transaction's own
    /// (then it holds the row already).
    #[allow(clippy::too_many_arguments)]
    fn lock_on_page(
        &self,
        page: &mut PageMut<'_>,
        version: Tid,
        root: Tid,
        xid: u64,
        cid: u32,
        must_queue: &dyn Fn() -> bool,
        write: bool,
        want: Strength,
    ) -> PgResult<LockOutcome> {
        let h = match page.lp(version.slot) {
            LinePointer::Normal { .. } => Header::read(page.item(version.slot)),
            _ => return Ok(LockOutcome::Deleted),
        };
        if h.root != root {
            return Ok(LockOutcome::Deleted);
        }
        // A deleter or updater.
        if h.deleter() != 0 {
            if self.txns.same_txn(h.xmax, xid) {
                if h.cmax == cid {
                    return Ok(LockOutcome::SelfModified);
                }
                if write && h.cmax > cid {
                    return Ok(LockOutcome::ModifiedLater);
                }
                return Ok(LockOutcome::Deleted);
            }
            match self.txns.status(h.xmax) {
                XidStatus::InProgress if !self.precommitted(h.xmax) => {
                    return Ok(LockOutcome::Wait(h.xmax));
                }
                XidStatus::InProgress | XidStatus::Committed(_) => {
                    if h.has_next() {
                        return Ok(LockOutcome::Updated);
                    }
                    return Ok(LockOutcome::Deleted);
                }
                XidStatus::Aborted => {}
            }
        }
        // Lockers: the one in xmax, and those listed beside it.
        let key = (self.rel.file.id, version.to_u64());
        let mut mine: Option<Strength> = None;
        let mut xmax_held = false;
        // Live lockers of other transactions a write leaves in place (KEY SHARE under a NO
        // KEY UPDATE): they move to the new version.
        let mut others: Vec<u64> = Vec::new();
        // A locker holds its lock until its transaction is visible (no early release: a
        // referential check made after a write must see what the locker committed).
        let live = |x: u64| matches!(self.txns.status(x), XidStatus::InProgress);
        if h.xmax != 0 && h.lock_only() {
            if self.txns.same_txn(h.xmax, xid) {
                mine = Some(h.strength());
            } else if live(h.xmax) {
                if h.strength().conflicts(want) {
                    return Ok(LockOutcome::WaitVisible(h.xmax));
                }
                xmax_held = true;
                others.push(h.xmax);
            }
        }
        if h.flags & EXTRA_LOCKERS != 0 {
            for (x, s) in self.txns.row_lockers.get(key) {
                if self.txns.same_txn(x, xid) {
                    mine = mine.max(Some(s));
                } else if live(x) {
                    if s.conflicts(want) {
                        return Ok(LockOutcome::WaitVisible(x));
                    }
                    others.push(x);
                }
            }
        }
        if mine.is_some_and(|m| m >= want) && !write {
            return Ok(LockOutcome::Held);
        }
        if mine.is_none() && !self.txns.same_txn(h.xmin, xid) && must_queue() {
            return Ok(LockOutcome::Queue);
        }
        self.rel.page_changed(version.block);
        if !write && xmax_held {
            // Another transaction's compatible lock stays in xmax; ours is listed beside it.
            self.txns.row_lockers.add(key, xid, want);
            page.write_in_item(
                version.slot,
                FLAGS,
                &(h.flags | EXTRA_LOCKERS).to_le_bytes(),
            );
            return Ok(LockOutcome::Listed);
        }
        let flags = if write {
            // The version is replaced or deleted: its lockers' list goes; the KEY SHARE
            // lockers a NO KEY UPDATE admits move to the new version.
            if h.flags & EXTRA_LOCKERS != 0 {
                self.txns.row_lockers.clear(key);
            }
            *self.carried.borrow_mut() = others;
            h.flags & !(HAS_NEXT | LOCK_ONLY | STRENGTH | EXTRA_LOCKERS)
        } else {
            let s = mine.map_or(want, |m| m.max(want));
            (h.flags & !(HAS_NEXT | STRENGTH)) | LOCK_ONLY | ((s as u16) << STRENGTH_SHIFT)
        };
        page.write_in_item(version.slot, XMAX, &xid.to_le_bytes());
        page.write_in_item(version.slot, CMAX, &cid.to_le_bytes());
        page.write_in_item(version.slot, FLAGS, &flags.to_le_bytes());
        Ok(LockOutcome::Locked)
    }

    /// Locks `version` of row `root` with strength `want` (SELECT ... FOR ...).
    pub fn lock_row(
        &self,
        version: Tid,
        root: Tid,
        xid: u64,
        cid: u32,
        want: Strength,
        must_queue: &dyn Fn() -> bool,
    ) -> PgResult<LockOutcome> {
        let mut page = self.pool.write(&self.rel.file, version.block)?;
        let out = self.lock_on_page(&mut page, version, root, xid, cid, must_queue, false, want)?;
        if matches!(out, LockOutcome::Locked | LockOutcome::Listed) {
            self.pool.wal.log_pages(xid, &mut [&mut page]);
        }
        Ok(out)
    }

    /// Deletes `version` of row `root`.
    pub fn delete(
        &self,
        version: Tid,
        root: Tid,
        xid: u64,
        cid: u32,
        must_queue: &dyn Fn() -> bool,
    ) -> PgResult<LockOutcome> {
        let mut page = self.pool.write(&self.rel.file, version.block)?;
        let out = self.lock_on_page(
            &mut page,
            version,
            root,
            xid,
            cid,
            must_queue,
            true,
            Strength::Update,
        )?;
        if matches!(out, LockOutcome::Locked) {
            self.pool.wal.log_pages(xid, &mut [&mut page]);
        }
        Ok(out)
    }

    /// Replaces `version` of row `root` with a new version holding `row`. Returns the new
    /// version's tid when locked.
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &self,
        version: Tid,
        root: Tid,
        row: &[u8],
        xid: u64,
        cid: u32,
        want_old: bool,
        horizon: impl Fn() -> u64,
        must_queue: &dyn Fn() -> bool,
        want: Strength,
    ) -> PgResult<(LockOutcome, Option<NewVersion>)> {
        check_tuple_size(HEADER + row.len())?;
        let mut page = self.pool.write(&self.rel.file, version.block)?;
        let out = self.lock_on_page(&mut page, version, root, xid, cid, must_queue, true, want)?;
        if !matches!(out, LockOutcome::Locked) {
            return Ok((out, None));
        }
        // The replaced version's row, for index maintenance (read while we hold the latch).
        let old = if want_old {
            page.item(version.slot)[HEADER..].to_vec()
        } else {
            Vec::new()
        };
        let mut item = tuple::build(xid, cid, root, version, row);
        // Taken back if the new version goes to another page (insert applies it there).
        let listed = self.carry_lockers(&mut item);
        let mut garbage = Vec::new();
        if !page.fits(item.len()) {
            // A page that stays full while old snapshots keep its versions would otherwise be
            // pruned in vain by every update that lands on it.
            let horizon = horizon();
            if horizon >= page.prune_after() {
                let pruned = prune::prune_page(&mut page, self.txns, horizon, &|t| self.peek(t));
                page.set_prune_after(pruned.next_at);
                garbage = pruned.garbage;
            }
        }
        if page.fits(item.len())
            && let Some(slot) = page.add_item(&item)
        {
            let new = Tid::new(page.block(), slot);
            link(&mut page, version, new);
            self.pool.wal.log_pages(xid, &mut [&mut page]);
            drop(page);
            self.list_carried(new, listed);
            self.rel.note_latest(root, new);
            prune::free_garbage(self, garbage)?;
            return Ok((LockOutcome::Locked, Some((new, old))));
        }
        // The new version goes to another page: lock (logged), place, then link. A crash in
        // between leaves an uncommitted xmax and an orphan version, both invisible forever.
        self.pool.wal.log_pages(xid, &mut [&mut page]);
        if item[FLAGS..FLAGS + 2] != [0, 0] {
            // The carried lockers go with the version `insert` builds.
            let mut carried = listed;
            carried.insert(
                0,
                u64::from_le_bytes(item[XMAX..XMAX + 8].try_into().unwrap_or_default()),
            );
            *self.carried.borrow_mut() = carried;
        }
        let block = page.block();
        self.rel.page_full(block);
        drop(page);
        let new = self.insert(row, xid, cid, Some((root, version)), 0, Some(block))?;
        let mut page = self.pool.write(&self.rel.file, version.block)?;
        link(&mut page, version, new);
        self.pool.wal.log_pages(xid, &mut [&mut page]);
        drop(page);
        self.rel.note_latest(root, new);
        prune::free_garbage(self, garbage)?;
        Ok((LockOutcome::Locked, Some((new, old))))
    }

    /// A version's header on a page that may be latched by someone else: None instead of
    /// waiting (used while another page is latched).
    pub fn peek(&self, tid: Tid) -> Option<Header> {
        let page = self.pool.try_read(&self.rel.file, tid.block).ok()??;
        match page.lp(tid.slot) {
            LinePointer::Normal { .. } if page.item(tid.slot).len() >= HEADER => {
                Some(Header::read(page.item(tid.slot)))
            }
            _ => None,
        }
    }
}

fn link(page: &mut PageMut<'_>, version: Tid, new: Tid) {
    let h = Header::read(page.item(version.slot));
    page.write_in_item(version.slot, NEXT, &tuple::tid_bytes(new));
    page.write_in_item(version.slot, FLAGS, &(h.flags | HAS_NEXT).to_le_bytes());
}

pub enum Walk<T> {
    Done(T),
    Next,
    Stop,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fillfactor_limits_fullness_never_placement() {
        // Room for the reserve: the tuple and the reserve.
        assert_eq!(target_free_space(100, 800), 900);
        // No page can keep the reserve and the tuple: a nearly empty page will do.
        assert_eq!(target_free_space(1044, 7372), NEARLY_EMPTY);
        assert_eq!(target_free_space(MAX_TUPLE, 0), MAX_TUPLE);
        assert_eq!(target_free_space(MAX_TUPLE, 7372), MAX_TUPLE);
        // Whatever the reserve, an empty page (MAX_TUPLE free besides one line pointer)
        // always qualifies for a tuple that passes the size check.
        for reserve in [0, 819, 4096, 7372] {
            for len in [HEADER, 1000, 4000, 8000, MAX_TUPLE] {
                assert!(
                    target_free_space(len, reserve) <= MAX_TUPLE,
                    "{len} {reserve}"
                );
            }
        }
        assert!(check_tuple_size(MAX_TUPLE).is_ok());
        let e = check_tuple_size(MAX_TUPLE + 1).unwrap_err();
        assert_eq!(e.code, sqlstate::PROGRAM_LIMIT_EXCEEDED);
        assert_eq!(e.message, "row is too big: size 8161, maximum size 8160");
    }
}
