//! The PL/pgSQL interpreter: runs a body parsed by `keel_pl`, statement by statement, through
//! a [`Host`] that prepares and runs its SQL.
//!
//! Two hosts run bodies:
//! - the session, for DO blocks (`keel_session`): every statement goes through the session
//!   as a client's would, with its locks, waits and cancel;
//! - the executor, for calls of LANGUAGE plpgsql functions from inside a running statement
//!   ([`call`]): statements are planned and run synchronously with the caller's evaluation
//!   context and transaction.
//!
//! The interpreter is written once, as async code over the host. The executor's host never
//! suspends (it blocks its thread where it must wait, through `EvalCx::blocking`), so a
//! function call polls the interpreter's future once and it is complete.

use keel_catalog::Catalog;
use keel_common::{PgError, PgResult};
use keel_sql::Prepared;
use keel_types::{Datum, TypeId};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub mod call;
mod composite;
mod cursor;
mod declare;
mod foreach;
mod interp;
mod raise;
mod results;
mod sql;
mod sqlbody;
mod targets;
pub use sql::tag_count;
pub mod trigger;
pub mod vars;

pub use interp::{Flow, PlState, run_body};

pub type BoxFut<'a, T> = Pin<Box<dyn Future<Output = PgResult<T>> + Send + 'a>>;

/// A statement's rows and the number it reports (rows returned or changed).
pub struct Ran {
    pub names: Vec<String>,
    pub types: Vec<TypeId>,
    pub rows: Vec<Vec<Datum>>,
    pub count: u64,
    /// It was an INSERT, UPDATE or DELETE: its RETURNING INTO takes exactly one row.
    pub writes: bool,
}

/// What the interpreter needs from where it runs.
pub trait Host: Send {
    /// 57014 once the statement that runs the body is cancelled or past its timeout.
    fn check_interrupts(&self) -> PgResult<()>;
    /// The catalog names in the body resolve against.
    fn catalog(&self) -> Arc<Catalog>;
    /// Prepares one statement of the body (`$n` typed by `types`; `vars` says which of them
    /// stand for variables, see `keel_sql::bind::PlVars`).
    fn prepare(
        &mut self,
        text: &str,
        types: &[TypeId],
        vars: &keel_sql::bind::PlVars,
    ) -> PgResult<Arc<Prepared>>;
    /// Runs a prepared statement and collects its rows.
    fn run<'a>(&'a mut self, prep: &'a Arc<Prepared>, values: &'a [Datum]) -> BoxFut<'a, Ran>;
    /// Opens a subtransaction for a block with an EXCEPTION clause; returns its depth.
    fn savepoint(&mut self) -> PgResult<usize>;
    /// Ends the subtransaction at `depth`: kept (`undo` false) or rolled back.
    fn end_savepoint(&mut self, depth: usize, undo: bool);
    /// Sends a notice (RAISE NOTICE) to the client.
    fn notice(&mut self, n: &PgError);
    /// Marks expression `key` (its place in a parsed body) as being evaluated; answers
    /// whether an enclosing call of the same function was evaluating it already. PostgreSQL
    /// then evaluates it as a query instead of a simple expression, which shows in the
    /// CONTEXT lines of an error. A host without recursion answers false.
    fn enter_expr(&mut self, _key: usize) -> bool {
        false
    }
    /// Ends what `enter_expr` began.
    fn leave_expr(&mut self, _key: usize) {}
    /// The session's open cursors (OPEN, FETCH, MOVE, CLOSE).
    fn cursors(&mut self) -> PgResult<&mut keel_sql::exec::cursor::Cursors>;
    /// An empty cursor holding up to this session's work_mem of rows in memory.
    fn new_cursor(
        &self,
        columns: Vec<keel_sql::plan::OutColumn>,
        scroll: Option<bool>,
    ) -> keel_sql::exec::cursor::Cursor;
}
