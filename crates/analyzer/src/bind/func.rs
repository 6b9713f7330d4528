//! Function and aggregate calls: aggregates (DISTINCT, ORDER BY, FILTER) are collected into
//! the aggregation context; functions needing the engine or session become `Special`s;
//! everything else resolves through `keel_types::func` once, at bind time.

use super::{AggCtx, Binder, Scope, is_aggregate_name, object_name};
use crate::expr::{Expr, Special};
use crate::query::AggCall;
use keel_catalog::Relation;
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::CastContext;
use keel_types::{Datum, SqlType, TypeId};
use sqlparser::ast;

impl Binder<'_> {
    pub(crate) fn function(
        &mut self,
        f: &ast::Function,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        let (schema, name) = object_name(&f.name);
        if schema.as_deref().is_some_and(|s| s != "pg_catalog") {
            return Err(PgError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("function {}() does not exist", name),
            ));
        }
        let mut order_asts: Vec<ast::OrderByExpr> = Vec::new();
        let mut named_asts: Vec<(String, &ast::Expr)> = Vec::new();
        let (arg_asts, star, distinct) = match &f.args {
            ast::FunctionArguments::None => (vec![], false, false),
            ast::FunctionArguments::Subquery(q) if name == "array" => {
                return self.array_subquery(q, scope, agg);
            }
            ast::FunctionArguments::Subquery(_) => {
                return Err(PgError::unsupported("subqueries in expressions"));
            }
            ast::FunctionArguments::List(l) => {
                for c in &l.clauses {
                    match c {
                        ast::FunctionArgumentClause::OrderBy(o) if is_aggregate_name(&name) => {
                            order_asts.extend(o.iter().cloned())
                        }
                        _ => {
                            return Err(PgError::unsupported(format!(
                                "this clause in the arguments of {name}()"
                            )));
                        }
                    }
                }
                let mut args = Vec::new();
                let mut star = false;
                for a in &l.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => args.push(x),
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => star = true,
                        ast::FunctionArg::Named {
                            name: n,
                            arg: ast::FunctionArgExpr::Expr(x),
                            ..
                        } => named_asts.push((super::fold(n), x)),
                        ast::FunctionArg::ExprNamed {
                            name: ast::Expr::Identifier(n),
                            arg: ast::FunctionArgExpr::Expr(x),
                            ..
                        } => named_asts.push((super::fold(n), x)),
                        _ => {
                            return Err(PgError::unsupported(
                                "named or qualified-wildcard function arguments",
                            ));
                        }
                    }
                }
                (
                    args,
                    star,
                    matches!(
                        l.duplicate_treatment,
                        Some(ast::DuplicateTreatment::Distinct)
                    ),
                )
            }
        };
        if f.over.is_some() || !f.within_group.is_empty() {
            return Err(PgError::unsupported("window functions and WITHIN GROUP"));
        }
        if f.filter.is_some() && !is_aggregate_name(&name) {
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("FILTER specified, but {name} is not an aggregate function"),
            ));
        }
        if is_aggregate_name(&name) {
            return self.aggregate_call(f, &name, &arg_asts, star, distinct, &order_asts, agg);
        }
        if let Some(func) = crate::srf::SetFunc::by_name(&name) {
            return self.set_function_call(func, f, &arg_asts, scope, agg);
        }
        let mut args = Vec::with_capacity(arg_asts.len());
        for x in &arg_asts {
            args.push(self.expr(x, scope, agg)?);
        }
        if !named_asts.is_empty() || self.has_user_function(&name) {
            let tys: Vec<TypeId> = args.iter().map(Expr::ty).collect();
            // pg_catalog comes first on the search path: a built-in that fits wins.
            if !named_asts.is_empty() || keel_types::func::resolve_function(&name, &tys).is_none() {
                let mut named = Vec::with_capacity(named_asts.len());
                let mut spans: Vec<_> = arg_asts
                    .iter()
                    .map(|x| sqlparser::ast::Spanned::span(*x))
                    .collect();
                for (n, x) in named_asts {
                    spans.push(sqlparser::ast::Spanned::span(x));
                    named.push((n, self.expr(x, scope, agg)?));
                }
                return self.user_function(
                    &name,
                    args,
                    named,
                    sqlparser::ast::Spanned::span(&f.name),
                    &spans,
                );
            }
        }
        self.named_function(&name, args)
    }

    /// An aggregate call: bound over the aggregation context's input and collected there;
    /// the expression is a reference to its result. Out of line: its locals would otherwise
    /// sit in every nested function call's frame.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn aggregate_call(
        &mut self,
        f: &ast::Function,
        name: &str,
        arg_asts: &[&ast::Expr],
        star: bool,
        distinct: bool,
        order_asts: &[ast::OrderByExpr],
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        let Some(a) = agg.as_deref_mut() else {
            self.agg_seen = true;
            return Err(PgError::new(
                sqlstate::GROUPING_ERROR,
                "aggregate functions are not allowed here",
            ));
        };
        let input = a.input.clone();
        let mut args = Vec::new();
        let sink = self.srf_sink.replace((super::IN_AGGREGATE, Vec::new()));
        let bound: PgResult<()> = arg_asts.iter().try_for_each(|x| {
            args.push(self.expr(x, &input, &mut None)?);
            Ok(())
        });
        self.srf_sink = sink;
        bound?;
        let mut tys: Vec<TypeId> = args
            .iter()
            .map(|e| {
                if e.ty() == TypeId::Unknown {
                    TypeId::Text
                } else {
                    e.ty()
                }
            })
            .collect();
        if star {
            tys.clear();
            args.clear();
        }
        let resolved = keel_types::func::resolve_aggregate(
            if name == "every" { "bool_and" } else { name },
            &tys,
        )
        .ok_or_else(|| no_function(self.catalog, name, &tys))?;
        let mut coerced = Vec::new();
        for (e, t) in args.into_iter().zip(resolved.args.iter()) {
            coerced.push(self.coerce_in(e, SqlType::new(*t), CastContext::Implicit)?);
        }
        let mut order = Vec::new();
        for o in order_asts {
            let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            order.push(crate::query::SortKey {
                expr: self.expr(&o.expr, &input, &mut None)?,
                desc,
                nulls_first: o.options.nulls_first.unwrap_or(desc),
            });
        }
        // PostgreSQL feeds a DISTINCT aggregate its inputs sorted (that is how it
        // removes duplicates), which shows in string_agg's output and float sums.
        if distinct && order.is_empty() && matches!(name, "string_agg" | "sum" | "avg") {
            for e in &coerced {
                order.push(crate::query::SortKey {
                    expr: e.clone(),
                    desc: false,
                    nulls_first: false,
                });
            }
        }
        let filter = match &f.filter {
            Some(w) => Some(self.bool_expr(w, &input, &mut None)?),
            None => None,
        };
        let a = agg
            .as_deref_mut()
            .ok_or_else(|| PgError::internal("aggregate context lost"))?;
        a.aggs.push(AggCall {
            name: name.to_string(),
            agg: resolved,
            args: coerced,
            distinct,
            order,
            filter,
        });
        Ok(Expr::Col(a.group.len() + a.aggs.len() - 1, resolved.result))
    }

    #[inline(never)]
    pub fn named_function(&mut self, name: &str, args: Vec<Expr>) -> PgResult<Expr> {
        match (name, args.len()) {
            ("version", 0) => return Ok(Expr::Special(Special::Version, TypeId::Text)),
            ("current_timestamp" | "now" | "transaction_timestamp", 0)
            | ("localtimestamp" | "current_date", 0) => {
                let f = keel_types::func::resolve_function(
                    if name == "current_date" || name == "localtimestamp" {
                        name
                    } else {
                        "now"
                    },
                    &[],
                )
                .or_else(|| keel_types::func::resolve_function("now", &[]))
                .ok_or_else(|| no_function(self.catalog, name, &[]))?;
                return Ok(Expr::Func { f, args });
            }
            // The argument's bound type, not its runtime value: pg_typeof(NULL::int) is
            // integer. PostgreSQL returns regtype; keel has no regtype, so this is its text.
            ("pg_typeof", 1) => {
                let ty = args[0].ty();
                return Ok(Expr::Const(
                    Datum::Text(self.catalog.type_name(ty)),
                    TypeId::Text,
                ));
            }
            ("pg_sleep", 1) => {
                let arg = args.into_iter().next().expect("one argument");
                // Only what casts to float8 implicitly: numbers and untyped literals.
                use TypeId::*;
                let ty = arg.ty();
                if !matches!(ty, Int2 | Int4 | Int8 | Float4 | Float8 | Numeric | Unknown) {
                    return Err(no_function(self.catalog, name, &[ty]));
                }
                let secs =
                    self.coerce_in(arg, SqlType::new(TypeId::Float8), CastContext::Implicit)?;
                return Ok(Expr::Special(Special::Sleep(Box::new(secs)), TypeId::Void));
            }
            (n, k) if let Some(call) = crate::expr::AdvisoryCall::from_name(n) => {
                let want: &[TypeId] = match (call.op, k) {
                    (crate::expr::AdvisoryOp::UnlockAll, 0) => &[],
                    (crate::expr::AdvisoryOp::UnlockAll, _) => &[TypeId::Void],
                    (_, 1) => &[TypeId::Int8],
                    (_, 2) => &[TypeId::Int4, TypeId::Int4],
                    _ => &[TypeId::Void],
                };
                let tys: Vec<TypeId> = args.iter().map(Expr::ty).collect();
                if want.len() != args.len() || want.contains(&TypeId::Void) {
                    return Err(no_function(self.catalog, name, &tys));
                }
                let mut coerced = Vec::with_capacity(args.len());
                for (a, &t) in args.into_iter().zip(want) {
                    let at = a.ty();
                    let ok = matches!(
                        (t, at),
                        (_, TypeId::Unknown)
                            | (TypeId::Int8, TypeId::Int2 | TypeId::Int4 | TypeId::Int8)
                            | (TypeId::Int4, TypeId::Int2 | TypeId::Int4)
                    );
                    if !ok {
                        return Err(no_function(self.catalog, name, &tys));
                    }
                    coerced.push(self.coerce_in(a, SqlType::new(t), CastContext::Implicit)?);
                }
                let ty = match call.op {
                    crate::expr::AdvisoryOp::Lock | crate::expr::AdvisoryOp::UnlockAll => {
                        TypeId::Void
                    }
                    _ => TypeId::Bool,
                };
                return Ok(Expr::Special(Special::Advisory(call, coerced), ty));
            }
            ("pg_backend_pid", 0) => return Ok(Expr::Special(Special::PgBackendPid, TypeId::Int4)),
            ("pg_trigger_depth", 0) => {
                return Ok(Expr::Special(Special::PgTriggerDepth, TypeId::Int4));
            }
            ("current_setting", 1 | 2) => {
                let missing_ok = match args.get(1) {
                    None => Some(false),
                    Some(Expr::Const(Datum::Bool(b), _)) => Some(*b),
                    Some(_) => None,
                };
                if let (Expr::Const(Datum::Text(s), _), Some(missing_ok)) = (&args[0], missing_ok) {
                    return Ok(Expr::Special(
                        Special::CurrentSetting(s.clone(), missing_ok),
                        TypeId::Text,
                    ));
                }
                return Err(PgError::unsupported("current_setting() of a non-constant"));
            }
            ("satisfies_hash_partition", n) if n >= 3 => {
                return self.satisfies_hash_partition(args);
            }
            ("nextval" | "currval", 1) | ("setval", 2 | 3) => {
                let Some(s) = self.relation_arg(&args[0]) else {
                    return Err(PgError::unsupported(format!("{name}() of a non-constant")));
                };
                let s = &s;
                let n = s
                    .trim_matches('"')
                    .rsplit('.')
                    .next()
                    .unwrap_or(s)
                    .to_lowercase();
                let seq = match self.catalog.relation(&n) {
                    Some(Relation::Sequence(seq)) => seq,
                    Some(_) => {
                        return Err(PgError::new(
                            sqlstate::WRONG_OBJECT_TYPE,
                            format!("\"{n}\" is not a sequence"),
                        ));
                    }
                    None => {
                        return Err(PgError::new(
                            sqlstate::UNDEFINED_TABLE,
                            format!("relation \"{n}\" does not exist"),
                        ));
                    }
                };
                let special = match name {
                    "nextval" => Special::Nextval(seq),
                    "currval" => Special::Currval(seq),
                    _ => {
                        let mut it = args.into_iter().skip(1);
                        let value = it.next().unwrap_or(Expr::Const(Datum::Null, TypeId::Int8));
                        let value = self.coerce_in(
                            value,
                            SqlType::new(TypeId::Int8),
                            CastContext::Implicit,
                        )?;
                        let called = it
                            .next()
                            .map(|e| {
                                self.coerce_in(e, SqlType::new(TypeId::Bool), CastContext::Implicit)
                            })
                            .transpose()?;
                        Special::Setval(seq, Box::new(value), called.map(Box::new))
                    }
                };
                return Ok(Expr::Special(special, TypeId::Int8));
            }
            (
                "pg_relation_size" | "pg_total_relation_size" | "pg_table_size" | "pg_indexes_size",
                1,
            ) => {
                let rel = match self.relation_arg(&args[0]) {
                    Some(s) => s.trim_matches('"').to_lowercase(),
                    None => {
                        return Err(PgError::unsupported(format!("{name}() of a non-constant")));
                    }
                };
                let files = match self.catalog.relation(&rel) {
                    Some(Relation::Table(t)) => {
                        let mut v = Vec::new();
                        if name != "pg_indexes_size" {
                            v.push(t.relfile);
                        }
                        if name == "pg_total_relation_size" || name == "pg_indexes_size" {
                            v.extend(self.catalog.indexes_of(t.oid).map(|i| i.relfile));
                        }
                        v
                    }
                    Some(Relation::Index(i)) => vec![i.relfile],
                    Some(Relation::Sequence(_) | Relation::View(_)) => vec![],
                    None => {
                        return Err(PgError::new(
                            sqlstate::UNDEFINED_TABLE,
                            format!("relation \"{rel}\" does not exist"),
                        ));
                    }
                };
                return Ok(Expr::Special(Special::RelationSize(files), TypeId::Int8));
            }
            ("nullif", 2) => {
                let mut it = args.into_iter();
                let (a, b) = (
                    it.next()
                        .unwrap_or(Expr::Const(Datum::Null, TypeId::Unknown)),
                    it.next()
                        .unwrap_or(Expr::Const(Datum::Null, TypeId::Unknown)),
                );
                // PostgreSQL's NULLIF is `a = b` resolved as an operator; its type is the
                // operator's left input type, a coerced to it (`nullif(null, 1)` is integer,
                // `nullif(1, 1.5)` numeric, `nullif(1::int2, 2)` smallint).
                let eq = self.binary("=", a.clone(), b)?;
                let a = match &eq {
                    Expr::Bin { l, .. } => (**l).clone(),
                    _ => a,
                };
                let ty = a.ty();
                return Ok(Expr::Case {
                    whens: vec![(eq, Expr::Const(Datum::Null, ty))],
                    default: Box::new(a),
                    ty,
                });
            }
            ("greatest" | "least", n) if n > 0 => {
                let (ty, args) = self.unify(args, "GREATEST")?;
                return Ok(Expr::MinMax {
                    args,
                    greatest: name == "greatest",
                    ty,
                });
            }
            ("coalesce", n) if n > 0 => {
                let (ty, args) = self.unify(args, "COALESCE")?;
                return Ok(Expr::Coalesce(args, ty));
            }
            _ => {}
        }
        let tys: Vec<TypeId> = args.iter().map(Expr::ty).collect();
        let f = keel_types::func::resolve_function(name, &tys)
            .ok_or_else(|| no_function(self.catalog, name, &tys))?;
        let mut coerced = Vec::with_capacity(args.len());
        for (i, e) in args.into_iter().enumerate() {
            let t = f
                .args
                .get(i)
                .or(f.args.last())
                .copied()
                .unwrap_or(TypeId::Unknown);
            coerced.push(if t == TypeId::Unknown {
                e
            } else {
                self.coerce_in(e, SqlType::new(t), CastContext::Implicit)?
            });
        }
        Ok(Expr::Func { f, args: coerced })
    }
}

pub(super) fn no_function(cat: &keel_catalog::Catalog, name: &str, tys: &[TypeId]) -> PgError {
    let list: Vec<String> = tys.iter().map(|t| cat.type_name(*t)).collect();
    PgError::new(sqlstate::UNDEFINED_FUNCTION, format!("function {name}({}) does not exist", list.join(", ")))
        .with_hint("No function matches the given name and argument types. You might need to add explicit type casts.")
}
