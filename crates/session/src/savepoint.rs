//! SAVEPOINT, RELEASE SAVEPOINT and ROLLBACK TO SAVEPOINT (PostgreSQL's xact.c rules).
//!
//! The session keeps the names, innermost last, beside the engine's levels (same depth; a
//! name may repeat, the innermost one is meant). An error inside a block with savepoints
//! rolls the innermost level back at once (its row locks are free and its versions dead, as
//! PostgreSQL's AbortSubTransaction) and leaves the block failed: only ROLLBACK TO a
//! savepoint, ROLLBACK or COMMIT (which rolls back) run then. ROLLBACK TO undoes the named
//! level and everything inside it, settings changed since included, and the block goes on.

use crate::session::{Block, Session};
use keel_common::{PgError, PgResult, Settings, sqlstate};
use keel_sql::utility::SavepointOp;
use keel_wire::Client;

pub(crate) struct SavepointEntry {
    name: String,
    /// Settings when it was made: ROLLBACK TO restores them.
    settings: Settings,
    guc_session: Option<Settings>,
    /// The transaction's READ ONLY mode when it was made: ROLLBACK TO and RELEASE restore it.
    read_only: bool,
}

impl Session {
    pub(crate) fn savepoint_stmt<C: Client>(
        &mut self,
        op: SavepointOp,
        name: &str,
        client: &mut C,
    ) -> PgResult<String> {
        if self.block == Block::Idle {
            return Err(PgError::new(
                sqlstate::NO_ACTIVE_SQL_TRANSACTION,
                format!("{} can only be used in transaction blocks", op.statement()),
            ));
        }
        match op {
            SavepointOp::Savepoint => {
                let engine = self.engine.clone();
                let txn = self.ensure_txn();
                let read_only = txn.read_only;
                engine.savepoint(txn);
                let entry = SavepointEntry {
                    name: name.to_string(),
                    settings: self.settings.clone(),
                    guc_session: self.guc_session.clone(),
                    read_only,
                };
                self.savepoints.push(entry);
                Ok("SAVEPOINT".into())
            }
            SavepointOp::Release => {
                let depth = self.savepoint_named(name)?;
                if let Some(txn) = self.txn.as_mut() {
                    self.engine.release_savepoint(txn, depth);
                    self.funcs.cursors.release(depth);
                    // As PostgreSQL's CommitSubTransaction: the mode before the savepoint.
                    txn.read_only = self.savepoints[depth - 1].read_only;
                }
                self.savepoints.truncate(depth - 1);
                Ok("RELEASE".into())
            }
            SavepointOp::RollbackTo => {
                let depth = self.savepoint_named(name)?;
                let Some(txn) = self.txn.as_mut() else {
                    return Err(missing(name));
                };
                self.engine.rollback_to_savepoint(txn, depth);
                self.funcs.cursors.rollback_to(depth);
                self.savepoints.truncate(depth);
                if let Some(sp) = self.savepoints.last() {
                    txn.read_only = sp.read_only;
                }
                let before = self.settings.clone();
                if let Some(sp) = self.savepoints.last() {
                    self.settings = sp.settings.clone();
                    self.guc_session = sp.guc_session.clone();
                }
                self.report_changed(&Some(before), client);
                self.block = Block::Open;
                Ok("ROLLBACK".into())
            }
        }
    }

    /// Depth (1 = outermost) of the innermost savepoint called `name`.
    fn savepoint_named(&self, name: &str) -> PgResult<usize> {
        self.savepoints
            .iter()
            .rposition(|s| s.name == name)
            .map(|i| i + 1)
            .ok_or_else(|| missing(name))
    }

    /// After an error inside a block: with a savepoint open, the innermost level is rolled
    /// back now and the transaction lives on (true); without one the transaction is done.
    pub(crate) fn abort_innermost_savepoint(&mut self) -> bool {
        let depth = self.savepoints.len();
        match self.txn.as_mut() {
            Some(txn) if depth > 0 && self.engine.savepoint_depth(txn) == depth => {
                self.engine.rollback_to_savepoint(txn, depth);
                self.funcs.cursors.rollback_to(depth);
                true
            }
            _ => false,
        }
    }
}

fn missing(name: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_SAVEPOINT_SPECIFICATION,
        format!("savepoint \"{name}\" does not exist"),
    )
}
