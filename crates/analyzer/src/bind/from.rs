//! FROM items: tables, subqueries, functions and VALUES lists as relations with their scopes.

use super::query::table_scope;
use super::{Binder, Scope, ScopeCol, fold};
use crate::expr::Expr;
use crate::query::{Rel, SystemView};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::CastContext;
use keel_types::{SqlType, TypeId};
use sqlparser::ast::{self, Spanned};

impl Binder<'_> {
    pub(crate) fn bind_from_item(&mut self, t: &ast::TableFactor) -> PgResult<(Rel, Scope)> {
        match t {
            ast::TableFactor::Table {
                name, alias, args, ..
            } => {
                let (_, n) = super::object_name(name);
                if let Some(args) = args {
                    if n != "generate_series"
                        && let Some(srf) = self.user_srf_in_from(&n, &args.args, alias.as_ref())?
                    {
                        return Ok(srf);
                    }
                    if n != "generate_series" {
                        return Err(self.at(
                            PgError::unsupported(format!("table function {n}()")),
                            name.span(),
                        ));
                    }
                    let mut a = Vec::new();
                    for arg in &args.args {
                        match arg {
                            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                                a.push(self.expr(e, &Scope::default(), &mut None)?)
                            }
                            _ => {
                                return Err(PgError::unsupported(
                                    "this generate_series() argument",
                                ));
                            }
                        }
                    }
                    let (start, stop, step, ty) =
                        self.series_args(a).map_err(|e| self.at(e, name.span()))?;
                    let colname = match alias {
                        Some(al) if !al.columns.is_empty() => fold(&al.columns[0].name),
                        Some(al) => fold(&al.name),
                        None => "generate_series".into(),
                    };
                    let qual = alias
                        .as_ref()
                        .map(|a| fold(&a.name))
                        .unwrap_or_else(|| "generate_series".into());
                    let scope = Scope {
                        cols: vec![ScopeCol {
                            qualifier: Some(qual),
                            name: colname,
                            ty,
                            typmod: -1,
                            table_oid: 0,
                            attnum: 0,
                            hidden: false,
                        }],
                    };
                    return Ok((
                        Rel::Series {
                            start,
                            stop,
                            step,
                            ty,
                        },
                        scope,
                    ));
                }
                if name.0.len() == 1 {
                    let n = super::object_name(name).1;
                    let qual = alias.as_ref().map_or(n.clone(), |a| fold(&a.name));
                    if let Some((plan, mut scope)) = self.cte_item(&n, &qual) {
                        self.non_table_rtes.insert(name as *const _ as usize);
                        if let Some(a) = alias {
                            for (c, an) in scope.cols.iter_mut().zip(&a.columns) {
                                c.name = fold(&an.name);
                            }
                        }
                        return Ok((plan, scope));
                    }
                }
                let (schema, n) = super::object_name(name);
                if let Some(view) = SystemView::by_name(schema.as_deref(), &n) {
                    let qual = alias.as_ref().map_or(n.clone(), |a| fold(&a.name));
                    let cols = view
                        .columns()
                        .iter()
                        .enumerate()
                        .map(|(i, (c, ty))| ScopeCol {
                            qualifier: Some(qual.clone()),
                            name: alias
                                .as_ref()
                                .and_then(|a| a.columns.get(i))
                                .map_or_else(|| c.to_string(), |a| fold(&a.name)),
                            ty: *ty,
                            typmod: -1,
                            table_oid: 0,
                            attnum: 0,
                            hidden: false,
                        })
                        .collect();
                    self.non_table_rtes.insert(name as *const _ as usize);
                    return Ok((Rel::SystemView(view), Scope { cols }));
                }
                let table = self.table(name)?;
                let qual = alias
                    .as_ref()
                    .map(|a| fold(&a.name))
                    .unwrap_or_else(|| table.name.clone());
                let scope = table_scope(&table, &qual);
                let alias = alias.as_ref().map(|a| fold(&a.name));
                Ok((Rel::Scan { table, alias }, scope))
            }
            ast::TableFactor::Derived {
                lateral: false,
                subquery,
                alias,
                ..
            } => {
                if alias.is_none() {
                    let err = PgError::new(
                        sqlstate::SYNTAX_ERROR,
                        "subquery in FROM must have an alias",
                    )
                    .with_hint("For example, FROM (SELECT ...) [AS] foo.");
                    return Err(match self.position_near(subquery.span().start, true) {
                        Some(p) => err.with_position(p),
                        None => err,
                    });
                }
                let sub = self.query(subquery)?;
                self.non_table_rtes
                    .insert(subquery.as_ref() as *const ast::Query as usize);
                let qual = alias.as_ref().map(|a| fold(&a.name));
                let cols = sub
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| ScopeCol {
                        qualifier: qual.clone(),
                        name: alias
                            .as_ref()
                            .and_then(|a| a.columns.get(i))
                            .map(|c| fold(&c.name))
                            .unwrap_or_else(|| c.name.clone()),
                        ty: c.ty,
                        typmod: c.typmod,
                        table_oid: 0,
                        attnum: 0,
                        hidden: false,
                    })
                    .collect();
                Ok((sub.root, Scope { cols }))
            }
            ast::TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => self.bind_from_joins(table_with_joins),
            other => Err(PgError::unsupported(format!("FROM item \"{other}\""))),
        }
    }

    pub fn series_args(
        &mut self,
        mut a: Vec<Expr>,
    ) -> PgResult<(Expr, Expr, Option<Expr>, TypeId)> {
        let no_function = |a: &[Expr]| {
            let tys: Vec<TypeId> = a.iter().map(Expr::ty).collect();
            super::func::no_function("generate_series", &tys)
        };
        if a.len() < 2 || a.len() > 3 {
            return Err(no_function(&a));
        }
        let temporal = a.iter().any(|e| {
            matches!(
                e.ty(),
                TypeId::Timestamp | TypeId::TimestampTz | TypeId::Date
            )
        }) || a.get(2).is_some_and(|e| e.ty() == TypeId::Interval);
        let ty = if a.iter().any(|e| e.ty() == TypeId::Numeric) {
            return Err(PgError::unsupported("generate_series(numeric)"));
        } else if temporal {
            if a.len() != 3 {
                return Err(no_function(&a));
            }
            // PostgreSQL's resolution: timestamp only when an argument is one and none is
            // timestamptz; dates and untyped literals go to timestamptz (its preferred type).
            let has = |t: TypeId| a.iter().any(|e| e.ty() == t);
            if has(TypeId::Timestamp) && !has(TypeId::TimestampTz) {
                TypeId::Timestamp
            } else {
                TypeId::TimestampTz
            }
        } else if a.iter().any(|e| e.ty() == TypeId::Int8) {
            TypeId::Int8
        } else {
            TypeId::Int4
        };
        let mut out = Vec::new();
        for (i, e) in a.drain(..).enumerate() {
            let target = if temporal && i == 2 {
                TypeId::Interval
            } else {
                ty
            };
            out.push(super::types::coerce(
                e,
                SqlType::new(target),
                CastContext::Implicit,
                &mut self.params,
            )?);
        }
        let step = if out.len() == 3 { out.pop() } else { None };
        let stop = out.pop().ok_or_else(|| PgError::internal("series"))?;
        let start = out.pop().ok_or_else(|| PgError::internal("series"))?;
        Ok((start, stop, step, ty))
    }
}
