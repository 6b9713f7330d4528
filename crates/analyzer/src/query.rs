//! Query trees: what the analyzer makes of a statement. Names are resolved and every
//! expression is typed, but nothing is chosen yet about how to run it: a table is a `Scan`
//! whatever indexes it has, a WHERE clause is a `Filter` where it was written, and joins keep
//! their written order. The planner (keel-planner) turns a query tree into a plan.

use crate::expr::Expr;
use keel_catalog::{IndexDef, TableDef};
use keel_types::TypeId;
use keel_types::func::Aggregate;
use std::sync::Arc;

/// One output column, as RowDescription reports it.
#[derive(Clone, Debug)]
pub struct OutColumn {
    pub name: String,
    pub ty: TypeId,
    pub typmod: i32,
    pub table_oid: u32,
    pub attnum: i16,
}

#[derive(Clone)]
pub struct AggCall {
    /// The name as called (lower case), for EXPLAIN.
    pub name: String,
    pub agg: Aggregate,
    pub args: Vec<Expr>,
    pub distinct: bool,
    /// `agg(x ORDER BY ...)`: inputs are buffered per group and fed in this order.
    pub order: Vec<SortKey>,
    /// `FILTER (WHERE ...)`: rows where it is not true are skipped.
    pub filter: Option<Expr>,
}

#[derive(Clone)]
pub struct SortKey {
    pub expr: Expr,
    pub desc: bool,
    pub nulls_first: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOpKind {
    Union,
    Intersect,
    Except,
}

/// What a locking clause does with a row another transaction holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockWait {
    Block,
    SkipLocked,
    Nowait,
}

pub use keel_parser::lockwords::LockStrength;

#[derive(Clone)]
pub enum Rel {
    /// Every row of a table; `alias` as written in FROM (EXPLAIN prints it).
    Scan {
        table: Arc<TableDef>,
        alias: Option<String>,
    },
    /// Rows of expressions without input (VALUES, or a FROM-less SELECT's single empty row).
    Values {
        rows: Vec<Vec<Expr>>,
    },
    /// Set-returning functions in FROM: their rows side by side, as long as the longest
    /// (the shorter ones NULL-padded), with a trailing int8 row number `WITH ORDINALITY`.
    Function {
        funcs: Vec<crate::srf::TableFunc>,
        ordinality: bool,
    },
    /// The rows of a system view, made when the statement runs (from the catalog and the
    /// engine's state of that moment).
    SystemView(SystemView),
    /// The rows of a transition table (a [`crate::bind::NamedRel`]), found by name in the
    /// running trigger's when the statement runs; `table` gives their columns.
    NamedRows {
        name: String,
        table: Arc<TableDef>,
        alias: Option<String>,
    },
    Filter {
        input: Box<Rel>,
        pred: Expr,
    },
    /// Projection; `srf` = the select list's set-returning calls, when it has any.
    Project {
        input: Box<Rel>,
        exprs: Vec<Expr>,
        srf: Option<crate::srf::ProjectSet>,
    },
    Join {
        left: Box<Rel>,
        right: Box<Rel>,
        on: Option<Expr>,
        /// Left rows without a match are kept (LEFT/FULL), NULL-extended.
        left_join: bool,
        /// Right rows without a match are kept (RIGHT/FULL), NULL-extended on the left.
        right_join: bool,
        left_width: usize,
        right_width: usize,
    },
    Agg {
        input: Box<Rel>,
        group: Vec<Expr>,
        aggs: Vec<AggCall>,
    },
    Sort {
        input: Box<Rel>,
        keys: Vec<SortKey>,
    },
    /// SELECT ... FOR UPDATE / SHARE over one table: each row `input` gives (the table's
    /// rows, filtered and sorted) is locked before it is passed on. A row a committed
    /// transaction replaced meanwhile is re-read, and passed on locked when its newest
    /// version still satisfies `recheck` (READ COMMITTED).
    LockRows {
        input: Box<Rel>,
        table: Arc<TableDef>,
        recheck: Option<Expr>,
        strength: LockStrength,
        wait: LockWait,
    },
    Limit {
        input: Box<Rel>,
        limit: Option<Expr>,
        offset: Option<Expr>,
    },
    /// SELECT DISTINCT (whole rows, `on` empty) or DISTINCT ON (`on` keys, typed `types`).
    Distinct {
        input: Box<Rel>,
        types: Vec<TypeId>,
        on: Vec<Expr>,
    },
    /// `left UNION/INTERSECT/EXCEPT [ALL] right`; both sides already have `types`.
    SetOp {
        left: Box<Rel>,
        right: Box<Rel>,
        kind: SetOpKind,
        all: bool,
        types: Vec<TypeId>,
    },
}

#[derive(Clone)]
pub struct Query {
    pub root: Rel,
    pub columns: Vec<OutColumn>,
    /// Subquery ids used so far in the statement (`SubPlan::id`s are below it): the planner
    /// numbers the subqueries it makes itself (min/max through an index) from here.
    pub subplan_ids: u32,
    /// How many entries of PostgreSQL's range table for the statement are not tables
    /// (subqueries in FROM, WITH references): EXPLAIN qualifies column names when the range
    /// table has more than one entry, and these leave no scan of their own in the plan.
    pub non_table_rtes: usize,
}

#[derive(Clone)]
pub enum ModifyKind {
    /// `source` yields rows; `row` builds the full table row (defaults, assignment casts) from one.
    Insert {
        source: Rel,
        row: Vec<Expr>,
    },
    /// Assignments: (column, expression over the old row); `filter` is the WHERE clause.
    Update {
        filter: Option<Expr>,
        set: Vec<(usize, Expr)>,
    },
    Delete {
        filter: Option<Expr>,
    },
}

#[derive(Clone)]
pub struct FkCheck {
    pub name: String,
    pub columns: Vec<usize>,
    pub ref_table: Arc<TableDef>,
    pub ref_index: Option<Arc<IndexDef>>,
    pub ref_columns: Vec<usize>,
}

/// A foreign key of another table referencing the target table (checked on DELETE, and on
/// UPDATE when the referenced columns change).
#[derive(Clone)]
pub struct RefCheck {
    pub name: String,
    /// Referenced columns of the target table.
    pub columns: Vec<usize>,
    pub child: Arc<TableDef>,
    pub child_columns: Vec<usize>,
    pub child_index: Option<Arc<IndexDef>>,
    pub on_delete: keel_catalog::FkAction,
    pub on_update: keel_catalog::FkAction,
}

#[derive(Clone)]
pub struct ModifyQuery {
    pub table: Arc<TableDef>,
    pub types: Vec<TypeId>,
    pub kind: ModifyKind,
    pub returning: Option<(Vec<Expr>, Vec<OutColumn>)>,
    pub fks: Vec<FkCheck>,
    pub refs: Vec<RefCheck>,
    /// CHECK constraints of the table: (constraint name, bound boolean expression).
    pub checks: Vec<(String, Expr)>,
    /// A write to a view (`table` is then the view as a target, `ViewDef::as_target`), done
    /// by its INSTEAD OF triggers.
    pub instead_of: Option<Box<InsteadOf>>,
    /// INSERT ... ON CONFLICT.
    pub on_conflict: Option<Arc<OnConflict>>,
}

/// INSERT ... ON CONFLICT: what the statement does with a proposed row whose key one of the
/// arbiter indexes already holds.
#[derive(Clone)]
pub struct OnConflict {
    /// The unique indexes whose conflicts are handled (PostgreSQL's arbiter indexes): those
    /// the conflict target infers, the one ON CONSTRAINT names, or, without a target (DO
    /// NOTHING only), every unique index of the table. A conflict in any other unique index
    /// is still 23505.
    pub arbiters: Vec<Arc<IndexDef>>,
    /// No conflict target was written (EXPLAIN then lists no arbiter indexes).
    pub any_unique: bool,
    /// The name the target table goes by in the DO UPDATE expressions (its alias).
    pub target_name: String,
    /// DO UPDATE; None for DO NOTHING.
    pub update: Option<ConflictUpdate>,
}

/// ON CONFLICT DO UPDATE SET ... [WHERE ...]. Its expressions read the existing row (the
/// table's columns, 0..n) followed by the proposed row, EXCLUDED (n..2n).
#[derive(Clone)]
pub struct ConflictUpdate {
    pub set: Vec<(usize, Expr)>,
    pub filter: Option<Expr>,
}

/// What a write to a view runs its INSTEAD OF triggers on. For UPDATE and DELETE `rows` are
/// the view's rows the WHERE selects (the kind's own filter is then None); an INSERT's rows
/// come from its source.
#[derive(Clone)]
pub struct InsteadOf {
    pub rows: Option<Rel>,
}

/// A system view keel computes from its own structures rather than storing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SystemView {
    /// `pg_catalog.pg_stats`: per analyzed column, the statistics of its table's last ANALYZE.
    /// Its array columns (`most_common_vals`, `most_common_freqs`, `histogram_bounds`) are
    /// typed text until keel has arrays: the same text PostgreSQL prints for them. The
    /// element statistics (`most_common_elems` ...) are those of array and tsvector columns,
    /// which keel does not have yet: NULL.
    PgStats,
    /// `pg_catalog.pg_locks`: the relation locks held and awaited now. Keel has no
    /// virtual transaction ids, so `virtualtransaction` is NULL and no `virtualxid` or
    /// `transactionid` rows appear; row waits are not shown yet.
    PgLocks,
}

impl SystemView {
    /// The view named `name` (unqualified or in pg_catalog), if keel has it.
    pub fn by_name(schema: Option<&str>, name: &str) -> Option<SystemView> {
        match (schema, name) {
            (None | Some("pg_catalog"), "pg_stats") => Some(SystemView::PgStats),
            (None | Some("pg_catalog"), "pg_locks") => Some(SystemView::PgLocks),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SystemView::PgStats => "pg_stats",
            SystemView::PgLocks => "pg_locks",
        }
    }

    /// The view's columns, in order.
    pub fn columns(self) -> &'static [(&'static str, TypeId)] {
        match self {
            SystemView::PgStats => &[
                ("schemaname", TypeId::Name),
                ("tablename", TypeId::Name),
                ("attname", TypeId::Name),
                ("inherited", TypeId::Bool),
                ("null_frac", TypeId::Float4),
                ("avg_width", TypeId::Int4),
                ("n_distinct", TypeId::Float4),
                ("most_common_vals", TypeId::Text),
                ("most_common_freqs", TypeId::Text),
                ("histogram_bounds", TypeId::Text),
                ("correlation", TypeId::Float4),
                ("most_common_elems", TypeId::Text),
                ("most_common_elem_freqs", TypeId::Text),
                ("elem_count_histogram", TypeId::Text),
            ],
            SystemView::PgLocks => &[
                ("locktype", TypeId::Text),
                ("database", TypeId::Oid),
                ("relation", TypeId::Oid),
                ("page", TypeId::Int4),
                ("tuple", TypeId::Int2),
                ("virtualxid", TypeId::Text),
                ("transactionid", TypeId::Int8),
                ("classid", TypeId::Oid),
                ("objid", TypeId::Oid),
                ("objsubid", TypeId::Int2),
                ("virtualtransaction", TypeId::Text),
                ("pid", TypeId::Int4),
                ("mode", TypeId::Text),
                ("granted", TypeId::Bool),
                ("fastpath", TypeId::Bool),
                ("waitstart", TypeId::TimestampTz),
            ],
        }
    }
}
