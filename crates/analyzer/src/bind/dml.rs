//! INSERT / UPDATE / DELETE binding.

use super::query::table_scope;
use super::view::ViewWrite;
use super::{Binder, Scope, fold};
use crate::expr::Expr;
use crate::query::{FkCheck, InsteadOf, ModifyKind, ModifyQuery, OutColumn, Rel};
use keel_catalog::TableDef;
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::CastContext;
use keel_types::{Datum, SqlType, TypeId};
use sqlparser::ast::{self, Spanned};
use std::sync::Arc;

impl Binder<'_> {
    /// The DEFAULT expression of a column (re-parsed from its SQL text), or NULL.
    pub fn default_expr(&mut self, table: &TableDef, col: usize) -> PgResult<Expr> {
        let c = &table.columns[col];
        match &c.default {
            None => Ok(Expr::Const(Datum::Null, c.ty.id)),
            Some(text) => {
                let e = keel_parser::parse::expression(text).map_err(|f| {
                    f.into_error(0, |e| {
                        PgError::internal(format!("bad default for column \"{}\": {e}", c.name))
                    })
                })?;
                let saved = (self.text, self.char_offset);
                self.text = "";
                let r = self.expr_as(&e, c.ty, &Scope::default(), CastContext::Assignment);
                (self.text, self.char_offset) = saved;
                r
            }
        }
    }

    /// The table's CHECK constraints, re-parsed from their SQL text and bound to its columns.
    pub fn check_exprs(&mut self, table: &TableDef) -> PgResult<Vec<(String, Expr)>> {
        let scope = table_scope(table, &table.name);
        let mut out = Vec::with_capacity(table.checks.len());
        for c in &table.checks {
            let e = keel_parser::parse::expression(&c.expr).map_err(|f| {
                f.into_error(0, |e| {
                    PgError::internal(format!("bad check constraint \"{}\": {e}", c.name))
                })
            })?;
            let saved = (self.text, self.char_offset);
            self.text = "";
            let r = self.bool_expr(&e, &scope, &mut None);
            (self.text, self.char_offset) = saved;
            out.push((c.name.clone(), r?));
        }
        Ok(out)
    }

    fn returning(
        &mut self,
        items: &Option<Vec<ast::SelectItem>>,
        table: &Arc<TableDef>,
        qual: &str,
    ) -> PgResult<Option<(Vec<Expr>, Vec<OutColumn>)>> {
        let Some(items) = items else { return Ok(None) };
        let scope = table_scope(table, qual);
        let mut exprs = Vec::new();
        let mut cols = Vec::new();
        for item in items {
            match item {
                ast::SelectItem::Wildcard(_) => {
                    for (i, c) in scope.cols.iter().enumerate() {
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
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                    let b = self.expr(e, &scope, &mut None)?;
                    let (mut name, mut typmod, mut toid, mut att) =
                        (super::query::output_name(e), b.typmod(), 0, 0);
                    if let Expr::Col(i, _) = &b {
                        let c = &scope.cols[*i];
                        (name, typmod, toid, att) =
                            (c.name.clone(), c.typmod, c.table_oid, c.attnum);
                    }
                    if let ast::SelectItem::ExprWithAlias { alias, .. } = item {
                        name = fold(alias);
                    }
                    cols.push(OutColumn {
                        name,
                        ty: b.ty(),
                        typmod,
                        table_oid: toid,
                        attnum: att,
                    });
                    exprs.push(b);
                }
                _ => return Err(PgError::unsupported("this RETURNING item")),
            }
        }
        Ok(Some((exprs, cols)))
    }

    pub(crate) fn fk_checks(&self, table: &TableDef) -> Vec<FkCheck> {
        table
            .foreign_keys
            .iter()
            .filter_map(|fk| {
                let rt = self.catalog.tables.get(&fk.ref_table)?.clone();
                let ref_index = self
                    .catalog
                    .indexes_of(rt.oid)
                    .find(|i| i.columns.starts_with(&fk.ref_columns))
                    .cloned();
                Some(FkCheck {
                    name: fk.name.clone(),
                    columns: fk.columns.clone(),
                    ref_table: rt,
                    ref_index,
                    ref_columns: fk.ref_columns.clone(),
                })
            })
            .collect()
    }

    /// Foreign keys of other tables that reference `table`.
    pub(crate) fn ref_checks(&self, table: &TableDef) -> Vec<crate::query::RefCheck> {
        let mut out = Vec::new();
        for child in self.catalog.tables.values() {
            for fk in child
                .foreign_keys
                .iter()
                .filter(|f| f.ref_table == table.oid)
            {
                let child_index = self
                    .catalog
                    .indexes_of(child.oid)
                    .find(|i| i.columns.starts_with(&fk.columns))
                    .cloned();
                out.push(crate::query::RefCheck {
                    name: fk.name.clone(),
                    columns: fk.ref_columns.clone(),
                    child: child.clone(),
                    child_columns: fk.columns.clone(),
                    child_index,
                    on_delete: fk.on_delete,
                    on_update: fk.on_update,
                });
            }
        }
        out
    }

    pub fn insert(&mut self, ins: &ast::Insert) -> PgResult<ModifyQuery> {
        let name = match &ins.table {
            ast::TableObject::TableName(n) => n,
            _ => return Err(PgError::unsupported("INSERT into a table function")),
        };
        let (table, target) = self.write_target(name, ViewWrite::Insert)?;
        let qual = match &ins.table_alias {
            Some(a) => fold(&a.alias),
            None => table.name.clone(),
        };
        // Columns written with subscripts (`INSERT INTO t (a[1:2])`), by list position.
        let subscripted = keel_parser::subscript_target::insert_subscripts(ins);
        let subscript_at = |k: usize| subscripted.iter().find(|(p, _)| *p == k).map(|(_, t)| *t);
        // Target columns in statement order.
        let mut targets = Vec::new();
        // A column may be named more than once only when every mention has subscripts.
        let mut whole = Vec::new();
        if ins.columns.is_empty() {
            targets.extend(0..table.columns.len());
        } else {
            for (k, c) in ins.columns.iter().enumerate() {
                let n = super::object_name(c).1;
                let i = table.column_index(&n).ok_or_else(|| {
                    self.at(
                        PgError::new(
                            sqlstate::UNDEFINED_COLUMN,
                            format!(
                                "column \"{n}\" of relation \"{}\" does not exist",
                                table.name
                            ),
                        ),
                        c.span(),
                    )
                })?;
                let partial = subscript_at(k).is_some();
                if whole.contains(&i) || (!partial && targets.contains(&i)) {
                    return Err(self.at(
                        PgError::new(
                            sqlstate::DUPLICATE_COLUMN,
                            format!("column \"{n}\" specified more than once"),
                        ),
                        c.span(),
                    ));
                }
                if !partial {
                    whole.push(i);
                }
                targets.push(i);
            }
        }
        // The subscripted targets, bound over the table's columns (for their types).
        let scope = table_scope(&table, &table.name);
        let mut assign_targets = Vec::with_capacity(subscripted.len());
        for (k, t) in &subscripted {
            assign_targets.push((*k, *t, self.subscript_target(t, &scope)?));
        }
        // What each position's value is converted to: the column's type. A subscripted
        // column converts its value to the element type (the array type for a slice) itself,
        // with its own error; VALUES only gives its literals that type.
        let literals_at = |k: usize| match ins.source.as_deref().map(|q| q.body.as_ref()) {
            Some(ast::SetExpr::Values(v)) => v
                .rows
                .iter()
                .all(|r| matches!(r.content.get(k), Some(ast::Expr::Value(_)))),
            _ => false,
        };
        let target_types: Vec<SqlType> = targets
            .iter()
            .enumerate()
            .map(
                |(k, &i)| match assign_targets.iter().find(|(p, _, _)| *p == k) {
                    Some((_, _, t)) if literals_at(k) => SqlType::new(t.value_type()),
                    Some(_) => SqlType::new(TypeId::Unknown),
                    None => table.columns[i].ty,
                },
            )
            .collect();
        let (source, src_types, defaults_in_values) = match &ins.source {
            None => (Rel::Values { rows: vec![vec![]] }, vec![], vec![]),
            Some(q) => match q.body.as_ref() {
                ast::SetExpr::Values(v) if q.order_by.is_none() && q.limit_clause.is_none() => {
                    // DEFAULT keywords inside VALUES.
                    let mut defaults = vec![false; targets.len()];
                    for r in &v.rows {
                        if r.content.len() > targets.len() {
                            return Err(PgError::new(
                                sqlstate::SYNTAX_ERROR,
                                "INSERT has more expressions than target columns",
                            ));
                        }
                        for (i, e) in r.content.iter().enumerate() {
                            if matches!(e, ast::Expr::Identifier(id) if id.value.eq_ignore_ascii_case("default") && id.quote_style.is_none())
                            {
                                if v.rows.len() > 1 {
                                    return Err(PgError::unsupported(
                                        "DEFAULT in multi-row VALUES",
                                    ));
                                }
                                defaults[i] = true;
                            }
                        }
                    }
                    let (p, cols) = self.values(v, Some(&target_types))?;
                    (p, cols.iter().map(|c| c.ty).collect::<Vec<_>>(), defaults)
                }
                _ => {
                    let mut qp = self.query(q)?;
                    let mut types: Vec<TypeId> = qp.columns.iter().map(|c| c.ty).collect();
                    // A bare NULL in the SELECT takes its target column's type, as PostgreSQL
                    // leaves an INSERT's source columns unresolved until they meet it.
                    if let Rel::Project { exprs, .. } = &mut qp.root {
                        for (i, e) in exprs.iter_mut().enumerate() {
                            if let (Expr::Const(Datum::Null, _), Some(t)) =
                                (&*e, target_types.get(i))
                            {
                                *e = Expr::Const(Datum::Null, t.id);
                                types[i] = t.id;
                            }
                        }
                    }
                    (qp.root, types, vec![])
                }
            },
        };
        if ins.source.is_some() && src_types.len() > targets.len() {
            return Err(PgError::new(
                sqlstate::SYNTAX_ERROR,
                "INSERT has more expressions than target columns",
            ));
        }
        // Only an explicit column list must be filled completely; without one, missing
        // trailing values take their defaults.
        if ins.source.is_some() && !ins.columns.is_empty() && src_types.len() < targets.len() {
            return Err(PgError::new(
                sqlstate::SYNTAX_ERROR,
                "INSERT has more target columns than expressions",
            ));
        }
        let mut row = Vec::with_capacity(table.columns.len());
        let mut assign_targets = assign_targets.into_iter().map(Some).collect::<Vec<_>>();
        for col in 0..table.columns.len() {
            let first = targets.iter().position(|&t| t == col);
            if first.is_some_and(|si| si < src_types.len())
                && assign_targets
                    .iter()
                    .flatten()
                    .any(|(k, _, _)| targets[*k] == col)
            {
                // Subscripted assignments (and a plain one before them) into NULL, in list
                // order, as PostgreSQL builds an INSERT's array from its parts.
                let c = &table.columns[col];
                let mut e = Expr::Const(Datum::Null, c.ty.id);
                for (si, _) in targets.iter().enumerate().filter(|(_, t)| **t == col) {
                    let value = Expr::Col(si, src_types[si]);
                    let slot = assign_targets
                        .iter_mut()
                        .find(|x| x.as_ref().is_some_and(|(k, _, _)| *k == si));
                    e = match slot.and_then(Option::take) {
                        Some((_, target, t)) => {
                            let span = ins.columns[si].span();
                            self.assign_into(e, target, t, value, span, &c.name)?
                        }
                        None => self.coerce_in(value, c.ty, CastContext::Assignment)?,
                    };
                }
                row.push(e);
                continue;
            }
            let e = match first {
                Some(si)
                    if si < src_types.len()
                        && !defaults_in_values.get(si).copied().unwrap_or(false) =>
                {
                    let c = &table.columns[col];
                    if table.identity_always.contains(&col) {
                        return Err(identity_always(
                            &c.name,
                            format!(
                                "cannot insert a non-DEFAULT value into column \"{}\"",
                                c.name
                            ),
                        )
                        .with_hint("Use OVERRIDING SYSTEM VALUE to override."));
                    }
                    let src = Expr::Col(si, src_types[si]);
                    self.coerce_in(src, c.ty, CastContext::Assignment)
                        .map_err(|e| {
                            if e.code == sqlstate::DATATYPE_MISMATCH {
                                PgError::new(
                                    sqlstate::DATATYPE_MISMATCH,
                                    format!(
                                        "column \"{}\" is of type {} but expression is of type {}",
                                        c.name,
                                        super::types::type_display(c.ty),
                                        src_types[si].name()
                                    ),
                                )
                                .with_hint("You will need to rewrite or cast the expression.")
                            } else {
                                e
                            }
                        })?
                }
                _ => self.default_expr(&table, col)?,
            };
            row.push(e);
        }
        let returning = self.returning(&ins.returning, &table, &qual)?;
        let on_conflict = match &ins.on {
            None => None,
            Some(_) if !matches!(target, Target::Table) => {
                return Err(PgError::unsupported("INSERT ... ON CONFLICT on a view"));
            }
            Some(ast::OnInsert::OnConflict(oc)) => {
                Some(Arc::new(self.on_conflict(ins, oc, &table, &qual)?))
            }
            Some(_) => return Err(PgError::unsupported("INSERT ... ON DUPLICATE KEY UPDATE")),
        };
        // The columns the statement gives values to (a write through a view leaves the others
        // to the base table's defaults).
        let given: Vec<bool> = (0..table.columns.len())
            .map(|col| {
                targets.iter().position(|&t| t == col).is_some_and(|si| {
                    si < src_types.len() && !defaults_in_values.get(si).copied().unwrap_or(false)
                })
            })
            .collect();
        let m = ModifyQuery {
            types: table.columns.iter().map(|c| c.ty.id).collect(),
            fks: self.fk_checks(&table),
            refs: vec![],
            checks: self.check_exprs(&table)?,
            table,
            kind: ModifyKind::Insert { source, row },
            returning,
            on_conflict,
            instead_of: match target {
                Target::Instead(_) => Some(Box::new(InsteadOf { rows: None })),
                _ => None,
            },
        };
        self.finish_write(m, &target, &given)
    }

    /// The table a write names, or the view (as a target) when it names one the operation
    /// can run on: by the view's INSTEAD OF triggers, or through to its base table.
    fn write_target(
        &mut self,
        name: &ast::ObjectName,
        op: ViewWrite,
    ) -> PgResult<(Arc<TableDef>, Target)> {
        if name.0.len() == 1 && self.named_rel(&super::object_name(name).1).is_some() {
            return Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                format!(
                    "relation \"{}\" cannot be the target of a modifying statement",
                    super::object_name(name).1
                ),
            ));
        }
        if let Some(view) = self.view_named(name) {
            let by_trigger = self
                .check_view_write(&view, op)
                .map_err(|e| self.at(e, name.span()))?;
            let target = Arc::new(view.as_target());
            return Ok((
                target,
                if by_trigger {
                    Target::Instead(view)
                } else {
                    Target::Through(view)
                },
            ));
        }
        Ok((self.table(name)?, Target::Table))
    }

    /// A write bound against a view's columns, as it runs: on the base table when it goes
    /// through the view, else as bound.
    fn finish_write(
        &mut self,
        m: ModifyQuery,
        target: &Target,
        given: &[bool],
    ) -> PgResult<ModifyQuery> {
        match target {
            Target::Through(view) => {
                let upd = self.updatable(view)?;
                self.onto_base(m, view, upd, given)
            }
            _ => Ok(m),
        }
    }

    /// An UPDATE's or DELETE's rows of a view with INSTEAD OF triggers: the view's rows the
    /// WHERE keeps.
    fn view_rows_where(
        &mut self,
        target: &Target,
        filter: &mut Option<Expr>,
    ) -> PgResult<Option<Box<InsteadOf>>> {
        let Target::Instead(view) = target else {
            return Ok(None);
        };
        let rows = self.view_rows(view)?;
        let rows = match filter.take() {
            Some(pred) => Rel::Filter {
                input: Box::new(rows),
                pred,
            },
            None => rows,
        };
        Ok(Some(Box::new(InsteadOf { rows: Some(rows) })))
    }

    fn target_table(
        &mut self,
        twj: &ast::TableWithJoins,
        op: ViewWrite,
    ) -> PgResult<(Arc<TableDef>, String, Target)> {
        if !twj.joins.is_empty() {
            return Err(PgError::unsupported("joins in UPDATE/DELETE targets"));
        }
        match &twj.relation {
            ast::TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } => {
                let (t, target) = self.write_target(name, op)?;
                let q = alias
                    .as_ref()
                    .map(|a| fold(&a.name))
                    .unwrap_or_else(|| t.name.clone());
                Ok((t, q, target))
            }
            _ => Err(PgError::unsupported("this UPDATE/DELETE target")),
        }
    }

    fn where_clause(&mut self, scope: &Scope, sel: &Option<ast::Expr>) -> PgResult<Option<Expr>> {
        sel.as_ref()
            .map(|w| self.bool_expr(w, scope, &mut None))
            .transpose()
    }

    pub fn update(&mut self, u: &ast::Update) -> PgResult<ModifyQuery> {
        if u.from.is_some() || u.limit.is_some() || !u.order_by.is_empty() {
            return Err(PgError::unsupported("UPDATE ... FROM"));
        }
        let (table, qual, target) = self.target_table(&u.table, ViewWrite::Update)?;
        let scope = table_scope(&table, &qual);
        let set = self.assignments(&table, &u.assignments, &scope)?;
        let mut filter = self.where_clause(&scope, &u.selection)?;
        let instead_of = self.view_rows_where(&target, &mut filter)?;
        let returning = self.returning(&u.returning, &table, &qual)?;
        let m = ModifyQuery {
            types: table.columns.iter().map(|c| c.ty.id).collect(),
            fks: self.fk_checks(&table),
            refs: self.ref_checks(&table),
            checks: self.check_exprs(&table)?,
            table,
            kind: ModifyKind::Update { filter, set },
            returning,
            instead_of,
            on_conflict: None,
        };
        self.finish_write(m, &target, &[])
    }

    /// UPDATE's SET list (also ON CONFLICT DO UPDATE's): (column, expression over `scope`),
    /// assignment-cast to the column type.
    pub(super) fn assignments(
        &mut self,
        table: &TableDef,
        assignments: &[ast::Assignment],
        scope: &Scope,
    ) -> PgResult<Vec<(usize, Expr)>> {
        let mut set: Vec<(usize, Expr)> = Vec::new();
        // Columns assigned through subscripts: further subscripted assignments to them apply
        // to the result (`SET a[1] = 1, a[2] = 2`).
        let mut subscripted = Vec::new();
        for a in assignments {
            let n = match &a.target {
                ast::AssignmentTarget::ColumnName(n) => super::object_name(n).1,
                _ => return Err(PgError::unsupported("tuple assignment in UPDATE")),
            };
            let col = table.column_index(&n).ok_or_else(|| {
                const SYSTEM: [&str; 6] = ["tableoid", "ctid", "xmin", "xmax", "cmin", "cmax"];
                let e = if SYSTEM.contains(&n.as_str()) {
                    PgError::new(
                        sqlstate::FEATURE_NOT_SUPPORTED,
                        format!("cannot assign to system column \"{n}\""),
                    )
                } else {
                    PgError::new(
                        sqlstate::UNDEFINED_COLUMN,
                        format!(
                            "column \"{n}\" of relation \"{}\" does not exist",
                            table.name
                        ),
                    )
                };
                match self.position(a.target.span()) {
                    Some(p) => e.or_position(p),
                    None => e,
                }
            })?;
            let c = &table.columns[col];
            let earlier = set.iter().position(|(k, _)| *k == col);
            if let Some((target, value)) = keel_parser::subscript_target::marker_args(&a.value)
                && (earlier.is_none() || subscripted.contains(&col))
            {
                let base = match earlier {
                    Some(k) => set.remove(k).1,
                    // The target's own column: first in the scope (ON CONFLICT's EXCLUDED
                    // follows it).
                    None => Expr::Col(col, c.ty.id),
                };
                let e = self.subscript_assignment(base, target, value, scope, &c.name)?;
                set.push((col, e));
                subscripted.push(col);
                continue;
            }
            if earlier.is_some() {
                return Err(PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    format!("multiple assignments to same column \"{}\"", c.name),
                ));
            }
            let e = if matches!(&a.value, ast::Expr::Identifier(id) if id.value.eq_ignore_ascii_case("default") && id.quote_style.is_none())
            {
                self.default_expr(table, col)?
            } else if table.identity_always.contains(&col) {
                return Err(identity_always(
                    &c.name,
                    format!("column \"{}\" can only be updated to DEFAULT", c.name),
                ));
            } else {
                let b = self.expr(&a.value, scope, &mut None)?;
                let src_ty = b.ty();
                self.coerce_in(b, c.ty, CastContext::Assignment)
                    .map_err(|e| {
                        let e = if e.code == sqlstate::DATATYPE_MISMATCH {
                            PgError::new(
                                sqlstate::DATATYPE_MISMATCH,
                                format!(
                                    "column \"{}\" is of type {} but expression is of type {}",
                                    c.name,
                                    super::types::type_display(c.ty),
                                    src_ty.name()
                                ),
                            )
                            .with_hint("You will need to rewrite or cast the expression.")
                        } else {
                            e
                        };
                        self.at(e, a.value.span())
                    })?
            };
            set.push((col, e));
        }
        Ok(set)
    }

    pub fn delete(&mut self, d: &ast::Delete) -> PgResult<ModifyQuery> {
        if d.using.is_some() || d.limit.is_some() || !d.tables.is_empty() {
            return Err(PgError::unsupported("DELETE ... USING"));
        }
        let from = match &d.from {
            ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
        };
        let [twj] = from.as_slice() else {
            return Err(PgError::unsupported("DELETE from several tables"));
        };
        let (table, qual, target) = self.target_table(twj, ViewWrite::Delete)?;
        let scope = table_scope(&table, &qual);
        let mut filter = self.where_clause(&scope, &d.selection)?;
        let instead_of = self.view_rows_where(&target, &mut filter)?;
        let returning = self.returning(&d.returning, &table, &qual)?;
        let m = ModifyQuery {
            types: table.columns.iter().map(|c| c.ty.id).collect(),
            fks: vec![],
            refs: self.ref_checks(&table),
            checks: vec![],
            table,
            kind: ModifyKind::Delete { filter },
            returning,
            instead_of,
            on_conflict: None,
        };
        self.finish_write(m, &target, &[])
    }
}

/// What a write names.
enum Target {
    Table,
    /// A view whose INSTEAD OF triggers do the write.
    Instead(Arc<keel_catalog::ViewDef>),
    /// An automatically updatable view, written through to its base table.
    Through(Arc<keel_catalog::ViewDef>),
}

/// 428C9: an explicit value for a GENERATED ALWAYS AS IDENTITY column.
fn identity_always(column: &str, message: String) -> PgError {
    PgError::new("428C9", message).with_detail(format!(
        "Column \"{column}\" is an identity column defined as GENERATED ALWAYS."
    ))
}

/// Unused-type guard so `TypeId` stays imported for docs.
#[allow(dead_code)]
fn _t(_: TypeId) {}
