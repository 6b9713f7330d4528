//! Sequential reading of the log for crash recovery.

use super::record::{RecordKind, WalRecord};
use super::segment::segment_path;
use super::{RECORD_HEADER, SEGMENT_SIZE};
use crate::io::{Fs, OsFs};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct WalReader {
    fs: Arc<dyn Fs>,
    dir: PathBuf,
    pos: u64,
    seg: u64,
    data: Vec<u8>,
}

impl WalReader {
    /// Reads the WAL directory `dir` on the operating system's file system from `start`.
    pub fn new(dir: &Path, start: u64) -> WalReader {
        WalReader::on(Arc::new(OsFs), dir, start)
    }

    pub fn on(fs: Arc<dyn Fs>, dir: &Path, start: u64) -> WalReader {
        WalReader {
            fs,
            dir: dir.to_path_buf(),
            pos: start,
            seg: u64::MAX,
            data: Vec::new(),
        }
    }

    /// Position after the last record returned: where new records go.
    pub fn end(&self) -> u64 {
        self.pos
    }

    fn bytes(&mut self, at: u64, len: usize) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(len);
        let mut p = at;
        while out.len() < len {
            let s = p / SEGMENT_SIZE;
            if s != self.seg {
                self.data = self.fs.read(&segment_path(&self.dir, s)).ok()?;
                self.seg = s;
            }
            let off = (p % SEGMENT_SIZE) as usize;
            if off >= self.data.len() {
                return None;
            }
            let n = (len - out.len()).min(self.data.len() - off);
            out.extend_from_slice(&self.data[off..off + n]);
            p += n as u64;
        }
        Some(out)
    }

    /// The next valid record, or None at the end of the log.
    pub fn next_record(&mut self) -> Option<WalRecord> {
        let head = self.bytes(self.pos, RECORD_HEADER)?;
        let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
        if !(RECORD_HEADER..=64 << 20).contains(&len) {
            return None;
        }
        let rec = self.bytes(self.pos, len)?;
        let crc = u32::from_le_bytes([rec[4], rec[5], rec[6], rec[7]]);
        if crc32c::crc32c(&rec[8..]) != crc {
            return None;
        }
        let lsn = u64::from_le_bytes(rec[8..16].try_into().ok()?);
        if lsn != self.pos {
            return None;
        }
        let xid = u64::from_le_bytes(rec[16..24].try_into().ok()?);
        let kind = RecordKind::from_u8(rec[24])?;
        let end_lsn = self.pos + len as u64;
        self.pos = end_lsn;
        Some(WalRecord {
            lsn,
            end_lsn,
            xid,
            kind,
            payload: rec[RECORD_HEADER..].to_vec(),
        })
    }
}
