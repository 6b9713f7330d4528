//! Running one bound statement inside the session's transaction.

use crate::describe::{RowWriter, fields, text_column};
use crate::session::{Block, Session, cancel_check};
use keel_common::{PgResult, Settings};
use keel_sql::exec::mem::StatementMem;
use keel_sql::exec::tuplestore::Tuplestore;
use keel_sql::exec::{ModifyExec, Step};
use keel_sql::expr::{EvalCx, SessionFuncs};
use keel_sql::plan::{ModifyPlan, OutColumn};
use keel_sql::utility::Utility;
use keel_sql::{Prepared, Stmt};
use keel_types::Datum;
use keel_wire::Client;
use std::sync::Arc;

pub type Rows = Vec<Vec<Datum>>;

/// Where [`Session::stream_query`] puts the rows.
pub(crate) enum RowSink<'s> {
    /// To the client, after a RowDescription (simple protocol).
    Describe,
    /// To the client, rows only (extended protocol: Describe sent the row shape).
    Rows,
    /// Into a tuplestore (memory up to work_mem, then a temporary file).
    Store(&'s mut Tuplestore),
    /// Into a cursor being opened (DECLARE).
    Cursor(&'s mut keel_sql::exec::cursor::Cursor),
}

/// The session's fields a statement's evaluation context borrows (field by field, so the
/// transaction can be borrowed beside them).
macro_rules! stmt_env {
    ($s:expr) => {
        $crate::exec::StmtEnv {
            engine: &$s.engine,
            funcs: &mut $s.funcs,
            settings: &$s.settings,
            mem: &$s.mem,
            pid: $s.pid,
            deadline: $s.deadline,
        }
    };
}
pub(crate) use stmt_env;

/// The session's state a statement's evaluation context borrows.
pub(crate) struct StmtEnv<'a> {
    pub engine: &'a keel_access::Engine,
    pub funcs: &'a mut SessionFuncs,
    pub settings: &'a Settings,
    pub mem: &'a Arc<StatementMem>,
    pub pid: i32,
    /// statement_timeout's instant for the statement running now ([`Session::deadline`]).
    pub deadline: Option<std::time::Instant>,
}

/// A statement's evaluation context. Its memory limit is taken from the settings now, when
/// the statement starts.
pub(crate) fn eval_cx<'a>(
    env: StmtEnv<'a>,
    params: &'a [Datum],
    cancel: &'a (dyn Fn() -> bool + Sync),
    txn: Option<&'a keel_access::Transaction>,
) -> EvalCx<'a> {
    let StmtEnv {
        engine,
        funcs,
        settings,
        mem,
        pid,
        deadline,
    } = env;
    // Every statement's execution starts here, on the thread that runs it.
    keel_common::stack::set_limit(settings.max_stack_depth_bytes());
    mem.set_limit(settings.statement_mem_limit());
    EvalCx {
        params,
        fctx: funcs,
        engine,
        settings,
        pid,
        cancel,
        txn,
        outer: &[],
        subq: Default::default(),
        subplans: Default::default(),
        deadline,
        ticker: Default::default(),
        blocking: run_blocking,
        mem,
        transition: &[],
    }
}

/// [`EvalCx::blocking`]: the closure blocks its thread, so the shard's other sessions move to
/// another worker first (nothing to do when the statement already runs that way).
fn run_blocking(f: &mut dyn FnMut()) {
    maybe_blocking(false, f)
}

/// When a statement starting now must stop (statement_timeout, ms; 0 = never).
pub(crate) fn statement_deadline(settings: &Settings) -> Option<std::time::Instant> {
    let ms = settings.statement_timeout_ms();
    (ms > 0).then(|| std::time::Instant::now() + std::time::Duration::from_millis(ms as u64))
}

/// Runs `f` inline when it is cheap; otherwise tells the runtime this worker will be busy
/// (`block_in_place`), so other sessions' tasks move to another worker instead of waiting
/// behind a long scan, sort or bulk insert.
pub(crate) fn maybe_blocking<R>(cheap: bool, f: impl FnOnce() -> R) -> R {
    let multi = tokio::runtime::Handle::try_current()
        .map(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
        .unwrap_or(false);
    if cheap || !multi {
        f()
    } else {
        tokio::task::block_in_place(f)
    }
}

impl Session {
    /// Row shape of a statement (None = no rows).
    pub(crate) fn columns_of(&self, prep: &Prepared) -> Option<Vec<OutColumn>> {
        match &prep.stmt {
            Stmt::Utility(Utility::Show(name)) => {
                let shown = self
                    .settings
                    .show(name)
                    .map(|(n, _)| n.to_string())
                    .unwrap_or_else(|_| name.clone());
                let col = if name == "transaction_isolation" {
                    "transaction_isolation".to_string()
                } else {
                    shown
                };
                Some(vec![text_column(&col)])
            }
            Stmt::Utility(Utility::Fetch {
                is_move: false,
                name,
                ..
            }) => self.cursor_columns(name),
            // EXECUTE's rows are its statement's.
            Stmt::Utility(Utility::Execute { name, .. }) => {
                let inner = self.stmts.get(name)?.prep.clone();
                self.columns_of(&inner)
            }
            Stmt::Utility(Utility::ShowAll) => Some(vec![
                text_column("name"),
                text_column("setting"),
                text_column("description"),
            ]),
            _ => prep.columns().map(|c| c.to_vec()),
        }
    }

    /// Simple-query execution: RowDescription, DataRows, CommandComplete.
    pub(crate) async fn run_to_client<C: Client>(
        &mut self,
        prep: &Arc<Prepared>,
        params: &[Datum],
        formats: &[i16],
        client: &mut C,
        _simple: bool,
    ) -> PgResult<()> {
        if matches!(prep.stmt, Stmt::Empty) {
            client.empty_query();
            return Ok(());
        }
        // EXECUTE runs its statement as if the client had sent it (rows streamed, its tag).
        let target = self.executed(&prep.stmt, prep.char_offset)?;
        let (prep, params) = match &target {
            Some((inner, values)) => (inner, values.as_slice()),
            None => (prep, params),
        };
        if let Stmt::Query(_) = &prep.stmt {
            let n = self
                .stream_query(prep, params, formats, client, RowSink::Describe)
                .await;
            self.send_warnings(client);
            client.command_complete(&format!("SELECT {}", n?));
            return Ok(());
        }
        let r = self.run_collect(prep, params, formats, client).await;
        self.send_warnings(client);
        let (rows, tag) = r?;
        if let Some(cols) = self.columns_of(prep) {
            client.row_description(&fields(&cols, formats));
            let mut w = RowWriter::new(&cols, || self.catalog());
            for r in &rows {
                w.send(client, r, &cols, formats)?;
                if client.wants_flush() {
                    client.flush().await?;
                }
            }
        }
        client.command_complete(&tag);
        Ok(())
    }

    /// Runs a query and sends its rows to the client as they are produced: the result is never
    /// held whole, and the output buffer stays near its flush threshold, because whenever the
    /// socket has not taken what was written the executor stops between rows and the session
    /// awaits the flush (a client that reads slowly slows the query down, as in PostgreSQL).
    /// RowDescription (the simple protocol's) goes out before the first row, so an error
    /// raised by a later row follows the rows already sent, as PostgreSQL's does. With
    /// [`RowSink::Store`] the rows go to a tuplestore instead (a portal run in steps).
    /// Returns the number of rows.
    pub(crate) async fn stream_query<C: Client>(
        &mut self,
        prep: &Arc<Prepared>,
        params: &[Datum],
        formats: &[i16],
        client: &mut C,
        mut sink: RowSink<'_>,
    ) -> PgResult<u64> {
        self.statement_started();
        let newer = self.lock_plan(prep).await?;
        let prep = newer.as_ref().unwrap_or(prep);
        let Stmt::Query(q) = &prep.stmt else {
            return Err(keel_common::PgError::internal("not a query"));
        };
        let cols = prep.columns().unwrap_or_default();
        self.settle().await?;
        self.ensure_txn();
        let (cancel, deadline) = (self.cancel_check(), self.deadline);
        let Some(txn) = self.txn.as_mut() else {
            return Err(keel_common::PgError::internal("no transaction"));
        };
        self.engine
            .wait_safe_snapshot(txn, || {
                keel_sql::interrupt::check(&cancel, deadline, std::time::Instant::now())
            })
            .await?;
        self.engine.start_statement(txn);
        let locking = q.row_locking();
        if let Some(s) = locking {
            if txn.read_only {
                return Err(keel_common::PgError::new(
                    keel_common::sqlstate::READ_ONLY_SQL_TRANSACTION,
                    format!(
                        "cannot execute SELECT {} in a read-only transaction",
                        s.clause()
                    ),
                ));
            }
            // Row locks are taken with the transaction's xid: assigned before the rows are.
            self.engine.row_lock_xid(txn)?;
        }
        let cf = self.cancel_check();
        let cancel = self.cancel.clone();
        let deadline = self.deadline;
        let txn = self
            .txn
            .as_ref()
            .ok_or_else(|| keel_common::PgError::internal("no transaction"))?;
        let mut ev = eval_cx(stmt_env!(self), params, &cf, Some(txn));
        let cheap = q.root.is_cheap();
        let mut root = keel_sql::exec::open_query(q, &self.engine, txn, &mut ev)?;
        if let RowSink::Describe = sink {
            client.row_description(&fields(cols, formats));
        }
        let mut w = RowWriter::new(cols, || txn.catalog(&self.engine));
        let mut n = 0u64;
        let dir = || self.engine.temp_dir();
        let result = loop {
            let done = maybe_blocking(cheap, || -> PgResult<bool> {
                while let Some(r) = root.next(&mut ev)? {
                    match &mut sink {
                        RowSink::Store(store) => store.push(&ev, (None, r), dir)?,
                        RowSink::Cursor(c) => c.push(r)?,
                        _ => w.send(client, &r, cols, formats)?,
                    }
                    n += 1;
                    ev.tick()?;
                    if client.wants_flush() {
                        return Ok(false);
                    }
                }
                Ok(true)
            });
            match done {
                Ok(true) => break Ok(n),
                Ok(false) => {
                    if let Err(e) = client.flush().await {
                        break Err(e);
                    }
                }
                // SELECT ... FOR UPDATE met a row another transaction holds: await it here,
                // off the executor, and pull again (the LockRows node kept the row).
                Err(e) if keel_sql::exec::lockrows::is_row_wait(&e) => {
                    let Some(wait) = root.take_row_wait() else {
                        break Err(e);
                    };
                    if let Err(e) = await_row(&self.engine, txn, wait, &cancel, deadline).await {
                        break Err(e);
                    }
                }
                Err(e) => break Err(e),
            }
        };
        if locking.is_some() {
            txn.leave_row_queue();
        }
        result
    }

    /// Runs a statement other than a query (whose rows stream: [`Session::stream_query`])
    /// and returns its rows (RETURNING, SHOW) and its command tag. Notices and COPY traffic
    /// go to `client` directly.
    pub(crate) async fn run_collect<C: Client>(
        &mut self,
        prep: &Arc<Prepared>,
        params: &[Datum],
        _formats: &[i16],
        client: &mut C,
    ) -> PgResult<(Rows, String)> {
        self.statement_started();
        match &prep.stmt {
            Stmt::Empty => Ok((vec![], String::new())),
            Stmt::Utility(Utility::DeclareCursor {
                name,
                scroll,
                hold,
                query,
                query_offset,
            }) => {
                let at = prep.char_offset + query_offset;
                let query = (query.as_str(), at, prep.params.as_slice(), params);
                self.declare_cursor(name, *scroll, *hold, query, client)
                    .await
            }
            Stmt::Utility(Utility::Prepare {
                name,
                types,
                query,
                query_offset,
            }) => {
                let at = (prep.char_offset, prep.char_offset + query_offset);
                Ok((vec![], self.sql_prepare(name, types, query, at)?))
            }
            Stmt::Utility(u) => self.utility(u, client).await,
            Stmt::Explain(_) => {
                let newer = self.lock_plan(prep).await?;
                let prep = newer.as_ref().unwrap_or(prep);
                let Stmt::Explain(e) = &prep.stmt else {
                    return Err(keel_common::PgError::internal("not an EXPLAIN"));
                };
                self.explain(e, prep.char_offset, params, client).await
            }
            Stmt::Query(_) => Err(keel_common::PgError::internal(
                "a query's rows are streamed, not collected",
            )),
            Stmt::Modify(_) => {
                // Locked, and planned again if the catalog changed since it was bound.
                let newer = self.lock_plan(prep).await?;
                let prep = newer.as_ref().unwrap_or(prep);
                let Stmt::Modify(m) = &prep.stmt else {
                    return Err(keel_common::PgError::internal("not a write"));
                };
                if m.reads_tables() {
                    self.settle().await?;
                }
                self.ensure_txn();
                let Some(txn) = self.txn.as_mut() else {
                    return Err(keel_common::PgError::internal("no transaction"));
                };
                self.engine.start_statement(txn);
                let mut exec = ModifyExec::new();
                self.drive_modify(m, &mut exec, params).await?;
                let tag = keel_sql::command_tag(&prep.stmt, exec.count);
                Ok((std::mem::take(&mut exec.returned), tag))
            }
            Stmt::Ddl(stmt) => Ok((vec![], self.run_ddl(stmt, prep, client).await?)),
            Stmt::CreateTableAs { create, with_data } => {
                self.create_table_as(create, *with_data, prep, client).await
            }
        }
    }

    /// CREATE TABLE AS / SELECT INTO: the table made by keel-commands, then the query's rows
    /// inserted by an INSERT plan against the catalog that has it. The tag is PostgreSQL's:
    /// `SELECT n`, or `CREATE TABLE AS` for WITH NO DATA and for IF NOT EXISTS that skipped.
    async fn create_table_as<C: Client>(
        &mut self,
        create: &keel_sql::ast::Statement,
        with_data: bool,
        prep: &Arc<Prepared>,
        client: &mut C,
    ) -> PgResult<(Rows, String)> {
        let name = keel_sql::create_as::table_name(create)?;
        let existed = self.catalog().name_taken(&name);
        let tag = self.run_ddl(create, prep, client).await?;
        if existed || !with_data {
            return Ok((vec![], tag));
        }
        let insert = keel_sql::create_as::prepare_insert(
            self.catalog(),
            &keel_sql::EngineSizes(&self.engine),
            create,
            &prep.text,
            prep.char_offset,
        )?;
        let catalog = self.catalog();
        let locks: Vec<crate::locking::RelLock> = insert
            .locks()
            .iter()
            .map(|&(rel, mode)| {
                let name = catalog.tables.get(&rel).map(|t| t.name.clone());
                (rel, name.unwrap_or_default(), mode)
            })
            .collect();
        self.lock_relations(&locks, false).await?;
        let Stmt::Modify(m) = &insert.stmt else {
            return Err(keel_common::PgError::internal("not a write"));
        };
        self.settle().await?;
        let mut exec = ModifyExec::new();
        self.drive_modify(m, &mut exec, &[]).await?;
        Ok((vec![], format!("SELECT {}", exec.count)))
    }

    /// Runs a DDL statement (`stmt`, of `prep`) and returns its command tag.
    async fn run_ddl<C: Client>(
        &mut self,
        stmt: &keel_sql::ast::Statement,
        prep: &Arc<Prepared>,
        client: &mut C,
    ) -> PgResult<String> {
        if self.read_only_now() {
            return Err(keel_common::PgError::new(
                keel_common::sqlstate::READ_ONLY_SQL_TRANSACTION,
                format!(
                    "cannot execute {} in a read-only transaction",
                    keel_sql::command_tag(&prep.stmt, 0)
                ),
            ));
        }
        if self.in_block() && keel_sql::ddl::restarts_identity(stmt) {
            // The sequences restart when the TRUNCATE commits (the engine's
            // restart_sequence_at_commit): later statements of the same block would
            // still draw old values, which the restart would then hand out again.
            return Err(keel_common::PgError::unsupported(
                "TRUNCATE ... RESTART IDENTITY inside a transaction block",
            ));
        }
        let locks = keel_sql::ddl_locks::ddl_locks(stmt, &self.catalog());
        self.start_ddl(&locks).await?;
        // Read under the locks just taken: the tables as TRUNCATE will find them.
        let truncated = truncate_triggered(stmt, &self.catalog());
        self.fire_truncate(&truncated, keel_catalog::TriggerTiming::Before)?;
        let out = self
            .ddl_work(|engine, txn, interrupt, settings| {
                keel_sql::ddl::execute_ddl(stmt, engine, txn, interrupt, settings)
            })
            .map_err(|mut e| {
                keel_sql::body_position::transpose(stmt, &mut e, &prep.text, prep.char_offset);
                e
            })?;
        for mut n in out.notices {
            keel_sql::body_position::transpose(stmt, &mut n, &prep.text, prep.char_offset);
            client.notice(&n);
        }
        self.fire_truncate(&truncated, keel_catalog::TriggerTiming::After)?;
        Ok(out.tag)
    }

    /// A DDL statement's start: its locks taken, earlier work settled, and a statement
    /// started in the transaction (begun if there is none).
    async fn start_ddl(&mut self, locks: &[(u32, String, keel_access::LockMode)]) -> PgResult<()> {
        self.lock_relations(locks, false).await?;
        self.settle().await?;
        self.ensure_txn();
        let Some(txn) = self.txn.as_mut() else {
            return Err(keel_common::PgError::internal("no transaction"));
        };
        self.engine.start_statement(txn);
        Ok(())
    }

    /// A DDL statement's work, in the started transaction, interruptible by cancel and
    /// statement_timeout, off the async worker (validating a CHECK or a partition
    /// constraint scans every row).
    fn ddl_work<T>(
        &mut self,
        work: impl FnOnce(
            &keel_access::Engine,
            &mut keel_access::Transaction,
            &keel_sql::ddl::Interrupt<'_>,
            &Settings,
        ) -> PgResult<T>,
    ) -> PgResult<T> {
        let Some(txn) = self.txn.as_mut() else {
            return Err(keel_common::PgError::internal("no transaction"));
        };
        keel_common::stack::set_limit(self.settings.max_stack_depth_bytes());
        let cf = cancel_check(&self.cancel);
        let interrupt = keel_sql::ddl::Interrupt {
            cancel: &cf,
            deadline: self.deadline,
        };
        maybe_blocking(false, || {
            work(&self.engine, txn, &interrupt, &self.settings)
        })
    }

    /// ALTER TABLE ... ATTACH | DETACH PARTITION: run as DDL is, under its locks.
    pub(crate) async fn run_partition_cmd<C: Client>(
        &mut self,
        cmd: &keel_sql::partition_cmd::PartitionCmd,
        client: &mut C,
    ) -> PgResult<String> {
        use keel_sql::partition_cmd::PartitionAction;
        if self.read_only_now() {
            return Err(keel_common::PgError::new(
                keel_common::sqlstate::READ_ONLY_SQL_TRANSACTION,
                "cannot execute ALTER TABLE in a read-only transaction",
            ));
        }
        if matches!(
            cmd.action,
            PartitionAction::Detach {
                concurrently: true,
                ..
            }
        ) && self.in_block()
        {
            return Err(keel_common::PgError::new(
                keel_common::sqlstate::ACTIVE_SQL_TRANSACTION,
                "ALTER TABLE ... DETACH CONCURRENTLY cannot run inside a transaction block",
            ));
        }
        let locks = keel_sql::ddl_locks::partition_cmd_locks(cmd, &self.catalog());
        self.start_ddl(&locks).await?;
        let out = self.ddl_work(|engine, txn, interrupt, _| {
            keel_sql::ddl::execute_partition_cmd(cmd, engine, txn, interrupt)
        })?;
        for n in out.notices {
            client.notice(&n);
        }
        Ok(out.tag)
    }

    /// Fires the TRUNCATE triggers of `timing` of each table in turn.
    fn fire_truncate(
        &mut self,
        tables: &[Arc<keel_catalog::TableDef>],
        timing: keel_catalog::TriggerTiming,
    ) -> PgResult<()> {
        if tables.is_empty() {
            return Ok(());
        }
        let cf = cancel_check(&self.cancel);
        let Some(txn) = self.txn.as_ref() else {
            return Err(keel_common::PgError::internal("no transaction"));
        };
        let mut ev = eval_cx(stmt_env!(self), &[], &cf, Some(txn));
        maybe_blocking(false, || {
            tables
                .iter()
                .try_for_each(|t| keel_sql::trigger::fire_truncate(t, timing, txn, &mut ev))
        })
    }

    /// Waits until what the current transaction built on is visible to its next snapshot (see
    /// `Engine::settle`). Call before any statement that reads through its snapshot.
    pub(crate) async fn settle(&self) -> PgResult<()> {
        match &self.txn {
            Some(t) => self.engine.settle(t).await,
            None => Ok(()),
        }
    }

    /// Runs a ModifyExec to completion, awaiting row locks without blocking the thread.
    pub(crate) async fn drive_modify(
        &mut self,
        m: &ModifyPlan,
        exec: &mut ModifyExec,
        params: &[Datum],
    ) -> PgResult<()> {
        let r = self.drive_modify_steps(m, exec, params).await;
        if let Some(txn) = self.txn.as_ref() {
            txn.leave_row_queue();
        }
        r
    }

    async fn drive_modify_steps(
        &mut self,
        m: &ModifyPlan,
        exec: &mut ModifyExec,
        params: &[Datum],
    ) -> PgResult<()> {
        if self.txn.as_ref().is_some_and(|t| t.read_only) {
            return Err(keel_common::PgError::new(
                keel_common::sqlstate::READ_ONLY_SQL_TRANSACTION,
                format!(
                    "cannot execute {} in a read-only transaction",
                    match m.kind {
                        keel_sql::plan::ModifyKind::Insert { .. } => "INSERT",
                        keel_sql::plan::ModifyKind::Update { .. } => "UPDATE",
                        keel_sql::plan::ModifyKind::Delete { .. } => "DELETE",
                    }
                ),
            ));
        }
        let cancel = self.cancel.clone();
        let cheap = m.is_cheap() && exec.pending() <= 16;
        let deadline = self.deadline;
        loop {
            let step = {
                let cf = cancel_check(&cancel);
                let Some(txn) = self.txn.as_mut() else {
                    return Err(keel_common::PgError::internal("no transaction"));
                };
                let mut ev = eval_cx(stmt_env!(self), params, &cf, None);
                maybe_blocking(cheap, || exec.step(m, &self.engine, txn, &mut ev))?
            };
            match step {
                Step::Done => return Ok(()),
                Step::Wait(w) => {
                    // Output stays buffered across the wait, as in PostgreSQL: a flush here
                    // cost every waiting statement an extra send and an extra client wake-up.
                    let Some(txn) = self.txn.as_ref() else {
                        return Err(keel_common::PgError::internal("no transaction"));
                    };
                    await_row(&self.engine, txn, w, &cancel, deadline).await?;
                }
            }
        }
    }

    /// Sends the warnings functions raised while the statement ran (they go out even when
    /// it then failed, as PostgreSQL sends each when raised).
    pub(crate) fn send_warnings<C: Client>(&mut self, client: &mut C) {
        for w in self.funcs.warnings.drain(..) {
            client.notice(&w);
        }
    }

    pub(crate) fn in_block(&self) -> bool {
        self.block != Block::Idle
    }
}

/// Awaits a row lock (`Engine::wait`) until the statement's deadline or a cancel request.
pub(crate) async fn await_row(
    engine: &keel_access::Engine,
    txn: &keel_access::Transaction,
    wait: keel_access::RowWait,
    cancel: &keel_wire::CancelToken,
    deadline: Option<std::time::Instant>,
) -> PgResult<()> {
    let waited = engine.wait(txn, wait, cancel.cancelled());
    match deadline {
        Some(d) => match tokio::time::timeout_at(tokio::time::Instant::from_std(d), waited).await {
            Ok(r) => r,
            Err(_) => Err(keel_sql::expr::statement_timeout()),
        },
        None => waited.await,
    }
}

/// The tables a TRUNCATE empties that have TRUNCATE triggers, in the order named (others,
/// and other statements: none).
fn truncate_triggered(
    stmt: &keel_sql::ast::Statement,
    cat: &keel_catalog::Catalog,
) -> Vec<Arc<keel_catalog::TableDef>> {
    let keel_sql::ast::Statement::Truncate(t) = stmt else {
        return Vec::new();
    };
    t.table_names
        .iter()
        .filter_map(|n| {
            let name = keel_sql::bind::fold(n.name.0.last()?.as_ident()?);
            cat.table(&name).ok().cloned()
        })
        .filter(|t| t.triggers.iter().any(|tr| tr.on_truncate))
        .collect()
}
