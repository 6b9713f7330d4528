//! The write-ahead log.
//!
//! The log is one byte stream cut into 16 MB segment files `wal/<segment number>`; an LSN is a
//! byte position in it. Each record is
//! `[len: u32][crc32c: u32][lsn: u64][xid: u64][kind: u8][payload]`, where `crc` covers
//! everything after itself and `lsn` must equal the record's own position — so stale bytes of
//! an older, reused segment are never mistaken for records. The end of the log is the first
//! position where a record fails those checks.
//!
//! Inserting a record assigns its LSN under the insert lock and appends it to an in-memory
//! buffer. A dedicated writer thread writes the buffer out and `fdatasync`s it, waking every
//! committer whose record it covered (group commit): committers await a `watch` channel and
//! never block the async runtime. Under load the writer first gathers commits for a moment
//! (gather.rs). Background writes also happen when the buffer grows.
//!
//! Page records carry, for each page, either a full-page image (the first change after a
//! checkpoint's redo point: this is what repairs torn pages) or the changed byte ranges.
//! Redo applies a page's part only if the page's LSN is older than the record.

mod gather;
mod reader;
pub(crate) mod record;
mod segment;
mod writer;

#[cfg(test)]
mod tests;

pub use gather::LoadGauge;
pub use reader::WalReader;
pub use record::{PageImage, RecordKind, WalRecord, parse_pages};
pub use writer::{DurableHook, Wal};

pub const SEGMENT_SIZE: u64 = 16 * 1024 * 1024;
pub const RECORD_HEADER: usize = 4 + 4 + 8 + 8 + 1;
/// The first record's position; 0 means "no LSN".
pub const FIRST_LSN: u64 = 8;
