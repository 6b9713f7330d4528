//! Running EXPLAIN: the plan's text, and for EXPLAIN ANALYZE the statement run with every
//! operator instrumented (writes really happen, as in PostgreSQL).

use crate::exec::{Rows, eval_cx, maybe_blocking, stmt_env};
use crate::session::Session;
use keel_common::{PgError, PgResult};
use keel_sql::exec::ModifyExec;
use keel_sql::exec::instrument::Instrumentation;
use keel_sql::explain::Explain;
use keel_sql::plan::{ModifyKind, ModifyPlan, Plan, QueryPlan};
use keel_sql::{EngineSizes, Stmt};
use keel_types::Datum;
use keel_wire::Client;
use std::time::Instant;

use keel_common::settings::find_def;
use keel_sql::explain::{
    RunPruned, Summary, count_nodes, explain_modify, explain_query, run_prunes,
};

/// Settings PostgreSQL marks as affecting planning (`GUC_EXPLAIN`) that keel has: `EXPLAIN
/// (SETTINGS)` lists those whose value differs from the built-in default, in name order.
const PLANNER_SETTINGS: &[&str] = &[
    "hash_mem_multiplier",
    "jit",
    "max_parallel_workers_per_gather",
    "plan_cache_mode",
    "search_path",
    "work_mem",
];

impl Session {
    /// The rows of `EXPLAIN ...` (one text row per line, or one JSON document) and its
    /// command tag.
    /// `at` is the EXPLAIN's character offset in the query string.
    pub(crate) async fn explain<C: Client>(
        &mut self,
        e: &Explain,
        at: usize,
        params: &[Datum],
        _client: &mut C,
    ) -> PgResult<(Rows, String)> {
        // EXPLAIN EXECUTE: the prepared statement's plan, with the arguments' values.
        let target = match self.executed(&e.stmt, at)? {
            Some((inner, values)) => {
                let newer = self.lock_plan(&inner).await?;
                Some((newer.unwrap_or(inner), values))
            }
            None => None,
        };
        let (stmt, params) = match &target {
            Some((inner, values)) => (&inner.stmt, values.as_slice()),
            None => (&e.stmt, params),
        };
        let settings = if e.opts.settings {
            self.changed_planner_settings()
        } else {
            Vec::new()
        };
        let run_pruned = self.run_pruned(stmt, params)?;
        let mut lines = if e.opts.analyze {
            let mut summary = Summary {
                settings,
                planning_buffers: e.opts.buffers.then_some(e.planning_buffers),
                planning_ms: e.opts.summary.then_some(e.planning_ms),
                triggers: None,
                execution_ms: None,
                run_pruned,
            };
            self.explain_analyze(e, stmt, params, &mut summary).await?
        } else {
            let sizes = EngineSizes(&self.engine);
            e.plan_lines(stmt, &self.catalog(), &sizes, settings, run_pruned)?
        };
        let rows = lines
            .drain(..)
            .map(|l| vec![Datum::Text(l)])
            .collect::<Vec<_>>();
        Ok((rows, "EXPLAIN".to_string()))
    }

    /// The planner settings changed from their defaults, as SHOW prints their values.
    fn changed_planner_settings(&self) -> Vec<(String, String)> {
        PLANNER_SETTINGS
            .iter()
            .filter_map(|name| {
                let def = find_def(name)?;
                if self.settings.raw(def.name) == def.default {
                    return None;
                }
                let (n, v) = self.settings.show(def.name).ok()?;
                Some((n.to_string(), v))
            })
            .collect()
    }

    /// For each Append in `stmt` pruned when it starts, the children that run with `params`
    /// (see [`keel_sql::explain::RunPruned`]).
    fn run_pruned(&mut self, stmt: &Stmt, params: &[Datum]) -> PgResult<RunPruned> {
        let roots: Vec<&Plan> = match stmt {
            Stmt::Query(q) => vec![&q.root],
            Stmt::Modify(m) => {
                let source = match &m.kind {
                    ModifyKind::Insert { source, .. } => Some(source),
                    _ => None,
                };
                source.into_iter().chain(m.targets.as_deref()).collect()
            }
            _ => vec![],
        };
        let prunes: Vec<_> = roots.into_iter().flat_map(run_prunes).collect();
        let mut out = RunPruned::default();
        if prunes.is_empty() {
            return Ok(out);
        }
        self.ensure_txn();
        let cf = self.cancel_check();
        let txn = self.txn.as_ref();
        let mut ev = eval_cx(stmt_env!(self), params, &cf, txn);
        for p in prunes {
            let kept = keel_sql::exec::append::run_pruned(p, &mut ev)?;
            out.insert(std::sync::Arc::as_ptr(p) as usize, kept);
        }
        Ok(out)
    }

    async fn explain_analyze(
        &mut self,
        e: &Explain,
        stmt: &Stmt,
        params: &[Datum],
        summary: &mut Summary,
    ) -> PgResult<Vec<String>> {
        let started = Instant::now();
        let (ins, fk_calls) = match stmt {
            Stmt::Query(q) => (self.analyze_query(q, e.opts.timing, params).await?, vec![]),
            Stmt::Modify(m) => self.analyze_modify(m, e.opts.timing, params).await?,
            _ => return Err(PgError::internal("EXPLAIN of a statement without a plan")),
        };
        let execution_ms = started.elapsed().as_secs_f64() * 1e3;
        let sizes = EngineSizes(&self.engine);
        let cat = self.catalog();
        let actual = |id: usize| ins.actual(id);
        summary.triggers = Some(fk_calls);
        summary.execution_ms = e.opts.summary.then_some(execution_ms);
        Ok(match stmt {
            Stmt::Query(q) => explain_query(q, &cat, &sizes, &e.opts, Some(&actual), summary),
            Stmt::Modify(m) => explain_modify(m, &cat, &sizes, &e.opts, Some(&actual), summary),
            _ => vec![],
        })
    }

    /// Runs a query to its end with its operators counted, discarding its rows.
    async fn analyze_query(
        &mut self,
        q: &QueryPlan,
        timing: bool,
        params: &[Datum],
    ) -> PgResult<std::sync::Arc<Instrumentation>> {
        self.settle().await?;
        self.ensure_txn();
        let Some(txn) = self.txn.as_mut() else {
            return Err(PgError::internal("no transaction"));
        };
        self.engine.start_statement(txn);
        let locking = q.row_locking().is_some();
        if locking {
            self.engine.row_lock_xid(txn)?;
        }
        let cf = self.cancel_check();
        let (cancel, deadline) = (self.cancel.clone(), self.deadline);
        let txn = self
            .txn
            .as_ref()
            .ok_or_else(|| PgError::internal("no transaction"))?;
        let mut ev = eval_cx(stmt_env!(self), params, &cf, Some(txn));
        ev.subplans = q.subplans.clone();
        let ins = Instrumentation::new(count_nodes(&q.root), timing);
        let mut root = keel_sql::exec::build_instrumented(&q.root, &self.engine, txn, &ins)?;
        let r = loop {
            let done = maybe_blocking(q.root.is_cheap(), || -> PgResult<()> {
                while root.next(&mut ev)?.is_some() {
                    ev.tick()?;
                }
                Ok(())
            });
            match done {
                Err(e) if keel_sql::exec::lockrows::is_row_wait(&e) => {
                    let Some(w) = root.take_row_wait() else {
                        break Err(e);
                    };
                    if let Err(e) =
                        crate::exec::await_row(&self.engine, txn, w, &cancel, deadline).await
                    {
                        break Err(e);
                    }
                }
                other => break other,
            }
        };
        if locking {
            txn.leave_row_queue();
        }
        r.map(|()| ins)
    }

    /// Runs a write with its source counted; returns the counters and, for an INSERT, the
    /// foreign keys checked with the number of rows each was checked for.
    async fn analyze_modify(
        &mut self,
        m: &ModifyPlan,
        timing: bool,
        params: &[Datum],
    ) -> PgResult<(std::sync::Arc<Instrumentation>, Vec<(String, u64)>)> {
        if m.reads_tables() {
            self.settle().await?;
        }
        self.ensure_txn();
        let Some(txn) = self.txn.as_mut() else {
            return Err(PgError::internal("no transaction"));
        };
        self.engine.start_statement(txn);
        let view_rows = m.instead_of.as_ref().and_then(|i| i.rows.as_ref());
        let nodes = match (&m.kind, view_rows) {
            (ModifyKind::Insert { source, .. }, _) => 1 + count_nodes(source),
            (_, Some(rows)) => 1 + count_nodes(rows),
            _ => 2,
        };
        let ins = Instrumentation::new(nodes, timing);
        let mut exec = ModifyExec::new();
        exec.instrument = Some(ins.clone());
        let started = Instant::now();
        let before = (std::thread::current().id(), keel_storage::usage::current());
        self.drive_modify(m, &mut exec, params).await?;
        // The write node returns no rows (RETURNING aside), as PostgreSQL's ModifyTable.
        ins.add_rows(0, 0);
        let total = started.elapsed();
        ins.set_time(0, total, total);
        // The write's pages, its source's included: the per-thread counters measure them
        // only if the statement stayed on one thread (it may move while it waits for a lock).
        if before.0 == std::thread::current().id() {
            ins.add_buffers(0, keel_storage::usage::current() - before.1);
        }
        let fks = match &m.kind {
            ModifyKind::Insert { .. } if exec.count > 0 => {
                m.fks.iter().map(|f| (f.name.clone(), exec.count)).collect()
            }
            _ => vec![],
        };
        Ok((ins, fks))
    }
}
