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

pub use deparse::deparse;

use crate::RelSizes;
use crate::cost::{self, CPU_OPERATOR_COST, CPU_TUPLE_COST};
use crate::plan::{Access, ModifyKind, ModifyPlan, Plan, QueryPlan, SetOpKind, SortKey};
use keel_analyzer::expr::Expr;
use keel_catalog::TableDef;

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
    sizes: &dyn RelSizes,
    opts: &ExplainOptions,
    actual: Option<Actuals<'_>>,
) -> Vec<String> {
    let mut ex = Explainer {
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
    sizes: &dyn RelSizes,
    opts: &ExplainOptions,
    actual: Option<Actuals<'_>>,
) -> Vec<String> {
    let t = &plan.table.name;
    let mut ex = Explainer {
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
        let e = cost::leaf_estimate(self.sizes, table, access, filter);
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

fn hash_of(build: Display) -> Display {
    let est = Est {
        startup: build.est.total,
        ..build.est
    };
    let mut h = Display::new("Hash", est, build.source_for_hash());
    h.children.push(build);
    h
}

impl Display {
    /// A Hash node has as many rows as its build side.
    fn source_for_hash(&self) -> Source {
        match self.source {
            Source::Filtered { out, .. } => Source::Node(out),
            s => s,
        }
    }
}

fn join_est(l: &Est, r: &Est, rows: f64) -> Est {
    let startup = r.total + r.rows * (CPU_OPERATOR_COST + CPU_TUPLE_COST);
    Est {
        startup,
        total: startup + l.total + l.rows * CPU_OPERATOR_COST + rows * CPU_TUPLE_COST,
        rows: rows.round().max(1.0),
        width: l.width + r.width,
    }
}

impl Explainer<'_> {
    fn node2(&mut self, plan: &Plan, id: usize) -> (Display, Vec<String>) {
        let src = Source::Node(id);
        match plan {
            Plan::Join {
                left,
                right,
                on,
                left_join,
                right_join,
                hash,
                ..
            } => {
                let (ld, ln) = self.node(left);
                let (rd, rn) = self.node(right);
                let names: Vec<String> = ln.iter().chain(&rn).cloned().collect();
                let kind = match (left_join, right_join) {
                    (false, false) => "",
                    (true, false) => " Left",
                    (false, true) => " Right",
                    (true, true) => " Full",
                };
                let (mut d, conds) = match hash {
                    Some((lk, rk)) => {
                        let rows = ld.est.rows.max(rd.est.rows);
                        let est = join_est(&ld.est, &rd.est, rows);
                        let conds: Vec<String> = lk
                            .iter()
                            .zip(rk)
                            .map(|(l, r)| format!("({} = {})", deparse(l, &ln), deparse(r, &rn)))
                            .collect();
                        let name = if kind.is_empty() {
                            "Hash Join".to_string()
                        } else {
                            format!("Hash{kind} Join")
                        };
                        let mut d = Display::new(name, est, src);
                        if let Some(c) = and_text(&conds) {
                            d.props.push(format!("Hash Cond: {c}"));
                        }
                        d.children.push(ld);
                        d.children.push(hash_of(rd));
                        (d, conds)
                    }
                    None => {
                        let rows = ld.est.rows * rd.est.rows;
                        let est = Est {
                            startup: rd.est.startup,
                            total: ld.est.total + ld.est.rows * rd.est.total,
                            rows: rows.round().max(1.0),
                            width: ld.est.width + rd.est.width,
                        };
                        let name = if kind.is_empty() {
                            "Nested Loop".to_string()
                        } else {
                            format!("Nested Loop{kind} Join")
                        };
                        let mut d = Display::new(name, est, src);
                        d.children.push(ld);
                        d.children.push(rd);
                        (d, vec![])
                    }
                };
                if let Some(on) = on {
                    let rest: Vec<String> = conjuncts(on)
                        .into_iter()
                        .map(|c| deparse(c, &names))
                        .filter(|c| !conds.contains(c) && !conds.iter().any(|k| swapped(k) == *c))
                        .collect();
                    if let Some(f) = and_text(&rest) {
                        d.props.push(format!("Join Filter: {f}"));
                    }
                    self.subqueries(&mut d, &names, [on]);
                }
                (d, names)
            }
            Plan::IndexNestLoop {
                outer,
                table,
                alias,
                access,
                inner_filter,
                join_filter,
                ..
            } => {
                let (od, on) = self.node(outer);
                let inner_names = self.table_names(table, alias.as_deref());
                let on_name = relation_label(table, alias.as_deref());
                let own: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
                let names: Vec<String> = on.iter().chain(&inner_names).cloned().collect();
                let e = cost::leaf_estimate(self.sizes, table, access, inner_filter.as_ref());
                let inner_est = Est {
                    startup: 0.0,
                    total: e.cost,
                    rows: e.rows.round(),
                    width: table.columns.iter().map(|c| width_of(c.ty.id)).sum(),
                };
                let iname = match access {
                    Access::Index { index, .. } => {
                        format!("Index Scan using {} on {on_name}", index.name)
                    }
                    Access::Seq => format!("Seq Scan on {on_name}"),
                };
                let outer_id = match od.source {
                    Source::Node(n) | Source::Filtered { out: n, .. } => n,
                    _ => id,
                };
                // The join's key equalities are the probe's Index Cond; keel re-checks them
                // in the join filter, PostgreSQL does not show them twice.
                let (_, joined) = index_cond(table, access, &on, &inner_names);
                let join_rest: Vec<String> = join_filter
                    .as_ref()
                    .map(conjuncts)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|c| deparse(c, &names))
                    .filter(|c| !joined.contains(c))
                    .collect();
                // Without other filters, every probed row is a joined row: the probe's rows
                // are the loop's, over as many loops as the outer side has rows.
                let source = if join_rest.is_empty() && inner_filter.is_none() {
                    Source::Probe {
                        outer: outer_id,
                        join: id,
                    }
                } else {
                    Source::None
                };
                let mut inner = Display::new(iname, inner_est, source);
                let (cond, keys) = index_cond(table, access, &on, &own);
                if let Some(c) = cond {
                    inner.props.push(format!("Index Cond: {c}"));
                }
                if let Some(f) = inner_filter
                    .as_ref()
                    .and_then(|f| scan_filter(f, &own, &keys))
                {
                    inner.props.push(format!("Filter: {f}"));
                }
                let rows = od.est.rows * inner_est.rows;
                let est = Est {
                    startup: od.est.startup,
                    total: od.est.total + od.est.rows * inner_est.total,
                    rows: rows.round().max(1.0),
                    width: od.est.width + inner_est.width,
                };
                let mut d = Display::new("Nested Loop", est, src);
                if let Some(f) = and_text(&join_rest) {
                    d.props.push(format!("Join Filter: {f}"));
                }
                d.children.push(od);
                d.children.push(inner);
                self.subqueries(&mut d, &names, join_filter.iter().chain(inner_filter));
                (d, names)
            }
            Plan::SemiJoin {
                input,
                inner,
                outer_keys,
                inner_keys,
                anti,
            } => {
                let (ld, ln) = self.node(input);
                let (rd, rn) = self.node(inner);
                let est = join_est(&ld.est, &rd.est, ld.est.rows * 0.5);
                let est = Est {
                    width: ld.est.width,
                    ..est
                };
                let name = if *anti {
                    "Hash Anti Join"
                } else {
                    "Hash Semi Join"
                };
                let mut d = Display::new(name, est, src);
                let conds: Vec<String> = outer_keys
                    .iter()
                    .zip(inner_keys)
                    .map(|(l, r)| format!("({} = {})", deparse(l, &ln), deparse(r, &rn)))
                    .collect();
                if let Some(c) = and_text(&conds) {
                    d.props.push(format!("Hash Cond: {c}"));
                }
                d.children.push(ld);
                d.children.push(hash_of(rd));
                (d, ln)
            }
            Plan::Agg { input, group, aggs } => {
                let (cd, cn) = self.node(input);
                let mut names: Vec<String> = group.iter().map(|g| deparse(g, &cn)).collect();
                for a in aggs {
                    let args = if a.args.is_empty() {
                        "*".to_string()
                    } else {
                        a.args
                            .iter()
                            .map(|e| deparse(e, &cn))
                            .collect::<Vec<_>>()
                            .join(", ")
                    };
                    let distinct = if a.distinct { "DISTINCT " } else { "" };
                    names.push(format!("{}({distinct}{args})", a.name));
                }
                // A filter right above (HAVING) is evaluated in the Agg node by PostgreSQL and
                // names the aggregates as they are; anything higher references them.
                self.agg_raw = Some(names.clone());
                let wrapped: Vec<String> = names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| {
                        if i >= group.len() || !matches!(group[i], Expr::Col(..)) {
                            format!("({n})")
                        } else {
                            n.clone()
                        }
                    })
                    .collect();
                let rows = if group.is_empty() {
                    1.0
                } else {
                    cd.est.rows.min(200.0)
                };
                let cost = cd.est.total
                    + cd.est.rows * CPU_OPERATOR_COST * (group.len() + aggs.len()).max(1) as f64;
                let est = Est {
                    startup: cost,
                    total: cost + rows * CPU_TUPLE_COST,
                    rows,
                    width: names.len() as i64 * 8,
                };
                let name = if group.is_empty() {
                    "Aggregate"
                } else {
                    "HashAggregate"
                };
                let mut d = Display::new(name, est, src);
                if !group.is_empty() {
                    let keys: Vec<String> = names[..group.len()].to_vec();
                    d.props.push(format!("Group Key: {}", keys.join(", ")));
                }
                d.children.push(cd);
                let args = aggs
                    .iter()
                    .flat_map(|a| a.args.iter().chain(&a.filter))
                    .chain(group);
                self.subqueries(&mut d, &cn, args);
                (d, wrapped)
            }
            Plan::Sort { input, keys } => {
                let (cd, cn) = self.node(input);
                let n = cd.est.rows.max(2.0);
                let sort = 2.0 * CPU_OPERATOR_COST * n * n.log2();
                let est = Est {
                    startup: cd.est.total + sort,
                    total: cd.est.total + sort + CPU_OPERATOR_COST * n,
                    ..cd.est
                };
                let mut d = Display::new("Sort", est, src);
                let k: Vec<String> = keys.iter().map(|k| sort_key_text(k, &cn)).collect();
                d.props.push(format!("Sort Key: {}", k.join(", ")));
                d.children.push(cd);
                (d, cn)
            }
            Plan::Limit { input, limit, .. } => {
                let (cd, cn) = self.node(input);
                let rows = match limit {
                    Some(Expr::Const(keel_types::Datum::Int8(n), _)) => cd.est.rows.min(*n as f64),
                    Some(Expr::Const(keel_types::Datum::Int4(n), _)) => cd.est.rows.min(*n as f64),
                    _ => cd.est.rows,
                };
                let frac = if cd.est.rows > 0.0 {
                    rows / cd.est.rows
                } else {
                    1.0
                };
                let est = Est {
                    startup: cd.est.startup,
                    total: cd.est.startup + (cd.est.total - cd.est.startup) * frac,
                    rows,
                    width: cd.est.width,
                };
                let mut d = Display::new("Limit", est, src);
                d.children.push(cd);
                (d, cn)
            }
            Plan::Distinct { input, on, .. } => {
                let (cd, cn) = self.node(input);
                let keys: Vec<String> = if on.is_empty() {
                    cn.clone()
                } else {
                    on.iter().map(|e| deparse(e, &cn)).collect()
                };
                let rows = cd.est.rows.min(200.0);
                let cost = cd.est.total + cd.est.rows * CPU_OPERATOR_COST * keys.len() as f64;
                let est = Est {
                    startup: cost,
                    total: cost + rows * CPU_TUPLE_COST,
                    rows,
                    width: cd.est.width,
                };
                let mut d = Display::new("HashAggregate", est, src);
                d.props.push(format!("Group Key: {}", keys.join(", ")));
                d.children.push(cd);
                (d, cn)
            }
            Plan::SetOp {
                left,
                right,
                kind,
                all,
                ..
            } => {
                let (ld, ln) = self.node(left);
                let (rd, _) = self.node(right);
                let rows = ld.est.rows + rd.est.rows;
                let est = Est {
                    startup: ld.est.startup,
                    total: ld.est.total + rd.est.total,
                    rows,
                    width: ld.est.width.max(rd.est.width),
                };
                match kind {
                    SetOpKind::Union => {
                        let mut app =
                            Display::new("Append", est, if *all { src } else { Source::None });
                        app.children.push(ld);
                        app.children.push(rd);
                        if *all {
                            return (app, ln);
                        }
                        let mut d = Display::new(
                            "HashAggregate",
                            Est {
                                startup: est.total + rows * CPU_OPERATOR_COST,
                                total: est.total
                                    + rows * CPU_OPERATOR_COST
                                    + rows.min(200.0) * CPU_TUPLE_COST,
                                rows: rows.min(200.0),
                                width: est.width,
                            },
                            src,
                        );
                        d.props.push(format!("Group Key: {}", ln.join(", ")));
                        d.children.push(app);
                        (d, ln)
                    }
                    SetOpKind::Intersect | SetOpKind::Except => {
                        let word = if *kind == SetOpKind::Intersect {
                            "Intersect"
                        } else {
                            "Except"
                        };
                        let name = if *all {
                            format!("HashSetOp {word} All")
                        } else {
                            format!("HashSetOp {word}")
                        };
                        let mut app = Display::new("Append", est, Source::None);
                        for (i, c) in [ld, rd].into_iter().enumerate() {
                            let mut sq = Display::new(
                                format!("Subquery Scan on \"*SELECT* {}\"", i + 1),
                                c.est,
                                Source::None,
                            );
                            sq.children.push(c);
                            app.children.push(sq);
                        }
                        let mut d = Display::new(name, est, src);
                        d.children.push(app);
                        (d, ln)
                    }
                }
            }
            Plan::Scan { .. }
            | Plan::Values { .. }
            | Plan::Series { .. }
            | Plan::Filter { .. }
            | Plan::Project { .. } => self.node(plan),
        }
    }
}

/// How a node above names a computed output column: PostgreSQL prints a reference to a
/// lower node's non-column target entry in parentheses.
fn output_name(e: &Expr, input: &[String]) -> String {
    match e {
        Expr::Col(..) => deparse(e, input),
        _ => format!("({})", deparse(e, input)),
    }
}

/// A scan's Filter text: its conjuncts other than those in `covered` (the Index Cond's),
/// in PostgreSQL's order. PostgreSQL turns `column = constant` into an equivalence class and
/// re-adds it to the scan's quals after the others, so those equalities come last.
fn scan_filter(filter: &Expr, own: &[String], covered: &[String]) -> Option<String> {
    let is_const_eq = |e: &Expr| match e {
        Expr::Bin { op: "=", l, r, .. } => {
            let col = |x: &Expr| matches!(x, Expr::Col(..));
            let fixed = |x: &Expr| x.is_row_independent() && !x.has_subplan();
            (col(l) && fixed(r)) || (fixed(l) && col(r))
        }
        _ => false,
    };
    let parts = conjuncts(filter);
    let ordered = parts
        .iter()
        .filter(|c| !is_const_eq(c))
        .chain(parts.iter().filter(|c| is_const_eq(c)));
    let texts: Vec<String> = ordered
        .map(|c| deparse(c, own))
        .filter(|c| !covered.contains(c))
        .collect();
    and_text(&texts)
}

/// `(a = b)` as `(b = a)`.
fn swapped(cond: &str) -> String {
    let inner = cond.trim_start_matches('(').trim_end_matches(')');
    match inner.split_once(" = ") {
        Some((a, b)) => format!("({b} = {a})"),
        None => cond.to_string(),
    }
}

fn actual_of(source: Source, actual: Actuals<'_>) -> Option<(NodeActual, Option<u64>)> {
    match source {
        Source::None => None,
        Source::Node(n) => actual(n).map(|a| (a, None)),
        Source::Filtered { out, input } => {
            let a = actual(out)?;
            let before = actual(input).map_or(a.rows, |i| i.rows);
            let removed = before.saturating_sub(a.rows);
            Some((
                NodeActual {
                    removed_by_filter: removed,
                    ..a
                },
                Some(removed),
            ))
        }
        Source::Probe { outer, join } => {
            let o = actual(outer)?;
            let j = actual(join)?;
            Some((
                NodeActual {
                    rows: j.rows,
                    loops: o.rows,
                    first_ms: 0.0,
                    total_ms: 0.0,
                    removed_by_filter: 0,
                    lines: Vec::new(),
                },
                None,
            ))
        }
    }
}

fn fmt_actual(a: &NodeActual, timing: bool, probe: bool) -> String {
    let loops = a.loops.max(1);
    let rows = (a.rows as f64 / loops as f64).round();
    if timing && !probe {
        format!(
            "(actual time={:.3}..{:.3} rows={rows:.0} loops={loops})",
            a.first_ms, a.total_ms
        )
    } else {
        format!("(actual rows={rows:.0} loops={loops})")
    }
}

/// Prints `d` at `base` (the column its `->` arrow's text starts at, for children).
fn print(
    d: &Display,
    base: usize,
    root: bool,
    opts: &ExplainOptions,
    actual: Option<Actuals<'_>>,
    out: &mut Vec<String>,
) {
    let mut line = if root {
        d.name.clone()
    } else {
        format!("{}->  {}", " ".repeat(base - 4), d.name)
    };
    if opts.costs {
        line.push_str(&format!(
            "  (cost={:.2}..{:.2} rows={:.0} width={})",
            d.est.startup, d.est.total, d.est.rows, d.est.width
        ));
    }
    let mut removed = None;
    let mut extra = Vec::new();
    if let Some(actual) = actual
        && !matches!(d.source, Source::None)
    {
        line.push(' ');
        match actual_of(d.source, actual) {
            Some((a, r)) => {
                let probe = matches!(d.source, Source::Probe { .. });
                line.push_str(&fmt_actual(&a, opts.timing, probe));
                removed = r.or((d.filtered).then_some(a.removed_by_filter));
                extra = a.lines;
            }
            None => line.push_str("(never executed)"),
        }
    }
    out.push(line);
    let pad = " ".repeat(base + 2);
    for p in &d.props {
        out.push(format!("{pad}{p}"));
    }
    // PostgreSQL prints a node's own figures (sort method, hash aggregate batches) after
    // its qualifiers, then the rows its filter removed.
    for l in extra {
        out.push(format!("{pad}{l}"));
    }
    if d.props.iter().any(|p| p.starts_with("Filter: "))
        && let Some(n) = removed
        && n > 0
    {
        out.push(format!("{pad}Rows Removed by Filter: {n}"));
    }
    for c in &d.children {
        print(c, base + 6, false, opts, actual, out);
    }
    for (label, sd) in &d.subplans {
        out.push(format!("{pad}{label}"));
        print(sd, base + 8, false, opts, actual, out);
    }
}
