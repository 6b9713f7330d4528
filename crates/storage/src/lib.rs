//! Storage: 8 kB checksummed pages, relation files, the shared buffer pool, and the
//! write-ahead log with group commit. See README.md for the page format, the WAL format and
//! the latch/WAL protocol every access method follows.

pub mod buffer;
pub mod io;
pub mod page;
pub mod redo;
pub mod smgr;
pub mod usage;
pub mod wal;
pub mod writeback;

pub use buffer::{BufferPool, PageMut, PageRef, PinId};
pub use page::{PAGE_SIZE, PageRead};
pub use wal::{Wal, WalRecord};
