//! The executor: runs plans (keel-planner) against the engine (keel-access).
//!
//! - [`exec`]: pull-based operators, one file per operator, and the write path
//!   ([`exec::ModifyExec`]), which can suspend on a row lock and resume where it stopped;
//! - [`eval`]: expression evaluation ([`eval::Eval`] on the analyzer's `Expr`) and the
//!   evaluation context a statement runs in;
//! - [`interrupt`]: cancel and statement_timeout checks, counted down between rows.

pub mod eval;
mod eval_array;
pub mod eval_array_assign;
mod eval_row;
pub mod exec;
pub mod internal_sql;
pub mod interrupt;
mod native;
pub mod sqlfunc;
pub mod trigger;
