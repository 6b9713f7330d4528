//! WAL record kinds and their payloads.

use keel_common::{PgError, PgResult, sqlstate};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RecordKind {
    /// Changes to one or more pages (heap, index), applied atomically by redo.
    Pages = 1,
    /// A transaction committed. Payload: optional new catalog (JSON) and relation files to
    /// remove, see `access`.
    Commit = 2,
    /// A transaction aborted (informational: no commit record means aborted).
    Abort = 3,
    /// A checkpoint completed; payload = its redo LSN.
    Checkpoint = 4,
    /// A sequence advanced; payload = oid u32, value i64.
    Sequence = 5,
    /// ANALYZE's statistics of a table; payload = table oid u32, then keel-stats' encoding.
    Statistics = 6,
}

impl RecordKind {
    pub fn from_u8(v: u8) -> Option<RecordKind> {
        Some(match v {
            1 => RecordKind::Pages,
            2 => RecordKind::Commit,
            3 => RecordKind::Abort,
            4 => RecordKind::Checkpoint,
            5 => RecordKind::Sequence,
            6 => RecordKind::Statistics,
            _ => return None,
        })
    }
}

/// A decoded record.
#[derive(Clone, Debug)]
pub struct WalRecord {
    pub lsn: u64,
    /// Position just past the record: what pages it touched get as their LSN.
    pub end_lsn: u64,
    pub xid: u64,
    pub kind: RecordKind,
    pub payload: Vec<u8>,
}

/// One page's part of a `Pages` record.
#[derive(Debug)]
pub struct PageImage<'a> {
    pub rel: u32,
    pub block: u32,
    /// Full 8 kB image; when set, `ranges` is empty.
    pub full: Option<&'a [u8]>,
    /// Start from a zeroed page before applying ranges.
    pub init: bool,
    pub ranges: Vec<(u16, &'a [u8])>,
}

pub(crate) const PAGE_FULL: u8 = 1;
/// A range with this offset (and no bytes) stands for a page compaction, which redo re-runs.
pub const COMPACT: u16 = u16::MAX;
pub(crate) const PAGE_INIT: u8 = 2;

fn corrupt() -> PgError {
    PgError::new(sqlstate::DATA_CORRUPTED, "corrupt WAL page record")
}

/// Parses a `Pages` payload: `[npages: u16]` then per page
/// `[rel: u32][block: u32][flags: u8]` and either 8192 bytes or `[nranges: u16]` followed by
/// `[off: u16][len: u16][bytes]` each.
pub fn parse_pages(payload: &[u8]) -> PgResult<Vec<PageImage<'_>>> {
    let mut at = 0usize;
    let take = |at: &mut usize, n: usize| -> PgResult<&[u8]> {
        let s = payload.get(*at..*at + n).ok_or_else(corrupt)?;
        *at += n;
        Ok(s)
    };
    let u16_at = |b: &[u8]| u16::from_le_bytes([b[0], b[1]]);
    let u32_at = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let npages = u16_at(take(&mut at, 2)?);
    let mut out = Vec::with_capacity(npages as usize);
    for _ in 0..npages {
        let rel = u32_at(take(&mut at, 4)?);
        let block = u32_at(take(&mut at, 4)?);
        let flags = take(&mut at, 1)?[0];
        if flags & PAGE_FULL != 0 {
            let full = take(&mut at, crate::PAGE_SIZE)?;
            out.push(PageImage {
                rel,
                block,
                full: Some(full),
                init: false,
                ranges: Vec::new(),
            });
            continue;
        }
        let n = u16_at(take(&mut at, 2)?);
        let mut ranges = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let off = u16_at(take(&mut at, 2)?);
            let len = u16_at(take(&mut at, 2)?) as usize;
            if off == COMPACT && len == 0 {
                ranges.push((off, &[][..]));
                continue;
            }
            if off as usize + len > crate::PAGE_SIZE {
                return Err(corrupt());
            }
            ranges.push((off, take(&mut at, len)?));
        }
        out.push(PageImage {
            rel,
            block,
            full: None,
            init: flags & PAGE_INIT != 0,
            ranges,
        });
    }
    Ok(out)
}
