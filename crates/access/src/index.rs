//! Index keys of rows, and the unique check's view of a row.

use crate::heap::Heap;
use crate::heap::tuple::Header;
use keel_btree::Existing;
use keel_catalog::{IndexDef, TableDef};
use keel_common::{PgResult, Tid};
use keel_txn::XidStatus;
use keel_types::{Datum, TypeId};

/// How to build an index's keys from a table's rows.
pub struct IndexKeys<'t> {
    cols: Vec<usize>,
    types: Vec<TypeId>,
    table: &'t TableDef,
}

impl<'t> IndexKeys<'t> {
    pub fn new(table: &'t TableDef, index: &IndexDef) -> IndexKeys<'t> {
        IndexKeys {
            cols: index.columns.clone(),
            types: index
                .columns
                .iter()
                .map(|&c| table.columns[c].ty.id)
                .collect(),
            table,
        }
    }

    pub fn encode_row(&self, row: &[Datum]) -> Vec<u8> {
        let vals: Vec<Datum> = self
            .cols
            .iter()
            .map(|&c| row.get(c).cloned().unwrap_or(Datum::Null))
            .collect();
        let mut out = Vec::with_capacity(16);
        keel_types::key::encode_key(&vals, &self.types, &mut out);
        out
    }

    /// Key of the first `prefix.len()` columns.
    pub fn encode_prefix(&self, prefix: &[Datum]) -> Vec<u8> {
        let n = prefix.len().min(self.types.len());
        let mut out = Vec::with_capacity(16);
        keel_types::key::encode_key(&prefix[..n], &self.types[..n], &mut out);
        out
    }

    /// A key with a NULL never conflicts in a unique index (NULLS DISTINCT).
    pub fn has_null(&self, row: &[Datum]) -> bool {
        self.cols
            .iter()
            .any(|&c| row.get(c).is_none_or(Datum::is_null))
    }

    pub fn column_names(&self) -> String {
        self.cols
            .iter()
            .map(|&c| self.table.columns[c].name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn format_values(&self, row: &[Datum]) -> String {
        self.cols
            .iter()
            .zip(&self.types)
            .map(|(&c, &t)| {
                let mut s = String::new();
                match row.get(c) {
                    Some(Datum::Null) | None => s.push_str("null"),
                    Some(d) => keel_types::io::format_text(d, t, &mut s),
                }
                s
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Whether row `root` holds `key` for a unique index: some version with that key is live
/// (`Live`), or may become or stay live depending on an in-progress transaction
/// (`InProgress`). Versions created or deleted by `own` count as decided.
pub fn holds_key(
    heap: &Heap<'_>,
    keys: &IndexKeys,
    types: &[TypeId],
    root: Tid,
    key: &[u8],
    own: u64,
) -> PgResult<Existing> {
    let txns = heap.txns;
    let mut verdict = Existing::Dead;
    let mut err = None;
    heap.walk_all(root, |tid, h: &Header, row: &[u8]| {
        let created = match txns.status(h.xmin) {
            _ if h.xmin == own => true,
            XidStatus::Aborted => return false,
            XidStatus::InProgress => false,
            XidStatus::Committed(_) => true,
        };
        let deleted = h.xmax != 0
            && (h.xmax == own || matches!(txns.status(h.xmax), XidStatus::Committed(_)));
        if deleted {
            return true;
        }
        let values = match keel_types::row::decode_row(row, types) {
            Ok(v) => v,
            Err(e) => {
                err = Some(e);
                return false;
            }
        };
        if keys.encode_row(&values) != key {
            return true;
        }
        let _ = tid;
        verdict = if !created {
            Existing::InProgress(h.xmin)
        } else if h.xmax != 0 && matches!(txns.status(h.xmax), XidStatus::InProgress) {
            Existing::InProgress(h.xmax)
        } else {
            Existing::Live
        };
        false
    })?;
    if let Some(e) = err {
        return Err(e);
    }
    Ok(verdict)
}
