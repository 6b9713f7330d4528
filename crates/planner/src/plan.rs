//! Plan trees: how a statement runs. A plan is built once per statement (once per Parse for
//! prepared statements) and executed many times; it is plain data, and expressions inside are
//! fully bound. Subqueries in expressions run the statement's subplan of the same id.

use keel_analyzer::expr::Expr;
pub use keel_analyzer::query::{
    AggCall, FkCheck, OutColumn, RefCheck, SetOpKind, SortKey, SystemView,
};
use keel_analyzer::srf::{ProjectSet, TableFunc};
use keel_catalog::{IndexDef, TableDef};
use keel_types::TypeId;
use std::sync::Arc;

/// Access path to one table's rows. One per scan node, built once per plan: the size of
/// the `Index` variant costs nothing worth an indirection on every bound.
#[derive(Clone)]
#[allow(clippy::large_enum_variant)]
pub enum Access {
    Seq,
    /// Equality on the first `eq.len()` index columns, then optional bounds on the next one.
    Index {
        index: Arc<IndexDef>,
        eq: Vec<Expr>,
        lower: Option<(Expr, bool)>,
        upper: Option<(Expr, bool)>,
        /// A bitmap scan: the index gives every matching row root at once, and the heap is
        /// read in physical order (no index order; each page once).
        bitmap: bool,
        /// An index-only scan (not with `bitmap`): rows come from the index entries where
        /// the visibility map allows, holding only the index's key columns; nothing above
        /// reads another column of the table.
        index_only: bool,
        /// Read in descending key order (not with `bitmap`).
        backward: bool,
        /// Without bounds on it, the column after the `eq` ones `IS NOT NULL` (a B-tree
        /// range: every key before NULL's).
        not_null: bool,
    },
}

/// How the executor runs a scan, settled once the whole plan is known (the column pass,
/// `indexonly.rs`). The default reads every column and checks the whole filter.
#[derive(Clone, Default)]
pub struct ScanRun {
    /// The columns any node above (or the filter) reads, by table column (None: all). The
    /// others come back NULL and are never decoded.
    pub columns: Option<Arc<[bool]>>,
    /// What the executor checks on each row the access returns.
    pub recheck: Recheck,
    /// Each row carries its identity after the table's columns: root and version tids as
    /// two int8 values and the table's oid (for a `LockRows` above, or the UPDATE or
    /// DELETE of a partitioned table, whose rows come from several partitions).
    pub row_ids: bool,
}

#[derive(Clone, Default)]
pub enum Recheck {
    /// The whole `filter`.
    #[default]
    Filter,
    /// Only this part of it (None: nothing): the B-tree range gives exactly the rows that
    /// pass the rest (the access layer drops entries whose key no longer matches the version
    /// it returns, and the index conditions' types compare as their keys do).
    Residual(Option<Expr>),
}

impl ScanRun {
    /// The condition the executor checks, given the scan's `filter`.
    pub fn check<'a>(&'a self, filter: Option<&'a Expr>) -> Option<&'a Expr> {
        match &self.recheck {
            Recheck::Filter => filter,
            Recheck::Residual(r) => r.as_ref(),
        }
    }
}

#[derive(Clone)]
pub enum Plan {
    Scan {
        table: Arc<TableDef>,
        /// The name the statement gave the table in FROM, if any (EXPLAIN prints it).
        alias: Option<String>,
        access: Access,
        filter: Option<Expr>,
        run: ScanRun,
    },
    /// Rows of expressions without input (VALUES, or a FROM-less SELECT's single empty row).
    Values {
        rows: Vec<Vec<Expr>>,
    },
    /// Set-returning functions in FROM (see `Rel::Function`).
    Function {
        funcs: Vec<TableFunc>,
        ordinality: bool,
    },
    /// A system view's rows, made when the node first runs.
    SystemView(SystemView),
    /// A transition table's rows (see `Rel::NamedRows`).
    NamedRows {
        name: String,
        table: Arc<TableDef>,
        alias: Option<String>,
    },
    Filter {
        input: Box<Plan>,
        pred: Expr,
    },
    /// Projection; `srf` = the select list's set-returning calls, when it has any.
    Project {
        input: Box<Plan>,
        exprs: Vec<Expr>,
        srf: Option<ProjectSet>,
    },
    Join {
        left: Box<Plan>,
        right: Box<Plan>,
        on: Option<Expr>,
        /// Left rows without a match are kept (LEFT/FULL), NULL-extended.
        left_join: bool,
        /// Right rows without a match are kept (RIGHT/FULL), NULL-extended on the left.
        right_join: bool,
        left_width: usize,
        right_width: usize,
        hash: Option<(Vec<Expr>, Vec<Expr>)>,
        /// The planner's estimate of the rows out, when it made one (EXPLAIN prints it, and
        /// sizes a Hash node above it by it).
        rows: Option<f64>,
    },
    /// Join by index: for each `outer` row, `table` is probed through `access` (an
    /// index access whose key expressions are over the outer row); probed rows that pass
    /// `inner_filter` (over the table's row) and `join_filter` (over the outer row followed by
    /// the table's row) are emitted as that concatenation.
    IndexNestLoop {
        outer: Box<Plan>,
        table: Arc<TableDef>,
        /// As `Scan::alias`.
        alias: Option<String>,
        access: Access,
        inner_filter: Option<Expr>,
        join_filter: Option<Expr>,
        outer_width: usize,
        /// LEFT JOIN: an outer row no probed row joins is emitted once, NULL-extended.
        left_join: bool,
        /// The probed table's columns anything reads (as `ScanRun::columns`).
        inner_columns: Option<Arc<[bool]>>,
    },
    /// `WHERE [NOT] EXISTS (correlated subquery)` as a hash semi-join (`anti`: anti-join):
    /// `input` rows pass when their `outer_keys` are (are not) among `inner`'s `inner_keys`.
    SemiJoin {
        input: Box<Plan>,
        inner: Box<Plan>,
        outer_keys: Vec<Expr>,
        inner_keys: Vec<Expr>,
        anti: bool,
    },
    Agg {
        input: Box<Plan>,
        group: Vec<Expr>,
        aggs: Vec<AggCall>,
        /// Per `group` expression (or empty: none): decided by a grouped primary key, so
        /// carried from each group's first row rather than hashed (`groupkeys.rs`).
        dependent: Vec<bool>,
    },
    Sort {
        input: Box<Plan>,
        keys: Vec<SortKey>,
    },
    /// Locks each row of `input` (one table's rows, with their identities: the scan below
    /// has `row_ids`) and passes it on without them (see `Rel::LockRows`).
    LockRows {
        input: Box<Plan>,
        table: Arc<TableDef>,
        recheck: Option<Expr>,
        strength: keel_analyzer::query::LockStrength,
        wait: keel_analyzer::query::LockWait,
    },
    Limit {
        input: Box<Plan>,
        limit: Option<Expr>,
        offset: Option<Expr>,
    },
    /// SELECT DISTINCT (whole rows, `on` empty) or DISTINCT ON (`on` keys, typed `types`).
    Distinct {
        input: Box<Plan>,
        types: Vec<TypeId>,
        on: Vec<Expr>,
    },
    /// `left UNION/INTERSECT/EXCEPT [ALL] right`; both sides already have `types`.
    SetOp {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: SetOpKind,
        all: bool,
        types: Vec<TypeId>,
    },
    /// The rows of a partitioned table (PostgreSQL's Append over its partitions): each
    /// child (a partition's scan, or a sub-partitioned partition's Append) in turn. The
    /// partitions pruned while planning have no child; `prune` removes more when the
    /// statement starts, from parameters.
    Append {
        table: Arc<TableDef>,
        alias: Option<String>,
        children: Vec<Plan>,
        prune: Option<Arc<RunPrune>>,
    },
}

impl Plan {
    /// Calls `f` on each direct input of this node.
    pub fn for_each_child_mut(&mut self, f: &mut dyn FnMut(&mut Plan)) {
        match self {
            Plan::Scan { .. }
            | Plan::Values { .. }
            | Plan::Function { .. }
            | Plan::SystemView(_)
            | Plan::NamedRows { .. } => {}
            Plan::Filter { input, .. }
            | Plan::Project { input, .. }
            | Plan::Agg { input, .. }
            | Plan::Sort { input, .. }
            | Plan::LockRows { input, .. }
            | Plan::Limit { input, .. }
            | Plan::Distinct { input, .. } => f(input),
            Plan::IndexNestLoop { outer, .. } => f(outer),
            Plan::Join { left, right, .. } | Plan::SetOp { left, right, .. } => {
                f(left);
                f(right);
            }
            Plan::SemiJoin { input, inner, .. } => {
                f(input);
                f(inner);
            }
            Plan::Append { children, .. } => children.iter_mut().for_each(f),
        }
    }
}

/// Pruning at execution: `conds` hold parameters (or other values fixed for the
/// statement); evaluated once it starts, they select the partitions of `desc` that may
/// hold rows, and only their children run.
pub struct RunPrune {
    pub desc: keel_catalog::partition::PartitionDesc,
    pub conds: Vec<PruneExpr>,
    /// The child of each partition of `desc` (None: pruned while planning).
    pub child_of: Vec<Option<usize>>,
    /// OR-ed conditions, each a list of arms whose conditions are AND-ed: a partition
    /// survives an OR when some arm keeps it (PostgreSQL's union step).
    pub ors: Vec<Vec<Vec<PruneExpr>>>,
}

impl RunPrune {
    /// Whether the conditions fix every key column by equality (at most one partition runs).
    pub fn is_point(&self) -> bool {
        (0..self.desc.key().len())
            .all(|c| self.conds.iter().any(|p| p.col == c && p.op == PruneOp::Eq))
    }
}

/// One condition on a partition key column: `key[col] op value`.
#[derive(Clone)]
pub struct PruneExpr {
    pub col: usize,
    pub op: PruneOp,
    pub value: Expr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PruneOp {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Where an INSERT into a partitioned table puts each row, built once with the plan.
pub struct Routing {
    /// This level's partitioned table.
    pub table: Arc<TableDef>,
    pub desc: keel_catalog::partition::PartitionDesc,
    /// Per partition of `desc`.
    pub targets: Vec<RouteTarget>,
}

pub enum RouteTarget {
    /// A partition that holds rows, with the indexes that stand for the statement's
    /// ON CONFLICT arbiters there.
    Leaf {
        table: Arc<TableDef>,
        arbiters: Vec<Arc<IndexDef>>,
        /// The partition's own constraints beyond the statement's table's.
        own: LeafConstraints,
    },
    /// A partition partitioned again.
    Sub(Box<Routing>),
}

#[derive(Clone)]
pub struct QueryPlan {
    pub root: Plan,
    pub columns: Vec<OutColumn>,
    /// The plans of the statement's subqueries in expressions, by `SubPlan::id`.
    pub subplans: Subplans,
    /// `Query::non_table_rtes`: range-table entries EXPLAIN counts beyond the plan's scans.
    pub non_table_rtes: usize,
}

impl QueryPlan {
    /// The strength of the rows the query locks (SELECT ... FOR ...), if it locks any.
    pub fn row_locking(&self) -> Option<keel_analyzer::query::LockStrength> {
        let mut p = &self.root;
        loop {
            match p {
                Plan::Limit { input, .. } | Plan::Project { input, .. } => p = input,
                Plan::LockRows { strength, .. } => return Some(*strength),
                _ => return None,
            }
        }
    }
}

/// The plans of a statement's subqueries, by `SubPlan::id` (ids are dense per statement; an id
/// whose subquery was dropped while binding has none).
pub type Subplans = Arc<[Option<Plan>]>;

#[derive(Clone)]
pub enum ModifyKind {
    /// `source` yields rows; `row` builds the full table row (defaults, assignment casts) from one.
    Insert { source: Plan, row: Vec<Expr> },
    /// Assignments: (column, expression over the old row).
    Update {
        access: Access,
        filter: Option<Expr>,
        set: Vec<(usize, Expr)>,
    },
    Delete {
        access: Access,
        filter: Option<Expr>,
    },
}

#[derive(Clone)]
pub struct ModifyPlan {
    pub table: Arc<TableDef>,
    pub types: Vec<TypeId>,
    pub kind: ModifyKind,
    pub returning: Option<(Vec<Expr>, Vec<OutColumn>)>,
    pub fks: Vec<FkCheck>,
    pub refs: Vec<RefCheck>,
    /// CHECK constraints of the table: (constraint name, bound boolean expression).
    pub checks: Vec<(String, Expr)>,
    /// As [`QueryPlan::subplans`].
    pub subplans: Subplans,
    /// A write to a view, done by its INSTEAD OF triggers (`ModifyQuery::instead_of`): for
    /// UPDATE and DELETE the plan of the view's rows to run them on.
    pub instead_of: Option<Box<InsteadOfPlan>>,
    /// INSERT ... ON CONFLICT (its expressions compiled as the others are).
    pub on_conflict: Option<Arc<keel_analyzer::query::OnConflict>>,
    /// INSERT into, or UPDATE of, a partitioned table: where each row goes.
    pub routing: Option<Arc<Routing>>,
    /// UPDATE / DELETE of a partitioned table: the scans of its partitions (an Append)
    /// that find the target rows, each with its identity and its partition's oid.
    pub targets: Option<Box<Plan>>,
    /// INSERT into, or UPDATE of, a partition named itself: the partition constraint each
    /// new row must meet.
    pub partition_check: Option<Arc<PartitionCheck>>,
}

/// A partition's constraint (PostgreSQL's partition check): at each level from the
/// partition up to the root, the row's key routes to the partition (or to its ancestor).
/// Routing is exact, so this is the bound (with a default partition's negation of the
/// others, and a range's NOT NULL) without writing it out as an expression.
pub struct PartitionCheck {
    /// Each level's descriptor and the index in it of the partition (or its ancestor).
    pub levels: Vec<(keel_catalog::partition::PartitionDesc, usize)>,
}

/// The constraints a partition has of its own: NOT NULL columns and CHECK constraints
/// that the partitioned table a row was written through does not have (added to the
/// partition directly, or brought by ATTACH PARTITION). Usually none.
#[derive(Clone, Default)]
pub struct LeafConstraints {
    pub not_null: Vec<usize>,
    pub checks: Vec<(String, Expr)>,
}

/// See [`ModifyPlan::instead_of`].
#[derive(Clone)]
pub struct InsteadOfPlan {
    pub rows: Option<Plan>,
}

impl Access {
    /// Equality on every column of a unique index: at most one row.
    pub fn is_point(&self) -> bool {
        matches!(self, Access::Index { index, eq, .. } if index.unique && eq.len() == index.columns.len())
    }
}

/// No expression among `exprs` holds a subquery (which may run as long as any query).
fn no_subplan<'a>(exprs: impl IntoIterator<Item = &'a Expr>) -> bool {
    !exprs.into_iter().any(Expr::has_subplan)
}

impl Plan {
    /// Whether the plan touches at most a handful of rows (point lookups, VALUES) and runs no
    /// subquery, so running it inline on the async runtime cannot starve other sessions (nor
    /// hold up a CancelRequest for one of them).
    pub fn is_cheap(&self) -> bool {
        match self {
            Plan::Scan { access, filter, .. } => access.is_point() && no_subplan(filter),
            Plan::Values { rows } => rows.len() <= 16 && no_subplan(rows.iter().flatten()),
            Plan::Function { .. } | Plan::SystemView(_) | Plan::NamedRows { .. } => false,
            // One partition runs (pruned while planning, or by its parameters); the
            // children are alike, so the first stands for them.
            Plan::Append {
                children, prune, ..
            } => {
                (children.len() == 1 || prune.as_ref().is_some_and(|p| p.is_point()))
                    && children.first().is_some_and(Plan::is_cheap)
            }
            Plan::Filter { input, pred } => no_subplan([pred]) && input.is_cheap(),
            Plan::Project {
                input,
                exprs,
                srf: None,
            } => no_subplan(exprs) && input.is_cheap(),
            Plan::Limit {
                input,
                limit,
                offset,
            } => no_subplan(limit.iter().chain(offset)) && input.is_cheap(),
            Plan::Project { .. } => false,
            Plan::LockRows { input, recheck, .. } => no_subplan(recheck) && input.is_cheap(),
            Plan::Agg {
                input, group, aggs, ..
            } => {
                let args = aggs.iter().flat_map(|a| {
                    a.args
                        .iter()
                        .chain(&a.filter)
                        .chain(a.order.iter().map(|k| &k.expr))
                });
                no_subplan(group.iter().chain(args)) && input.is_cheap()
            }
            Plan::Sort { input, keys } => {
                no_subplan(keys.iter().map(|k| &k.expr)) && input.is_cheap()
            }
            Plan::Distinct { input, on, .. } => no_subplan(on) && input.is_cheap(),
            Plan::Join {
                left,
                right,
                on,
                hash,
                ..
            } => {
                let keys = hash.iter().flat_map(|(l, r)| l.iter().chain(r));
                no_subplan(on.iter().chain(keys)) && left.is_cheap() && right.is_cheap()
            }
            Plan::IndexNestLoop {
                outer,
                access,
                inner_filter,
                join_filter,
                ..
            } => {
                let keys = match access {
                    Access::Index { eq, .. } => eq.as_slice(),
                    Access::Seq => &[],
                };
                access.is_point()
                    && no_subplan(inner_filter.iter().chain(join_filter).chain(keys))
                    && outer.is_cheap()
            }
            Plan::SemiJoin { .. } => false,
            Plan::SetOp { left, right, .. } => left.is_cheap() && right.is_cheap(),
        }
    }
}

impl ModifyPlan {
    /// Whether running it reads table data through the statement snapshot. Only INSERT ...
    /// VALUES without subqueries and without foreign keys to check does not (unique checks
    /// look at the newest versions, not the snapshot); such a statement need not wait for the
    /// transaction's pre-committed dependencies to become visible (`Engine::settle`).
    pub fn reads_tables(&self) -> bool {
        if self.instead_of.is_some() {
            return true;
        }
        match &self.kind {
            ModifyKind::Insert {
                source: Plan::Values { rows },
                row,
            } => {
                !self.fks.is_empty()
                    || self
                        .returning
                        .as_ref()
                        .is_some_and(|(r, _)| r.iter().any(Expr::has_subplan))
                    || rows.iter().flatten().chain(row).any(Expr::has_subplan)
            }
            _ => true,
        }
    }

    /// As [`Plan::is_cheap`]: a point write, or a few VALUES rows, with no subquery and no
    /// foreign key check that must scan a table without an index.
    pub fn is_cheap(&self) -> bool {
        // A view's write runs trigger functions, which may run any query.
        if self.instead_of.is_some() {
            return false;
        }
        let returning = self.returning.iter().flat_map(|(r, _)| r);
        let scans = self.fks.iter().any(|f| f.ref_index.is_none())
            || self.refs.iter().any(|r| r.child_index.is_none());
        let own = match &self.kind {
            ModifyKind::Insert { source, row } => source.is_cheap() && no_subplan(row),
            ModifyKind::Update {
                access,
                filter,
                set,
            } => access.is_point() && no_subplan(filter.iter().chain(set.iter().map(|s| &s.1))),
            ModifyKind::Delete { access, filter } => access.is_point() && no_subplan(filter),
        };
        own && !scans && no_subplan(returning.chain(self.checks.iter().map(|c| &c.1)))
    }
}
