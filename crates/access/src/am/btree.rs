//! B-tree through the access-method interface: keys are the index columns' values encoded
//! memcomparably (`keel_types::key`: byte order is the operator classes' order, SQL-equal
//! values encode to equal bytes), stored in a `keel_btree::BTree` as `(key bytes, root)`.

use super::cost::{self, CostInput, CostParams, IndexCost};
use super::{
    AmCapabilities, AmIndex, BuildResult, BuildTuple, Existing, IndexAm, IndexRelation, IndexScan,
    InsertResult, ScanKey, UniqueCheck,
};
use crate::api::KeyRange;
use keel_btree::{BTree, BTreeScan, UniqueInsert};
use keel_catalog::am::{BT_EQUAL, BT_GREATER, BT_GREATER_EQUAL, BT_LESS, BT_LESS_EQUAL};
use keel_catalog::{IndexDef, IndexMethod, TableDef};
use keel_common::{PgError, PgResult, Tid, sqlstate};
use keel_types::Datum;
use std::ops::Bound;

pub struct BtreeAm;

const CAPABILITIES: AmCapabilities = AmCapabilities {
    can_order: true,
    can_unique: true,
    can_multi_col: true,
    has_ordered_scan: true,
    has_bitmap_scan: true,
    strategies: 5,
};

/// CPU cost of one page's comparisons during a descent, in cpu_operator_costs (PostgreSQL's
/// DEFAULT_PAGE_CPU_MULTIPLIER).
const PAGE_CPU_MULTIPLIER: f64 = 50.0;

impl IndexAm for BtreeAm {
    fn method(&self) -> IndexMethod {
        IndexMethod::Btree
    }

    fn capabilities(&self) -> AmCapabilities {
        CAPABILITIES
    }

    /// genericcostestimate plus the descent (btcostestimate): about log2(entries) comparisons
    /// to find the first entry, and the CPU of each level's page; both are paid before the
    /// first row. Heap fetches as `cost::with_heap_fetches`.
    fn cost_estimate(&self, input: &CostInput, params: &CostParams) -> IndexCost {
        let entries = if input.unique_equality {
            1.0
        } else {
            input.selectivity.clamp(0.0, 1.0) * input.heap_tuples
        };
        let (mut startup, mut total) = cost::generic_index_cost(input, params, entries);
        if input.index_tuples > 1.0 {
            let compare = input.index_tuples.log2().ceil() * params.cpu_operator_cost;
            startup += compare;
            total += compare;
        }
        let height = input.tree_height.map_or_else(
            || {
                // Levels above the leaves, with pages about as full as the index is on average.
                let fanout = (input.index_tuples / input.index_pages.max(1.0)).max(2.0);
                (input.index_pages.max(1.0).ln() / fanout.ln())
                    .ceil()
                    .max(0.0)
            },
            f64::from,
        );
        let descent = (height + 1.0) * PAGE_CPU_MULTIPLIER * params.cpu_operator_cost;
        startup += descent;
        total += descent;
        cost::with_heap_fetches(input, params, (startup, total))
    }

    /// Equal encodings are equal entries (`(key, root)` is already there).
    fn key_changed(
        &self,
        table: &TableDef,
        index: &IndexDef,
        old: &[Datum],
        new: &[Datum],
    ) -> bool {
        let keys = Keys { table, index };
        encode(&keys, old) != encode(&keys, new)
    }

    /// Keys are stored as memcomparable bytes; the types whose encoding keeps the whole
    /// value decode back to it.
    fn can_return(&self, ty: keel_types::TypeId) -> bool {
        keel_types::key::key_returns(ty)
    }

    fn open<'a>(&self, rel: IndexRelation<'a>) -> Box<dyn AmIndex<'a> + 'a> {
        Box::new(BtreeIndex {
            tree: BTree::new(rel.pool.clone(), rel.file),
            rel: Keys {
                table: rel.table,
                index: rel.index,
            },
        })
    }
}

/// What the key encoding needs to know of the index.
#[derive(Clone, Copy)]
struct Keys<'a> {
    table: &'a TableDef,
    index: &'a IndexDef,
}

impl Keys<'_> {
    fn key_columns(&self) -> usize {
        self.index.columns.len()
    }
}

struct BtreeIndex<'a> {
    tree: BTree,
    rel: Keys<'a>,
}

/// Encodes the values of the first `values.len()` key columns (a prefix of the key).
fn encode(rel: &Keys<'_>, values: &[Datum]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    for (v, &c) in values.iter().zip(&rel.index.columns) {
        keel_types::key::encode_key_value(v, rel.table.columns[c].ty.id, &mut out);
    }
    out
}

/// A bound on index values as a bound on their encoded keys.
fn encode_bound(rel: &Keys<'_>, b: &Bound<Vec<Datum>>) -> Bound<Vec<u8>> {
    match b {
        Bound::Included(v) => Bound::Included(encode(rel, v)),
        Bound::Excluded(v) => Bound::Excluded(encode(rel, v)),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl BtreeIndex<'_> {
    /// PostgreSQL names the index in its row-size error; the tree does not know it.
    fn named(&self, mut e: PgError) -> PgError {
        if e.code == sqlstate::PROGRAM_LIMIT_EXCEEDED {
            e.message = format!("{} \"{}\"", e.message, self.rel.index.name);
            e
        } else {
            e
        }
    }

    fn insert_encoded(
        &self,
        key: &[Datum],
        bytes: &[u8],
        tid: Tid,
        xid: u64,
        unique: Option<&mut UniqueCheck<'_>>,
    ) -> PgResult<InsertResult> {
        let Some(unique) = unique else {
            self.tree
                .insert(bytes, tid, xid)
                .map_err(|e| self.named(e))?;
            return Ok(InsertResult::Inserted);
        };
        let mut check = |other: Tid| -> PgResult<keel_btree::Existing> {
            if other == tid {
                return Ok(keel_btree::Existing::Dead);
            }
            Ok(match unique(key, other)? {
                Existing::Dead => keel_btree::Existing::Dead,
                Existing::Live => keel_btree::Existing::Live,
                Existing::InProgress(x) => keel_btree::Existing::InProgress(x),
            })
        };
        let r = self
            .tree
            .insert_unique(bytes, tid, xid, &mut check)
            .map_err(|e| self.named(e))?;
        Ok(match r {
            UniqueInsert::Inserted => InsertResult::Inserted,
            UniqueInsert::Duplicate(t) => InsertResult::Duplicate(t),
            UniqueInsert::Wait(x) => InsertResult::Wait(x),
        })
    }
}

impl<'a> AmIndex<'a> for BtreeIndex<'a> {
    fn create_empty(&self, xid: u64) -> PgResult<()> {
        self.tree.create(xid)
    }

    /// Inserts one entry at a time (no sorted bulk load yet; sequential input fills pages to
    /// 90% through the rightmost-append split rule, as dense as a bulk build).
    fn build(
        &self,
        xid: u64,
        tuples: &mut dyn Iterator<Item = PgResult<BuildTuple>>,
        unique: &mut UniqueCheck<'_>,
        check: &dyn Fn() -> PgResult<()>,
    ) -> PgResult<BuildResult> {
        if !self.tree.is_created() {
            self.tree.create(xid)?;
        }
        let mut n = 0u64;
        for t in tuples {
            check()?;
            let t = t?;
            n += 1;
            let bytes = encode(&self.rel, &t.key);
            let u = if t.unique { Some(&mut *unique) } else { None };
            match self.insert_encoded(&t.key, &bytes, t.tid, xid, u)? {
                InsertResult::Inserted => {}
                // In a build, a key an in-progress transaction holds counts as a duplicate.
                InsertResult::Duplicate(_) | InsertResult::Wait(_) => {
                    return Ok(BuildResult::Duplicate(t.key));
                }
            }
        }
        Ok(BuildResult::Built { tuples: n })
    }

    fn insert(
        &self,
        key: &[Datum],
        tid: Tid,
        xid: u64,
        unique: Option<&mut UniqueCheck<'_>>,
    ) -> PgResult<InsertResult> {
        let bytes = encode(&self.rel, key);
        self.insert_encoded(key, &bytes, tid, xid, unique)
    }

    fn bulk_delete(
        &self,
        xid: u64,
        dead: &dyn Fn(Tid) -> bool,
        check: &dyn Fn() -> PgResult<()>,
    ) -> PgResult<u64> {
        self.tree.bulk_delete(xid, dead, check)
    }

    fn scan(&self, range: &KeyRange) -> PgResult<Box<dyn IndexScan + 'a>> {
        let rel = self.rel;
        // Equality on every column: a point lookup, the pgbench hot path.
        if let (Bound::Included(lo), Bound::Included(hi)) = (&range.lower, &range.upper)
            && lo.len() == self.rel.key_columns()
            && lo == hi
        {
            let key = encode(&self.rel, lo);
            let roots = self.tree.lookup(&key)?;
            return Ok(Box::new(BtreeScanOf {
                rel,
                source: Source::Lookup(roots.into_iter()),
                current: key,
                scratch: Default::default(),
            }));
        }
        let bound = |b: &Bound<Vec<Datum>>| encode_bound(&self.rel, b);
        let scan = self.tree.scan(bound(&range.lower), bound(&range.upper));
        Ok(Box::new(BtreeScanOf {
            rel,
            source: Source::Scan(scan),
            current: Vec::new(),
            scratch: Default::default(),
        }))
    }

    fn remove_stale(&self, key: &[u8], root: Tid, stale: &dyn Fn() -> bool) -> PgResult<bool> {
        self.tree.remove_entry(key, root, stale)
    }

    fn predicate_key(&self, key: &[Datum]) -> Vec<u8> {
        encode(&self.rel, key)
    }

    fn predicate_range(&self, range: &KeyRange) -> (Vec<u8>, Option<Vec<u8>>) {
        let bound = |b: &Bound<Vec<Datum>>| encode_bound(&self.rel, b);
        // An empty interval reads nothing; the empty key range [k, k) covers nothing either.
        keel_btree::key_interval(&bound(&range.lower), &bound(&range.upper))
            .unwrap_or_else(|| (vec![0xff], Some(vec![0xff])))
    }

    fn scan_backward(&self, range: &KeyRange) -> PgResult<Box<dyn IndexScan + 'a>> {
        let bound = |b: &Bound<Vec<Datum>>| encode_bound(&self.rel, b);
        let scan = self
            .tree
            .scan_backward(bound(&range.lower), bound(&range.upper));
        Ok(Box::new(BtreeScanOf {
            rel: self.rel,
            source: Source::Back(scan),
            current: Vec::new(),
            scratch: Default::default(),
        }))
    }

    /// The range the keys give on a prefix of the columns (equalities on leading columns, then
    /// the bounds of the next column), collected from an ordered scan. Keys on later columns
    /// only narrow what the caller rechecks anyway.
    fn bitmap_scan(&self, keys: &[ScanKey]) -> PgResult<Vec<Tid>> {
        if keys.iter().any(|k| k.argument.is_null()) {
            // Every B-tree operator is strict: `col op NULL` matches nothing.
            return Ok(Vec::new());
        }
        for k in keys {
            if k.column >= self.rel.key_columns() || !(BT_LESS..=BT_GREATER).contains(&k.strategy) {
                return Err(PgError::internal(format!(
                    "btree scan key on column {} with strategy {}",
                    k.column, k.strategy
                )));
            }
        }
        let mut prefix = Vec::new();
        let (mut lower, mut upper) = (Bound::Unbounded, Bound::Unbounded);
        for col in 0..self.rel.key_columns() {
            let on = |s: u16| keys.iter().find(|k| k.column == col && k.strategy == s);
            if let Some(eq) = on(BT_EQUAL) {
                prefix.push(eq.argument.clone());
                lower = Bound::Included(prefix.clone());
                upper = Bound::Included(prefix.clone());
                continue;
            }
            let with = |k: &ScanKey| {
                let mut v = prefix.clone();
                v.push(k.argument.clone());
                v
            };
            if let Some(k) = on(BT_GREATER_EQUAL) {
                lower = Bound::Included(with(k));
            } else if let Some(k) = on(BT_GREATER) {
                lower = Bound::Excluded(with(k));
            }
            if let Some(k) = on(BT_LESS_EQUAL) {
                upper = Bound::Included(with(k));
            } else if let Some(k) = on(BT_LESS) {
                upper = Bound::Excluded(with(k));
            }
            break;
        }
        let mut scan = self.scan(&KeyRange { lower, upper })?;
        let mut out = Vec::new();
        while let Some(t) = scan.next()? {
            out.push(t);
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    fn count(&self) -> PgResult<u64> {
        self.tree.count()
    }
}

enum Source {
    Scan(BTreeScan),
    Back(keel_btree::BTreeBackScan),
    Lookup(std::vec::IntoIter<Tid>),
}

struct BtreeScanOf<'a> {
    rel: Keys<'a>,
    source: Source,
    /// Key bytes of the entry returned last.
    current: Vec<u8>,
    /// Where `recheck_row` encodes a row's key.
    scratch: std::cell::RefCell<Vec<u8>>,
}

impl IndexScan for BtreeScanOf<'_> {
    fn next(&mut self) -> PgResult<Option<Tid>> {
        let entry = match &mut self.source {
            Source::Lookup(roots) => return Ok(roots.next()),
            Source::Scan(scan) => scan.next(),
            Source::Back(scan) => scan.next(),
        };
        match entry {
            Some(entry) => {
                let (key, root) = entry?;
                self.current = key;
                Ok(Some(root))
            }
            None => Ok(None),
        }
    }

    fn recheck(&self, key: &[Datum]) -> bool {
        encode(&self.rel, key) == self.current
    }

    fn recheck_row(&self, row: &[Datum], columns: &[usize]) -> bool {
        let mut out = self.scratch.borrow_mut();
        out.clear();
        for &c in columns {
            let value = row.get(c).unwrap_or(&Datum::Null);
            keel_types::key::encode_key_value(value, self.rel.table.columns[c].ty.id, &mut out);
            if !self.current.starts_with(&out) {
                return false;
            }
        }
        *out == self.current
    }

    fn entry(&self) -> Option<&[u8]> {
        Some(&self.current)
    }

    /// A forward range scan restarts in place, looking first at the leaf it read last (see
    /// `BTreeScan::restart`); point lookups and backward scans are opened anew.
    fn rescan(&mut self, range: &KeyRange) -> PgResult<bool> {
        let Source::Scan(scan) = &mut self.source else {
            return Ok(false);
        };
        scan.restart(
            encode_bound(&self.rel, &range.lower),
            encode_bound(&self.rel, &range.upper),
        );
        self.current.clear();
        Ok(true)
    }

    fn key(&self) -> Option<Vec<Datum>> {
        let types: Vec<_> = (self.rel.index.columns.iter())
            .map(|&c| self.rel.table.columns[c].ty.id)
            .collect();
        if !types.iter().all(|&t| keel_types::key::key_returns(t)) {
            return None;
        }
        keel_types::key::decode_key(&self.current, &types)
    }
}
