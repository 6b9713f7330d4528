//! Access methods and the engine facade the executor calls: heap tables, B-tree indexes,
//! transactions, DDL file management, vacuum.
//!
//! Row identity: every row has a stable *root* tid. Index entries point at the root; an UPDATE
//! appends a new version (on any page) linked from the previous one, and indexes whose columns
//! did not change are never written. Readers go root -> chain -> the version their snapshot
//! sees. See README.md for the full protocol.

pub mod am;
mod api;
mod background;
mod bitmap;
mod checkpoint;
mod commitq;
mod commitrec;
mod ddl;
mod decoder;
mod dirlock;
mod engine;
mod heap;
mod index;
mod indexonly;
mod relstate;
mod rowlock;
mod rows;
mod savepoint;
mod seq;
mod ssi;
mod stale;
mod stats;
mod txnstate;
mod upsert;
mod vismap;

pub use api::*;
pub use keel_txn::advisory;
pub use keel_txn::{DATABASE_OID, LockLimits, LockMode, Locked, Strength};
pub use stats::{AUTOVACUUM_ANALYZE_SCALE_FACTOR, AUTOVACUUM_ANALYZE_THRESHOLD};
pub use upsert::Conflict;

// Tests written against the public API: `keel_access::` resolves to this crate in them.
#[cfg(test)]
extern crate self as keel_access;
#[cfg(test)]
mod integration;
