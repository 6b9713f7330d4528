//! `EXPLAIN (FORMAT JSON)`: the display tree as PostgreSQL 15's JSON document, with its keys,
//! their order and nesting, its number formats (costs with two decimals, times with three,
//! rows without), and its layout (two spaces per level, string lists on one line).

use super::print::actual_of;
use super::{Actuals, BufferCounts, Display, ExplainOptions, Source, Summary, Val};

/// A field of a node's JSON identity.
#[derive(Clone, Debug)]
pub(super) enum Field {
    Str(String),
    Bool(bool),
}

/// A JSON value with its members in PostgreSQL's order.
enum J {
    Str(String),
    /// A number or boolean, already formatted.
    Raw(String),
    /// A list of strings, printed on one line.
    List(Vec<String>),
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
}

/// The JSON `Node Type` and identity fields of a node the text format names `name`, for the
/// nodes whose identity the name says completely (scans set theirs where they are built).
pub(super) type Identity = (
    String,
    Vec<(&'static str, String)>,
    Vec<(&'static str, Field)>,
);

pub(super) fn identity(name: &str) -> Identity {
    let join = |node: &str, kind: &str| {
        (
            node.to_string(),
            vec![],
            vec![
                ("Join Type", Field::Str(kind.to_string())),
                ("Inner Unique", Field::Bool(false)),
            ],
        )
    };
    let agg = |strategy: &str| {
        (
            "Aggregate".to_string(),
            vec![
                ("Strategy", strategy.to_string()),
                ("Partial Mode", "Simple".to_string()),
            ],
            vec![],
        )
    };
    match name {
        "Hash Join" | "Nested Loop" => join(name, "Inner"),
        "Hash Left Join" => join("Hash Join", "Left"),
        "Hash Right Join" => join("Hash Join", "Right"),
        "Hash Full Join" => join("Hash Join", "Full"),
        "Hash Semi Join" => join("Hash Join", "Semi"),
        "Hash Anti Join" => join("Hash Join", "Anti"),
        "Nested Loop Left Join" => join("Nested Loop", "Left"),
        "Nested Loop Right Join" => join("Nested Loop", "Right"),
        "Nested Loop Full Join" => join("Nested Loop", "Full"),
        "Aggregate" => agg("Plain"),
        "HashAggregate" => agg("Hashed"),
        "Values Scan on \"*VALUES*\"" => (
            "Values Scan".to_string(),
            vec![],
            vec![("Alias", Field::Str("*VALUES*".to_string()))],
        ),
        _ => {
            if let Some(cmd) = name.strip_prefix("HashSetOp ") {
                return (
                    "SetOp".to_string(),
                    vec![("Strategy", "Hashed".to_string())],
                    vec![("Command", Field::Str(cmd.to_string()))],
                );
            }
            if let Some(alias) = name.strip_prefix("Subquery Scan on ") {
                let alias = alias.trim_matches('"').to_string();
                return (
                    "Subquery Scan".to_string(),
                    vec![],
                    vec![("Alias", Field::Str(alias))],
                );
            }
            (name.to_string(), vec![], vec![])
        }
    }
}

fn s(v: impl Into<String>) -> J {
    J::Str(v.into())
}

fn raw(v: impl ToString) -> J {
    J::Raw(v.to_string())
}

/// The ten buffer counters PostgreSQL prints in JSON (keel has no local buffers: those are
/// zero).
fn buffer_fields(b: &BufferCounts, out: &mut Vec<(String, J)>) {
    for (k, v) in [
        ("Shared Hit Blocks", b.hit),
        ("Shared Read Blocks", b.read),
        ("Shared Dirtied Blocks", b.dirtied),
        ("Shared Written Blocks", b.written),
        ("Local Hit Blocks", 0),
        ("Local Read Blocks", 0),
        ("Local Dirtied Blocks", 0),
        ("Local Written Blocks", 0),
        ("Temp Read Blocks", b.temp_read),
        ("Temp Written Blocks", b.temp_written),
    ] {
        out.push((k.to_string(), raw(v)));
    }
}

/// An executor line (`Sort Method: quicksort  Memory: 25kB`) as JSON members.
fn executor_line(node_type: &str, line: &str, out: &mut Vec<(String, J)>) {
    let pairs: Vec<(&str, &str)> = line
        .split("  ")
        .filter_map(|p| p.split_once(": "))
        .collect();
    let kb = |v: &str| v.trim_end_matches("kB").to_string();
    match pairs.as_slice() {
        [("Sort Method", method), (space, used)] => {
            out.push(("Sort Method".into(), s(*method)));
            out.push(("Sort Space Used".into(), J::Raw(kb(used))));
            out.push(("Sort Space Type".into(), s(*space)));
        }
        [("Buckets", b), ("Batches", n), ("Memory Usage", m)] if node_type == "Hash" => {
            let (now, original) = match b.split_once(" (originally ") {
                Some((now, o)) => (now, o.trim_end_matches(')')),
                None => (*b, *b),
            };
            out.push(("Hash Buckets".into(), J::Raw(now.to_string())));
            out.push(("Original Hash Buckets".into(), J::Raw(original.to_string())));
            out.push(("Hash Batches".into(), J::Raw(n.to_string())));
            out.push(("Original Hash Batches".into(), J::Raw(n.to_string())));
            out.push(("Peak Memory Usage".into(), J::Raw(kb(m))));
        }
        [("Batches", b), ("Memory Usage", m)] if node_type == "Aggregate" => {
            out.push(("HashAgg Batches".into(), J::Raw(b.to_string())));
            out.push(("Peak Memory Usage".into(), J::Raw(kb(m))));
            out.push(("Disk Usage".into(), raw(0)));
        }
        _ => {
            for (k, v) in pairs {
                let num = kb(v);
                let value = if num.parse::<f64>().is_ok() {
                    J::Raw(num)
                } else {
                    s(v)
                };
                out.push((k.to_string(), value));
            }
        }
    }
}

fn node(
    d: &Display,
    relationship: Option<(&str, Option<&str>)>,
    opts: &ExplainOptions,
    actual: Option<Actuals<'_>>,
) -> J {
    let mut m: Vec<(String, J)> = vec![("Node Type".into(), s(&d.node_type))];
    for (k, v) in &d.pre {
        m.push((k.to_string(), s(v)));
    }
    if let Some((rel, name)) = relationship {
        m.push(("Parent Relationship".into(), s(rel)));
        if let Some(n) = name {
            m.push(("Subplan Name".into(), s(n)));
        }
    }
    m.push(("Parallel Aware".into(), raw(false)));
    m.push(("Async Capable".into(), raw(false)));
    for (k, v) in &d.target {
        let v = match v {
            Field::Str(t) => s(t),
            Field::Bool(b) => raw(b),
        };
        m.push((k.to_string(), v));
    }
    if opts.costs {
        m.push(("Startup Cost".into(), raw(format!("{:.2}", d.est.startup))));
        m.push(("Total Cost".into(), raw(format!("{:.2}", d.est.total))));
        m.push(("Plan Rows".into(), raw(format!("{:.0}", d.est.rows))));
        m.push(("Plan Width".into(), raw(d.est.width)));
    }
    let mut removed = None;
    let mut lines = Vec::new();
    // Without ANALYZE PostgreSQL still instruments the nodes for BUFFERS: all zero.
    let mut buffers = actual.is_none().then(BufferCounts::default);
    let mut analyzed = false;
    if let Some(actual) = actual
        && !matches!(d.source, Source::None)
    {
        // Nodes keel does not time on their own: no time figures rather than made-up ones.
        let probe = matches!(d.source, Source::Probe { .. } | Source::BitmapIndex { .. });
        analyzed = true;
        let a = actual_of(d.source, actual);
        let (first, total, rows, loops) = match &a {
            Some((a, _)) => {
                let loops = a.loops.max(1);
                let rows = (a.rows as f64 / loops as f64).round();
                (a.first_ms, a.total_ms, rows, loops)
            }
            None => (0.0, 0.0, 0.0, 0),
        };
        if opts.timing && !probe {
            m.push(("Actual Startup Time".into(), raw(format!("{first:.3}"))));
            m.push(("Actual Total Time".into(), raw(format!("{total:.3}"))));
        }
        m.push(("Actual Rows".into(), raw(format!("{rows:.0}"))));
        m.push(("Actual Loops".into(), raw(loops)));
        match a {
            Some((a, r)) => {
                removed = r.or(d.filtered.then_some(a.removed_by_filter));
                lines = super::print::node_lines(d, a.lines, actual);
                buffers = a.buffers;
            }
            None => {
                removed = d.filtered.then_some(0);
                buffers = (!probe).then(BufferCounts::default);
            }
        }
    }
    if opts.verbose
        && let Some(o) = &d.output
    {
        m.push(("Output".into(), J::List(o.clone())));
    }
    for (key, val) in &d.props {
        let v = match val {
            Val::Text(t) => s(t),
            Val::List(l) => J::List(l.clone()),
            Val::Int(n) => raw(*n),
            Val::Line(_) => continue,
        };
        m.push((key.to_string(), v));
        // Keel's index conditions are exact: the recheck never removes a row.
        if *key == "Index Cond" && analyzed && d.node_type == "Index Scan" {
            m.push(("Rows Removed by Index Recheck".into(), raw(0)));
        }
        if *key == "Filter"
            && let Some(n) = removed
        {
            m.push(("Rows Removed by Filter".into(), raw(n)));
        }
    }
    if opts.costs && d.name == "HashAggregate" {
        m.push(("Planned Partitions".into(), raw(0)));
    }
    for l in &lines {
        executor_line(&d.node_type, l, &mut m);
    }
    if opts.buffers
        && let Some(b) = buffers
    {
        buffer_fields(&b, &mut m);
    }
    let mut plans = Vec::new();
    let member = d.node_type == "Append";
    let subquery = d.node_type == "Subquery Scan";
    for (i, c) in d.children.iter().enumerate() {
        let rel = if member {
            "Member"
        } else if subquery {
            "Subquery"
        } else if i == 0 {
            "Outer"
        } else {
            "Inner"
        };
        plans.push(node(c, Some((rel, None)), opts, actual));
    }
    for (label, sd) in &d.subplans {
        let relationship = if label.starts_with("InitPlan") {
            "InitPlan"
        } else {
            "SubPlan"
        };
        plans.push(node(sd, Some((relationship, Some(label))), opts, actual));
    }
    if !plans.is_empty() {
        m.push(("Plans".into(), J::Arr(plans)));
    }
    J::Obj(m)
}

/// The whole `EXPLAIN (FORMAT JSON)` document.
pub(super) fn document(
    d: &Display,
    opts: &ExplainOptions,
    actual: Option<Actuals<'_>>,
    summary: &Summary,
) -> String {
    let mut top: Vec<(String, J)> = vec![("Plan".into(), node(d, None, opts, actual))];
    if opts.settings {
        let set = summary
            .settings
            .iter()
            .map(|(k, v)| (k.clone(), s(v)))
            .collect();
        top.push(("Settings".into(), J::Obj(set)));
    }
    if opts.buffers {
        let mut p = Vec::new();
        buffer_fields(&summary.planning_buffers.unwrap_or_default(), &mut p);
        top.push(("Planning".into(), J::Obj(p)));
    }
    if let Some(ms) = summary.planning_ms {
        top.push(("Planning Time".into(), raw(format!("{ms:.3}"))));
    }
    if let Some(triggers) = &summary.triggers {
        let t = triggers
            .iter()
            .map(|(name, calls)| {
                J::Obj(vec![
                    ("Constraint Name".into(), s(name)),
                    ("Calls".into(), raw(calls)),
                ])
            })
            .collect();
        top.push(("Triggers".into(), J::Arr(t)));
    }
    if let Some(ms) = summary.execution_ms {
        top.push(("Execution Time".into(), raw(format!("{ms:.3}"))));
    }
    let mut out = String::new();
    write(&J::Arr(vec![J::Obj(top)]), 0, &mut out);
    out
}

fn quote(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Writes `v` whose first line is already indented at `level`; nested lines are indented by
/// two spaces a level, and an empty object or array still spans two lines, as PostgreSQL's
/// `ExplainOpenGroup` / `ExplainCloseGroup` write them.
fn write(v: &J, level: usize, out: &mut String) {
    let pad = |n: usize| "  ".repeat(n);
    match v {
        J::Str(t) => quote(t, out),
        J::Raw(t) => out.push_str(t),
        J::List(items) => {
            out.push('[');
            for (i, t) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                quote(t, out);
            }
            out.push(']');
        }
        J::Obj(members) => {
            out.push('{');
            for (i, (k, v)) in members.iter().enumerate() {
                out.push_str(if i > 0 { ",\n" } else { "\n" });
                out.push_str(&pad(level + 1));
                quote(k, out);
                out.push_str(": ");
                write(v, level + 1, out);
            }
            out.push('\n');
            out.push_str(&pad(level));
            out.push('}');
        }
        J::Arr(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                out.push_str(if i > 0 { ",\n" } else { "\n" });
                out.push_str(&pad(level + 1));
                write(v, level + 1, out);
            }
            out.push('\n');
            out.push_str(&pad(level));
            out.push(']');
        }
    }
}
