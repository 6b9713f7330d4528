//! INSERT ... ON CONFLICT: the conflict probe and the speculative insertion.
//!
//! Protocol (PostgreSQL's, src/backend/executor/README "speculative insertion"), per row:
//!
//! 1. **Probe** ([`Engine::find_conflict`]): each arbiter index is searched for the row's key
//!    and every row found is read as a dirty snapshot would: a live version committed by
//!    anyone (visible to the statement's snapshot or not) or written by this transaction is
//!    the conflict; a version an in-progress transaction inserted or deleted is waited for,
//!    then the probe is repeated.
//! 2. **Act on a conflict**: DO NOTHING skips the row; DO UPDATE locks the version found
//!    (FOR UPDATE) and updates it, and starts over at 1 if a committed transaction replaced
//!    or deleted it meanwhile.
//! 3. **Insert speculatively** when no conflict was found ([`Engine::insert_speculative`]):
//!    the heap version goes in, then the arbiter indexes' entries, each with the unique
//!    check. A key that a concurrent transaction took between 1 and 3 is found by that
//!    check (the B-tree's unique insert is atomic per leaf): the inserter waits for the other
//!    transaction when it is in progress, and on a duplicate the version is *super-deleted*
//!    (`Heap::super_delete`: its xmin becomes `Xid::ABORTED`, so it is dead to everyone at
//!    once and nobody waits for it) and the row starts over at 1, where it now finds the
//!    other transaction's row. The other unique indexes follow the arbiters; a duplicate
//!    there is 23505, as in PostgreSQL.
//!
//! So of any number of sessions upserting the same new key, each either inserts or updates;
//! none fails with 23505. What this does not have, unlike PostgreSQL, is a speculative-insert
//! token: a session that finds another's just-inserted entry waits for that transaction's
//! end, not for the end of its insertion. The difference only shows when a speculative
//! insertion is taken back after another session met its entry, which needs two arbiter
//! indexes conflicting on different rows; that session then waits longer than it must.

use crate::api::{Engine, RowRef, RowWait, Transaction, Write, WriteState};
use crate::heap::Heap;
use crate::heap::tuple::{Header, XMIN};
use crate::index::IndexKeys;
use keel_catalog::{IndexDef, TableDef};
use keel_common::{PgResult, Tid, Xid};
use keel_txn::XidStatus;
use keel_types::Datum;
use std::ops::Bound;
use std::sync::Arc;

/// What the probe of the arbiter indexes found for a proposed row.
pub enum Conflict {
    /// No row holds the key.
    None,
    /// A transaction in progress inserted or deleted a row with the key: wait for it, then
    /// probe again.
    Wait(RowWait),
    /// A live version holds the key.
    Found {
        row: RowRef,
        values: Vec<Datum>,
        /// Written by the statement's own command (the same INSERT proposed the key twice).
        this_command: bool,
        /// Visible to the statement's snapshot (REPEATABLE READ must not act on a row it
        /// cannot see).
        visible: bool,
    },
}

impl Engine {
    /// Step 1 of the protocol above: the first row that holds `row`'s key in one of
    /// `arbiters`.
    pub fn find_conflict(
        &self,
        txn: &Transaction,
        table: &TableDef,
        arbiters: &[Arc<IndexDef>],
        row: &[Datum],
    ) -> PgResult<Conflict> {
        let e = &self.inner;
        let own = e.xid(txn)?;
        let cid = txn.inner.command_id();
        let snap = e.snapshot(txn);
        let types: Vec<_> = table.columns.iter().map(|c| c.ty.id).collect();
        let rel = e.rel(table.relfile)?;
        let heap = Heap::new(&e.pool, &e.txns, &rel);
        let txns = &e.txns;
        for idx in arbiters {
            let keys = IndexKeys::new(table, idx);
            if keys.has_null(row) {
                continue;
            }
            let key = keys.key_of(row);
            let irel = e.rel(idx.relfile)?;
            let am = e.open_index(&irel, table, idx);
            let mut roots = am.scan(&crate::KeyRange {
                lower: Bound::Included(key.clone()),
                upper: Bound::Included(key.clone()),
            })?;
            while let Some(root) = roots.next()? {
                let mut found: PgResult<Option<Conflict>> = Ok(None);
                heap.walk_all(root, |tid, h: &Header, bytes| {
                    let mine = txns.same_txn(h.xmin, own);
                    match txns.status(h.xmin) {
                        _ if mine => {}
                        XidStatus::Aborted => return false,
                        XidStatus::InProgress => {
                            found = Ok(Some(wait(h.xmin, rel.file.id, root)));
                            return false;
                        }
                        XidStatus::Committed(_) => {}
                    }
                    let deleter = h.deleter();
                    if deleter != 0 {
                        if txns.same_txn(deleter, own) {
                            return true;
                        }
                        match txns.status(deleter) {
                            XidStatus::Committed(_) => return true,
                            XidStatus::Aborted => {}
                            XidStatus::InProgress => {
                                found = Ok(Some(wait(deleter, rel.file.id, root)));
                                return false;
                            }
                        }
                    }
                    let values = match keel_types::row::decode_row(bytes, &types) {
                        Ok(v) => v,
                        Err(err) => {
                            found = Err(err);
                            return false;
                        }
                    };
                    // An entry left by an older version whose key has since changed.
                    if keys.changed(&keys.key_of(&values), &key) {
                        return true;
                    }
                    found = Ok(Some(Conflict::Found {
                        row: RowRef { root, version: tid },
                        values,
                        this_command: mine && h.cmin == cid,
                        visible: txns.sees(&snap, h.xmin, h.cmin),
                    }));
                    false
                })?;
                if let Some(c) = found? {
                    return Ok(c);
                }
            }
        }
        Ok(Conflict::None)
    }

    /// Step 3: inserts `row` with its arbiter entries first. `Done(None)` when an arbiter
    /// index already held the key: the row was taken back, probe again.
    pub fn insert_speculative(
        &self,
        txn: &Transaction,
        table: &TableDef,
        row: &[Datum],
        state: &mut WriteState,
        arbiters: &[Arc<IndexDef>],
    ) -> PgResult<Write<Option<RowRef>>> {
        let r = self
            .inner
            .insert_arbitrated(txn, table, row, state, arbiters);
        txn.after_write(&r);
        r
    }
}

fn wait(xid: u64, file: u32, root: Tid) -> Conflict {
    Conflict::Wait(RowWait {
        xid: Xid(xid),
        tuple: Some((file, root)),
        visible: false,
    })
}

impl Heap<'_> {
    /// Takes back a version this transaction just inserted: its xmin becomes
    /// `Xid::ABORTED`, so every snapshot and every unique check sees it dead at once (and
    /// pruning frees it), whatever becomes of the transaction. WAL-logged with its page.
    pub(crate) fn super_delete(&self, tid: Tid, xid: u64) -> PgResult<()> {
        let mut page = self.pool.write(&self.rel.file, tid.block)?;
        page.write_in_item(tid.slot, XMIN, &Xid::ABORTED.0.to_le_bytes());
        self.rel.page_changed(tid.block);
        self.pool.wal.log_pages(xid, &mut [&mut page]);
        Ok(())
    }
}
