//! Expressions written with SQL's keyword syntax (IS [NOT] ..., CAST, BETWEEN, IN lists,
//! LIKE, CASE, SUBSTRING, TRIM, ...). They are bound here, out of `Binder::expr_inner`, so
//! that the frame every nesting level of an ordinary expression (operators, function calls,
//! parentheses, subqueries) leaves on the stack stays small: `max_stack_depth` then admits
//! deeper nesting (crate README, "Stack depth").

use super::types;
use super::{AggCtx, Binder, Scope, row};
use crate::expr::Expr;
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::CastContext;
use keel_types::{Datum, SqlType, TypeId};
use sqlparser::ast;

impl Binder<'_> {
    #[inline(never)]
    pub(super) fn keyword_expr(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        use ast::Expr as E;
        match e {
            E::IsDistinctFrom(a, b) | E::IsNotDistinctFrom(a, b) => {
                let l = self.expr(a, scope, agg)?;
                let r = self.expr(b, scope, agg)?;
                // The `=` operator resolved as for a comparison, then applied NULL-safely.
                match self.binary("=", l, r)? {
                    Expr::Bin { f, l, r, .. } => Ok(Expr::Distinct {
                        l,
                        r,
                        eq: f,
                        negated: matches!(e, E::IsNotDistinctFrom(..)),
                    }),
                    _ => Err(PgError::unsupported(format!("expression \"{e}\""))),
                }
            }
            // INTERVAL '1 day': a typed literal. Field qualifiers (INTERVAL '1' DAY) restrict
            // or reinterpret the value and are not supported.
            E::Interval(iv)
                if iv.leading_field.is_none()
                    && iv.last_field.is_none()
                    && iv.leading_precision.is_none()
                    && iv.fractional_seconds_precision.is_none()
                    && let E::Value(v) = iv.value.as_ref()
                    && let ast::Value::SingleQuotedString(s) = &v.value =>
            {
                let d = keel_types::io::parse_text(s, SqlType::new(TypeId::Interval))?;
                Ok(Expr::Const(d, TypeId::Interval))
            }
            E::IsUnknown(a) => Ok(Expr::IsNull(
                Box::new(self.bool_expr(a, scope, agg)?),
                false,
            )),
            E::IsNotUnknown(a) => Ok(Expr::IsNull(Box::new(self.bool_expr(a, scope, agg)?), true)),
            E::IsNull(a) | E::IsNotNull(a) => {
                let negated = matches!(e, E::IsNotNull(_));
                // ROW(a, b) IS [NOT] NULL: every field is [not] null (PostgreSQL's row test).
                if let Some(fields) = row::row_fields(a) {
                    let mut acc = Expr::Const(Datum::Bool(true), TypeId::Bool);
                    for (i, f) in fields.into_iter().enumerate() {
                        let t = Expr::IsNull(Box::new(self.expr(f, scope, agg)?), negated);
                        acc = if i == 0 { t } else { Expr::and(acc, t) };
                    }
                    return Ok(acc);
                }
                Ok(Expr::IsNull(Box::new(self.expr(a, scope, agg)?), negated))
            }
            E::IsTrue(a) => Ok(Expr::IsBool {
                arg: Box::new(self.bool_expr(a, scope, agg)?),
                value: true,
                negated: false,
            }),
            E::IsNotTrue(a) => Ok(Expr::IsBool {
                arg: Box::new(self.bool_expr(a, scope, agg)?),
                value: true,
                negated: true,
            }),
            E::IsFalse(a) => Ok(Expr::IsBool {
                arg: Box::new(self.bool_expr(a, scope, agg)?),
                value: false,
                negated: false,
            }),
            E::IsNotFalse(a) => Ok(Expr::IsBool {
                arg: Box::new(self.bool_expr(a, scope, agg)?),
                value: false,
                negated: true,
            }),
            E::Cast {
                expr, data_type, ..
            } => {
                // 'name'::regclass: the relation's oid, found now.
                if data_type.to_string().eq_ignore_ascii_case("regclass")
                    && let E::Value(v) = expr.as_ref()
                    && let ast::Value::SingleQuotedString(s) = &v.value
                {
                    return self.regclass_constant(s);
                }
                let to = types::type_from_name_in(&data_type.to_string(), self.catalog)?;
                // ARRAY[]::int[]: an empty constructor takes its type from the cast.
                if let E::Array(arr) = expr.as_ref()
                    && to.id.is_vector()
                {
                    // ARRAY[...]::int2vector builds the int2[] and checks it is a vector.
                    if arr.elem.is_empty() {
                        return Err(PgError::new(
                            sqlstate::DATATYPE_MISMATCH,
                            format!("array is not a valid {}", to.id.name()),
                        ));
                    }
                    let plain = SqlType::with_typmod(to.id.devector(), to.typmod);
                    let a = self.array_ctor_as(arr, Some(plain), scope, agg)?;
                    return Ok(Expr::Cast {
                        arg: Box::new(a),
                        from: plain.id,
                        to,
                        ctx: CastContext::Explicit,
                    });
                }
                if let E::Array(arr) = expr.as_ref()
                    && arr.elem.is_empty()
                    && let Some(elem) = to.id.elem()
                {
                    let empty = keel_types::array::Array::empty(elem);
                    return Ok(Expr::Const(Datum::Array(std::sync::Arc::new(empty)), to.id));
                }
                let a = match expr.as_ref() {
                    E::Array(arr) if to.id.is_array() => {
                        self.array_ctor_as(arr, Some(to), scope, agg)?
                    }
                    _ => self.expr(expr, scope, agg)?,
                };
                self.coerce_in(a, to, CastContext::Explicit)
                    .map_err(|err| self.at_cast(err, expr))
            }
            E::TypedString(ts) => {
                let to = types::type_from_name_in(&ts.data_type.to_string(), self.catalog)?;
                if let TypeId::Composite(_) | TypeId::CompositeArray(_) = to.id {
                    let s = match &ts.value.value {
                        ast::Value::SingleQuotedString(s) => s.clone(),
                        other => other.to_string(),
                    };
                    let lit = Expr::Const(Datum::Text(s), TypeId::Unknown);
                    return self.coerce_in(lit, to, CastContext::Explicit);
                }
                let s = match &ts.value.value {
                    ast::Value::SingleQuotedString(s) => s.clone(),
                    other => other.to_string(),
                };
                // `varchar(5) 'abcdef'` is an explicit cast of the literal (truncates).
                let d = keel_types::cast::cast(
                    Datum::Text(s),
                    TypeId::Unknown,
                    to,
                    CastContext::Explicit,
                )?;
                Ok(Expr::Const(d, to.id))
            }
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let sym = keel_parser::symmetric::marker_arg(low);
                let a = self.expr(expr, scope, agg)?;
                let lo = self.expr(sym.unwrap_or(low), scope, agg)?;
                let hi = self.expr(high, scope, agg)?;
                let ge = self.binary(">=", a.clone(), lo.clone())?;
                let le = self.binary("<=", a.clone(), hi.clone())?;
                let mut both = Expr::and(ge, le);
                if sym.is_some() {
                    // BETWEEN SYMMETRIC: either order of the bounds.
                    let ge = self.binary(">=", a.clone(), hi)?;
                    let le = self.binary("<=", a, lo)?;
                    // Each side stays one AND: OR of two ANDs.
                    both = Expr::Or(vec![both, Expr::and(ge, le)]);
                }
                Ok(if *negated {
                    Expr::Not(Box::new(both))
                } else {
                    both
                })
            }
            E::InList {
                expr,
                list,
                negated,
            } => {
                let a = self.expr(expr, scope, agg)?;
                let mut acc: Option<Expr> = None;
                for item in list {
                    let mut b = self.expr(item, scope, agg)?;
                    // The list shares one type (PostgreSQL's common type): an untyped
                    // literal against a composite is read as that composite.
                    if let TypeId::Composite(_) = a.ty()
                        && b.ty() == TypeId::Unknown
                    {
                        b = self.coerce_in(b, SqlType::new(a.ty()), CastContext::Implicit)?;
                    }
                    let eq = self.binary("=", a.clone(), b)?;
                    acc = Some(match acc {
                        None => eq,
                        Some(p) => Expr::or(p, eq),
                    });
                }
                let acc = acc.ok_or_else(|| {
                    PgError::new(sqlstate::SYNTAX_ERROR, "syntax error at or near \")\"")
                })?;
                Ok(if *negated {
                    Expr::Not(Box::new(acc))
                } else {
                    acc
                })
            }
            E::Like {
                negated,
                any,
                expr,
                pattern,
                escape_char,
            }
            | E::ILike {
                negated,
                any,
                expr,
                pattern,
                escape_char,
            } => {
                if escape_char.is_some() {
                    return Err(PgError::unsupported("LIKE ... ESCAPE"));
                }
                let op = match (matches!(e, E::ILike { .. }), negated) {
                    (false, false) => "~~",
                    (false, true) => "!~~",
                    (true, false) => "~~*",
                    (true, true) => "!~~*",
                };
                // `x LIKE ANY (array)`: sqlparser marks it `any`; `LIKE ALL (array)` and
                // `SOME` it reads as a call of a function named all / some.
                if *any {
                    let arr = match pattern.as_ref() {
                        ast::Expr::Nested(inner) => inner.as_ref(),
                        other => other,
                    };
                    return self
                        .array_quantified(expr, op, arr, false, scope, agg)
                        .map_err(|err| self.like_position(err, expr, pattern));
                }
                if let ast::Expr::Function(f) = pattern.as_ref()
                    && let [part] = f.name.0.as_slice()
                    && let Some(id) = part.as_ident()
                    && id.quote_style.is_none()
                    && let ast::FunctionArguments::List(l) = &f.args
                    && let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(arr))] =
                        l.args.as_slice()
                {
                    let quantifier = id.value.to_ascii_lowercase();
                    if matches!(quantifier.as_str(), "any" | "some" | "all")
                        && !matches!(arr, ast::Expr::Subquery(_))
                    {
                        return self
                            .array_quantified(expr, op, arr, quantifier == "all", scope, agg)
                            .map_err(|err| self.like_position(err, expr, pattern));
                    }
                }
                let a = self.expr(expr, scope, agg)?;
                let b = self.expr(pattern, scope, agg)?;
                self.binary(op, a, b)
            }
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let op = match operand {
                    Some(o) => Some(self.expr(o, scope, agg)?),
                    None => None,
                };
                let mut whens = Vec::new();
                for cw in conditions {
                    let c = match &op {
                        Some(o) => {
                            let v = self.expr(&cw.condition, scope, agg)?;
                            self.binary("=", o.clone(), v)?
                        }
                        None => self.bool_expr(&cw.condition, scope, agg)?,
                    };
                    whens.push((c, self.expr(&cw.result, scope, agg)?));
                }
                let default = match else_result {
                    Some(x) => self.expr(x, scope, agg)?,
                    None => Expr::Const(Datum::Null, TypeId::Unknown),
                };
                // The ELSE result leads the type resolution, as in PostgreSQL.
                let mut results = vec![default];
                results.extend(whens.iter().map(|w| w.1.clone()));
                let (ty, results) = self.unify(results, "CASE")?;
                let mut results = results.into_iter();
                let default = Box::new(results.next().unwrap_or(Expr::Const(Datum::Null, ty)));
                let whens = whens
                    .into_iter()
                    .map(|(c, _)| (c, results.next().unwrap_or(Expr::Const(Datum::Null, ty))))
                    .collect();
                Ok(Expr::Case { whens, default, ty })
            }
            E::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.expr(expr, scope, agg)?];
                match substring_from {
                    Some(f) => args.push(self.expr(f, scope, agg)?),
                    None => args.push(Expr::Const(Datum::Int4(1), TypeId::Int4)),
                }
                if let Some(f) = substring_for {
                    args.push(self.expr(f, scope, agg)?);
                }
                self.named_function("substr", args)
            }
            E::Position { expr, r#in } => {
                let args = vec![self.expr(r#in, scope, agg)?, self.expr(expr, scope, agg)?];
                self.named_function("strpos", args)
            }
            E::Trim {
                expr,
                trim_where,
                trim_what,
                trim_characters,
            } => {
                if trim_characters.is_some() {
                    return Err(PgError::unsupported("TRIM with a character list"));
                }
                let name = match trim_where {
                    Some(ast::TrimWhereField::Leading) => "ltrim",
                    Some(ast::TrimWhereField::Trailing) => "rtrim",
                    _ => "btrim",
                };
                let mut args = vec![self.expr(expr, scope, agg)?];
                if let Some(w) = trim_what {
                    args.push(self.expr(w, scope, agg)?);
                }
                self.named_function(name, args)
            }
            // CEIL(x) / FLOOR(x) get their own AST nodes; the TO field and scale forms are
            // not PostgreSQL syntax.
            E::Ceil {
                expr,
                field: ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime),
            } => {
                let args = vec![self.expr(expr, scope, agg)?];
                self.named_function("ceil", args)
            }
            E::Floor {
                expr,
                field: ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime),
            } => {
                let args = vec![self.expr(expr, scope, agg)?];
                self.named_function("floor", args)
            }
            E::Overlay {
                expr,
                overlay_what,
                overlay_from,
                overlay_for,
            } => {
                let mut args = vec![
                    self.expr(expr, scope, agg)?,
                    self.expr(overlay_what, scope, agg)?,
                    self.expr(overlay_from, scope, agg)?,
                ];
                if let Some(n) = overlay_for {
                    args.push(self.expr(n, scope, agg)?);
                }
                self.named_function("overlay", args)
            }
            other => Err(PgError::unsupported(format!("expression \"{other}\""))),
        }
    }
}
