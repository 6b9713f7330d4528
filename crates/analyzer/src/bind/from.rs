//! FROM items: tables, subqueries, functions and VALUES lists as relations with their scopes.

use super::query::table_scope;
use super::{Binder, Scope, ScopeCol, fold};
use crate::query::{Rel, SystemView};
use keel_common::{PgError, PgResult, sqlstate};
use sqlparser::ast::{self, Spanned};

impl Binder<'_> {
    /// The transition table named `name` of the trigger whose function this statement is in
    /// (looked for after WITH queries and before tables, as PostgreSQL does).
    pub(crate) fn named_rel(&self, name: &str) -> Option<crate::bind::NamedRel> {
        let vars = self.pl_vars.as_ref()?;
        vars.relations.iter().find(|r| r.name == name).cloned()
    }

    pub(crate) fn bind_from_item(&mut self, t: &ast::TableFactor) -> PgResult<(Rel, Scope)> {
        match t {
            ast::TableFactor::Table {
                name, alias, args, ..
            } => {
                if let Some(args) = args {
                    let (_, n) = super::object_name(name);
                    if crate::srf::SetFunc::by_name(&n).is_none()
                        && let Some(srf) =
                            self.user_srf_in_from(&n, &args.args, alias.as_ref(), name)?
                    {
                        return Ok(srf);
                    }
                    return self.function_item(t, &Scope::default()).and_then(|f| {
                        f.ok_or_else(|| PgError::internal("function item expected"))
                    });
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
                    if let Some(r) = self.named_rel(&n) {
                        self.non_table_rtes.insert(name as *const _ as usize);
                        let mut scope = table_scope(&r.table, &qual);
                        for (i, c) in scope.cols.iter_mut().enumerate() {
                            (c.table_oid, c.attnum) = (0, 0);
                            if let Some(an) = alias.as_ref().and_then(|a| a.columns.get(i)) {
                                c.name = fold(&an.name);
                            }
                        }
                        let rel = Rel::NamedRows {
                            name: r.name,
                            table: r.table,
                            alias: alias.as_ref().map(|a| fold(&a.name)),
                        };
                        return Ok((rel, scope));
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
                if let Some(view) = self.view_named(name) {
                    self.non_table_rtes.insert(name as *const _ as usize);
                    return self.view_item(&view, alias.as_ref());
                }
                let table = self.table(name)?;
                self.read_relations.push(table.oid);
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
            ast::TableFactor::UNNEST { .. } | ast::TableFactor::Function { .. } => self
                .function_item(t, &Scope::default())
                .and_then(|f| f.ok_or_else(|| PgError::unsupported(format!("FROM item \"{t}\"")))),
            ast::TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => self.bind_from_joins(table_with_joins),
            other => Err(PgError::unsupported(format!("FROM item \"{other}\""))),
        }
    }
}
