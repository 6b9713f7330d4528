//! The Session and its `Backend` implementation.
//!
//! Transaction states (PostgreSQL's): `Idle` (no block; statements run in implicit
//! transactions), `InBlock` (after BEGIN), `Failed` (an error inside a block: everything but
//! COMMIT/ROLLBACK fails with 25P02 until the block ends). An implicit transaction spans one
//! simple Query message (all of its statements) or the extended-protocol messages up to Sync.

use crate::describe::{decode_param, fields};
use crate::exec::RowSink;
use crate::panic_guard::{guard, guard_async};
use crate::plan_cache::PlanCache;
use keel_access::{Engine, Isolation, Transaction};
use keel_common::{PgError, PgResult, Settings, sqlstate};
use keel_sql::exec::tuplestore::Tuplestore;
use keel_sql::{Prepared, SessionFuncs, Stmt};
use keel_types::{Datum, TypeId};
use keel_wire::{CancelToken, Client, ExecuteOutcome, FieldDescription, StartupInfo};
use rustc_hash::FxHashMap;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    Idle,
    Open,
    Failed,
}

pub struct StmtEntry {
    pub prep: Arc<Prepared>,
    pub declared: Vec<TypeId>,
}

pub struct Portal {
    pub prep: Arc<Prepared>,
    pub params: Vec<Datum>,
    pub formats: Vec<i16>,
    /// Rows not yet sent (after a PortalSuspended), and the final tag. In memory up to
    /// work_mem, the rest in a temporary file.
    pub pending: Option<(Tuplestore, String)>,
}

pub struct Session {
    /// How many PL/pgSQL bodies are running (DO blocks): their statements are part of the
    /// client's statement, which keeps its start time and deadline.
    pub(crate) pl_depth: u32,
    pub(crate) engine: Arc<Engine>,
    pub(crate) boot: Settings,
    pub(crate) settings: Settings,
    pub(crate) cancel: Arc<CancelToken>,
    pub(crate) pid: i32,
    pub(crate) database: String,
    pub(crate) txn: Option<Transaction>,
    /// A transaction that failed inside a block: it is rolled back as soon as the client has
    /// been sent the error (as PostgreSQL reports the error, then aborts), releasing its locks.
    pub(crate) doomed: Option<Transaction>,
    pub(crate) block: Block,
    /// Open savepoints, outermost first (see savepoint.rs).
    pub(crate) savepoints: Vec<crate::savepoint::SavepointEntry>,
    /// Transaction modes for the block's transaction before it is started (BEGIN ISOLATION
    /// LEVEL ..., SET TRANSACTION ...).
    pub(crate) next_isolation: Option<Isolation>,
    pub(crate) next_read_only: Option<bool>,
    /// DEFERRABLE from BEGIN / SET TRANSACTION before the transaction started.
    pub(crate) next_deferrable: Option<bool>,
    pub(crate) funcs: SessionFuncs,
    /// Keyed by client-chosen names, hashed with FxHash: a lookup runs per Bind and Execute
    /// and only this session's own client picks the keys.
    pub(crate) stmts: FxHashMap<String, StmtEntry>,
    pub(crate) portals: FxHashMap<String, Portal>,
    /// Extended protocol: an error happened since the last Sync.
    pub(crate) ext_error: bool,
    /// Settings as they were before the current transaction's first SET (restored on rollback).
    pub(crate) guc_rollback: Option<Settings>,
    /// Session-level values while SET LOCAL is in effect (become current at commit).
    pub(crate) guc_session: Option<Settings>,
    /// Plans shared with every other session (see plan_cache.rs).
    pub(crate) plans: Arc<PlanCache>,
    /// What the running statement's operators hold in memory, against its limit.
    pub(crate) mem: Arc<keel_sql::exec::mem::StatementMem>,
    /// statement_timeout's deadline for the statement running now, fixed when it starts
    /// ([`Session::statement_started`]), so that every part of it (a COPY's batches, a lock
    /// wait) counts against the same instant.
    pub(crate) deadline: Option<std::time::Instant>,
}

/// The interrupt check for evaluation contexts and long operations (owns its token, so it
/// outlives borrows of the session): a cancel request, or a client found gone by the
/// client_connection_check_interval poll of its socket.
pub(crate) fn cancel_check(cancel: &Arc<CancelToken>) -> impl Fn() -> bool + use<> {
    let cancel = cancel.clone();
    move || cancel.interrupted()
}

/// Named prepared statements one session may hold, and their SQL text in bytes. PostgreSQL
/// keeps any number until the session ends; keel bounds them so that a client preparing
/// statements in a loop gets 53200 instead of growing the server without end (a plan takes
/// memory in proportion to its text). Drivers keep far fewer (pgjdbc caches 256 per
/// connection, Rails 1000).
pub(crate) const MAX_PREPARED: usize = 10_000;
pub(crate) const MAX_PREPARED_TEXT: usize = 64 << 20;

/// Whether another named statement of text `sql` fits the session's bounds.
pub(crate) fn prepared_room(stmts: &FxHashMap<String, StmtEntry>, sql: &str) -> PgResult<()> {
    let full = || PgError::new(sqlstate::OUT_OF_MEMORY, "out of memory");
    let hint = "Close prepared statements that are no longer needed (Close message or DEALLOCATE).";
    if stmts.len() >= MAX_PREPARED {
        return Err(full()
            .with_detail(format!(
                "This session holds {} prepared statements, the most keel keeps for one session.",
                stmts.len()
            ))
            .with_hint(hint));
    }
    let text: usize = stmts.values().map(|e| e.prep.text.len()).sum();
    if text + sql.len() > MAX_PREPARED_TEXT {
        return Err(full()
            .with_detail(format!(
                "The prepared statements of this session would hold more than {}MB of SQL text.",
                MAX_PREPARED_TEXT >> 20
            ))
            .with_hint(hint));
    }
    Ok(())
}

/// Hands the session's client_connection_check_interval to its cancel token, which polls the
/// client's socket at most that often.
fn arm_client_check(cancel: &CancelToken, settings: &Settings) {
    let ms = settings.int("client_connection_check_interval").max(0) as u64;
    cancel.set_check_interval(std::time::Duration::from_millis(ms));
}

impl Session {
    pub(crate) fn cancel_check(&self) -> impl Fn() -> bool + use<> {
        cancel_check(&self.cancel)
    }

    pub fn new(
        engine: Arc<Engine>,
        boot: Settings,
        settings: Settings,
        cancel: Arc<CancelToken>,
        pid: i32,
        startup: &StartupInfo,
        plans: Arc<PlanCache>,
    ) -> Session {
        arm_client_check(&cancel, &settings);
        let mem = keel_sql::exec::mem::StatementMem::new(settings.statement_mem_limit());
        Session {
            mem,
            engine,
            boot,
            settings,
            cancel,
            pid,
            database: if startup.database.is_empty() {
                startup.user.clone()
            } else {
                startup.database.clone()
            },
            txn: None,
            doomed: None,
            block: Block::Idle,
            savepoints: Vec::new(),
            next_isolation: None,
            next_read_only: None,
            next_deferrable: None,
            funcs: SessionFuncs::new((pid as u64) << 32 ^ keel_sql::expr::now_micros() as u64),
            stmts: FxHashMap::default(),
            portals: FxHashMap::default(),
            ext_error: false,
            guc_rollback: None,
            guc_session: None,
            plans,
            deadline: None,
            pl_depth: 0,
        }
    }

    /// A statement starts: statement_timestamp() and statement_timeout count from now.
    pub(crate) fn statement_started(&mut self) {
        if self.pl_depth > 0 {
            // A statement inside a DO block: the client's statement is still running.
            return;
        }
        self.funcs.stmt_ts = keel_sql::expr::now_micros();
        self.deadline = crate::exec::statement_deadline(&self.settings);
    }

    /// Changes settings in the current (block or implicit) transaction: undone by rollback;
    /// `local` changes last only until the transaction ends.
    pub(crate) fn set_guc(
        &mut self,
        local: bool,
        f: impl Fn(&mut Settings) -> PgResult<&'static keel_common::settings::Def>,
    ) -> PgResult<&'static keel_common::settings::Def> {
        if self.guc_rollback.is_none() {
            self.guc_rollback = Some(self.settings.clone());
        }
        if local {
            if self.guc_session.is_none() {
                self.guc_session = Some(self.settings.clone());
            }
        } else if let Some(s) = self.guc_session.as_mut() {
            f(s)?;
        }
        f(&mut self.settings)
    }

    /// The transaction's setting changes become permanent (SET LOCAL ones end).
    pub(crate) fn guc_commit(&mut self) {
        if let Some(s) = self.guc_session.take() {
            self.settings = s;
        }
        self.guc_rollback = None;
    }

    fn guc_rollback(&mut self) {
        if let Some(s) = self.guc_rollback.take() {
            let rolled_back = std::mem::replace(&mut self.settings, s);
            self.settings.keep_placeholders(&rolled_back);
        }
        self.guc_session = None;
    }

    pub(crate) fn default_isolation(&self) -> Isolation {
        self.settings.default_isolation()
    }

    /// Whether the current statement runs read-only: its transaction's mode, or the mode the
    /// transaction it starts will have.
    pub(crate) fn read_only_now(&self) -> bool {
        match &self.txn {
            Some(t) => t.read_only,
            None => self
                .next_read_only
                .unwrap_or_else(|| self.settings.default_read_only()),
        }
    }

    /// The engine transaction for the current statement, started if needed.
    pub(crate) fn ensure_txn(&mut self) -> &mut Transaction {
        if self.txn.is_none() {
            let iso = self
                .next_isolation
                .unwrap_or_else(|| self.default_isolation());
            let ro = self
                .next_read_only
                .unwrap_or_else(|| self.settings.default_read_only());
            self.funcs.txn_ts = keel_sql::expr::now_micros();
            let mut txn = self.engine.begin(iso, ro);
            txn.deferrable = self
                .next_deferrable
                .unwrap_or_else(|| self.settings.default_deferrable());
            txn.set_backend_pid(self.pid);
            self.txn = Some(txn);
        }
        // Just created above when it was None.
        self.txn.get_or_insert_with(unreachable_txn)
    }

    pub(crate) fn catalog(&self) -> Arc<keel_catalog::Catalog> {
        catalog_of(&self.txn, &self.engine)
    }

    /// Releases the session's transaction-level advisory locks (at every transaction end).
    fn end_advisory_xact(&self) {
        self.engine
            .advisory()
            .release_all(self.pid, keel_access::advisory::Level::Xact);
    }

    pub(crate) async fn commit_txn(&mut self) -> PgResult<()> {
        self.guc_commit();
        self.savepoints.clear();
        self.next_isolation = None;
        self.next_read_only = None;
        self.next_deferrable = None;
        // Portals end with their transaction, as PostgreSQL's (none is holdable): what a
        // portal holds is never kept past it.
        self.portals.clear();
        self.funcs.cursors.end_transaction(true);
        if let Some(t) = self.txn.take() {
            let sync = self.settings.synchronous_commit();
            let r = self.engine.commit(t, sync).await;
            self.end_advisory_xact();
            r?;
        }
        Ok(())
    }

    pub(crate) fn rollback_txn(&mut self) {
        self.abort_doomed();
        self.guc_rollback();
        self.savepoints.clear();
        self.next_isolation = None;
        self.next_read_only = None;
        self.next_deferrable = None;
        self.portals.clear();
        self.funcs.cursors.end_transaction(false);
        if let Some(t) = self.txn.take() {
            self.engine.rollback(t);
        }
        self.end_advisory_xact();
    }

    /// Ends a transaction that failed inside a block (see `doomed`).
    pub(crate) fn abort_doomed(&mut self) {
        if let Some(t) = self.doomed.take() {
            self.engine.rollback(t);
            self.end_advisory_xact();
        }
    }

    /// After a failed statement: a block becomes Failed; an implicit transaction is rolled back.
    pub(crate) fn on_error(&mut self) {
        match self.block {
            Block::Open | Block::Failed => {
                self.block = Block::Failed;
                // Inside a savepoint only that level ends (AbortSubTransaction); ROLLBACK TO
                // resumes the block.
                if self.abort_innermost_savepoint() {
                    return;
                }
                // As PostgreSQL's AbortTransaction: the transaction ends at the error, so its
                // row locks are released and its changes are dead now; the block itself stays
                // failed (25P02) until ROLLBACK, which also undoes its SETs.
                self.savepoints.clear();
                if let Some(t) = self.txn.take() {
                    self.doomed = Some(t);
                }
            }
            Block::Idle => self.rollback_txn(),
        }
    }

    /// Binds `sql` against the current catalog.
    pub(crate) fn prepare(
        &self,
        sql: &str,
        char_offset: usize,
        declared: &[TypeId],
    ) -> PgResult<Prepared> {
        self.stack_limit();
        keel_sql::prepare(
            self.catalog(),
            &keel_sql::EngineSizes(&self.engine),
            sql,
            char_offset,
            declared,
        )
    }

    /// Applies the session's `max_stack_depth` to the thread about to parse, bind or run a
    /// statement (the limit is per thread: see keel_common::stack).
    pub(crate) fn stack_limit(&self) {
        keel_common::stack::set_limit(self.settings.max_stack_depth_bytes());
    }

    /// A new plan for a statement whose catalog is no longer the session's (DDL happened
    /// since) or whose tables were analyzed since it was planned, or None when its plan is
    /// current. The check reads no cache line that is written often (`Engine::catalog_is`,
    /// `Engine::stats_generation`): it runs at every Bind and Execute.
    pub(crate) fn replanned(
        &self,
        prep: &Arc<Prepared>,
        declared: &[TypeId],
    ) -> PgResult<Option<Arc<Prepared>>> {
        if matches!(
            prep.stmt,
            Stmt::Utility(_) | Stmt::Empty | Stmt::Ddl(_) | Stmt::CreateTableAs { .. }
        ) {
            return Ok(None);
        }
        let current = match &self.txn {
            Some(t) => t.catalog_is(&self.engine, &prep.catalog),
            None => self.engine.catalog_is(&prep.catalog),
        };
        if current && prep.stats_generation == self.engine.stats_generation() {
            return Ok(None);
        }
        self.stack_limit();
        let p = self.plans.prepare(
            self.catalog(),
            &keel_sql::EngineSizes(&self.engine),
            &prep.text,
            prep.char_offset,
            declared,
        )?;
        Ok(Some(p))
    }
}

/// In a failed block, only COMMIT, ROLLBACK and ROLLBACK TO SAVEPOINT run (25P02 otherwise).
fn failed_block_check(block: Block, prep: &Prepared) -> PgResult<()> {
    match &prep.stmt {
        Stmt::Utility(u) => failed_block_utility_check(block, Some(u)),
        _ => failed_block_utility_check(block, None),
    }
}

/// As `failed_block_check`, on a statement's text before it is analysed: PostgreSQL rejects
/// any other statement in a failed block before looking up what it names.
fn failed_block_text_check(block: Block, text: &str) -> PgResult<()> {
    if block != Block::Failed {
        return Ok(());
    }
    match keel_sql::utility::parse_utility(text) {
        Ok(u) => failed_block_utility_check(block, u.as_ref()),
        Err(_) => failed_block_utility_check(block, None),
    }
}

fn failed_block_utility_check(
    block: Block,
    u: Option<&keel_sql::utility::Utility>,
) -> PgResult<()> {
    use keel_sql::utility::{SavepointOp, Utility};
    if block == Block::Failed
        && !matches!(
            u,
            Some(
                Utility::Commit
                    | Utility::Rollback
                    | Utility::Savepoint(SavepointOp::RollbackTo, _)
            )
        )
    {
        return Err(PgError::new(
            sqlstate::IN_FAILED_SQL_TRANSACTION,
            "current transaction is aborted, commands ignored until end of transaction block",
        ));
    }
    Ok(())
}

fn unreachable_txn() -> Transaction {
    // ensure_txn fills `txn` before this can run; never called.
    panic!("transaction missing after begin")
}

impl keel_wire::Backend for Session {
    fn startup_parameters(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (def, _) in self.settings.iter() {
            if def.reported
                && let Ok((name, v)) = self.settings.show(def.name)
            {
                out.push((name.to_string(), v));
            }
        }
        out
    }

    async fn simple_query<C: Client>(&mut self, sql: &str, client: &mut C) -> PgResult<()> {
        // The protocol layer resets the cancel flag when a command cycle starts.
        let stmts = keel_sql::split::split_statements(sql);
        if stmts.is_empty() {
            client.empty_query();
            return Ok(());
        }
        for raw in &stmts {
            let char_offset = sql[..raw.offset].chars().count();
            let r = guard_async(async {
                failed_block_text_check(self.block, raw.text)?;
                let prep = Arc::new(self.prepare(raw.text, char_offset, &[])?);
                for n in &prep.notices {
                    client.notice(n);
                }
                failed_block_check(self.block, &prep)?;
                self.run_to_client(&prep, &[], &[], client, true).await
            })
            .await;
            if let Err(e) = r {
                self.on_error();
                return Err(e);
            }
        }
        // One implicit transaction for the whole string.
        if self.block == Block::Idle
            && self.txn.is_some()
            && let Err(e) = guard_async(self.commit_txn()).await
        {
            self.on_error();
            return Err(e);
        }
        if self.block == Block::Idle {
            self.guc_commit();
        }
        Ok(())
    }

    fn parse(&mut self, name: &str, sql: &str, param_types: &[u32]) -> PgResult<()> {
        let r = guard(|| {
            if !name.is_empty() && self.stmts.contains_key(name) {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_PREPARED_STATEMENT,
                    format!("prepared statement \"{name}\" already exists"),
                ));
            }
            if !name.is_empty() {
                prepared_room(&self.stmts, sql)?;
            }
            let declared: Vec<TypeId> = param_types
                .iter()
                .map(|o| {
                    if *o == 0 {
                        TypeId::Unknown
                    } else {
                        TypeId::from_oid(*o).unwrap_or(TypeId::Text)
                    }
                })
                .collect();
            let parts = keel_sql::split::split_statements(sql);
            if parts.len() > 1 {
                return Err(PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    "cannot insert multiple commands into a prepared statement",
                ));
            }
            let (text, off) = parts
                .first()
                .map_or((sql, 0), |p| (p.text, sql[..p.offset].chars().count()));
            failed_block_text_check(self.block, text)?;
            self.stack_limit();
            let prep = self.plans.prepare(
                self.catalog(),
                &keel_sql::EngineSizes(&self.engine),
                text,
                off,
                &declared,
            )?;
            if self.block == Block::Failed {
                failed_block_check(self.block, &prep)?;
            }
            self.stmts
                .insert(name.to_string(), StmtEntry { prep, declared });
            Ok(())
        });
        if r.is_err() {
            self.ext_error = true;
            self.on_error();
        }
        r
    }

    fn bind(
        &mut self,
        portal: &str,
        statement: &str,
        param_formats: &[i16],
        params: &[Option<bytes::Bytes>],
        result_formats: &[i16],
    ) -> PgResult<()> {
        let r = guard(|| {
            let entry = self.stmts.get(statement).ok_or_else(|| {
                PgError::new(
                    sqlstate::INVALID_SQL_STATEMENT_NAME,
                    format!("prepared statement \"{statement}\" does not exist"),
                )
            })?;
            let prep = match self.replanned(&entry.prep, &entry.declared)? {
                // Kept, so the next Bind does not re-plan again.
                Some(p) => {
                    crate::prepared::same_result(&entry.prep, &p)?;
                    if let Some(e) = self.stmts.get_mut(statement) {
                        e.prep = p.clone();
                    }
                    p
                }
                None => entry.prep.clone(),
            };
            failed_block_check(self.block, &prep)?;
            if params.len() != prep.params.len() {
                return Err(PgError::new(
                    sqlstate::PROTOCOL_VIOLATION,
                    format!(
                        "bind message supplies {} parameters, but prepared statement \"{statement}\" requires {}",
                        params.len(),
                        prep.params.len()
                    ),
                ));
            }
            let mut values = Vec::with_capacity(params.len());
            for (i, p) in params.iter().enumerate() {
                let f = crate::describe::format_for(param_formats, i);
                values.push(decode_param(p.as_deref(), prep.params[i], f, i + 1)?);
            }
            self.portals.insert(
                portal.to_string(),
                Portal {
                    prep,
                    params: values,
                    formats: result_formats.to_vec(),
                    pending: None,
                },
            );
            Ok(())
        });
        if r.is_err() {
            self.ext_error = true;
            self.on_error();
        }
        r
    }

    fn describe_statement(
        &mut self,
        name: &str,
    ) -> PgResult<(Vec<u32>, Option<Vec<FieldDescription>>)> {
        let entry = self.stmts.get(name).ok_or_else(|| {
            PgError::new(
                sqlstate::INVALID_SQL_STATEMENT_NAME,
                format!("prepared statement \"{name}\" does not exist"),
            )
        })?;
        let prep = entry.prep.clone();
        let oids = prep.params.iter().map(|t| t.oid()).collect();
        Ok((oids, self.columns_of(&prep).map(|c| fields(&c, &[]))))
    }

    fn describe_portal(&mut self, name: &str) -> PgResult<Option<Vec<FieldDescription>>> {
        let Some(p) = self.portals.get(name) else {
            // A cursor is a portal too (DECLARE's): its rows' shape, in text.
            return match self.cursor_columns(name) {
                Some(c) => Ok(Some(fields(&c, &[]))),
                None => Err(PgError::new(
                    sqlstate::INVALID_CURSOR_NAME,
                    format!("portal \"{name}\" does not exist"),
                )),
            };
        };
        let (prep, formats) = (p.prep.clone(), p.formats.clone());
        Ok(self.columns_of(&prep).map(|c| fields(&c, &formats)))
    }

    async fn execute<C: Client>(
        &mut self,
        portal: &str,
        max_rows: u32,
        client: &mut C,
    ) -> PgResult<ExecuteOutcome> {
        self.cancel.reset();
        let r = guard_async(self.execute_portal(portal, max_rows, client)).await;
        if r.is_err() {
            self.ext_error = true;
            self.on_error();
        }
        r
    }

    fn close_statement(&mut self, name: &str) {
        self.stmts.remove(name);
    }

    fn close_portal(&mut self, name: &str) {
        self.portals.remove(name);
    }

    async fn sync(&mut self) -> PgResult<()> {
        self.ext_error = false;
        // Sync ends the implicit transaction, and with it every portal (PostgreSQL's Bind
        // starts that transaction even when nothing ran yet).
        if self.block == Block::Idle {
            self.portals.clear();
        } else {
            self.portals.remove("");
        }
        if self.block == Block::Idle
            && self.txn.is_some()
            && let Err(e) = guard_async(self.commit_txn()).await
        {
            self.on_error();
            return Err(e);
        }
        if self.block == Block::Idle {
            self.guc_commit();
        }
        Ok(())
    }

    fn command_started(&mut self) {
        // A SET of the interval takes effect from the next command.
        arm_client_check(&self.cancel, &self.settings);
        if let Some(txn) = &self.txn {
            self.engine.idle_in_transaction(txn, false);
        }
    }

    fn ready_for_query(&mut self) -> u8 {
        if let (Block::Open | Block::Failed, Some(txn)) = (&self.block, &self.txn) {
            self.engine.idle_in_transaction(txn, true);
        }
        match self.block {
            Block::Idle => b'I',
            Block::Open => b'T',
            Block::Failed => b'E',
        }
    }

    fn error_reported(&mut self) {
        self.abort_doomed();
    }

    async fn terminate(&mut self) {
        self.rollback_txn();
        self.block = Block::Idle;
    }
}

impl Session {
    async fn execute_portal<C: Client>(
        &mut self,
        portal: &str,
        max_rows: u32,
        client: &mut C,
    ) -> PgResult<ExecuteOutcome> {
        let no_portal = || {
            PgError::new(
                sqlstate::INVALID_CURSOR_NAME,
                format!("portal \"{portal}\" does not exist"),
            )
        };
        // A portal of EXECUTE becomes one of its statement, with the arguments' values.
        let unrun = self.portals.get(portal).ok_or_else(no_portal)?;
        if unrun.pending.is_none() {
            let prep = unrun.prep.clone();
            failed_block_check(self.block, &prep)?;
            if let Some((inner, values)) = self.executed(&prep.stmt, prep.char_offset)? {
                let p = self.portals.get_mut(portal).ok_or_else(no_portal)?;
                p.prep = inner;
                p.params = values;
            }
        }
        let p = self.portals.get_mut(portal).ok_or_else(no_portal)?;
        if p.pending.is_none() {
            failed_block_check(self.block, &p.prep)?;
            if matches!(p.prep.stmt, Stmt::Empty) {
                return Ok(ExecuteOutcome::Empty);
            }
            // The parameters and formats are lent to the run and put back (no copies).
            let prep = p.prep.clone();
            let params = std::mem::take(&mut p.params);
            let formats = std::mem::take(&mut p.formats);
            if let Stmt::Query(_) = prep.stmt {
                // All rows wanted: they stream to the client as they are produced, as in the
                // simple protocol. A portal run in steps keeps its rows in a tuplestore.
                let mut store = Tuplestore::new(self.settings.work_mem_bytes());
                let sink = if max_rows == 0 {
                    RowSink::Rows
                } else {
                    RowSink::Store(&mut store)
                };
                let r = self
                    .stream_query(&prep, &params, &formats, client, sink)
                    .await;
                let tag = format!("SELECT {}", r.as_ref().copied().unwrap_or(0));
                let Some(p) = self.portals.get_mut(portal) else {
                    return r.map(|_| ExecuteOutcome::Complete(tag));
                };
                p.params = params;
                p.formats = formats;
                // Executing a completed portal again returns no more rows.
                p.pending = Some((store, tag.clone()));
                r?;
                if max_rows == 0 {
                    return Ok(ExecuteOutcome::Complete(tag));
                }
            } else {
                let r = self.run_collect(&prep, &params, &formats, client).await;
                // The statement may have removed the portal (DISCARD ALL).
                let Some(p) = self.portals.get_mut(portal) else {
                    return r.map(|(_, tag)| ExecuteOutcome::Complete(tag));
                };
                p.params = params;
                p.formats = formats;
                let (rows, tag) = r?;
                p.pending = Some((Tuplestore::from_rows(rows), tag));
            }
        }
        let Some(Portal {
            prep,
            formats,
            pending: Some((rows, tag)),
            ..
        }) = self.portals.get_mut(portal)
        else {
            return Err(PgError::internal("portal has no result"));
        };
        let cols = prep.columns().unwrap_or_default();
        let mut w = crate::describe::RowWriter::new(cols, || catalog_of(&self.txn, &self.engine));
        let mut sent = 0u32;
        while let Some((_, r)) = rows.pop()? {
            w.send(client, &r, cols, formats)?;
            sent += 1;
            // Bounded output: what the socket has not taken waits in the portal, not twice.
            if client.wants_flush() {
                client.flush().await?;
            }
            if max_rows > 0 && sent >= max_rows && !rows.is_empty() {
                return Ok(ExecuteOutcome::Suspended);
            }
        }
        // A re-execute of a completed portal returns no more rows, as PostgreSQL does: the
        // portal keeps its (now empty) row queue and its tag.
        Ok(ExecuteOutcome::Complete(tag.clone()))
    }
}

impl Drop for Session {
    /// A session that ends, however its client went, releases its advisory locks.
    fn drop(&mut self) {
        let locks = self.engine.advisory();
        locks.release_all(self.pid, keel_access::advisory::Level::Xact);
        locks.release_all(self.pid, keel_access::advisory::Level::Session);
    }
}

/// The catalog statements of the session see: its transaction's, or the latest.
pub(crate) fn catalog_of(txn: &Option<Transaction>, engine: &Engine) -> Arc<keel_catalog::Catalog> {
    match txn {
        Some(t) => t.catalog(engine),
        None => engine.catalog(),
    }
}
