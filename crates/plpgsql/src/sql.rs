//! How the interpreter runs SQL: expressions as `SELECT <expr>`, statements as written, both
//! with the body's variables as parameters; EXECUTE's dynamic text with its USING values.

use crate::interp::{Interp, PlState};
use crate::vars::bind_vars;
use crate::{Host, Ran};
use keel_common::{PgError, PgResult, sqlstate};
use keel_pl::SqlText;
use keel_types::{Datum, TypeId};
use std::sync::Arc;

impl<H: Host + ?Sized> Interp<'_, H> {
    /// An expression's value and type (`SELECT <expr>`: one column; no row is NULL).
    pub(crate) async fn eval(
        &mut self,
        st: &mut PlState,
        e: &SqlText,
    ) -> PgResult<(Datum, TypeId)> {
        let sql = SqlText {
            text: format!("SELECT {}", e.text),
            offset: e.offset,
            line: e.line,
        };
        let ran = self.run_sql(st, &sql, Some(e)).await?;
        if ran.types.len() != 1 {
            return Err(PgError::new(
                sqlstate::SYNTAX_ERROR,
                format!(
                    "query \"{}\" returned {} columns",
                    sql.text,
                    ran.types.len()
                ),
            ));
        }
        if ran.rows.len() > 1 {
            return Err(PgError::new(
                sqlstate::CARDINALITY_VIOLATION,
                format!("query \"{}\" returned more than one row", sql.text),
            ));
        }
        let v = ran
            .rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .unwrap_or(Datum::Null);
        Ok((v, ran.types[0]))
    }

    /// A comma list's values (a simple CASE's `WHEN 1, 2`).
    pub(crate) async fn eval_list(
        &mut self,
        st: &mut PlState,
        e: &SqlText,
    ) -> PgResult<(Vec<Datum>, Vec<TypeId>)> {
        let sql = SqlText {
            text: format!("SELECT {}", e.text),
            offset: e.offset,
            line: e.line,
        };
        let ran = self.run_sql(st, &sql, Some(e)).await?;
        let row = ran.rows.into_iter().next().unwrap_or_default();
        Ok((row, ran.types))
    }

    pub(crate) async fn eval_bool_or_null(
        &mut self,
        st: &mut PlState,
        e: &SqlText,
    ) -> PgResult<Option<bool>> {
        let (v, t) = self.eval(st, e).await?;
        let v = keel_types::cast::cast(
            v,
            t,
            keel_types::SqlType::new(TypeId::Bool),
            keel_types::cast::CastContext::Assignment,
        )?;
        Ok(match v {
            Datum::Bool(b) => Some(b),
            _ => None,
        })
    }

    /// A condition: NULL counts as false.
    pub(crate) async fn eval_bool(&mut self, st: &mut PlState, e: &SqlText) -> PgResult<bool> {
        Ok(self.eval_bool_or_null(st, e).await? == Some(true))
    }

    /// Runs one statement of the body with its variables bound: a statement as written
    /// (`expr` None), or the `SELECT` of expression `expr`.
    pub(crate) async fn run_sql(
        &mut self,
        st: &mut PlState,
        sql: &SqlText,
        expr: Option<&SqlText>,
    ) -> PgResult<Ran> {
        let bound = bind_vars(&sql.text, &st.vars);
        if st.print_strict_params && expr.is_none() {
            st.last_params = strict_params(&bound.names, &bound.values);
        }
        let key = (bound.text, bound.types, bound.names);
        let prep = match st.plans.get(&key) {
            Some(p) => p.clone(),
            None => {
                let vars = keel_sql::bind::PlVars {
                    names: key.2.clone(),
                    conflict: st.conflict,
                    relations: Vec::new(),
                };
                let subs = &bound.subs;
                // An expression's error shows the expression, not the SELECT it ran as.
                let (shown, prefix) = match expr {
                    Some(e) => (e.text.as_str(), sql.text.len() - e.text.len()),
                    None => (sql.text.as_str(), 0),
                };
                let p = self.h.prepare(&key.0, &key.1, &vars).map_err(|e| {
                    if e.position.is_none() {
                        return unplaced(e, shown, expr.is_some());
                    }
                    internal(e, shown, |p| {
                        let p = subs.original_position(&key.0, &sql.text, p) as usize;
                        p.checked_sub(prefix).filter(|&p| p >= 1).map(|p| p as u32)
                    })
                })?;
                st.plans.insert(key, p.clone());
                p
            }
        };
        // The expression's node in the parsed body: the same across recursive calls.
        let key = expr.map(|e| e as *const SqlText as usize);
        let in_use = key.is_some_and(|k| self.h.enter_expr(k));
        let r = self.run_prepared(&prep, &bound.values).await;
        if let Some(k) = key {
            self.h.leave_expr(k);
        }
        let expr = expr.map(|e| e.text.as_str());
        r.map_err(|e| ran_context(e, &prep, &sql.text, expr, in_use))
    }

    /// `EXECUTE expr [USING ...]`: the text is prepared as given, the USING values are `$n`.
    pub(crate) async fn run_dynamic(
        &mut self,
        st: &mut PlState,
        query: &SqlText,
        params: &[SqlText],
    ) -> PgResult<Ran> {
        let (text, _) = self.eval(st, query).await?;
        let Datum::Text(text) = text else {
            return Err(PgError::new(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                "query string argument of EXECUTE is null",
            ));
        };
        let mut types = Vec::with_capacity(params.len());
        let mut values = Vec::with_capacity(params.len());
        for p in params {
            let (v, t) = self.eval(st, p).await?;
            types.push(if t == TypeId::Unknown {
                TypeId::Text
            } else {
                t
            });
            values.push(v);
        }
        let prep = self
            .h
            .prepare(&text, &types, &keel_sql::bind::PlVars::default())
            .map_err(|e| match e.position {
                None => unplaced(e, &text, false),
                Some(_) => internal(e, &text, Some),
            })?;
        if st.print_strict_params {
            st.last_params = strict_params(&vec![None; values.len()], &values);
        }
        self.run_prepared(&prep, &values)
            .await
            .map_err(|e| ran_context(e, &prep, &text, None, false))
    }
}

/// An error raised while a statement of the body ran names it in a CONTEXT line, as
/// PostgreSQL's SPI does: `SQL statement "..."`, or `SQL expression "..."` for an expression
/// that reads tables or runs subqueries (a simple one, evaluated without a query, adds no
/// line). Errors that arose while the statement was parsed or bound keep their position
/// instead (`internal`).
fn ran_context(
    e: PgError,
    prep: &keel_sql::Prepared,
    text: &str,
    expr: Option<&str>,
    in_use: bool,
) -> PgError {
    if e.position.is_some() {
        return internal(e, text, |_| None);
    }
    match expr {
        None => e.with_context_line(format!("SQL statement \"{text}\"")),
        Some(_) if !in_use && is_simple(prep) => e,
        Some(x) => e.with_context_line(format!("SQL expression \"{x}\"")),
    }
}

/// An expression PostgreSQL's PL/pgSQL evaluates without a query: no table, no subquery.
fn is_simple(prep: &keel_sql::Prepared) -> bool {
    use keel_sql::plan::Plan;
    let keel_sql::Stmt::Query(q) = &prep.stmt else {
        return false;
    };
    let root = match &q.root {
        Plan::Project {
            input, srf: None, ..
        } => input.as_ref(),
        other => other,
    };
    q.subplans.is_empty() && matches!(root, Plan::Values { rows } if rows.len() == 1)
}

/// An error without a position from parsing or binding a statement (or expression) of the
/// body names it in a CONTEXT line, as PostgreSQL's SPI error callback does.
fn unplaced(e: PgError, text: &str, expression: bool) -> PgError {
    if e.objects
        .as_ref()
        .is_some_and(|o| o.internal_query.is_some() || o.context.is_some())
    {
        return e;
    }
    let what = if expression {
        "expression"
    } else {
        "statement"
    };
    e.with_context_line(format!("SQL {what} \"{text}\""))
}

/// An error of a statement inside the body: its cursor position points into that statement,
/// so it moves to the internal position and the statement becomes the internal query (psql
/// prints them as `LINE 1: ...` and `QUERY: ...`). `at` maps the position in the text that
/// ran to the text as written (variables became parameters), or drops it.
fn internal(mut e: PgError, text: &str, at: impl Fn(u32) -> Option<u32>) -> PgError {
    if e.objects
        .as_ref()
        .is_some_and(|o| o.internal_query.is_some() || o.context.is_some())
    {
        return e;
    }
    let pos = e.position.take();
    let o = e.objects.get_or_insert_with(Default::default);
    o.internal_query = Some(text.to_string());
    o.internal_position = pos.and_then(at);
    e
}

impl<H: Host + ?Sized> Interp<'_, H> {
    /// Runs a prepared statement of the body; its planning notices go out first.
    async fn run_prepared(
        &mut self,
        prep: &Arc<keel_sql::Prepared>,
        values: &[Datum],
    ) -> PgResult<Ran> {
        for n in &prep.notices {
            self.h.notice(n);
        }
        self.h.run(prep, values).await
    }
}

/// A statement plan's key in `PlState::plans`: the text with variables as parameters, the
/// parameters' types, and the variables they stand for.
pub(crate) type PlanKey = (String, Vec<TypeId>, Vec<Option<String>>);

/// The row count a command tag reports (`INSERT 0 5`, `UPDATE 3`); 0 for others.
pub fn tag_count(tag: &str) -> u64 {
    tag.rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The parameters a STRICT error lists under print_strict_params: each variable's name in the
/// order the statement first uses it (`$n` for the others).
fn strict_params(names: &[Option<String>], values: &[Datum]) -> Vec<(String, Datum)> {
    names
        .iter()
        .zip(values)
        .enumerate()
        .map(|(i, (n, v))| {
            (
                n.clone().unwrap_or_else(|| format!("${}", i + 1)),
                v.clone(),
            )
        })
        .collect()
}
