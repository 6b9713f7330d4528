//! Expression evaluation. Expressions are the analyzer's plain data ([`Expr`]); binding
//! resolved every operator and function once, so evaluation only calls function pointers and
//! a prepared statement's expressions cost no lookups per row.

use keel_access::{Engine, Transaction};
use keel_analyzer::expr::{Expr, Special};
use keel_common::{PgError, PgResult, sqlstate};
use keel_planner::plan::Subplans;
use keel_types::cast::cast;
use keel_types::func::{FuncContext, Function};
use keel_types::{Datum, TypeId};
use std::sync::Arc;

/// Evaluation of a bound expression against a row.
pub trait Eval {
    /// The expression's value on `row`.
    fn eval(&self, row: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<Datum>;
    /// The value written over `out`. The kinds per-row paths meet most (a column, a compiled
    /// program, an array element) write it in place: a returned `PgResult<Datum>` is moved
    /// through memory once per frame, and reading back a value just written with narrower
    /// stores stalls the load (no store-to-load forwarding).
    fn eval_into(&self, row: &[Datum], cx: &mut EvalCx<'_>, out: &mut Datum) -> PgResult<()> {
        *out = self.eval(row, cx)?;
        Ok(())
    }
    /// A predicate's outcome on `row`: only TRUE passes (NULL and FALSE do not).
    fn test(&self, row: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<bool>;
}

/// A cached uncorrelated subquery result.
pub enum SubResult {
    Value(Datum),
    /// The values with their charge to the statement's memory (given back with the cache).
    Values(Vec<Datum>, crate::exec::mem::MemCharge),
    /// A hashed `IN` subquery's values (`keel_planner::hashed_subplan`).
    Hashed(crate::exec::subplan::HashedValues),
}

/// What evaluation may need beyond the row.
pub struct EvalCx<'a> {
    pub params: &'a [Datum],
    pub fctx: &'a mut dyn FuncContext,
    pub engine: &'a Engine,
    pub settings: &'a keel_common::Settings,
    pub pid: i32,
    /// Polled between rows; true = the client asked to cancel (57014).
    pub cancel: &'a (dyn Fn() -> bool + Sync),
    /// The transaction subqueries run in (None where none may run).
    pub txn: Option<&'a Transaction>,
    /// Values of the enclosing query's columns a correlated subquery references.
    pub outer: &'a [Datum],
    /// Results of uncorrelated subqueries, by `SubPlan::id` (empty unless the statement has any).
    pub subq: std::collections::HashMap<u32, SubResult>,
    /// The running statement's subquery plans, by `SubPlan::id` (set by whoever runs a plan).
    pub subplans: Subplans,
    /// statement_timeout: past this instant, `check_cancel` fails with 57014.
    pub deadline: Option<std::time::Instant>,
    /// Work done since the last interrupt check (see `interrupt`).
    pub ticker: crate::interrupt::Ticker,
    /// Runs a closure that blocks its thread (pg_sleep). The session hands the async worker's
    /// other sessions to another thread first; [`run_inline`] where nothing else shares it.
    pub blocking: fn(&mut dyn FnMut()),
    /// The statement's memory account (see `exec::mem`): operators that hold rows charge it.
    pub mem: &'a Arc<crate::exec::mem::StatementMem>,
    /// The transition tables of the trigger firing whose function runs (empty elsewhere):
    /// what a `Plan::NamedRows` scan reads.
    pub transition: &'a [crate::trigger::TransitionTable],
}

/// [`EvalCx::blocking`] for contexts already off the async workers (DDL validation, tests).
pub fn run_inline(f: &mut dyn FnMut()) {
    f()
}

impl EvalCx<'_> {
    /// A context for running a subquery: same session state, `txn` set, `outer` replaced.
    /// The subquery cache and the interrupt countdown move into the returned context; hand
    /// them back with [`restore`](Self::restore).
    pub fn nested<'b>(
        &'b mut self,
        txn: Option<&'b Transaction>,
        outer: &'b [Datum],
    ) -> EvalCx<'b> {
        EvalCx {
            params: self.params,
            fctx: &mut *self.fctx,
            engine: self.engine,
            settings: self.settings,
            pid: self.pid,
            cancel: self.cancel,
            txn: txn.or(self.txn),
            outer,
            subq: std::mem::take(&mut self.subq),
            subplans: self.subplans.clone(),
            deadline: self.deadline,
            ticker: self.ticker,
            blocking: self.blocking,
            mem: self.mem,
            transition: self.transition,
        }
    }

    /// What a context made by [`nested`](Self::nested) hands back to its parent.
    pub fn carried(&mut self) -> Carried {
        Carried {
            subq: std::mem::take(&mut self.subq),
            ticker: self.ticker,
        }
    }

    /// Takes back the subquery cache and the interrupt countdown from a nested context.
    pub fn restore(&mut self, c: Carried) {
        self.subq = c.subq;
        self.ticker = c.ticker;
    }
}

/// The state a nested evaluation context hands back (see [`EvalCx::carried`]).
pub struct Carried {
    subq: std::collections::HashMap<u32, SubResult>,
    ticker: crate::interrupt::Ticker,
}

impl Eval for Expr {
    fn eval(&self, row: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<Datum> {
        if !matches!(
            self,
            Expr::Const(..) | Expr::Col(..) | Expr::Param(..) | Expr::Outer(..)
        ) {
            // Every level of a nested expression: 54001 before the thread's stack runs out.
            keel_common::stack::check()?;
        }
        Ok(match self {
            Expr::Const(d, _) => d.clone(),
            Expr::Col(i, _) => row.get(*i).cloned().unwrap_or(Datum::Null),
            Expr::Param(i, _) => cx.params.get(*i).cloned().unwrap_or(Datum::Null),
            Expr::Outer(i, _) => cx.outer.get(*i).cloned().unwrap_or(Datum::Null),
            Expr::SubPlan(sp) => crate::exec::subplan::eval(sp, row, cx)?,
            Expr::Array(a) => crate::eval_array::eval(a, row, cx)?,
            Expr::Row(r) => crate::eval_row::eval(r, row, cx)?,
            Expr::Bin { f, l, r, .. } => {
                // Columns, constants and parameters are compared in place, not cloned (a text
                // filter on every row of a scan was an allocation and a free per row).
                if let (Some(a), Some(b)) = (leaf(l, row, cx), leaf(r, row, cx)) {
                    if a.is_null() || b.is_null() {
                        return Ok(Datum::Null);
                    }
                    return f(a, b);
                }
                // One side in place: the other is evaluated first (a leaf has no effects),
                // then the leaf is read, so a column is never cloned into an operand.
                if is_leaf(l) {
                    if leaf(l, row, cx).is_none_or(Datum::is_null) {
                        return Ok(Datum::Null);
                    }
                    let b = r.eval(row, cx)?;
                    if b.is_null() {
                        return Ok(Datum::Null);
                    }
                    return f(leaf(l, row, cx).unwrap_or(&NULL), &b);
                }
                if continues_chain(l) {
                    return operator_chain(self, row, cx);
                }
                let a = l.eval(row, cx)?;
                if a.is_null() {
                    return Ok(Datum::Null);
                }
                if let Some(b) = leaf(r, row, cx) {
                    if b.is_null() {
                        return Ok(Datum::Null);
                    }
                    return f(&a, b);
                }
                let b = r.eval(row, cx)?;
                if b.is_null() {
                    return Ok(Datum::Null);
                }
                f(&a, &b)?
            }
            Expr::Un { f, arg, .. } => {
                let a = arg.eval(row, cx)?;
                if a.is_null() { Datum::Null } else { f(&a)? }
            }
            Expr::Not(a) => match a.eval(row, cx)? {
                Datum::Bool(b) => Datum::Bool(!b),
                _ => Datum::Null,
            },
            // Left to right, stopping at the first operand that decides (as PostgreSQL's
            // ExecEvalAnd/Or); NULL when none decides and one was NULL.
            Expr::And(args) => bool_chain(args, false, row, cx)?,
            Expr::Or(args) => bool_chain(args, true, row, cx)?,
            Expr::IsNull(a, negated) => Datum::Bool(match a.eval(row, cx)? {
                // A composite IS NULL when every field is, IS NOT NULL when none is.
                Datum::Record(r) if *negated => r.values.iter().all(|v| !v.is_null()),
                Datum::Record(r) => r.values.iter().all(Datum::is_null),
                v => v.is_null() != *negated,
            }),
            Expr::Distinct { l, r, eq, negated } => {
                let (a, b) = (l.eval(row, cx)?, r.eval(row, cx)?);
                let distinct = match (a.is_null(), b.is_null()) {
                    (true, true) => false,
                    (false, false) => eq(&a, &b)? != Datum::Bool(true),
                    _ => true,
                };
                Datum::Bool(distinct != *negated)
            }
            Expr::IsBool {
                arg,
                value,
                negated,
            } => {
                let v = arg.eval(row, cx)?;
                Datum::Bool((v == Datum::Bool(*value)) != *negated)
            }
            Expr::Cast { arg, from, to, ctx } => {
                let v = arg.eval(row, cx)?;
                if v.is_null() {
                    Datum::Null
                } else {
                    cast(v, *from, *to, *ctx)?
                }
            }
            Expr::Func { f, args } => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    let v = a.eval(row, cx)?;
                    if f.strict && v.is_null() {
                        return Ok(Datum::Null);
                    }
                    vals.push(v);
                }
                call_function(f, &vals, cx)?
            }
            Expr::Native(n) => return crate::native::run(n, row, cx),
            Expr::Special(s, _) => eval_special(s, row, cx)?,
            Expr::Case { whens, default, .. } => {
                for (c, v) in whens {
                    if c.eval(row, cx)? == Datum::Bool(true) {
                        return v.eval(row, cx);
                    }
                }
                default.eval(row, cx)?
            }
            Expr::MinMax { args, greatest, .. } => {
                let mut best = Datum::Null;
                for a in args {
                    let v = a.eval(row, cx)?;
                    if v.is_null() {
                        continue;
                    }
                    let o = if best.is_null() {
                        std::cmp::Ordering::Greater
                    } else {
                        keel_types::ops::compare(&v, &best)
                    };
                    let take = best.is_null() || if *greatest { o.is_gt() } else { o.is_lt() };
                    if take {
                        best = v;
                    }
                }
                best
            }
            Expr::Coalesce(args, _) => {
                for a in args {
                    let v = a.eval(row, cx)?;
                    if !v.is_null() {
                        return Ok(v);
                    }
                }
                Datum::Null
            }
        })
    }

    fn eval_into(&self, row: &[Datum], cx: &mut EvalCx<'_>, out: &mut Datum) -> PgResult<()> {
        match self {
            Expr::Col(i, _) => *out = row.get(*i).cloned().unwrap_or(Datum::Null),
            Expr::Native(n) => crate::native::run_into(n, row, cx, out)?,
            Expr::Array(a) => crate::eval_array::eval_into(a, row, cx, out)?,
            _ => *out = self.eval(row, cx)?,
        }
        Ok(())
    }

    /// Evaluates a predicate: true only for SQL TRUE.
    fn test(&self, row: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<bool> {
        Ok(matches!(self.eval(row, cx)?, Datum::Bool(true)))
    }
}

/// Calls a built-in function on evaluated arguments, with the statement's cancel and
/// deadline checks.
#[inline]
pub(crate) fn call_function(f: &Function, args: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<Datum> {
    let mut fcx = crate::interrupt::Interruptible {
        inner: &mut *cx.fctx,
        cancel: cx.cancel,
        deadline: cx.deadline,
    };
    (f.func)(args, &mut fcx)
}

static NULL: Datum = Datum::Null;

/// The value of a column, constant, parameter or outer reference, borrowed; None for any
/// other expression.
#[inline]
/// Whether [`leaf`] reads `e` in place.
fn is_leaf(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Const(..) | Expr::Col(..) | Expr::Param(..) | Expr::Outer(..)
    )
}

pub(crate) fn leaf<'r>(e: &'r Expr, row: &'r [Datum], cx: &'r EvalCx<'_>) -> Option<&'r Datum> {
    Some(match e {
        Expr::Const(d, _) => d,
        Expr::Col(i, _) => row.get(*i).unwrap_or(&NULL),
        Expr::Param(i, _) => cx.params.get(*i).unwrap_or(&NULL),
        Expr::Outer(i, _) => cx.outer.get(*i).unwrap_or(&NULL),
        _ => return None,
    })
}

/// A left-deep chain of binary operators (`a + b - c ...`, with the implicit casts the binder
/// put between them), evaluated bottom-up in a loop instead of one recursion per operator.
/// NULL propagates as through nested `Bin` nodes: once the running value is NULL, no further
/// right operand is evaluated.
fn operator_chain(top: &Expr, row: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<Datum> {
    // The links, top first: on the stack for the usual short chain (this runs per row, and
    // an allocation per row cost more than the arithmetic), on the heap past that.
    const INLINE: usize = 8;
    let mut short: [Option<&Expr>; INLINE] = [None; INLINE];
    let mut long = Vec::new();
    let mut n = 0;
    let mut cur = top;
    while continues_chain(cur) {
        let (Expr::Bin { l: next, .. } | Expr::Cast { arg: next, .. }) = cur else {
            break;
        };
        if n < INLINE {
            short[n] = Some(cur);
        } else {
            long.push(cur);
        }
        n += 1;
        cur = next;
    }
    let mut acc = cur.eval(row, cx)?;
    for node in long.iter().rev().chain(short.iter().flatten().rev()) {
        if acc.is_null() {
            return Ok(Datum::Null);
        }
        acc = match node {
            Expr::Bin { f, r, .. } => {
                let b = r.eval(row, cx)?;
                if b.is_null() {
                    return Ok(Datum::Null);
                }
                f(&acc, &b)?
            }
            Expr::Cast { from, to, ctx, .. } => cast(acc, *from, *to, *ctx)?,
            _ => return Err(PgError::internal("operator chain")),
        };
    }
    Ok(acc)
}

/// Whether `e` is a link of an operator chain: a `Bin`, or a cast the binder put on one.
fn continues_chain(e: &Expr) -> bool {
    match e {
        Expr::Bin { .. } => true,
        Expr::Cast { arg, .. } => matches!(**arg, Expr::Bin { .. }),
        _ => false,
    }
}

/// An n-ary AND (`decides` = false) or OR (`decides` = true): the first operand equal to
/// `decides` is the result; otherwise NULL if an operand was NULL, else `!decides`.
fn bool_chain(args: &[Expr], decides: bool, row: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<Datum> {
    let mut null = false;
    for a in args {
        match a.eval(row, cx)? {
            Datum::Bool(b) if b == decides => return Ok(Datum::Bool(decides)),
            Datum::Bool(_) => {}
            _ => null = true,
        }
    }
    Ok(if null {
        Datum::Null
    } else {
        Datum::Bool(!decides)
    })
}

pub fn statement_timeout() -> PgError {
    PgError::new(
        sqlstate::QUERY_CANCELED,
        "canceling statement due to statement timeout",
    )
}

/// pg_sleep: sleeps in slices of at most 10 ms so that a cancel request or statement_timeout
/// ends it promptly, as PostgreSQL's latch wait does. Zero, negative and NaN return at once;
/// an infinite or huge duration sleeps until cancelled.
fn sleep(secs: f64, cx: &EvalCx<'_>) -> PgResult<()> {
    cx.check_cancel()?;
    if secs.is_nan() || secs <= 0.0 {
        return Ok(());
    }
    let end = std::time::Duration::try_from_secs_f64(secs)
        .ok()
        .and_then(|d| std::time::Instant::now().checked_add(d));
    let mut result = Ok(());
    (cx.blocking)(&mut || {
        loop {
            if let Err(e) = cx.check_cancel() {
                result = Err(e);
                return;
            }
            let slice = std::time::Duration::from_millis(10);
            let nap = match end {
                Some(end) => {
                    let left = end.saturating_duration_since(std::time::Instant::now());
                    if left.is_zero() {
                        return;
                    }
                    left.min(slice)
                }
                None => slice,
            };
            std::thread::sleep(nap);
        }
    });
    result
}

pub fn version_string() -> String {
    let v = keel_common::settings::find_def("server_version").map_or("15", |d| d.default);
    format!(
        "PostgreSQL {v} (Keel {}) on x86_64-pc-linux-gnu, compiled by rustc, 64-bit",
        env!("CARGO_PKG_VERSION")
    )
}

fn eval_special(s: &Special, row: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<Datum> {
    Ok(match s {
        Special::Version => Datum::Text(version_string()),
        Special::UserFunction(call, args) => crate::sqlfunc::eval_call(call, args, row, cx)?,
        Special::RegClassName(arg) => match arg.eval(row, cx)? {
            Datum::Oid(oid) => {
                let catalog = match cx.txn {
                    Some(t) => t.catalog(cx.engine),
                    None => cx.engine.catalog(),
                };
                let name = catalog.relation_name(oid).map(str::to_string);
                Datum::Text(name.unwrap_or_else(|| oid.to_string()))
            }
            _ => Datum::Null,
        },
        Special::TableOid(of, args) => {
            let width = of.columns.last().map_or(0, |c| c + 1);
            let mut key_row = vec![Datum::Null; width];
            for (&c, a) in of.columns.iter().zip(args) {
                key_row[c] = a.eval(row, cx)?;
            }
            of.tree.leaf(&key_row).map_or(Datum::Null, Datum::Oid)
        }
        Special::Nextval(seq) => {
            let v = cx.engine.nextval(seq)?;
            cx.fctx.set_seq_last(seq.oid, v);
            Datum::Int8(v)
        }
        Special::Currval(seq) => match cx.fctx.seq_last(seq.oid) {
            Some(v) => Datum::Int8(v),
            None => {
                return Err(PgError::new(
                    sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                    format!(
                        "currval of sequence \"{}\" is not yet defined in this session",
                        seq.name
                    ),
                ));
            }
        },
        Special::Setval(seq, value, called) => {
            let v = match value.eval(row, cx)? {
                Datum::Null => return Ok(Datum::Null),
                Datum::Int8(v) => v,
                Datum::Int4(v) => v as i64,
                Datum::Int2(v) => v as i64,
                _ => return Err(PgError::internal("setval value is not an integer")),
            };
            let is_called = match called {
                None => true,
                Some(e) => match e.eval(row, cx)? {
                    Datum::Null => return Ok(Datum::Null),
                    Datum::Bool(b) => b,
                    _ => return Err(PgError::internal("setval is_called")),
                },
            };
            cx.engine.setval(seq, v, is_called)?;
            if is_called {
                cx.fctx.set_seq_last(seq.oid, v);
            }
            Datum::Int8(v)
        }
        Special::RelationSize(files) => Datum::Int8(
            files
                .iter()
                .map(|f| cx.engine.relation_size(*f))
                .sum::<u64>() as i64,
        ),
        Special::CurrentSetting(name, missing_ok) => match cx.settings.show(name) {
            Ok((_, v)) => Datum::Text(v),
            Err(e) if *missing_ok && e.code == sqlstate::UNDEFINED_OBJECT => Datum::Null,
            Err(e) => return Err(e),
        },
        Special::PgBackendPid => Datum::Int4(cx.pid),
        Special::PgTriggerDepth => Datum::Int4(crate::trigger::depth()),
        Special::Sleep(arg) => match arg.eval(row, cx)? {
            Datum::Float8(secs) => {
                sleep(secs, cx)?;
                // void's output is the empty string, not NULL.
                Datum::Text(String::new())
            }
            _ => Datum::Null,
        },
        Special::SetValue(k, _) => row
            .len()
            .checked_sub(k + 1)
            .and_then(|i| row.get(i))
            .cloned()
            .ok_or_else(|| PgError::internal("set-returning value outside its projection"))?,
        Special::Advisory(call, args) => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                vals.push(a.eval(row, cx)?);
            }
            advisory(*call, &vals, cx)?
        }
    })
}

/// An advisory lock function on evaluated arguments (NULL in, NULL out, as PostgreSQL's
/// strict functions).
fn advisory(
    call: keel_analyzer::expr::AdvisoryCall,
    vals: &[Datum],
    cx: &mut EvalCx<'_>,
) -> PgResult<Datum> {
    use keel_access::advisory::{AdvisoryKey, Level};
    use keel_analyzer::expr::AdvisoryOp;
    let locks = cx.engine.advisory();
    if call.op == AdvisoryOp::UnlockAll {
        locks.release_all(cx.pid, Level::Session);
        return Ok(Datum::Text(String::new()));
    }
    let key = match vals {
        [Datum::Int8(k)] => AdvisoryKey::int8(*k),
        [Datum::Int4(a), Datum::Int4(b)] => AdvisoryKey::pair(*a, *b),
        _ => return Ok(Datum::Null),
    };
    let level = if call.xact {
        Level::Xact
    } else {
        Level::Session
    };
    Ok(match call.op {
        AdvisoryOp::TryLock => Datum::Bool(locks.try_lock(cx.pid, key, call.shared, level)),
        AdvisoryOp::Unlock => {
            let held = locks.unlock(cx.pid, key, call.shared, Level::Session);
            if !held {
                let mode = if call.shared {
                    "ShareLock"
                } else {
                    "ExclusiveLock"
                };
                cx.fctx.warning(PgError::notice(
                    keel_common::Severity::Warning,
                    sqlstate::WARNING,
                    format!("you don't own a lock of type {mode}"),
                ));
            }
            Datum::Bool(held)
        }
        AdvisoryOp::Lock => {
            let txn = cx.txn.ok_or_else(|| {
                PgError::internal("an advisory lock was asked for outside a transaction")
            })?;
            let mut result = Ok(());
            (cx.blocking)(&mut || {
                result = cx
                    .engine
                    .advisory_lock(txn, cx.pid, key, (call.shared, level), || cx.check_cancel());
            });
            result?;
            Datum::Text(String::new())
        }
        AdvisoryOp::UnlockAll => Datum::Text(String::new()),
    })
}

/// A session's FuncContext: timestamps and a per-session random generator.
pub struct SessionFuncs {
    pub txn_ts: i64,
    pub stmt_ts: i64,
    rng: u64,
    /// currval(): the last value nextval()/setval() gave each sequence in this session.
    seq_last: std::collections::HashMap<u32, i64>,
    /// Warnings raised by functions, for the session to send before the statement completes.
    pub warnings: Vec<PgError>,
    /// Open cursors (DECLARE, PL/pgSQL's OPEN).
    pub cursors: crate::exec::cursor::Cursors,
}

impl SessionFuncs {
    pub fn new(seed: u64) -> SessionFuncs {
        SessionFuncs {
            txn_ts: now_micros(),
            stmt_ts: now_micros(),
            rng: seed | 1,
            seq_last: Default::default(),
            warnings: Vec::new(),
            cursors: Default::default(),
        }
    }
}

/// Microseconds since 2000-01-01 UTC.
pub fn now_micros() -> i64 {
    const PG_EPOCH_UNIX_SECS: i64 = 946_684_800;
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    d.as_micros() as i64 - PG_EPOCH_UNIX_SECS * 1_000_000
}

impl FuncContext for SessionFuncs {
    fn transaction_timestamp(&self) -> i64 {
        self.txn_ts
    }
    fn statement_timestamp(&self) -> i64 {
        self.stmt_ts
    }
    fn random(&mut self) -> f64 {
        // xorshift64*: fast, and random() is not meant to be cryptographic.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let v = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (v >> 11) as f64 / (1u64 << 53) as f64
    }
    fn seq_last(&self, seq: u32) -> Option<i64> {
        self.seq_last.get(&seq).copied()
    }
    fn set_seq_last(&mut self, seq: u32, value: i64) {
        self.seq_last.insert(seq, value);
    }
    fn warning(&mut self, w: PgError) {
        self.warnings.push(w);
    }
    fn cursors(&mut self) -> Option<&mut (dyn std::any::Any + Send)> {
        Some(&mut self.cursors)
    }
}

/// 23514 for a row that fails CHECK constraint `constraint` of `table`.
pub fn check_violation(table: &str, constraint: &str, row: &[Datum], types: &[TypeId]) -> PgError {
    PgError::new(
        sqlstate::CHECK_VIOLATION,
        format!("new row for relation \"{table}\" violates check constraint \"{constraint}\""),
    )
    .with_detail(format!("Failing row contains ({}).", row_text(row, types)))
    .with_table(table.to_string())
    .with_constraint(constraint.to_string())
}

pub fn not_null_violation(column: &str, table: &str, row: &[Datum], types: &[TypeId]) -> PgError {
    PgError::new(
        sqlstate::NOT_NULL_VIOLATION,
        format!(
            "null value in column \"{column}\" of relation \"{table}\" violates not-null constraint"
        ),
    )
    .with_detail(format!("Failing row contains ({}).", row_text(row, types)))
    .with_table(table)
    .with_column(column)
}

/// `1, null, abc` as PostgreSQL prints rows in DETAIL lines.
pub fn row_text(row: &[Datum], types: &[TypeId]) -> String {
    let mut s = String::new();
    for (i, (d, t)) in row.iter().zip(types).enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        if d.is_null() {
            s.push_str("null");
        } else {
            keel_types::io::format_text(d, *t, &mut s);
        }
    }
    s
}
