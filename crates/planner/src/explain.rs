//! EXPLAIN: a plan as PostgreSQL 15 prints it (text format).
//!
//! Keel's plan nodes map onto PostgreSQL's display nodes: a `Scan` is a Seq Scan or an Index
//! Scan (its index keys as `Index Cond`, the rest of its predicate as `Filter`), a `Project`
//! is folded into the node below it as PostgreSQL folds projections (over a FROM-less SELECT
//! it is a `Result`), a `Filter` over a non-scan is that node's `Filter` line, a hash join is
//! `Hash Join` over its probe side and a `Hash` of its build side, an `IndexNestLoop` is a
//! `Nested Loop` whose inner side is an `Index Scan` probed once per outer row. Keel's `Agg`
//! and `Distinct` hash their groups: `HashAggregate` (or `Aggregate` without groups).
//!
//! Plan nodes are numbered in preorder (a node before its inputs, inputs in field order); the
//! executor's EXPLAIN ANALYZE counters use the same numbers ([`count_nodes`]).

mod deparse;
mod print;
mod upper;

pub use deparse::deparse;

use print::print;
use upper::{output_name, scan_filter};

use crate::RelSizes;
use crate::cost::{self, CPU_OPERATOR_COST, CPU_TUPLE_COST};
use crate::plan::{Access, ModifyKind, ModifyPlan, Plan, QueryPlan, SortKey};
use keel_analyzer::expr::Expr;
use keel_catalog::{Catalog, TableDef};

/// EXPLAIN's options, as `EXPLAIN (...)` sets them.
#[derive(Clone, Debug)]
pub struct ExplainOptions {
    pub analyze: bool,
    pub verbose: bool,
    pub costs: bool,
    pub buffers: bool,
    pub timing: bool,
    pub summary: bool,
    pub settings: bool,
    pub json: bool,
}

impl Default for ExplainOptions {
    fn default() -> Self {
        ExplainOptions {
            analyze: false,
            verbose: false,
            costs: true,
            buffers: false,
            timing: true,
            summary: false,
            settings: false,
            json: false,
        }
    }
}

/// What one plan node did under EXPLAIN ANALYZE.
#[derive(Clone, Debug, Default)]
pub struct NodeActual {
    pub rows: u64,
    pub loops: u64,
    /// Time to the first row and in total, in milliseconds.
    pub first_ms: f64,
    pub total_ms: f64,
    pub removed_by_filter: u64,
    /// The node's own lines about how it ran (`Sort Method: ...`).
    pub lines: Vec<String>,
}

/// The counters EXPLAIN ANALYZE collected, by node number (None: the node never ran).
pub type Actuals<'a> = &'a dyn Fn(usize) -> Option<NodeActual>;

/// How many numbered nodes `plan` has (its subqueries' plans are not numbered).
pub fn count_nodes(plan: &Plan) -> usize {
    1 + children(plan).iter().map(|c| count_nodes(c)).sum::<usize>()
}

/// A node's inputs in the order the executor builds them.
fn children(plan: &Plan) -> Vec<&Plan> {
    match plan {
        Plan::Scan { .. } | Plan::Values { .. } | Plan::Series { .. } => vec![],
        Plan::Filter { input, .. }
        | Plan::Project { input, .. }
        | Plan::Agg { input, .. }
        | Plan::Sort { input, .. }
        | Plan::Limit { input, .. }
        | Plan::Distinct { input, .. } => vec![input],
        Plan::Join { left, right, .. } => vec![left, right],
        Plan::IndexNestLoop { outer, .. } => vec![outer],
        Plan::SemiJoin { input, inner, .. } => vec![input, inner],
        Plan::SetOp { left, right, .. } => vec![left, right],
    }
}

/// Where a display node's ANALYZE figures come from.
#[derive(Clone, Copy)]
enum Source {
    None,
    Node(usize),
    /// The inner index scan of an index nested loop: probed once per row of node `outer`;
    /// its rows are the loop's own when no join filter drops any.
    Probe {
        outer: usize,
        join: usize,
    },
    /// A node whose filter ran as keel's separate Filter node `out` over node `input`.
    Filtered {
        out: usize,
        input: usize,
    },
}

#[derive(Clone, Copy, Default)]
struct Est {
    startup: f64,
    total: f64,
    rows: f64,
    width: i64,
}

/// One node as EXPLAIN prints it.
struct Display {
    name: String,
    est: Est,
    source: Source,
    /// Whether `Rows Removed by Filter` applies (the node shows a Filter its counters measure).
    filtered: bool,
    props: Vec<String>,
    children: Vec<Display>,
    subplans: Vec<(String, Display)>,
}

impl Display {
    fn new(name: impl Into<String>, est: Est, source: Source) -> Display {
        Display {
            name: name.into(),
            est,
            source,
            filtered: false,
            props: Vec::new(),
            children: Vec::new(),
            subplans: Vec::new(),
        }
    }
}

struct Explainer<'a> {
    catalog: &'a Catalog,
    sizes: &'a dyn RelSizes,
    /// Qualify column names with their relation's name (the plan reads several relations).
    prefix: bool,
    next_id: usize,
    subplans: &'a [Option<Plan>],
    /// Subquery ids already printed (each is printed once, under the first node using it).
    shown: Vec<u32>,
    /// The output names of the last Agg explained, unparenthesized (for its HAVING filter).
    agg_raw: Option<Vec<String>>,
    /// INSERT ... SELECT from its own target: PostgreSQL names the target's range-table entry
    /// by the table and the source's scan `<table>_1`. The target table's oid.
    insert_target: Option<keel_common::Oid>,
}

/// The lines of `EXPLAIN` for a query (without the summary lines).
pub fn explain_query(
    plan: &QueryPlan,
    catalog: &Catalog,
    sizes: &dyn RelSizes,
    opts: &ExplainOptions,
    actual: Option<Actuals<'_>>,
) -> Vec<String> {
    let mut ex = Explainer {
        catalog,
        sizes,
        prefix: relations(&plan.root, &plan.subplans) > 1,
        next_id: 0,
        subplans: &plan.subplans,
        shown: Vec::new(),
        agg_raw: None,
        insert_target: None,
    };
    let (d, _) = ex.node(&plan.root);
    let mut out = Vec::new();
    print(&d, 0, true, opts, actual, &mut out);
    out
}

/// The lines of `EXPLAIN` for an INSERT, UPDATE or DELETE (without the summary lines). The
/// write is node 0; its source's nodes follow from 1.
pub fn explain_modify(
    plan: &ModifyPlan,
    catalog: &Catalog,
    sizes: &dyn RelSizes,
    opts: &ExplainOptions,
    actual: Option<Actuals<'_>>,
) -> Vec<String> {
    let t = &plan.table.name;
    let mut ex = Explainer {
        catalog,
        sizes,
        prefix: false,
        next_id: 1,
        subplans: &plan.subplans,
        shown: Vec::new(),
        agg_raw: None,
        insert_target: None,
    };
    let (verb, child) = match &plan.kind {
        ModifyKind::Insert { source, .. } => {
            ex.prefix = relations(source, &plan.subplans) > 0;
            ex.insert_target = Some(plan.table.oid);
            ("Insert", ex.node(source).0)
        }
        ModifyKind::Update { access, filter, .. } => {
            let s = ex.scan(&plan.table, None, access, filter.as_ref(), Source::Node(1));
            ("Update", s.0)
        }
        ModifyKind::Delete { access, filter } => {
            let s = ex.scan(&plan.table, None, access, filter.as_ref(), Source::Node(1));
            ("Delete", s.0)
        }
    };
    let est = Est {
        startup: child.est.startup,
        total: child.est.total,
        rows: 0.0,
        width: 0,
    };
    let mut top = Display::new(format!("{verb} on {t}"), est, Source::Node(0));
    top.children.push(child);
    let mut out = Vec::new();
    print(&top, 0, true, opts, actual, &mut out);
    out
}

/// Relations (tables, VALUES lists, functions) a plan reads, subqueries included: PostgreSQL
/// qualifies column names once its range table has more than one entry.
fn relations(plan: &Plan, subplans: &[Option<Plan>]) -> usize {
    fn walk(p: &Plan) -> usize {
        let own = match p {
            Plan::Scan { .. } | Plan::Series { .. } | Plan::IndexNestLoop { .. } => 1,
            Plan::Values { rows } if rows.len() > 1 => 1,
            _ => 0,
        };
        own + children(p).iter().map(|c| walk(c)).sum::<usize>()
    }
    walk(plan) + subplans.iter().flatten().map(walk).sum::<usize>()
}

fn width_of(ty: keel_types::TypeId) -> i64 {
    match ty.typlen() {
        n if n > 0 => n as i64,
        _ => 32,
    }
}

fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::And(args) => args.iter().collect(),
        e => vec![e],
    }
}

/// `parts` as one qualifier line's text: one expression, or their AND.
fn and_text(parts: &[String]) -> Option<String> {
    match parts {
        [] => None,
        [one] => Some(one.clone()),
        many => Some(format!("({})", many.join(" AND "))),
    }
}

impl Explainer<'_> {
    /// The planner's estimate for scanning `table` through `access` with `filter`.
    fn leaf_estimate(
        &self,
        table: &TableDef,
        access: &Access,
        filter: Option<&Expr>,
    ) -> cost::Estimate {
        let info = cost::table_info(self.sizes, table);
        cost::leaf_estimate(self.catalog, &info, table, access, filter)
    }

    fn take_id(&mut self) -> usize {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn table_names(&self, t: &TableDef, alias: Option<&str>) -> Vec<String> {
        let refname = alias.unwrap_or(&t.name);
        t.columns
            .iter()
            .map(|c| {
                if self.prefix {
                    format!("{refname}.{}", c.name)
                } else {
                    c.name.clone()
                }
            })
            .collect()
    }

    /// Adds the `SubPlan N` blocks of the subqueries in `exprs` (over a row named `names`)
    /// to `d`.
    fn subqueries<'e>(
        &mut self,
        d: &mut Display,
        names: &[String],
        exprs: impl IntoIterator<Item = &'e Expr>,
    ) {
        for e in exprs {
            let mut ids = Vec::new();
            e.for_each_subplan(&mut |sp| {
                let outer = sp.outer_args.iter().map(|a| deparse(a, names)).collect();
                ids.push((sp.id, outer))
            });
            for (id, outer) in ids {
                if self.shown.contains(&id) {
                    continue;
                }
                self.shown.push(id);
                let Some(Some(p)) = self.subplans.get(id as usize) else {
                    continue;
                };
                // Subquery plans are not numbered: the executor runs them uninstrumented.
                let saved = self.next_id;
                self.next_id = usize::MAX / 2;
                let (mut sd, _) = deparse::with_outer(outer, || self.node(p));
                self.next_id = saved;
                clear_sources(&mut sd);
                d.subplans.push((format!("SubPlan {}", id + 1), sd));
            }
        }
    }

    /// A table scan through `access` keeping rows that pass `filter`.
    fn scan(
        &mut self,
        table: &TableDef,
        alias: Option<&str>,
        access: &Access,
        filter: Option<&Expr>,
        source: Source,
    ) -> (Display, Vec<String>) {
        // PostgreSQL prints a scan's own quals without relation prefixes (they can only be
        // the scanned table's columns); nodes above see the qualified names.
        let renamed = format!("{}_1", table.name);
        let alias = match alias {
            None if self.insert_target == Some(table.oid) => Some(renamed.as_str()),
            a => a,
        };
        let names = self.table_names(table, alias);
        let on_name = relation_label(table, alias);
        let own: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
        let e = self.leaf_estimate(table, access, filter);
        let est = Est {
            startup: 0.0,
            total: e.cost,
            rows: e.rows.round(),
            width: table.columns.iter().map(|c| width_of(c.ty.id)).sum(),
        };
        let mut d = match access {
            Access::Seq => {
                let mut d = Display::new(format!("Seq Scan on {on_name}"), est, source);
                if let Some(f) = filter.and_then(|f| scan_filter(f, &own, &[])) {
                    d.props.push(format!("Filter: {f}"));
                    d.filtered = true;
                }
                d
            }
            Access::Index {
                index,
                bitmap: true,
                ..
            } => {
                // PostgreSQL's pair of nodes: the heap scan rechecks the index conditions
                // (`Recheck Cond`) and applies the rest of the WHERE (`Filter`).
                let mut d = Display::new(format!("Bitmap Heap Scan on {on_name}"), est, source);
                let (cond, keys) = index_cond(table, access, &[], &own);
                let mut child = Display::new(
                    format!("Bitmap Index Scan on {}", index.name),
                    Est { width: 0, ..est },
                    Source::None,
                );
                if let Some(c) = cond {
                    d.props.push(format!("Recheck Cond: {c}"));
                    child.props.push(format!("Index Cond: {c}"));
                }
                if let Some(f) = filter.and_then(|f| scan_filter(f, &own, &keys)) {
                    d.props.push(format!("Filter: {f}"));
                    d.filtered = true;
                }
                d.children.push(child);
                d
            }
            Access::Index { index, .. } => {
                let mut d = Display::new(
                    format!("Index Scan using {} on {on_name}", index.name),
                    est,
                    source,
                );
                let (cond, keys) = index_cond(table, access, &[], &own);
                if let Some(c) = cond {
                    d.props.push(format!("Index Cond: {c}"));
                }
                if let Some(f) = filter.and_then(|f| scan_filter(f, &own, &keys)) {
                    d.props.push(format!("Filter: {f}"));
                    d.filtered = true;
                }
                d
            }
        };
        self.subqueries(&mut d, &names, filter);
        (d, names)
    }

    /// The display node of `plan` and the names of its output columns.
    fn node(&mut self, plan: &Plan) -> (Display, Vec<String>) {
        let id = self.take_id();
        let src = Source::Node(id);
        match plan {
            Plan::Scan {
                table,
                alias,
                access,
                filter,
            } => self.scan(table, alias.as_deref(), access, filter.as_ref(), src),
            Plan::Values { rows } if rows.len() == 1 => {
                let names: Vec<String> = rows[0].iter().map(|e| deparse(e, &[])).collect();
                let est = Est {
                    startup: 0.0,
                    total: 0.01,
                    rows: 1.0,
                    width: rows[0].iter().map(|e| width_of(e.ty())).sum(),
                };
                let mut d = Display::new("Result", est, src);
                self.subqueries(&mut d, &[], rows.iter().flatten());
                (d, names)
            }
            Plan::Values { rows } => {
                let n = rows.first().map_or(0, Vec::len);
                let names: Vec<String> =
                    (1..=n).map(|i| format!("\"*VALUES*\".column{i}")).collect();
                let est = Est {
                    startup: 0.0,
                    total: rows.len() as f64 * CPU_TUPLE_COST * 1.25,
                    rows: rows.len() as f64,
                    width: rows
                        .first()
                        .map_or(0, |r| r.iter().map(|e| width_of(e.ty())).sum()),
                };
                let mut d = Display::new("Values Scan on \"*VALUES*\"", est, src);
                self.subqueries(&mut d, &[], rows.iter().flatten());
                (d, names)
            }
            Plan::Series { ty, .. } => {
                let est = Est {
                    startup: 0.0,
                    total: 10.0,
                    rows: 1000.0,
                    width: width_of(*ty),
                };
                let d = Display::new("Function Scan on generate_series", est, src);
                (d, vec!["generate_series".to_string()])
            }
            Plan::Filter { input, pred } => {
                self.agg_raw = None;
                let (mut d, names) = self.node(input);
                let shown = match self.agg_raw.take() {
                    Some(raw) if matches!(d.name.as_str(), "HashAggregate" | "Aggregate") => names
                        .iter()
                        .map(
                            |n| match n.strip_prefix('(').and_then(|n| n.strip_suffix(')')) {
                                Some(inner) if raw.iter().any(|r| r == inner) => inner.to_string(),
                                _ => n.clone(),
                            },
                        )
                        .collect(),
                    _ => names.clone(),
                };
                d.props.push(format!("Filter: {}", deparse(pred, &shown)));
                d.est.rows = (d.est.rows * 0.5).round().max(1.0);
                d.est.total += d.est.rows * CPU_OPERATOR_COST;
                // The filter's own counters are the node's rows; its input's the rows before.
                d.filtered = true;
                if let Source::Node(inner) = d.source {
                    d.source = Source::Filtered {
                        out: id,
                        input: inner,
                    };
                }
                self.subqueries(&mut d, &names, [pred]);
                (d, names)
            }
            Plan::Project { input, exprs, srf } => {
                if let Plan::Values { rows } = input.as_ref()
                    && rows.len() == 1
                    && rows[0].is_empty()
                {
                    // A FROM-less SELECT: PostgreSQL's Result computing the select list.
                    self.take_id();
                    let names: Vec<String> = exprs.iter().map(|e| deparse(e, &[])).collect();
                    let est = Est {
                        startup: 0.0,
                        total: 0.01,
                        rows: 1.0,
                        width: exprs.iter().map(|e| width_of(e.ty())).sum(),
                    };
                    let mut d = Display::new("Result", est, src);
                    self.subqueries(&mut d, &[], exprs);
                    return (d, names);
                }
                let (mut d, in_names) = self.node(input);
                let names: Vec<String> = exprs.iter().map(|e| output_name(e, &in_names)).collect();
                d.est.width = exprs.iter().map(|e| width_of(e.ty())).sum();
                if srf.is_some() {
                    let mut p = Display::new("ProjectSet", d.est, src);
                    p.est.rows *= 1000.0;
                    p.children.push(d);
                    self.subqueries(&mut p, &in_names, exprs);
                    return (p, names);
                }
                // The projection's rows are its input's: its counters are the node's.
                if let Source::Node(_) = d.source
                    && !d.filtered
                {
                    d.source = src;
                }
                self.subqueries(&mut d, &in_names, exprs);
                (d, names)
            }
            _ => self.node2(plan, id),
        }
    }
}

/// `table [alias]` as EXPLAIN names a scanned relation (the alias only when it differs).
fn relation_label(table: &TableDef, alias: Option<&str>) -> String {
    match alias {
        Some(a) if a != table.name => format!("{} {a}", table.name),
        _ => table.name.clone(),
    }
}

/// Drops the ANALYZE sources of a subquery's nodes (they are not instrumented).
fn clear_sources(d: &mut Display) {
    d.source = Source::None;
    d.children.iter_mut().for_each(clear_sources);
}

/// The `Index Cond` text of an index access over `table` (key expressions named by
/// `outer_names`, the index's columns by the table's names without qualification, as
/// PostgreSQL prints index columns), and the texts of the filter conjuncts it covers.
fn index_cond(
    table: &TableDef,
    access: &Access,
    outer_names: &[String],
    names: &[String],
) -> (Option<String>, Vec<String>) {
    let Access::Index {
        index,
        eq,
        lower,
        upper,
        ..
    } = access
    else {
        return (None, vec![]);
    };
    let col = |k: usize| {
        index
            .columns
            .get(k)
            .and_then(|c| table.columns.get(*c))
            .map_or_else(String::new, |c| c.name.clone())
    };
    let qual = |k: usize| {
        index
            .columns
            .get(k)
            .and_then(|c| names.get(*c))
            .cloned()
            .unwrap_or_default()
    };
    let mut parts = Vec::new();
    let mut covered = Vec::new();
    let mut add = |k: usize, op: &str, e: &Expr| {
        let v = deparse(e, outer_names);
        parts.push(format!("({} {op} {v})", col(k)));
        covered.push(format!("({} {op} {v})", qual(k)));
        covered.push(format!("({v} {} {})", flip(op), qual(k)));
    };
    for (k, e) in eq.iter().enumerate() {
        add(k, "=", e);
    }
    if let Some((e, incl)) = lower {
        add(eq.len(), if *incl { ">=" } else { ">" }, e);
    }
    if let Some((e, incl)) = upper {
        add(eq.len(), if *incl { "<=" } else { "<" }, e);
    }
    (and_text(&parts), covered)
}

fn flip(op: &str) -> &str {
    match op {
        "<" => ">",
        ">" => "<",
        "<=" => ">=",
        ">=" => "<=",
        o => o,
    }
}

fn sort_key_text(k: &SortKey, names: &[String]) -> String {
    // A key computed below the sort is, to PostgreSQL, a reference to its input's target
    // entry, printed in parentheses when that entry is not a plain column.
    let mut s = deparse(&k.expr, names);
    if !matches!(k.expr, Expr::Col(..)) {
        s = format!("({s})");
    }
    match (k.desc, k.nulls_first) {
        (false, false) => {}
        (false, true) => s.push_str(" NULLS FIRST"),
        (true, true) => s.push_str(" DESC"),
        (true, false) => s.push_str(" DESC NULLS LAST"),
    }
    s
}
