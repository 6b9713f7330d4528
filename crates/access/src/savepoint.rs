//! Subtransactions: SAVEPOINT, RELEASE SAVEPOINT and ROLLBACK TO SAVEPOINT.
//!
//! A transaction keeps a stack of open levels. A write is made with the innermost level's xid,
//! assigned at its first write as a child of the top-level xid (assigned first). The commit
//! log records the child's parent (`CommitLog::set_parent`, PostgreSQL's pg_subtrans): until
//! it is rolled back, a child's versions are the transaction's own to it and share the
//! top-level transaction's fate for everyone else.
//!
//! `TxnState::subxids` lists every child xid not rolled back, in assignment order. A level
//! remembers how long that list (and the lists of files to remove) was when it began, so the
//! xids and files from that mark on are exactly its own and those of the levels it released:
//! - **Release** pops levels; their xids stay in the list and commit with the transaction
//!   (the commit record lists them, and recovery marks them committed with it).
//! - **Rollback to** marks the level's xids aborted (their versions die, the row locks they
//!   hold are free, waiters wake), removes the relation files made since, forgets drops and
//!   sequence restarts queued since, restores the catalog the level began with, and leaves
//!   the level open with no xid. A crash never needs to know: a child xid no commit record
//!   lists is aborted after recovery.
//!
//! Relation locks taken inside a rolled-back level are kept until the transaction ends
//! (PostgreSQL releases them): holding a lock longer never admits a wrong result.

use crate::api::{Engine, Transaction};
use keel_catalog::Catalog;
use std::sync::Arc;

pub(crate) struct SubLevel {
    /// Its xid, assigned at its first write.
    pub(crate) xid: Option<u64>,
    subxids_mark: usize,
    created_mark: usize,
    drops_mark: usize,
    restarts_mark: usize,
    /// The transaction's DDL as it stood when the level began.
    catalog: Option<Arc<Catalog>>,
}

impl Engine {
    /// Opens a subtransaction level (SAVEPOINT); returns the new depth.
    pub fn savepoint(&self, txn: &Transaction) -> usize {
        let mut m = txn.inner.m.lock();
        let level = SubLevel {
            xid: None,
            subxids_mark: m.subxids.len(),
            created_mark: m.created.len(),
            drops_mark: m.drop_at_commit.len(),
            restarts_mark: m.restart_at_commit.len(),
            catalog: txn.pending_catalog.clone(),
        };
        m.subs.push(level);
        m.subs.len()
    }

    /// Open subtransaction levels.
    pub fn savepoint_depth(&self, txn: &Transaction) -> usize {
        txn.inner.m.lock().subs.len()
    }

    /// RELEASE: level `depth` (1 = outermost) and those inside it end; their work becomes
    /// the enclosing level's.
    pub fn release_savepoint(&self, txn: &Transaction, depth: usize) {
        txn.inner.m.lock().subs.truncate(depth.saturating_sub(1));
    }

    /// ROLLBACK TO: undoes the work of level `depth` (1 = outermost) and of the levels inside
    /// it, which end; level `depth` stays open, as new. The transaction's DDL goes back to
    /// what it was when the level began.
    pub fn rollback_to_savepoint(&self, txn: &mut Transaction, depth: usize) {
        if let Some(catalog) = self.undo_to_savepoint(txn, depth) {
            txn.pending_catalog = catalog;
        }
    }

    /// ROLLBACK TO without touching the transaction's DDL, which the caller owns: for work
    /// that cannot change it (a function body run from inside a query). Returns the DDL
    /// state the level began with (None: no such level).
    pub fn undo_to_savepoint(
        &self,
        txn: &Transaction,
        depth: usize,
    ) -> Option<Option<Arc<Catalog>>> {
        let i = depth.checked_sub(1)?;
        let st = &txn.inner;
        let mut m = st.m.lock();
        let m = &mut *m;
        let level = m.subs.get(i)?;
        let (sx, cr, dr, rs) = (
            level.subxids_mark,
            level.created_mark,
            level.drops_mark,
            level.restarts_mark,
        );
        let catalog = level.catalog.clone();
        st.release_tuple_lock();
        *st.newest_hint.lock() = None;
        for x in m.subxids.drain(sx..) {
            self.inner.txns.mark_sub_aborted(x);
        }
        for id in m.created.drain(cr..) {
            self.inner.forget_rel(id);
            let _ = self.inner.smgr.remove(id);
        }
        m.drop_at_commit.truncate(dr);
        m.restart_at_commit.truncate(rs);
        m.subs.truncate(depth);
        if let Some(level) = m.subs.last_mut() {
            level.xid = None;
        }
        Some(catalog)
    }
}
