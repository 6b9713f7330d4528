//! The planner: a query tree (keel-analyzer) to a plan (how it runs).
//!
//! It chooses each table's access path from the WHERE conjuncts that reference it, the join
//! method from the join clause (hash join on equality keys, else a nested loop), and plans the
//! subqueries in expressions into the statement's subplan list. See README.md for what it
//! decides today and what is still taken as written.

mod access;
mod compile;
mod cost;
mod equiv;
pub mod explain;
mod groupkeys;
mod indexonly;
mod joins;
mod minmax;
mod outer;
mod outer_nestloop;
pub mod partition;
mod paths;
pub mod plan;
mod pullup;
mod scanrun;
mod semijoin;
pub mod touches;

pub use access::equi_keys;
pub use keel_stats::TableStats;
pub use semijoin::hashed_subplan;

use keel_analyzer::expr::Expr;
use keel_analyzer::query::{ModifyQuery, Query, Rel, SortKey};
use keel_catalog::{Catalog, TableDef};
use keel_common::{PgError, PgResult};
use plan::{Access, ModifyKind, ModifyPlan, Plan, QueryPlan};

/// What the planner asks of the storage: relation sizes (statistics will join them).
pub trait RelSizes {
    /// Bytes on disk of the table's heap.
    fn relation_bytes(&self, table: &TableDef) -> u64;
    /// The table's statistics from its last ANALYZE.
    fn table_stats(&self, _table: &TableDef) -> Option<std::sync::Arc<keel_stats::TableStats>> {
        None
    }
    /// A count that changes whenever any table's statistics change (a plan made under
    /// another count is made again).
    fn stats_generation(&self) -> u64 {
        0
    }
    /// Bytes on disk of an index.
    fn index_bytes(&self, _index: &keel_catalog::IndexDef) -> u64 {
        0
    }
    /// Heap pages whose rows every snapshot sees (the visibility map; PostgreSQL's
    /// `relallvisible`): what an index-only scan need not read.
    fn pages_all_visible(&self, _table: &TableDef) -> u64 {
        0
    }
}

/// Sizes for planning without storage (tests, catalogs being built): every table is small.
pub struct NoSizes;

impl RelSizes for NoSizes {
    fn relation_bytes(&self, _: &TableDef) -> u64 {
        0
    }
}

/// Plans a query.
pub fn plan_query(catalog: &Catalog, sizes: &dyn RelSizes, q: &Query) -> PgResult<QueryPlan> {
    let mut p = Planner::new(catalog, sizes);
    p.next_subplan = Some(q.subplan_ids);
    p.lock_rows_allowed = true;
    let mut root = p.rel(&q.root)?;
    p.finish()?;
    partition::expand(catalog, sizes, &mut root)?;
    for sp in p.subplans.iter_mut().flatten() {
        partition::expand(catalog, sizes, sp)?;
    }
    indexonly::apply(catalog, sizes, &mut root, &mut p.subplans);
    compile::query(&mut root, &mut p.subplans);
    Ok(QueryPlan {
        root,
        columns: q.columns.clone(),
        subplans: p.subplans.into(),
        non_table_rtes: q.non_table_rtes,
    })
}

/// Plans an INSERT, UPDATE or DELETE.
pub fn plan_modify(
    catalog: &Catalog,
    sizes: &dyn RelSizes,
    m: &ModifyQuery,
) -> PgResult<ModifyPlan> {
    let mut p = Planner::new(catalog, sizes);
    let kind = match &m.kind {
        keel_analyzer::query::ModifyKind::Insert { source, row } => {
            p.exprs(row);
            ModifyKind::Insert {
                source: p.rel(source)?,
                row: row.clone(),
            }
        }
        keel_analyzer::query::ModifyKind::Update { filter, set } => {
            p.exprs(filter);
            p.exprs(set.iter().map(|s| &s.1));
            let (access, filter) = p.table_access(&m.table, filter.clone());
            ModifyKind::Update {
                access,
                filter,
                set: set.clone(),
            }
        }
        keel_analyzer::query::ModifyKind::Delete { filter } => {
            p.exprs(filter);
            let (access, filter) = p.table_access(&m.table, filter.clone());
            ModifyKind::Delete { access, filter }
        }
    };
    if let Some((r, _)) = &m.returning {
        p.exprs(r);
    }
    let instead_of = match &m.instead_of {
        Some(i) => Some(Box::new(plan::InsteadOfPlan {
            rows: i.rows.as_ref().map(|r| p.rel(r)).transpose()?,
        })),
        None => None,
    };
    p.exprs(m.checks.iter().map(|c| &c.1));
    if let Some(u) = m.on_conflict.as_ref().and_then(|oc| oc.update.as_ref()) {
        p.exprs(u.set.iter().map(|s| &s.1));
        p.exprs(&u.filter);
    }
    p.finish()?;
    let mut kind = kind;
    let mut none = Plan::Values { rows: Vec::new() };
    let source = match &mut kind {
        ModifyKind::Insert { source, .. } => source,
        _ => &mut none,
    };
    partition::expand(catalog, sizes, source)?;
    for sp in p.subplans.iter_mut().flatten() {
        partition::expand(catalog, sizes, sp)?;
    }
    indexonly::apply(catalog, sizes, source, &mut p.subplans);
    let partitioned = m.table.partition_key().is_some();
    // UPDATE / DELETE of a partitioned table find their rows in its partitions' scans,
    // pruned as a query's are.
    let targets = match &kind {
        ModifyKind::Update { filter, .. } | ModifyKind::Delete { filter, .. } if partitioned => {
            let mut scan = Plan::Scan {
                table: m.table.clone(),
                alias: None,
                access: plan::Access::Seq,
                filter: filter.clone(),
                run: plan::ScanRun {
                    row_ids: true,
                    ..Default::default()
                },
            };
            partition::expand(catalog, sizes, &mut scan)?;
            indexonly::apply(catalog, sizes, &mut scan, &mut []);
            Some(Box::new(scan))
        }
        _ => None,
    };
    // Rows an INSERT or UPDATE writes through a partitioned table are routed (an UPDATE's
    // new row may belong in another partition).
    let routing = match &kind {
        ModifyKind::Insert { .. } | ModifyKind::Update { .. } if partitioned => {
            Some(std::sync::Arc::new(partition::routing(
                catalog,
                &m.table,
                m.on_conflict.as_deref(),
            )?))
        }
        _ => None,
    };
    let partition_check = match &kind {
        ModifyKind::Insert { .. } | ModifyKind::Update { .. } => {
            partition::partition_check(catalog, &m.table)?.map(std::sync::Arc::new)
        }
        ModifyKind::Delete { .. } => None,
    };
    let mut plan = ModifyPlan {
        table: m.table.clone(),
        types: m.types.clone(),
        kind,
        returning: m.returning.clone(),
        fks: m.fks.clone(),
        refs: m.refs.clone(),
        checks: m.checks.clone(),
        subplans: Vec::new().into(),
        instead_of,
        on_conflict: m.on_conflict.clone(),
        routing,
        targets,
        partition_check,
    };
    compile::modify(&mut plan, &mut p.subplans);
    plan.subplans = p.subplans.into();
    Ok(plan)
}

struct Planner<'a> {
    catalog: &'a Catalog,
    sizes: &'a dyn RelSizes,
    subplans: Vec<Option<Plan>>,
    /// The first error met while planning a subquery (the expression walk cannot return it).
    failed: Option<PgError>,
    /// At most this many rows of the relation being planned will be read (a LIMIT above,
    /// through nodes that pass rows one for one): a path that returns its first rows cheaply
    /// may then win over one that is cheaper in total.
    goal: Option<f64>,
    /// The id the next subquery the planner makes gets (min/max through an index); None
    /// when the statement's ids are not known (then it makes none).
    next_subplan: Option<u32>,
    /// A `LockRows` may be planned: the statement is a query (whose rows the session pulls
    /// and can suspend for a row lock), not a write's source.
    lock_rows_allowed: bool,
}

impl<'a> Planner<'a> {
    fn new(catalog: &'a Catalog, sizes: &'a dyn RelSizes) -> Self {
        Planner {
            catalog,
            sizes,
            subplans: Vec::new(),
            failed: None,
            goal: None,
            lock_rows_allowed: false,
            next_subplan: None,
        }
    }

    /// Plans the subqueries in `exprs` (each id once).
    fn exprs<'e>(&mut self, exprs: impl IntoIterator<Item = &'e Expr>) {
        for e in exprs {
            e.for_each_subplan(&mut |sp| {
                let id = sp.id as usize;
                if self.subplans.get(id).is_some_and(Option::is_some) {
                    return;
                }
                if self.failed.is_some() {
                    return;
                }
                match self.rel(&sp.query) {
                    Ok(plan) => {
                        if self.subplans.len() <= id {
                            self.subplans.resize(id + 1, None);
                        }
                        self.subplans[id] = Some(plan);
                    }
                    Err(e) => self.failed = Some(e),
                }
            });
        }
    }

    fn finish(&mut self) -> PgResult<()> {
        self.failed.take().map_or(Ok(()), Err)
    }

    fn table_access(
        &self,
        table: &std::sync::Arc<TableDef>,
        filter: Option<Expr>,
    ) -> (Access, Option<Expr>) {
        match filter {
            None => (Access::Seq, None),
            Some(pred) => {
                let best = paths::cheapest(self.catalog, self.sizes, table, Some(&pred));
                (best.access, Some(pred))
            }
        }
    }

    /// A WHERE whose conjuncts include correlated EXISTS / NOT EXISTS that can run as semi- or
    /// anti-joins: the other conjuncts filter `input` first, then each join applies.
    fn with_semi_joins(&mut self, input: &Rel, pred: &Expr) -> PgResult<Option<Plan>> {
        let mut parts = Vec::new();
        access::conjuncts(pred.clone(), &mut parts);
        let (mut semis, mut rest) = (Vec::new(), Vec::new());
        for p in parts {
            match semijoin::semi_join(&p) {
                Some(s) => semis.push(s),
                None => rest.push(p),
            }
        }
        if semis.is_empty() {
            return Ok(None);
        }
        let mut plan = match rest.into_iter().reduce(Expr::and) {
            Some(pred) => self.rel(&Rel::Filter {
                input: Box::new(input.clone()),
                pred,
            })?,
            None => self.rel(input)?,
        };
        for s in semis {
            self.exprs(&s.outer_keys);
            plan = Plan::SemiJoin {
                input: Box::new(plan),
                inner: Box::new(self.rel(&s.inner)?),
                outer_keys: s.outer_keys,
                inner_keys: s.inner_keys,
                anti: s.anti,
            };
        }
        Ok(Some(plan))
    }

    /// A sort of one table's rows that an index read in key order can give instead, when
    /// that is cheaper (with the row goal of a LIMIT above it, it usually is).
    fn sorted_scan(&mut self, input: &Rel, keys: &[SortKey], goal: Option<f64>) -> Option<Plan> {
        let (table, alias, pred) = match input {
            Rel::Scan { table, alias } => (table, alias, None),
            Rel::Filter { input, pred } => match input.as_ref() {
                Rel::Scan { table, alias } => {
                    let mut parts = Vec::new();
                    access::conjuncts(pred.clone(), &mut parts);
                    if parts.iter().any(|p| semijoin::semi_join(p).is_some()) {
                        return None;
                    }
                    (table, alias, Some(pred))
                }
                _ => return None,
            },
            _ => return None,
        };
        let (path, sort) =
            paths::cheapest_sorted(self.catalog, self.sizes, table, (pred, None), keys, goal);
        if sort {
            return None;
        }
        if let Some(p) = pred {
            self.exprs([p]);
        }
        Some(Plan::Scan {
            table: table.clone(),
            alias: alias.clone(),
            access: path.access,
            filter: pred.cloned(),
            run: Default::default(),
        })
    }

    fn rel(&mut self, r: &Rel) -> PgResult<Plan> {
        keel_common::stack::check()?;
        // The row goal applies to this node only; the arms below pass it on where rows go
        // through one for one.
        let goal = self.goal.take();
        if let Some(pulled) = pullup::pull_filter(r) {
            self.goal = goal;
            return self.rel(&pulled);
        }
        if let Rel::Filter { input, pred } = r
            && let Some(joined) = semijoin::unique_in_as_join(self.catalog, input, pred)
        {
            return self.rel(&joined);
        }
        if let Rel::Filter { input, pred } = r
            && let Some(plan) = self.with_semi_joins(input, pred)?
        {
            return Ok(plan);
        }
        if let Some(plan) = self.plan_outer(r)? {
            return Ok(plan);
        }
        if let Some(block) = joins::flatten(r) {
            return self.plan_block(block);
        }
        Ok(match r {
            Rel::Scan { table, alias } => Plan::Scan {
                table: table.clone(),
                alias: alias.clone(),
                access: Access::Seq,
                filter: None,
                run: Default::default(),
            },
            Rel::Filter { input, pred } => {
                self.exprs([pred]);
                match input.as_ref() {
                    Rel::Scan { table, alias } => {
                        let (access, filter) = self.table_access(table, Some(pred.clone()));
                        Plan::Scan {
                            table: table.clone(),
                            alias: alias.clone(),
                            access,
                            filter,
                            run: Default::default(),
                        }
                    }
                    input => Plan::Filter {
                        input: Box::new(self.rel(input)?),
                        pred: pred.clone(),
                    },
                }
            }
            Rel::Values { rows } => {
                self.exprs(rows.iter().flatten());
                Plan::Values { rows: rows.clone() }
            }
            Rel::SystemView(v) => Plan::SystemView(*v),
            Rel::NamedRows { name, table, alias } => Plan::NamedRows {
                name: name.clone(),
                table: table.clone(),
                alias: alias.clone(),
            },
            Rel::Function { funcs, ordinality } => {
                self.exprs(funcs.iter().flat_map(|f| &f.args));
                Plan::Function {
                    funcs: funcs.clone(),
                    ordinality: *ordinality,
                }
            }
            Rel::Project { input, exprs, srf } => {
                self.exprs(exprs);
                if let Some(set) = srf {
                    self.exprs(set.funcs.iter().flat_map(|f| &f.args));
                }
                if srf.is_none() {
                    self.goal = goal;
                }
                Plan::Project {
                    input: Box::new(self.rel(input)?),
                    exprs: exprs.clone(),
                    srf: srf.clone(),
                }
            }
            Rel::Join {
                left,
                right,
                on,
                left_join,
                right_join,
                left_width,
                right_width,
            } => {
                self.exprs(on);
                Plan::Join {
                    left: Box::new(self.rel(left)?),
                    right: Box::new(self.rel(right)?),
                    on: on.clone(),
                    left_join: *left_join,
                    right_join: *right_join,
                    left_width: *left_width,
                    right_width: *right_width,
                    hash: on.as_ref().and_then(|on| equi_keys(on, *left_width)),
                    rows: None,
                }
            }
            Rel::Agg { input, group, aggs }
                if group.is_empty()
                    && let Some(plan) = self.min_max_by_index(input, aggs)? =>
            {
                plan
            }
            Rel::Agg { input, group, aggs } => {
                self.exprs(group);
                for a in aggs {
                    self.exprs(a.args.iter().chain(&a.filter));
                    self.exprs(a.order.iter().map(|k| &k.expr));
                }
                Plan::Agg {
                    input: Box::new(self.rel(input)?),
                    group: group.clone(),
                    aggs: aggs.clone(),
                    dependent: groupkeys::dependent(self.catalog, input, group),
                }
            }
            Rel::Sort { input, keys } => {
                self.exprs(keys.iter().map(|k| &k.expr));
                if let Some(scan) = self.sorted_scan(input, keys, goal) {
                    return Ok(scan);
                }
                Plan::Sort {
                    input: Box::new(self.rel(input)?),
                    keys: keys.clone(),
                }
            }
            Rel::LockRows {
                input,
                table,
                recheck,
                strength,
                wait,
            } => {
                if !self.lock_rows_allowed {
                    return Err(PgError::unsupported(format!(
                        "{} in a query that feeds a write",
                        strength.clause()
                    )));
                }
                self.exprs(recheck);
                // A LIMIT's row goal holds through it as in PostgreSQL (the executor still
                // passes no bound down: locked rows may be skipped).
                self.goal = goal;
                let mut input = self.rel(input)?;
                mark_row_ids(&mut input);
                Plan::LockRows {
                    input: Box::new(input),
                    table: table.clone(),
                    recheck: recheck.clone(),
                    strength: *strength,
                    wait: *wait,
                }
            }
            Rel::Limit {
                input,
                limit,
                offset,
            } => {
                self.exprs(limit.iter().chain(offset));
                let count = |e: &Option<Expr>| match e {
                    None => Some(0.0),
                    Some(Expr::Const(keel_types::Datum::Int8(n), _)) if *n >= 0 => Some(*n as f64),
                    _ => None,
                };
                if limit.is_some()
                    && let (Some(l), Some(o)) = (count(limit), count(offset))
                {
                    self.goal = Some(l + o);
                }
                Plan::Limit {
                    input: Box::new(self.rel(input)?),
                    limit: limit.clone(),
                    offset: offset.clone(),
                }
            }
            Rel::Distinct { input, types, on } => {
                self.exprs(on);
                Plan::Distinct {
                    input: Box::new(self.rel(input)?),
                    types: types.clone(),
                    on: on.clone(),
                }
            }
            Rel::SetOp {
                left,
                right,
                kind,
                all,
                types,
            } => Plan::SetOp {
                left: Box::new(self.rel(left)?),
                right: Box::new(self.rel(right)?),
                kind: *kind,
                all: *all,
                types: types.clone(),
            },
        })
    }
}

/// Makes the one-table scan under a `LockRows` (below its sorts and filters) carry row
/// identities.
fn mark_row_ids(p: &mut Plan) {
    match p {
        Plan::Scan { run, .. } => run.row_ids = true,
        Plan::Append { children, .. } => children.iter_mut().for_each(mark_row_ids),
        Plan::Sort { input, .. } | Plan::Filter { input, .. } => mark_row_ids(input),
        _ => {}
    }
}
