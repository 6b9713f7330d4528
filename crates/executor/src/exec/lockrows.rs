//! LockRows: SELECT ... FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE over one table.
//!
//! Each input row (the table's columns, then its root and version tids and its table's oid
//! from the scan: a partition's, when the table is partitioned) is locked before it is
//! passed on without them. When another transaction holds the row: SKIP LOCKED passes over
//! it, NOWAIT fails with 55P03, and otherwise the node suspends: `next` fails with
//! [`row_wait_pending`] and keeps the row; the session takes the wait (`take_row_wait`,
//! forwarded by the projection and LIMIT above), awaits it without blocking its thread, and
//! pulls again, which retries the same row. A row a committed
//! transaction replaced meanwhile is re-read at its newest version: under READ COMMITTED it
//! is locked and passed on (with its new values) when it still satisfies the query's WHERE,
//! and skipped otherwise (PostgreSQL's EvalPlanQual); under REPEATABLE READ that is 40001.

use super::{BoxNode, Node, Row};
use crate::eval::{Eval, EvalCx};
use keel_access::{Engine, Isolation, RowRef, RowWait, Strength, Transaction, Write};
use keel_analyzer::expr::Expr;
use keel_analyzer::query::{LockStrength, LockWait};
use keel_catalog::TableDef;
use keel_common::{PgError, PgResult, Tid, sqlstate};
use keel_types::Datum;
use std::sync::Arc;

const WAIT_PENDING: &str = "a row lock must be awaited";

/// The error a LockRows node's `next` fails with to have its row lock awaited.
pub fn row_wait_pending() -> PgError {
    PgError::new(sqlstate::LOCK_NOT_AVAILABLE, WAIT_PENDING)
}

/// Whether `e` is [`row_wait_pending`].
pub fn is_row_wait(e: &PgError) -> bool {
    e.code == sqlstate::LOCK_NOT_AVAILABLE && e.message == WAIT_PENDING
}

/// Appends a row's identity (root, version) as two int8 values, then its table's oid.
pub fn push_row_ids(row: &mut Row, r: RowRef, table: u32) {
    row.push(Datum::Int8(r.root.to_u64() as i64));
    row.push(Datum::Int8(r.version.to_u64() as i64));
    row.push(Datum::Oid(table));
}

/// Takes back what [`push_row_ids`] appended: the row's identity and its table's oid.
pub fn pop_row_ids(row: &mut Row) -> PgResult<(RowRef, u32)> {
    let missing = || PgError::internal("a row arrived without its identity");
    let Some(Datum::Oid(table)) = row.pop() else {
        return Err(missing());
    };
    let mut tid = || match row.pop() {
        Some(Datum::Int8(v)) => Ok(Tid::from_u64(v as u64)),
        _ => Err(missing()),
    };
    let version = tid()?;
    let root = tid()?;
    Ok((RowRef { root, version }, table))
}

fn strength(s: LockStrength) -> Strength {
    match s {
        LockStrength::KeyShare => Strength::KeyShare,
        LockStrength::Share => Strength::Share,
        LockStrength::NoKeyUpdate => Strength::NoKeyUpdate,
        LockStrength::Update => Strength::Update,
    }
}

pub struct LockRows<'a> {
    input: BoxNode<'a>,
    engine: &'a Engine,
    txn: &'a Transaction,
    table: &'a TableDef,
    recheck: Option<&'a Expr>,
    strength: Strength,
    wait: LockWait,
    /// The row being locked and the partition it is in (None: `table` itself), kept across
    /// a suspension.
    cur: Option<(RowRef, Option<Arc<TableDef>>, Row)>,
    pending: Option<RowWait>,
}

impl<'a> LockRows<'a> {
    pub fn new(
        input: BoxNode<'a>,
        engine: &'a Engine,
        txn: &'a Transaction,
        table: &'a TableDef,
        recheck: Option<&'a Expr>,
        (s, wait): (LockStrength, LockWait),
    ) -> Self {
        LockRows {
            input,
            engine,
            txn,
            table,
            recheck,
            strength: strength(s),
            wait,
            cur: None,
            pending: None,
        }
    }

    /// The partition a row of a partitioned `table` came from (None: `table` itself).
    fn partition(&self, oid: u32) -> PgResult<Option<Arc<TableDef>>> {
        if oid == self.table.oid {
            return Ok(None);
        }
        match self.txn.catalog(self.engine).tables.get(&oid) {
            Some(t) => Ok(Some(t.clone())),
            None => Err(PgError::internal(format!(
                "a locked row's relation {oid} is gone"
            ))),
        }
    }

    fn concurrent_update() -> PgError {
        PgError::new(
            sqlstate::SERIALIZATION_FAILURE,
            "could not serialize access due to concurrent update",
        )
    }
}

impl<'a> Node<'a> for LockRows<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        let xid = self.engine.current_write_xid(self.txn).ok_or_else(|| {
            PgError::internal("a locking query runs without its transaction's xid")
        })?;
        let rr = self.txn.isolation != Isolation::ReadCommitted;
        loop {
            let (target, part, row) = match self.cur.take() {
                Some(c) => c,
                None => {
                    let Some(mut row) = self.input.next(ev)? else {
                        return Ok(None);
                    };
                    let (target, oid) = pop_row_ids(&mut row)?;
                    (target, self.partition(oid)?, row)
                }
            };
            ev.tick()?;
            let table = part.as_deref().unwrap_or(self.table);
            match self
                .engine
                .lock_row(self.txn, xid, table, target, self.strength)?
            {
                Write::Done(()) => return Ok(Some(row)),
                Write::Wait(w) => match self.wait {
                    LockWait::SkipLocked => continue,
                    LockWait::Nowait => {
                        return Err(PgError::new(
                            sqlstate::LOCK_NOT_AVAILABLE,
                            format!(
                                "could not obtain lock on row in relation \"{}\"",
                                table.name
                            ),
                        ));
                    }
                    LockWait::Block => {
                        self.cur = Some((target, part, row));
                        self.pending = Some(w);
                        return Err(row_wait_pending());
                    }
                },
                Write::Updated(_) | Write::Deleted if rr => {
                    self.txn.leave_row_queue();
                    return Err(Self::concurrent_update());
                }
                Write::Updated(_) => {
                    let newest = self.engine.fetch_newest(self.txn, table, target.root)?;
                    if let Some((nref, nrow)) = newest {
                        let still = match self.recheck {
                            Some(p) => p.test(&nrow, ev)?,
                            None => true,
                        };
                        if still {
                            self.cur = Some((nref, part, nrow));
                            continue;
                        }
                    }
                    self.txn.leave_row_queue();
                }
                Write::Deleted => self.txn.leave_row_queue(),
            }
        }
    }

    fn take_row_wait(&mut self) -> Option<RowWait> {
        self.pending.take()
    }
}
