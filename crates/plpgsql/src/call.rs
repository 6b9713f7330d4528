//! Calls of LANGUAGE plpgsql functions from inside a running statement: the executor's host.
//!
//! The executor reaches [`call_function`] through the handler [`register`] installs. The
//! body runs synchronously on the caller's thread, in the caller's transaction:
//! - each statement of the body starts as a statement of its own (a new command id, and in
//!   READ COMMITTED a new snapshot), as in a VOLATILE PostgreSQL function; STABLE and
//!   IMMUTABLE functions run theirs in the caller's snapshot. The caller's snapshot comes
//!   back when the call returns, so its later scans read as it began;
//! - statements take their relation locks, and row locks held by others are waited for,
//!   by blocking the thread (`EvalCx::blocking` first hands the async worker's other
//!   sessions to another thread, as pg_sleep does);
//! - utility statements and DDL answer 0A000 inside a function for now (a DO block runs
//!   them).
//!
//! The parsed body and the plans of its statements are kept in the call site
//! (`UserCall::body`), so a prepared statement that calls a function plans the function's
//! statements once; a changed catalog (OR REPLACE, DDL on a table the body reads) plans
//! them again.

use crate::interp::{Flow, PlState, run_body};
use crate::vars::Var;
use crate::{BoxFut, Host, Ran};
use keel_access::{LockLimits, Transaction};
use keel_catalog::{ArgMode, Catalog, FuncVolatility};
use keel_common::{PgError, PgResult, sqlstate};
use keel_sql::exec::ModifyExec;
use keel_sql::exec::lockrows::is_row_wait;
use keel_sql::expr::{EvalCx, UserCall};
use keel_sql::{Prepared, Stmt};
use keel_types::cast::{CastContext, cast};
use keel_types::{Datum, TypeId};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Installs [`call_function`] as the executor's LANGUAGE plpgsql handler, and
/// [`fire_trigger`](crate::trigger::fire_trigger) as its trigger handler.
pub fn register() {
    keel_sql::sqlfunc::set_plpgsql_handler(call_function, call_function_rows);
    keel_sql::sqlfunc::set_sql_body_handler(crate::sqlbody::run_sql_body);
    keel_sql::trigger::set_trigger_handler(crate::trigger::fire_trigger);
}

/// A function ready to run: its parsed body and its statements' plans. One per function
/// definition, shared by every call site and session (as PostgreSQL keeps a compiled
/// function per backend): a recursive function is parsed once, not once per level.
pub(crate) struct Compiled {
    def: Arc<keel_catalog::FunctionDef>,
    pub(crate) body: keel_pl::Body,
    plans: Mutex<StatementPlans>,
}

/// Plans by parameterized text, parameter types, the variables the parameters stand for
/// (the same text binds differently when a variable is also a column), and the transition
/// tables in scope, by name and table (a trigger function may serve several triggers).
type StatementPlans = rustc_hash::FxHashMap<PlanKey, Arc<Prepared>>;
type PlanKey = (String, Vec<TypeId>, Vec<Option<String>>, Vec<(String, u32)>);

/// Compiled functions by oid and the types of their parameters and result (a polymorphic
/// function compiles once per set of types its calls bind, as PostgreSQL's plpgsql does); an
/// entry whose definition is no longer the caller's (OR REPLACE, DROP and CREATE again) is
/// replaced at its next call.
type CompiledKey = (u32, Vec<TypeId>);
static COMPILED: std::sync::LazyLock<Mutex<rustc_hash::FxHashMap<CompiledKey, Arc<Compiled>>>> =
    std::sync::LazyLock::new(Default::default);

/// How many statement plans one function keeps (a body has a bounded number of statements;
/// dynamic EXECUTE text is not kept).
const PLANS_PER_FUNCTION: usize = 256;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

fn compiled(call: &UserCall) -> PgResult<Arc<Compiled>> {
    if let Some(p) = call.body.get()
        && let Ok(c) = p.clone().downcast::<Compiled>()
    {
        return Ok(c);
    }
    let c = compiled_def(&call.def)?;
    let _ = call.body.set(c.clone());
    Ok(c)
}

/// The compiled form of function `def`: the one kept for its oid while its definition is the
/// same, else parsed now.
pub(crate) fn compiled_def(def: &Arc<keel_catalog::FunctionDef>) -> PgResult<Arc<Compiled>> {
    let mut types: Vec<TypeId> = def.args.iter().map(|a| a.ty.id).collect();
    types.push(def.ret.id);
    let key = (def.oid, types);
    let known = lock(&COMPILED)
        .get(&key)
        .filter(|c| Arc::ptr_eq(&c.def, def) || *c.def == **def)
        .cloned();
    if let Some(c) = known {
        return Ok(c);
    }
    let body =
        keel_pl::parse_function_body_named(&def.body, &def.proname).map_err(|e| e.error.clone())?;
    let c = Arc::new(Compiled {
        def: def.clone(),
        body,
        plans: Default::default(),
    });
    lock(&COMPILED).insert(key, c.clone());
    Ok(c)
}

/// The function's name as PostgreSQL's CONTEXT lines print it: `f(integer,text)`.
/// The declared types, so a polymorphic function shows as `f(anyelement)` whatever a call
/// bound them to.
fn display_name(call: &UserCall) -> String {
    call.def.signature.replace(", ", ",")
}

/// Runs one call of a LANGUAGE plpgsql function with its argument values: its value.
pub fn call_function(call: &UserCall, args: Vec<Datum>, cx: &mut EvalCx<'_>) -> PgResult<Datum> {
    if call.def.set_returning {
        return Err(PgError::unsupported(
            "set-returning PL/pgSQL functions outside FROM",
        ));
    }
    let (flow, mut st) = run_call(call, args, cx, false)?;
    scalar_result(call, flow, &mut st)
}

/// Runs one call of a LANGUAGE plpgsql function in FROM: its rows (a set-returning
/// function's RETURN NEXT and RETURN QUERY rows; one row for the others), each a value per
/// result column.
pub fn call_function_rows(
    call: &UserCall,
    args: Vec<Datum>,
    cx: &mut EvalCx<'_>,
) -> PgResult<Vec<Vec<Datum>>> {
    let def = &call.def;
    let (flow, mut st) = run_call(call, args, cx, def.set_returning)?;
    if def.set_returning {
        return Ok(st.ret_rows.take().unwrap_or_default());
    }
    if !st.out_names.is_empty() && st.ret.is_none() {
        return Ok(vec![st.out_values_cast()?]);
    }
    let v = scalar_result(call, flow, &mut st)?;
    // A composite result in FROM is a row of its fields (all NULL for a NULL row).
    if st.result_composite() && st.result_types.len() > 1 || def.row_type.is_some() {
        return Ok(vec![match v {
            Datum::Record(r) => r.values.clone(),
            _ => vec![Datum::Null; st.result_types.len()],
        }]);
    }
    Ok(vec![vec![v]])
}

/// The checks and variables of a call, then its body run: parameters by name and as `$n`,
/// OUT and RETURNS TABLE parameters as variables starting NULL.
fn run_call(
    call: &UserCall,
    args: Vec<Datum>,
    cx: &mut EvalCx<'_>,
    set_returning: bool,
) -> PgResult<(Flow, PlState)> {
    keel_common::stack::check()?;
    let def = &call.def;
    if def.ret.id == TypeId::Trigger {
        return Err(PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "trigger functions can only be called as triggers",
        )
        .with_context_line(format!(
            "compilation of PL/pgSQL function \"{}\" near line 1",
            def.proname
        )));
    }
    let c = compiled(call)?;
    let txn = cx
        .txn
        .ok_or_else(|| PgError::unsupported("a PL/pgSQL function call in this position"))?;
    let mut params = Vec::with_capacity(args.len() * 2);
    for (i, (a, v)) in def.input_args().zip(args).enumerate() {
        let mut var = Var::scalar(&format!("${}", i + 1), a.ty.id, v.clone());
        var.typmod = a.ty.typmod;
        if let Some(n) = &a.name {
            let mut named = Var::scalar(n, a.ty.id, v);
            named.typmod = a.ty.typmod;
            params.push(named);
        }
        params.push(var);
    }
    let mut out_names = Vec::new();
    for (i, a) in def.args.iter().enumerate() {
        if matches!(a.mode, ArgMode::Out | ArgMode::Table) {
            let name = a.name.clone().unwrap_or_else(|| format!("${}", i + 1));
            let mut var = Var::scalar(&name, a.ty.id, Datum::Null);
            var.typmod = a.ty.typmod;
            params.push(var);
            out_names.push(name);
        } else if a.mode == ArgMode::InOut {
            out_names.push(a.name.clone().unwrap_or_else(|| format!("${}", i + 1)));
        }
    }
    let mut st = PlState::new(display_name(call), params);
    st.ret_type = def.row_type.map_or(def.ret.id, TypeId::Composite);
    st.set_options(&c.body.options, cx.settings);
    let columns = call.catalog.result_columns(def);
    st.result_types = match columns.is_empty() {
        false => columns.into_iter().map(|(_, t)| t).collect(),
        true => vec![def.ret],
    };
    st.out_names = out_names;
    if set_returning {
        st.ret_rows = Some(Vec::new());
    }
    let volatile = def.volatility == FuncVolatility::Volatile;
    // A trigger's transition tables are its own function's: a function it calls does not
    // see them (PostgreSQL registers them with the trigger function's SPI connection).
    let transition = std::mem::take(&mut cx.transition);
    let flow = run_in_statement(cx, txn, &c, &c.body.block, volatile, &mut st);
    cx.transition = transition;
    Ok((flow?, st))
}

/// The value a call returns: RETURN's expression converted to the result type.
fn scalar_result(call: &UserCall, flow: Flow, st: &mut PlState) -> PgResult<Datum> {
    let def = &call.def;
    if def.ret.id == TypeId::Void {
        // void's output is the empty string, not NULL.
        return Ok(Datum::Text(String::new()));
    }
    let casting = |e: PgError| {
        e.with_context_line(format!(
            "PL/pgSQL function {} while casting return value to function's return type",
            st.fname
        ))
    };
    match (flow, st.ret.take()) {
        (_, Some((v, _))) if crate::composite::is_composite(st.ret_type) => {
            crate::composite::returned(v, st.ret_type, &call.catalog).map_err(casting)
        }
        // A composite returned as a scalar is converted through its text, as PostgreSQL's
        // I/O conversion does.
        (_, Some((Datum::Record(r), _))) => {
            let mut text = String::new();
            keel_types::record::write_text(&r, &mut text);
            cast(
                Datum::Text(text),
                TypeId::Text,
                def.ret,
                CastContext::Explicit,
            )
            .map_err(casting)
        }
        (_, Some((v, from))) => {
            if from == def.ret.id || v.is_null() {
                Ok(v)
            } else {
                crate::composite::assign_cast(v, from, def.ret).map_err(casting)
            }
        }
        // One OUT parameter: its value.
        (_, None) if st.out_names.len() == 1 => Ok(st
            .out_values_cast()?
            .into_iter()
            .next()
            .unwrap_or(Datum::Null)),
        (Flow::Return, None) => Ok(Datum::Null),
        _ => Err(PgError::new(
            sqlstate::FUNCTION_EXECUTED_NO_RETURN_STATEMENT,
            "control reached end of function without RETURN",
        )
        .with_context_line(format!("PL/pgSQL function {}", st.fname))),
    }
}

/// Runs `block` (the body of compiled function `c`, or a block made for it) with `st` inside
/// the caller's statement, whose snapshot comes back when it ends.
pub(crate) fn run_in_statement<'e>(
    cx: &mut EvalCx<'e>,
    txn: &'e Transaction,
    c: &Compiled,
    block: &keel_pl::Block,
    volatile: bool,
    st: &mut PlState,
) -> PgResult<Flow> {
    let engine = cx.engine;
    let saved = engine.statement_snapshot(txn);
    let r = {
        let mut host = ExecHost {
            cx: &mut *cx,
            txn,
            compiled: Some(c),
            catalog: txn.catalog(engine),
            volatile,
        };
        complete(run_body(&mut host, st, block))
    };
    engine.resume_statement(txn, saved);
    r
}

/// Polls a body run by the executor's host to its end: it never suspends, so one poll does.
pub(crate) fn complete<T>(mut fut: BoxFut<'_, T>) -> PgResult<T> {
    let mut poll_cx = std::task::Context::from_waker(std::task::Waker::noop());
    match fut.as_mut().poll(&mut poll_cx) {
        std::task::Poll::Ready(r) => r,
        std::task::Poll::Pending => Err(PgError::internal(
            "a PL/pgSQL function body suspended inside a statement",
        )),
    }
}

/// The executor's host: the caller's evaluation context and transaction.
pub(crate) struct ExecHost<'c, 'e> {
    cx: &'c mut EvalCx<'e>,
    txn: &'e Transaction,
    /// Where `prepare` keeps its plans (None: the caller brings plans of its own).
    compiled: Option<&'c Compiled>,
    catalog: Arc<Catalog>,
    volatile: bool,
}

/// A plan `ExecHost::run_plan` runs.
#[derive(Clone, Copy)]
pub(crate) enum PlanRef<'p> {
    Query(&'p keel_sql::plan::QueryPlan),
    Modify(&'p keel_sql::plan::ModifyPlan),
}

/// Runs `wait` to its end on this thread, off the async worker (`blocking`).
fn block_on<T>(
    blocking: fn(&mut dyn FnMut()),
    wait: impl std::future::Future<Output = PgResult<T>> + Send,
) -> PgResult<T> {
    let handle = tokio::runtime::Handle::try_current().map_err(|_| {
        PgError::unsupported("waiting for a lock inside a function outside the server")
    })?;
    let mut wait = Some(Box::pin(wait));
    let mut out = None;
    blocking(&mut || {
        if let Some(w) = wait.take() {
            out = Some(handle.block_on(w));
        }
    });
    out.unwrap_or_else(|| Err(PgError::internal("lock wait did not run")))
}

/// A future that completes once the client cancels the statement (statement_timeout is
/// the waits' own deadline: `LockLimits::statement_deadline`, `timeout_at`).
async fn interrupted(cancel: &(dyn Fn() -> bool + Sync)) {
    while !cancel() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

impl<'c, 'e> ExecHost<'c, 'e> {
    fn lock_limits(&self) -> LockLimits {
        let ms = |name: &str| self.cx.settings.int(name).max(0) as u64;
        LockLimits {
            nowait: false,
            deadlock_timeout: Duration::from_millis(ms("deadlock_timeout").max(1)),
            lock_timeout: match ms("lock_timeout") {
                0 => None,
                n => Some(Duration::from_millis(n)),
            },
            statement_deadline: self.cx.deadline.map(tokio::time::Instant::from_std),
        }
    }

    /// A host for statements planned by the caller, run in `txn` from context `cx`.
    pub(crate) fn new(
        cx: &'c mut EvalCx<'e>,
        txn: &'e Transaction,
        catalog: Arc<Catalog>,
        volatile: bool,
    ) -> Self {
        ExecHost {
            cx,
            txn,
            compiled: None,
            catalog,
            volatile,
        }
    }

    /// Takes relation locks `locks`, waiting for busy ones.
    fn lock(&mut self, locks: &[(u32, keel_access::LockMode)]) -> PgResult<()> {
        let (engine, txn) = (self.cx.engine, self.txn);
        for &(rel, mode) in locks {
            if engine.try_lock_relation(txn, rel, mode) {
                continue;
            }
            let limits = self.lock_limits();
            let interrupted = interrupted(self.cx.cancel);
            block_on(self.cx.blocking, async move {
                engine
                    .lock_relation(txn, rel, mode, &limits, interrupted)
                    .await
                    .map(|_| ())
            })?;
        }
        Ok(())
    }

    /// Awaits a row another transaction holds (blocking the thread).
    fn await_row(&mut self, wait: keel_access::RowWait) -> PgResult<()> {
        await_row(self.cx, self.txn, wait)
    }

    fn run_now(&mut self, prep: &Arc<Prepared>, values: &[Datum]) -> PgResult<Ran> {
        let (names, types): (Vec<String>, Vec<TypeId>) = prep
            .columns()
            .map(|c| c.iter().map(|c| (c.name.clone(), c.ty)).unzip())
            .unwrap_or_default();
        let plan = match &prep.stmt {
            Stmt::Query(q) => PlanRef::Query(q),
            Stmt::Modify(m) => PlanRef::Modify(m),
            Stmt::Explain(e) if !e.opts.analyze => {
                let sizes = keel_sql::EngineSizes(self.cx.engine);
                let lines = e.plan_lines(
                    &e.stmt,
                    &self.catalog,
                    &sizes,
                    Vec::new(),
                    Default::default(),
                )?;
                return Ok(Ran {
                    names,
                    types,
                    count: lines.len() as u64,
                    rows: lines.into_iter().map(|l| vec![Datum::Text(l)]).collect(),
                    writes: false,
                });
            }
            _ => {
                return Err(PgError::unsupported(format!(
                    "{} inside a PL/pgSQL function",
                    keel_sql::command_tag(&prep.stmt, 0)
                )));
            }
        };
        let (rows, count) = self.run_plan(plan, prep.locks(), values)?;
        Ok(Ran {
            names,
            types,
            rows,
            count,
            writes: matches!(plan, PlanRef::Modify(_)),
        })
    }

    /// Runs a query or a write as a statement of the function, after taking relation locks
    /// `locks`: its rows (a write's RETURNING rows) and how many rows it read or wrote.
    pub(crate) fn run_plan(
        &mut self,
        plan: PlanRef<'_>,
        locks: &[(u32, keel_access::LockMode)],
        values: &[Datum],
    ) -> PgResult<(Vec<Vec<Datum>>, u64)> {
        let (engine, txn) = (self.cx.engine, self.txn);
        Ok(match plan {
            PlanRef::Query(q) => {
                self.lock(locks)?;
                if self.volatile {
                    engine.start_statement(txn);
                }
                if q.row_locking().is_some() {
                    engine.row_lock_xid(txn)?;
                }
                let mut ev = self.statement_cx(values);
                let r = (|| -> PgResult<Vec<Vec<Datum>>> {
                    let mut root = keel_sql::exec::open_query(q, engine, txn, &mut ev)?;
                    let mut rows = Vec::new();
                    loop {
                        match root.next(&mut ev) {
                            Ok(Some(r)) => rows.push(r),
                            Ok(None) => return Ok(rows),
                            Err(e) if is_row_wait(&e) => {
                                let Some(w) = root.take_row_wait() else {
                                    return Err(e);
                                };
                                // The wait blocks this thread; the context is not needed.
                                await_row(&ev, txn, w)?;
                            }
                            Err(e) => return Err(e),
                        }
                    }
                })();
                self.cx.ticker = ev.ticker;
                if q.row_locking().is_some() {
                    txn.leave_row_queue();
                }
                let rows = r?;
                let n = rows.len() as u64;
                (rows, n)
            }
            PlanRef::Modify(m) => {
                if txn.read_only {
                    return Err(PgError::new(
                        sqlstate::READ_ONLY_SQL_TRANSACTION,
                        "cannot execute a write in a read-only transaction",
                    ));
                }
                if !self.volatile {
                    return Err(PgError::new(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!(
                            "{} is not allowed in a non-volatile function",
                            match m.kind {
                                keel_sql::plan::ModifyKind::Insert { .. } => "INSERT",
                                keel_sql::plan::ModifyKind::Update { .. } => "UPDATE",
                                keel_sql::plan::ModifyKind::Delete { .. } => "DELETE",
                            }
                        ),
                    ));
                }
                self.lock(locks)?;
                engine.start_statement(txn);
                let mut exec = ModifyExec::new();
                let r = loop {
                    let mut ev = self.statement_cx(values);
                    let step = exec.step(m, engine, txn, &mut ev);
                    self.cx.ticker = ev.ticker;
                    match step {
                        Ok(keel_sql::exec::Step::Done) => break Ok(()),
                        Ok(keel_sql::exec::Step::Wait(w)) => {
                            if let Err(e) = self.await_row(w) {
                                break Err(e);
                            }
                        }
                        Err(e) => break Err(e),
                    }
                };
                txn.leave_row_queue();
                r?;
                (std::mem::take(&mut exec.returned), exec.count)
            }
        })
    }

    /// A statement's evaluation context: the caller's, with the statement's parameters.
    fn statement_cx<'s>(&'s mut self, values: &'s [Datum]) -> EvalCx<'s> {
        let cx = &mut *self.cx;
        EvalCx {
            params: values,
            fctx: &mut *cx.fctx,
            engine: cx.engine,
            settings: cx.settings,
            pid: cx.pid,
            cancel: cx.cancel,
            txn: Some(self.txn),
            outer: &[],
            subq: Default::default(),
            subplans: Default::default(),
            deadline: cx.deadline,
            ticker: cx.ticker,
            blocking: cx.blocking,
            mem: cx.mem,
            transition: cx.transition,
        }
    }
}

/// Awaits a row another transaction holds, blocking this thread, until the statement's
/// deadline (57014 "statement timeout") or a cancel.
fn await_row(ev: &EvalCx<'_>, txn: &Transaction, wait: keel_access::RowWait) -> PgResult<()> {
    let engine = ev.engine;
    let deadline = ev.deadline;
    let interrupted = interrupted(ev.cancel);
    block_on(ev.blocking, async move {
        let waited = engine.wait(txn, wait, interrupted);
        match deadline {
            Some(d) => {
                match tokio::time::timeout_at(tokio::time::Instant::from_std(d), waited).await {
                    Ok(r) => r,
                    Err(_) => Err(keel_sql::expr::statement_timeout()),
                }
            }
            None => waited.await,
        }
    })
}

impl Host for ExecHost<'_, '_> {
    fn check_interrupts(&self) -> PgResult<()> {
        keel_sql::interrupt::check(&self.cx.cancel, self.cx.deadline, std::time::Instant::now())
    }

    fn catalog(&self) -> Arc<Catalog> {
        self.catalog.clone()
    }

    fn prepare(
        &mut self,
        text: &str,
        types: &[TypeId],
        vars: &keel_sql::bind::PlVars,
    ) -> PgResult<Arc<Prepared>> {
        let compiled = self
            .compiled
            .ok_or_else(|| PgError::internal("no statement plans in this call"))?;
        let transition = self.cx.transition;
        let key = (
            text.to_string(),
            types.to_vec(),
            vars.names.clone(),
            transition
                .iter()
                .map(|t| (t.name.clone(), t.table.oid))
                .collect(),
        );
        if let Some(p) = lock(&compiled.plans).get(&key)
            && Arc::ptr_eq(&p.catalog, &self.catalog)
        {
            return Ok(p.clone());
        }
        let mut vars = vars.clone();
        vars.relations = transition
            .iter()
            .map(|t| keel_sql::bind::NamedRel {
                name: t.name.clone(),
                table: t.table.clone(),
            })
            .collect();
        // Planned outside the lock: planning may call this function again (recursion).
        let p = Arc::new(keel_sql::prepare_in_body(
            self.catalog.clone(),
            &keel_sql::EngineSizes(self.cx.engine),
            text,
            0,
            types,
            Some(&vars),
        )?);
        let mut plans = lock(&compiled.plans);
        if plans.len() >= PLANS_PER_FUNCTION {
            plans.clear();
        }
        plans.insert(key, p.clone());
        Ok(p)
    }

    fn run<'a>(&'a mut self, prep: &'a Arc<Prepared>, values: &'a [Datum]) -> BoxFut<'a, Ran> {
        let r = self.run_now(prep, values);
        Box::pin(std::future::ready(r))
    }

    fn savepoint(&mut self) -> PgResult<usize> {
        let engine = self.cx.engine;
        engine.savepoint(self.txn);
        Ok(engine.savepoint_depth(self.txn))
    }

    fn end_savepoint(&mut self, depth: usize, undo: bool) {
        let engine = self.cx.engine;
        if undo {
            engine.undo_to_savepoint(self.txn, depth);
        }
        engine.release_savepoint(self.txn, depth);
        if let Ok(c) = keel_sql::exec::cursor::of(&mut *self.cx.fctx) {
            if undo {
                c.rollback_to(depth);
            }
            c.release(depth);
        }
    }

    fn notice(&mut self, n: &PgError) {
        self.cx.fctx.warning(n.clone());
    }

    fn cursors(&mut self) -> PgResult<&mut keel_sql::exec::cursor::Cursors> {
        keel_sql::exec::cursor::of(&mut *self.cx.fctx)
    }

    fn new_cursor(
        &self,
        columns: Vec<keel_sql::plan::OutColumn>,
        scroll: Option<bool>,
    ) -> keel_sql::exec::cursor::Cursor {
        keel_sql::exec::cursor::Cursor::new(
            columns,
            scroll,
            false,
            self.cx.engine.savepoint_depth(self.txn),
            self.cx.settings.work_mem_bytes(),
            self.cx.engine.temp_dir(),
        )
    }

    fn enter_expr(&mut self, key: usize) -> bool {
        EXPRS_IN_USE.with(|u| {
            let mut u = u.borrow_mut();
            let in_use = u.contains(&key);
            u.push(key);
            in_use
        })
    }

    fn leave_expr(&mut self, key: usize) {
        EXPRS_IN_USE.with(|u| {
            let mut u = u.borrow_mut();
            if let Some(i) = u.iter().rposition(|k| *k == key) {
                u.remove(i);
            }
        });
    }
}

thread_local! {
    /// Expressions of function bodies being evaluated on this thread (a call runs on one
    /// thread from start to end): see `Host::enter_expr`.
    static EXPRS_IN_USE: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}
