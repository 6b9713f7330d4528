//! The payload of a commit record: what the transaction's DDL changed in the catalog, the
//! relation files to remove, and the xids of its subtransactions that commit with it.
//!
//! Layout: a tag byte (0 no catalog change, 1 a whole catalog, 2 a [`CatalogDelta`]), for tags
//! 1 and 2 a u32 length and that many bytes of JSON, then a u32 count of dropped relation
//! files and each as a u32, then (when any) a u32 count of subtransaction xids and each as a
//! u64. Tag 1 is written no more (a commit logs only its delta) but is still read, so a log
//! written before deltas replays; a record that ends after the drops has no subtransactions.

use keel_catalog::{Catalog, CatalogDelta};
use keel_common::{PgError, PgResult, sqlstate};

pub enum CatalogChange {
    /// The whole new catalog (logs written before deltas).
    Full(Box<Catalog>),
    Delta(Box<CatalogDelta>),
}

pub struct CommitRecord {
    pub catalog: Option<CatalogChange>,
    pub drops: Vec<u32>,
    /// Subtransactions released into it (not rolled back): they commit with it.
    pub subxids: Vec<u64>,
}

impl CommitRecord {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let (tag, bytes) = match &self.catalog {
            Some(CatalogChange::Full(c)) => (1, c.to_bytes()),
            Some(CatalogChange::Delta(d)) => (2, d.to_bytes()),
            None => (0, Vec::new()),
        };
        out.push(tag);
        if tag != 0 {
            out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(&bytes);
        }
        out.extend_from_slice(&(self.drops.len() as u32).to_le_bytes());
        for d in &self.drops {
            out.extend_from_slice(&d.to_le_bytes());
        }
        if !self.subxids.is_empty() {
            out.extend_from_slice(&(self.subxids.len() as u32).to_le_bytes());
            for x in &self.subxids {
                out.extend_from_slice(&x.to_le_bytes());
            }
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
            Some(tag @ (1 | 2)) => {
                let len = u32_at(at)? as usize;
                at += 4;
                let json = b.get(at..at + len).ok_or_else(bad)?;
                at += len;
                Some(if *tag == 1 {
                    CatalogChange::Full(Box::new(Catalog::from_bytes(json)?))
                } else {
                    CatalogChange::Delta(Box::new(CatalogDelta::from_bytes(json)?))
                })
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
        at += n * 4;
        let mut subxids = Vec::new();
        if at < b.len() {
            let n = u32_at(at)? as usize;
            at += 4;
            for i in 0..n {
                let s = b.get(at + i * 8..at + i * 8 + 8).ok_or_else(bad)?;
                subxids.push(u64::from_le_bytes(s.try_into().map_err(|_| bad())?));
            }
        }
        Ok(CommitRecord {
            catalog,
            drops,
            subxids,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_with_and_without_subtransactions() {
        for subxids in [vec![], vec![7u64, 9, u64::from(u32::MAX) + 3]] {
            let rec = CommitRecord {
                catalog: None,
                drops: vec![4, 5],
                subxids: subxids.clone(),
            };
            let back = CommitRecord::decode(&rec.encode()).unwrap();
            assert_eq!(back.drops, vec![4, 5]);
            assert_eq!(back.subxids, subxids);
        }
        let mut torn = CommitRecord {
            catalog: None,
            drops: vec![],
            subxids: vec![1, 2],
        }
        .encode();
        torn.pop();
        assert!(CommitRecord::decode(&torn).is_err());
    }
}
