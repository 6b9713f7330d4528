//! The interpreter proper: blocks, declarations, control flow and assignment. SQL goes
//! through the host (sql.rs); RAISE is in raise.rs.
//!
//! A block with an EXCEPTION clause runs inside a subtransaction (the host's savepoints):
//! an error rolls the block's work back to its start before the handler runs, as in
//! PostgreSQL.

use crate::results::{assign_field, not_setof, query_matches};
use crate::vars::{Record, Scopes, Var};
use crate::{BoxFut, Host, Ran};
use keel_common::{PgError, PgResult, sqlstate};
use keel_pl::{Block, SqlText, Stmt, StmtKind};
use keel_sql::Prepared;
use keel_types::cast::{CastContext, cast};
use keel_types::{Datum, SqlType, TypeId};
use std::sync::Arc;

type Row = Vec<Datum>;

/// What a statement tells its enclosing loop or block.
pub enum Flow {
    Normal,
    Exit(Option<String>),
    Continue(Option<String>),
    Return,
}

/// The interpreter's state for one run of a body.
pub struct PlState {
    pub(crate) vars: Scopes,
    found: bool,
    pub(crate) row_count: u64,
    /// Prepared statements by their parameterized text and parameter types.
    pub(crate) plans: rustc_hash::FxHashMap<crate::sql::PlanKey, Arc<Prepared>>,
    /// `#variable_conflict`: how a variable that is also a column in scope resolves.
    pub(crate) conflict: keel_sql::bind::VarConflict,
    /// The function's name as CONTEXT lines print it.
    pub(crate) fname: String,
    /// The value of `RETURN expr` and its type, once run.
    pub ret: Option<(Datum, TypeId)>,
    /// What the function returns: `Composite(oid)` for a named composite type, `Trigger` for
    /// a trigger function, `Void` for a DO block.
    pub ret_type: TypeId,
    /// `RETURN rec` of a record variable (a trigger's `RETURN NEW`): its values, None when
    /// it was not assigned.
    pub ret_record: Option<Option<Vec<Datum>>>,
    /// A set-returning function's rows so far (RETURN NEXT, RETURN QUERY); None in others.
    pub ret_rows: Option<Vec<Row>>,
    /// The function's result columns (one for a plain result type).
    pub result_types: Vec<SqlType>,
    /// Its OUT (and RETURNS TABLE) parameters, whose values RETURN NEXT without an
    /// expression adds as a row.
    pub out_names: Vec<String>,
    /// The error on its way out has its statement's CONTEXT line already (set by the
    /// innermost statement that failed, cleared as each statement starts).
    pub(crate) located: bool,
    /// The errors the running exception handlers caught, innermost last: what a bare
    /// `RAISE;` throws again.
    pub(crate) handling: Vec<PgError>,
    /// `plpgsql.check_asserts`: ASSERT evaluates its condition.
    pub(crate) check_asserts: bool,
    /// The run-time checks of `plpgsql.extra_warnings` and `plpgsql.extra_errors`.
    pub(crate) extra: [keel_common::settings::PlChecks; 2],
    /// `#print_strict_params` / `plpgsql.print_strict_params`: a STRICT INTO's error shows the
    /// statement's parameters ...
    pub(crate) print_strict_params: bool,
    /// ... those of the last statement run, by name, while it is on.
    pub(crate) last_params: Vec<(String, Datum)>,
}

/// The host and the interpreter's methods over it.
pub(crate) struct Interp<'h, H: Host + ?Sized> {
    pub(crate) h: &'h mut H,
}

impl PlState {
    /// Applies the body's `#` directives (`#variable_conflict`) over the session's settings
    /// (`plpgsql.variable_conflict`, `plpgsql.check_asserts`, and the run-time checks of
    /// `plpgsql.extra_warnings` / `plpgsql.extra_errors`).
    pub fn set_options(&mut self, o: &keel_pl::CompileOptions, settings: &keel_common::Settings) {
        use keel_sql::bind::VarConflict;
        self.conflict = match o.variable_conflict {
            Some(keel_pl::VariableConflict::Error) => VarConflict::Error,
            Some(keel_pl::VariableConflict::UseVariable) => VarConflict::UseVariable,
            Some(keel_pl::VariableConflict::UseColumn) => VarConflict::UseColumn,
            None => match settings.raw("plpgsql.variable_conflict") {
                "use_variable" => VarConflict::UseVariable,
                "use_column" => VarConflict::UseColumn,
                _ => VarConflict::Error,
            },
        };
        self.check_asserts = settings.bool("plpgsql.check_asserts");
        self.print_strict_params = o
            .print_strict_params
            .unwrap_or_else(|| settings.bool("plpgsql.print_strict_params"));
        self.extra = [settings.pl_checks(false), settings.pl_checks(true)];
    }

    /// The level an extra check reports at: an error, a warning, or not at all.
    pub(crate) fn extra_level(
        &self,
        on: impl Fn(&keel_common::settings::PlChecks) -> bool,
    ) -> Option<keel_common::Severity> {
        if on(&self.extra[1]) {
            Some(keel_common::Severity::Error)
        } else if on(&self.extra[0]) {
            Some(keel_common::Severity::Warning)
        } else {
            None
        }
    }

    /// A body's state with FOUND and the given variables (a function's parameters) in its
    /// outermost scope.
    pub fn new(fname: String, params: Vec<Var>) -> PlState {
        let mut first = vec![Var::scalar("found", TypeId::Bool, Datum::Bool(false))];
        first.extend(params);
        PlState {
            vars: Scopes {
                scopes: vec![first],
                // The parameters' block answers to the function's name.
                labels: vec![fname.split('(').next().map(str::to_string)],
                aliases: Vec::new(),
            },
            found: false,
            row_count: 0,
            plans: Default::default(),
            conflict: Default::default(),
            fname,
            ret: None,
            ret_record: None,
            ret_type: TypeId::Void,
            ret_rows: None,
            result_types: Vec::new(),
            out_names: Vec::new(),
            located: false,
            handling: Vec::new(),
            check_asserts: true,
            extra: Default::default(),
            print_strict_params: false,
            last_params: Vec::new(),
        }
    }
}

/// Runs `block` with `st` through `host`.
pub fn run_body<'a, H: Host + ?Sized>(
    host: &'a mut H,
    st: &'a mut PlState,
    block: &'a Block,
) -> BoxFut<'a, Flow> {
    Box::pin(async move {
        let mut it = Interp { h: host };
        // The function's frame in the session's call stack, for PG_CONTEXT.
        let depth = match it.h.cursors() {
            Ok(c) => {
                c.calls.push(keel_sql::exec::cursor::PlFrame {
                    function: st.fname.as_str().into(),
                    line: 0,
                    stmt: "",
                });
                Some(c.calls.len() - 1)
            }
            Err(_) => None,
        };
        let r = it.exec_block(st, block).await;
        if let (Some(d), Ok(c)) = (depth, it.h.cursors()) {
            c.calls.truncate(d);
        }
        r
    })
}

impl PlState {
    /// FOUND is a variable of the outermost scope, as in PostgreSQL.
    pub(crate) fn set_found(&mut self, v: bool) {
        self.found = v;
        if let Some(f) = self.vars.scopes.first_mut().and_then(|s| s.first_mut()) {
            f.value = Datum::Bool(v);
        }
    }
}

/// Interns a SQLSTATE a RAISE names (PgError codes are static; the set of codes a server
/// sees is small and bounded by what its functions spell out).
pub(crate) fn intern_code(code: &str) -> &'static str {
    use std::sync::Mutex;
    static CODES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut g = match CODES.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if let Some(c) = g.iter().find(|c| **c == code) {
        return c;
    }
    let leaked: &'static str = Box::leak(code.to_string().into_boxed_str());
    g.push(leaked);
    leaked
}

impl<H: Host + ?Sized> Interp<'_, H> {
    fn exec_block<'a>(&'a mut self, st: &'a mut PlState, block: &'a Block) -> BoxFut<'a, Flow> {
        Box::pin(async move {
            keel_common::stack::check()?;
            st.vars.push_labelled(Vec::new(), block.label.clone());
            let r = self.exec_block_inner(st, block).await;
            st.vars.pop_scope();
            match r? {
                Flow::Exit(Some(l)) if block.label.as_deref() == Some(l.as_str()) => {
                    Ok(Flow::Normal)
                }
                f => Ok(f),
            }
        })
    }

    async fn exec_block_inner(&mut self, st: &mut PlState, block: &Block) -> PgResult<Flow> {
        for d in &block.decls {
            self.declare(st, d).await?;
        }
        let Some(handlers) = &block.exceptions else {
            return self.exec_stmts(st, &block.body).await;
        };
        // The block's work is a subtransaction: an error undoes it before a handler runs.
        let depth = self.h.savepoint()?;
        let r = self.exec_stmts(st, &block.body).await;
        match r {
            Ok(flow) => {
                self.h.end_savepoint(depth, false);
                Ok(flow)
            }
            Err(err) => {
                self.h.end_savepoint(depth, true);
                let Some(h) = handlers
                    .iter()
                    .find(|h| (h.conditions.iter()).any(|c| c.catches(err.code, err.unbuilt)))
                else {
                    return Err(err);
                };
                st.vars.push_scope(vec![
                    Var::constant("sqlstate", TypeId::Text, Datum::Text(err.code.to_string())),
                    Var::constant("sqlerrm", TypeId::Text, Datum::Text(err.message.clone())),
                ]);
                st.handling.push(err);
                let r = self.exec_stmts(st, &h.body).await;
                st.handling.pop();
                st.vars.pop_scope();
                r
            }
        }
    }

    pub(crate) fn exec_stmts<'a>(
        &'a mut self,
        st: &'a mut PlState,
        stmts: &'a [Stmt],
    ) -> BoxFut<'a, Flow> {
        Box::pin(async move {
            for s in stmts {
                if let Ok(c) = self.h.cursors()
                    && let Some(f) = c.calls.last_mut()
                {
                    f.line = s.line;
                    f.stmt = s.kind_name();
                }
                let flow = self.exec_stmt(st, s).await.map_err(|e| {
                    let line = format!(
                        "PL/pgSQL function {} line {} at {}",
                        st.fname,
                        s.line,
                        s.kind_name()
                    );
                    // Only the innermost statement names its line: an enclosing loop or
                    // block adds none.
                    if st.located {
                        e
                    } else {
                        st.located = true;
                        e.with_context_line(line)
                    }
                })?;
                if !matches!(flow, Flow::Normal) {
                    return Ok(flow);
                }
            }
            Ok(Flow::Normal)
        })
    }

    async fn exec_stmt(&mut self, st: &mut PlState, s: &Stmt) -> PgResult<Flow> {
        st.located = false;
        self.h.check_interrupts()?;
        match &s.kind {
            StmtKind::Block(b) => self.exec_block(st, b).await,
            StmtKind::Null => Ok(Flow::Normal),
            StmtKind::Assign { target, expr } => {
                let field = match target.path.as_slice() {
                    [] => None,
                    [keel_pl::TargetPart::Field(f)] => Some(f.to_ascii_lowercase()),
                    path => {
                        self.assign_element(st, target, path, expr).await?;
                        return Ok(Flow::Normal);
                    }
                };
                if expr.text.trim().is_empty() {
                    // PostgreSQL's assignment grammar takes an empty target list.
                    return Err(PgError::new(
                        sqlstate::SYNTAX_ERROR,
                        "assignment source returned 0 columns",
                    )
                    .with_context_line(format!(
                        "PL/pgSQL assignment \"{} :=\"",
                        target.text.text
                    )));
                }
                let (v, from) = self.eval(st, expr).await.map_err(|mut e| {
                    // PostgreSQL names the assignment instead of its expression's query.
                    if let Some(o) = e.objects.as_mut() {
                        o.internal_query = None;
                        o.internal_position = None;
                    }
                    e.with_context_line(format!(
                        "PL/pgSQL assignment \"{} := {}\"",
                        target.text.text, expr.text
                    ))
                })?;
                match field {
                    None => self.assign(st, &target.name, v, from)?,
                    // `label.var := v`: a variable of a labelled block (or the function's
                    // parameter, `fname.param`), when no record is called `label`.
                    Some(f)
                        if st.vars.find(&target.name).is_none()
                            && st.vars.find_labelled(&target.name, &f).is_some() =>
                    {
                        self.assign_in(st, Some(&target.name), &f, v, from)?
                    }
                    Some(f) => {
                        let shown = format!("{} := {}", target.text.text, expr.text);
                        assign_field(st, &target.name, &f, v, from, Some(&shown))?
                    }
                }
                Ok(Flow::Normal)
            }
            StmtKind::If {
                cond,
                then_body,
                elsifs,
                else_body,
            } => {
                if self.eval_bool(st, cond).await? {
                    return self.exec_stmts(st, then_body).await;
                }
                for e in elsifs {
                    if self.eval_bool(st, &e.cond).await? {
                        return self.exec_stmts(st, &e.body).await;
                    }
                }
                match else_body {
                    Some(b) => self.exec_stmts(st, b).await,
                    None => Ok(Flow::Normal),
                }
            }
            StmtKind::Case {
                expr,
                whens,
                else_body,
            } => {
                let selector = match expr {
                    Some(e) => Some(self.eval(st, e).await?),
                    None => None,
                };
                for w in whens {
                    let hit = match &selector {
                        None => self.eval_bool(st, &w.expr).await?,
                        Some((v, t)) => {
                            let (cands, ct) = self.eval_list(st, &w.expr).await?;
                            cands.iter().zip(ct).any(|(c, ct)| {
                                let c =
                                    cast(c.clone(), ct, SqlType::new(*t), CastContext::Implicit)
                                        .unwrap_or(Datum::Null);
                                !c.is_null()
                                    && !v.is_null()
                                    && keel_types::ops::compare(v, &c).is_eq()
                            })
                        }
                    };
                    if hit {
                        return self.exec_stmts(st, &w.body).await;
                    }
                }
                match else_body {
                    Some(b) => self.exec_stmts(st, b).await,
                    None => Err(PgError::new(sqlstate::CASE_NOT_FOUND, "case not found")
                        .with_hint("CASE statement is missing ELSE part.")),
                }
            }
            StmtKind::Loop { label, body } => loop {
                match self.exec_stmts(st, body).await? {
                    Flow::Normal => {}
                    f => match loop_flow(f, label) {
                        Some(out) => return Ok(out),
                        None => continue,
                    },
                }
            },
            StmtKind::While { label, cond, body } => {
                while self.eval_bool(st, cond).await? {
                    match self.exec_stmts(st, body).await? {
                        Flow::Normal => {}
                        f => match loop_flow(f, label) {
                            Some(out) => return Ok(out),
                            None => continue,
                        },
                    }
                }
                Ok(Flow::Normal)
            }
            StmtKind::ForInt {
                label,
                var,
                reverse,
                lower,
                upper,
                step,
                body,
                ..
            } => {
                let int = |d: Datum, t: TypeId| -> PgResult<Option<i64>> {
                    Ok(
                        cast(d, t, SqlType::new(TypeId::Int4), CastContext::Assignment)?
                            .int_value(),
                    )
                };
                let (lo, lt) = self.eval(st, lower).await?;
                let (hi, ht) = self.eval(st, upper).await?;
                let null_bound = |what: &str| {
                    PgError::new(
                        sqlstate::NULL_VALUE_NOT_ALLOWED,
                        format!("{what} bound of FOR loop cannot be null"),
                    )
                };
                let lo = int(lo, lt)?.ok_or_else(|| null_bound("lower"))?;
                let hi = int(hi, ht)?.ok_or_else(|| null_bound("upper"))?;
                let by = match step {
                    Some(e) => {
                        let (v, t) = self.eval(st, e).await?;
                        let v = int(v, t)?.ok_or_else(|| {
                            PgError::new(
                                sqlstate::NULL_VALUE_NOT_ALLOWED,
                                "BY value of FOR loop cannot be null",
                            )
                        })?;
                        if v <= 0 {
                            return Err(PgError::new(
                                sqlstate::INVALID_PARAMETER_VALUE,
                                "BY value of FOR loop must be greater than zero",
                            ));
                        }
                        v
                    }
                    None => 1,
                };
                st.vars.push_scope(vec![Var {
                    name: var.clone(),
                    ty: TypeId::Int4,
                    typmod: -1,
                    value: Datum::Null,
                    constant: false,
                    not_null: false,
                    record: None,
                    is_record: false,
                    bound: None,
                }]);
                let mut i = lo;
                let mut result = Ok(Flow::Normal);
                // FOUND: whether the body ran at least once.
                let any = if *reverse { lo >= hi } else { lo <= hi };
                while if *reverse { i >= hi } else { i <= hi } {
                    if let Some(v) = st.vars.find_mut(var) {
                        v.value = Datum::Int4(i as i32);
                    }
                    match self.exec_stmts(st, body).await {
                        Ok(Flow::Normal) => {}
                        Ok(f) => {
                            if let Some(out) = loop_flow(f, label) {
                                result = Ok(out);
                                break;
                            }
                        }
                        Err(e) => {
                            result = Err(e);
                            break;
                        }
                    }
                    i = if *reverse { i - by } else { i + by };
                }
                st.vars.pop_scope();
                st.set_found(any);
                result
            }
            StmtKind::ForQuery {
                label,
                targets,
                query,
                body,
            } => {
                let ran = self.run_sql(st, query, None).await?;
                self.for_rows(st, label, targets, ran, body).await
            }
            StmtKind::ForExecute {
                label,
                targets,
                query,
                params,
                body,
            } => {
                let ran = self.run_dynamic(st, query, params).await?;
                self.for_rows(st, label, targets, ran, body).await
            }
            StmtKind::Foreach {
                label,
                targets,
                slice,
                array,
                body,
            } => self.foreach(st, label, targets, *slice, array, body).await,
            StmtKind::Exit {
                is_exit,
                label,
                cond,
            } => {
                if let Some(c) = cond
                    && !self.eval_bool(st, c).await?
                {
                    return Ok(Flow::Normal);
                }
                Ok(if *is_exit {
                    Flow::Exit(label.clone())
                } else {
                    Flow::Continue(label.clone())
                })
            }
            StmtKind::Return { expr } => {
                if let Some(e) = expr {
                    let name = e.text.trim().to_ascii_lowercase();
                    let composite = crate::composite::is_composite(st.ret_type);
                    match st.vars.find(&name) {
                        // A trigger's RETURN NEW: the row's values.
                        Some(v) if v.is_record && st.ret_type == TypeId::Trigger => {
                            st.ret_record = Some(
                                v.record
                                    .as_ref()
                                    .filter(|r| !r.is_null)
                                    .map(|r| r.values.clone()),
                            );
                        }
                        Some(v) if v.is_record => {
                            let r = v
                                .record
                                .as_ref()
                                .ok_or_else(|| crate::composite::unassigned(&v.name))?;
                            st.ret = Some((r.to_datum(), r.ty));
                        }
                        _ => {
                            let (d, t) = self.eval(st, e).await?;
                            if composite && !d.is_null() && !crate::composite::is_composite(t) {
                                return Err(PgError::new(
                                    sqlstate::DATATYPE_MISMATCH,
                                    "cannot return non-composite value from function returning composite type",
                                ));
                            }
                            st.ret = Some((d, t));
                        }
                    }
                }
                Ok(Flow::Return)
            }
            StmtKind::Raise(r) => self.raise(st, r, s.line).await.map(|_| Flow::Normal),
            StmtKind::Assert { cond, message } => {
                if st.check_asserts && self.eval_bool_or_null(st, cond).await? != Some(true) {
                    let msg = match message {
                        Some(m) => {
                            let (v, _) = self.eval(st, m).await?;
                            keel_types::io::to_text(&v)
                        }
                        None => "assertion failed".into(),
                    };
                    return Err(PgError::new(sqlstate::ASSERT_FAILURE, msg));
                }
                Ok(Flow::Normal)
            }
            StmtKind::Execute {
                query,
                into,
                params,
            } => {
                let ran = self.run_dynamic(st, query, params).await?;
                self.finish_sql(st, ran, into.as_ref(), true)?;
                Ok(Flow::Normal)
            }
            StmtKind::Perform { query } => {
                let sql = SqlText {
                    text: format!("SELECT {}", query.text),
                    offset: query.offset,
                    line: query.line,
                };
                let ran = self.run_sql(st, &sql, None).await?;
                st.set_found(ran.count > 0);
                st.row_count = ran.count;
                Ok(Flow::Normal)
            }
            StmtKind::Sql { sql, into } => {
                let ran = self.run_sql(st, sql, None).await?;
                self.finish_sql(st, ran, into.as_ref(), false)?;
                Ok(Flow::Normal)
            }
            StmtKind::GetDiagnostics { items, stacked } => {
                if *stacked && st.handling.is_empty() {
                    return Err(PgError::new(
                        sqlstate::STACKED_DIAGNOSTICS_ACCESSED_WITHOUT_ACTIVE_HANDLER,
                        "GET STACKED DIAGNOSTICS cannot be used outside an exception handler",
                    ));
                }
                for (target, item) in items {
                    let (v, ty) = match item {
                        keel_pl::DiagItem::RowCount => {
                            (Datum::Int8(st.row_count as i64), TypeId::Int8)
                        }
                        keel_pl::DiagItem::PgContext => {
                            let text = crate::targets::pg_context(&self.h.cursors()?.calls);
                            (Datum::Text(text), TypeId::Text)
                        }
                        item => (
                            Datum::Text(crate::targets::diagnostic(st, *item)?),
                            TypeId::Text,
                        ),
                    };
                    let name = target.names.join(".");
                    self.assign(st, &name, v, ty)?;
                }
                Ok(Flow::Normal)
            }
            StmtKind::ReturnNext { expr } => {
                let row = match expr {
                    None => st.out_values_cast()?,
                    Some(e) => {
                        let name = e.text.trim().to_ascii_lowercase();
                        match st.vars.find(&name) {
                            Some(v) if v.is_record => {
                                let r = v.record.as_ref().filter(|r| !r.is_null);
                                let types = r.map(|r| r.types.clone()).unwrap_or_default();
                                let vals = r.map(|r| r.values.clone()).unwrap_or_default();
                                st.result_row(vals, &types)?
                            }
                            _ => match self.eval(st, e).await? {
                                // A composite for a row result: its fields, NULL for each
                                // when it is NULL.
                                (Datum::Record(r), _) if st.result_composite() => {
                                    st.result_row(r.values.clone(), &r.types)?
                                }
                                (Datum::Null, t)
                                    if st.result_composite()
                                        && crate::composite::is_composite(t) =>
                                {
                                    let n = st.result_types.len();
                                    let types: Vec<TypeId> =
                                        st.result_types.iter().map(|t| t.id).collect();
                                    st.result_row(vec![Datum::Null; n], &types)?
                                }
                                (v, t) => st.result_row(vec![v], &[t])?,
                            },
                        }
                    }
                };
                st.push_row(row)?;
                Ok(Flow::Normal)
            }
            StmtKind::ReturnQuery {
                dynamic,
                query,
                params,
            } => {
                if st.ret_rows.is_none() {
                    return Err(not_setof("RETURN QUERY"));
                }
                let ran = if *dynamic {
                    self.run_dynamic(st, query, params).await?
                } else {
                    self.run_sql(st, query, None).await?
                };
                query_matches(&ran.types, &st.result_types).map_err(|e| {
                    e.with_context_line(format!("SQL statement \"{}\"", query.text))
                })?;
                st.set_found(ran.count > 0);
                st.row_count = ran.count;
                for r in ran.rows {
                    st.push_row(r)?;
                }
                Ok(Flow::Normal)
            }
            StmtKind::Open { cursor, source } => {
                self.open_cursor(st, cursor, source).await?;
                Ok(Flow::Normal)
            }
            StmtKind::Fetch {
                is_move,
                direction,
                cursor,
                into,
            } => {
                self.fetch_cursor(st, *is_move, direction, cursor, into.as_ref())
                    .await?;
                Ok(Flow::Normal)
            }
            StmtKind::Close { cursor } => {
                self.close_cursor(st, cursor)?;
                Ok(Flow::Normal)
            }
            StmtKind::ForCursor {
                label,
                var,
                cursor,
                args,
                body,
            } => {
                self.for_cursor(st, label, var, cursor, args.as_ref(), body)
                    .await
            }
            _ => Err(PgError::unsupported(format!(
                "PL/pgSQL statement {}",
                s.kind_name()
            ))),
        }
    }

    /// The FOR-over-rows loop body: each row assigned to the targets in turn.
    pub(crate) async fn for_rows(
        &mut self,
        st: &mut PlState,
        label: &Option<String>,
        targets: &[keel_pl::VarRef],
        ran: Ran,
        body: &[Stmt],
    ) -> PgResult<Flow> {
        let any = !ran.rows.is_empty();
        let Ran {
            names, types, rows, ..
        } = ran;
        for row in rows {
            self.assign_row(st, targets, &names, &types, row)?;
            if let Some(out) = self.loop_body(st, label, body).await? {
                st.set_found(any);
                return Ok(out);
            }
        }
        st.set_found(any);
        Ok(Flow::Normal)
    }

    /// Runs a loop's body once: Some(flow) when the loop ends with it (EXIT, RETURN, a
    /// CONTINUE or EXIT of an outer label).
    pub(crate) async fn loop_body(
        &mut self,
        st: &mut PlState,
        label: &Option<String>,
        body: &[Stmt],
    ) -> PgResult<Option<Flow>> {
        Ok(match self.exec_stmts(st, body).await? {
            Flow::Normal => None,
            f => loop_flow(f, label),
        })
    }

    /// INTO targets, FOUND and ROW_COUNT after a statement. EXECUTE (`dynamic`) leaves
    /// FOUND alone and takes the first row of a write's RETURNING without complaint, as
    /// PostgreSQL's does.
    fn finish_sql(
        &mut self,
        st: &mut PlState,
        ran: Ran,
        into: Option<&keel_pl::Into>,
        dynamic: bool,
    ) -> PgResult<()> {
        if !dynamic {
            st.set_found(ran.count > 0);
        }
        st.row_count = ran.count;
        let Some(into) = into else {
            return Ok(());
        };
        // With print_strict_params, the statement's parameters are the DETAIL.
        let params = |mut e: PgError| {
            if st.print_strict_params && !st.last_params.is_empty() {
                let list: Vec<String> = st
                    .last_params
                    .iter()
                    .map(|(n, v)| match v {
                        Datum::Null => format!("{n} = NULL"),
                        v => format!("{n} = '{}'", keel_types::io::to_text(v).replace('\'', "''")),
                    })
                    .collect();
                e = e.with_detail(format!("parameters: {}", list.join(", ")));
            }
            e
        };
        if into.strict && ran.rows.is_empty() {
            return Err(params(PgError::new(
                sqlstate::NO_DATA_FOUND,
                "query returned no rows",
            )));
        }
        // INTO of a write's RETURNING takes one row, STRICT or not (PostgreSQL's rule);
        // plpgsql.extra_* too_many_rows holds a static SELECT INTO to it as well.
        if ran.rows.len() > 1 {
            let mut too_many = params(PgError::new(
                sqlstate::TOO_MANY_ROWS,
                "query returned more than one row",
            ));
            if !dynamic {
                too_many =
                    too_many.with_hint("Make sure the query returns a single row, or use LIMIT 1.");
            }
            if into.strict || (ran.writes && !dynamic) {
                return Err(too_many);
            }
            if !dynamic {
                self.extra_check(st, |c| c.too_many_rows, too_many)?;
            }
        }
        let Ran {
            names, types, rows, ..
        } = ran;
        let row = rows
            .into_iter()
            .next()
            .unwrap_or_else(|| vec![Datum::Null; types.len()]);
        self.assign_row(st, &into.targets, &names, &types, row)
    }

    pub(crate) fn assign_row(
        &mut self,
        st: &mut PlState,
        targets: &[keel_pl::VarRef],
        names: &[String],
        types: &[TypeId],
        row: Row,
    ) -> PgResult<()> {
        if let [t] = targets
            && let Some(v) = st.vars.find(&t.names.join("."))
            && v.record
                .as_ref()
                .is_some_and(|r| r.declared && r.types.len() != types.len())
        {
            self.multi_assignment_check(st)?;
        }
        if let [t] = targets
            && let Some(v) = st.vars.find_mut(&t.names.join("."))
            && v.is_record
        {
            // A variable declared with a row type keeps its columns' type modifiers.
            let (typmods, declared) = match &v.record {
                Some(r) if r.declared && r.types.as_slice() == types => (r.typmods.clone(), true),
                _ => (vec![-1; types.len()], false),
            };
            let ty = match &v.record {
                Some(r) if declared => r.ty,
                _ => TypeId::Record,
            };
            v.record = Some(Record {
                ty,
                names: names.to_vec(),
                types: types.to_vec(),
                typmods,
                values: row,
                is_null: false,
                declared,
            });
            return Ok(());
        }
        if targets.len() > 1 && targets.len() != row.len() {
            self.multi_assignment_check(st)?;
        }
        for (i, t) in targets.iter().enumerate() {
            let v = row.get(i).cloned().unwrap_or(Datum::Null);
            let ty = types.get(i).copied().unwrap_or(TypeId::Unknown);
            let name = t.names.join(".");
            // `INTO ..., new.col`: a field of a record variable, unless a block label
            // qualifies a variable of that name.
            if let [rec, field] = t.names.as_slice()
                && st.vars.find(&name).is_none()
                && st.vars.find_labelled(rec, field).is_none()
                && st.vars.find(rec).is_some_and(|v| v.is_record)
            {
                crate::results::assign_field(st, rec, field, v, ty, None)?;
                continue;
            }
            self.assign(st, &name, v, ty)?;
        }
        Ok(())
    }

    /// Reports `e` at the level the extra check `on` is set to (a WARNING goes to the client,
    /// an ERROR ends the statement); nothing when the check is off.
    pub(crate) fn extra_check(
        &mut self,
        st: &PlState,
        on: impl Fn(&keel_common::settings::PlChecks) -> bool,
        mut e: PgError,
    ) -> PgResult<()> {
        match st.extra_level(on) {
            Some(keel_common::Severity::Error) => Err(e),
            Some(level) => {
                e.severity = level;
                self.h.notice(&e);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// strict_multi_assignment: a row assigned to targets of another width.
    fn multi_assignment_check(&mut self, st: &PlState) -> PgResult<()> {
        let which = match st.extra_level(|c| c.strict_multi_assignment) {
            Some(keel_common::Severity::Error) => "extra_errors",
            Some(_) => "extra_warnings",
            None => return Ok(()),
        };
        let e = PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            "number of source and target fields in assignment does not match",
        )
        .with_detail(format!(
            "strict_multi_assignment check of {which} is active."
        ))
        .with_hint("Make sure the query returns the exact list of columns.");
        self.extra_check(st, |c| c.strict_multi_assignment, e)
    }

    pub(crate) fn assign(
        &mut self,
        st: &mut PlState,
        name: &str,
        v: Datum,
        from: TypeId,
    ) -> PgResult<()> {
        self.assign_in(st, None, name, v, from)
    }

    /// [`Self::assign`] to variable `name` of the block labelled `label`, if given.
    pub(crate) fn assign_in(
        &mut self,
        st: &mut PlState,
        label: Option<&str>,
        name: &str,
        v: Datum,
        from: TypeId,
    ) -> PgResult<()> {
        let found = match label {
            Some(l) => st.vars.find_labelled_mut(l, name),
            None => st.vars.find_mut(name),
        };
        let Some(var) = found else {
            return Err(PgError::new(
                sqlstate::SYNTAX_ERROR,
                format!("\"{name}\" is not a known variable"),
            ));
        };
        if var.constant {
            return Err(PgError::new(
                sqlstate::ERROR_IN_ASSIGNMENT,
                format!("variable \"{name}\" is declared CONSTANT"),
            ));
        }
        if var.is_record {
            let shape = var.record.as_ref().filter(|r| r.declared);
            let rec = crate::composite::record_from(v, from, shape, &self.h.catalog())?;
            var.record = Some(rec);
            return Ok(());
        }
        let v = crate::composite::assign_cast(v, from, SqlType::with_typmod(var.ty, var.typmod))?;
        if var.not_null && v.is_null() {
            return Err(PgError::new(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                format!("null value cannot be assigned to variable \"{name}\" declared NOT NULL"),
            ));
        }
        var.value = v;
        Ok(())
    }
}

/// What a loop does with its body's flow: Some(flow) leaves the loop with it.
pub(crate) fn loop_flow(f: Flow, label: &Option<String>) -> Option<Flow> {
    match f {
        Flow::Exit(None) => Some(Flow::Normal),
        Flow::Exit(Some(l)) if label.as_deref() == Some(l.as_str()) => Some(Flow::Normal),
        Flow::Continue(None) => None,
        Flow::Continue(Some(l)) if label.as_deref() == Some(l.as_str()) => None,
        other => Some(other),
    }
}
