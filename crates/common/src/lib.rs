//! Keel's shared vocabulary: errors carrying a SQLSTATE, identifiers, and server settings.
//!
//! Every fallible operation in Keel returns [`PgResult`]. An error is created with its SQLSTATE
//! from the start (see [`sqlstate`]), so whatever layer raises it, the client sees the same
//! code PostgreSQL 15 would send.

pub mod error;
pub mod ids;
pub mod settings;
pub mod sqlstate;
pub mod stack;

pub use error::{ErrorObjects, ErrorReport, PgError, PgResult, Severity};
pub use ids::{BlockNo, Csn, Isolation, Lsn, Oid, RelFileId, Tid, Xid};
pub use settings::Settings;
