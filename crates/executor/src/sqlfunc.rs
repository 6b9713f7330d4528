//! Calls of LANGUAGE sql functions.
//!
//! The body is planned at the first call of a call site, against the catalog the call was
//! bound with, and the plan is kept in the call site (`UserCall::body`): a prepared
//! statement plans each function it calls once, and a changed function (OR REPLACE, DROP)
//! changes the catalog, which re-plans the statements that call it. Planning lazily is also
//! what lets a function call itself: its body's own call site is planned only when reached.
//! Each level of a recursion runs through `Expr::eval`, whose stack check stops runaway
//! recursion with 54001 before the thread's stack is exhausted.
//!
//! A body is one or more SELECT (or VALUES), INSERT, UPDATE or DELETE statements: each runs
//! to its end in order, and the last one's first row's first column is the result (NULL
//! without rows), cast to the declared result type; a SETOF function returns all its rows. A
//! body that only reads runs here, in the caller's snapshot; one that writes runs through the
//! write handler (`set_sql_body_handler`), which runs each statement as one of its own.

use crate::eval::EvalCx;
use crate::exec::build;
use keel_analyzer::Analyzed;
use keel_analyzer::expr::{Expr, UserCall};
use keel_catalog::FunctionDef;
use keel_common::{PgError, PgResult};
use keel_planner::plan::{ModifyPlan, OutColumn, QueryPlan};
use keel_types::cast::{CastContext, cast};
use keel_types::{Datum, TypeId};
use std::sync::Arc;

/// One statement of a body, planned.
pub enum BodyStmt {
    Query(Arc<QueryPlan>),
    /// INSERT, UPDATE or DELETE, with or without RETURNING.
    Modify(Arc<ModifyPlan>),
}

impl BodyStmt {
    /// The columns of its rows: a query's, or a write's RETURNING list (none without one).
    pub fn columns(&self) -> &[OutColumn] {
        match self {
            BodyStmt::Query(q) => &q.columns,
            BodyStmt::Modify(m) => m.returning.as_ref().map_or(&[], |r| r.1.as_slice()),
        }
    }
}

/// A body's plans, one per statement, in order: the last one's rows are the result.
pub(crate) struct BodyPlans {
    stmts: Vec<BodyStmt>,
    /// Some statement writes: the body runs through the write handler, each statement as one
    /// of its own (`set_sql_body_handler`).
    writes: bool,
}

impl BodyPlans {
    fn last(&self) -> Option<&BodyStmt> {
        self.stmts.last()
    }
}

/// Parses, analyzes and plans each statement of the body of `def` with its parameter types.
fn plan_body(call: &UserCall) -> PgResult<Arc<BodyPlans>> {
    let stmts = keel_parser::split::split_statements(&call.def.body);
    let mut plans = Vec::with_capacity(stmts.len());
    for s in stmts {
        if !keel_parser::split::strip_comments_ws(s.text).is_empty() {
            let chars = call.def.body[..s.offset].chars().count();
            plans.push(plan_statement(call, s.text, chars).map_err(|e| in_body(e, call))?);
        }
    }
    let writes = plans.iter().any(|p| matches!(p, BodyStmt::Modify(_)));
    Ok(Arc::new(BodyPlans {
        stmts: plans,
        writes,
    }))
}

/// An error found while a body statement was parsed or bound: its position points into the
/// body, which becomes the error's internal query (psql's `QUERY:`), as PostgreSQL reports
/// it. CREATE FUNCTION moves it into the statement (`keel_sql::body_position`).
fn in_body(mut e: PgError, call: &UserCall) -> PgError {
    if let Some(p) = e.position.take() {
        let o = e.objects.get_or_insert_with(Default::default);
        o.internal_query = Some(call.def.body.clone());
        o.internal_position = Some(p);
    }
    e
}

/// One statement of a body: a query (SELECT, VALUES), INSERT, UPDATE or DELETE.
fn plan_statement(call: &UserCall, stmt_text: &str, char_offset: usize) -> PgResult<BodyStmt> {
    let def: &FunctionDef = &call.def;
    let parsed = keel_parser::parse_statement(stmt_text, char_offset)?;
    let keel_parser::Parsed::Statement { stmt, text, .. } = parsed.parsed else {
        return Err(PgError::unsupported(
            "this statement in a SQL function body",
        ));
    };
    let param_types: Vec<TypeId> = def.input_args().map(|a| a.ty.id).collect();
    let params: Vec<(Option<String>, TypeId)> = def
        .input_args()
        .map(|a| (a.name.clone(), a.ty.id))
        .collect();
    let mut b = keel_analyzer::bind::Binder::new(&call.catalog, &param_types, &text, char_offset);
    b.fn_params = Some((def.proname.clone(), params));
    let analyzed = match stmt.as_ref() {
        sqlparser::ast::Statement::Query(q) => Analyzed::Query(b.query(q)?),
        sqlparser::ast::Statement::Insert(i) => Analyzed::Modify(b.insert(i)?),
        sqlparser::ast::Statement::Update(u) => Analyzed::Modify(b.update(u)?),
        sqlparser::ast::Statement::Delete(d) => Analyzed::Modify(b.delete(d)?),
        _ => {
            return Err(PgError::unsupported(
                "SQL function bodies other than SELECT, INSERT, UPDATE and DELETE",
            ));
        }
    };
    let sizes = &keel_planner::NoSizes;
    Ok(match analyzed {
        Analyzed::Query(q) => BodyStmt::Query(Arc::new(keel_planner::plan_query(
            &call.catalog,
            sizes,
            &q,
        )?)),
        Analyzed::Modify(m) => BodyStmt::Modify(Arc::new(keel_planner::plan_modify(
            &call.catalog,
            sizes,
            &m,
        )?)),
        Analyzed::Ddl(_) => return Err(PgError::internal("DDL in a SQL function body")),
    })
}

/// Checks a new SQL function's body against `catalog` (which holds the function, so the
/// body may call it), as PostgreSQL's check_function_bodies does at CREATE FUNCTION: it must
/// parse and bind, and its result column must cast to the declared result type.
pub fn check_body(def: Arc<FunctionDef>, catalog: Arc<keel_catalog::Catalog>) -> PgResult<()> {
    let call = UserCall {
        def,
        catalog,
        body: Default::default(),
    };
    let plans = plan_body(&call)?;
    let ret = call.def.ret;
    let mismatch = |detail: String| {
        PgError::new(
            keel_common::sqlstate::INVALID_FUNCTION_DEFINITION,
            format!(
                "return type mismatch in function declared to return {}",
                ret.id.name()
            ),
        )
        .with_detail(detail)
        .with_context_line(format!("SQL function \"{}\"", call.def.proname))
    };
    let castable = |from: TypeId, to: TypeId| {
        from == to || keel_types::cast::can_cast(from, to, CastContext::Assignment)
    };
    let declared: Vec<TypeId> = (call.catalog.result_columns(&call.def).iter())
        .map(|(_, t)| t.id)
        .collect();
    match ret.id {
        // Any last statement will do; its rows are discarded.
        TypeId::Void => return Ok(()),
        // Columns given by the call's column definition list.
        TypeId::Record if declared.is_empty() => return Ok(()),
        _ => {}
    }
    let final_must = || {
        mismatch(
            "Function's final statement must be SELECT or INSERT/UPDATE/DELETE RETURNING.".into(),
        )
    };
    let Some(last) = plans.last() else {
        return Err(final_must());
    };
    if matches!(last, BodyStmt::Modify(m) if m.returning.is_none()) {
        return Err(final_must());
    }
    let columns = last.columns();
    // One column that is already a value of the row type returned.
    if let (Some(oid), [c]) = (call.def.row_type, columns)
        && c.ty == TypeId::Composite(oid)
    {
        return Ok(());
    }
    if declared.len() > 1 || call.def.row_type.is_some() {
        let n = columns.len();
        if n != declared.len() {
            let which = if n > declared.len() { "many" } else { "few" };
            return Err(mismatch(format!(
                "Final statement returns too {which} columns."
            )));
        }
        for (i, (c, t)) in columns.iter().zip(&declared).enumerate() {
            if !castable(c.ty, *t) {
                return Err(mismatch(format!(
                    "Final statement returns {} instead of {} at column {}.",
                    c.ty.name(),
                    t.name(),
                    i + 1
                )));
            }
        }
        return Ok(());
    }
    let from = columns.first().map_or(TypeId::Unknown, |c| c.ty);
    if columns.len() != 1 {
        return Err(mismatch(
            "Final statement must return exactly one column.".into(),
        ));
    }
    if !castable(from, ret.id) {
        return Err(mismatch(format!("Actual return type is {}.", from.name())));
    }
    Ok(())
}

/// The body's plans, planned at the first call of this call site.
fn body_plan(call: &UserCall) -> PgResult<Arc<BodyPlans>> {
    if let Some(p) = call.body.get()
        && let Ok(plan) = p.clone().downcast::<BodyPlans>()
    {
        return Ok(plan);
    }
    let plan = plan_body(call)
        .and_then(|plan| {
            // A write in a STABLE or IMMUTABLE body fails when it is first run, not at CREATE.
            if call.def.volatility != keel_catalog::FuncVolatility::Volatile
                && let Some(m) = plan.stmts.iter().find_map(|s| match s {
                    BodyStmt::Modify(m) => Some(m),
                    BodyStmt::Query(_) => None,
                })
            {
                let what = match m.kind {
                    keel_planner::plan::ModifyKind::Insert { .. } => "INSERT",
                    keel_planner::plan::ModifyKind::Update { .. } => "UPDATE",
                    keel_planner::plan::ModifyKind::Delete { .. } => "DELETE",
                };
                return Err(PgError::new(
                    keel_common::sqlstate::FEATURE_NOT_SUPPORTED,
                    format!("{what} is not allowed in a non-volatile function"),
                ));
            }
            Ok(plan)
        })
        .map_err(|e| {
            e.with_context_line(format!(
                "SQL function \"{}\" during startup",
                call.def.proname
            ))
        })?;
    // Another thread may have planned it meanwhile; either plan does.
    let _ = call.body.set(plan.clone());
    Ok(plan)
}

/// Runs a call of a function in a procedural language: the function, its argument values
/// and the caller's context. Registered at startup by the language's crate (as PostgreSQL
/// calls a pg_language's handler), so the executor does not depend on the interpreter.
pub type LanguageHandler = fn(&UserCall, Vec<Datum>, &mut EvalCx<'_>) -> PgResult<Datum>;

static PLPGSQL_HANDLER: std::sync::OnceLock<LanguageHandler> = std::sync::OnceLock::new();

/// Runs a call of a function in a procedural language in FROM: its rows, each as many values
/// as the function has result columns.
pub type LanguageRowsHandler =
    fn(&UserCall, Vec<Datum>, &mut EvalCx<'_>) -> PgResult<Vec<Vec<Datum>>>;

static PLPGSQL_ROWS_HANDLER: std::sync::OnceLock<LanguageRowsHandler> = std::sync::OnceLock::new();

/// Installs the LANGUAGE plpgsql handlers (once; later calls change nothing).
pub fn set_plpgsql_handler(h: LanguageHandler, rows: LanguageRowsHandler) {
    let _ = PLPGSQL_HANDLER.set(h);
    let _ = PLPGSQL_ROWS_HANDLER.set(rows);
}

/// The rows of a call of a set-returning user function (in FROM when not inlined, or in a
/// select list): a SQL body's query rows, or the procedural language's.
pub(crate) fn call_rows(
    call: &UserCall,
    args: Vec<Datum>,
    cx: &mut EvalCx<'_>,
) -> PgResult<Vec<Vec<Datum>>> {
    if call.def.language == keel_catalog::FuncLanguage::Sql {
        return sql_rows(call, &args, cx);
    }
    let handler = PLPGSQL_ROWS_HANDLER
        .get()
        .ok_or_else(|| PgError::unsupported("PL/pgSQL functions in this context"))?;
    handler(call, args, cx)
}

/// Evaluates a call of a user-defined function on `row`.
pub fn eval_call(
    call: &UserCall,
    args: &[Expr],
    row: &[Datum],
    cx: &mut EvalCx<'_>,
) -> PgResult<Datum> {
    use crate::eval::Eval;
    let mut values = Vec::with_capacity(args.len());
    for a in args {
        values.push(a.eval(row, cx)?);
    }
    if call.def.strict && values.iter().any(|v| matches!(v, Datum::Null)) {
        return Ok(Datum::Null);
    }
    if call.def.language == keel_catalog::FuncLanguage::Plpgsql {
        let handler = PLPGSQL_HANDLER
            .get()
            .ok_or_else(|| PgError::unsupported("PL/pgSQL functions in this context"))?;
        return handler(call, values, cx);
    }
    let plans = body_plan(call)?;
    let Some((first, last)) = run_statements(call, &plans, &values, cx, Some(1))? else {
        return Ok(Datum::Null);
    };
    if call.def.ret.id == TypeId::Record {
        let row = first.into_iter().next();
        return composite_result(call, row, last.columns());
    }
    let value = first
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .unwrap_or(Datum::Null);
    let ret = call.def.ret;
    if ret.id == TypeId::Void {
        // PostgreSQL's SQL functions return a NULL void (PL/pgSQL's, an empty one).
        return Ok(Datum::Null);
    }
    result_value(last.columns(), value, ret)
}

/// Runs `call`'s body with `values` for its parameters, discarding its rows (a statement the
/// server runs on its own behalf, see `internal_sql`).
pub(crate) fn run_internal(call: &UserCall, values: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<()> {
    let plans = body_plan(call)?;
    run_statements(call, &plans, values, cx, Some(0)).map(|_| ())
}

/// The last statement's rows and the statement.
type LastRows<'p> = (Vec<Vec<Datum>>, &'p BodyStmt);

/// Runs the body: the last statement's rows (at most `limit` of them) and the statement,
/// None for an empty body. A body that writes runs through the write handler.
fn run_statements<'p>(
    call: &UserCall,
    plans: &'p BodyPlans,
    values: &[Datum],
    cx: &mut EvalCx<'_>,
    limit: Option<usize>,
) -> PgResult<Option<LastRows<'p>>> {
    let Some(last) = plans.last() else {
        return Ok(None);
    };
    if plans.writes {
        let handler = SQL_BODY_HANDLER
            .get()
            .ok_or_else(|| PgError::unsupported("SQL functions that write in this context"))?;
        let mut rows = handler(call, &plans.stmts, values, cx)?;
        if let Some(n) = limit {
            rows.truncate(n);
        }
        return Ok(Some((rows, last)));
    }
    for p in &plans.stmts[..plans.stmts.len() - 1] {
        if let BodyStmt::Query(q) = p {
            run_body(q, values, cx, Some(0))?;
        }
    }
    let BodyStmt::Query(q) = last else {
        return Err(PgError::internal(
            "a write in a SQL function body that reads only",
        ));
    };
    Ok(Some((run_body(q, values, cx, limit)?, last)))
}

/// Runs the statements of a SQL function body that writes, each as a statement of its own
/// (a new command id, and in a VOLATILE function a new snapshot, so each sees what the ones
/// before it wrote), with the argument values as parameters: the last statement's rows.
/// Registered by the crate that runs statements inside a call (keel-plpgsql), as the
/// procedural language's handler is.
pub type SqlBodyHandler =
    fn(&UserCall, &[BodyStmt], &[Datum], &mut EvalCx<'_>) -> PgResult<Vec<Vec<Datum>>>;

static SQL_BODY_HANDLER: std::sync::OnceLock<SqlBodyHandler> = std::sync::OnceLock::new();

/// Installs the handler of SQL function bodies that write (once; later calls change nothing).
pub fn set_sql_body_handler(h: SqlBodyHandler) {
    let _ = SQL_BODY_HANDLER.set(h);
}

/// A SETOF SQL function's rows: its query's, each one result column cast to the declared type.
fn sql_rows(call: &UserCall, args: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<Vec<Vec<Datum>>> {
    let plans = body_plan(call)?;
    let Some((rows, last)) = run_statements(call, &plans, args, cx, None)? else {
        return Ok(Vec::new());
    };
    // The declared result columns (OUT, RETURNS TABLE, a table's row type), else the one
    // result type.
    let mut types: Vec<keel_types::SqlType> = (call.catalog.result_columns(&call.def))
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    if types.is_empty() {
        types.push(call.def.ret);
    }
    rows.into_iter()
        .map(|r| {
            let mut vals = r.into_iter();
            types
                .iter()
                .zip(last.columns())
                .map(|(t, c)| {
                    let v = vals.next().unwrap_or(Datum::Null);
                    if c.ty == t.id || v.is_null() {
                        Ok(v)
                    } else {
                        cast(v, c.ty, *t, CastContext::Assignment)
                    }
                })
                .collect()
        })
        .collect()
}

/// A result of several columns (a row type, OUT parameters, `record`) as one composite value:
/// the body's first row, each column converted to the declared field type; NULL for no row.
/// A body whose one column is already a value of the row type returns that value.
fn composite_result(
    call: &UserCall,
    row: Option<Vec<Datum>>,
    columns: &[OutColumn],
) -> PgResult<Datum> {
    let Some(row) = row else {
        return Ok(Datum::Null);
    };
    let ty = call.def.row_type.map_or(TypeId::Record, TypeId::Composite);
    if let ([value], [c]) = (row.as_slice(), columns)
        && (c.ty == ty || value.is_null() && matches!(c.ty, TypeId::Composite(_)))
    {
        return Ok(value.clone());
    }
    let declared: Vec<keel_types::SqlType> = (call.catalog.result_columns(&call.def))
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    let mut values = Vec::with_capacity(row.len());
    let mut types = Vec::with_capacity(row.len());
    for (i, (v, c)) in row.into_iter().zip(columns).enumerate() {
        match declared.get(i) {
            Some(t) if t.id != c.ty && !v.is_null() => {
                values.push(cast(v, c.ty, *t, CastContext::Assignment)?);
                types.push(t.id);
            }
            Some(t) => {
                values.push(v);
                types.push(t.id);
            }
            None => {
                values.push(v);
                types.push(c.ty);
            }
        }
    }
    Ok(Datum::Record(std::sync::Arc::new(
        keel_types::record::Record::new(ty, types.into(), values),
    )))
}

/// The body's first column converted to the declared result type.
fn result_value(columns: &[OutColumn], value: Datum, ret: keel_types::SqlType) -> PgResult<Datum> {
    let from = columns.first().map_or(TypeId::Unknown, |c| c.ty);
    if from == ret.id || matches!(value, Datum::Null) {
        Ok(value)
    } else {
        cast(value, from, ret, CastContext::Assignment)
    }
}

/// Runs the body's plan with the argument values as its parameters: its rows, at most
/// `limit` of them.
fn run_body(
    plan: &QueryPlan,
    values: &[Datum],
    cx: &mut EvalCx<'_>,
    limit: Option<usize>,
) -> PgResult<Vec<Vec<Datum>>> {
    let txn = cx
        .txn
        .ok_or_else(|| PgError::unsupported("a function call in this position"))?;
    let engine = cx.engine;
    let mut inner = EvalCx {
        params: values,
        fctx: &mut *cx.fctx,
        engine,
        settings: cx.settings,
        pid: cx.pid,
        cancel: cx.cancel,
        txn: Some(txn),
        outer: &[],
        subq: Default::default(),
        subplans: plan.subplans.clone(),
        deadline: cx.deadline,
        ticker: cx.ticker,
        blocking: cx.blocking,
        mem: cx.mem,
        transition: &[],
    };
    let rows = (|| {
        let mut node = build(&plan.root, engine, txn)?;
        // Some(0): run to the end, keeping nothing (a leading statement).
        let mut rows = Vec::new();
        while let Some(r) = node.next(&mut inner)? {
            if limit.is_none_or(|n| rows.len() < n) {
                rows.push(r);
            } else if limit != Some(0) {
                break;
            }
        }
        Ok(rows)
    })();
    cx.ticker = inner.ticker;
    rows
}
