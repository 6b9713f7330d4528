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
mod json;
mod print;
mod scan;
mod upper;

pub use deparse::deparse;

use print::print;
use upper::{output_name, scan_filter};

use crate::RelSizes;
use crate::cost::{self, CPU_OPERATOR_COST, CPU_TUPLE_COST};
use crate::plan::{Access, ModifyKind, ModifyPlan, Plan, QueryPlan, RunPrune, SortKey};
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

/// Shared-buffer pages a node (with its inputs) touched, and temporary-file blocks it read and
/// wrote: `Buffers: shared hit=... read=... dirtied=... written=..., temp read=... written=...`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferCounts {
    pub hit: u64,
    pub read: u64,
    pub dirtied: u64,
    pub written: u64,
    pub temp_read: u64,
    pub temp_written: u64,
}

/// Marks a line an index nested loop reports for its inner probe (`Heap Fetches` of an
/// index-only probe): printed under the probe, not under the join.
pub const INNER_LINE: &str = "inner: ";

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
    /// Pages touched by the node and its inputs (None: not measured for this node).
    pub buffers: Option<BufferCounts>,
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
        Plan::Scan { .. }
        | Plan::Values { .. }
        | Plan::Function { .. }
        | Plan::SystemView(_)
        | Plan::NamedRows { .. } => {
            vec![]
        }
        Plan::Filter { input, .. }
        | Plan::Project { input, .. }
        | Plan::Agg { input, .. }
        | Plan::Sort { input, .. }
        | Plan::Limit { input, .. }
        | Plan::LockRows { input, .. }
        | Plan::Distinct { input, .. } => vec![input],
        Plan::Join { left, right, .. } => vec![left, right],
        Plan::IndexNestLoop { outer, .. } => vec![outer],
        Plan::SemiJoin { input, inner, .. } => vec![input, inner],
        Plan::SetOp { left, right, .. } => vec![left, right],
        Plan::Append { children, .. } => children.iter().collect(),
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
    /// The Bitmap Index Scan under the bitmap heap scan whose figures are `heap`'s: its rows
    /// are the roots the index gave, reported by the heap scan as an [`INNER_LINE`].
    BitmapIndex {
        heap: usize,
    },
}

#[derive(Clone, Copy, Default)]
struct Est {
    startup: f64,
    total: f64,
    rows: f64,
    width: i64,
}

/// A detail line's value: one text (`Filter: ...`) or a list (`Sort Key: a, b`), which the
/// JSON format prints as an array.
#[derive(Clone, Debug)]
enum Val {
    Text(String),
    List(Vec<String>),
    /// A count (`Subplans Removed: 3`), a number in JSON.
    Int(i64),
    /// A line of its own, without a key (a partitioned write's `Update on p1 t_1`; the text
    /// format only).
    Line(String),
}

/// One node as EXPLAIN prints it.
struct Display {
    /// The text format's node line (`Seq Scan on public.t x`).
    name: String,
    /// The JSON format's identity: `Node Type`, the fields before `Parallel Aware`
    /// (`Strategy`, `Partial Mode`, `Operation`) and those after `Async Capable` (scan target,
    /// `Join Type`, `Command`).
    node_type: String,
    pre: Vec<(&'static str, String)>,
    target: Vec<(&'static str, json::Field)>,
    est: Est,
    source: Source,
    /// Whether `Rows Removed by Filter` applies (the node shows a Filter its counters measure).
    filtered: bool,
    /// VERBOSE's `Output:` (the node's output columns as a node above names them).
    output: Option<Vec<String>>,
    props: Vec<(&'static str, Val)>,
    children: Vec<Display>,
    subplans: Vec<(String, Display)>,
    /// A hash join's `Hash` node: the join's node number, whose executor lines (the hash
    /// table's memory) this node prints as PostgreSQL's `Buckets:` line.
    hash_of: Option<usize>,
    /// The node's executor lines belong to its `Hash` child (see `hash_of`).
    lines_elsewhere: bool,
}

impl Display {
    fn new(name: impl Into<String>, est: Est, source: Source) -> Display {
        let name = name.into();
        let (node_type, pre, target) = json::identity(&name);
        Display {
            name,
            node_type,
            pre,
            target,
            est,
            source,
            filtered: false,
            output: None,
            props: Vec::new(),
            children: Vec::new(),
            subplans: Vec::new(),
            hash_of: None,
            lines_elsewhere: false,
        }
    }

    fn prop(&mut self, key: &'static str, text: impl Into<String>) {
        self.props.push((key, Val::Text(text.into())));
    }

    fn int_prop(&mut self, key: &'static str, n: i64) {
        self.props.push((key, Val::Int(n)));
    }

    fn list(&mut self, key: &'static str, items: Vec<String>) {
        self.props.push((key, Val::List(items)));
    }
}

/// Takes VERBOSE's `Output:` lists from `plain` (the same plan explained with PostgreSQL's
/// qualification rule for target lists: relation prefixes only when the plan reads several
/// relations), keeping `d`'s qualifiers (prefixed whenever VERBOSE is on).
fn overlay_outputs(d: &mut Display, plain: Display) {
    d.output = plain.output;
    for (c, p) in d.children.iter_mut().zip(plain.children) {
        overlay_outputs(c, p);
    }
    for ((_, c), (_, p)) in d.subplans.iter_mut().zip(plain.subplans) {
        overlay_outputs(c, p);
    }
}

struct Explainer<'a> {
    catalog: &'a Catalog,
    sizes: &'a dyn RelSizes,
    /// Qualify column names with their relation's name (the plan reads several relations,
    /// or VERBOSE is on).
    prefix: bool,
    /// VERBOSE: relations named with their schema.
    verbose: bool,
    next_id: usize,
    subplans: &'a [Option<Plan>],
    /// Subquery ids already printed (each is printed once, under the first node using it).
    shown: Vec<u32>,
    /// The output names of the last Agg explained, unparenthesized (for its HAVING filter).
    agg_raw: Option<Vec<String>>,
    /// The same, kept for the Agg node's VERBOSE `Output:`.
    last_agg: Option<Vec<String>>,
    /// INSERT ... SELECT from its own target: PostgreSQL names the target's range-table entry
    /// by the table and the source's scan `<table>_1`. The target table's oid.
    insert_target: Option<keel_common::Oid>,
    /// The names relations were printed under so far: a relation met again (a subquery or
    /// an InitPlan reading the same table) is named `<name>_N`, as PostgreSQL makes its
    /// range-table names unique.
    refnames: Vec<String>,
    /// The select list a projection merged into its input node computes, as that node
    /// prints it (bare; nodes above see them in parentheses).
    project_own: Option<Vec<String>>,
    /// See [`Summary::run_pruned`].
    run_pruned: &'a RunPruned,
}

/// What EXPLAIN prints after the plan, each part when its option asks for it.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// SETTINGS: the planner-relevant settings changed from their defaults, as (name, value
    /// as SHOW prints it), by name.
    pub settings: Vec<(String, String)>,
    /// BUFFERS: the pages planning touched.
    pub planning_buffers: Option<BufferCounts>,
    /// SUMMARY: `Planning Time`, in milliseconds.
    pub planning_ms: Option<f64>,
    /// ANALYZE of a write: the foreign keys checked, with the rows each was checked for.
    pub triggers: Option<Vec<(String, u64)>>,
    /// SUMMARY with ANALYZE: `Execution Time`, in milliseconds.
    pub execution_ms: Option<f64>,
    /// The children each Append with run-time pruning keeps for the statement's parameters
    /// ([`RunPruned`]); an Append missing here shows all of its children.
    pub run_pruned: RunPruned,
}

/// For each Append whose partitions are pruned when the statement starts, keyed by the
/// address of its [`RunPrune`] (`Arc::as_ptr`), the indexes of the children that run, as
/// the executor chose them: EXPLAIN shows those and `Subplans Removed: N`, as PostgreSQL
/// shows a generic plan after its initial pruning.
pub type RunPruned = std::collections::HashMap<usize, Vec<usize>>;

/// The run-time pruning steps of the Appends in `plan` (its subqueries' aside: their
/// parameters change per outer row), in preorder.
pub fn run_prunes(plan: &Plan) -> Vec<&std::sync::Arc<RunPrune>> {
    fn walk<'p>(p: &'p Plan, out: &mut Vec<&'p std::sync::Arc<RunPrune>>) {
        if let Plan::Append {
            prune: Some(rp), ..
        } = p
        {
            out.push(rp);
        }
        for c in children(p) {
            walk(c, out);
        }
    }
    let mut out = Vec::new();
    walk(plan, &mut out);
    out
}

/// `EXPLAIN` of a query: its lines in the text format, or one JSON document.
pub fn explain_query(
    plan: &QueryPlan,
    catalog: &Catalog,
    sizes: &dyn RelSizes,
    opts: &ExplainOptions,
    actual: Option<Actuals<'_>>,
    summary: &Summary,
) -> Vec<String> {
    deparse::reset_init_params();
    deparse::set_type_names(catalog);
    // explain.c: `useprefix = list_length(es->rtable) > 1`.
    let multi = relations(&plan.root, &plan.subplans) + plan.non_table_rtes > 1;
    let build = |prefix: bool| {
        let mut ex = Explainer {
            catalog,
            sizes,
            prefix,
            verbose: opts.verbose,
            next_id: 0,
            subplans: &plan.subplans,
            shown: Vec::new(),
            agg_raw: None,
            last_agg: None,
            insert_target: None,
            refnames: Vec::new(),
            project_own: None,
            run_pruned: &summary.run_pruned,
        };
        ex.node(&plan.root).0
    };
    let mut d = build(multi || opts.verbose);
    if opts.verbose && !multi {
        overlay_outputs(&mut d, build(false));
    }
    render(&d, opts, actual, summary)
}

/// The whole output for display tree `d`.
fn render(
    d: &Display,
    opts: &ExplainOptions,
    actual: Option<Actuals<'_>>,
    summary: &Summary,
) -> Vec<String> {
    if opts.json {
        return vec![json::document(d, opts, actual, summary)];
    }
    let mut out = Vec::new();
    print(d, 0, true, opts, actual, &mut out);
    print::summary(summary, &mut out);
    out
}

/// The relations scanned under `d` in order, as `name alias` (a partitioned write's
/// partitions).
fn scanned_relations(d: &Display, out: &mut Vec<String>) {
    let field = |tag: &str| {
        d.target.iter().find_map(|(k, v)| match v {
            json::Field::Str(s) if *k == tag => Some(s.as_str()),
            _ => None,
        })
    };
    if let Some(name) = field("Relation Name") {
        match field("Alias") {
            Some(a) if a != name => out.push(format!("{name} {a}")),
            _ => out.push(name.to_string()),
        }
        return;
    }
    for c in &d.children {
        scanned_relations(c, out);
    }
}

/// `EXPLAIN` of an INSERT, UPDATE or DELETE. The write is node 0; its source's nodes follow
/// from 1.
pub fn explain_modify(
    plan: &ModifyPlan,
    catalog: &Catalog,
    sizes: &dyn RelSizes,
    opts: &ExplainOptions,
    actual: Option<Actuals<'_>>,
    summary: &Summary,
) -> Vec<String> {
    deparse::reset_init_params();
    deparse::set_type_names(catalog);
    let multi = match &plan.kind {
        ModifyKind::Insert { source, .. } => relations(source, &plan.subplans) > 0,
        _ => false,
    };
    let build = |prefix: bool| {
        let mut ex = Explainer {
            catalog,
            sizes,
            prefix,
            verbose: opts.verbose,
            next_id: 1,
            subplans: &plan.subplans,
            shown: Vec::new(),
            agg_raw: None,
            last_agg: None,
            insert_target: None,
            refnames: Vec::new(),
            project_own: None,
            run_pruned: &summary.run_pruned,
        };
        ex.modify(plan)
    };
    let mut d = build(multi || opts.verbose);
    if opts.verbose && !multi {
        overlay_outputs(&mut d, build(false));
    }
    render(&d, opts, actual, summary)
}

impl Explainer<'_> {
    fn modify(&mut self, plan: &ModifyPlan) -> Display {
        let view_rows = plan.instead_of.as_ref().and_then(|i| i.rows.as_ref());
        let mut partitions = Vec::new();
        let (verb, child) = match &plan.kind {
            // A partitioned table's: the scans of its partitions, named after the table
            // (whose own name the write takes), each partition written listed first.
            ModifyKind::Update { .. } | ModifyKind::Delete { .. }
                if let Some(targets) = &plan.targets =>
            {
                self.refnames.push(plan.table.name.clone());
                let (d, _) = self.node(targets);
                scanned_relations(&d, &mut partitions);
                let verb = match plan.kind {
                    ModifyKind::Update { .. } => "Update",
                    _ => "Delete",
                };
                (verb, d)
            }
            // A view's UPDATE / DELETE reads the view's rows, not a heap.
            ModifyKind::Update { .. } if let Some(rows) = view_rows => {
                ("Update", self.node(rows).0)
            }
            ModifyKind::Delete { .. } if let Some(rows) = view_rows => {
                ("Delete", self.node(rows).0)
            }
            ModifyKind::Insert { source, .. } => {
                self.insert_target = Some(plan.table.oid);
                ("Insert", self.node(source).0)
            }
            ModifyKind::Update { access, filter, .. } => {
                let (mut s, names) =
                    self.scan(&plan.table, None, access, filter.as_ref(), Source::Node(1));
                s.output = Some(names);
                ("Update", s)
            }
            ModifyKind::Delete { access, filter } => {
                let (mut s, names) =
                    self.scan(&plan.table, None, access, filter.as_ref(), Source::Node(1));
                s.output = Some(names);
                ("Delete", s)
            }
        };
        let est = Est {
            startup: child.est.startup,
            total: child.est.total,
            rows: 0.0,
            width: 0,
        };
        let alias = plan.on_conflict.as_ref().map(|oc| oc.target_name.as_str());
        let label = self.relation_label(&plan.table, alias);
        let mut top = Display::new(format!("{verb} on {label}"), est, Source::Node(0));
        top.node_type = "ModifyTable".to_string();
        top.pre = vec![("Operation", verb.to_string())];
        top.target = self.target_fields("Relation Name", &plan.table.name, &plan.table.name);
        for p in partitions {
            top.props.push(("", Val::Line(format!("{verb} on {p}"))));
        }
        if let Some(oc) = &plan.on_conflict {
            let what = if oc.update.is_some() {
                "UPDATE"
            } else {
                "NOTHING"
            };
            top.prop("Conflict Resolution", what);
            if !oc.any_unique {
                let names = oc.arbiters.iter().map(|i| i.name.clone()).collect();
                top.list("Conflict Arbiter Indexes", names);
            }
            if let Some(f) = oc.update.as_ref().and_then(|u| u.filter.as_ref()) {
                let cols = plan.table.columns.iter();
                let names: Vec<String> = cols
                    .clone()
                    .map(|c| format!("{}.{}", oc.target_name, c.name))
                    .chain(cols.map(|c| format!("excluded.{}", c.name)))
                    .collect();
                top.prop("Conflict Filter", deparse::deparse(f, &names));
            }
        }
        top.children.push(child);
        top
    }

    /// JSON's scan target: the relation (or function), its schema under VERBOSE, its alias.
    fn target_fields(
        &self,
        tag: &'static str,
        name: &str,
        alias: &str,
    ) -> Vec<(&'static str, json::Field)> {
        let mut f = vec![(tag, json::Field::Str(name.to_string()))];
        if self.verbose {
            let schema = if tag == "Function Name" {
                "pg_catalog"
            } else {
                "public"
            };
            f.push(("Schema", json::Field::Str(schema.to_string())));
        }
        f.push(("Alias", json::Field::Str(alias.to_string())));
        f
    }

    /// `table [alias]` as EXPLAIN names a scanned relation (the alias only when it differs),
    /// schema-qualified under VERBOSE. Keel has one schema, `public`.
    /// The alias to print `table` under: `alias` unless its name (or the table's) was
    /// printed for another relation already, then the first free `<name>_N`.
    fn unique_alias(&mut self, table: &TableDef, alias: Option<&str>) -> Option<String> {
        let base = alias.unwrap_or(&table.name);
        if !self.refnames.iter().any(|n| n == base) {
            self.refnames.push(base.to_string());
            return alias.map(str::to_string);
        }
        let free = (1..)
            .map(|n| format!("{base}_{n}"))
            .find(|c| !self.refnames.contains(c))?;
        self.refnames.push(free.clone());
        Some(free)
    }

    fn relation_label(&self, table: &TableDef, alias: Option<&str>) -> String {
        let name = if self.verbose {
            format!("public.{}", table.name)
        } else {
            table.name.clone()
        };
        match alias {
            Some(a) if a != table.name => format!("{name} {a}"),
            _ => name,
        }
    }
}

/// Relations (tables, VALUES lists, functions) a plan reads, subqueries included: PostgreSQL
/// qualifies column names once its range table has more than one entry.
fn relations(plan: &Plan, subplans: &[Option<Plan>]) -> usize {
    fn walk(p: &Plan) -> usize {
        let own = match p {
            Plan::Scan { .. } | Plan::Function { .. } | Plan::IndexNestLoop { .. } => 1,
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

    /// One probe of an index nested loop into `table` (see [`cost::probe_estimate`]).
    fn probe_estimate(
        &self,
        table: &TableDef,
        access: &Access,
        filter: Option<&Expr>,
    ) -> cost::Estimate {
        let info = cost::table_info(self.sizes, table);
        cost::probe_estimate(self.catalog, &info, table, access, filter)
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
                ids.push((sp.id, outer, deparse::is_init_plan(sp)))
            });
            for (id, outer, init) in ids {
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
                let label = if init {
                    let n = deparse::init_param(id);
                    format!("InitPlan {} (returns ${n})", id + 1)
                } else {
                    format!("SubPlan {}", id + 1)
                };
                d.subplans.push((label, sd));
            }
        }
    }
}

/// Drops the ANALYZE sources of a subquery's nodes (they are not instrumented).
fn clear_sources(d: &mut Display) {
    d.source = Source::None;
    d.children.iter_mut().for_each(clear_sources);
}

/// The `Index Cond` text of an index access (key expressions named by `outer_names`, the
/// index's columns by the table's `names`: unqualified, as PostgreSQL prints a scan's own
/// quals, except under VERBOSE), and the texts of the filter conjuncts it covers.
fn index_cond(
    access: &Access,
    outer_names: &[String],
    names: &[String],
) -> (Option<String>, Vec<String>) {
    let Access::Index {
        index,
        eq,
        lower,
        upper,
        not_null,
        ..
    } = access
    else {
        return (None, vec![]);
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
        parts.push(format!("({} {op} {v})", qual(k)));
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
    if *not_null {
        let text = format!("({} IS NOT NULL)", qual(eq.len()));
        parts.push(text.clone());
        covered.push(text);
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

/// The names of an aggregate node's outputs as the node itself prints them: its own
/// aggregates (`raw`) bare, where nodes above see them in parentheses (`names`). Other nodes'
/// names as they are.
fn bare_aggregates(d: &Display, names: &[String], raw: Option<&[String]>) -> Vec<String> {
    match raw {
        Some(raw) if matches!(d.name.as_str(), "HashAggregate" | "Aggregate") => names
            .iter()
            .map(
                |n| match n.strip_prefix('(').and_then(|n| n.strip_suffix(')')) {
                    Some(inner) if raw.iter().any(|r| r == inner) => inner.to_string(),
                    _ => n.clone(),
                },
            )
            .collect(),
        _ => names.to_vec(),
    }
}

/// PostgreSQL's JSON `Scan Direction` of a scan through an index in key order.
pub(crate) fn scan_direction(backward: bool) -> String {
    if backward { "Backward" } else { "Forward" }.to_string()
}

/// PostgreSQL's node name for a scan through an index in key order.
pub(crate) fn index_scan_name(index_only: bool) -> &'static str {
    if index_only {
        "Index Only Scan"
    } else {
        "Index Scan"
    }
}
