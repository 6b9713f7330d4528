//! Binding set-returning calls: their arguments coerced to the function's parameters, and
//! their place (a relation in FROM, or a value the select list's projection expands).

use super::func::no_function;
use super::{AggCtx, Binder, Scope, ScopeCol, fold};
use crate::expr::{Expr, Special};
use crate::query::Rel;
use crate::srf::{SetFunc, TableFunc};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::CastContext;
use keel_types::{SqlType, TypeId};
use sqlparser::ast::{self, Spanned};

impl Binder<'_> {
    /// A set-returning call met in an expression: allowed only in the select list of the
    /// query being bound, where it becomes one of the projection's set functions.
    pub(crate) fn set_function_call(
        &mut self,
        func: SetFunc,
        f: &ast::Function,
        arg_asts: &[&ast::Expr],
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        // A set function inside the arguments is not expanded by this projection.
        let sink = self.srf_sink.take();
        let mut args = Vec::with_capacity(arg_asts.len());
        let bound: PgResult<()> = arg_asts.iter().try_for_each(|x| {
            args.push(self.expr(x, scope, agg)?);
            Ok(())
        });
        self.srf_sink = sink;
        bound?;
        let tf = self
            .table_func(func, args)
            .map_err(|e| self.at(e, f.name.span()))?;
        self.place_set_function(tf, func.name(), f.name.span())
    }

    /// Where a typed set-returning call in an expression goes: one of the select list's
    /// projection's set functions (the value is `Special::SetValue`), or an error naming the
    /// clause that does not allow it.
    pub(crate) fn place_set_function(
        &mut self,
        tf: TableFunc,
        label: &'static str,
        span: sqlparser::tokenizer::Span,
    ) -> PgResult<Expr> {
        let ty = tf.ty;
        let at = |b: &Self, e: PgError| match b.position(span) {
            Some(p) => e.or_position(p),
            None => e,
        };
        let depth = self.srf_sink.as_ref().map(|s| s.0);
        match depth {
            Some(d) if d == self.query_depth => {
                let funcs = self.srf_sink.as_mut().map(|s| &mut s.1);
                let k = funcs.map_or(0, |funcs| {
                    funcs.push(tf);
                    funcs.len() - 1
                });
                Ok(Expr::Special(Special::SetValue(k, label), ty))
            }
            Some(super::IN_AGGREGATE) => Err(at(
                self,
                PgError::new(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "aggregate function calls cannot contain set-returning function calls",
                )
                .with_hint(
                    "You might be able to move the set-returning function into a LATERAL FROM item.",
                ),
            )),
            _ if self.srf_clause.is_some() => Err(at(
                self,
                PgError::new(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    format!(
                        "set-returning functions are not allowed in {}",
                        self.srf_clause.unwrap_or_default()
                    ),
                ),
            )),
            _ => Err(at(
                self,
                PgError::new(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    format!(
                        "set-returning function {label}() is only supported in FROM and in a select list",
                    ),
                ),
            )),
        }
    }

    /// Types a set-returning call: its arguments coerced to the parameter types.
    pub(crate) fn table_func(&mut self, func: SetFunc, args: Vec<Expr>) -> PgResult<TableFunc> {
        let tys: Vec<TypeId> = args.iter().map(Expr::ty).collect();
        let nf = || no_function(self.catalog, func.name(), &tys);
        let mut coerce_to = |args: Vec<Expr>, types: &[TypeId]| -> PgResult<Vec<Expr>> {
            args.into_iter()
                .zip(types)
                .map(|(e, t)| self.coerce_in(e, SqlType::new(*t), CastContext::Implicit))
                .collect::<PgResult<Vec<_>>>()
                .map_err(|_| nf())
        };
        let text_like = |t: &TypeId| {
            matches!(
                t,
                TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name | TypeId::Unknown
            )
        };
        match func {
            SetFunc::Series => {
                let (start, stop, step, ty) = self.series_args(args)?;
                let mut args = vec![start, stop];
                args.extend(step);
                Ok(TableFunc::builtin(func, args, ty))
            }
            SetFunc::Unnest => match tys.as_slice() {
                [t] if t.is_array() || t.is_vector() => Ok(TableFunc::builtin(
                    func,
                    args,
                    t.elem().unwrap_or(TypeId::Text),
                )),
                [TypeId::Unknown] => Err(PgError::new(
                    sqlstate::AMBIGUOUS_FUNCTION,
                    "function unnest(unknown) is not unique",
                )
                .with_hint(
                    "Could not choose a best candidate function. You might need to add explicit type casts.",
                )),
                _ => Err(nf()),
            },
            SetFunc::Subscripts => match tys.as_slice() {
                [a, _] | [a, _, _] if a.is_array() || a.is_vector() => {
                    let types = [*a, TypeId::Int4, TypeId::Bool];
                    Ok(TableFunc::builtin(
                        func,
                        coerce_to(args, &types)?,
                        TypeId::Int4,
                    ))
                }
                _ => Err(nf()),
            },
            SetFunc::RegexpMatches | SetFunc::RegexpSplit | SetFunc::StringToTable => {
                if !(2..=3).contains(&tys.len()) || !tys.iter().all(text_like) {
                    return Err(nf());
                }
                let ty = if func == SetFunc::RegexpMatches {
                    TypeId::TextArray
                } else {
                    TypeId::Text
                };
                Ok(TableFunc::builtin(
                    func,
                    coerce_to(args, &[TypeId::Text; 3])?,
                    ty,
                ))
            }
            SetFunc::User => Err(PgError::internal("a user function bound as a built-in")),
        }
    }

    /// A FROM item that calls set-returning functions, its arguments bound over `scope` (the
    /// items to its left, for a call that reads them); None for any other item.
    pub(crate) fn function_item(
        &mut self,
        t: &ast::TableFactor,
        scope: &Scope,
    ) -> PgResult<Option<(Rel, Scope)>> {
        let mut funcs = Vec::new();
        let (ordinality, alias) = match t {
            ast::TableFactor::Table {
                name,
                args: Some(args),
                with_ordinality,
                alias,
                ..
            } => {
                self.function_factor(name, &args.args, scope, &mut funcs)?;
                (*with_ordinality, alias)
            }
            ast::TableFactor::Function {
                name,
                args,
                with_ordinality,
                alias,
                ..
            } => {
                self.function_factor(name, args, scope, &mut funcs)?;
                (*with_ordinality, alias)
            }
            ast::TableFactor::UNNEST {
                alias,
                array_exprs,
                with_offset: false,
                with_ordinality,
                ..
            } => {
                for e in array_exprs {
                    let a = self.expr(e, scope, &mut None)?;
                    funcs.push(
                        self.table_func(SetFunc::Unnest, vec![a])
                            .map_err(|err| self.at(err, e.span()))?,
                    );
                }
                (*with_ordinality, alias)
            }
            _ => return Ok(None),
        };
        Ok(Some(self.function_rel(funcs, ordinality, alias.as_ref())))
    }

    /// The error for `n(args)` in FROM, which is neither a set-returning built-in nor a user
    /// function: a scalar built-in there is not supported yet (0A000); a name no function
    /// has is PostgreSQL's 42883.
    fn not_a_table_function(
        &mut self,
        n: &str,
        args: &[ast::FunctionArg],
        scope: &Scope,
    ) -> PgResult<PgError> {
        let unsupported = PgError::unsupported(format!("table function {n}()"));
        let mut tys = Vec::with_capacity(args.len());
        for arg in args {
            match arg {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                    tys.push(self.expr(e, scope, &mut None)?.ty())
                }
                _ => return Ok(unsupported),
            }
        }
        let known = keel_types::func::resolve_function(n, &tys).is_some()
            || keel_types::func::resolve_aggregate(n, &tys).is_some()
            || self.catalog.functions.values().any(|f| f.proname == n);
        Ok(if known {
            unsupported
        } else {
            super::func::no_function(self.catalog, n, &tys)
        })
    }

    fn function_factor(
        &mut self,
        name: &ast::ObjectName,
        args: &[ast::FunctionArg],
        scope: &Scope,
        funcs: &mut Vec<TableFunc>,
    ) -> PgResult<()> {
        let (_, n) = super::object_name(name);
        let Some(func) = SetFunc::by_name(&n) else {
            let err = self.not_a_table_function(&n, args, scope)?;
            return Err(self.at(err, name.span()));
        };
        let mut bound = Vec::new();
        for arg in args {
            match arg {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                    bound.push(self.expr(e, scope, &mut None)?)
                }
                _ => {
                    return Err(PgError::unsupported(format!(
                        "this argument of table function {n}()"
                    )));
                }
            }
        }
        funcs.push(
            self.table_func(func, bound)
                .map_err(|e| self.at(e, name.span()))?,
        );
        Ok(())
    }

    /// `left, f(...)` where the call reads `left`'s columns (a function in FROM is
    /// implicitly LATERAL): each left row expanded by the call's rows, as a projection with
    /// set-returning calls does; `left` is moved into the result. A call that reads no column
    /// is an ordinary function relation (the caller joins it); None for other items.
    pub(crate) fn lateral_function(
        &mut self,
        t: &ast::TableFactor,
        left: &mut Rel,
        scope: &Scope,
    ) -> PgResult<Option<(Rel, Scope)>> {
        let Some((Rel::Function { funcs, ordinality }, fscope)) = self.function_item(t, scope)?
        else {
            return Ok(None);
        };
        if funcs
            .iter()
            .all(|f| f.args.iter().all(Expr::is_row_independent))
        {
            return Ok(Some((Rel::Function { funcs, ordinality }, fscope)));
        }
        if ordinality {
            return Err(PgError::unsupported(
                "WITH ORDINALITY on a function reading an earlier FROM item",
            ));
        }
        let mut exprs: Vec<Expr> = scope
            .cols
            .iter()
            .enumerate()
            .map(|(i, c)| Expr::Col(i, c.ty))
            .collect();
        for (k, f) in funcs.iter().enumerate() {
            exprs.push(Expr::Special(Special::SetValue(k, f.func.name()), f.ty));
        }
        let mut out = scope.clone();
        out.cols.extend(fscope.cols);
        let rel = Rel::Project {
            input: Box::new(std::mem::replace(left, Rel::Values { rows: vec![] })),
            exprs,
            srf: Some(crate::srf::ProjectSet { funcs }),
        };
        Ok(Some((rel, out)))
    }

    /// Set-returning functions in FROM as a relation: one column per function, named as
    /// PostgreSQL names them (the column aliases, else the table alias for a lone function,
    /// else the function's name), and `ordinality` last.
    pub(crate) fn function_rel(
        &mut self,
        funcs: Vec<TableFunc>,
        ordinality: bool,
        alias: Option<&ast::TableAlias>,
    ) -> (Rel, Scope) {
        let qual = alias.map_or_else(
            || {
                funcs
                    .first()
                    .map_or("unnest", |f| f.func.name())
                    .to_string()
            },
            |a| fold(&a.name),
        );
        let mut cols: Vec<(String, TypeId)> = funcs
            .iter()
            .map(|f| {
                let name = match alias {
                    Some(a) if funcs.len() == 1 && a.columns.is_empty() => fold(&a.name),
                    _ => f.func.name().to_string(),
                };
                (name, f.ty)
            })
            .collect();
        if ordinality {
            cols.push(("ordinality".into(), TypeId::Int8));
        }
        if let Some(a) = alias {
            for (c, an) in cols.iter_mut().zip(&a.columns) {
                c.0 = fold(&an.name);
            }
        }
        let scope = Scope {
            cols: cols
                .into_iter()
                .map(|(name, ty)| ScopeCol {
                    qualifier: Some(qual.clone()),
                    name,
                    ty,
                    typmod: -1,
                    table_oid: 0,
                    attnum: 0,
                    hidden: false,
                })
                .collect(),
        };
        (Rel::Function { funcs, ordinality }, scope)
    }

    pub fn series_args(
        &mut self,
        mut a: Vec<Expr>,
    ) -> PgResult<(Expr, Expr, Option<Expr>, TypeId)> {
        let no_function = |a: &[Expr]| {
            let tys: Vec<TypeId> = a.iter().map(Expr::ty).collect();
            super::func::no_function(self.catalog, "generate_series", &tys)
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
            out.push(self.coerce_in(e, SqlType::new(target), CastContext::Implicit)?);
        }
        let step = if out.len() == 3 { out.pop() } else { None };
        let stop = out.pop().ok_or_else(|| PgError::internal("series"))?;
        let start = out.pop().ok_or_else(|| PgError::internal("series"))?;
        Ok((start, stop, step, ty))
    }
}
