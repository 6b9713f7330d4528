//! ModifyTable: INSERT / UPDATE / DELETE.
//!
//! Suspend/resume contract: `step` returns `Step::Wait(w)` when the engine reports another
//! transaction holds the row. Everything needed to continue — the input rows, the position,
//! the computed new row and the engine's `WriteState` — stays in this struct; the session
//! awaits `Engine::wait` and calls `step` again, which repeats the very same engine call.

use super::mem::MemCharge;
use super::scan::Scan;
use super::tuplestore::{Item, Tuplestore};
use super::{Row, build};
use crate::eval::{Eval, EvalCx, check_violation, not_null_violation, row_text};
use keel_access::{Engine, Isolation, KeyRange, RowRef, RowWait, Transaction, Write, WriteState};
use keel_catalog::{FkAction, TableDef};
use keel_common::{PgError, PgResult, sqlstate};
use keel_planner::plan::{ModifyKind, ModifyPlan};
use keel_types::Datum;
use std::ops::Bound;
use std::sync::Arc;

pub enum Step {
    Done,
    Wait(RowWait),
}

pub struct ModifyExec {
    collected: bool,
    /// INSERT: full new rows. UPDATE/DELETE: the target version and its old values. In
    /// memory up to work_mem, then in a temporary file.
    work: Tuplestore,
    /// The item being written (kept across waits).
    cur: Option<Item>,
    /// Items taken from `work` (for the cancel check's rhythm).
    pos: usize,
    /// UPDATE: the new row computed for `cur` (kept across waits).
    new_row: Option<Row>,
    state: WriteState,
    pub count: u64,
    pub returned: Vec<Row>,
    /// EXPLAIN ANALYZE: counters for the write (node 0) and its source (nodes from 1).
    pub instrument: Option<std::sync::Arc<super::instrument::Instrumentation>>,
    /// RETURNING rows, held until the statement's result is sent.
    returned_mem: MemCharge,
    /// Where the statement's triggers stand (modify_triggers.rs).
    triggers: TriggerState,
    /// Keys of the table itself that written rows reference and that were not found when
    /// written: (foreign key, key), checked again once every row is written
    /// (modify_refs.rs).
    deferred_fks: Vec<(usize, Vec<Datum>)>,
    /// ON CONFLICT DO UPDATE's update of the conflicting row, kept across waits.
    upsert: Option<upsert::PendingUpdate>,
    /// UPDATE / DELETE of a partitioned table: the partition `cur` is in.
    part: Option<Arc<TableDef>>,
    /// UPDATE moving `cur` to another partition: its old version is deleted, the insert of
    /// the new one remains (kept across waits).
    moved: bool,
}

/// The write node's trigger bookkeeping (see modify_triggers.rs).
#[derive(Default)]
struct TriggerState {
    statement_started: bool,
    statement_done: bool,
    /// The table has BEFORE ROW / AFTER ROW triggers for this statement's operation.
    before_row: bool,
    after_row: bool,
    /// INSERT ... ON CONFLICT DO UPDATE, and whether the table has BEFORE / AFTER UPDATE
    /// ROW triggers for its update.
    upsert: bool,
    before_update_row: bool,
    after_update_row: bool,
    /// BEFORE ROW triggers ran for the current row (INSERT, DELETE): a write that waited
    /// and resumes does not fire them again.
    fired: bool,
    /// UPDATE: the new row as BEFORE ROW triggers left it, kept across a constraint check's
    /// wait.
    pending_new: Option<Row>,
    /// AFTER ROW events (OLD, NEW), run once every row is written.
    queued: Vec<(Option<Row>, Option<Row>)>,
    /// The rows written so far for the transition tables, when a trigger names them.
    old_rows: Option<super::rowstore::RowStore>,
    new_rows: Option<super::rowstore::RowStore>,
}

impl Default for ModifyExec {
    fn default() -> Self {
        ModifyExec {
            collected: false,
            work: Tuplestore::default(),
            cur: None,
            pos: 0,
            new_row: None,
            state: WriteState::default(),
            count: 0,
            returned: Vec::new(),
            instrument: None,
            returned_mem: MemCharge::new("The rows of RETURNING"),
            triggers: TriggerState::default(),
            deferred_fks: Vec::new(),
            upsert: None,
            part: None,
            moved: false,
        }
    }
}

/// Unique violations from the engine name the table and the constraint (PostgreSQL's `t`/`n`
/// fields); the engine reports the constraint only in the message, so it is taken from there.
/// `table` is the relation written: a partition when the statement names its parent.
fn name_objects_in<T>(r: PgResult<T>, table: &keel_catalog::TableDef) -> PgResult<T> {
    r.map_err(|e| name_objects(e, table))
}

fn name_objects(e: PgError, table: &keel_catalog::TableDef) -> PgError {
    if e.code != sqlstate::UNIQUE_VIOLATION || e.objects.is_some() {
        return e;
    }
    let constraint = e.message.split('"').nth(1).map(str::to_string);
    let e = e.with_table(table.name.clone());
    match constraint {
        Some(c) => e.with_constraint(c),
        None => e,
    }
}

fn serialization_failure() -> PgError {
    PgError::new(
        sqlstate::SERIALIZATION_FAILURE,
        "could not serialize access due to concurrent update",
    )
}

impl ModifyExec {
    pub fn new() -> ModifyExec {
        ModifyExec::default()
    }

    /// Feeds ready-made full rows (COPY FROM); skips the plan's source.
    pub fn with_rows(rows: Vec<Row>) -> ModifyExec {
        ModifyExec {
            collected: true,
            work: Tuplestore::from_rows(rows),
            ..ModifyExec::default()
        }
    }

    /// Rows still to write (COPY batches are never "cheap").
    pub fn pending(&self) -> usize {
        if self.collected {
            self.work.len() + usize::from(self.cur.is_some())
        } else {
            0
        }
    }

    fn collect(
        &mut self,
        plan: &ModifyPlan,
        engine: &Engine,
        txn: &Transaction,
        ev: &mut EvalCx<'_>,
    ) -> PgResult<()> {
        let mut inner = ev.nested(Some(txn), &[]);
        let r = self.collect_inner(plan, engine, txn, &mut inner);
        let carried = inner.carried();
        ev.restore(carried);
        r
    }

    fn collect_inner(
        &mut self,
        plan: &ModifyPlan,
        engine: &Engine,
        txn: &Transaction,
        ev: &mut EvalCx<'_>,
    ) -> PgResult<()> {
        self.work = Tuplestore::new(ev.settings.work_mem_bytes());
        let dir = || engine.temp_dir();
        let view_rows = plan.instead_of.as_ref().and_then(|i| i.rows.as_ref());
        match (&plan.kind, view_rows) {
            (ModifyKind::Insert { source, row }, _) => {
                self.collect_source(source, Some(row), engine, txn, ev)?
            }
            // A view's UPDATE / DELETE: the view's rows its WHERE keeps, all read before any
            // trigger runs, as a table's targets are.
            (_, Some(rows)) => self.collect_source(rows, None, engine, txn, ev)?,
            // A partitioned table's: from its partitions' scans, each row with its identity
            // and its partition's oid (kept after the row's columns).
            (ModifyKind::Update { .. } | ModifyKind::Delete { .. }, None)
                if plan.targets.is_some() =>
            {
                let Some(targets) = plan.targets.as_deref() else {
                    return Err(PgError::internal("a partitioned write without its scans"));
                };
                let mut src = match &self.instrument {
                    Some(ins) => {
                        ins.take_id();
                        super::build_instrumented(targets, engine, txn, ins)?
                    }
                    None => build(targets, engine, txn)?,
                };
                while let Some(mut r) = src.next(ev)? {
                    ev.tick()?;
                    let (rref, oid) = super::lockrows::pop_row_ids(&mut r)?;
                    r.push(Datum::Oid(oid));
                    self.work.push(ev, (Some(rref), r), dir)?;
                }
            }
            (
                ModifyKind::Update { access, filter, .. } | ModifyKind::Delete { access, filter },
                None,
            ) => {
                // Instrumented, the filter is tested here so the rows it removes are counted.
                let ins = self.instrument.clone();
                let scan_filter = if ins.is_some() { None } else { filter.as_ref() };
                let mut scan = Scan::new(engine, txn, &plan.table, access, scan_filter);
                let (mut seen, mut kept) = (0u64, 0u64);
                let started = std::time::Instant::now();
                // The scan runs on this thread from here to its end (EXPLAIN's Buffers).
                let pages = keel_storage::usage::current();
                let mut first = None;
                while let Some((rref, r)) = scan.next_ref(ev)? {
                    if ins.is_some() {
                        seen += 1;
                        if let Some(f) = filter
                            && !crate::eval::Eval::test(f, &r, ev)?
                        {
                            continue;
                        }
                        kept += 1;
                        first.get_or_insert_with(|| started.elapsed());
                    }
                    self.work.push(ev, (Some(rref), r), dir)?;
                }
                if let Some(ins) = &ins {
                    // Node 0 is the write itself, node 1 its scan.
                    ins.add_input_rows(1, seen);
                    ins.add_rows(1, kept);
                    let total = started.elapsed();
                    ins.set_time(1, first.unwrap_or(total), total);
                    ins.add_buffers(1, keel_storage::usage::current() - pages);
                }
            }
        }
        self.collected = true;
        Ok(())
    }

    /// The rows of `source` (with `row`, the full rows it builds from each) into `work`.
    /// Under EXPLAIN ANALYZE node 0 is the write, the source's nodes follow.
    fn collect_source(
        &mut self,
        source: &keel_planner::plan::Plan,
        row: Option<&[keel_analyzer::expr::Expr]>,
        engine: &Engine,
        txn: &Transaction,
        ev: &mut EvalCx<'_>,
    ) -> PgResult<()> {
        let mut src = match &self.instrument {
            Some(ins) => {
                ins.take_id();
                super::build_instrumented(source, engine, txn, ins)?
            }
            None => build(source, engine, txn)?,
        };
        while let Some(r) = src.next(ev)? {
            ev.tick()?;
            let full = match row {
                Some(row) => {
                    let mut full = Vec::with_capacity(row.len());
                    for e in row {
                        full.push(e.eval(&r, ev)?);
                    }
                    full
                }
                None => r,
            };
            self.work.push(ev, (None, full), || engine.temp_dir())?;
        }
        Ok(())
    }

    /// NOT NULL, CHECK and foreign keys of a row about to be written. Each referenced row
    /// found is locked FOR KEY SHARE (it cannot be deleted, nor its key changed, until this
    /// transaction ends); `Some(wait)` when another transaction holds it in a conflicting
    /// mode (call again after the wait).
    fn check_row(
        plan: &ModifyPlan,
        row: &[Datum],
        engine: &Engine,
        txn: &Transaction,
        ev: &mut EvalCx<'_>,
        deferred: &mut Vec<(usize, Vec<Datum>)>,
    ) -> PgResult<Option<RowWait>> {
        for (i, c) in plan.table.columns.iter().enumerate() {
            if c.not_null && row[i].is_null() {
                return Err(not_null_violation(
                    &c.name,
                    &plan.table.name,
                    row,
                    &plan.types,
                ));
            }
        }
        for (name, e) in &plan.checks {
            // NULL satisfies a CHECK constraint; only false violates it.
            if let Datum::Bool(false) = e.eval(row, ev)? {
                return Err(check_violation(&plan.table.name, name, row, &plan.types));
            }
        }
        if let Some(pc) = &plan.partition_check {
            route::check_partition(pc, &plan.table.name, row, &plan.types)?;
        }
        Self::check_fks(plan, row, engine, txn, ev, deferred)
    }

    /// Rows of other tables must not reference a deleted key, or a key an UPDATE changes.
    fn check_refs(
        plan: &ModifyPlan,
        old: &[Datum],
        new: Option<&[Datum]>,
        engine: &Engine,
        txn: &Transaction,
        ev: &mut EvalCx<'_>,
    ) -> PgResult<()> {
        if crate::trigger::replica(ev) {
            return Ok(());
        }
        for r in &plan.refs {
            // Unchanged keys (every pgbench UPDATE) cost one comparison per column.
            if let Some(new) = new
                && r.columns
                    .iter()
                    .all(|&c| keel_types::ops::compare(&old[c], &new[c]).is_eq())
            {
                continue;
            }
            if r.columns.iter().any(|&c| old[c].is_null()) {
                continue;
            }
            let vals: Vec<Datum> = r.columns.iter().map(|&c| old[c].clone()).collect();
            let action = if new.is_some() {
                r.on_update
            } else {
                r.on_delete
            };
            if !matches!(action, FkAction::NoAction | FkAction::Restrict) {
                Self::referential_action(plan, r, action, &vals, new, engine, txn, ev)?;
                continue;
            }
            let matches = |row: &[Datum]| {
                r.child_columns.iter().zip(&vals).all(|(&c, v)| {
                    !row[c].is_null() && keel_types::ops::compare(&row[c], v).is_eq()
                })
            };
            let mut found = false;
            match &r.child_index {
                Some(idx) => {
                    let range = KeyRange {
                        lower: Bound::Included(vals.clone()),
                        upper: Bound::Included(vals.clone()),
                    };
                    for item in engine.index_scan(txn, &r.child, idx, range) {
                        if matches(&item?.1) {
                            found = true;
                            break;
                        }
                    }
                }
                None => {
                    for item in engine.scan(txn, &r.child) {
                        ev.tick()?;
                        if matches(&item?.1) {
                            found = true;
                            break;
                        }
                    }
                }
            }
            if found {
                let names: Vec<&str> = r
                    .columns
                    .iter()
                    .map(|&c| plan.table.columns[c].name.as_str())
                    .collect();
                let tys: Vec<_> = r.columns.iter().map(|&c| plan.types[c]).collect();
                return Err(PgError::new(
                    sqlstate::FOREIGN_KEY_VIOLATION,
                    format!(
                        "update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
                        plan.table.name, r.name, r.child.name
                    ),
                )
                .with_detail(format!(
                    "Key ({})=({}) is still referenced from table \"{}\".",
                    names.join(", "),
                    row_text(&vals, &tys),
                    r.child.name
                ))
                .with_table(r.child.name.clone())
                .with_constraint(r.name.clone()));
            }
        }
        Ok(())
    }

    fn emit(&mut self, plan: &ModifyPlan, row: &[Datum], ev: &mut EvalCx<'_>) -> PgResult<()> {
        self.count += 1;
        if let Some((exprs, _)) = &plan.returning {
            let mut out = Vec::with_capacity(exprs.len());
            for e in exprs {
                out.push(e.eval(row, ev)?);
            }
            self.returned_mem.add(
                ev,
                keel_types::datum::row_heap_bytes(&out) + std::mem::size_of::<Row>(),
            )?;
            self.returned.push(out);
        }
        Ok(())
    }

    /// READ COMMITTED after a concurrent update (PostgreSQL's EvalPlanQual): re-check the
    /// newest version of the row against the WHERE and retarget the write at it, or skip it.
    fn recheck_newest(
        &mut self,
        engine: &Engine,
        txn: &Transaction,
        table: &TableDef,
        target: RowRef,
        filter: Option<&keel_analyzer::expr::Expr>,
        ev: &mut EvalCx<'_>,
    ) -> PgResult<()> {
        let Some((newest, row)) = engine.fetch_newest(txn, table, target.root)? else {
            self.advance();
            return Ok(());
        };
        let still = match filter {
            Some(f) => f.test(&row, ev)?,
            None => true,
        };
        if still {
            self.cur = Some((Some(newest), row));
            self.new_row = None;
            self.state = WriteState::default();
        } else {
            self.advance();
        }
        Ok(())
    }

    fn advance(&mut self) {
        self.upsert = None;
        self.part = None;
        self.moved = false;
        self.pos += 1;
        self.cur = None;
        self.new_row = None;
        self.state = WriteState::default();
        self.triggers.fired = false;
        self.triggers.pending_new = None;
    }

    /// Runs until done or until a row lock must be awaited.
    pub fn step(
        &mut self,
        plan: &ModifyPlan,
        engine: &Engine,
        txn: &Transaction,
        ev: &mut EvalCx<'_>,
    ) -> PgResult<Step> {
        ev.subplans = plan.subplans.clone();
        self.before_statement(plan, txn, ev)?;
        if plan.instead_of.is_some() {
            return self.step_instead_of(plan, engine, txn, ev);
        }
        if !self.collected {
            self.collect(plan, engine, txn, ev)?;
        }
        let rc = txn.isolation == Isolation::ReadCommitted;
        loop {
            ev.tick()?;
            if self.cur.is_none() {
                match self.work.pop()? {
                    Some(mut item) => {
                        if plan.targets.is_some() {
                            self.part = Some(Self::partition_of_row(&mut item.1, engine, txn)?);
                        }
                        self.cur = Some(item);
                    }
                    None => break,
                }
            }
            if self.triggers.before_row
                && !self.triggers.fired
                && !matches!(plan.kind, ModifyKind::Update { .. })
            {
                self.triggers.fired = true;
                let Some((_, row)) = self.cur.as_mut() else {
                    break;
                };
                let kept = match plan.kind {
                    ModifyKind::Delete { .. } => {
                        triggers::run_before_row(plan, Some(row), None, txn, ev)?
                    }
                    _ => triggers::run_before_row(plan, None, Some(std::mem::take(row)), txn, ev)?,
                };
                match kept {
                    None => {
                        self.advance();
                        continue;
                    }
                    Some(r) if !matches!(plan.kind, ModifyKind::Delete { .. }) => *row = r,
                    Some(_) => {}
                }
            }
            let Some((target, row)) = &self.cur else {
                break;
            };
            let target = *target;
            match &plan.kind {
                ModifyKind::Insert { .. } => {
                    if self.state_is_fresh() && self.upsert.is_none() {
                        if !plan.fks.is_empty() {
                            engine.row_lock_xid(txn)?;
                        }
                        if let Some(w) =
                            Self::check_row(plan, row, engine, txn, ev, &mut self.deferred_fks)?
                        {
                            return Ok(Step::Wait(w));
                        }
                    }
                    // The partition the row goes to, or the table itself.
                    let (table, arbiters) = match (&plan.routing, &plan.on_conflict) {
                        (Some(r), _) => {
                            let (table, arbiters, own) = route::route(r, row)?;
                            route::check_own(own, table, row, &plan.types, ev)?;
                            (table, arbiters)
                        }
                        (None, Some(oc)) => (&plan.table, oc.arbiters.as_slice()),
                        (None, None) => (&plan.table, &[][..]),
                    };
                    if let Some(oc) = &plan.on_conflict {
                        let target = (table, arbiters);
                        if let Some(w) = self.upsert_row(plan, oc, target, engine, txn, ev)? {
                            return Ok(Step::Wait(w));
                        }
                        continue;
                    }
                    match engine
                        .insert(txn, table, row, &mut self.state)
                        .map_err(|e| name_objects(e, table))?
                    {
                        Write::Done(_) => {
                            let row = self.cur.take().map(|c| c.1).unwrap_or_default();
                            self.queue_after_row(None, Some(&row))?;
                            self.emit(plan, &row, ev)?;
                            self.advance();
                        }
                        Write::Wait(w) => return Ok(Step::Wait(w)),
                        Write::Updated(_) | Write::Deleted => {
                            return Err(PgError::internal("insert reported a concurrent update"));
                        }
                    }
                }
                ModifyKind::Update { set, filter, .. } => {
                    let (Some(target), old) = (target, row) else {
                        return Err(PgError::internal("update target without row identity"));
                    };
                    if self.new_row.is_none() {
                        if !plan.fks.is_empty() {
                            engine.row_lock_xid(txn)?;
                        }
                        let shared: &Transaction = txn;
                        let new = match self.triggers.pending_new.take() {
                            Some(n) => n,
                            None => {
                                let new = Self::updated(old, set, shared, ev)?;
                                if self.triggers.before_row {
                                    match triggers::run_before_row(
                                        plan,
                                        Some(old),
                                        Some(new),
                                        txn,
                                        ev,
                                    )? {
                                        Some(n) => n,
                                        None => {
                                            self.advance();
                                            continue;
                                        }
                                    }
                                } else {
                                    new
                                }
                            }
                        };
                        if let Some(w) =
                            Self::check_row(plan, &new, engine, shared, ev, &mut self.deferred_fks)?
                        {
                            self.triggers.pending_new = Some(new);
                            return Ok(Step::Wait(w));
                        }
                        self.new_row = Some(new);
                    }
                    let new = self.new_row.as_deref().unwrap_or_default();
                    let part = self.part.clone();
                    let table = part.as_deref().unwrap_or(&plan.table);
                    // Through a partitioned table, a new row whose key now routes elsewhere
                    // moves: deleted here, inserted there (PostgreSQL's cross-partition
                    // update).
                    let dest = match &plan.routing {
                        Some(r) if part.is_some() => {
                            let (dest, _, own) = route::route(r, new)?;
                            route::check_own(own, dest, new, &plan.types, ev)?;
                            Some(dest)
                        }
                        _ => None,
                    }
                    .filter(|d| d.oid != table.oid);
                    let written = match dest {
                        Some(dest) => {
                            if !self.moved {
                                match engine.delete(txn, table, target)? {
                                    Write::Done(()) => self.moved = true,
                                    Write::Wait(w) => return Ok(Step::Wait(w)),
                                    Write::Updated(_) | Write::Deleted if !rc => {
                                        return Err(serialization_failure());
                                    }
                                    Write::Deleted => {
                                        self.advance();
                                        continue;
                                    }
                                    Write::Updated(_) => {
                                        let f = filter.as_ref();
                                        self.recheck_newest(engine, txn, table, target, f, ev)?;
                                        continue;
                                    }
                                }
                            }
                            match engine
                                .insert(txn, dest, new, &mut self.state)
                                .map_err(|e| name_objects(e, dest))?
                            {
                                Write::Done(_) => Write::Done(()),
                                Write::Wait(w) => Write::Wait(w),
                                Write::Updated(_) | Write::Deleted => {
                                    return Err(PgError::internal(
                                        "insert reported a concurrent update",
                                    ));
                                }
                            }
                        }
                        None => {
                            self.state.no_key = keys_kept(engine, txn, table, old, new);
                            match engine
                                .update(txn, table, target, new, &mut self.state)
                                .map_err(|e| name_objects(e, table))?
                            {
                                Write::Done(_) => Write::Done(()),
                                Write::Wait(w) => Write::Wait(w),
                                Write::Updated(t) => Write::Updated(t),
                                Write::Deleted => Write::Deleted,
                            }
                        }
                    };
                    match written {
                        Write::Done(()) => {
                            let new = self.new_row.take().unwrap_or_default();
                            let old = self.cur.take().map(|c| c.1).unwrap_or_default();
                            // After the write, as PostgreSQL's referential triggers run.
                            if !plan.refs.is_empty() {
                                engine.refresh_snapshot(txn);
                                Self::check_refs(plan, &old, Some(&new), engine, txn, ev)?;
                            }
                            self.queue_after_row(Some(&old), Some(&new))?;
                            self.emit(plan, &new, ev)?;
                            self.advance();
                        }
                        Write::Wait(w) => return Ok(Step::Wait(w)),
                        Write::Updated(_) | Write::Deleted if !rc => {
                            return Err(serialization_failure());
                        }
                        Write::Deleted => self.advance(),
                        Write::Updated(_) => {
                            let f = filter.as_ref();
                            self.recheck_newest(engine, txn, table, target, f, ev)?;
                        }
                    }
                }
                ModifyKind::Delete { filter, .. } => {
                    let Some(target) = target else {
                        return Err(PgError::internal("delete target without row identity"));
                    };
                    let part = self.part.clone();
                    let table = part.as_deref().unwrap_or(&plan.table);
                    match engine.delete(txn, table, target)? {
                        Write::Done(()) => {
                            let old = self.cur.take().map(|c| c.1).unwrap_or_default();
                            // After the write, as PostgreSQL's referential triggers run: a
                            // referencing row committed before it is seen, a later one
                            // waited for it.
                            if !plan.refs.is_empty() {
                                engine.refresh_snapshot(txn);
                                Self::check_refs(plan, &old, None, engine, txn, ev)?;
                            }
                            self.queue_after_row(Some(&old), None)?;
                            self.emit(plan, &old, ev)?;
                            self.advance();
                        }
                        Write::Wait(w) => return Ok(Step::Wait(w)),
                        Write::Updated(_) | Write::Deleted if !rc => {
                            return Err(serialization_failure());
                        }
                        Write::Deleted => self.advance(),
                        Write::Updated(_) => {
                            let f = filter.as_ref();
                            self.recheck_newest(engine, txn, table, target, f, ev)?;
                        }
                    }
                }
            }
        }
        self.check_deferred_fks(plan, engine, txn, ev)?;
        self.after_statement(plan, txn, ev)?;
        Ok(Step::Done)
    }

    fn state_is_fresh(&self) -> bool {
        self.state.is_fresh()
    }

    /// The partition a target row of a partitioned table's UPDATE / DELETE is in, from the
    /// oid kept after its columns (taken off).
    fn partition_of_row(
        row: &mut Row,
        engine: &Engine,
        txn: &Transaction,
    ) -> PgResult<Arc<TableDef>> {
        let Some(Datum::Oid(oid)) = row.pop() else {
            return Err(PgError::internal("a target row without its partition"));
        };
        (txn.catalog(engine).tables.get(&oid).cloned())
            .ok_or_else(|| PgError::internal(format!("partition {oid} is gone")))
    }
}

/// Whether an UPDATE from `old` to `new` leaves every unique index's columns as they were:
/// it then locks the row FOR NO KEY UPDATE (PostgreSQL's rule), which foreign-key checks'
/// KEY SHARE locks do not block.
fn keys_kept(
    engine: &Engine,
    txn: &Transaction,
    table: &keel_catalog::TableDef,
    old: &[Datum],
    new: &[Datum],
) -> bool {
    txn.catalog(engine)
        .indexes_of(table.oid)
        .filter(|i| i.unique)
        .all(|i| {
            i.columns.iter().all(|&c| {
                keel_types::ops::compare(&old[c], &new[c]).is_eq()
                    && old[c].is_null() == new[c].is_null()
            })
        })
}

/// Locks FOR KEY SHARE the first of `rows` that `matches` and is still there once locked:
/// Ok(true) when one was, Ok(false) when none, Err(wait) when one is held by another
/// transaction (check again after the wait). `tick` runs per row read.
fn lock_first_match(
    engine: &Engine,
    txn: &Transaction,
    table: &keel_catalog::TableDef,
    rows: keel_access::RowIter<'_>,
    matches: &dyn Fn(&[Datum]) -> bool,
    tick: &mut dyn FnMut() -> PgResult<()>,
) -> PgResult<Result<bool, RowWait>> {
    for item in rows {
        let (rref, r) = item?;
        tick()?;
        if matches(&r) {
            match key_share(engine, txn, table, rref, matches)? {
                KeyShare::Locked => return Ok(Ok(true)),
                KeyShare::Wait(w) => return Ok(Err(w)),
                KeyShare::Gone => {}
            }
        }
    }
    Ok(Ok(false))
}

enum KeyShare {
    Locked,
    Wait(RowWait),
    /// Deleted, or its key changed, by a transaction that committed meanwhile.
    Gone,
}

/// Locks a referenced row FOR KEY SHARE, following it to its newest version when a
/// committed transaction replaced it and its key (`matches`) is still the same (READ
/// COMMITTED); under REPEATABLE READ a row gone meanwhile is 40001.
fn key_share(
    engine: &Engine,
    txn: &Transaction,
    table: &keel_catalog::TableDef,
    mut target: RowRef,
    matches: &dyn Fn(&[Datum]) -> bool,
) -> PgResult<KeyShare> {
    let xid = engine
        .current_write_xid(txn)
        .ok_or_else(|| PgError::internal("a foreign-key check runs without an xid"))?;
    loop {
        match engine.lock_row(txn, xid, table, target, keel_access::Strength::KeyShare)? {
            Write::Done(()) => return Ok(KeyShare::Locked),
            Write::Wait(w) => return Ok(KeyShare::Wait(w)),
            Write::Updated(_) => match engine.fetch_newest(txn, table, target.root)? {
                Some((newest, row)) if matches(&row) => target = newest,
                _ if txn.isolation != Isolation::ReadCommitted => {
                    return Err(serialization_failure());
                }
                _ => return Ok(KeyShare::Gone),
            },
            Write::Deleted if txn.isolation != Isolation::ReadCommitted => {
                return Err(serialization_failure());
            }
            Write::Deleted => return Ok(KeyShare::Gone),
        }
    }
}

#[path = "modify_refs.rs"]
mod refs;
#[path = "modify_route.rs"]
mod route;
#[path = "modify_triggers.rs"]
mod triggers;
#[path = "modify_upsert.rs"]
mod upsert;
#[path = "modify_view.rs"]
mod view;
