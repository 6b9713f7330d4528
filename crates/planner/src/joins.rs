//! Inner-join blocks: a tree of inner joins (and the WHERE above it) over base tables is
//! flattened into its tables and the conjuncts of all its ON and WHERE clauses. Conjuncts that
//! reference one table are pushed down to it (and pick its access path); the others join. The
//! join order is searched exhaustively (dynamic programming over sets of tables) up to
//! `DP_MAX_TABLES` tables and greedily beyond, and each step picks an index nested loop (the
//! next table probed through an index on its join columns), a hash join (building on the side
//! with fewer values: rows times columns) or a nested loop. A projection on top restores the
//! column order the query was written in.

use crate::Planner;
use crate::access::{col_range, conjuncts, equi_keys, remap};
use crate::cost::{Estimate, TableInfo, distinct, eq_sel, leaf_estimate, table_info};
use crate::plan::{Access, Plan};
use keel_analyzer::expr::Expr;
use keel_analyzer::query::Rel;
use keel_catalog::TableDef;
use keel_common::PgResult;
use keel_types::TypeId;
use std::sync::Arc;

/// Deepest expression the block moves between row layouts (re-basing is recursive); deeper
/// conjuncts stay on top, evaluated where they were written.
const MAX_MOVED_DEPTH: usize = 1000;

struct Leaf {
    table: Arc<TableDef>,
    alias: Option<String>,
    /// First column of the table in the block's written row layout.
    offset: usize,
}

impl Leaf {
    fn width(&self) -> usize {
        self.table.columns.len()
    }
}

pub(crate) struct Block {
    leaves: Vec<Leaf>,
    /// Conjuncts over the written row layout.
    conj: Vec<Expr>,
    width: usize,
}

/// The block `rel` heads, when it is an inner join of at least two base tables (possibly
/// under a WHERE), or None.
pub(crate) fn flatten(rel: &Rel) -> Option<Block> {
    let mut b = Block {
        leaves: Vec::new(),
        conj: Vec::new(),
        width: 0,
    };
    if !walk(rel, 0, &mut b) || b.leaves.len() < 2 {
        return None;
    }
    b.width = b.leaves.iter().map(Leaf::width).sum();
    Some(b)
}

fn walk(rel: &Rel, offset: usize, b: &mut Block) -> bool {
    match rel {
        Rel::Scan { table, alias } => {
            b.leaves.push(Leaf {
                table: table.clone(),
                alias: alias.clone(),
                offset,
            });
            true
        }
        Rel::Filter { input, pred } => walk(input, offset, b) && add_conj(pred, offset, b),
        Rel::Join {
            left,
            right,
            on,
            left_join: false,
            right_join: false,
            left_width,
            ..
        } => {
            walk(left, offset, b)
                && walk(right, offset + left_width, b)
                && on.as_ref().is_none_or(|on| add_conj(on, offset, b))
        }
        _ => false,
    }
}

fn add_conj(pred: &Expr, offset: usize, b: &mut Block) -> bool {
    let mut parts = Vec::new();
    conjuncts(pred.clone(), &mut parts);
    for c in parts {
        if offset == 0 {
            b.conj.push(c);
        } else if movable(&c) {
            b.conj.push(remap(c, &|i| i + offset));
        } else {
            return false;
        }
    }
    true
}

/// Whether `e` can be re-based to another row layout: [`col_range`] sees all its column
/// references, and it is shallow enough for the recursive rewrite.
fn movable(e: &Expr) -> bool {
    let (mut lo, mut hi) = (usize::MAX, 0);
    if depth(e) > MAX_MOVED_DEPTH {
        return false;
    }
    col_range(e, &mut lo, &mut hi);
    hi != usize::MAX
}

/// Nesting depth of `e`, counted without recursion.
fn depth(e: &Expr) -> usize {
    let mut max = 0;
    let mut todo = vec![(e, 1)];
    while let Some((e, d)) = todo.pop() {
        max = max.max(d);
        if max > MAX_MOVED_DEPTH {
            break;
        }
        e.for_each_child(&mut |c| todo.push((c, d + 1)));
    }
    max
}

/// Columns `e` references (written layout), or None when it cannot be moved.
fn columns(e: &Expr) -> Option<Vec<usize>> {
    if !movable(e) {
        return None;
    }
    let mut out = Vec::new();
    let mut todo = vec![e];
    while let Some(e) = todo.pop() {
        if let Expr::Col(i, _) = e {
            out.push(*i);
        }
        e.for_each_child(&mut |c| todo.push(c));
    }
    Some(out)
}

/// A joined part of the block: its plan, estimate, and where each written column is in its
/// rows.
#[derive(Clone)]
struct Part {
    plan: Plan,
    est: Estimate,
    /// Leaves it holds.
    leaves: Vec<usize>,
    /// Written column -> position in this part's rows (for the leaves it holds).
    pos: Vec<Option<usize>>,
    width: usize,
}

struct Conj {
    expr: Expr,
    /// Leaves referenced; None = stays on top (not movable).
    leaves: Option<Vec<usize>>,
    used: bool,
}

impl Planner<'_> {
    pub(crate) fn plan_block(&mut self, b: Block) -> PgResult<Plan> {
        let leaf_of = |col: usize| b.leaves.iter().rposition(|l| l.offset <= col);
        let implied = crate::equiv::apply_constants(b.conj, b.width, &leaf_of);
        let mut conj: Vec<Conj> = implied
            .into_iter()
            .map(|expr| {
                let leaves = columns(&expr).and_then(|cols| {
                    let mut ls: Vec<usize> = cols.iter().filter_map(|c| leaf_of(*c)).collect();
                    ls.sort_unstable();
                    ls.dedup();
                    (!ls.is_empty() && !expr.has_subplan()).then_some(ls)
                });
                Conj {
                    expr,
                    leaves,
                    used: false,
                }
            })
            .collect();
        for c in &conj {
            self.exprs([&c.expr]);
        }
        // Each table with the conjuncts that reference it alone.
        let infos: Vec<TableInfo> = b
            .leaves
            .iter()
            .map(|l| table_info(self.sizes, &l.table))
            .collect();
        let mut parts: Vec<Option<Part>> = Vec::new();
        for (i, leaf) in b.leaves.iter().enumerate() {
            let mut local = Vec::new();
            for c in conj.iter_mut() {
                if c.leaves.as_deref() == Some(&[i]) {
                    c.used = true;
                    local.push(remap(c.expr.clone(), &|col| col - leaf.offset));
                }
            }
            let pred = local.into_iter().reduce(Expr::and);
            let (access, filter) = self.table_access(&leaf.table, pred);
            let est = leaf_estimate(
                self.catalog,
                &infos[i],
                &leaf.table,
                &access,
                filter.as_ref(),
            );
            let mut pos = vec![None; b.width];
            for k in 0..leaf.width() {
                pos[leaf.offset + k] = Some(k);
            }
            parts.push(Some(Part {
                plan: Plan::Scan {
                    table: leaf.table.clone(),
                    alias: leaf.alias.clone(),
                    access,
                    filter,
                    run: Default::default(),
                },
                est,
                leaves: vec![i],
                pos,
                width: leaf.width(),
            }));
        }
        let parts: Vec<Part> = parts.into_iter().flatten().collect();
        let ctx = (&b.leaves[..], &infos[..]);
        let cur = if parts.len() <= DP_MAX_TABLES {
            self.order_by_dp(parts, ctx, &conj)?
        } else {
            self.order_greedily(parts, ctx, &conj)?
        };
        // Every conjunct over two or more tables joined at the step that added the last of
        // them.
        for c in conj.iter_mut() {
            if c.leaves.is_some() {
                c.used = true;
            }
        }
        // Restore the written column order, then what could not move.
        let types = written_types(&b.leaves);
        let exprs = (0..b.width)
            .map(|g| Expr::Col(cur.pos[g].unwrap_or(0), types[g]))
            .collect::<Vec<_>>();
        let identity = cur.width == b.width && (0..b.width).all(|g| cur.pos[g] == Some(g));
        let mut plan = if identity {
            cur.plan
        } else {
            Plan::Project {
                input: Box::new(cur.plan),
                exprs,
                srf: None,
            }
        };
        let top = conj
            .into_iter()
            .filter(|c| !c.used)
            .map(|c| c.expr)
            .reduce(Expr::and);
        if let Some(pred) = top {
            plan = Plan::Filter {
                input: Box::new(plan),
                pred,
            };
        }
        Ok(plan)
    }

    /// The cheapest left-deep join order by dynamic programming over the sets of tables
    /// (System R's, as PostgreSQL's standard_join_search for up to geqo_threshold tables):
    /// the best plan for a set is the cheapest of the best plans for the set without one of
    /// its tables, joined to that table. Plans are ranked first by their cross joins (joins
    /// with no conjunct between their sides: they come only where no connected order exists),
    /// then by cost; of equal ones, the one that joins the later-written table last wins.
    fn order_by_dp(
        &self,
        parts: Vec<Part>,
        ctx: (&[Leaf], &[TableInfo]),
        conj: &[Conj],
    ) -> PgResult<Part> {
        let n = parts.len();
        let full = (1usize << n) - 1;
        let mut best: Vec<Option<(Score, Part)>> = (0..=full).map(|_| None).collect();
        for (i, p) in parts.iter().enumerate() {
            best[1 << i] = Some((Score(0, p.est.cost), p.clone()));
        }
        // A set's subsets are smaller numbers: they are done before it.
        for set in 1..=full {
            if set.count_ones() < 2 {
                continue;
            }
            let mut choice: Option<(Score, usize, Step)> = None;
            for (r, right) in parts.iter().enumerate().rev() {
                if set & (1 << r) == 0 {
                    continue;
                }
                let Some((Score(cross, cost), sub)) = &best[set & !(1 << r)] else {
                    continue;
                };
                let step = self.join_step(sub, right, r, ctx, conj);
                let score = Score(cross + u32::from(!step.connected), cost + step.cost);
                if choice.as_ref().is_none_or(|(c, ..)| score.better(c)) {
                    choice = Some((score, r, step));
                }
            }
            if let Some((score, r, step)) = choice {
                let sub = best[set & !(1 << r)]
                    .as_ref()
                    .map(|(_, p)| p.clone())
                    .ok_or_else(|| keel_common::PgError::internal("join order subset"))?;
                let part = self.apply_step(sub, parts[r].clone(), step, ctx.0, conj);
                best[set] = Some((score, part));
            }
        }
        best[full]
            .take()
            .map(|(_, p)| p)
            .ok_or_else(|| keel_common::PgError::internal("empty join block"))
    }

    /// Beyond `DP_MAX_TABLES`: start from the table with the fewest estimated rows, then add
    /// the table that is cheapest to join next (connected ones first).
    fn order_greedily(
        &self,
        parts: Vec<Part>,
        ctx: (&[Leaf], &[TableInfo]),
        conj: &[Conj],
    ) -> PgResult<Part> {
        let mut parts: Vec<Option<Part>> = parts.into_iter().map(Some).collect();
        let first = (0..parts.len())
            .min_by(|a, b| rows_of(&parts[*a]).total_cmp(&rows_of(&parts[*b])))
            .unwrap_or(0);
        let mut cur = parts[first]
            .take()
            .ok_or_else(|| keel_common::PgError::internal("empty join block"))?;
        while parts.iter().any(Option::is_some) {
            let mut best: Option<(Score, usize, Step)> = None;
            for (r, p) in parts.iter().enumerate() {
                let Some(p) = p else { continue };
                let step = self.join_step(&cur, p, r, ctx, conj);
                let score = Score(u32::from(!step.connected), step.cost);
                if best.as_ref().is_none_or(|(c, ..)| score.better(c)) {
                    best = Some((score, r, step));
                }
            }
            let Some((_, r, step)) = best else { break };
            let right = parts[r]
                .take()
                .ok_or_else(|| keel_common::PgError::internal("join part"))?;
            cur = self.apply_step(cur, right, step, ctx.0, conj);
        }
        Ok(cur)
    }

    /// How `right` (table `r`) would join `cur`.
    fn join_step(
        &self,
        cur: &Part,
        right: &Part,
        r: usize,
        (leaves, infos): (&[Leaf], &[TableInfo]),
        conj: &[Conj],
    ) -> Step {
        let covered: Vec<usize> = conj
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                !c.used
                    && c.leaves.as_ref().is_some_and(|ls| {
                        ls.contains(&r) && ls.iter().all(|l| *l == r || cur.leaves.contains(l))
                    })
            })
            .map(|(i, _)| i)
            .collect();
        let leaf = &leaves[r];
        // Equalities `right column = expression over cur`.
        let mut keys: Vec<(usize, Expr, Option<usize>)> = Vec::new();
        // The conjunct each key came from.
        let mut key_conj: Vec<usize> = Vec::new();
        for &i in &covered {
            if let Expr::Bin {
                op: "=", l, r: rr, ..
            } = &conj[i].expr
            {
                for (a, b) in [(l, rr), (rr, l)] {
                    if let Expr::Col(c, t) = a.as_ref()
                        && (leaf.offset..leaf.offset + leaf.width()).contains(c)
                        && b.ty() == *t
                        && let Some(cols) = columns(b)
                        && !cols.is_empty()
                        && cols.iter().all(|g| cur.pos[*g].is_some())
                    {
                        let partner = match b.as_ref() {
                            Expr::Col(g, _) => Some(*g),
                            _ => None,
                        };
                        keys.push((
                            *c - leaf.offset,
                            remap((**b).clone(), &|g| cur.pos[g].unwrap_or(0)),
                            partner,
                        ));
                        key_conj.push(i);
                    }
                }
            }
        }
        let connected = !covered.is_empty();
        let right_sel = right.est.rows / infos[r].rows.max(1.0);
        // Index nested loop: an index whose leading columns all have keys.
        let mut nl: Option<(f64, Access, f64, Vec<usize>)> = None;
        let indexes = (self.catalog.indexes_of(leaf.table.oid))
            .filter(|_| leaf.table.partition_key().is_none());
        for idx in indexes {
            let mut eq = Vec::new();
            let mut partners = Vec::new();
            let mut used = Vec::new();
            for col in &idx.columns {
                match keys.iter().position(|k| k.0 == *col) {
                    Some(at) => {
                        let k = &keys[at];
                        eq.push(k.1.clone());
                        partners.push(k.2);
                        used.push(key_conj[at]);
                    }
                    None => break,
                }
            }
            if eq.is_empty() {
                continue;
            }
            let unique = idx.unique && eq.len() == idx.columns.len();
            let table_rows = infos[r].rows;
            let per_probe = if unique {
                1.0
            } else {
                // Distinct values of the leading key: from the statistics; without them, as
                // many as the partner table's rows when the partner column is that table's
                // unique key (a foreign key), else the default.
                let (nd, guessed) = distinct(self.catalog, &infos[r], &leaf.table, idx.columns[0]);
                let nd = if guessed {
                    partners
                        .first()
                        .copied()
                        .flatten()
                        .and_then(|g| self.unique_partner_rows(leaves, infos, g))
                        .unwrap_or(nd)
                } else {
                    nd
                };
                (table_rows / nd.max(1.0)).max(1.0)
            };
            let cost = cur.est.rows
                * (crate::cost::RANDOM_PAGE_COST + per_probe * (1.0 + crate::cost::CPU_TUPLE_COST));
            let rows = cur.est.rows * per_probe * right_sel.min(1.0);
            if nl.as_ref().is_none_or(|(c, ..)| cost < *c) {
                nl = Some((
                    cost,
                    Access::Index {
                        index: idx.clone(),
                        eq,
                        lower: None,
                        upper: None,
                        bitmap: false,
                        index_only: false,
                        backward: false,
                        not_null: false,
                    },
                    rows,
                    used,
                ));
            }
        }
        // Hash join (or nested loop without keys): both inputs run once.
        let hash_rows = if keys.is_empty() {
            cur.est.rows * right.est.rows
        } else if let Some(sel) = self.join_sel(&keys, r, leaves, infos) {
            (cur.est.rows * right.est.rows * sel).max(1.0)
        } else {
            (cur.est.rows * right.est.rows * eq_sel()).max(cur.est.rows.min(right.est.rows))
        };
        let hash_cost = right.est.cost
            + (cur.est.rows + right.est.rows) * crate::cost::CPU_OPERATOR_COST * 2.0
            + if keys.is_empty() {
                cur.est.rows * right.est.rows * crate::cost::CPU_OPERATOR_COST
            } else {
                0.0
            };
        match nl {
            Some((cost, access, rows, used)) if cost < hash_cost => Step {
                covered,
                cost,
                rows,
                connected,
                index: Some((access, used)),
            },
            _ => Step {
                covered,
                cost: hash_cost,
                rows: hash_rows,
                connected,
                index: None,
            },
        }
    }

    /// Selectivity of the join keys `right column = column of another table` when both
    /// columns' distinct counts are known (statistics or a unique key): `1 / max(nd1, nd2)`
    /// per key, as PostgreSQL's `eqjoin_sel` without MCVs. None when a key is an expression
    /// or a count is only the default guess.
    fn join_sel(
        &self,
        keys: &[(usize, Expr, Option<usize>)],
        r: usize,
        leaves: &[Leaf],
        infos: &[TableInfo],
    ) -> Option<f64> {
        let mut sel = 1.0;
        for (col, _, partner) in keys {
            let g = (*partner)?;
            let at = leaves.iter().rposition(|l| l.offset <= g)?;
            let (nd_r, guess_r) = distinct(self.catalog, &infos[r], &leaves[r].table, *col);
            let (nd_p, guess_p) = distinct(
                self.catalog,
                &infos[at],
                &leaves[at].table,
                g - leaves[at].offset,
            );
            if guess_r || guess_p {
                return None;
            }
            sel *= 1.0 / nd_r.max(nd_p).max(1.0);
        }
        Some(sel)
    }

    /// Rows of the table whose column `g` (written layout) is its sole unique key.
    fn unique_partner_rows(&self, leaves: &[Leaf], infos: &[TableInfo], g: usize) -> Option<f64> {
        let at = leaves.iter().rposition(|l| l.offset <= g)?;
        let l = &leaves[at];
        let col = g - l.offset;
        self.catalog
            .indexes_of(l.table.oid)
            .any(|i| i.unique && i.columns == [col])
            .then(|| infos[at].rows)
    }

    fn apply_step(
        &self,
        cur: Part,
        right: Part,
        step: Step,
        leaves: &[Leaf],
        conj: &[Conj],
    ) -> Part {
        let on_parts = step.covered.clone();
        let r = right.leaves[0];
        let mut leaves_held = cur.leaves.clone();
        leaves_held.push(r);
        let est = Estimate {
            rows: step.rows.max(1.0),
            cost: cur.est.cost + step.cost,
        };
        match step.index {
            Some((access, in_range)) => {
                // Outer rows first, then the probed table's columns.
                let mut pos = cur.pos.clone();
                let leaf = &leaves[r];
                for k in 0..leaf.width() {
                    pos[leaf.offset + k] = Some(cur.width + k);
                }
                let join_filter = on_parts
                    .iter()
                    .filter(|i| !in_range.contains(i))
                    .map(|&i| remap(conj[i].expr.clone(), &|g| pos[g].unwrap_or(0)))
                    .reduce(Expr::and);
                let Plan::Scan {
                    table,
                    alias,
                    filter,
                    ..
                } = right.plan
                else {
                    unreachable!("an index nested loop probes a base table")
                };
                Part {
                    plan: Plan::IndexNestLoop {
                        outer: Box::new(cur.plan),
                        table,
                        alias,
                        access,
                        inner_filter: filter,
                        join_filter,
                        outer_width: cur.width,
                        left_join: false,
                        inner_columns: None,
                    },
                    est,
                    leaves: leaves_held,
                    pos,
                    width: cur.width + leaf.width(),
                }
            }
            None => {
                // Build the hash table on the narrower side (the executor builds on the right).
                // Without equality keys it is a nested loop: the outer side is the one whose
                // rows times the inner side's cost is lower, as PostgreSQL prices a rescanned
                // inner side. Keel's nested loop holds its inner side in memory (read once,
                // scanned per outer row), so a big inner side is taken only when it is the
                // smaller one: holding the larger could exhaust the statement's memory where
                // the smaller would not (a cross join of a join result with a table).
                let keyed = on_parts.iter().any(|&i| {
                    let mut parts = Vec::new();
                    crate::access::conjuncts(conj[i].expr.clone(), &mut parts);
                    parts.iter().any(|p| joins_parts(p, &cur.pos, &right.pos))
                });
                let smaller_inner = right.est.rows <= cur.est.rows;
                let cur_outer = if keyed {
                    // Each joined row copies its build-side row, and the build side is held
                    // whole: build on the side with fewer values (rows times columns).
                    right.est.rows * right.width as f64 <= cur.est.rows * cur.width as f64
                } else {
                    let by_cost = cur.est.cost + cur.est.rows * right.est.cost
                        <= right.est.cost + right.est.rows * cur.est.cost;
                    let (inner, outer) = if by_cost {
                        (right.est.rows, cur.est.rows)
                    } else {
                        (cur.est.rows, right.est.rows)
                    };
                    if inner > outer && inner > BIG_INNER_ROWS {
                        smaller_inner
                    } else {
                        by_cost
                    }
                };
                let (l, rt) = if cur_outer {
                    (cur, right)
                } else {
                    (right, cur)
                };
                let mut pos = l.pos.clone();
                for (g, p) in rt.pos.iter().enumerate() {
                    if let Some(p) = p {
                        pos[g] = Some(l.width + p);
                    }
                }
                let on = on_parts
                    .iter()
                    .map(|&i| remap(conj[i].expr.clone(), &|g| pos[g].unwrap_or(0)))
                    .reduce(Expr::and);
                let hash = on.as_ref().and_then(|on| equi_keys(on, l.width));
                let width = l.width + rt.width;
                Part {
                    plan: Plan::Join {
                        left: Box::new(l.plan),
                        right: Box::new(rt.plan),
                        on,
                        left_join: false,
                        right_join: false,
                        left_width: l.width,
                        right_width: rt.width,
                        hash,
                        rows: Some(est.rows),
                    },
                    est,
                    leaves: leaves_held,
                    pos,
                    width,
                }
            }
        }
    }
}

struct Step {
    covered: Vec<usize>,
    cost: f64,
    rows: f64,
    connected: bool,
    /// Some = index nested loop with this access on the new table, and the conjuncts its
    /// keys came from: the probe's range holds exactly the rows that pass them (keys encode
    /// equal exactly when `=` holds, and the access layer drops stale entries), so the join
    /// filter leaves them out.
    index: Option<(Access, Vec<usize>)>,
}

/// Rows above which a nested loop's inner side (held in memory) must be the smaller side.
const BIG_INNER_ROWS: f64 = 10_000.0;

/// Tables up to which join orders are searched exhaustively (PostgreSQL's geqo_threshold is
/// 12; keel's search is left-deep, so 2^n * n steps).
const DP_MAX_TABLES: usize = 10;

/// A join order's (or a greedy step's) rank: its cross joins, then its cost.
#[derive(Clone, Copy)]
struct Score(u32, f64);

impl Score {
    /// Fewer cross joins, or as many and a cost lower by more than rounding.
    fn better(&self, other: &Score) -> bool {
        if self.0 != other.0 {
            return self.0 < other.0;
        }
        let tolerance = 1e-9 * self.1.abs().max(other.1.abs()).max(1.0);
        self.1 < other.1 - tolerance
    }
}

/// Whether `e` is an equality of an expression over one part's columns (`a`) with one over
/// the other's (`b`): a hash join key.
fn joins_parts(e: &Expr, a: &[Option<usize>], b: &[Option<usize>]) -> bool {
    let Expr::Bin { op: "=", l, r, .. } = e else {
        return false;
    };
    let within = |e: &Expr, pos: &[Option<usize>]| {
        columns(e).is_some_and(|cs| !cs.is_empty() && cs.iter().all(|c| pos[*c].is_some()))
    };
    (within(l, a) && within(r, b)) || (within(l, b) && within(r, a))
}

fn rows_of(p: &Option<Part>) -> f64 {
    p.as_ref().map_or(f64::INFINITY, |p| p.est.rows)
}

fn written_types(leaves: &[Leaf]) -> Vec<TypeId> {
    leaves
        .iter()
        .flat_map(|l| l.table.columns.iter().map(|c| c.ty.id))
        .collect()
}
