//! Cursors in PL/pgSQL: OPEN (bound, FOR query, FOR EXECUTE), FETCH / MOVE, CLOSE and FOR
//! over a bound cursor. A cursor variable holds the portal's name (a refcursor); the portal
//! itself is one of the session's cursors (keel_sql::exec::cursor), so a function can open
//! one and return its name for the caller, or the client, to FETCH from.

use crate::interp::{Flow, Interp, PlState};
use crate::vars::Var;
use crate::{Host, Ran};
use keel_common::{PgError, PgResult, sqlstate};
use keel_pl::{FetchDirection, OpenSource, SqlText, Stmt, VarRef};
use keel_sql::cursor_stmt::Fetch;
use keel_sql::exec::cursor::Cursor;
use keel_sql::plan::OutColumn;
use keel_types::cast::{CastContext, cast};
use keel_types::{Datum, SqlType, TypeId};

impl<H: Host + ?Sized> Interp<'_, H> {
    /// OPEN: runs the cursor's query into a new portal; returns the portal's name.
    pub(crate) async fn open_cursor(
        &mut self,
        st: &mut PlState,
        cursor: &VarRef,
        source: &OpenSource,
    ) -> PgResult<String> {
        let var_name = cursor.names.join(".");
        let (current, bound, constant) = match st.vars.find(&var_name) {
            Some(v) => (v.value.clone(), v.bound.clone(), v.constant),
            None => {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!("variable \"{var_name}\" does not exist"),
                ));
            }
        };
        let name = match &current {
            // OPEN must name the portal into the variable.
            Datum::Null if constant => {
                return Err(PgError::new(
                    sqlstate::ERROR_IN_ASSIGNMENT,
                    format!("variable \"{var_name}\" is declared CONSTANT"),
                ));
            }
            Datum::Null => None,
            v => Some(keel_types::io::to_text(v)),
        };
        if let Some(n) = &name
            && self.h.cursors()?.contains(n)
        {
            return Err(PgError::new(
                sqlstate::DUPLICATE_CURSOR,
                format!("cursor \"{n}\" already in use"),
            ));
        }
        let (ran, scroll) = match source {
            OpenSource::Bound { args } => {
                let Some(decl) = bound else {
                    return Err(PgError::new(
                        sqlstate::SYNTAX_ERROR,
                        format!("cursor \"{var_name}\" has no arguments"),
                    ));
                };
                let ran = self.run_bound(st, &var_name, &decl, args.as_ref()).await?;
                (ran, decl.scroll)
            }
            OpenSource::Query { scroll, query } => (self.run_sql(st, query, None).await?, *scroll),
            OpenSource::Execute {
                scroll,
                query,
                params,
            } => (self.run_dynamic(st, query, params).await?, *scroll),
        };
        let name = match name {
            Some(n) => n,
            None => self.h.cursors()?.unnamed(),
        };
        let mut c = self.h.new_cursor(columns(&ran), scroll);
        for r in ran.rows {
            c.push(r)?;
        }
        self.h.cursors()?.insert(name.clone(), c)?;
        if let Some(v) = st.vars.find_mut(&var_name) {
            v.value = Datum::Text(name.clone());
        }
        Ok(name)
    }

    /// A bound cursor's query, with its arguments as variables of a scope of their own.
    async fn run_bound(
        &mut self,
        st: &mut PlState,
        var_name: &str,
        decl: &keel_pl::CursorDecl,
        args: Option<&SqlText>,
    ) -> PgResult<Ran> {
        let values = match args {
            Some(a) => {
                let values =
                    keel_pl::cursor_arguments(&a.text, var_name, decl).map_err(|(e, _)| e)?;
                let list = SqlText {
                    text: values.join(", "),
                    offset: a.offset,
                    line: a.line,
                };
                self.eval_list(st, &list).await?
            }
            None if decl.args.is_empty() => (Vec::new(), Vec::new()),
            None => {
                return Err(PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    format!("cursor \"{var_name}\" has arguments"),
                ));
            }
        };
        let mut vars = Vec::with_capacity(decl.args.len());
        for ((name, ty), (v, from)) in decl.args.iter().zip(values.0.into_iter().zip(values.1)) {
            let ty = keel_sql::bind::types::type_from_name(&ty.text.text)?;
            let v = cast(v, from, ty, CastContext::Assignment)?;
            vars.push(Var {
                typmod: ty.typmod,
                ..Var::scalar(name, ty.id, v)
            });
        }
        st.vars.push_scope(vars);
        let ran = self.run_sql(st, &decl.query, None).await;
        st.vars.pop_scope();
        ran
    }

    /// The portal a cursor variable names; 22004 when it is NULL.
    fn portal_of(&self, st: &PlState, cursor: &VarRef) -> PgResult<String> {
        let var_name = cursor.names.join(".");
        match st.vars.find(&var_name).map(|v| &v.value) {
            Some(Datum::Null) | None => Err(PgError::new(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                format!("cursor variable \"{var_name}\" is null"),
            )),
            Some(v) => Ok(keel_types::io::to_text(v)),
        }
    }

    /// FETCH [direction] cursor INTO targets, or MOVE.
    pub(crate) async fn fetch_cursor(
        &mut self,
        st: &mut PlState,
        is_move: bool,
        direction: &FetchDirection,
        cursor: &VarRef,
        into: Option<&keel_pl::Into>,
    ) -> PgResult<()> {
        let dir = self.direction(st, direction).await?;
        let portal = self.portal_of(st, cursor)?;
        let c = self.h.cursors()?.get(&portal)?;
        let (mut rows, n) = c.fetch(dir, !is_move)?;
        let (names, types) = names_types(c);
        st.set_found(n > 0);
        st.row_count = n;
        if let Some(into) = into {
            let row = match rows.is_empty() {
                true => vec![Datum::Null; types.len()],
                false => rows.swap_remove(0),
            };
            self.assign_row(st, &into.targets, &names, &types, row)?;
        }
        Ok(())
    }

    async fn direction(&mut self, st: &mut PlState, d: &FetchDirection) -> PgResult<Fetch> {
        Ok(match d {
            FetchDirection::Next | FetchDirection::Forward(None) => Fetch::Forward(1),
            FetchDirection::Prior | FetchDirection::Backward(None) => Fetch::Backward(1),
            FetchDirection::First => Fetch::Absolute(1),
            FetchDirection::Last => Fetch::Absolute(-1),
            FetchDirection::All | FetchDirection::ForwardAll => Fetch::Forward(Fetch::ALL),
            FetchDirection::BackwardAll => Fetch::Backward(Fetch::ALL),
            FetchDirection::Absolute(e) => Fetch::Absolute(self.count(st, e).await?),
            FetchDirection::Relative(e) => Fetch::Relative(self.count(st, e).await?),
            FetchDirection::Forward(Some(e)) | FetchDirection::Count(e) => {
                Fetch::Forward(self.count(st, e).await?)
            }
            FetchDirection::Backward(Some(e)) => Fetch::Backward(self.count(st, e).await?),
        })
    }

    async fn count(&mut self, st: &mut PlState, e: &SqlText) -> PgResult<i64> {
        let (v, from) = self.eval(st, e).await?;
        match cast(v, from, SqlType::new(TypeId::Int8), CastContext::Assignment)? {
            Datum::Int8(n) => Ok(n),
            _ => Err(PgError::new(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                "FETCH or MOVE count must not be null",
            )),
        }
    }

    /// CLOSE cursor.
    pub(crate) fn close_cursor(&mut self, st: &PlState, cursor: &VarRef) -> PgResult<()> {
        let portal = self.portal_of(st, cursor)?;
        self.h.cursors()?.close(&portal)
    }

    /// `FOR rec IN cursor [(args)] LOOP`: opens the bound cursor, runs the body once per
    /// row with `rec` a record of it, and closes the cursor however the loop ends.
    pub(crate) async fn for_cursor(
        &mut self,
        st: &mut PlState,
        label: &Option<String>,
        var: &str,
        cursor: &VarRef,
        args: Option<&SqlText>,
        body: &[Stmt],
    ) -> PgResult<Flow> {
        let source = OpenSource::Bound {
            args: args.cloned(),
        };
        // A variable that was NULL gets a generated portal name for the loop and is NULL
        // again after it, as in PostgreSQL.
        let var_name = cursor.names.join(".");
        let was_null = st.vars.find(&var_name).is_none_or(|v| v.value.is_null());
        let portal = self.open_cursor(st, cursor, &source).await?;
        st.vars.push_scope(vec![Var::record(var, false, None)]);
        let target = [VarRef {
            names: vec![var.to_string()],
            offset: cursor.offset,
        }];
        let r = self.cursor_rows(st, label, &portal, &target, body).await;
        st.vars.pop_scope();
        let closed = self.h.cursors().and_then(|c| c.close(&portal));
        if was_null && let Some(v) = st.vars.find_mut(&var_name) {
            v.value = Datum::Null;
        }
        let flow = r?;
        closed?;
        Ok(flow)
    }

    async fn cursor_rows(
        &mut self,
        st: &mut PlState,
        label: &Option<String>,
        portal: &str,
        target: &[VarRef],
        body: &[Stmt],
    ) -> PgResult<Flow> {
        let mut any = false;
        loop {
            let c = self.h.cursors()?.get(portal)?;
            let (mut rows, _) = c.fetch(Fetch::Forward(1), true)?;
            let Some(row) = rows.pop() else { break };
            let (names, types) = names_types(c);
            any = true;
            self.assign_row(st, target, &names, &types, row)?;
            if let Some(out) = self.loop_body(st, label, body).await? {
                st.set_found(any);
                return Ok(out);
            }
        }
        st.set_found(any);
        Ok(Flow::Normal)
    }
}

fn columns(ran: &Ran) -> Vec<OutColumn> {
    ran.names
        .iter()
        .zip(&ran.types)
        .map(|(n, &ty)| OutColumn {
            name: n.clone(),
            ty,
            typmod: -1,
            table_oid: 0,
            attnum: 0,
        })
        .collect()
}

fn names_types(c: &Cursor) -> (Vec<String>, Vec<TypeId>) {
    c.columns.iter().map(|c| (c.name.clone(), c.ty)).unzip()
}
