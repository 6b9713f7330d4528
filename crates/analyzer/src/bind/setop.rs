//! UNION / INTERSECT / EXCEPT [ALL] and non-recursive WITH queries.

use super::{Binder, Scope, ScopeCol, fold};
use crate::expr::Expr;
use crate::query::{OutColumn, Query, Rel, SetOpKind};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::CastContext;
use keel_types::{SqlType, TypeId};
use sqlparser::ast::{self, Spanned};
use std::sync::Arc;

/// A WITH query visible to the statement being bound.
pub struct Cte {
    pub name: String,
    pub plan: Arc<Query>,
}

impl Binder<'_> {
    /// Binds the WITH list; returns how many CTEs were pushed (pop them after the query).
    pub(crate) fn push_ctes(&mut self, with: &ast::With) -> PgResult<usize> {
        if with.recursive {
            return Err(PgError::unsupported("WITH RECURSIVE"));
        }
        let mut n = 0;
        for cte in &with.cte_tables {
            let name = fold(&cte.alias.name);
            let mut plan = match self.query(&cte.query) {
                Ok(p) => p,
                Err(e) => {
                    self.ctes.truncate(self.ctes.len() - n);
                    return Err(e);
                }
            };
            for (c, a) in plan.columns.iter_mut().zip(&cte.alias.columns) {
                c.name = fold(&a.name);
            }
            self.ctes.push(Cte {
                name,
                plan: Arc::new(plan),
            });
            n += 1;
        }
        Ok(n)
    }

    /// A FROM item naming a WITH query.
    pub(crate) fn cte_item(&self, name: &str, qual: &str) -> Option<(Rel, Scope)> {
        let cte = self.ctes.iter().rev().find(|c| c.name == name)?;
        let cols = cte
            .plan
            .columns
            .iter()
            .map(|c| ScopeCol {
                qualifier: Some(qual.to_string()),
                name: c.name.clone(),
                ty: c.ty,
                typmod: c.typmod,
                table_oid: 0,
                attnum: 0,
                hidden: false,
            })
            .collect();
        Some((cte.plan.root.clone(), Scope { cols }))
    }

    /// One operand of a set operation (or the whole query body).
    pub(crate) fn set_expr(
        &mut self,
        e: &ast::SetExpr,
        operand: bool,
    ) -> PgResult<(Rel, Vec<OutColumn>)> {
        // A chain of set operations nests one level per operator.
        keel_common::stack::check()?;
        match e {
            ast::SetExpr::Select(s) => {
                self.keep_unknown = operand;
                let r = self.select(s, None);
                self.keep_unknown = false;
                let (p, c, _) = r?;
                Ok((p, c))
            }
            ast::SetExpr::Values(v) => self.values(v, None),
            ast::SetExpr::Table(t) => {
                let select = table_as_select(t)?;
                self.set_expr(&select, operand)
            }
            ast::SetExpr::Query(q) => {
                let p = self.query(q)?;
                Ok((p.root, p.columns))
            }
            ast::SetExpr::SetOperation {
                left,
                op,
                set_quantifier,
                right,
            } => {
                let kind = match op {
                    ast::SetOperator::Union => SetOpKind::Union,
                    ast::SetOperator::Intersect => SetOpKind::Intersect,
                    ast::SetOperator::Except => SetOpKind::Except,
                    ast::SetOperator::Minus => {
                        return Err(PgError::unsupported("MINUS"));
                    }
                };
                let all = match set_quantifier {
                    ast::SetQuantifier::All => true,
                    ast::SetQuantifier::Distinct | ast::SetQuantifier::None => false,
                    _ => return Err(PgError::unsupported("this set quantifier")),
                };
                let (lp, mut lc) = self.set_expr(left, true)?;
                let (rp, rc) = self.set_expr(right, true)?;
                let what = match kind {
                    SetOpKind::Union => "UNION",
                    SetOpKind::Intersect => "INTERSECT",
                    SetOpKind::Except => "EXCEPT",
                };
                if lc.len() != rc.len() {
                    return Err(self.at(
                        PgError::new(
                            sqlstate::SYNTAX_ERROR,
                            format!("each {what} query must have the same number of columns"),
                        ),
                        first_item(right),
                    ));
                }
                let mut types = Vec::with_capacity(lc.len());
                for (l, r) in lc.iter().zip(&rc) {
                    let t = keel_types::common_type::common_type_of(what, [l.ty, r.ty])
                        .map_err(|e| self.at(e, first_item(right)))?;
                    types.push(if t == TypeId::Unknown {
                        TypeId::Text
                    } else {
                        t
                    });
                }
                let lp = self.convert(lp, &lc, &types, left)?;
                let rp = self.convert(rp, &rc, &types, right)?;
                for (c, t) in lc.iter_mut().zip(&types) {
                    if c.ty != *t {
                        c.typmod = -1;
                    }
                    c.ty = *t;
                    c.table_oid = 0;
                    c.attnum = 0;
                }
                Ok((
                    Rel::SetOp {
                        left: Box::new(lp),
                        right: Box::new(rp),
                        kind,
                        all,
                        types,
                    },
                    lc,
                ))
            }
            _ => Err(PgError::unsupported("this query form")),
        }
    }

    /// Casts a set operand's columns to the result types (a Project only when one differs).
    fn convert(
        &mut self,
        p: Rel,
        cols: &[OutColumn],
        types: &[TypeId],
        operand: &ast::SetExpr,
    ) -> PgResult<Rel> {
        if cols.iter().zip(types).all(|(c, t)| c.ty == *t) {
            return Ok(p);
        }
        // Unknown literals of a SELECT operand are converted in place (errors point at them).
        let mut p = p;
        if let Rel::Project { exprs, .. } = &mut p {
            for (i, (e, t)) in exprs.iter_mut().zip(types).enumerate() {
                if e.ty() == TypeId::Unknown {
                    let x = std::mem::replace(e, Expr::Const(keel_types::Datum::Null, *t));
                    *e = self
                        .coerce_in(x, SqlType::new(*t), CastContext::Implicit)
                        .map_err(|err| self.at(err, nth_item(operand, i)))?;
                }
            }
        }
        let cols: Vec<OutColumn> = cols
            .iter()
            .zip(types)
            .map(|(c, t)| OutColumn {
                ty: if c.ty == TypeId::Unknown { *t } else { c.ty },
                ..c.clone()
            })
            .collect();
        if cols.iter().zip(types).all(|(c, t)| c.ty == *t) {
            return Ok(p);
        }
        let mut exprs = Vec::with_capacity(types.len());
        for (i, (c, t)) in cols.iter().zip(types).enumerate() {
            exprs.push(self.coerce_in(
                Expr::Col(i, c.ty),
                SqlType::new(*t),
                CastContext::Implicit,
            )?);
        }
        Ok(Rel::Project {
            input: Box::new(p),
            exprs,
            srf: None,
        })
    }
}

/// The span of a SELECT operand's `i`-th select item (where PostgreSQL points).
fn nth_item(e: &ast::SetExpr, i: usize) -> sqlparser::tokenizer::Span {
    match e {
        ast::SetExpr::Select(s) => s.projection.get(i).map_or(e.span(), |p| p.span()),
        ast::SetExpr::SetOperation { left, .. } => nth_item(left, i),
        _ => e.span(),
    }
}

fn first_item(e: &ast::SetExpr) -> sqlparser::tokenizer::Span {
    nth_item(e, 0)
}

/// `TABLE name` is `SELECT * FROM name`, as PostgreSQL's grammar reads it.
fn table_as_select(t: &ast::Table) -> PgResult<ast::SetExpr> {
    let Some(name) = &t.table_name else {
        return Err(PgError::new(
            sqlstate::SYNTAX_ERROR,
            "syntax error at end of input",
        ));
    };
    let name = match &t.schema_name {
        Some(s) => format!("{s}.{name}"),
        None => name.clone(),
    };
    let parsed = sqlparser::parser::Parser::parse_sql(
        &sqlparser::dialect::PostgreSqlDialect {},
        &format!("SELECT * FROM {name}"),
    )
    .map_err(|e| PgError::new(sqlstate::SYNTAX_ERROR, e.to_string()))?;
    match parsed.into_iter().next() {
        Some(ast::Statement::Query(q)) => Ok(*q.body),
        _ => Err(PgError::internal("TABLE did not read as a SELECT")),
    }
}
