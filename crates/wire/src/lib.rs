//! PostgreSQL frontend/backend protocol v3: framing, startup and authentication, the simple and
//! extended query flows, COPY, cancellation. It knows nothing of SQL: a [`Backend`] (the
//! session layer) executes statements and writes results through a [`Client`].
//!
//! Protocol state owned here:
//! - after an error in the extended protocol, messages are skipped until Sync;
//! - ReadyForQuery carries [`Backend::ready_for_query`];
//! - output is buffered and flushed on Sync, Flush, ReadyForQuery, or when the buffer is large.
//!
//! See README.md for the buffering rules and invariants.

pub mod backend;
mod busy;
pub mod codec;
mod conn;
mod protocol;
pub mod scram;
mod server;
mod shards;
mod spin;

pub use backend::{
    Backend, BackendFactory, CancelToken, Client, ExecuteOutcome, FieldDescription, StartupInfo,
};
pub use conn::FLUSH_THRESHOLD;
pub use server::{AuthMethod, ServeConfig, serve, serve_listeners, serve_until};

// Tests written against the public API: `keel_wire::` resolves to this crate in them.
#[cfg(test)]
extern crate self as keel_wire;
#[cfg(test)]
mod integration;
