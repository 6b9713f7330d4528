//! SQL-level cursors: DECLARE runs the query into a cursor (keel_sql::exec::cursor) that
//! FETCH, MOVE and CLOSE (utility.rs) then use. The cursors live in the session's function
//! context, where PL/pgSQL's OPEN puts its own, so a function may open a cursor that the
//! client then fetches from.

use crate::exec::RowSink;
use crate::session::Session;
use keel_common::{PgError, PgResult, sqlstate};
use keel_sql::Stmt;
use keel_sql::exec::cursor::Cursor;
use keel_sql::plan::OutColumn;
use keel_types::{Datum, TypeId};
use keel_wire::Client;
use std::sync::Arc;

type Rows = Vec<Vec<Datum>>;

impl Session {
    /// `DECLARE name CURSOR FOR query`: `query` is (its text, its character offset in the
    /// query string, its parameters' types, their values).
    pub(crate) async fn declare_cursor<C: Client>(
        &mut self,
        name: &str,
        scroll: Option<bool>,
        hold: bool,
        query: (&str, usize, &[TypeId], &[Datum]),
        client: &mut C,
    ) -> PgResult<(Rows, String)> {
        let (query, at, types, values) = query;
        if !hold && !self.in_block() {
            return Err(PgError::new(
                sqlstate::NO_ACTIVE_SQL_TRANSACTION,
                "DECLARE CURSOR can only be used in transaction blocks",
            ));
        }
        if self.funcs.cursors.contains(name) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_CURSOR,
                format!("cursor \"{name}\" already exists"),
            ));
        }
        self.stack_limit();
        let prep = Arc::new(keel_sql::prepare(
            self.catalog(),
            &keel_sql::EngineSizes(&self.engine),
            query,
            at,
            types,
        )?);
        let columns = match &prep.stmt {
            Stmt::Query(q) => q.columns.clone(),
            _ => {
                // PostgreSQL's grammar takes only a SELECT here: the query's first word is
                // the syntax error.
                let lead = query.chars().take_while(|c| c.is_whitespace()).count();
                let word: String = query
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                return Err(PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    format!("syntax error at or near \"{word}\""),
                )
                .with_position((at + lead + 1) as u32));
            }
        };
        let mut cursor = self.new_cursor(columns, scroll, hold);
        self.stream_query(&prep, values, &[], client, RowSink::Cursor(&mut cursor))
            .await?;
        self.funcs.cursors.insert(name.to_string(), cursor)?;
        Ok((vec![], "DECLARE CURSOR".into()))
    }

    /// An empty cursor with this session's work_mem and temporary directory.
    pub(crate) fn new_cursor(
        &self,
        columns: Vec<OutColumn>,
        scroll: Option<bool>,
        hold: bool,
    ) -> Cursor {
        let subxact = self
            .txn
            .as_ref()
            .map_or(0, |t| self.engine.savepoint_depth(t));
        Cursor::new(
            columns,
            scroll,
            hold,
            subxact,
            self.settings.work_mem_bytes(),
            self.engine.temp_dir(),
        )
    }

    /// The row shape FETCH from cursor `name` has (None when no such cursor is open).
    pub(crate) fn cursor_columns(&self, name: &str) -> Option<Vec<OutColumn>> {
        self.funcs.cursors.columns(name)
    }
}
