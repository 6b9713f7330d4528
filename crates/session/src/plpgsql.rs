//! DO blocks: the PL/pgSQL interpreter (keel-plpgsql) with the session as its host.
//!
//! Every SQL statement and expression of the body goes through the session as any client
//! statement does (prepare, then `stream_query` or `run_collect`), with the body's variables
//! passed as parameters. So a statement in a body takes the same locks, sees the same
//! snapshot rules and is interrupted the same way as one sent by a client. The whole DO is
//! one client statement: statement_timeout and cancel count from its start
//! (`Session::pl_depth` keeps the inner statements from restarting the clock), so a runaway
//! loop stops with 57014.

use crate::exec::RowSink;
use crate::session::Session;
use keel_common::{PgError, PgResult};
use keel_plpgsql::{BoxFut, Host, PlState, Ran, tag_count};
use keel_sql::Prepared;
use keel_sql::Stmt as SqlStmt;
use keel_sql::exec::tuplestore::Tuplestore;
use keel_types::{Datum, TypeId};
use keel_wire::Client;
use std::sync::Arc;

/// The session as the interpreter's host, with the client its notices go to.
struct SessionHost<'s, C> {
    session: &'s mut Session,
    client: &'s mut C,
}

impl<C: Client + Send> Host for SessionHost<'_, C> {
    fn check_interrupts(&self) -> PgResult<()> {
        let s = &self.session;
        keel_sql::interrupt::check(&s.cancel_check(), s.deadline, std::time::Instant::now())
    }

    fn catalog(&self) -> Arc<keel_catalog::Catalog> {
        self.session.catalog()
    }

    fn prepare(
        &mut self,
        text: &str,
        types: &[TypeId],
        vars: &keel_sql::bind::PlVars,
    ) -> PgResult<Arc<Prepared>> {
        self.session.stack_limit();
        Ok(Arc::new(keel_sql::prepare_in_body(
            self.session.catalog(),
            &keel_sql::EngineSizes(&self.session.engine),
            text,
            0,
            types,
            Some(vars),
        )?))
    }

    fn run<'a>(&'a mut self, prep: &'a Arc<Prepared>, values: &'a [Datum]) -> BoxFut<'a, Ran> {
        Box::pin(async move {
            let r = self.session.run_for_pl(prep, values, self.client).await;
            // What functions the statement called raised goes out now, before the block's
            // next notices, in the order PostgreSQL sends them.
            self.session.send_warnings(self.client);
            r
        })
    }

    fn savepoint(&mut self) -> PgResult<usize> {
        let engine = self.session.engine.clone();
        let txn = self.session.ensure_txn();
        engine.savepoint(txn);
        Ok(engine.savepoint_depth(txn))
    }

    fn end_savepoint(&mut self, depth: usize, undo: bool) {
        let engine = self.session.engine.clone();
        if let Some(txn) = self.session.txn.as_mut() {
            if undo {
                engine.rollback_to_savepoint(txn, depth);
                self.session.funcs.cursors.rollback_to(depth);
            }
            engine.release_savepoint(txn, depth);
            self.session.funcs.cursors.release(depth);
        }
    }

    fn notice(&mut self, n: &PgError) {
        self.client.notice(n);
    }

    fn cursors(&mut self) -> PgResult<&mut keel_sql::exec::cursor::Cursors> {
        Ok(&mut self.session.funcs.cursors)
    }

    fn new_cursor(
        &self,
        columns: Vec<keel_sql::plan::OutColumn>,
        scroll: Option<bool>,
    ) -> keel_sql::exec::cursor::Cursor {
        self.session.new_cursor(columns, scroll, false)
    }
}

impl Session {
    /// `DO $$ ... $$`.
    pub(crate) async fn run_do<C: Client + Send>(
        &mut self,
        body: &str,
        body_position: usize,
        client: &mut C,
    ) -> PgResult<()> {
        let parsed = keel_pl::parse_do_block(body)
            .and_then(|parsed| {
                let shape = keel_sql::plpgsql_check::ResultShape::do_block();
                keel_sql::plpgsql_check::check_body(&parsed, body, shape).map(|()| parsed)
            })
            .map_err(|e| {
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
        let mut st = PlState::new("inline_code_block".into(), Vec::new());
        st.set_options(&parsed.options, &self.settings);
        self.pl_depth += 1;
        let r = {
            let mut host = SessionHost {
                session: &mut *self,
                client,
            };
            keel_plpgsql::run_body(&mut host, &mut st, &parsed.block).await
        };
        self.pl_depth -= 1;
        r.map(|_| ())
    }

    /// Runs one statement of a DO body and collects its rows.
    async fn run_for_pl<C: Client>(
        &mut self,
        prep: &Arc<Prepared>,
        values: &[Datum],
        client: &mut C,
    ) -> PgResult<Ran> {
        // EXECUTE of a prepared statement runs that statement.
        let target = self.executed(&prep.stmt, prep.char_offset)?;
        let (prep, values) = match &target {
            Some((inner, args)) => (inner, args.as_slice()),
            None => (prep, values),
        };
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
                    writes: false,
                })
            }
            _ => {
                let (rows, tag) = self.run_collect(prep, values, &[], client).await?;
                Ok(Ran {
                    names,
                    types,
                    count: tag_count(&tag),
                    rows,
                    writes: matches!(prep.stmt, SqlStmt::Modify(_)),
                })
            }
        }
    }
}
