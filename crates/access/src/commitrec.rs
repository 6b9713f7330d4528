//! The payload of a commit record: the new catalog when the transaction ran DDL, and the
//! relation files to remove.

use keel_catalog::Catalog;
use keel_common::{PgError, PgResult, sqlstate};

pub struct CommitRecord {
    pub catalog: Option<Catalog>,
    pub drops: Vec<u32>,
}

impl CommitRecord {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match &self.catalog {
            Some(c) => {
                let bytes = c.to_bytes();
                out.push(1);
                out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                out.extend_from_slice(&bytes);
            }
            None => out.push(0),
        }
        out.extend_from_slice(&(self.drops.len() as u32).to_le_bytes());
        for d in &self.drops {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out
    }

    pub fn decode(b: &[u8]) -> PgResult<CommitRecord> {
        let bad = || PgError::new(sqlstate::DATA_CORRUPTED, "corrupt commit record");
        let u32_at = |at: usize| -> PgResult<u32> {
            b.get(at..at + 4)
                .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
                .ok_or_else(bad)
        };
        let mut at = 1;
        let catalog = match b.first() {
            Some(1) => {
                let len = u32_at(at)? as usize;
                at += 4;
                let json = b.get(at..at + len).ok_or_else(bad)?;
                at += len;
                Some(Catalog::from_bytes(json)?)
            }
            Some(0) => None,
            _ => return Err(bad()),
        };
        let n = u32_at(at)? as usize;
        at += 4;
        let mut drops = Vec::with_capacity(n);
        for i in 0..n {
            drops.push(u32_at(at + i * 4)?);
        }
        Ok(CommitRecord { catalog, drops })
    }
}
