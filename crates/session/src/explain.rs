//! Running EXPLAIN: the plan's text, and for EXPLAIN ANALYZE the statement run with every
//! operator instrumented (writes really happen, as in PostgreSQL).

use crate::exec::{Rows, eval_cx, maybe_blocking, stmt_env};
use crate::session::Session;
use keel_common::{PgError, PgResult};
use keel_sql::exec::ModifyExec;
use keel_sql::exec::instrument::Instrumentation;
use keel_sql::explain::Explain;
use keel_sql::plan::{ModifyKind, ModifyPlan, QueryPlan};
use keel_sql::{EngineSizes, Stmt};
use keel_types::Datum;
use keel_wire::Client;
use std::time::Instant;

use keel_sql::explain::{count_nodes, explain_modify, explain_query};

impl Session {
    /// The rows of `EXPLAIN ...` (one text row per line) and its command tag.
    pub(crate) async fn explain<C: Client>(
        &mut self,
        e: &Explain,
        params: &[Datum],
        _client: &mut C,
    ) -> PgResult<(Rows, String)> {
        let mut lines = if e.opts.analyze {
            self.explain_analyze(e, params).await?
        } else {
            let sizes = EngineSizes(&self.engine);
            let cat = self.catalog();
            let mut lines = match &e.stmt {
                Stmt::Query(q) => explain_query(q, &cat, &sizes, &e.opts, None),
                Stmt::Modify(m) => explain_modify(m, &cat, &sizes, &e.opts, None),
                _ => return Err(PgError::internal("EXPLAIN of a statement without a plan")),
            };
            if e.opts.summary {
                lines.push(format!("Planning Time: {:.3} ms", e.planning_ms));
            }
            lines
        };
        let rows = lines
            .drain(..)
            .map(|l| vec![Datum::Text(l)])
            .collect::<Vec<_>>();
        Ok((rows, "EXPLAIN".to_string()))
    }

    async fn explain_analyze(&mut self, e: &Explain, params: &[Datum]) -> PgResult<Vec<String>> {
        let started = Instant::now();
        let (ins, fk_calls) = match &e.stmt {
            Stmt::Query(q) => (self.analyze_query(q, e.opts.timing, params).await?, vec![]),
            Stmt::Modify(m) => self.analyze_modify(m, e.opts.timing, params).await?,
            _ => return Err(PgError::internal("EXPLAIN of a statement without a plan")),
        };
        let execution_ms = started.elapsed().as_secs_f64() * 1e3;
        let sizes = EngineSizes(&self.engine);
        let cat = self.catalog();
        let actual = |id: usize| ins.actual(id);
        let mut lines = match &e.stmt {
            Stmt::Query(q) => explain_query(q, &cat, &sizes, &e.opts, Some(&actual)),
            Stmt::Modify(m) => explain_modify(m, &cat, &sizes, &e.opts, Some(&actual)),
            _ => vec![],
        };
        if e.opts.summary {
            lines.push(format!("Planning Time: {:.3} ms", e.planning_ms));
        }
        for (name, calls) in fk_calls {
            // PostgreSQL checks foreign keys in AFTER triggers and reports each; keel checks
            // them row by row inside the write, whose time includes theirs, so no separate
            // time is printed (PostgreSQL's TIMING OFF form).
            lines.push(format!("Trigger for constraint {name}: calls={calls}"));
        }
        if e.opts.summary {
            lines.push(format!("Execution Time: {execution_ms:.3} ms"));
        }
        Ok(lines)
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
        let cf = self.cancel_check();
        let txn = self
            .txn
            .as_ref()
            .ok_or_else(|| PgError::internal("no transaction"))?;
        let mut ev = eval_cx(stmt_env!(self), params, &cf, Some(txn));
        ev.subplans = q.subplans.clone();
        let ins = Instrumentation::new(count_nodes(&q.root), timing);
        let mut root = keel_sql::exec::build_instrumented(&q.root, &self.engine, txn, &ins)?;
        maybe_blocking(q.root.is_cheap(), || -> PgResult<()> {
            while root.next(&mut ev)?.is_some() {
                ev.tick()?;
            }
            Ok(())
        })?;
        Ok(ins)
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
        let nodes = match &m.kind {
            ModifyKind::Insert { source, .. } => 1 + count_nodes(source),
            _ => 2,
        };
        let ins = Instrumentation::new(nodes, timing);
        let mut exec = ModifyExec::new();
        exec.instrument = Some(ins.clone());
        let started = Instant::now();
        self.drive_modify(m, &mut exec, params).await?;
        // The write node returns no rows (RETURNING aside), as PostgreSQL's ModifyTable.
        ins.add_rows(0, 0);
        let total = started.elapsed();
        ins.set_time(0, total, total);
        let fks = match &m.kind {
            ModifyKind::Insert { .. } if exec.count > 0 => {
                m.fks.iter().map(|f| (f.name.clone(), exec.count)).collect()
            }
            _ => vec![],
        };
        Ok((ins, fks))
    }
}
