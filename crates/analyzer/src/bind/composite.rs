//! Composite values in expressions: row constructors as values, whole-row references,
//! field selection `(x).f`, and coercion to a named composite type.

use super::{AggCtx, Binder, Scope, fold};
use crate::expr::{Expr, RowExpr};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::CastContext;
use keel_types::{Datum, SqlType, TypeId};
use sqlparser::ast::{self, Spanned};
use std::sync::Arc;

impl Binder<'_> {
    /// `ROW(a, b)` / `(a, b)` as a value: an anonymous record (PostgreSQL names its fields
    /// f1, f2, ...).
    pub(crate) fn row_ctor(
        &mut self,
        items: &[&ast::Expr],
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        let mut fields = Vec::with_capacity(items.len());
        for i in items {
            // An unknown literal stays unknown, as in PostgreSQL: a cast of the row to a
            // composite type gives it the field's type.
            fields.push(self.expr(i, scope, agg)?);
        }
        let types: Arc<[TypeId]> = fields.iter().map(Expr::ty).collect();
        Ok(Expr::Row(Box::new(RowExpr::Ctor {
            fields,
            ty: TypeId::Record,
            types,
        })))
    }

    /// A bare name that is no column but a FROM item's name: the whole row, of the table's
    /// row type when the item is a table, else an anonymous record.
    pub(crate) fn whole_row(&self, name: &str, scope: &Scope) -> Option<Expr> {
        let cols: Vec<(usize, &super::ScopeCol)> = (scope.cols.iter().enumerate())
            .filter(|(_, c)| c.qualifier.as_deref() == Some(name) && !c.hidden)
            .collect();
        if cols.is_empty() {
            return None;
        }
        let oid = cols[0].1.table_oid;
        let table = self.catalog.tables.get(&oid);
        let is_table = oid != 0
            && cols.iter().all(|(_, c)| c.table_oid == oid)
            && table.is_some_and(|t| t.columns.len() == cols.len());
        let fields: Vec<Expr> = cols.iter().map(|(i, c)| Expr::Col(*i, c.ty)).collect();
        let types: Arc<[TypeId]> = cols.iter().map(|(_, c)| c.ty).collect();
        Some(Expr::Row(Box::new(RowExpr::Ctor {
            fields,
            ty: if is_table {
                TypeId::Composite(oid)
            } else {
                TypeId::Record
            },
            types,
        })))
    }

    /// `(expr).f1.f2`: field selection, each name a field of the composite before it.
    pub(crate) fn field_select(
        &mut self,
        root: &ast::Expr,
        names: &[&ast::Ident],
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        let mut e = self.expr(root, scope, agg)?;
        // PostgreSQL places a missing field at the selection's argument: a cast at its `::`.
        let mut arg = root;
        while let ast::Expr::Nested(inner) = arg {
            arg = inner;
        }
        let at = match arg {
            ast::Expr::Cast {
                kind: ast::CastKind::DoubleColon,
                expr,
                ..
            } => self.cast_span(expr),
            _ => arg.span(),
        };
        for n in names {
            let name = fold(n);
            e = self.field_of(e, &name).map_err(|err| self.at(err, at))?;
        }
        Ok(e)
    }

    pub(super) fn field_of(&self, e: Expr, name: &str) -> PgResult<Expr> {
        let (index, ty) = match e.ty() {
            TypeId::Composite(oid) => {
                let c = self.catalog.composite(oid).ok_or_else(|| {
                    PgError::internal(format!("composite type {oid} is not in the catalog"))
                })?;
                match c.field(name) {
                    Some((i, f)) => (i, f.ty.id),
                    None => {
                        return Err(PgError::new(
                            sqlstate::UNDEFINED_COLUMN,
                            format!("column \"{name}\" not found in data type {}", c.name),
                        ));
                    }
                }
            }
            TypeId::Record => {
                // An anonymous row whose shape is known here: its fields are f1, f2, ...
                let known = match &e {
                    Expr::Row(r) => match &**r {
                        RowExpr::Ctor { types, .. } => Some(types.clone()),
                        _ => None,
                    },
                    Expr::Const(Datum::Record(r), _) => Some(r.types.clone()),
                    _ => None,
                };
                let pos = name
                    .strip_prefix('f')
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|n| *n >= 1);
                match (known, pos) {
                    (Some(types), Some(n)) if n <= types.len() => (n - 1, types[n - 1]),
                    _ => {
                        return Err(PgError::new(
                            sqlstate::UNDEFINED_COLUMN,
                            format!("could not identify column \"{name}\" in record data type"),
                        ));
                    }
                }
            }
            other => {
                return Err(PgError::new(
                    sqlstate::WRONG_OBJECT_TYPE,
                    format!(
                        "column notation .{name} applied to type {}, which is not a composite type",
                        other.name()
                    ),
                ));
            }
        };
        // A field of a constructor is its expression.
        if let Expr::Row(r) = &e
            && let RowExpr::Ctor { fields, .. } = &**r
            && fields.iter().all(Expr::is_row_independent)
        {
            return Ok(fields[index].clone());
        }
        Ok(Expr::Row(Box::new(RowExpr::Field {
            arg: e,
            index,
            ty,
            name: name.into(),
        })))
    }

    /// A value becoming an array of composite type `oid`: a string is read by `array_in`
    /// with each element read by `record_in`.
    fn coerce_to_composite_array(
        &mut self,
        e: Expr,
        oid: keel_common::Oid,
        to: SqlType,
        ctx: CastContext,
    ) -> PgResult<Expr> {
        if e.ty() == to.id {
            return Ok(e);
        }
        let Some(c) = self.catalog.composite(oid) else {
            return super::types::coerce(e, to, ctx, &mut self.params);
        };
        let fields: Arc<[SqlType]> = c.fields.iter().map(|f| f.ty).collect();
        let e = match from_text(e, to, fields, ctx) {
            Ok(read) => return read,
            Err(e) => e,
        };
        match e {
            e if e.ty() == TypeId::RecordArray => Err(PgError::unsupported(format!(
                "conversion of type record[] to {}",
                self.catalog.type_name(to.id)
            ))),
            e => super::types::coerce(e, to, ctx, &mut self.params),
        }
    }

    /// [`super::types::coerce`], and a value becoming a named composite type: a string is
    /// read with the type's fields (`record_in`), and a row constructor's fields are coerced
    /// one by one to the type's fields, as PostgreSQL casts a RowExpr.
    pub(crate) fn coerce_in(&mut self, e: Expr, to: SqlType, ctx: CastContext) -> PgResult<Expr> {
        if let TypeId::CompositeArray(oid) = to.id {
            return self.coerce_to_composite_array(e, oid, to, ctx);
        }
        if e.ty() == TypeId::RegClass
            && matches!(
                to.id,
                TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name
            )
        {
            let text = self.regclass_text(e);
            return super::types::coerce(text, to, ctx, &mut self.params);
        }
        let TypeId::Composite(oid) = to.id else {
            return super::types::coerce(e, to, ctx, &mut self.params);
        };
        if e.ty() == to.id {
            return Ok(e);
        }
        let Some(c) = self.catalog.composite(oid) else {
            return super::types::coerce(e, to, ctx, &mut self.params);
        };
        let fields: Arc<[SqlType]> = c.fields.iter().map(|f| f.ty).collect();
        let e = match from_text(e, to, fields.clone(), ctx) {
            Ok(read) => return read,
            Err(e) => e,
        };
        match e {
            Expr::Row(r)
                if matches!(
                    &*r,
                    RowExpr::Ctor {
                        ty: TypeId::Record,
                        ..
                    }
                ) =>
            {
                let RowExpr::Ctor { fields: given, .. } = *r else {
                    unreachable!("matched a constructor")
                };
                if given.len() != fields.len() {
                    return Err(PgError::new(
                        sqlstate::CANNOT_COERCE,
                        format!("cannot cast type record to {}", c.name),
                    )
                    .with_detail(if given.len() < fields.len() {
                        "Input has too few columns."
                    } else {
                        "Input has too many columns."
                    }));
                }
                let mut out = Vec::with_capacity(given.len());
                for (g, f) in given.into_iter().zip(fields.iter()) {
                    out.push(self.coerce_in(g, *f, ctx)?);
                }
                // Of constants it is a constant (PostgreSQL folds it: `'(1,x)'::pair`).
                if out.iter().all(|f| matches!(f, Expr::Const(..))) {
                    let values = (out.into_iter())
                        .map(|f| match f {
                            Expr::Const(d, _) => d,
                            _ => unreachable!("all constants"),
                        })
                        .collect();
                    let r = keel_types::record::Record::new(to.id, c.field_types(), values);
                    return Ok(Expr::Const(Datum::Record(Arc::new(r)), to.id));
                }
                let row = RowExpr::Ctor {
                    fields: out,
                    ty: to.id,
                    types: c.field_types(),
                };
                Ok(Expr::Row(Box::new(row)))
            }
            Expr::Const(Datum::Record(r), TypeId::Record) => {
                let given = Expr::Row(Box::new(RowExpr::Ctor {
                    fields: (r.values.iter().zip(r.types.iter()))
                        .map(|(v, t)| Expr::Const(v.clone(), *t))
                        .collect(),
                    ty: TypeId::Record,
                    types: r.types.clone(),
                }));
                self.coerce_in(given, to, ctx)
            }
            e => {
                let from = e.ty();
                if matches!(from, TypeId::Record | TypeId::Composite(_)) {
                    return Err(PgError::unsupported(format!(
                        "conversion of type {} to {}",
                        self.catalog.type_name(from),
                        c.name
                    )));
                }
                super::types::coerce(e, to, ctx, &mut self.params).map_err(|mut err| {
                    err.message = err.message.replace(" record", &format!(" {}", c.name));
                    err
                })
            }
        }
    }
}

/// NULL or a string becoming composite type `to` (or an array of one, `record_in` reading
/// each element): a literal is read now, a string value at run time by an explicit cast.
/// Anything else is handed back.
fn from_text(
    e: Expr,
    to: SqlType,
    fields: Arc<[SqlType]>,
    ctx: CastContext,
) -> Result<PgResult<Expr>, Expr> {
    match e {
        Expr::Const(Datum::Null, _) => Ok(Ok(Expr::Const(Datum::Null, to.id))),
        Expr::Const(Datum::Text(s), TypeId::Unknown) => Ok(keel_types::record::parse_text_as(
            &s, to.id, &fields,
        )
        .map(|d| Expr::Const(d, to.id))),
        e if matches!(
            e.ty(),
            TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name
        ) && ctx == CastContext::Explicit =>
        {
            Ok(Ok(Expr::Row(Box::new(RowExpr::FromText {
                arg: e,
                ty: to.id,
                fields,
            }))))
        }
        e => Err(e),
    }
}
