//! EXPLAIN's text lines: a display tree with its estimates and ANALYZE's figures.

use super::{Actuals, BufferCounts, Display, ExplainOptions, NodeActual, Source, Summary, Val};

pub(super) fn actual_of(source: Source, actual: Actuals<'_>) -> Option<(NodeActual, Option<u64>)> {
    match source {
        Source::None => None,
        Source::Node(n) => actual(n).map(|mut a| {
            a.lines.retain(|l| !l.starts_with(super::INNER_LINE));
            (a, None)
        }),
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
        Source::BitmapIndex { heap } => {
            let h = actual(heap)?;
            let rows = h
                .lines
                .iter()
                .find_map(|l| l.strip_prefix(super::INNER_LINE)?.strip_prefix("rows="))
                .and_then(|n| n.parse().ok())?;
            Some((
                NodeActual {
                    rows,
                    loops: h.loops,
                    first_ms: 0.0,
                    total_ms: 0.0,
                    removed_by_filter: 0,
                    lines: Vec::new(),
                    // Its pages are counted in the heap scan's.
                    buffers: None,
                },
                None,
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
                    lines: (j.lines.iter())
                        .filter_map(|l| l.strip_prefix(super::INNER_LINE))
                        .map(str::to_string)
                        .collect(),
                    // The probes' pages are counted in the join's.
                    buffers: None,
                },
                None,
            ))
        }
    }
}

/// The executor lines `d` prints, given its own node's (`own`) under ANALYZE. A hash join's
/// `Hash` node prints the line its join reports about its table (`Buckets: ...  Batches: 1
/// Memory Usage: ...`): the buckets of keel's table as built, not a figure PostgreSQL's
/// sizing rule would give.
pub(super) fn node_lines(d: &Display, own: Vec<String>, actual: Actuals<'_>) -> Vec<String> {
    if d.lines_elsewhere {
        return Vec::new();
    }
    let Some(join) = d.hash_of else {
        return own;
    };
    actual(join)
        .into_iter()
        .flat_map(|a| a.lines)
        .filter(|l| l.starts_with("Buckets: "))
        .collect()
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
pub(super) fn print(
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
    let mut buffers = None;
    if let Some(actual) = actual
        && !matches!(d.source, Source::None)
    {
        line.push(' ');
        match actual_of(d.source, actual) {
            Some((a, r)) => {
                // Nodes keel does not time on their own: no time figures rather than made-up
                // ones.
                let probe = matches!(d.source, Source::Probe { .. } | Source::BitmapIndex { .. });
                line.push_str(&fmt_actual(&a, opts.timing, probe));
                removed = r.or((d.filtered).then_some(a.removed_by_filter));
                extra = node_lines(d, a.lines, actual);
                buffers = a.buffers;
            }
            None => line.push_str("(never executed)"),
        }
    }
    out.push(line);
    let pad = " ".repeat(base + 2);
    if opts.verbose
        && let Some(o) = &d.output
        && !o.is_empty()
    {
        out.push(format!("{pad}Output: {}", o.join(", ")));
    }
    // PostgreSQL prints a node's qualifiers with the rows its filter removed right after the
    // filter, then its own figures (sort method, hash aggregate batches), then its buffers;
    // an aggregate's HAVING count comes after its batches (as PostgreSQL 15 prints it).
    let removed_line = removed
        .filter(|n| *n > 0)
        .map(|n| format!("{pad}Rows Removed by Filter: {n}"));
    let agg = d.node_type == "Aggregate";
    for (key, val) in &d.props {
        let text = match val {
            Val::Text(t) => t.clone(),
            Val::List(l) => l.join(", "),
            Val::Int(n) => n.to_string(),
            Val::Line(l) => {
                out.push(format!("{pad}{l}"));
                continue;
            }
        };
        out.push(format!("{pad}{key}: {text}"));
        if *key == "Filter"
            && !agg
            && let Some(l) = &removed_line
        {
            out.push(l.clone());
        }
    }
    for l in extra {
        out.push(format!("{pad}{l}"));
    }
    if agg
        && d.props.iter().any(|(k, _)| *k == "Filter")
        && let Some(l) = removed_line
    {
        out.push(l);
    }
    if opts.buffers
        && let Some(b) = buffers
        && let Some(line) = buffers_line(&b)
    {
        out.push(format!("{pad}{line}"));
    }
    for c in &d.children {
        print(c, base + 6, false, opts, actual, out);
    }
    for (label, sd) in &d.subplans {
        out.push(format!("{pad}{label}"));
        print(sd, base + 8, false, opts, actual, out);
    }
}

/// The text format's `Buffers:` line, None when no page or block was touched (PostgreSQL
/// omits it): the shared part, then, after a comma when both are there, the temporary one
/// (`Buffers: shared hit=5406, temp read=2450 written=2458`); each counter only when not zero.
fn buffers_line(b: &BufferCounts) -> Option<String> {
    let shared = [
        ("hit", b.hit),
        ("read", b.read),
        ("dirtied", b.dirtied),
        ("written", b.written),
    ];
    let temp = [("read", b.temp_read), ("written", b.temp_written)];
    let mut parts = Vec::new();
    for (name, counts) in [("shared", &shared[..]), ("temp", &temp[..])] {
        if counts.iter().all(|(_, n)| *n == 0) {
            continue;
        }
        let mut part = name.to_string();
        for (word, n) in counts.iter().filter(|(_, n)| *n > 0) {
            part.push_str(&format!(" {word}={n}"));
        }
        parts.push(part);
    }
    (!parts.is_empty()).then(|| format!("Buffers: {}", parts.join(", ")))
}

/// The lines after the plan, in PostgreSQL 15's order: settings, planning buffers, planning
/// time, triggers, execution time.
pub(super) fn summary(s: &Summary, out: &mut Vec<String>) {
    if !s.settings.is_empty() {
        let parts: Vec<String> = s
            .settings
            .iter()
            .map(|(n, v)| format!("{n} = '{v}'"))
            .collect();
        out.push(format!("Settings: {}", parts.join(", ")));
    }
    if let Some(line) = s.planning_buffers.as_ref().and_then(buffers_line) {
        out.push("Planning:".to_string());
        out.push(format!("  {line}"));
    }
    if let Some(ms) = s.planning_ms {
        out.push(format!("Planning Time: {ms:.3} ms"));
    }
    for (name, calls) in s.triggers.iter().flatten() {
        // PostgreSQL checks foreign keys in AFTER triggers and reports each; keel checks
        // them row by row inside the write, whose time includes theirs, so no separate
        // time is printed (PostgreSQL's TIMING OFF form).
        out.push(format!("Trigger for constraint {name}: calls={calls}"));
    }
    if let Some(ms) = s.execution_ms {
        out.push(format!("Execution Time: {ms:.3} ms"));
    }
}
