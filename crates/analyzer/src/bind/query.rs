//! SELECT binding and planning.

use super::{AggCtx, Binder, Scope, ScopeCol, fold};
use crate::expr::Expr;
use crate::query::{OutColumn, Query, Rel, SortKey};
use crate::srf::ProjectSet;
use keel_catalog::TableDef;
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::CastContext;
use keel_types::{Datum, SqlType, TypeId};
use sqlparser::ast::{self, Spanned};

/// The most entries a select list may have (PostgreSQL's MaxTupleAttributeNumber).
pub const MAX_TARGET_LIST: usize = 1664;

impl Binder<'_> {
    pub fn query(&mut self, q: &ast::Query) -> PgResult<Query> {
        keel_common::stack::check()?;
        self.query_depth += 1;
        let pushed = match &q.with {
            Some(w) => match self.push_ctes(w) {
                Ok(n) => n,
                Err(e) => {
                    self.query_depth -= 1;
                    return Err(e);
                }
            },
            None => 0,
        };
        let r = self.query_body(q);
        self.query_depth -= 1;
        self.ctes.truncate(self.ctes.len() - pushed);
        r
    }

    fn query_body(&mut self, q: &ast::Query) -> PgResult<Query> {
        if q.fetch.is_some() {
            return Err(PgError::unsupported("FETCH FIRST"));
        }
        let locking = self.locking(q)?;
        let (mut plan, mut columns, sort_scope) = match q.body.as_ref() {
            ast::SetExpr::Select(s) => self.select(s, q.order_by.as_ref())?,
            ast::SetExpr::Values(v) => {
                let (p, c) = self.values(v, None)?;
                (p, c, None)
            }
            ast::SetExpr::Query(inner) => {
                let p = self.query(inner)?;
                (p.root, p.columns, None)
            }
            other => {
                let (p, c) = self.set_expr(other, false)?;
                (p, c, None)
            }
        };
        if sort_scope.is_none()
            && let Some(ob) = &q.order_by
        {
            // ORDER BY over VALUES / nested query: output columns only.
            let keys = self.order_keys_on_output(ob, &columns, &[])?;
            plan = Rel::Sort {
                input: Box::new(plan),
                keys,
            };
        }
        if let Some(l) = locking {
            plan = self.lock_rows(plan, l)?;
        }
        if let Some(lc) = &q.limit_clause {
            let (limit, offset) = match lc {
                ast::LimitClause::LimitOffset { limit, offset, .. } => {
                    (limit.clone(), offset.as_ref().map(|o| o.value.clone()))
                }
                ast::LimitClause::OffsetCommaLimit { offset, limit } => {
                    (Some(limit.clone()), Some(offset.clone()))
                }
            };
            let scope = Scope::default();
            let int8 = SqlType::new(TypeId::Int8);
            let limit = match limit {
                Some(ast::Expr::Value(v)) if matches!(v.value, ast::Value::Null) => None,
                Some(l) => Some(self.expr_as(&l, int8, &scope, CastContext::Implicit)?),
                None => None,
            };
            let offset = match offset {
                Some(o) => Some(self.expr_as(&o, int8, &scope, CastContext::Implicit)?),
                None => None,
            };
            plan = Rel::Limit {
                input: Box::new(plan),
                limit,
                offset,
            };
        }
        for c in &mut columns {
            if c.ty == TypeId::Unknown {
                c.ty = TypeId::Text;
            }
        }
        Ok(Query {
            root: plan,
            columns,
            subplan_ids: self.next_subplan,
            non_table_rtes: self.non_table_rtes.len(),
        })
    }

    /// VALUES lists; `types` forces column types (INSERT targets), except where a type is
    /// Unknown.
    pub fn values(
        &mut self,
        v: &ast::Values,
        types: Option<&[SqlType]>,
    ) -> PgResult<(Rel, Vec<OutColumn>)> {
        let scope = Scope::default();
        let mut rows = Vec::new();
        let width = v.rows.first().map_or(0, |r| r.content.len());
        for r in &v.rows {
            if r.content.len() != width {
                return Err(self.at(
                    PgError::new(
                        sqlstate::SYNTAX_ERROR,
                        "VALUES lists must all be the same length",
                    ),
                    r.content
                        .first()
                        .map_or(sqlparser::tokenizer::Span::empty(), |e| e.span()),
                ));
            }
            let mut row = Vec::new();
            for (i, e) in r.content.iter().enumerate() {
                if matches!(e, ast::Expr::Identifier(id) if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("default"))
                {
                    // DEFAULT: a placeholder; INSERT substitutes the column default.
                    let ty = types.and_then(|t| t.get(i)).map_or(TypeId::Text, |t| t.id);
                    row.push(Expr::Const(Datum::Null, ty));
                    continue;
                }
                let b = match types.and_then(|t| t.get(i)) {
                    // Unknown: no type to force (an INSERT's subscripted column converts
                    // its value itself).
                    Some(t) if t.id == TypeId::Unknown => self.expr(e, &scope, &mut None)?,
                    Some(t) if !matches!(e, ast::Expr::Identifier(id) if id.value.eq_ignore_ascii_case("default")) => {
                        self.expr_as(e, *t, &scope, CastContext::Assignment)?
                    }
                    _ => self.expr(e, &scope, &mut None)?,
                };
                row.push(b);
            }
            rows.push(row);
        }
        // Each column has its rows' common type.
        let mut columns = Vec::new();
        for c in 0..width {
            let ty =
                keel_types::common_type::common_type_of("VALUES", rows.iter().map(|r| r[c].ty()))?;
            for r in rows.iter_mut() {
                let e = std::mem::replace(&mut r[c], Expr::Const(Datum::Null, ty));
                r[c] = self.coerce_in(e, SqlType::new(ty), CastContext::Implicit)?;
            }
            columns.push(OutColumn {
                name: format!("column{}", c + 1),
                ty,
                typmod: -1,
                table_oid: 0,
                attnum: 0,
            });
        }
        Ok((Rel::Values { rows }, columns))
    }

    /// Binds a SELECT; returns the plan, the output columns, and Some(()) when ORDER BY was
    /// handled here.
    pub(crate) fn select(
        &mut self,
        s: &ast::Select,
        order_by: Option<&ast::OrderBy>,
    ) -> PgResult<(Rel, Vec<OutColumn>, Option<()>)> {
        let keep_unknown = std::mem::take(&mut self.keep_unknown);
        if s.into.is_some()
            || !s.lateral_views.is_empty()
            || s.qualify.is_some()
            || !s.named_window.is_empty()
        {
            return Err(PgError::unsupported("this SELECT form"));
        }
        // FROM: comma-separated items are cross joins.
        let (mut plan, scope) = if s.from.is_empty() {
            (Rel::Values { rows: vec![vec![]] }, Scope::default())
        } else {
            let mut it = s.from.iter();
            let first = it.next().ok_or_else(|| PgError::internal("empty FROM"))?;
            let (mut plan, mut scope) = self.bind_from_joins(first)?;
            for twj in it {
                let lateral = if twj.joins.is_empty() {
                    self.lateral_function(&twj.relation, &mut plan, &scope)?
                } else {
                    None
                };
                let (rp, rs) = match lateral {
                    Some((rp @ Rel::Project { srf: Some(_), .. }, rs)) => {
                        (plan, scope) = (rp, rs);
                        continue;
                    }
                    Some(item) => item,
                    None => self.bind_from_joins(twj)?,
                };
                let rw = rs.cols.len();
                scope.cols.extend(rs.cols);
                plan = Rel::Join {
                    left: Box::new(plan),
                    right: Box::new(rp),
                    on: None,
                    left_join: false,
                    right_join: false,
                    left_width: scope.cols.len() - rw,
                    right_width: rw,
                };
            }
            (plan, scope)
        };
        if let Some(w) = &s.selection {
            let clause = self.srf_clause.replace("WHERE");
            let pred = self.bool_expr(w, &scope, &mut None);
            self.srf_clause = clause;
            let pred = pred?;
            plan = Rel::Filter {
                input: Box::new(plan),
                pred,
            };
        }
        let group_asts: Vec<ast::Expr> = match &s.group_by {
            ast::GroupByExpr::Expressions(e, mods) if mods.is_empty() => e.clone(),
            _ => return Err(PgError::unsupported("GROUP BY ALL / ROLLUP / CUBE")),
        };
        let (distinct, distinct_on) = match &s.distinct {
            None | Some(ast::Distinct::All) => (false, None),
            Some(ast::Distinct::Distinct) => (true, None),
            Some(ast::Distinct::On(on)) => (false, Some(on)),
        };
        // First try without aggregation; re-bind as an aggregate query if needed. Without
        // aggregates the trial is the result: binding the select list a second time would
        // double the work at every level of nested scalar subqueries (2^n for n levels).
        let mut trial = None;
        let aggregated = !group_asts.is_empty() || s.having.is_some() || {
            self.agg_seen = false;
            let saved = self.params.clone();
            let r = self.projection(&s.projection, &scope, &mut None);
            let seen = self.agg_seen;
            if seen {
                self.params = saved;
            } else {
                trial = Some(r?);
            }
            seen
        };
        let mut agg_ctx = AggCtx {
            input: scope.clone(),
            group_asts: vec![],
            group: vec![],
            aggs: vec![],
        };
        let out_scope = if aggregated {
            Scope::default()
        } else {
            scope.clone()
        };
        if aggregated {
            // GROUP BY items: ordinals and output aliases refer to select items.
            for g in &group_asts {
                let target = self
                    .resolve_output_ref(g, &s.projection, None)?
                    .unwrap_or_else(|| g.clone());
                let b = self.expr(&target, &scope, &mut None)?;
                agg_ctx.group_asts.push(target);
                agg_ctx.group.push(b);
            }
        }
        let mut actx = if aggregated { Some(&mut agg_ctx) } else { None };
        let (mut exprs, mut columns, srf) = match trial {
            Some(t) => t,
            None => self.projection(&s.projection, &out_scope, &mut actx)?,
        };
        // PostgreSQL's MaxTupleAttributeNumber: a row it builds has at most 1664 columns.
        if exprs.len() > MAX_TARGET_LIST {
            return Err(PgError::new(
                sqlstate::TOO_MANY_COLUMNS,
                format!("target lists can have at most {MAX_TARGET_LIST} entries"),
            ));
        }
        let having = match &s.having {
            Some(h) => Some(self.bool_expr(h, &out_scope, &mut actx)?),
            None => None,
        };
        // ORDER BY, bound in the same scope as the select list.
        let mut keys = Vec::new();
        let mut post_sort = None;
        if let Some(ob) = order_by {
            if distinct {
                post_sort = Some(self.order_keys_on_output(ob, &columns, &s.projection)?);
            } else {
                let items = order_items(ob)?;
                for (e, desc, nulls_first) in items {
                    // `ORDER BY n`: the n-th output expression (wildcards expanded).
                    if let ast::Expr::Value(v) = e
                        && let ast::Value::Number(n, _) = &v.value
                    {
                        let i: usize = n.parse().unwrap_or(0);
                        let Some(x) = exprs.get(i.wrapping_sub(1)) else {
                            return Err(self.at(
                                PgError::new(
                                    sqlstate::INVALID_COLUMN_REFERENCE,
                                    format!("ORDER BY position {n} is not in select list"),
                                ),
                                e.span(),
                            ));
                        };
                        keys.push(SortKey {
                            expr: x.clone(),
                            desc,
                            nulls_first,
                        });
                        continue;
                    }
                    let target = self.resolve_output_ref(e, &s.projection, Some("ORDER BY"))?;
                    let expr = match target {
                        Some(t) => self.expr(&t, &out_scope, &mut actx)?,
                        None => self.expr(e, &out_scope, &mut actx)?,
                    };
                    keys.push(SortKey {
                        expr,
                        desc,
                        nulls_first,
                    });
                }
            }
        }
        let exprs_on = match distinct_on {
            Some(on) => {
                let mut v = Vec::new();
                for e in on {
                    let target = self.resolve_output_ref(e, &s.projection, Some("DISTINCT ON"))?;
                    v.push(match target {
                        Some(t) => self.expr(&t, &out_scope, &mut actx)?,
                        None => self.expr(e, &out_scope, &mut actx)?,
                    });
                }
                Some(v)
            }
            None => None,
        };
        if aggregated {
            plan = Rel::Agg {
                input: Box::new(plan),
                group: agg_ctx.group,
                aggs: agg_ctx.aggs,
            };
            if let Some(h) = having {
                plan = Rel::Filter {
                    input: Box::new(plan),
                    pred: h,
                };
            }
        }
        // DISTINCT ON without ORDER BY sorts by its expressions, as PostgreSQL's plan for it
        // does, so its groups come out in that order.
        if keys.is_empty()
            && let Some(on) = &exprs_on
        {
            keys = on
                .iter()
                .map(|e| SortKey {
                    expr: e.clone(),
                    desc: false,
                    nulls_first: false,
                })
                .collect();
        }
        if !keys.is_empty() {
            plan = Rel::Sort {
                input: Box::new(plan),
                keys,
            };
        }
        if let Some(exprs_on) = exprs_on {
            // DISTINCT ON: the first row (in ORDER BY order) of each group of equal keys.
            plan = Rel::Distinct {
                input: Box::new(plan),
                types: exprs_on.iter().map(Expr::ty).collect(),
                on: exprs_on,
            };
        }
        for e in exprs.iter_mut() {
            // Set-operation operands keep unknown literals until the column types are unified.
            if e.ty() == TypeId::Unknown && !(keep_unknown && matches!(e, Expr::Const(..))) {
                *e =
                    self.coerce_in(e.clone(), SqlType::new(TypeId::Text), CastContext::Implicit)?;
            }
        }
        for (c, e) in columns.iter_mut().zip(&exprs) {
            c.ty = e.ty();
            if c.typmod < 0 {
                c.typmod = e.typmod();
            }
        }
        plan = Rel::Project {
            input: Box::new(plan),
            exprs,
            srf,
        };
        if distinct {
            plan = Rel::Distinct {
                input: Box::new(plan),
                types: columns.iter().map(|c| c.ty).collect(),
                on: vec![],
            };
            if let Some(k) = post_sort {
                plan = Rel::Sort {
                    input: Box::new(plan),
                    keys: k,
                };
            }
        }
        Ok((plan, columns, Some(())))
    }

    /// What an ORDER BY, DISTINCT ON (`clause` names it) or GROUP BY (`clause` None) item
    /// names among the select items: an ordinal or an output name; None for an expression
    /// over the input.
    fn resolve_output_ref(
        &self,
        e: &ast::Expr,
        proj: &[ast::SelectItem],
        clause: Option<&str>,
    ) -> PgResult<Option<ast::Expr>> {
        match e {
            ast::Expr::Value(v) => {
                if let ast::Value::Number(n, _) = &v.value {
                    let i: usize = n.parse().unwrap_or(0);
                    return match proj.get(i.wrapping_sub(1)) {
                        Some(ast::SelectItem::UnnamedExpr(x))
                        | Some(ast::SelectItem::ExprWithAlias { expr: x, .. }) => {
                            Ok(Some(x.clone()))
                        }
                        Some(_) => Err(PgError::unsupported(
                            "ORDER BY/GROUP BY position of a wildcard",
                        )),
                        None => Err(self.at(
                            PgError::new(
                                sqlstate::INVALID_COLUMN_REFERENCE,
                                format!("ORDER BY position {n} is not in select list"),
                            ),
                            e.span(),
                        )),
                    };
                }
                Ok(None)
            }
            // GROUP BY: an output alias (input columns are looked up first by the caller).
            ast::Expr::Identifier(id) if clause.is_none() => {
                let name = fold(id);
                for item in proj {
                    if let ast::SelectItem::ExprWithAlias { expr, alias } = item
                        && fold(alias) == name
                    {
                        return Ok(Some(expr.clone()));
                    }
                }
                Ok(None)
            }
            // ORDER BY / DISTINCT ON (SQL92's rule, PostgreSQL's findTargetlistEntrySQL92):
            // a bare name is an output column's name, aliased or not; several output columns
            // of that name with different expressions make it ambiguous.
            ast::Expr::Identifier(id) => {
                let name = fold(id);
                let mut found: Option<&ast::Expr> = None;
                for item in proj {
                    let (expr, item_name) = match item {
                        ast::SelectItem::ExprWithAlias { expr, alias } => (expr, fold(alias)),
                        ast::SelectItem::UnnamedExpr(expr) => (expr, output_name(expr)),
                        _ => continue,
                    };
                    if item_name != name {
                        continue;
                    }
                    match found {
                        Some(f) if f != expr => {
                            return Err(self.at(
                                PgError::new(
                                    sqlstate::AMBIGUOUS_COLUMN,
                                    format!("{} \"{name}\" is ambiguous", clause.unwrap_or("")),
                                ),
                                e.span(),
                            ));
                        }
                        Some(_) => {}
                        None => found = Some(expr),
                    }
                }
                Ok(found.cloned())
            }
            _ => Ok(None),
        }
    }

    fn order_keys_on_output(
        &mut self,
        ob: &ast::OrderBy,
        columns: &[OutColumn],
        proj: &[ast::SelectItem],
    ) -> PgResult<Vec<SortKey>> {
        let mut keys = Vec::new();
        for (e, desc, nulls_first) in order_items(ob)? {
            let idx = match e {
                ast::Expr::Value(v) => match &v.value {
                    ast::Value::Number(n, _) => n.parse::<usize>().ok().filter(|i| *i >= 1 && *i <= columns.len()).map(|i| i - 1),
                    _ => None,
                },
                ast::Expr::Identifier(id) => columns.iter().position(|c| c.name == fold(id)),
                _ => None,
            }
            .or_else(|| {
                proj.iter().position(|p| matches!(p, ast::SelectItem::UnnamedExpr(x) | ast::SelectItem::ExprWithAlias { expr: x, .. } if x == e))
            });
            let Some(i) = idx else {
                return Err(self.at(
                    PgError::new(
                        sqlstate::INVALID_COLUMN_REFERENCE,
                        "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
                    ),
                    e.span(),
                ));
            };
            keys.push(SortKey {
                expr: Expr::Col(i, columns[i].ty),
                desc,
                nulls_first,
            });
        }
        Ok(keys)
    }

    /// The select list: its expressions, output columns and set-returning calls.
    fn projection(
        &mut self,
        items: &[ast::SelectItem],
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<(Vec<Expr>, Vec<OutColumn>, Option<ProjectSet>)> {
        let outer = self.srf_sink.replace((self.query_depth, Vec::new()));
        let r = self.projection_items(items, scope, agg);
        let funcs = std::mem::replace(&mut self.srf_sink, outer).map_or(Vec::new(), |s| s.1);
        let (exprs, cols) = r?;
        let srf = (!funcs.is_empty()).then_some(ProjectSet { funcs });
        Ok((exprs, cols, srf))
    }

    fn projection_items(
        &mut self,
        items: &[ast::SelectItem],
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<(Vec<Expr>, Vec<OutColumn>)> {
        let mut exprs = Vec::new();
        let mut cols = Vec::new();
        for item in items {
            match item {
                ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                    let qual = match item {
                        ast::SelectItem::QualifiedWildcard(
                            ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                            _,
                        ) => Some(super::object_name(n).1),
                        ast::SelectItem::QualifiedWildcard(..) => {
                            return Err(PgError::unsupported("this wildcard"));
                        }
                        _ => None,
                    };
                    if agg.is_some() {
                        return Err(PgError::new(
                            sqlstate::GROUPING_ERROR,
                            "SELECT * with GROUP BY is not supported",
                        ));
                    }
                    let mut any = false;
                    for (i, c) in scope.cols.iter().enumerate() {
                        if (qual.is_none() && !c.hidden) || (qual.is_some() && c.qualifier == qual)
                        {
                            any = true;
                            exprs.push(Expr::Col(i, c.ty));
                            cols.push(OutColumn {
                                name: c.name.clone(),
                                ty: c.ty,
                                typmod: c.typmod,
                                table_oid: c.table_oid,
                                attnum: c.attnum,
                            });
                        }
                    }
                    if !any && qual.is_some() {
                        return Err(PgError::new(
                            sqlstate::UNDEFINED_TABLE,
                            format!(
                                "missing FROM-clause entry for table \"{}\"",
                                qual.unwrap_or_default()
                            ),
                        ));
                    }
                    if items.len() == 1 && scope.cols.is_empty() {
                        return Err(PgError::new(
                            sqlstate::SYNTAX_ERROR,
                            "SELECT * with no tables specified is not valid",
                        ));
                    }
                }
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                    let alias = match item {
                        ast::SelectItem::ExprWithAlias { alias, .. } => Some(fold(alias)),
                        _ => None,
                    };
                    let b = self.expr(e, scope, agg)?;
                    let (name, table_oid, attnum, typmod) = match (&b, agg.is_none()) {
                        (Expr::Col(i, _), true) => {
                            let c = &scope.cols[*i];
                            (c.name.clone(), c.table_oid, c.attnum, c.typmod)
                        }
                        _ => (output_name(e), 0, 0, b.typmod()),
                    };
                    cols.push(OutColumn {
                        name: alias.unwrap_or(name),
                        ty: b.ty(),
                        typmod,
                        table_oid,
                        attnum,
                    });
                    exprs.push(b);
                }
                ast::SelectItem::ExprWithAliases { .. } => {
                    return Err(PgError::unsupported("multiple aliases"));
                }
            }
        }
        Ok((exprs, cols))
    }
}

fn order_items(ob: &ast::OrderBy) -> PgResult<Vec<(&ast::Expr, bool, bool)>> {
    match &ob.kind {
        ast::OrderByKind::Expressions(list) => Ok(list
            .iter()
            .map(|o| {
                let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
                // PostgreSQL: NULLS LAST for ASC, NULLS FIRST for DESC by default.
                let nulls_first = o.options.nulls_first.unwrap_or(desc);
                (&o.expr, desc, nulls_first)
            })
            .collect()),
        ast::OrderByKind::All(_) => Err(PgError::unsupported("ORDER BY ALL")),
    }
}

/// The column name PostgreSQL gives an unaliased select item.
pub(crate) fn output_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(id) => fold(id),
        ast::Expr::CompoundIdentifier(ids) => ids.last().map(fold).unwrap_or_default(),
        ast::Expr::Function(f) => {
            let n = super::object_name(&f.name).1;
            match n.as_str() {
                "current_timestamp" => "current_timestamp".into(),
                _ => n,
            }
        }
        // PostgreSQL's FigureColname: the operand's name when it has a strong one (a column,
        // a function, a scalar subquery's column), else the type's name (also over another
        // cast or a CASE, whose names are weak ones).
        ast::Expr::Cast {
            expr, data_type, ..
        } => {
            if strong_name(expr) {
                return output_name(expr);
            }
            let t = data_type.to_string().to_lowercase();
            // An array type is named after its element type (`'{1}'::int[]` is int4).
            let t = t.trim_end_matches("[]").trim_end_matches(" array");
            let base = t.split('(').next().unwrap_or("").trim().to_string();
            match base.as_str() {
                "int" | "integer" => "int4".into(),
                "bigint" => "int8".into(),
                "smallint" => "int2".into(),
                "boolean" => "bool".into(),
                "character varying" => "varchar".into(),
                "char" | "character" => "bpchar".into(),
                "double precision" => "float8".into(),
                "real" => "float4".into(),
                _ => base,
            }
        }
        ast::Expr::Nested(inner) => output_name(inner),
        ast::Expr::Subquery(q) => match q.body.as_ref() {
            ast::SetExpr::Select(s) => match s.projection.first() {
                Some(ast::SelectItem::ExprWithAlias { alias, .. }) => fold(alias),
                Some(ast::SelectItem::UnnamedExpr(x)) => output_name(x),
                _ => "?column?".into(),
            },
            _ => "?column?".into(),
        },
        ast::Expr::Exists { .. } => "exists".into(),
        ast::Expr::Array(_) => "array".into(),
        ast::Expr::Tuple(_) => "row".into(),
        // `t.a[1]` and `c[2].f` are named after the last field name in the chain.
        ast::Expr::CompoundFieldAccess { root, access_chain } => {
            match access_chain
                .iter()
                .rfind(|a| matches!(a, ast::AccessExpr::Dot(_)))
            {
                Some(ast::AccessExpr::Dot(last)) => output_name(last),
                _ => output_name(root),
            }
        }
        ast::Expr::Case { .. } => "case".into(),
        ast::Expr::Substring {
            shorthand: true, ..
        } => "substr".into(),
        ast::Expr::Substring { .. } => "substring".into(),
        ast::Expr::Position { .. } => "position".into(),
        ast::Expr::Ceil { .. } => "ceil".into(),
        ast::Expr::Floor { .. } => "floor".into(),
        ast::Expr::Overlay { .. } => "overlay".into(),
        ast::Expr::Trim {
            trim_where: Some(ast::TrimWhereField::Leading),
            ..
        } => "ltrim".into(),
        ast::Expr::Trim {
            trim_where: Some(ast::TrimWhereField::Trailing),
            ..
        } => "rtrim".into(),
        ast::Expr::Trim { .. } => "btrim".into(),
        _ => "?column?".into(),
    }
}

/// Whether `e`'s output name is a strong one that a cast over it keeps: a cast passes on its
/// operand's strength, CASE's name is weak, and `?column?` is no name.
fn strong_name(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Nested(inner) | ast::Expr::Cast { expr: inner, .. } => strong_name(inner),
        ast::Expr::Case { .. } => false,
        ast::Expr::Subquery(_) => true,
        _ => output_name(e) != "?column?",
    }
}

pub fn table_scope(t: &TableDef, qual: &str) -> Scope {
    Scope {
        cols: t
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| ScopeCol {
                qualifier: Some(qual.to_string()),
                name: c.name.clone(),
                ty: c.ty.id,
                typmod: c.ty.typmod,
                table_oid: t.oid,
                attnum: (i + 1) as i16,
                hidden: false,
            })
            .collect(),
    }
}
