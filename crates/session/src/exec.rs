//! Running one bound statement inside the session's transaction.

use crate::describe::{RowWriter, fields, text_column};
use crate::session::{Block, Session, cancel_check};
use keel_common::{PgResult, Settings};
use keel_sql::exec::{ModifyExec, Step, run_query};
use keel_sql::expr::{EvalCx, SessionFuncs};
use keel_sql::plan::{ModifyPlan, OutColumn};
use keel_sql::utility::Utility;
use keel_sql::{Prepared, Stmt};
use keel_types::Datum;
use keel_wire::Client;
use std::sync::Arc;

pub type Rows = Vec<Vec<Datum>>;

/// An evaluation context for the statement running now; `deadline` is the session's
/// [`Session::deadline`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn eval_cx<'a>(
    engine: &'a keel_access::Engine,
    params: &'a [Datum],
    funcs: &'a mut SessionFuncs,
    settings: &'a Settings,
    pid: i32,
    cancel: &'a (dyn Fn() -> bool + Sync),
    txn: Option<&'a keel_access::Transaction>,
    deadline: Option<std::time::Instant>,
) -> EvalCx<'a> {
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
        deadline,
        ticker: Default::default(),
        blocking: run_blocking,
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
        if let Stmt::Query(_) = &prep.stmt {
            return self.stream_query(prep, params, formats, client).await;
        }
        let (rows, tag) = self.run_collect(prep, params, formats, client).await?;
        if let Some(cols) = self.columns_of(prep) {
            client.row_description(&fields(&cols, formats));
            let mut w = RowWriter::new();
            for r in &rows {
                w.send(client, r, &cols, formats);
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
    /// RowDescription goes out before the first row, so an error raised by a later row
    /// follows the rows already sent, as PostgreSQL's does.
    async fn stream_query<C: Client>(
        &mut self,
        prep: &Arc<Prepared>,
        params: &[Datum],
        formats: &[i16],
        client: &mut C,
    ) -> PgResult<()> {
        self.statement_started();
        let newer = self.replanned(prep, &prep.params)?;
        let prep = newer.as_ref().unwrap_or(prep);
        let Stmt::Query(q) = &prep.stmt else {
            return Err(keel_common::PgError::internal("not a query"));
        };
        let cols = self.columns_of(prep).unwrap_or_default();
        self.settle().await?;
        self.ensure_txn();
        let Some(txn) = self.txn.as_mut() else {
            return Err(keel_common::PgError::internal("no transaction"));
        };
        self.engine.start_statement(txn);
        let cf = self.cancel_check();
        let txn = self
            .txn
            .as_ref()
            .ok_or_else(|| keel_common::PgError::internal("no transaction"))?;
        let mut ev = eval_cx(
            &self.engine,
            params,
            &mut self.funcs,
            &self.settings,
            self.pid,
            &cf,
            Some(txn),
            self.deadline,
        );
        let cheap = q.root.is_cheap();
        let mut root = keel_sql::exec::build(&q.root, &self.engine, txn);
        client.row_description(&fields(&cols, formats));
        let mut w = RowWriter::new();
        let mut n = 0u64;
        loop {
            let done = maybe_blocking(cheap, || -> PgResult<bool> {
                while let Some(r) = root.next(&mut ev)? {
                    w.send(client, &r, &cols, formats);
                    n += 1;
                    ev.tick()?;
                    if client.wants_flush() {
                        return Ok(false);
                    }
                }
                Ok(true)
            })?;
            if done {
                break;
            }
            client.flush().await?;
        }
        client.command_complete(&format!("SELECT {n}"));
        Ok(())
    }

    /// Runs a statement and returns its rows (materialized) and its command tag. Notices and
    /// COPY traffic go to `client` directly.
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
            Stmt::Utility(u) => self.utility(u, client).await,
            Stmt::Query(_) | Stmt::Modify(_) => {
                // The catalog may have changed since the statement was bound (DDL).
                let newer = self.replanned(prep, &prep.params)?;
                let prep = newer.as_ref().unwrap_or(prep);
                let reads = match &prep.stmt {
                    Stmt::Modify(m) => m.reads_tables(),
                    _ => true,
                };
                if reads {
                    self.settle().await?;
                }
                self.ensure_txn();
                let Some(txn) = self.txn.as_mut() else {
                    return Err(keel_common::PgError::internal("no transaction"));
                };
                self.engine.start_statement(txn);
                match &prep.stmt {
                    Stmt::Query(q) => {
                        let cf = self.cancel_check();
                        let txn = self
                            .txn
                            .as_ref()
                            .ok_or_else(|| keel_common::PgError::internal("no transaction"))?;
                        let mut ev = eval_cx(
                            &self.engine,
                            params,
                            &mut self.funcs,
                            &self.settings,
                            self.pid,
                            &cf,
                            Some(txn),
                            self.deadline,
                        );
                        let rows = maybe_blocking(q.root.is_cheap(), || {
                            run_query(q, &self.engine, txn, &mut ev)
                        })?;
                        let n = rows.len() as u64;
                        Ok((rows, format!("SELECT {n}")))
                    }
                    Stmt::Modify(m) => {
                        let mut exec = ModifyExec::new();
                        self.drive_modify(m, &mut exec, params).await?;
                        let tag = keel_sql::command_tag(&prep.stmt, exec.count);
                        Ok((std::mem::take(&mut exec.returned), tag))
                    }
                    _ => Ok((vec![], String::new())),
                }
            }
            Stmt::Ddl(stmt) => {
                if self.txn.as_ref().is_some_and(|t| t.read_only) {
                    return Err(keel_common::PgError::new(
                        keel_common::sqlstate::READ_ONLY_SQL_TRANSACTION,
                        "cannot execute DDL in a read-only transaction",
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
                self.settle().await?;
                self.ensure_txn();
                let Some(txn) = self.txn.as_mut() else {
                    return Err(keel_common::PgError::internal("no transaction"));
                };
                self.engine.start_statement(txn);
                let cf = cancel_check(&self.cancel);
                let interrupt = keel_sql::ddl::Interrupt {
                    cancel: &cf,
                    deadline: self.deadline,
                };
                // Off the async worker: validating a CHECK scans and evaluates every row.
                let out = maybe_blocking(false, || {
                    keel_sql::ddl::execute_ddl(stmt, &self.engine, txn, &interrupt)
                })?;
                for n in &out.notices {
                    client.notice(n);
                }
                Ok((vec![], out.tag))
            }
        }
    }

    /// Waits until what the current transaction built on is visible to its next snapshot (see
    /// `Engine::settle`). Call before any statement that reads through its snapshot.
    pub(crate) async fn settle(&self) -> PgResult<()> {
        match &self.txn {
            Some(t) => self.engine.settle(t).await,
            None => Ok(()),
        }
    }

    /// Runs the query of a COPY TO (part of the COPY statement: its statement_timeout
    /// counts from the COPY's start) and returns its rows. Call `settle` first. Off the async
    /// worker: it may scan a whole table.
    pub(crate) fn query_rows(&mut self, prep: &Arc<Prepared>) -> PgResult<Rows> {
        let Stmt::Query(q) = &prep.stmt else {
            return Err(keel_common::PgError::internal("not a query"));
        };
        self.ensure_txn();
        let Some(txn) = self.txn.as_mut() else {
            return Err(keel_common::PgError::internal("no transaction"));
        };
        self.engine.start_statement(txn);
        let cf = self.cancel_check();
        let txn = self
            .txn
            .as_ref()
            .ok_or_else(|| keel_common::PgError::internal("no transaction"))?;
        let mut ev = eval_cx(
            &self.engine,
            &[],
            &mut self.funcs,
            &self.settings,
            self.pid,
            &cf,
            Some(txn),
            self.deadline,
        );
        maybe_blocking(q.root.is_cheap(), || {
            run_query(q, &self.engine, txn, &mut ev)
        })
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
                let mut ev = eval_cx(
                    &self.engine,
                    params,
                    &mut self.funcs,
                    &self.settings,
                    self.pid,
                    &cf,
                    None,
                    deadline,
                );
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
                    match deadline {
                        Some(d) => {
                            let d = tokio::time::Instant::from_std(d);
                            match tokio::time::timeout_at(
                                d,
                                self.engine.wait(txn, w, cancel.cancelled()),
                            )
                            .await
                            {
                                Ok(r) => r?,
                                Err(_) => return Err(keel_sql::expr::statement_timeout()),
                            }
                        }
                        None => self.engine.wait(txn, w, cancel.cancelled()).await?,
                    }
                }
            }
        }
    }

    pub(crate) fn in_block(&self) -> bool {
        self.block != Block::Idle
    }
}
