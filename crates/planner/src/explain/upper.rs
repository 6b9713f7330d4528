//! EXPLAIN's nodes above the scans: joins, aggregates, sorts, limits, DISTINCT and set
//! operations.

use super::{
    Display, Est, Explainer, Source, and_text, conjuncts, deparse, index_cond, json, sort_key_text,
    width_of,
};
use crate::cost::{CPU_OPERATOR_COST, CPU_TUPLE_COST};
use crate::plan::{Access, Plan, SetOpKind};
use keel_analyzer::expr::Expr;
use std::sync::Arc;

fn hash_of(build: Display) -> Display {
    let est = Est {
        startup: build.est.total,
        ..build.est
    };
    let mut h = Display::new("Hash", est, build.source_for_hash());
    h.output = build.output.clone();
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
    pub(super) fn node2(&mut self, plan: &Plan, id: usize) -> (Display, Vec<String>) {
        let src = Source::Node(id);
        match plan {
            Plan::Join {
                left,
                right,
                on,
                left_join,
                right_join,
                hash,
                rows,
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
                        let rows = rows.unwrap_or(ld.est.rows.max(rd.est.rows));
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
                            d.prop("Hash Cond", c);
                        }
                        d.children.push(ld);
                        let mut h = hash_of(rd);
                        h.hash_of = Some(id);
                        d.lines_elsewhere = true;
                        d.children.push(h);
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
                        d.prop("Join Filter", f);
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
                left_join,
                ..
            } => {
                let (od, on) = self.node(outer);
                let alias = self.unique_alias(table, alias.as_deref());
                let inner_names = self.table_names(table, alias.as_deref());
                let on_name = self.relation_label(table, alias.as_deref());
                let refname = alias.as_deref().unwrap_or(&table.name).to_string();
                let own: Vec<String> = if self.verbose {
                    inner_names.clone()
                } else {
                    table.columns.iter().map(|c| c.name.clone()).collect()
                };
                let names: Vec<String> = on.iter().chain(&inner_names).cloned().collect();
                let e = self.probe_estimate(table, access, inner_filter.as_ref());
                let inner_est = Est {
                    startup: 0.0,
                    total: e.cost,
                    rows: e.rows.round(),
                    width: table.columns.iter().map(|c| width_of(c.ty.id)).sum(),
                };
                let iname = match access {
                    Access::Index { bitmap: true, .. } => format!("Bitmap Heap Scan on {on_name}"),
                    Access::Index {
                        index, index_only, ..
                    } => {
                        let kind = super::index_scan_name(*index_only);
                        format!("{kind} using {} on {on_name}", index.name)
                    }
                    Access::Seq => format!("Seq Scan on {on_name}"),
                };
                let outer_id = match od.source {
                    Source::Node(n) | Source::Filtered { out: n, .. } => n,
                    _ => id,
                };
                // The join's key equalities are the probe's Index Cond; keel re-checks them
                // in the join filter, PostgreSQL does not show them twice.
                let (_, joined) = index_cond(access, &on, &inner_names);
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
                let source = if join_rest.is_empty() && inner_filter.is_none() && !left_join {
                    Source::Probe {
                        outer: outer_id,
                        join: id,
                    }
                } else {
                    Source::None
                };
                let mut inner = Display::new(iname, inner_est, source);
                inner.output = Some(inner_names.clone());
                if let Access::Index {
                    index,
                    bitmap: true,
                    ..
                } = access
                {
                    inner.node_type = "Bitmap Heap Scan".to_string();
                    let mut child = Display::new(
                        format!("Bitmap Index Scan on {}", index.name),
                        Est {
                            width: 0,
                            ..inner_est
                        },
                        Source::None,
                    );
                    child.node_type = "Bitmap Index Scan".to_string();
                    child.target = vec![("Index Name", json::Field::Str(index.name.clone()))];
                    if let (Some(c), _) = index_cond(access, &on, &own) {
                        child.prop("Index Cond", c);
                    }
                    inner.children.push(child);
                } else if let Access::Index {
                    index, index_only, ..
                } = access
                {
                    inner.node_type = super::index_scan_name(*index_only).to_string();
                    inner.target = vec![
                        ("Scan Direction", json::Field::Str("Forward".to_string())),
                        ("Index Name", json::Field::Str(index.name.clone())),
                    ];
                } else {
                    inner.node_type = "Seq Scan".to_string();
                }
                inner
                    .target
                    .extend(self.target_fields("Relation Name", &table.name, &refname));
                let (cond, keys) = index_cond(access, &on, &own);
                if let Some(c) = cond {
                    let key = if matches!(access, Access::Index { bitmap: true, .. }) {
                        "Recheck Cond"
                    } else {
                        "Index Cond"
                    };
                    inner.prop(key, c);
                }
                if let Some(f) = inner_filter
                    .as_ref()
                    .and_then(|f| scan_filter(f, &own, &keys))
                {
                    inner.prop("Filter", f);
                }
                let rows = od.est.rows * inner_est.rows;
                let est = Est {
                    startup: od.est.startup,
                    total: od.est.total + od.est.rows * inner_est.total,
                    rows: rows.round().max(1.0),
                    width: od.est.width + inner_est.width,
                };
                let name = if *left_join {
                    "Nested Loop Left Join"
                } else {
                    "Nested Loop"
                };
                let mut d = Display::new(name, est, src);
                if let Some(f) = and_text(&join_rest) {
                    d.prop("Join Filter", f);
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
                    d.prop("Hash Cond", c);
                }
                d.children.push(ld);
                d.children.push(hash_of(rd));
                (d, ln)
            }
            Plan::Agg {
                input,
                group,
                aggs,
                dependent,
            } => {
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
                self.last_agg = Some(names.clone());
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
                    let keys: Vec<String> = names[..group.len()]
                        .iter()
                        .enumerate()
                        .filter(|(k, _)| !dependent.get(*k).copied().unwrap_or(false))
                        .map(|(_, n)| n.clone())
                        .collect();
                    d.list("Group Key", keys.clone());
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
                d.list("Sort Key", k.clone());
                d.children.push(cd);
                (d, cn)
            }
            Plan::LockRows { input, .. } => {
                let (cd, cn) = self.node(input);
                // PostgreSQL charges cpu_tuple_cost per row locked.
                let est = Est {
                    total: cd.est.total + CPU_TUPLE_COST * cd.est.rows,
                    ..cd.est
                };
                let mut d = Display::new("LockRows", est, src);
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
                d.list("Group Key", keys.clone());
                d.children.push(cd);
                (d, cn)
            }
            Plan::Append {
                table,
                alias,
                children,
                prune,
            } => {
                // One partition left: PostgreSQL shows its scan alone; none: a Result that
                // returns nothing.
                if let [only] = children.as_slice() {
                    return self.node(only);
                }
                // Pruned when the statement starts: only the children that run are shown
                // (and named), the others' node numbers skipped.
                let kept = prune
                    .as_ref()
                    .and_then(|p| self.run_pruned.get(&(Arc::as_ptr(p) as usize)));
                let mut ds = Vec::with_capacity(children.len());
                let base = alias.as_deref().unwrap_or(&table.name);
                for (i, c) in children.iter().enumerate() {
                    let (d, _) = match kept {
                        Some(k) if !k.contains(&i) => {
                            self.next_id += super::count_nodes(c);
                            continue;
                        }
                        // PostgreSQL numbers the scans it shows: `p_1`, `p_2`, ... among
                        // the children that run.
                        Some(_) => {
                            let mut c = c.clone();
                            if let Plan::Scan { alias, .. } | Plan::Append { alias, .. } = &mut c {
                                *alias = Some(format!("{base}_{}", ds.len() + 1));
                            }
                            self.node(&c)
                        }
                        None => self.node(c),
                    };
                    ds.push(d);
                }
                let removed = children.len() - ds.len();
                // Nodes above read the partitioned table's columns, named as PostgreSQL
                // names them: after the table's own range-table entry, not a partition's.
                let q = alias.as_deref().unwrap_or(&table.name);
                let names: Vec<String> = (table.columns.iter())
                    .map(|c| format!("{q}.{}", c.name))
                    .collect();
                let est = Est {
                    startup: ds.first().map_or(0.0, |d| d.est.startup),
                    total: ds.iter().map(|d| d.est.total).sum(),
                    rows: ds.iter().map(|d| d.est.rows).sum::<f64>().max(1.0),
                    width: ds.first().map_or(0, |d| d.est.width),
                };
                if ds.is_empty() && kept.is_none() {
                    let mut d = Display::new("Result", est, src);
                    d.prop("One-Time Filter", "false");
                    return (d, names);
                }
                let mut d = Display::new("Append", est, src);
                if removed > 0 {
                    d.int_prop("Subplans Removed", removed as i64);
                }
                d.children = ds;
                (d, names)
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
                        d.list("Group Key", ln.clone());
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
            | Plan::Function { .. }
            | Plan::SystemView(_)
            | Plan::NamedRows { .. }
            | Plan::Filter { .. }
            | Plan::Project { .. } => self.node(plan),
        }
    }
}

/// How a node above names a computed output column: PostgreSQL prints a reference to a
/// lower node's non-column target entry in parentheses.
pub(super) fn output_name(e: &Expr, input: &[String]) -> String {
    match e {
        Expr::Col(..) => deparse(e, input),
        _ => format!("({})", deparse(e, input)),
    }
}

/// A scan's Filter text: its conjuncts other than those in `covered` (the Index Cond's),
/// in PostgreSQL's order. PostgreSQL turns `column = constant` into an equivalence class and
/// re-adds it to the scan's quals after the others, so those equalities come last.
pub(super) fn scan_filter(filter: &Expr, own: &[String], covered: &[String]) -> Option<String> {
    let is_const_eq = |e: &Expr| match e.uncompiled() {
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
