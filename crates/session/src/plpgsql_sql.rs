//! How the interpreter runs SQL: expressions as `SELECT <expr>`, statements as written, both
//! with the body's variables as parameters; EXECUTE's dynamic text with its USING values.

use super::{PlState, Ran};
use crate::exec::RowSink;
use crate::pl_vars::bind_vars;
use crate::session::Session;
use keel_common::{PgError, PgResult, sqlstate};
use keel_pl::SqlText;
use keel_sql::Stmt as SqlStmt;
use keel_sql::exec::tuplestore::Tuplestore;
use keel_types::{Datum, TypeId};
use keel_wire::Client;
use std::sync::Arc;

impl Session {
    /// 57014 once the DO statement is cancelled or past statement_timeout.
    pub(crate) fn pl_check_interrupts(&self) -> PgResult<()> {
        keel_sql::interrupt::check(
            &self.cancel_check(),
            self.deadline,
            std::time::Instant::now(),
        )
    }

    /// An expression's value and type (`SELECT <expr>`: one column; no row is NULL).
    pub(super) async fn eval<C: Client>(
        &mut self,
        st: &mut PlState,
        e: &SqlText,
        client: &mut C,
    ) -> PgResult<(Datum, TypeId)> {
        let sql = SqlText {
            text: format!("SELECT {}", e.text),
            offset: e.offset,
            line: e.line,
        };
        let ran = self.run_sql(st, &sql, client).await?;
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
    pub(super) async fn eval_list<C: Client>(
        &mut self,
        st: &mut PlState,
        e: &SqlText,
        client: &mut C,
    ) -> PgResult<(Vec<Datum>, Vec<TypeId>)> {
        let sql = SqlText {
            text: format!("SELECT {}", e.text),
            offset: e.offset,
            line: e.line,
        };
        let ran = self.run_sql(st, &sql, client).await?;
        let row = ran.rows.into_iter().next().unwrap_or_default();
        Ok((row, ran.types))
    }

    pub(super) async fn eval_bool_or_null<C: Client>(
        &mut self,
        st: &mut PlState,
        e: &SqlText,
        client: &mut C,
    ) -> PgResult<Option<bool>> {
        let (v, t) = self.eval(st, e, client).await?;
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
    pub(super) async fn eval_bool<C: Client>(
        &mut self,
        st: &mut PlState,
        e: &SqlText,
        client: &mut C,
    ) -> PgResult<bool> {
        Ok(self.eval_bool_or_null(st, e, client).await? == Some(true))
    }

    /// Runs one statement of the body with its variables bound.
    pub(super) async fn run_sql<C: Client>(
        &mut self,
        st: &mut PlState,
        sql: &SqlText,
        client: &mut C,
    ) -> PgResult<Ran> {
        let bound = bind_vars(&sql.text, &st.vars);
        let verbatim = bound.text == sql.text;
        let key = (bound.text, bound.types);
        let prep = match st.plans.get(&key) {
            Some(p) => p.clone(),
            None => {
                let p = self
                    .prepare(&key.0, 0, &key.1)
                    .map_err(|e| internal(e, &sql.text, verbatim))?;
                let p = Arc::new(p);
                st.plans.insert(key.clone(), p.clone());
                p
            }
        };
        self.run_prepared(&prep, &bound.values, client)
            .await
            .map_err(|e| internal(e, &sql.text, verbatim))
    }

    /// `EXECUTE expr [USING ...]`: the text is prepared as given, the USING values are `$n`.
    pub(super) async fn run_dynamic<C: Client>(
        &mut self,
        st: &mut PlState,
        query: &SqlText,
        params: &[SqlText],
        client: &mut C,
    ) -> PgResult<Ran> {
        let (text, _) = self.eval(st, query, client).await?;
        let Datum::Text(text) = text else {
            return Err(PgError::new(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                "query string argument of EXECUTE is null",
            ));
        };
        let mut types = Vec::with_capacity(params.len());
        let mut values = Vec::with_capacity(params.len());
        for p in params {
            let (v, t) = self.eval(st, p, client).await?;
            types.push(if t == TypeId::Unknown {
                TypeId::Text
            } else {
                t
            });
            values.push(v);
        }
        let prep = Arc::new(
            self.prepare(&text, 0, &types)
                .map_err(|e| internal(e, &text, true))?,
        );
        self.run_prepared(&prep, &values, client)
            .await
            .map_err(|e| internal(e, &text, true))
    }

    async fn run_prepared<C: Client>(
        &mut self,
        prep: &Arc<keel_sql::Prepared>,
        values: &[Datum],
        client: &mut C,
    ) -> PgResult<Ran> {
        for n in &prep.notices {
            client.notice(n);
        }
        self.run_prepared_inner(prep, values, client).await
    }

    async fn run_prepared_inner<C: Client>(
        &mut self,
        prep: &Arc<keel_sql::Prepared>,
        values: &[Datum],
        client: &mut C,
    ) -> PgResult<Ran> {
        let (names, types): (Vec<String>, Vec<TypeId>) = prep
            .columns()
            .map(|c| c.iter().map(|c| (c.name.clone(), c.ty)).unzip())
            .unwrap_or_default();
        match &prep.stmt {
            SqlStmt::Query(_) => {
                let mut store = Tuplestore::new(self.settings.work_mem_bytes());
                let n = self
                    .stream_query(prep, values, &[], client, RowSink::Store(&mut store))
                    .await?;
                let mut rows = Vec::with_capacity(n as usize);
                while let Some((_, r)) = store.pop()? {
                    rows.push(r);
                }
                Ok(Ran {
                    names,
                    types,
                    rows,
                    count: n,
                })
            }
            SqlStmt::Utility(keel_sql::utility::Utility::Do { .. }) | SqlStmt::Utility(_) => {
                let (rows, tag) = self.run_collect(prep, values, &[], client).await?;
                Ok(Ran {
                    names,
                    types,
                    count: tag_count(&tag),
                    rows,
                })
            }
            _ => {
                let (rows, tag) = self.run_collect(prep, values, &[], client).await?;
                Ok(Ran {
                    names,
                    types,
                    count: tag_count(&tag),
                    rows,
                })
            }
        }
    }
}

/// An error of a statement inside the body: its cursor position points into that statement,
/// so it moves to the internal position and the statement becomes the internal query (psql
/// prints them as `LINE 1: ...` and `QUERY: ...`). The position is kept only when the text
/// ran as written (no variable became a parameter before it).
fn internal(mut e: PgError, text: &str, verbatim: bool) -> PgError {
    if e.objects
        .as_ref()
        .is_some_and(|o| o.internal_query.is_some() || o.context.is_some())
    {
        return e;
    }
    let pos = e.position.take();
    let o = e.objects.get_or_insert_with(Default::default);
    o.internal_query = Some(text.to_string());
    o.internal_position = if verbatim { pos } else { None };
    e
}

/// The row count a command tag reports (`INSERT 0 5`, `UPDATE 3`); 0 for others.
fn tag_count(tag: &str) -> u64 {
    tag.rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
