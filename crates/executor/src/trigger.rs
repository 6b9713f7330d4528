//! Triggers as the write node fires them: the events of a table's triggers, and the handler a
//! procedural language registers to run a trigger function (as PostgreSQL calls a
//! pg_language's handler with TriggerData).

use crate::eval::EvalCx;
use crate::exec::rowstore::RowStore;
use keel_catalog::{TableDef, TriggerDef, TriggerTiming};
use keel_common::{PgError, PgResult};
use keel_types::Datum;
use std::sync::Arc;

/// The operation that fires a trigger (TG_OP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerOp {
    Insert,
    Update,
    Delete,
    Truncate,
}

impl TriggerOp {
    pub fn name(self) -> &'static str {
        match self {
            TriggerOp::Insert => "INSERT",
            TriggerOp::Update => "UPDATE",
            TriggerOp::Delete => "DELETE",
            TriggerOp::Truncate => "TRUNCATE",
        }
    }
}

/// One firing of a trigger: for a row trigger its OLD and NEW rows (as the operation has
/// them), for a statement trigger neither; and the transition tables its REFERENCING clause
/// names.
pub struct TriggerFiring<'a> {
    pub trigger: &'a TriggerDef,
    pub table: &'a TableDef,
    pub op: TriggerOp,
    pub old: Option<&'a [Datum]>,
    pub new: Option<&'a [Datum]>,
    pub transition: &'a [TransitionTable],
}

/// A transition table as the statements of a trigger function read it (PostgreSQL's
/// ephemeral named relation): the rows the firing statement wrote (OLD TABLE: the rows it
/// replaced or deleted; NEW TABLE: the rows it inserted or updated to, as written), under
/// the name REFERENCING gave them, with the columns of the trigger's table.
#[derive(Clone)]
pub struct TransitionTable {
    pub name: String,
    pub table: Arc<TableDef>,
    pub rows: Arc<RowStore>,
}

/// Runs a trigger function. For a BEFORE ROW trigger the answer is the row to write instead
/// of NEW (OLD for DELETE), or None to skip the row; other triggers' answers are ignored. A
/// WHEN condition that does not hold answers the row unchanged without calling the function.
pub type TriggerHandler = fn(&TriggerFiring<'_>, &mut EvalCx<'_>) -> PgResult<Option<Vec<Datum>>>;

static TRIGGER_HANDLER: std::sync::OnceLock<TriggerHandler> = std::sync::OnceLock::new();

/// Installs the trigger handler (once; later calls change nothing).
pub fn set_trigger_handler(h: TriggerHandler) {
    let _ = TRIGGER_HANDLER.set(h);
}

thread_local! {
    /// How many trigger functions are running on this thread, one inside another: a trigger
    /// and the statements it runs execute synchronously on the thread that fired it.
    static DEPTH: std::cell::Cell<i32> = const { std::cell::Cell::new(0) };
}

/// pg_trigger_depth(): the triggers running around the current evaluation (0 outside any).
pub fn depth() -> i32 {
    DEPTH.with(|d| d.get())
}

pub(crate) fn fire(f: &TriggerFiring<'_>, cx: &mut EvalCx<'_>) -> PgResult<Option<Vec<Datum>>> {
    let h = TRIGGER_HANDLER
        .get()
        .ok_or_else(|| PgError::unsupported("triggers in this context"))?;
    // Counted down on the way out, also when a caught panic unwinds through here.
    struct Level;
    impl Drop for Level {
        fn drop(&mut self) {
            DEPTH.with(|d| d.set(d.get() - 1));
        }
    }
    DEPTH.with(|d| d.set(d.get() + 1));
    let _level = Level;
    h(f, cx)
}

/// Fires `table`'s TRUNCATE triggers of `timing` (statement-level, in name order): BEFORE
/// ones before any of the statement's tables is emptied, AFTER ones once all are.
pub fn fire_truncate(
    table: &TableDef,
    timing: TriggerTiming,
    txn: &keel_access::Transaction,
    ev: &mut EvalCx<'_>,
) -> PgResult<()> {
    let replica = replica(ev);
    for t in &table.triggers {
        if !fires(t, TriggerOp::Truncate, timing, false, &[], replica) {
            continue;
        }
        let f = TriggerFiring {
            trigger: t,
            table,
            op: TriggerOp::Truncate,
            old: None,
            new: None,
            transition: &[],
        };
        fire_nested(&f, txn, ev)?;
    }
    Ok(())
}

/// Runs one firing in a context nested in `ev`'s (in `txn`), whose transition tables are
/// the firing's own: a trigger fired from another's function does not see the other's.
pub(crate) fn fire_nested(
    f: &TriggerFiring<'_>,
    txn: &keel_access::Transaction,
    ev: &mut EvalCx<'_>,
) -> PgResult<Option<Vec<Datum>>> {
    let mut inner = ev.nested(Some(txn), &[]);
    inner.transition = f.transition;
    let r = fire(f, &mut inner);
    let carried = inner.carried();
    ev.restore(carried);
    r
}

/// Whether the session runs as a replica (`session_replication_role = replica`): triggers
/// set to fire on origin, foreign key checks among them, do not fire, as in PostgreSQL.
pub(crate) fn replica(ev: &EvalCx<'_>) -> bool {
    ev.settings.replica()
}

/// Whether `t` fires for `op` at `timing` and level (`row`), given the columns an UPDATE
/// sets (`UPDATE OF` fires when one of its columns is a target).
/// `replica`: the session's `session_replication_role` is `replica`.
pub(crate) fn fires(
    t: &TriggerDef,
    op: TriggerOp,
    timing: TriggerTiming,
    row: bool,
    set_columns: &[usize],
    replica: bool,
) -> bool {
    t.enabled
        && t.fires_on.fires(replica)
        && t.timing == timing
        && t.row == row
        && match op {
            TriggerOp::Insert => t.on_insert,
            TriggerOp::Delete => t.on_delete,
            TriggerOp::Truncate => t.on_truncate,
            TriggerOp::Update => {
                t.on_update
                    && (t.update_columns.is_empty()
                        || t.update_columns.iter().any(|c| set_columns.contains(c)))
            }
        }
}
