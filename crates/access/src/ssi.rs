//! The engine's side of Serializable Snapshot Isolation (keel_txn::ssi holds the graph and
//! the lock table). What each access takes and checks:
//!
//! - A sequential or bitmap heap scan locks the whole relation before it reads a page.
//! - An index scan locks the byte interval of keys it reads in the index before it starts,
//!   and each row's root (`Target::Tuple`) before it fetches the row.
//! - Every version a scan examines is checked for a concurrent writer (conflict out): a
//!   visible version whose deleter the snapshot does not see, or a version invisible only
//!   because its creator is concurrent.
//! - An insert checks the relation lock after placing the row, and each index's ranges
//!   after placing the key; an update or delete checks the row's tuple lock and the
//!   relation lock after placing its xmax (conflict in).
//!
//! Readers lock before they read and writers check after they write, so one of the two
//! always sees the other: a writer that misses a reader's lock wrote before the lock was
//! taken, and the reader then meets the write in the heap.

use crate::api::*;
use crate::engine::EngineInner;
use crate::heap::Heap;
use crate::heap::tuple::Header;
use keel_common::{PgResult, Tid};
use keel_txn::ssi::{Safety, SxId, Target};
use keel_txn::{Snapshot, TxnManager, XidStatus};
use std::time::Duration;

/// A SERIALIZABLE transaction's reads.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'a> {
    txns: &'a TxnManager,
    sx: SxId,
}

impl<'a> Reader<'a> {
    pub(crate) fn of(engine: &'a EngineInner, txn: &Transaction) -> Option<Reader<'a>> {
        txn.inner.m.lock().sx.map(|sx| Reader {
            txns: &engine.txns,
            sx,
        })
    }

    pub(crate) fn lock_relation(&self, rel: u32) -> PgResult<()> {
        self.txns.ssi.lock(self.sx, Target::Relation(rel))
    }

    pub(crate) fn lock_row(&self, rel: u32, root: Tid) -> PgResult<()> {
        self.txns
            .ssi
            .lock(self.sx, Target::Tuple(rel, root.to_u64()))
    }

    pub(crate) fn lock_range(
        &self,
        index: u32,
        range: &(Vec<u8>, Option<Vec<u8>>),
    ) -> PgResult<()> {
        self.txns
            .ssi
            .lock_range(self.sx, index, &range.0, range.1.as_deref())
    }

    /// The top-level xid of the transaction whose write `snap` does not see in version `h`
    /// (`visible`: the snapshot sees the version itself), if it may still matter.
    fn concurrent_writer(&self, snap: &Snapshot, h: &Header, visible: bool) -> Option<u64> {
        let x = if visible { h.deleter() } else { h.xmin };
        if x == 0 || self.txns.is_own(x, snap.xid) || self.txns.sees(snap, x, u32::MAX) {
            return None;
        }
        if matches!(self.txns.status(x), XidStatus::Aborted) {
            return None;
        }
        Some(self.txns.clog.top_of(x))
    }

    /// Conflict out for a version a scan examined.
    pub(crate) fn examined(&self, snap: &Snapshot, h: &Header, visible: bool) -> PgResult<()> {
        match self.concurrent_writer(snap, h, visible) {
            Some(w) => self.txns.ssi.conflict_out(self.sx, w),
            None => Ok(()),
        }
    }

    /// Conflict out after looking up row `root`: on the version found, or, when none is
    /// visible, on a concurrent creator of one the snapshot does not see.
    pub(crate) fn fetched(
        &self,
        heap: &Heap<'_>,
        root: Tid,
        snap: &Snapshot,
        found: Option<&Header>,
    ) -> PgResult<()> {
        if let Some(h) = found {
            return self.examined(snap, h, true);
        }
        let mut writer = None;
        heap.walk_all(root, |_, h, _| {
            writer = self.concurrent_writer(snap, h, false);
            writer.is_none()
        })?;
        match writer {
            Some(w) => self.txns.ssi.conflict_out(self.sx, w),
            None => Ok(()),
        }
    }
}

impl EngineInner {
    /// Takes the transaction's first snapshot; a SERIALIZABLE one registers with SSI under
    /// the same lock (a read-only one with nothing to fear runs as snapshot isolation).
    pub(crate) fn first_snapshot(&self, txn: &Transaction) {
        let st = &txn.inner;
        let mut m = st.m.lock();
        let xid = m.xid.unwrap_or(0);
        if txn.isolation == Isolation::Serializable {
            let (slot, cid) = (&st.slot, m.cid);
            let (sx, snap) = self
                .txns
                .ssi
                .register(txn.read_only, || self.txns.snapshot(slot, xid, cid));
            m.sx = sx;
            m.snapshot = snap;
        } else {
            m.snapshot = self.txns.snapshot(&st.slot, xid, m.cid);
        }
        m.has_snapshot = true;
    }

    /// SERIALIZABLE READ ONLY DEFERRABLE: before the first statement, takes snapshots until
    /// one is safe (no concurrent read-write serializable transaction can make it see an
    /// anomaly), waiting for the transactions that could. Other transactions: nothing.
    pub async fn wait_safe_snapshot(
        &self,
        txn: &Transaction,
        check: impl Fn() -> PgResult<()>,
    ) -> PgResult<()> {
        if txn.isolation != Isolation::Serializable
            || !txn.read_only
            || !txn.deferrable
            || txn.inner.m.lock().has_snapshot
        {
            return Ok(());
        }
        loop {
            self.first_snapshot(txn);
            let Some(sx) = txn.inner.m.lock().sx else {
                return Ok(());
            };
            loop {
                let changed = self.txns.ssi.safety_changed.notified();
                match self.txns.ssi.safety(sx) {
                    Safety::Safe => return Ok(()),
                    Safety::Unsafe => break,
                    Safety::Pending => {}
                }
                check()?;
                let _ = tokio::time::timeout(Duration::from_millis(100), changed).await;
            }
            {
                let mut m = txn.inner.m.lock();
                m.sx = None;
                m.has_snapshot = false;
            }
            self.txns.ssi.release(sx, false);
            txn.inner.slot.release_snapshot();
        }
    }

    /// Conflict in for a write of row `root` of relation `rel` (None: a new row).
    pub(crate) fn ssi_wrote_row(
        &self,
        txn: &Transaction,
        rel: u32,
        root: Option<Tid>,
    ) -> PgResult<()> {
        let Some(sx) = txn.inner.m.lock().sx else {
            return Ok(());
        };
        match root {
            Some(r) => self.txns.ssi.conflict_in(
                sx,
                &[Target::Tuple(rel, r.to_u64()), Target::Relation(rel)],
                None,
            ),
            None => self
                .txns
                .ssi
                .conflict_in(sx, &[Target::Relation(rel)], None),
        }
    }

    /// A TRUNCATE or DROP of the table in relation file `rel` with index files `indexes`:
    /// a SERIALIZABLE `txn` writes every row of it (conflict in with all its readers); and
    /// when the rows go on in file `to` (TRUNCATE), the readers' locks cover all of `to`.
    pub(crate) fn ssi_replace_relation(
        &self,
        txn: &Transaction,
        rel: u32,
        indexes: &[u32],
        to: Option<u32>,
    ) -> PgResult<()> {
        let sx = txn.inner.m.lock().sx;
        if let Some(sx) = sx {
            self.txns.ssi.conflict_in_relation(sx, rel, indexes)?;
        }
        if let Some(to) = to {
            self.txns.ssi.transfer_relation(rel, indexes, to);
        }
        Ok(())
    }

    /// Conflict in for a key placed (or about to be refused as a duplicate) in index `index`.
    pub(crate) fn ssi_wrote_key(&self, txn: &Transaction, index: u32, key: &[u8]) -> PgResult<()> {
        let sx = txn.inner.m.lock().sx;
        match sx {
            Some(sx) => self.txns.ssi.conflict_in(sx, &[], Some((index, key))),
            None => Ok(()),
        }
    }
}
