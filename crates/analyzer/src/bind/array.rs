//! Binding of array syntax: `ARRAY[...]`, `ARRAY(subquery)`, subscripts and slices, and
//! `op ANY/ALL (array)`.

use super::{AggCtx, Binder, Scope};
use crate::expr::{ArrayExpr, ArraySub, Expr, SubKind};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::array::Array;
use keel_types::cast::CastContext;
use keel_types::{Datum, SqlType, TypeId};
use sqlparser::ast;
use sqlparser::ast::Spanned;

/// The common type of ARRAY's elements (`keel_types::common_type`).
pub(super) fn common_type(types: impl Iterator<Item = TypeId>) -> PgResult<TypeId> {
    keel_types::common_type::common_type_of("ARRAY", types)
}

impl Binder<'_> {
    /// `ARRAY[a, b, ...]`; nested brackets build a multidimensional array.
    #[inline(never)]
    pub(super) fn array_ctor(
        &mut self,
        arr: &ast::Array,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        self.array_ctor_as(arr, None, scope, agg)
    }

    /// `ARRAY[...]`, with the array type `to` when the constructor is the operand of a cast
    /// to it: each element is then cast to the element type, as PostgreSQL passes a cast's
    /// type down into the constructor (`ARRAY[1, 'NaN']::float8[]` reads `'NaN'` as a
    /// float8).
    pub(super) fn array_ctor_as(
        &mut self,
        arr: &ast::Array,
        to: Option<SqlType>,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        let mut elems = Vec::with_capacity(arr.elem.len());
        for e in &arr.elem {
            // Inner brackets without the ARRAY keyword are sub-array constructors.
            let bound = match (e, to) {
                (ast::Expr::Array(inner), _) => self.array_ctor_as(inner, to, scope, agg)?,
                (e, Some(to)) if to.id.elem().is_some() => {
                    let elem = SqlType::with_typmod(to.id.elem().unwrap_or(to.id), to.typmod);
                    let b = self.expr(e, scope, agg)?;
                    if b.ty().is_array() && b.ty() == to.id {
                        b
                    } else {
                        self.coerce_in(b, elem, CastContext::Explicit)
                            .map_err(|err| self.at_cast(err, e))?
                    }
                }
                (e, _) => self.expr(e, scope, agg)?,
            };
            elems.push(bound);
        }
        let nested = !elems.is_empty() && elems.iter().all(|e| e.ty().is_array());
        if nested {
            let ty = common_type(elems.iter().map(|e| e.ty().elem().unwrap_or(TypeId::Text)))?;
            let ty = ty.array_of().unwrap_or(TypeId::TextArray);
            let elems = elems
                .into_iter()
                .map(|e| self.coerce_in(e, SqlType::new(ty), CastContext::Implicit))
                .collect::<PgResult<Vec<_>>>()?;
            return Ok(Expr::Array(Box::new(ArrayExpr::Ctor {
                elems,
                ty,
                nested: true,
            })));
        }
        if elems.is_empty() {
            return Err(PgError::new(
                sqlstate::INDETERMINATE_DATATYPE,
                "cannot determine type of empty array",
            )
            .with_hint("Explicitly cast to the desired type, for example ARRAY[]::integer[]."));
        }
        let elem_ty = common_type(elems.iter().map(Expr::ty))?;
        let Some(ty) = elem_ty.array_of() else {
            return Err(PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("could not find array type for data type {}", elem_ty.name()),
            ));
        };
        let elems = elems
            .into_iter()
            .map(|e| self.coerce_in(e, SqlType::new(elem_ty), CastContext::Implicit))
            .collect::<PgResult<Vec<_>>>()?;
        // An array of constants is a constant, as PostgreSQL's planner folds it: built once,
        // and each row that reads it shares it.
        if elems
            .iter()
            .all(|e| matches!(e, Expr::Const(_, t) if *t == elem_ty))
        {
            Array::check_size(elems.len())?;
            let items = elems
                .into_iter()
                .map(|e| match e {
                    Expr::Const(v, _) => v,
                    _ => Datum::Null,
                })
                .collect();
            let value = Array::from_items(elem_ty, items);
            return Ok(Expr::Const(Datum::Array(std::sync::Arc::new(value)), ty));
        }
        Ok(Expr::Array(Box::new(ArrayExpr::Ctor {
            elems,
            ty,
            nested: false,
        })))
    }

    /// `ARRAY(SELECT ...)`.
    #[inline(never)]
    pub(super) fn array_subquery(
        &mut self,
        q: &ast::Query,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        let (plan, types, refs) = self.bind_subquery(q, scope, agg)?;
        if types.len() != 1 {
            return Err(PgError::new(
                sqlstate::SYNTAX_ERROR,
                "subquery must return only one column",
            ));
        }
        let elem = if types[0] == TypeId::Unknown {
            TypeId::Text
        } else {
            types[0]
        };
        // Of an array column, the result has one more dimension and the same type.
        let stacked = elem.is_array();
        let ty = match elem.array_of() {
            Some(ty) => ty,
            None if stacked => elem,
            None => {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!("could not find array type for data type {}", elem.name()),
                ));
            }
        };
        Ok(self.subplan(SubKind::Array { stacked }, plan, refs, ty))
    }

    /// `expr[i]`, `expr[i][j]`, `expr[lo:hi]`.
    #[inline(never)]
    pub(super) fn array_subscript(
        &mut self,
        root: &ast::Expr,
        chain: &[ast::AccessExpr],
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        // `t.a[1]` arrives as the root `t` with `.a` first in the chain: the names before
        // the first subscript are one qualified column reference.
        let dots = chain
            .iter()
            .take_while(|a| matches!(a, ast::AccessExpr::Dot(ast::Expr::Identifier(_))))
            .count();
        let qualified;
        let (root, chain) = match root {
            ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) if dots > 0 => {
                let mut names = match root {
                    ast::Expr::Identifier(i) => vec![i.clone()],
                    ast::Expr::CompoundIdentifier(v) => v.clone(),
                    _ => Vec::new(),
                };
                names.extend(chain[..dots].iter().filter_map(|a| match a {
                    ast::AccessExpr::Dot(ast::Expr::Identifier(i)) => Some(i.clone()),
                    _ => None,
                }));
                qualified = ast::Expr::CompoundIdentifier(names);
                (&qualified, &chain[dots..])
            }
            _ => (root, chain),
        };
        if chain.is_empty() {
            return self.expr(root, scope, agg);
        }
        let arr = self.expr(root, scope, agg)?;
        self.access_chain(arr, chain, scope, agg)
    }

    /// Applies `[...]` subscripts and `.field` selections to `arr`, left to right: the
    /// subscripts in a row make one subscript expression (`a[1][2]`), and a field
    /// selection applies to what they select (`c2[2].f2`).
    fn access_chain(
        &mut self,
        mut arr: Expr,
        chain: &[ast::AccessExpr],
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        let run = chain
            .iter()
            .take_while(|a| matches!(a, ast::AccessExpr::Subscript(_)))
            .count();
        if run == 0 {
            let Some((first, rest)) = chain.split_first() else {
                return Ok(arr);
            };
            let ast::AccessExpr::Dot(ast::Expr::Identifier(field)) = first else {
                return Err(PgError::unsupported("this form of field selection"));
            };
            let name = super::fold(field);
            let selected = self.field_of(arr, &name)?;
            return self.access_chain(selected, rest, scope, agg);
        }
        let (subscripts, rest) = chain.split_at(run);
        if arr.ty() == TypeId::Unknown {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                "cannot subscript type unknown because it does not support subscripting",
            ));
        }
        let Some(elem) = arr.ty().elem() else {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!(
                    "cannot subscript type {} because it does not support subscripting",
                    arr.ty().name()
                ),
            ));
        };
        let mut subs = Vec::new();
        let mut slice = false;
        for a in subscripts {
            let ast::AccessExpr::Subscript(s) = a else {
                unreachable!("the run holds only subscripts")
            };
            match s {
                ast::Subscript::Index { index } => subs.push(ArraySub {
                    lower: None,
                    upper: Some(self.subscript_value(index, scope, agg)?),
                    plain: true,
                }),
                ast::Subscript::Slice {
                    lower_bound,
                    upper_bound,
                    stride,
                } => {
                    if stride.is_some() {
                        return Err(PgError::new(
                            sqlstate::SYNTAX_ERROR,
                            "syntax error at or near \":\"",
                        ));
                    }
                    slice = true;
                    let lower = lower_bound
                        .as_ref()
                        .map(|e| self.subscript_value(e, scope, agg))
                        .transpose()?;
                    let upper = upper_bound
                        .as_ref()
                        .map(|e| self.subscript_value(e, scope, agg))
                        .transpose()?;
                    subs.push(ArraySub {
                        lower,
                        upper,
                        plain: false,
                    });
                }
            }
        }
        if subs.len() > keel_types::array::MAXDIM {
            return Err(PgError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!(
                    "number of array dimensions ({}) exceeds the maximum allowed ({})",
                    subs.len(),
                    keel_types::array::MAXDIM
                ),
            ));
        }
        // A vector's slice is its plain array (`('1 2'::int2vector)[0:0]` is int2[]).
        let ty = if slice { arr.ty().devector() } else { elem };
        arr = Expr::Array(Box::new(ArrayExpr::Subscript {
            arr,
            subs,
            slice,
            ty,
        }));
        self.access_chain(arr, rest, scope, agg)
    }

    /// A subscript coerced to int4 the way an assignment cast does (`a[random()*6+1]`
    /// rounds its float8).
    fn subscript_value(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        let x = self.expr(e, scope, agg)?;
        let from = x.ty();
        if from == TypeId::Unknown {
            // A literal goes through int4's input function ('x' is 22P02).
            return self
                .coerce_in(x, SqlType::new(TypeId::Int4), CastContext::Implicit)
                .map_err(|err| self.at(err, e.span()));
        }
        self.coerce_in(x, SqlType::new(TypeId::Int4), CastContext::Assignment)
            .map_err(|_| {
                PgError::new(
                    sqlstate::DATATYPE_MISMATCH,
                    "array subscript must have type integer",
                )
                .with_datatype(from.name())
            })
    }

    /// `lhs op ANY (array)` / `lhs op ALL (array)`, also with an array parameter
    /// (`id = any($1)` makes `$1` an array of `id`'s type).
    #[inline(never)]
    pub(super) fn array_quantified(
        &mut self,
        lhs: &ast::Expr,
        op: &'static str,
        rhs: &ast::Expr,
        all: bool,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        let mut l = self.expr(lhs, scope, agg)?;
        let mut r = self.expr(rhs, scope, agg)?;
        if r.ty() == TypeId::Unknown {
            let lt = if l.ty() == TypeId::Unknown {
                TypeId::Text
            } else {
                l.ty()
            };
            let Some(at) = lt.array_of() else {
                return Err(PgError::unsupported(format!(
                    "ANY/ALL over an array of {}",
                    lt.name()
                )));
            };
            r = self.coerce_in(r, SqlType::new(at), CastContext::Implicit)?;
        }
        let Some(elem) = r.ty().elem() else {
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                "op ANY/ALL (array) requires array on right side",
            ));
        };
        if l.ty() == TypeId::Unknown {
            l = self.coerce_in(l, SqlType::new(elem), CastContext::Implicit)?;
        }
        let cmp = self.binary(op, Expr::Col(0, l.ty()), Expr::Col(1, elem))?;
        if cmp.ty() != TypeId::Bool {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                "op ANY/ALL (array) requires operator to yield boolean",
            ));
        }
        Ok(Expr::Array(Box::new(ArrayExpr::Quantified {
            lhs: l,
            arr: r,
            cmp,
            all,
        })))
    }

    /// `||` with an array operand: array_cat, array_append or array_prepend, which (unlike
    /// ordinary operators) are not strict: `NULL::int[] || 1` is `{1}`.
    pub(super) fn array_concat(
        &mut self,
        l: Expr,
        r: Expr,
        src: Option<(&ast::Expr, &ast::Expr)>,
    ) -> PgResult<Expr> {
        let (lt, rt) = (l.ty(), r.ty());
        let no_operator = || {
            PgError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("operator does not exist: {} || {}", lt.name(), rt.name()),
            )
            .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts.")
        };
        let o = keel_types::ops::resolve_binary("||", lt, rt).ok_or_else(no_operator)?;
        let name = match (o.left.is_array(), o.right.is_array()) {
            (true, true) => "array_cat",
            (true, false) => "array_append",
            _ => "array_prepend",
        };
        let (l, r) = self.coerce_operands(l, r, (o.left, o.right), src)?;
        let f = keel_types::array_ops::resolve_function(name, &[o.left, o.right])
            .ok_or_else(no_operator)?;
        Ok(Expr::Func {
            f,
            args: vec![l, r],
        })
    }
}

/// A subscripted assignment target, bound: the array's type and the subscripts.
pub(crate) struct SubscriptTarget {
    ty: TypeId,
    subs: Vec<ArraySub>,
    slice: bool,
}

impl SubscriptTarget {
    /// The type a value stored there has: the element type, or for a slice the array type.
    pub(crate) fn value_type(&self) -> TypeId {
        if self.slice {
            self.ty
        } else {
            self.ty.elem().unwrap_or(TypeId::Text)
        }
    }
}

impl Binder<'_> {
    /// `SET col[subs] = value` over `base` (the column, or the result of an earlier
    /// subscripted assignment to it in the same SET list): PostgreSQL's subscripted
    /// assignment. `target` is `col[subs]` as written; `column` names it in errors.
    pub(crate) fn subscript_assignment(
        &mut self,
        base: Expr,
        target: &ast::Expr,
        value: &ast::Expr,
        scope: &Scope,
        column: &str,
    ) -> PgResult<Expr> {
        let t = self.subscript_target(target, scope)?;
        let v = self.expr(value, scope, &mut None)?;
        self.assign_into(base, target, t, v, value.span(), column)
    }

    /// The array type and the bound subscripts of an assignment target `col[subs]`.
    pub(crate) fn subscript_target(
        &mut self,
        target: &ast::Expr,
        scope: &Scope,
    ) -> PgResult<SubscriptTarget> {
        let Expr::Array(read) = self.expr(target, scope, &mut None)? else {
            return Err(PgError::internal("subscripted target without subscripts"));
        };
        let ArrayExpr::Subscript {
            arr, subs, slice, ..
        } = *read
        else {
            return Err(PgError::internal("subscripted target without subscripts"));
        };
        Ok(SubscriptTarget {
            ty: arr.ty(),
            subs,
            slice,
        })
    }

    /// `base` with the bound value `v` stored at the target's subscripts: the value is
    /// converted to the element (or, for a slice, the array) type first, with PostgreSQL's
    /// error naming `column` when it cannot be.
    pub(crate) fn assign_into(
        &mut self,
        base: Expr,
        target: &ast::Expr,
        t: SubscriptTarget,
        v: Expr,
        value_span: sqlparser::tokenizer::Span,
        column: &str,
    ) -> PgResult<Expr> {
        let want = t.value_type();
        let SubscriptTarget { ty, subs, slice } = t;
        let got = v.ty();
        let v = self.coerce_in(v, SqlType::new(want), CastContext::Assignment).map_err(
            |e| {
                if e.code != sqlstate::DATATYPE_MISMATCH {
                    return self.at(e, value_span);
                }
                let e = PgError::new(
                    sqlstate::DATATYPE_MISMATCH,
                    format!(
                        "subscripted assignment to \"{column}\" requires type {} but expression is of type {}",
                        want.name(),
                        got.name()
                    ),
                )
                .with_hint("You will need to rewrite or cast the expression.");
                self.at(e, target.span())
            },
        )?;
        Ok(Expr::Array(Box::new(ArrayExpr::Assign {
            arr: base,
            subs,
            slice,
            value: v,
            ty,
        })))
    }
}
