//! Hash aggregation (also the no-GROUP-BY case: one group, even for no input rows).
//! Output rows are `[group keys..., aggregate results...]`. Group expressions that a grouped
//! primary key decides (the plan's `dependent`) are output but not hashed: each group keeps
//! its first row's values.

use super::discard::{Freed, discard_in_place};
use super::mem::MemCharge;
use super::{BoxNode, Node, Row};
use crate::eval::{Eval, EvalCx};
use keel_analyzer::expr::Expr;
use keel_common::PgResult;
use keel_planner::plan::AggCall;
use keel_types::Datum;
use keel_types::TypeId;
use keel_types::datum::{alloc_size, row_heap_bytes};
use keel_types::func::Accumulator;
use rustc_hash::FxHashMap;
use std::collections::HashSet;
use std::mem::size_of;

/// Sort-key encodings and the aggregate's arguments of one input row.
type Keyed = (Vec<(bool, Vec<u8>)>, Row);

struct Group {
    keys: Row,
    accs: Vec<Box<dyn Accumulator>>,
    seen: Vec<HashSet<Vec<u8>>>,
    /// Per ordered aggregate: (sort key, arguments) buffered until the group is finished.
    ordered: Vec<Vec<Keyed>>,
}

pub struct Agg<'a> {
    input: Option<BoxNode<'a>>,
    group: &'a [Expr],
    aggs: &'a [AggCall],
    /// Per group expression (or empty): decided by the others, so not part of the hash key.
    dependent: &'a [bool],
    out: std::vec::IntoIter<Row>,
    /// Groups, their states and buffered inputs; then the result rows, given back as they
    /// are returned.
    mem: MemCharge,
}

impl<'a> Agg<'a> {
    pub fn new(
        input: BoxNode<'a>,
        group: &'a [Expr],
        aggs: &'a [AggCall],
        dependent: &'a [bool],
    ) -> Self {
        Agg {
            input: Some(input),
            group,
            aggs,
            dependent,
            out: Vec::new().into_iter(),
            mem: MemCharge::new("A hash aggregate's groups and states"),
        }
    }

    /// Heap bytes of one new group beyond its key values: the group, its per-aggregate
    /// state boxes, DISTINCT sets and ORDER BY buffers.
    fn group_bytes(&self) -> usize {
        size_of::<Group>()
            + self.aggs.len()
                * (alloc_size(32)
                    + size_of::<Box<dyn Accumulator>>()
                    + size_of::<HashSet<Vec<u8>>>()
                    + size_of::<Vec<Keyed>>())
    }

    fn new_group(&self, keys: Row) -> Group {
        Group {
            keys,
            accs: self
                .aggs
                .iter()
                .map(|a| (a.agg.new_accumulator)())
                .collect(),
            // Only DISTINCT and ORDER BY aggregates use these: no allocation otherwise.
            seen: if self.aggs.iter().any(|a| a.distinct) {
                self.aggs.iter().map(|_| HashSet::new()).collect()
            } else {
                Vec::new()
            },
            ordered: if self.aggs.iter().any(|a| !a.order.is_empty()) {
                self.aggs.iter().map(|_| Vec::new()).collect()
            } else {
                Vec::new()
            },
        }
    }
}

impl<'a> Node<'a> for Agg<'a> {
    /// A grouped aggregate is PostgreSQL's HashAggregate; keel's never spills (one batch).
    fn explain_lines(&self) -> Vec<String> {
        if self.group.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "Batches: 1  Memory Usage: {}kB",
            self.mem.peak().div_ceil(1024)
        )]
    }

    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let key_types: Vec<TypeId> = self.group.iter().map(Expr::ty).collect();
            let mut groups: Freed<Vec<Group>> = Freed(Vec::new());
            let mut index: Freed<FxHashMap<Vec<u8>, usize>> = Freed(FxHashMap::default());
            // One hashed key of an integer type (GROUP BY an id): hashed as the integer.
            let mut int_index: Freed<FxHashMap<i64, usize>> = Freed(FxHashMap::default());
            let hashed: Vec<usize> = (0..self.group.len())
                .filter(|&k| !self.dependent.get(k).copied().unwrap_or(false))
                .collect();
            let mut null_group: Option<usize> = None;
            let int_key = match hashed.as_slice() {
                [k] => match &self.group[*k] {
                    Expr::Col(i, ty) if super::join::is_int(*ty) => Some(*i),
                    _ => None,
                },
                _ => None,
            };
            let mut kbuf = Vec::new();
            // Group keys that are not plain columns, evaluated once per row.
            let mut computed: Vec<Datum> = Vec::new();
            let mut args = Vec::new();
            let group_bytes = self.group_bytes();
            // Each input row is pulled into this one buffer.
            let mut r: Row = Vec::new();
            loop {
                r.clear();
                if !input.next_into(ev, &mut r)? {
                    break;
                }
                ev.tick()?;
                let gi = if self.group.is_empty() {
                    if groups.is_empty() {
                        self.mem.add(ev, group_bytes)?;
                        groups.push(self.new_group(vec![]));
                    }
                    0
                } else if let Some(col) = int_key.filter(|&c| c < r.len()) {
                    let v = r[col].int_value();
                    let known = match v {
                        Some(v) => int_index.get(&v).copied(),
                        None => null_group,
                    };
                    match known {
                        Some(i) => i,
                        None => {
                            let keys: Row = self
                                .group
                                .iter()
                                .map(|g| match g {
                                    Expr::Col(i, _) if *i < r.len() => r[*i].clone(),
                                    _ => Datum::Null,
                                })
                                .collect();
                            self.mem.add(ev, group_bytes + row_heap_bytes(&keys))?;
                            match v {
                                Some(v) => {
                                    self.mem.room_for_one(
                                        ev,
                                        &mut *int_index,
                                        size_of::<(i64, usize)>(),
                                    )?;
                                    int_index.insert(v, groups.len());
                                }
                                // NULLs form one group of their own.
                                None => null_group = Some(groups.len()),
                            }
                            groups.push(self.new_group(keys));
                            groups.len() - 1
                        }
                    }
                } else {
                    // The key is encoded from the row's columns in place; the key values
                    // are copied only for a new group.
                    kbuf.clear();
                    computed.clear();
                    for (k, (g, &ty)) in self.group.iter().zip(&key_types).enumerate() {
                        match g {
                            // Decided by the hashed ones: taken from the group's first row.
                            Expr::Col(..) if self.dependent.get(k).copied().unwrap_or(false) => {}
                            Expr::Col(i, _) if *i < r.len() => {
                                keel_types::key::encode_key_value(&r[*i], ty, &mut kbuf)
                            }
                            _ => {
                                let v = g.eval(&r, ev)?;
                                keel_types::key::encode_key_value(&v, ty, &mut kbuf);
                                computed.push(v);
                            }
                        }
                    }
                    match index.get(kbuf.as_slice()) {
                        Some(&i) => i,
                        None => {
                            let mut computed = computed.drain(..);
                            let keys: Row = self
                                .group
                                .iter()
                                .map(|g| match g {
                                    Expr::Col(i, _) if *i < r.len() => r[*i].clone(),
                                    _ => computed.next().unwrap_or(Datum::Null),
                                })
                                .collect();
                            self.mem.add(
                                ev,
                                group_bytes + row_heap_bytes(&keys) + alloc_size(kbuf.len()),
                            )?;
                            self.mem.room_for_one(
                                ev,
                                &mut *index,
                                size_of::<(Vec<u8>, usize)>(),
                            )?;
                            index.insert(kbuf.clone(), groups.len());
                            groups.push(self.new_group(keys));
                            groups.len() - 1
                        }
                    }
                };
                let g = &mut groups[gi];
                for (ai, a) in self.aggs.iter().enumerate() {
                    if let Some(f) = &a.filter
                        && !f.test(&r, ev)?
                    {
                        continue;
                    }
                    args.resize(a.args.len(), Datum::Null);
                    for (e, slot) in a.args.iter().zip(args.iter_mut()) {
                        e.eval_into(&r, ev, slot)?;
                    }
                    if a.distinct {
                        if args.iter().any(|d| d.is_null()) {
                            continue;
                        }
                        let tys: Vec<TypeId> = a.args.iter().map(Expr::ty).collect();
                        let mut k = Vec::new();
                        keel_types::key::encode_key(&args, &tys, &mut k);
                        let bytes = alloc_size(k.len()) + size_of::<Vec<u8>>() * 2;
                        if !g.seen[ai].insert(k) {
                            continue;
                        }
                        self.mem.add(ev, bytes)?;
                    }
                    if a.order.is_empty() {
                        let acc = &mut g.accs[ai];
                        if a.agg.state_grows {
                            let before = acc.heap_bytes();
                            acc.update(&args)?;
                            let after = acc.heap_bytes();
                            if after > before {
                                self.mem.add(ev, after - before)?;
                            }
                        } else {
                            acc.update(&args)?;
                        }
                    } else {
                        let k = super::sort::encode(&a.order, &r, ev)?;
                        let held = args.clone();
                        self.mem.add(
                            ev,
                            super::sort::key_heap_bytes(&k)
                                + row_heap_bytes(&held)
                                + size_of::<Keyed>(),
                        )?;
                        g.ordered[ai].push((k, held));
                    }
                }
            }
            if self.group.is_empty() && groups.is_empty() {
                groups.push(self.new_group(vec![]));
            }
            let mut out = Freed(Vec::with_capacity(groups.len()));
            let mut pending = Freed(std::mem::take(&mut *groups).into_iter());
            for mut g in &mut *pending {
                ev.tick()?;
                for (ai, a) in self.aggs.iter().enumerate() {
                    if a.order.is_empty() {
                        continue;
                    }
                    let mut buf = std::mem::take(&mut g.ordered[ai]);
                    let order = &a.order;
                    super::runs::sort_checked(
                        &mut buf,
                        |x, y| super::sort::compare(order, &x.0, &y.0),
                        ev,
                    )?;
                    let acc = &mut g.accs[ai];
                    for (_, args) in &buf {
                        ev.tick()?;
                        let before = acc.heap_bytes();
                        acc.update(args)?;
                        let after = acc.heap_bytes();
                        if after > before {
                            self.mem.add(ev, after - before)?;
                        }
                    }
                }
                let mut row = g.keys;
                for acc in &mut g.accs {
                    row.push(acc.finish()?);
                }
                out.push(row);
            }
            // The groups' tables and states are gone; what stays is the result rows.
            drop(index);
            drop(int_index);
            self.mem
                .keep_rows(&out, out.iter().map(row_heap_bytes).sum());
            self.out = std::mem::take(&mut *out).into_iter();
        }
        Ok(self.mem.row_out(self.out.next()))
    }
}

impl Drop for Agg<'_> {
    fn drop(&mut self) {
        discard_in_place(&mut self.out);
    }
}
