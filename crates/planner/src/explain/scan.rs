//! EXPLAIN of scans and the plan walk: a table scan's display (Seq, Index, Index Only and
//! Bitmap Heap Scans with their conditions) and `node`, which dispatches on the plan node.

use super::*;
use keel_analyzer::srf::SetFunc;

impl Explainer<'_> {
    /// A table scan through `access` keeping rows that pass `filter`.
    pub(super) fn scan(
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
        let unique = self.unique_alias(table, alias);
        let alias = unique.as_deref();
        let names = self.table_names(table, alias);
        let on_name = self.relation_label(table, alias);
        let refname = alias.unwrap_or(&table.name).to_string();
        // Under VERBOSE PostgreSQL qualifies them too.
        let own: Vec<String> = if self.verbose {
            names.clone()
        } else {
            table.columns.iter().map(|c| c.name.clone()).collect()
        };
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
                d.node_type = "Seq Scan".to_string();
                d.target = self.target_fields("Relation Name", &table.name, &refname);
                if let Some(f) = filter.and_then(|f| scan_filter(f, &own, &[])) {
                    d.prop("Filter", f);
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
                d.node_type = "Bitmap Heap Scan".to_string();
                d.target = self.target_fields("Relation Name", &table.name, &refname);
                let (cond, keys) = index_cond(access, &[], &own);
                let heap = match source {
                    Source::Node(n) | Source::Filtered { out: n, .. } => Some(n),
                    _ => None,
                };
                let mut child = Display::new(
                    format!("Bitmap Index Scan on {}", index.name),
                    Est { width: 0, ..est },
                    heap.map_or(Source::None, |heap| Source::BitmapIndex { heap }),
                );
                child.node_type = "Bitmap Index Scan".to_string();
                child.target = vec![("Index Name", json::Field::Str(index.name.clone()))];
                if let Some(c) = cond {
                    d.prop("Recheck Cond", c.clone());
                    child.prop("Index Cond", c);
                }
                if let Some(f) = filter.and_then(|f| scan_filter(f, &own, &keys)) {
                    d.prop("Filter", f);
                    d.filtered = true;
                }
                d.children.push(child);
                d
            }
            Access::Index {
                index,
                index_only,
                backward,
                ..
            } => {
                let kind = index_scan_name(*index_only);
                let dir = if *backward { " Backward" } else { "" };
                let mut d = Display::new(
                    format!("{kind}{dir} using {} on {on_name}", index.name),
                    est,
                    source,
                );
                d.node_type = kind.to_string();
                d.target = vec![
                    (
                        "Scan Direction",
                        json::Field::Str(scan_direction(*backward)),
                    ),
                    ("Index Name", json::Field::Str(index.name.clone())),
                ];
                d.target
                    .extend(self.target_fields("Relation Name", &table.name, &refname));
                let (cond, keys) = index_cond(access, &[], &own);
                if let Some(c) = cond {
                    d.prop("Index Cond", c);
                }
                if let Some(f) = filter.and_then(|f| scan_filter(f, &own, &keys)) {
                    d.prop("Filter", f);
                    d.filtered = true;
                }
                d
            }
        };
        self.subqueries(&mut d, &names, filter);
        (d, names)
    }

    /// The display node of `plan` and the names of its output columns (its VERBOSE
    /// `Output:`; a projection folded into a node replaces the node's).
    pub(super) fn node(&mut self, plan: &Plan) -> (Display, Vec<String>) {
        let (mut d, names) = self.node1(plan);
        // An aggregate node prints its own aggregates bare, and a node a projection merged
        // into the expressions it computes; nodes above reference them in parentheses (the
        // names returned).
        let own = match self.project_own.take() {
            Some(own) => own,
            None => bare_aggregates(&d, &names, self.last_agg.as_deref()),
        };
        d.output = Some(own);
        (d, names)
    }

    pub(super) fn node1(&mut self, plan: &Plan) -> (Display, Vec<String>) {
        let id = self.take_id();
        let src = Source::Node(id);
        match plan {
            Plan::Scan {
                table,
                alias,
                access,
                filter,
                ..
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
            Plan::Function { funcs, ordinality } => {
                let width: i64 = funcs
                    .iter()
                    .map(|f| width_of(f.ty) * f.width() as i64)
                    .sum();
                let est = Est {
                    startup: 0.0,
                    total: 10.0,
                    rows: if funcs.iter().all(|f| f.func == SetFunc::Series) {
                        1000.0
                    } else {
                        100.0
                    },
                    width: width + if *ordinality { 8 } else { 0 },
                };
                let name = funcs.first().map_or("unnest", |f| f.display_name());
                let user = funcs.first().is_some_and(|f| f.user.is_some());
                let label = if self.verbose {
                    format!("{}.{name}", if user { "public" } else { "pg_catalog" })
                } else {
                    name.to_string()
                };
                let mut d = Display::new(format!("Function Scan on {label}"), est, src);
                d.node_type = "Function Scan".to_string();
                d.target = self.target_fields("Function Name", name, name);
                (d, vec![name.to_string()])
            }
            // Keel makes a system view's rows itself, as a function would (PostgreSQL expands
            // the view into scans of its catalogs).
            Plan::SystemView(view) => {
                let cols = view.columns();
                let est = Est {
                    startup: 0.0,
                    total: 10.0,
                    rows: 1000.0,
                    width: cols.iter().map(|(_, t)| width_of(*t)).sum(),
                };
                let name = view.name();
                let mut d = Display::new(format!("Function Scan on {name}"), est, src);
                d.node_type = "Function Scan".to_string();
                d.target = self.target_fields("Function Name", name, name);
                let names = cols.iter().map(|(c, _)| c.to_string()).collect();
                (d, names)
            }
            // PostgreSQL sizes a transition table it does not know as 1000 rows, and names
            // neither it nor its alias in the node's title.
            Plan::NamedRows { name, table, alias } => {
                let est = Est {
                    startup: 0.0,
                    total: 1000.0 * CPU_TUPLE_COST,
                    rows: 1000.0,
                    width: table.columns.iter().map(|c| width_of(c.ty.id)).sum(),
                };
                let mut d = Display::new("Named Tuplestore Scan", est, src);
                d.node_type = "Named Tuplestore Scan".to_string();
                let names = self.table_names(table, Some(alias.as_deref().unwrap_or(name)));
                (d, names)
            }
            Plan::Filter { input, pred } => {
                self.agg_raw = None;
                let (mut d, names) = self.node(input);
                let shown = bare_aggregates(&d, &names, self.agg_raw.take().as_deref());
                d.prop("Filter", deparse(pred, &shown));
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
                if srf.is_none() && !matches!(input.as_ref(), Plan::Agg { .. }) {
                    // A column passed through keeps the name its node printed it under.
                    let own = exprs.iter().map(|e| match e {
                        Expr::Col(i, _)
                            if let Some(o) = d.output.as_ref().and_then(|o| o.get(*i)) =>
                        {
                            o.clone()
                        }
                        _ => deparse(e, &in_names),
                    });
                    self.project_own = Some(own.collect());
                }
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
