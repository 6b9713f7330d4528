//! Table access: sequential or B-tree range scan, with the WHERE re-checked on every row
//! (index entries may point at versions that no longer match).

use super::{Node, Row};
use crate::eval::{Eval, EvalCx};
use keel_access::am::ScanKey;
use keel_access::{Engine, IntKeys, KeyRange, Prefilter, RowIter, RowRef, Transaction};
use keel_analyzer::expr::Expr;
use keel_catalog::TableDef;
use keel_common::PgResult;
use keel_planner::plan::Access;
use keel_types::{Datum, TypeId};
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub struct Scan<'a> {
    engine: &'a Engine,
    txn: &'a Transaction,
    table: &'a TableDef,
    access: &'a Access,
    filter: Option<&'a Expr>,
    /// The columns read above (None: all); the others come back NULL.
    columns: Option<&'a Arc<[bool]>>,
    iter: Option<RowIter<'a>>,
    done: bool,
    /// Heap pages a bitmap scan read rows from, and the last one (EXPLAIN ANALYZE's
    /// `Heap Blocks: exact=`).
    heap_blocks: u64,
    last_block: Option<keel_common::BlockNo>,
    /// Entries an index-only scan looked up in the heap (EXPLAIN ANALYZE's `Heap Fetches`:
    /// those whose root's page is not all-visible), or roots a bitmap scan's index gave (the
    /// Bitmap Index Scan's rows).
    counted: Arc<AtomicU64>,
    /// Rows carry their root and version tids after the columns (for a LockRows above).
    row_ids: bool,
    /// A hash join's keys the rows' integer column must hold (`Node::restrict_to_keys`).
    join_keys: Option<(usize, Arc<dyn IntKeys>)>,
    /// The identity of the row returned last.
    id: RowRef,
}

/// The key range for an index access, or None when it can match nothing (NULL key).
pub fn key_range(access: &Access, ev: &mut EvalCx<'_>) -> PgResult<Option<KeyRange>> {
    key_range_on(access, &[], ev)
}

/// [`key_range`] with the key expressions evaluated on `row` (an index nested loop's outer
/// row).
pub fn key_range_on(
    access: &Access,
    row: &[Datum],
    ev: &mut EvalCx<'_>,
) -> PgResult<Option<KeyRange>> {
    let Access::Index {
        eq,
        lower,
        upper,
        not_null,
        ..
    } = access
    else {
        return Ok(Some(KeyRange {
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
        }));
    };
    let mut prefix = Vec::with_capacity(eq.len() + 1);
    for e in eq {
        let v = e.eval(row, ev)?;
        if v.is_null() {
            return Ok(None);
        }
        prefix.push(v);
    }
    let bound =
        |b: &Option<(Expr, bool)>, ev: &mut EvalCx<'_>| -> PgResult<Option<Bound<Vec<Datum>>>> {
            Ok(match b {
                None if prefix.is_empty() => Some(Bound::Unbounded),
                None => Some(Bound::Included(prefix.clone())),
                Some((e, incl)) => {
                    let v = e.eval(row, ev)?;
                    if v.is_null() {
                        return Ok(None);
                    }
                    let mut k = prefix.clone();
                    k.push(v);
                    Some(if *incl {
                        Bound::Included(k)
                    } else {
                        Bound::Excluded(k)
                    })
                }
            })
        };
    let (Some(lo), Some(mut hi)) = (bound(lower, ev)?, bound(upper, ev)?) else {
        return Ok(None);
    };
    if *not_null || (lower.is_some() && upper.is_none()) {
        // NULL sorts after every value (NULLS LAST): every key before the prefix's NULL. A
        // lower bound alone stops there too (its operator is strict: NULL never passes), so
        // the range holds exactly the rows its conditions pass.
        let mut k = prefix.clone();
        k.push(Datum::Null);
        hi = Bound::Excluded(k);
    }
    Ok(Some(KeyRange {
        lower: lo,
        upper: hi,
    }))
}

/// The equalities of `filter` a scan can test on the stored bytes of `table`'s rows before
/// decoding them ([`Prefilter`]): conjuncts `column = constant` (or a parameter) where the
/// constant has the column's type and that type's `=` is byte equality.
pub fn prefilter(
    filter: Option<&Expr>,
    table: &TableDef,
    ev: &mut EvalCx<'_>,
) -> PgResult<Option<Arc<Prefilter>>> {
    let Some(filter) = filter else {
        return Ok(None);
    };
    let conjuncts = match filter {
        Expr::And(v) => &v[..],
        e => std::slice::from_ref(e),
    };
    let mut keys = Vec::new();
    for c in conjuncts {
        let Expr::Bin { op: "=", l, r, .. } = c else {
            continue;
        };
        let (column, ty, value) = match (&**l, &**r) {
            (Expr::Col(i, t), v @ (Expr::Const(..) | Expr::Param(..)))
            | (v @ (Expr::Const(..) | Expr::Param(..)), Expr::Col(i, t)) => (*i, *t, v),
            _ => continue,
        };
        let stored = table.columns.get(column).map(|c| c.ty.id);
        if stored != Some(ty) || !keel_types::row::byte_equal_type(ty) {
            continue;
        }
        let v = value.eval(&[], ev)?;
        let same_type = match (&v, ty) {
            (Datum::Text(_), TypeId::Text | TypeId::Varchar | TypeId::Name) => true,
            (v, ty) => v.natural_type() == Some(ty),
        };
        if same_type && let Some(bytes) = keel_types::row::value_bytes(&v, ty) {
            keys.push((column, bytes));
        }
    }
    Ok((!keys.is_empty()).then(|| {
        Arc::new(Prefilter {
            equals: keys,
            join_keys: None,
        })
    }))
}

/// What a scan reads: its access path, the columns its reader needs (None: all; the others
/// come back NULL), and the pre-filter sequential and index scans test (see [`prefilter`]).
pub struct Reading<'a> {
    pub access: &'a Access,
    pub columns: Option<Arc<[bool]>>,
    pub prefilter: Option<Arc<Prefilter>>,
}

/// Opens the row iterator for `reading` (None = provably empty). An index-only scan counts
/// the entries it looks up in the heap in `counted`, a bitmap scan the roots its index gave.
pub fn open<'a>(
    engine: &'a Engine,
    txn: &'a Transaction,
    table: &'a TableDef,
    reading: Reading<'a>,
    ev: &mut EvalCx<'_>,
    counted: &Arc<AtomicU64>,
) -> PgResult<Option<RowIter<'a>>> {
    let Reading {
        access,
        columns,
        prefilter,
    } = reading;
    Ok(match access {
        Access::Seq => Some(engine.scan_filtered(txn, table, columns, prefilter)),
        Access::Index {
            index,
            bitmap: true,
            ..
        } => scan_keys(access, ev)?
            .map(|k| engine.bitmap_heap_scan(txn, table, index, &k, counted, columns)),
        Access::Index {
            index,
            index_only,
            backward,
            ..
        } => key_range(access, ev)?.map(|r| {
            let options = keel_access::IndexScanOptions {
                backward: *backward,
                index_only: index_only.then(|| counted.clone()),
                columns,
                prefilter,
            };
            engine.index_scan_with(txn, table, index, r, options)
        }),
    })
}

/// The scan keys of a bitmap index access (B-tree strategies: 1 `<`, 2 `<=`, 3 `=`, 4 `>=`,
/// 5 `>`), or None when it can match nothing (a NULL key: every B-tree operator is strict).
fn scan_keys(access: &Access, ev: &mut EvalCx<'_>) -> PgResult<Option<Vec<ScanKey>>> {
    let Access::Index {
        eq, lower, upper, ..
    } = access
    else {
        return Ok(Some(Vec::new()));
    };
    let mut keys = Vec::with_capacity(eq.len() + 2);
    for (column, e) in eq.iter().enumerate() {
        keys.push(ScanKey {
            column,
            strategy: 3,
            argument: e.eval(&[], ev)?,
        });
    }
    let next = eq.len();
    if let Some((e, incl)) = lower {
        keys.push(ScanKey {
            column: next,
            strategy: if *incl { 4 } else { 5 },
            argument: e.eval(&[], ev)?,
        });
    }
    if let Some((e, incl)) = upper {
        keys.push(ScanKey {
            column: next,
            strategy: if *incl { 2 } else { 1 },
            argument: e.eval(&[], ev)?,
        });
    }
    if keys.iter().any(|k| k.argument.is_null()) {
        return Ok(None);
    }
    Ok(Some(keys))
}

impl<'a> Scan<'a> {
    pub fn new(
        engine: &'a Engine,
        txn: &'a Transaction,
        table: &'a TableDef,
        access: &'a Access,
        filter: Option<&'a Expr>,
    ) -> Self {
        Scan {
            engine,
            txn,
            table,
            access,
            filter,
            columns: None,
            iter: None,
            done: false,
            heap_blocks: 0,
            last_block: None,
            counted: Arc::default(),
            row_ids: false,
            join_keys: None,
            id: RowRef::NONE,
        }
    }

    /// Appends each row's root and version tids (`lockrows::row_ids`).
    pub fn row_ids(mut self, on: bool) -> Self {
        self.row_ids = on;
        self
    }

    /// Decodes only `columns` (None: all) of each row; the others come back NULL.
    pub fn columns(mut self, columns: Option<&'a Arc<[bool]>>) -> Self {
        self.columns = columns;
        self
    }

    /// Opens the row iterator at the first pull; false once the scan has ended (or is
    /// provably empty).
    fn ready(&mut self, ev: &mut EvalCx<'_>) -> PgResult<bool> {
        if self.done {
            return Ok(false);
        }
        if self.iter.is_none() {
            let counted = &self.counted;
            let columns = self.columns.cloned();
            let mut pre = prefilter(self.filter, self.table, ev)?;
            if let Some(keys) = self.join_keys.take() {
                let mut p = pre.map(|p| (*p).clone()).unwrap_or_default();
                p.join_keys = Some(keys);
                pre = Some(Arc::new(p));
            }
            let reading = Reading {
                access: self.access,
                columns,
                prefilter: pre,
            };
            match open(self.engine, self.txn, self.table, reading, ev, counted)? {
                Some(it) => self.iter = Some(it),
                None => {
                    self.done = true;
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Next matching row with its identity (used by UPDATE/DELETE).
    pub fn next_ref(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<(RowRef, Row)>> {
        let mut row = Vec::with_capacity(self.table.columns.len() + 3);
        Ok(self.next_ref_into(ev, &mut row)?.then_some((self.id, row)))
    }

    /// [`Self::next_ref`], the row's values appended to `out` and its identity left in
    /// `self.id` (read only by those that need it: the row is not copied out with it).
    fn next_ref_into(&mut self, ev: &mut EvalCx<'_>, out: &mut Row) -> PgResult<bool> {
        if !self.ready(ev)? {
            return Ok(false);
        }
        let Some(it) = self.iter.as_mut() else {
            return Ok(false);
        };
        let start = out.len();
        let bitmap = matches!(self.access, Access::Index { bitmap: true, .. });
        while it.next_into(out, &mut self.id)? {
            ev.tick()?;
            if bitmap && self.last_block != Some(self.id.root.block) {
                self.last_block = Some(self.id.root.block);
                self.heap_blocks += 1;
            }
            if let Some(f) = self.filter
                && !f.test(&out[start..], ev)?
            {
                out.truncate(start);
                continue;
            }
            return Ok(true);
        }
        self.done = true;
        Ok(false)
    }
}

impl<'a> Node<'a> for Scan<'a> {
    /// Taken by sequential and index scans on a column of an integer type (the pre-filter
    /// tests it on the stored bytes); not by bitmap scans or scans that return row ids.
    fn restrict_to_keys(&mut self, column: usize, keys: &Arc<dyn IntKeys>) -> bool {
        let int_column = self
            .table
            .columns
            .get(column)
            .is_some_and(|c| super::join::is_int(c.ty.id));
        let bitmap = matches!(self.access, Access::Index { bitmap: true, .. });
        if self.iter.is_some() || self.done || self.row_ids || bitmap || !int_column {
            return false;
        }
        self.join_keys = Some((column, keys.clone()));
        true
    }

    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        let mut row = Vec::with_capacity(self.table.columns.len() + 3);
        Ok(self.next_into(ev, &mut row)?.then_some(row))
    }

    fn next_into(&mut self, ev: &mut EvalCx<'_>, out: &mut Row) -> PgResult<bool> {
        if !self.next_ref_into(ev, out)? {
            return Ok(false);
        }
        if self.row_ids {
            super::lockrows::push_row_ids(out, self.id, self.table.oid);
        }
        Ok(true)
    }

    fn explain_lines(&self) -> Vec<String> {
        match self.access {
            Access::Index { bitmap: true, .. } => {
                let mut lines = Vec::new();
                if self.heap_blocks > 0 {
                    lines.push(format!("Heap Blocks: exact={}", self.heap_blocks));
                }
                lines.push(format!(
                    "{}rows={}",
                    keel_planner::explain::INNER_LINE,
                    self.counted.load(Ordering::Relaxed)
                ));
                lines
            }
            Access::Index {
                index_only: true, ..
            } => vec![format!(
                "Heap Fetches: {}",
                self.counted.load(Ordering::Relaxed)
            )],
            _ => Vec::new(),
        }
    }
}
