//! Partition pruning at plan time, as PostgreSQL 15's partprune.c: from AND-ed conditions on
//! the key columns, the partitions that may hold matching rows.
//!
//! PostgreSQL turns the conditions into "steps", each a lookup of one operator and one key
//! prefix in the sorted bounds giving a set of bound *offsets* (plus whether the NULL and
//! the default partitions are needed), and combines the steps' sets by intersection (AND) and
//! union (the elements of an IN list). Which steps it builds decides which partitions
//! survive, so this follows it step for step (gen_partprune_steps_internal,
//! gen_prune_steps_from_opexps, get_steps_using_prefix, get_matching_{hash,list,range}_bounds,
//! perform_pruning_combine_step, get_matching_partitions), evaluating each step as it is
//! built. Offsets are kept as sorted ranges, so a step costs O(log n) comparisons and the
//! result O(partitions returned).
//!
//! Then, as the planner excludes every partition when the restriction clauses contradict
//! each other (relation_excluded_by_constraints' predicate_refuted_by, refute.rs), so does
//! [`PartitionDesc::prune`].

use super::desc::{
    BoundInfo, ListInfo, NO_PART, PartitionDesc, RangeInfo, list_bsearch, range_datum_bsearch,
    rbound_datum_cmp,
};
use super::{PartitionStrategy, RangeValue};
use keel_types::Datum;
use std::cmp::Ordering;

/// One AND-ed condition on one key column; the `usize` is the column's position in the key.
/// Values are of the key column's type (the caller coerces constants, or leaves out a
/// condition it cannot coerce).
///
/// `In` is `col = ANY(array)` with a constant array; its NULL elements match nothing. A
/// one-value `IN (x)` list is `Eq` (PostgreSQL's parser turns it into `col = x`): an `In`
/// with one element prunes as `= ANY('{x}')`, which on a multi-column key is not the same.
/// A comparison with NULL (`Eq(c, Datum::Null)`, ...) is never true: nothing survives.
#[derive(Clone, Debug, PartialEq)]
pub enum PruneCond {
    Eq(usize, Datum),
    Lt(usize, Datum),
    Le(usize, Datum),
    Gt(usize, Datum),
    Ge(usize, Datum),
    In(usize, Vec<Datum>),
    IsNull(usize),
    IsNotNull(usize),
}

/// The partitions (indexes into the slice the descriptor was built from, ascending, each
/// once) that may hold rows matching the conditions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PruneResult {
    pub partitions: Vec<usize>,
}

/// B-tree strategies, in PostgreSQL's order (BTLessStrategyNumber = 1 .. BTGreater = 5):
/// steps are generated in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Strategy {
    Lt,
    Le,
    Eq,
    Ge,
    Gt,
}

const STRATEGIES: [Strategy; 5] = [
    Strategy::Lt,
    Strategy::Le,
    Strategy::Eq,
    Strategy::Ge,
    Strategy::Gt,
];

/// A condition as pruning sees it, values borrowed.
#[derive(Clone, Copy, Debug)]
pub(super) enum Clause<'a> {
    Op(usize, Strategy, &'a Datum),
    In(usize, &'a [Datum]),
    IsNull(usize),
    IsNotNull(usize),
}

/// Sorted, disjoint inclusive ranges of bound offsets (a step's bound_offsets bitmapset).
#[derive(Clone, Debug, Default, PartialEq)]
struct Offsets(Vec<(usize, usize)>);

impl Offsets {
    fn range(lo: usize, hi: usize) -> Offsets {
        Offsets(if lo <= hi { vec![(lo, hi)] } else { Vec::new() })
    }

    fn all(n: usize) -> Offsets {
        if n == 0 {
            Offsets::default()
        } else {
            Offsets::range(0, n - 1)
        }
    }

    fn intersect(&self, other: &Offsets) -> Offsets {
        let (a, b) = (&self.0, &other.0);
        let (mut i, mut j, mut out) = (0, 0, Vec::new());
        while i < a.len() && j < b.len() {
            let (lo, hi) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
            if lo <= hi {
                out.push((lo, hi));
            }
            if a[i].1 < b[j].1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        Offsets(out)
    }

    fn union_all(sets: impl IntoIterator<Item = Offsets>) -> Offsets {
        let mut all: Vec<(usize, usize)> = sets.into_iter().flat_map(|s| s.0).collect();
        all.sort_unstable();
        let mut out: Vec<(usize, usize)> = Vec::with_capacity(all.len());
        for (lo, hi) in all {
            match out.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
        Offsets(out)
    }
}

/// What one step (or a combination of steps) selects.
#[derive(Clone, Debug, Default)]
struct StepResult {
    offsets: Offsets,
    scan_null: bool,
    scan_default: bool,
}

impl StepResult {
    fn offsets(offsets: Offsets) -> StepResult {
        StepResult {
            offsets,
            ..StepResult::default()
        }
    }

    fn intersect(mut self, other: &StepResult) -> StepResult {
        self.offsets = self.offsets.intersect(&other.offsets);
        self.scan_null &= other.scan_null;
        self.scan_default &= other.scan_default;
        self
    }
}

/// What step generation for a list of AND-ed clauses came to.
enum Steps {
    /// The clauses cannot all hold: no partition.
    Contradictory,
    /// No usable step: every partition.
    Nothing,
    Result(StepResult),
}

impl PartitionDesc {
    /// The partitions that may hold rows satisfying every condition in `conds`, exactly those
    /// PostgreSQL 15's planner keeps (its EXPLAIN lists them). `row_hash` is the hash
    /// partitioning row hash, as for [`PartitionDesc::route`]; only hash partitioning with an
    /// equality or IS NULL on every key column calls it. A condition naming a position past
    /// the key is ignored.
    ///
    /// Not included: exclusion of a partition by its own CHECK or NOT NULL constraints
    /// (PostgreSQL's constraint exclusion of each surviving partition), and contradictions
    /// among conditions on non-key columns. Those are the planner's.
    pub fn prune(&self, conds: &[PruneCond], row_hash: impl Fn(&[Datum]) -> u64) -> PruneResult {
        if self.is_empty() {
            return PruneResult::default();
        }
        let mut clauses = Vec::with_capacity(conds.len());
        for c in conds {
            let clause = match c {
                PruneCond::Eq(k, v) => Clause::Op(*k, Strategy::Eq, v),
                PruneCond::Lt(k, v) => Clause::Op(*k, Strategy::Lt, v),
                PruneCond::Le(k, v) => Clause::Op(*k, Strategy::Le, v),
                PruneCond::Gt(k, v) => Clause::Op(*k, Strategy::Gt, v),
                PruneCond::Ge(k, v) => Clause::Op(*k, Strategy::Ge, v),
                PruneCond::In(k, vs) => Clause::In(*k, vs),
                PruneCond::IsNull(k) => Clause::IsNull(*k),
                PruneCond::IsNotNull(k) => Clause::IsNotNull(*k),
            };
            let (Clause::Op(k, ..) | Clause::In(k, _) | Clause::IsNull(k) | Clause::IsNotNull(k)) =
                clause;
            if k >= self.key.len() {
                continue;
            }
            // A strict operator with a NULL constant: PostgreSQL folds the clause to NULL and
            // the whole scan to a one-time false filter.
            if matches!(clause, Clause::Op(_, _, v) if v.is_null()) {
                return PruneResult::default();
            }
            clauses.push(clause);
        }
        if clauses.is_empty() {
            return self.all_partitions();
        }
        if super::refute::refuted(&self.key, &clauses) {
            return PruneResult::default();
        }
        match self.gen_steps(&clauses, &row_hash) {
            Steps::Contradictory => PruneResult::default(),
            Steps::Nothing => self.all_partitions(),
            Steps::Result(r) => self.collect(r),
        }
    }

    fn all_partitions(&self) -> PruneResult {
        PruneResult {
            partitions: (0..self.len()).collect(),
        }
    }

    /// Number of bound offsets (PostgreSQL's nindexes).
    fn offset_count(&self) -> usize {
        match &self.info {
            BoundInfo::Range(r) => r.indexes.len(),
            BoundInfo::List(l) => l.values.len(),
            BoundInfo::Hash(h) => h.slots.len(),
        }
    }

    /// A step that selects everything: an IN element no step could be built for.
    fn select_all(&self) -> StepResult {
        StepResult {
            offsets: Offsets::all(self.offset_count()),
            scan_null: matches!(&self.info, BoundInfo::List(l) if l.null_part.is_some()),
            scan_default: self.default.is_some(),
        }
    }

    /// gen_partprune_steps_internal for one list of AND-ed clauses, each step evaluated.
    fn gen_steps(&self, clauses: &[Clause], row_hash: &dyn Fn(&[Datum]) -> u64) -> Steps {
        let natts = self.key.len();
        let hash = self.key.strategy == PartitionStrategy::Hash;
        let mut keyclauses: Vec<Vec<(Strategy, &Datum)>> = vec![Vec::new(); natts];
        let (mut nullkeys, mut notnullkeys) = (0u64, 0u64);
        let mut generate_opsteps = false;
        let mut results: Vec<StepResult> = Vec::new();
        for clause in clauses {
            match *clause {
                Clause::Op(k, strategy, v) => {
                    // Only equality is in a hash operator family.
                    if hash && strategy != Strategy::Eq {
                        continue;
                    }
                    if nullkeys & (1 << k) != 0 {
                        return Steps::Contradictory;
                    }
                    generate_opsteps = true;
                    keyclauses[k].push((strategy, v));
                }
                Clause::IsNull(k) => {
                    if notnullkeys & (1 << k) != 0 || !keyclauses[k].is_empty() {
                        return Steps::Contradictory;
                    }
                    nullkeys |= 1 << k;
                }
                Clause::IsNotNull(k) => {
                    if nullkeys & (1 << k) != 0 {
                        return Steps::Contradictory;
                    }
                    notnullkeys |= 1 << k;
                }
                Clause::In(k, values) => {
                    // `k = ANY(array)`: the OR of `k = v` for its non-null elements, each
                    // arm's steps built on its own (not with the other AND-ed clauses).
                    let elems: Vec<&Datum> = values.iter().filter(|v| !v.is_null()).collect();
                    if elems.len() == 1 {
                        match self.gen_steps(&[Clause::Op(k, Strategy::Eq, elems[0])], row_hash) {
                            Steps::Contradictory => return Steps::Contradictory,
                            Steps::Nothing => {}
                            Steps::Result(r) => results.push(r),
                        }
                    } else if !elems.is_empty() {
                        let mut arms = Vec::with_capacity(elems.len());
                        for v in elems {
                            match self.gen_steps(&[Clause::Op(k, Strategy::Eq, v)], row_hash) {
                                Steps::Contradictory => {}
                                Steps::Nothing => arms.push(self.select_all()),
                                Steps::Result(r) => arms.push(r),
                            }
                        }
                        if arms.is_empty() {
                            return Steps::Contradictory;
                        }
                        let scan_null = arms.iter().any(|a| a.scan_null);
                        let scan_default = arms.iter().any(|a| a.scan_default);
                        results.push(StepResult {
                            offsets: Offsets::union_all(arms.into_iter().map(|a| a.offsets)),
                            scan_null,
                            scan_default,
                        });
                    }
                }
            }
        }
        // NULL keys first: for list and range they can only be in the NULL-accepting or the
        // default partition, whatever else is asked; hash needs every key NULL here (a mix
        // of NULLs and equalities is an operator step below). Then operator steps. Failing
        // both, IS NOT NULL on every key column leaves out the NULL-only partition.
        let nulls = nullkeys.count_ones() as usize;
        if nulls > 0 && (!hash || nulls == natts) {
            results.push(self.op_step(None, &[], nullkeys, row_hash));
        } else if generate_opsteps {
            results.extend(self.op_steps(&keyclauses, nullkeys, row_hash));
        } else if notnullkeys.count_ones() as usize == natts {
            results.push(self.op_step(None, &[], 0, row_hash));
        }
        let mut results = results.into_iter();
        match results.next() {
            None => Steps::Nothing,
            Some(first) => Steps::Result(results.fold(first, |acc, r| acc.intersect(&r))),
        }
    }

    /// gen_prune_steps_from_opexps: one step per operator clause, looked up with the
    /// values of the clauses on the key columns before it (the prefix), evaluated.
    fn op_steps(
        &self,
        keyclauses: &[Vec<(Strategy, &Datum)>],
        nullkeys: u64,
        row_hash: &dyn Fn(&[Datum]) -> u64,
    ) -> Vec<StepResult> {
        let strategy = self.key.strategy;
        let mut btree: [Vec<(usize, &Datum)>; 5] = Default::default();
        let mut hash_eq: Vec<(usize, &Datum)> = Vec::new();
        for (k, clauses) in keyclauses.iter().enumerate() {
            // Range lookups need a prefix of the key; hash needs every column.
            if strategy == PartitionStrategy::Range && clauses.is_empty() {
                break;
            }
            if strategy == PartitionStrategy::Hash && clauses.is_empty() && nullkeys & (1 << k) == 0
            {
                return Vec::new();
            }
            let mut consider_next_key = true;
            for &(s, v) in clauses {
                if strategy == PartitionStrategy::Hash {
                    hash_eq.push((k, v));
                } else {
                    btree[s as usize].push((k, v));
                    // After a strict inequality, later columns say nothing more.
                    if matches!(s, Strategy::Lt | Strategy::Gt) {
                        consider_next_key = false;
                    }
                }
            }
            if !consider_next_key {
                break;
            }
        }
        let mut steps = Vec::new();
        if strategy == PartitionStrategy::Hash {
            let Some(&(last_key, _)) = hash_eq.last() else {
                return steps;
            };
            let split = hash_eq
                .iter()
                .position(|(k, _)| *k == last_key)
                .unwrap_or(0);
            let (prefix, lasts) = hash_eq.split_at(split);
            for &(_, v) in lasts {
                for values in prefix_combinations(prefix, v) {
                    steps.push(self.op_step(Some(Strategy::Eq), &values, nullkeys, row_hash));
                }
            }
            return steps;
        }
        let (eq, le, ge) = (
            &btree[Strategy::Eq as usize],
            &btree[Strategy::Le as usize],
            &btree[Strategy::Ge as usize],
        );
        for s in STRATEGIES {
            for &(keyno, v) in &btree[s as usize] {
                // Earlier columns may contribute = clauses, and <= (>=) ones to a < or <=
                // (> or >=) lookup; a column with none ends the usable prefix.
                let mut prefix: Vec<(usize, &Datum)> = Vec::new();
                let mut valid = true;
                for k in 0..keyno {
                    let before = prefix.len();
                    let extra = match s {
                        Strategy::Lt | Strategy::Le => Some(le),
                        Strategy::Gt | Strategy::Ge => Some(ge),
                        Strategy::Eq => None,
                    };
                    for src in std::iter::once(eq).chain(extra) {
                        prefix.extend(src.iter().filter(|(kk, _)| *kk == k));
                    }
                    if prefix.len() == before {
                        valid = false;
                        break;
                    }
                }
                if !valid {
                    break;
                }
                for values in prefix_combinations(&prefix, v) {
                    steps.push(self.op_step(Some(s), &values, 0, row_hash));
                }
            }
        }
        steps
    }

    /// perform_pruning_base_step: one lookup. `values` are for a prefix of the key (range),
    /// the key's one column (list), or every column not in `nullkeys` (hash); `strategy` is
    /// None for the NULL / NOT NULL steps, which carry no value.
    fn op_step(
        &self,
        strategy: Option<Strategy>,
        values: &[&Datum],
        nullkeys: u64,
        row_hash: &dyn Fn(&[Datum]) -> u64,
    ) -> StepResult {
        match &self.info {
            BoundInfo::Hash(h) => {
                let natts = self.key.len();
                if values.len() + nullkeys.count_ones() as usize != natts {
                    return StepResult::offsets(Offsets::all(h.slots.len()));
                }
                let mut given = values.iter();
                let row: Vec<Datum> = (0..natts)
                    .map(|k| match nullkeys & (1 << k) {
                        0 => given.next().map_or(Datum::Null, |v| (*v).clone()),
                        _ => Datum::Null,
                    })
                    .collect();
                let slot = (row_hash(&row) % h.slots.len() as u64) as usize;
                if h.slots[slot] == NO_PART {
                    StepResult::default()
                } else {
                    StepResult::offsets(Offsets::range(slot, slot))
                }
            }
            BoundInfo::List(l) => self.list_step(l, strategy, values.first().copied(), nullkeys),
            BoundInfo::Range(r) => {
                let values: Vec<Datum> = values.iter().map(|v| (*v).clone()).collect();
                self.range_step(r, strategy, &values, nullkeys)
            }
        }
    }

    /// get_matching_list_bounds.
    fn list_step(
        &self,
        l: &ListInfo,
        strategy: Option<Strategy>,
        value: Option<&Datum>,
        nullkeys: u64,
    ) -> StepResult {
        let has_default = self.default.is_some();
        let mut res = StepResult::default();
        if nullkeys != 0 {
            // NULL is in the partition that lists it, else only in the default one.
            if l.null_part.is_some() {
                res.scan_null = true;
            } else {
                res.scan_default = has_default;
            }
            return res;
        }
        let n = l.values.len();
        if n == 0 {
            res.scan_default = has_default;
            return res;
        }
        let (Some(strategy), Some(value)) = (strategy, value) else {
            // IS NOT NULL: every non-null value, and the default partition.
            res.offsets = Offsets::all(n);
            res.scan_default = has_default;
            return res;
        };
        // Values between the listed ones can be in the default partition.
        if strategy != Strategy::Eq {
            res.scan_default = has_default;
        }
        let (off, equal) = list_bsearch(&self.key, l, value);
        let (minoff, maxoff) = match strategy {
            Strategy::Eq => {
                if off >= 0 && equal {
                    res.offsets = Offsets::range(off as usize, off as usize);
                } else {
                    res.scan_default = has_default;
                }
                return res;
            }
            Strategy::Ge | Strategy::Gt => {
                let inclusive = strategy == Strategy::Ge;
                let off = if off < 0 {
                    0
                } else if !equal || !inclusive {
                    off as usize + 1
                } else {
                    off as usize
                };
                if off > n - 1 {
                    return res;
                }
                (off, n - 1)
            }
            Strategy::Le | Strategy::Lt => {
                let inclusive = strategy == Strategy::Le;
                let off = if off >= 0 && equal && !inclusive {
                    off - 1
                } else {
                    off
                };
                if off < 0 {
                    return res;
                }
                (0, off as usize)
            }
        };
        res.offsets = Offsets::range(minoff, maxoff);
        res
    }

    /// get_matching_range_bounds. Offsets are of upper bounds: offset i selects the partition
    /// whose upper bound is bound i, or, for a lower bound, the gap below it (the default
    /// partition, decided when the final offsets are mapped to partitions).
    fn range_step(
        &self,
        r: &RangeInfo,
        strategy: Option<Strategy>,
        values: &[Datum],
        nullkeys: u64,
    ) -> StepResult {
        let key = &self.key;
        let has_default = self.default.is_some();
        let n = r.bounds.len();
        let nvalues = values.len();
        let mut res = StepResult::default();
        if n == 0 || nullkeys != 0 {
            res.scan_default = has_default;
            return res;
        }
        let Some(strategy) = strategy.filter(|_| nvalues > 0) else {
            res.scan_default = has_default;
            res.offsets = Offsets::range(0, n);
            return res;
        };
        // Rows that match a key prefix may also be in the default partition.
        if nvalues < key.len() {
            res.scan_default = has_default;
        }
        let kind = |i: usize, col: usize| &r.bounds[i][col];
        // The first and last bounds equal to the prefix, by binary search: PostgreSQL walks
        // there one bound at a time from where its search stopped.
        let first_eq = || {
            r.bounds
                .partition_point(|b| rbound_datum_cmp(key, b, values) == Ordering::Less)
        };
        let last_eq = || {
            r.bounds
                .partition_point(|b| rbound_datum_cmp(key, b, values) != Ordering::Greater)
                - 1
        };
        // PostgreSQL's walk to the other bounds equal to a prefix stops, for inequalities,
        // before leaving the first or last offset: from there it does not move at all.
        let walk = |off: usize, up: bool| {
            if off >= 1 && off < n - 1 {
                if up { last_eq() } else { first_eq() }
            } else {
                off
            }
        };
        let (off, equal) = range_datum_bsearch(key, r, values);
        let (mut minoff, mut maxoff) = (0, n);
        match strategy {
            Strategy::Eq => {
                if off >= 0 && equal {
                    if nvalues == key.len() {
                        res.offsets = Offsets::range(off as usize + 1, off as usize + 1);
                        return res;
                    }
                    let mut lo = first_eq();
                    // A bound equal to the prefix but MINVALUE after it cannot be the upper
                    // bound of a partition holding the prefix.
                    if matches!(kind(lo, nvalues), RangeValue::MinValue) {
                        lo += 1;
                    }
                    res.offsets = Offsets::range(lo, last_eq() + 1);
                } else {
                    // Between two bounds: the partition whose upper bound is the next one.
                    let next = (off + 1) as usize;
                    res.offsets = Offsets::range(next, next);
                }
                return res;
            }
            Strategy::Ge | Strategy::Gt => {
                let inclusive = strategy == Strategy::Ge;
                if off >= 0 {
                    let off = off as usize;
                    minoff = if equal && nvalues < key.len() {
                        let off = walk(off, !inclusive);
                        if inclusive { off } else { off + 1 }
                    } else {
                        off + 1
                    };
                }
            }
            Strategy::Le | Strategy::Lt => {
                let inclusive = strategy == Strategy::Le;
                maxoff = if off >= 0 {
                    let off = off as usize;
                    if equal && nvalues < key.len() {
                        let off = walk(off, inclusive);
                        if inclusive { off + 1 } else { off }
                    } else if !equal || inclusive {
                        off + 1
                    } else {
                        off
                    }
                } else {
                    0
                };
            }
        }
        // Skip a gap below a MINVALUE lower bound and above a MAXVALUE upper bound, so the
        // default partition is not asked for needlessly.
        let lastkey = nvalues - 1;
        if minoff < n
            && r.indexes[minoff].is_none()
            && matches!(kind(minoff, lastkey), RangeValue::MinValue)
        {
            minoff += 1;
        }
        if maxoff >= 1
            && r.indexes[maxoff].is_none()
            && matches!(kind(maxoff - 1, lastkey), RangeValue::MaxValue)
        {
            maxoff -= 1;
        }
        res.offsets = Offsets::range(minoff, maxoff);
        res
    }

    /// get_matching_partitions' last part: offsets to partitions.
    fn collect(&self, r: StepResult) -> PruneResult {
        let mut scan_default = r.scan_default;
        let mut parts = Vec::new();
        match &self.info {
            BoundInfo::Hash(h) if r.offsets.0 == [(0, h.slots.len() - 1)] => {
                return self.all_partitions();
            }
            BoundInfo::Hash(h) => {
                for &(lo, hi) in &r.offsets.0 {
                    parts.extend(
                        h.slots[lo..=hi]
                            .iter()
                            .filter(|s| **s != NO_PART)
                            .map(|s| *s as usize),
                    );
                }
            }
            BoundInfo::List(l) => {
                for &(lo, hi) in &r.offsets.0 {
                    parts.extend_from_slice(&l.parts[lo..=hi]);
                }
                if r.scan_null {
                    parts.extend(l.null_part);
                }
            }
            BoundInfo::Range(rb) => {
                for &(lo, hi) in &r.offsets.0 {
                    for idx in &rb.indexes[lo..=hi] {
                        match idx {
                            Some(p) => parts.push(*p),
                            // A gap between partitions: only the default partition has it.
                            None => scan_default = true,
                        }
                    }
                }
            }
        }
        if scan_default {
            parts.extend(self.default);
        }
        parts.sort_unstable();
        parts.dedup();
        PruneResult { partitions: parts }
    }
}

/// get_steps_using_prefix: every way of taking one clause per key column from `prefix`
/// (sorted by column), each followed by `last`, as the values of one lookup.
fn prefix_combinations<'a>(prefix: &[(usize, &'a Datum)], last: &'a Datum) -> Vec<Vec<&'a Datum>> {
    let mut combos: Vec<Vec<&Datum>> = vec![Vec::new()];
    let mut i = 0;
    while i < prefix.len() {
        let k = prefix[i].0;
        let group: Vec<&Datum> = prefix[i..]
            .iter()
            .take_while(|(kk, _)| *kk == k)
            .map(|(_, v)| *v)
            .collect();
        i += group.len();
        combos = combos
            .into_iter()
            .flat_map(|c| {
                group.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push(*v);
                    c
                })
            })
            .collect();
    }
    for c in &mut combos {
        c.push(last);
    }
    combos
}
