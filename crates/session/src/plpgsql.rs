//! The PL/pgSQL interpreter: runs a body parsed by `keel_pl` (DO blocks) inside the
//! session, statement by statement, in the caller's transaction.
//!
//! Every SQL statement and expression of the body goes through the session as any client
//! statement does (prepare, then `stream_query` or `run_collect`), with the body's variables
//! passed as parameters (`pl_vars`). So a statement in a body takes the same locks, sees the
//! same snapshot rules and is interrupted the same way as one sent by a client. The whole DO
//! is one client statement: statement_timeout and cancel count from its start
//! (`Session::pl_depth` keeps the inner statements from restarting the clock), so a runaway
//! loop stops with 57014.
//!
//! A block with an EXCEPTION clause runs inside a subtransaction (the engine's savepoint
//! levels): an error rolls the block's work back to its start before the handler runs, as in
//! PostgreSQL.

use crate::pl_vars::{Record, Scopes, Var};
use crate::session::Session;
use keel_common::{PgError, PgResult, sqlstate};
use keel_pl::{Block, Decl, SqlText, Stmt, StmtKind, TypeKind};
use keel_sql::Prepared;
use keel_types::cast::{CastContext, cast};
use keel_types::{Datum, SqlType, TypeId};
use keel_wire::Client;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

type Row = Vec<Datum>;

/// What a statement tells its enclosing loop or block.
enum Flow {
    Normal,
    Exit(Option<String>),
    Continue(Option<String>),
    Return,
}

/// A statement's rows and the number it reports (rows returned or changed).
struct Ran {
    names: Vec<String>,
    types: Vec<TypeId>,
    rows: Vec<Row>,
    count: u64,
}

/// The interpreter's state for one DO block.
pub(crate) struct PlState {
    vars: Scopes,
    found: bool,
    row_count: u64,
    /// Prepared statements by their parameterized text and parameter types.
    plans: rustc_hash::FxHashMap<(String, Vec<TypeId>), Arc<Prepared>>,
    /// The function's name as CONTEXT lines print it.
    fname: String,
}

impl PlState {
    /// FOUND is a variable of the outermost scope, as in PostgreSQL.
    fn set_found(&mut self, v: bool) {
        self.found = v;
        if let Some(f) = self.vars.scopes.first_mut().and_then(|s| s.first_mut()) {
            f.value = Datum::Bool(v);
        }
    }
}

type BoxFut<'a, T> = Pin<Box<dyn Future<Output = PgResult<T>> + Send + 'a>>;

fn type_of_decl(text: &str, kind: &TypeKind, cat: &keel_catalog::Catalog) -> PgResult<SqlType> {
    match kind {
        TypeKind::Named => keel_sql::bind::types::type_from_name(text),
        TypeKind::TypeOf(names) if names.len() == 2 => {
            let t = cat.table(&names[0])?;
            let c = t
                .columns
                .iter()
                .find(|c| c.name == names[1])
                .ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_COLUMN,
                        format!(
                            "column \"{}\" of relation \"{}\" does not exist",
                            names[1], names[0]
                        ),
                    )
                })?;
            Ok(c.ty)
        }
        _ => Err(PgError::unsupported(format!(
            "PL/pgSQL variable type {text}"
        ))),
    }
}

/// Interns a SQLSTATE a RAISE names (PgError codes are static; the set of codes a server
/// sees is small and bounded by what its functions spell out).
fn intern_code(code: &str) -> &'static str {
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

impl Session {
    /// `DO $$ ... $$`.
    pub(crate) async fn run_do<C: Client>(
        &mut self,
        body: &str,
        body_position: usize,
        client: &mut C,
    ) -> PgResult<()> {
        let parsed = keel_pl::parse_do_block(body).map_err(|e| {
            let mut err = e.error.clone();
            if let Some(p) = err.position {
                err.position = Some(p + body_position as u32 - 1);
            }
            if err.position.is_some() {
                return err;
            }
            err.with_context_line(format!(
                "compilation of PL/pgSQL function \"inline_code_block\" near line {}",
                e.line
            ))
        })?;
        let mut st = PlState {
            vars: Scopes {
                scopes: vec![vec![Var {
                    name: "found".into(),
                    ty: TypeId::Bool,
                    typmod: -1,
                    value: Datum::Bool(false),
                    constant: false,
                    not_null: false,
                    record: None,
                    is_record: false,
                }]],
            },
            found: false,
            row_count: 0,
            plans: Default::default(),
            fname: "inline_code_block".into(),
        };
        self.pl_depth += 1;
        let r = self.exec_block(&mut st, &parsed.block, client).await;
        self.pl_depth -= 1;
        r.map(|_| ())
    }

    fn exec_block<'a, C: Client>(
        &'a mut self,
        st: &'a mut PlState,
        block: &'a Block,
        client: &'a mut C,
    ) -> BoxFut<'a, Flow> {
        Box::pin(async move {
            keel_common::stack::check()?;
            st.vars.scopes.push(Vec::new());
            let r = self.exec_block_inner(st, block, client).await;
            st.vars.scopes.pop();
            match r? {
                Flow::Exit(Some(l)) if block.label.as_deref() == Some(l.as_str()) => {
                    Ok(Flow::Normal)
                }
                f => Ok(f),
            }
        })
    }

    async fn exec_block_inner<C: Client>(
        &mut self,
        st: &mut PlState,
        block: &Block,
        client: &mut C,
    ) -> PgResult<Flow> {
        for d in &block.decls {
            self.declare(st, d, client).await?;
        }
        let Some(handlers) = &block.exceptions else {
            return self.exec_stmts(st, &block.body, client).await;
        };
        // The block's work is a subtransaction: an error undoes it before a handler runs.
        let engine = self.engine.clone();
        let depth = {
            let txn = self.ensure_txn();
            engine.savepoint(txn);
            engine.savepoint_depth(txn)
        };
        let r = self.exec_stmts(st, &block.body, client).await;
        match r {
            Ok(flow) => {
                if let Some(txn) = self.txn.as_mut() {
                    engine.release_savepoint(txn, depth);
                }
                Ok(flow)
            }
            Err(err) => {
                if let Some(txn) = self.txn.as_mut() {
                    engine.rollback_to_savepoint(txn, depth);
                    engine.release_savepoint(txn, depth);
                }
                let Some(h) = handlers
                    .iter()
                    .find(|h| h.conditions.iter().any(|c| c.matches(err.code)))
                else {
                    return Err(err);
                };
                st.vars.scopes.push(vec![
                    Var {
                        name: "sqlstate".into(),
                        ty: TypeId::Text,
                        typmod: -1,
                        value: Datum::Text(err.code.to_string()),
                        constant: true,
                        not_null: false,
                        record: None,
                        is_record: false,
                    },
                    Var {
                        name: "sqlerrm".into(),
                        ty: TypeId::Text,
                        typmod: -1,
                        value: Datum::Text(err.message.clone()),
                        constant: true,
                        not_null: false,
                        record: None,
                        is_record: false,
                    },
                ]);
                let r = self.exec_stmts(st, &h.body, client).await;
                st.vars.scopes.pop();
                r
            }
        }
    }

    async fn declare<C: Client>(
        &mut self,
        st: &mut PlState,
        d: &Decl,
        client: &mut C,
    ) -> PgResult<()> {
        let Decl::Var(v) = d else {
            return Err(PgError::unsupported(
                "cursor and alias declarations in PL/pgSQL",
            ));
        };
        let text = v.data_type.text.text.trim();
        if text.eq_ignore_ascii_case("record") {
            st.vars.declare(Var {
                name: v.name.clone(),
                ty: TypeId::Void,
                typmod: -1,
                value: Datum::Null,
                constant: v.constant,
                not_null: false,
                record: None,
                is_record: true,
            });
            return Ok(());
        }
        let ty = type_of_decl(text, &v.data_type.kind, &self.catalog())?;
        let value = match &v.default {
            Some(e) => {
                let (d, from) = self.eval(st, e, client).await?;
                cast(d, from, ty, CastContext::Assignment)?
            }
            None => Datum::Null,
        };
        if v.not_null && value.is_null() {
            return Err(PgError::new(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                format!(
                    "variable \"{}\" must have a default value, since it's declared NOT NULL",
                    v.name
                ),
            ));
        }
        st.vars.declare(Var {
            name: v.name.clone(),
            ty: ty.id,
            typmod: ty.typmod,
            value,
            constant: v.constant,
            not_null: v.not_null,
            record: None,
            is_record: false,
        });
        Ok(())
    }

    fn exec_stmts<'a, C: Client>(
        &'a mut self,
        st: &'a mut PlState,
        stmts: &'a [Stmt],
        client: &'a mut C,
    ) -> BoxFut<'a, Flow> {
        Box::pin(async move {
            for s in stmts {
                let flow = self.exec_stmt(st, s, client).await.map_err(|e| {
                    let line = format!(
                        "PL/pgSQL function {} line {} at {}",
                        st.fname,
                        s.line,
                        s.kind_name()
                    );
                    // Only the innermost statement names its line: an enclosing loop or
                    // block adds none.
                    let located = e.objects.as_ref().is_some_and(|o| {
                        o.context.as_deref().is_some_and(|c| {
                            c.contains(&format!("PL/pgSQL function {} line", st.fname))
                        })
                    });
                    if located {
                        e
                    } else {
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

    async fn exec_stmt<C: Client>(
        &mut self,
        st: &mut PlState,
        s: &Stmt,
        client: &mut C,
    ) -> PgResult<Flow> {
        self.pl_check_interrupts()?;
        match &s.kind {
            StmtKind::Block(b) => self.exec_block(st, b, client).await,
            StmtKind::Null => Ok(Flow::Normal),
            StmtKind::Assign { target, expr } => {
                if !target.path.is_empty() {
                    return Err(PgError::unsupported(
                        "assignment to a field or element in PL/pgSQL",
                    ));
                }
                let (v, from) = self.eval(st, expr, client).await.map_err(|mut e| {
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
                self.assign(st, &target.name, v, from)?;
                Ok(Flow::Normal)
            }
            StmtKind::If {
                cond,
                then_body,
                elsifs,
                else_body,
            } => {
                if self.eval_bool(st, cond, client).await? {
                    return self.exec_stmts(st, then_body, client).await;
                }
                for e in elsifs {
                    if self.eval_bool(st, &e.cond, client).await? {
                        return self.exec_stmts(st, &e.body, client).await;
                    }
                }
                match else_body {
                    Some(b) => self.exec_stmts(st, b, client).await,
                    None => Ok(Flow::Normal),
                }
            }
            StmtKind::Case {
                expr,
                whens,
                else_body,
            } => {
                let selector = match expr {
                    Some(e) => Some(self.eval(st, e, client).await?),
                    None => None,
                };
                for w in whens {
                    let hit = match &selector {
                        None => self.eval_bool(st, &w.expr, client).await?,
                        Some((v, t)) => {
                            let (cands, ct) = self.eval_list(st, &w.expr, client).await?;
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
                        return self.exec_stmts(st, &w.body, client).await;
                    }
                }
                match else_body {
                    Some(b) => self.exec_stmts(st, b, client).await,
                    None => Err(PgError::new(sqlstate::CASE_NOT_FOUND, "case not found")
                        .with_hint("CASE statement is missing ELSE part.")),
                }
            }
            StmtKind::Loop { label, body } => loop {
                match self.exec_stmts(st, body, client).await? {
                    Flow::Normal => {}
                    f => match loop_flow(f, label) {
                        Some(out) => return Ok(out),
                        None => continue,
                    },
                }
            },
            StmtKind::While { label, cond, body } => {
                while self.eval_bool(st, cond, client).await? {
                    match self.exec_stmts(st, body, client).await? {
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
                let (lo, lt) = self.eval(st, lower, client).await?;
                let (hi, ht) = self.eval(st, upper, client).await?;
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
                        let (v, t) = self.eval(st, e, client).await?;
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
                st.vars.scopes.push(vec![Var {
                    name: var.clone(),
                    ty: TypeId::Int4,
                    typmod: -1,
                    value: Datum::Null,
                    constant: false,
                    not_null: false,
                    record: None,
                    is_record: false,
                }]);
                let mut i = lo;
                let mut result = Ok(Flow::Normal);
                while if *reverse { i >= hi } else { i <= hi } {
                    if let Some(v) = st.vars.find_mut(var) {
                        v.value = Datum::Int4(i as i32);
                    }
                    match self.exec_stmts(st, body, client).await {
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
                st.vars.scopes.pop();
                st.set_found(true);
                result
            }
            StmtKind::ForQuery {
                label,
                targets,
                query,
                body,
            } => {
                let ran = self.run_sql(st, query, client).await?;
                self.for_rows(st, label, targets, ran, body, client).await
            }
            StmtKind::ForExecute {
                label,
                targets,
                query,
                params,
                body,
            } => {
                let ran = self.run_dynamic(st, query, params, client).await?;
                self.for_rows(st, label, targets, ran, body, client).await
            }
            StmtKind::Foreach {
                label,
                targets,
                slice,
                array,
                body,
            } => {
                if *slice != 0 {
                    return Err(PgError::unsupported("FOREACH with SLICE"));
                }
                let (v, _) = self.eval(st, array, client).await?;
                let items = match v {
                    Datum::Array(a) => a,
                    Datum::Null => {
                        return Err(PgError::new(
                            sqlstate::NULL_VALUE_NOT_ALLOWED,
                            "FOREACH expression must not be null",
                        ));
                    }
                    _ => {
                        return Err(PgError::new(
                            sqlstate::DATATYPE_MISMATCH,
                            "FOREACH expression must yield an array",
                        ));
                    }
                };
                let elem = items.elem;
                let names = [String::new()];
                for item in std::sync::Arc::unwrap_or_clone(items).items {
                    self.assign_row(st, targets, &names, &[elem], vec![item])?;
                    match self.exec_stmts(st, body, client).await? {
                        Flow::Normal => {}
                        f => {
                            if let Some(out) = loop_flow(f, label) {
                                return Ok(out);
                            }
                        }
                    }
                }
                Ok(Flow::Normal)
            }
            StmtKind::Exit {
                is_exit,
                label,
                cond,
            } => {
                if let Some(c) = cond
                    && !self.eval_bool(st, c, client).await?
                {
                    return Ok(Flow::Normal);
                }
                Ok(if *is_exit {
                    Flow::Exit(label.clone())
                } else {
                    Flow::Continue(label.clone())
                })
            }
            StmtKind::Return { .. } => Ok(Flow::Return),
            StmtKind::Raise(r) => self
                .raise(st, r, s.line, client)
                .await
                .map(|_| Flow::Normal),
            StmtKind::Assert { cond, message } => {
                if self.eval_bool_or_null(st, cond, client).await? != Some(true) {
                    let msg = match message {
                        Some(m) => {
                            let (v, _) = self.eval(st, m, client).await?;
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
                let ran = self.run_dynamic(st, query, params, client).await?;
                self.finish_sql(st, ran, into.as_ref())?;
                Ok(Flow::Normal)
            }
            StmtKind::Perform { query } => {
                let sql = SqlText {
                    text: format!("SELECT {}", query.text),
                    offset: query.offset,
                    line: query.line,
                };
                let ran = self.run_sql(st, &sql, client).await?;
                st.set_found(ran.count > 0);
                st.row_count = ran.count;
                Ok(Flow::Normal)
            }
            StmtKind::Sql { sql, into } => {
                let ran = self.run_sql(st, sql, client).await?;
                self.finish_sql(st, ran, into.as_ref())?;
                Ok(Flow::Normal)
            }
            StmtKind::GetDiagnostics { items, .. } => {
                for (target, item) in items {
                    let v = match item {
                        keel_pl::DiagItem::RowCount => Datum::Int8(st.row_count as i64),
                        other => {
                            return Err(PgError::unsupported(format!(
                                "GET DIAGNOSTICS {}",
                                other.name()
                            )));
                        }
                    };
                    let name = target.names.join(".");
                    self.assign(st, &name, v, TypeId::Int8)?;
                }
                Ok(Flow::Normal)
            }
            _ => Err(PgError::unsupported(format!(
                "PL/pgSQL statement {}",
                s.kind_name()
            ))),
        }
    }

    /// The FOR-over-rows loop body: each row assigned to the targets in turn.
    async fn for_rows<C: Client>(
        &mut self,
        st: &mut PlState,
        label: &Option<String>,
        targets: &[keel_pl::VarRef],
        ran: Ran,
        body: &[Stmt],
        client: &mut C,
    ) -> PgResult<Flow> {
        let any = !ran.rows.is_empty();
        let Ran {
            names, types, rows, ..
        } = ran;
        for row in rows {
            self.assign_row(st, targets, &names, &types, row)?;
            match self.exec_stmts(st, body, client).await? {
                Flow::Normal => {}
                f => {
                    if let Some(out) = loop_flow(f, label) {
                        st.set_found(any);
                        return Ok(out);
                    }
                }
            }
        }
        st.set_found(any);
        Ok(Flow::Normal)
    }

    /// INTO targets, FOUND and ROW_COUNT after a statement.
    fn finish_sql(
        &mut self,
        st: &mut PlState,
        ran: Ran,
        into: Option<&keel_pl::Into>,
    ) -> PgResult<()> {
        st.set_found(ran.count > 0);
        st.row_count = ran.count;
        let Some(into) = into else {
            return Ok(());
        };
        if into.strict {
            if ran.rows.is_empty() {
                return Err(PgError::new(
                    sqlstate::NO_DATA_FOUND,
                    "query returned no rows",
                ));
            }
            if ran.rows.len() > 1 {
                return Err(PgError::new(
                    sqlstate::TOO_MANY_ROWS,
                    "query returned more than one row",
                )
                .with_hint("Make sure the query returns a single row, or use LIMIT 1."));
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

    fn assign_row(
        &mut self,
        st: &mut PlState,
        targets: &[keel_pl::VarRef],
        names: &[String],
        types: &[TypeId],
        row: Row,
    ) -> PgResult<()> {
        if let [t] = targets
            && let Some(v) = st.vars.find_mut(&t.names.join("."))
            && v.is_record
        {
            v.record = Some(Record {
                names: names.to_vec(),
                types: types.to_vec(),
                values: row,
            });
            return Ok(());
        }
        for (i, t) in targets.iter().enumerate() {
            let v = row.get(i).cloned().unwrap_or(Datum::Null);
            let ty = types.get(i).copied().unwrap_or(TypeId::Unknown);
            self.assign(st, &t.names.join("."), v, ty)?;
        }
        Ok(())
    }

    fn assign(&mut self, st: &mut PlState, name: &str, v: Datum, from: TypeId) -> PgResult<()> {
        let Some(var) = st.vars.find_mut(name) else {
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
            return Err(PgError::unsupported(
                "assigning a scalar to a record variable",
            ));
        }
        let v = cast(
            v,
            from,
            SqlType::with_typmod(var.ty, var.typmod),
            CastContext::Assignment,
        )?;
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
fn loop_flow(f: Flow, label: &Option<String>) -> Option<Flow> {
    match f {
        Flow::Exit(None) => Some(Flow::Normal),
        Flow::Exit(Some(l)) if label.as_deref() == Some(l.as_str()) => Some(Flow::Normal),
        Flow::Continue(None) => None,
        Flow::Continue(Some(l)) if label.as_deref() == Some(l.as_str()) => None,
        other => Some(other),
    }
}

#[path = "plpgsql_raise.rs"]
mod raise;
#[path = "plpgsql_sql.rs"]
mod sql;
