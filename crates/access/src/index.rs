//! Index keys of rows, and the unique check's view of a row.

use crate::am::{self, AmIndex, Existing, IndexRelation};
use crate::engine::EngineInner;
use crate::heap::Heap;
use crate::heap::tuple::Header;
use crate::relstate::RelState;
use keel_catalog::{IndexDef, TableDef};
use keel_common::{PgResult, Tid};
use keel_txn::XidStatus;
use keel_types::{Datum, TypeId};

/// How to take an index's key columns out of a table's rows. Borrows the definitions:
/// allocates nothing.
pub struct IndexKeys<'t> {
    cols: &'t [usize],
    table: &'t TableDef,
    index: &'t IndexDef,
}

impl<'t> IndexKeys<'t> {
    pub fn new(table: &'t TableDef, index: &'t IndexDef) -> IndexKeys<'t> {
        IndexKeys {
            cols: &index.columns,
            table,
            index,
        }
    }

    /// Whether a version with key `new` needs other index entries than one with `old`
    /// (the access method decides: `IndexAm::key_changed`).
    pub fn changed(&self, old: &[Datum], new: &[Datum]) -> bool {
        am::method(self.index.method).key_changed(self.table, self.index, old, new)
    }

    /// The values of the key columns of `row`, in index column order.
    /// The table columns the key is made of, in key order.
    pub fn columns(&self) -> &'t [usize] {
        self.cols
    }

    pub fn key_of(&self, row: &[Datum]) -> Vec<Datum> {
        self.cols
            .iter()
            .map(|&c| row.get(c).cloned().unwrap_or(Datum::Null))
            .collect()
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

    /// `key` (values in index column order) as PostgreSQL's DETAIL lines show it.
    pub fn format_key(&self, key: &[Datum]) -> String {
        self.cols
            .iter()
            .zip(key)
            .map(|(&c, d)| {
                let t = self.table.columns[c].ty.id;
                let mut s = String::new();
                match d {
                    Datum::Null => s.push_str("null"),
                    d => keel_types::io::format_text(d, t, &mut s),
                }
                s
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Whether row `root` holds `key` for the unique index `am`: some version whose key gives the
/// same entry is live (`Live`), or may become or stay live depending on an in-progress
/// transaction (`InProgress`). Versions created or deleted by `own`'s transaction (any of its
/// live subtransactions) count as decided.
pub fn holds_key(
    heap: &Heap<'_>,
    keys: &IndexKeys,
    types: &[TypeId],
    root: Tid,
    key: &[Datum],
    own: u64,
) -> PgResult<Existing> {
    let txns = heap.txns;
    let mut verdict = Existing::Dead;
    let mut err = None;
    heap.walk_all(root, |_, h: &Header, row: &[u8]| {
        let created = match txns.status(h.xmin) {
            _ if txns.same_txn(h.xmin, own) => true,
            XidStatus::Aborted => return false,
            XidStatus::InProgress => false,
            XidStatus::Committed(_) => true,
        };
        let deleted = h.deleter() != 0
            && (txns.same_txn(h.xmax, own)
                || matches!(txns.status(h.xmax), XidStatus::Committed(_)));
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
        if keys.changed(&keys.key_of(&values), key) {
            return true;
        }
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

impl EngineInner {
    /// `index` (stored in `irel`) opened through its access method.
    pub(crate) fn open_index<'a>(
        &'a self,
        irel: &RelState,
        table: &'a TableDef,
        index: &'a IndexDef,
    ) -> Box<dyn AmIndex<'a> + 'a> {
        am::method(index.method).open(IndexRelation {
            pool: &self.pool,
            file: irel.file.clone(),
            table,
            index,
        })
    }
}
