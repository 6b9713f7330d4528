//! EXPLAIN's text lines: a display tree with its estimates and ANALYZE's figures.

use super::{Actuals, Display, ExplainOptions, NodeActual, Source};

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
