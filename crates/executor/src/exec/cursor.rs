//! Cursors (PostgreSQL's portals opened by DECLARE and by PL/pgSQL's OPEN): a query's result
//! that FETCH and MOVE walk in either direction.
//!
//! A cursor's query runs to completion when the cursor opens, under the snapshot of that
//! moment, and its rows are kept: in memory up to `work_mem`, the rest in a temporary file
//! with an index of row offsets ([`RowStore`]), so any row can be read again (SCROLL, FETCH PRIOR, ABSOLUTE)
//! in bounded memory. That is what PostgreSQL does for a WITH HOLD cursor at commit; doing it
//! at open costs the whole query up front where PostgreSQL would produce rows on demand, and
//! means a cursor sees none of its transaction's later writes (PostgreSQL's does not either:
//! its snapshot is taken at open).
//!
//! Position follows PostgreSQL's portal: 0 is before the first row, `len + 1` after the last,
//! `k` on row `k`.
//!
//! The set of open cursors lives in the session's function context (`SessionFuncs`), where
//! both SQL statements and PL/pgSQL bodies reach it.

use super::Row;
use super::rowstore::RowStore;
use keel_common::{PgError, PgResult, sqlstate};
use keel_parser::cursor_stmt::Fetch;
use keel_planner::plan::OutColumn;
use std::collections::HashMap;
use std::path::PathBuf;

/// The session's open cursors, by name, and the PL/pgSQL functions running in it: the
/// session state a function reaches through `FuncContext::cursors` at any depth of calls.
#[derive(Default)]
pub struct Cursors {
    open: HashMap<String, Cursor>,
    /// The number of the next `<unnamed portal N>`.
    unnamed: u64,
    /// The running PL/pgSQL functions, outermost first, each at its current statement:
    /// what `GET DIAGNOSTICS ... = PG_CONTEXT` reports.
    pub calls: Vec<PlFrame>,
}

/// One running PL/pgSQL function (a DO block's is `inline_code_block`) and the statement it
/// is at.
#[derive(Clone, Debug)]
pub struct PlFrame {
    pub function: std::sync::Arc<str>,
    pub line: u32,
    pub stmt: &'static str,
}

pub struct Cursor {
    pub columns: Vec<OutColumn>,
    rows: RowStore,
    pos: usize,
    /// SCROLL (`Some(true)`), NO SCROLL (`Some(false)`), or neither.
    pub scroll: Option<bool>,
    /// WITH HOLD: survives its transaction's commit.
    pub hold: bool,
    /// The savepoint level (1 = outermost, 0 = none) open when it was opened: rolling back
    /// that level closes it.
    subxact: usize,
    /// Opened by the transaction running now (a WITH HOLD cursor of an earlier, committed
    /// one survives this one's rollback).
    this_txn: bool,
}

impl Cursors {
    pub fn get(&mut self, name: &str) -> PgResult<&mut Cursor> {
        self.open.get_mut(name).ok_or_else(|| missing(name))
    }

    /// The columns of open cursor `name`.
    pub fn columns(&self, name: &str) -> Option<Vec<OutColumn>> {
        self.open.get(name).map(|c| c.columns.clone())
    }

    pub fn contains(&self, name: &str) -> bool {
        self.open.contains_key(name)
    }

    /// A name no open cursor has, as PostgreSQL names the portals PL/pgSQL opens unnamed.
    pub fn unnamed(&mut self) -> String {
        loop {
            self.unnamed += 1;
            let name = format!("<unnamed portal {}>", self.unnamed);
            if !self.open.contains_key(&name) {
                return name;
            }
        }
    }

    /// Adds an opened cursor; 42P03 when the name is taken.
    pub fn insert(&mut self, name: String, cursor: Cursor) -> PgResult<()> {
        if self.open.contains_key(&name) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_CURSOR,
                format!("cursor \"{name}\" already exists"),
            ));
        }
        self.open.insert(name, cursor);
        Ok(())
    }

    /// CLOSE name: 34000 when no such cursor is open.
    pub fn close(&mut self, name: &str) -> PgResult<()> {
        self.open
            .remove(name)
            .map(|_| ())
            .ok_or_else(|| missing(name))
    }

    pub fn close_all(&mut self) {
        self.open.clear();
    }

    /// At the end of a transaction: every cursor it opened closes, but a WITH HOLD one when
    /// it committed; WITH HOLD cursors of earlier transactions stay.
    pub fn end_transaction(&mut self, committed: bool) {
        self.open
            .retain(|_, c| c.hold && (committed || !c.this_txn));
        for c in self.open.values_mut() {
            c.this_txn = false;
            c.subxact = 0;
        }
    }

    /// RELEASE of savepoint level `depth` (or an exception block that ended without an
    /// error): its cursors now belong to the enclosing level.
    pub fn release(&mut self, depth: usize) {
        for c in self.open.values_mut() {
            c.subxact = c.subxact.min(depth.saturating_sub(1));
        }
    }

    /// ROLLBACK TO savepoint level `depth` (or an exception block's): the cursors opened
    /// since that level began close, as PostgreSQL's portals of an aborted subtransaction.
    pub fn rollback_to(&mut self, depth: usize) {
        self.open.retain(|_, c| !(c.this_txn && c.subxact >= depth));
    }
}

/// The session's cursors, from a function context (see `FuncContext::cursors`).
pub fn of(fctx: &mut dyn keel_types::func::FuncContext) -> PgResult<&mut Cursors> {
    fctx.cursors()
        .and_then(|c| c.downcast_mut::<Cursors>())
        .ok_or_else(|| PgError::unsupported("cursors outside a session"))
}

fn missing(name: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_CURSOR_NAME,
        format!("cursor \"{name}\" does not exist"),
    )
}

impl Cursor {
    /// An empty cursor that keeps up to `budget` bytes of rows in memory; rows go in with
    /// [`Cursor::push`].
    /// `subxact` is the savepoint level open now (see `Cursors::rollback_to`).
    pub fn new(
        columns: Vec<OutColumn>,
        scroll: Option<bool>,
        hold: bool,
        subxact: usize,
        budget: usize,
        dir: PathBuf,
    ) -> Cursor {
        Cursor {
            columns,
            rows: RowStore::new(budget, dir),
            pos: 0,
            scroll,
            hold,
            subxact,
            this_txn: true,
        }
    }

    pub fn push(&mut self, row: Row) -> PgResult<()> {
        self.rows.push(row)
    }

    /// Runs FETCH (`want` true: the rows) or MOVE (`want` false) in direction `dir`; returns
    /// the rows and the count the command tag shows.
    pub fn fetch(&mut self, dir: Fetch, want: bool) -> PgResult<(Vec<Row>, u64)> {
        let len = self.rows.len();
        let mut out = Vec::new();
        match dir {
            Fetch::Forward(n) if n < 0 => return self.fetch(Fetch::Backward(-n), want),
            Fetch::Backward(n) if n < 0 => return self.fetch(Fetch::Forward(-n), want),
            Fetch::Forward(0) | Fetch::Backward(0) => return self.fetch(Fetch::Relative(0), want),
            Fetch::Forward(n) => {
                let mut moved = 0u64;
                while (moved as i64) < n && self.pos <= len {
                    self.pos += 1;
                    if self.pos > len {
                        break;
                    }
                    if want {
                        out.push(self.rows.get(self.pos - 1)?);
                    }
                    moved += 1;
                }
                return Ok((out, moved));
            }
            Fetch::Backward(n) => {
                self.backward_allowed()?;
                let mut moved = 0u64;
                while (moved as i64) < n && self.pos > 0 {
                    self.pos -= 1;
                    if self.pos == 0 {
                        break;
                    }
                    if want {
                        out.push(self.rows.get(self.pos - 1)?);
                    }
                    moved += 1;
                }
                return Ok((out, moved));
            }
            Fetch::Absolute(n) => {
                let target = if n >= 0 {
                    n as i128
                } else {
                    len as i128 + 1 + n as i128
                };
                if target < self.pos as i128 {
                    self.backward_allowed()?;
                }
                self.pos = target.clamp(0, len as i128 + 1) as usize;
            }
            Fetch::Relative(n) => {
                if n < 0 {
                    self.backward_allowed()?;
                }
                let target = self.pos as i128 + n as i128;
                self.pos = target.clamp(0, len as i128 + 1) as usize;
            }
        }
        // ABSOLUTE and RELATIVE land on one row, or off either end.
        if (1..=len).contains(&self.pos) {
            if want {
                out.push(self.rows.get(self.pos - 1)?);
            }
            return Ok((out, 1));
        }
        Ok((out, 0))
    }

    fn backward_allowed(&self) -> PgResult<()> {
        if self.scroll == Some(false) {
            return Err(PgError::new(
                sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
                "cursor can only scan forward",
            )
            .with_hint("Declare it with SCROLL option to enable backward scan."));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use keel_types::{Datum, TypeId};

    fn cursor(n: i32, budget: usize, scroll: Option<bool>) -> Cursor {
        let dir = std::env::temp_dir().join(format!("keel-cursor-{}", std::process::id()));
        let col = OutColumn {
            name: "a".into(),
            ty: TypeId::Int4,
            typmod: -1,
            table_oid: 0,
            attnum: 0,
        };
        let mut c = Cursor::new(vec![col], scroll, false, 0, budget, dir);
        for i in 1..=n {
            c.push(vec![Datum::Int4(i)]).unwrap();
        }
        c
    }

    fn ints(rows: Vec<Row>) -> Vec<i32> {
        rows.into_iter()
            .map(|r| match r[0] {
                Datum::Int4(v) => v,
                _ => panic!("not an int"),
            })
            .collect()
    }

    #[test]
    fn fetches_move_as_postgres_portals_do_in_memory_and_spilled() {
        for budget in [1 << 20, 0] {
            let mut c = cursor(5, budget, None);
            assert_eq!(ints(c.fetch(Fetch::Forward(2), true).unwrap().0), [1, 2]);
            assert_eq!(ints(c.fetch(Fetch::Relative(0), true).unwrap().0), [2]);
            assert_eq!(
                ints(c.fetch(Fetch::Forward(10), true).unwrap().0),
                [3, 4, 5]
            );
            assert_eq!(c.fetch(Fetch::Forward(1), true).unwrap().1, 0);
            assert_eq!(ints(c.fetch(Fetch::Backward(1), true).unwrap().0), [5]);
            assert_eq!(ints(c.fetch(Fetch::Absolute(-2), true).unwrap().0), [4]);
            assert_eq!(ints(c.fetch(Fetch::Absolute(1), true).unwrap().0), [1]);
            assert_eq!(c.fetch(Fetch::Backward(Fetch::ALL), false).unwrap().1, 0);
            assert_eq!(c.fetch(Fetch::Forward(Fetch::ALL), false).unwrap().1, 5);
            assert_eq!(ints(c.fetch(Fetch::Backward(2), true).unwrap().0), [5, 4]);
            assert_eq!(c.fetch(Fetch::Absolute(9), true).unwrap().1, 0);
        }
    }

    #[test]
    fn rollbacks_close_the_cursors_opened_since() {
        let mut set = Cursors::default();
        let open = |set: &mut Cursors, name: &str, hold: bool, subxact: usize| {
            let mut c = cursor(1, 1 << 20, None);
            c.hold = hold;
            c.subxact = subxact;
            set.insert(name.into(), c).unwrap();
        };
        open(&mut set, "kept", true, 0);
        set.end_transaction(true);
        open(&mut set, "outer", false, 0);
        open(&mut set, "inner", false, 1);
        open(&mut set, "held", true, 2);
        set.rollback_to(1);
        assert!(set.contains("outer") && !set.contains("inner") && !set.contains("held"));
        open(&mut set, "released", false, 1);
        set.release(1);
        set.rollback_to(1);
        assert!(set.contains("released"));
        set.end_transaction(false);
        assert!(set.contains("kept") && !set.contains("outer"));
    }

    #[test]
    fn no_scroll_refuses_to_go_back() {
        let mut c = cursor(3, 1 << 20, Some(false));
        c.fetch(Fetch::Forward(2), true).unwrap();
        let e = c.fetch(Fetch::Backward(1), true).unwrap_err();
        assert_eq!(e.code, sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE);
        assert_eq!(ints(c.fetch(Fetch::Absolute(3), true).unwrap().0), [3]);
    }
}
