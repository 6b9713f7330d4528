//! Composite values in PL/pgSQL: what a record or row variable becomes when a composite
//! is assigned to it, and what a function returning a composite returns.

use crate::vars::Record;
use keel_catalog::Catalog;
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::{CastContext, cast};
use keel_types::{Datum, SqlType, TypeId};
use std::sync::Arc;

/// 55000: a `record` variable read before anything was assigned to it.
pub(crate) fn unassigned(name: &str) -> PgError {
    PgError::new(
        sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!("record \"{name}\" is not assigned yet"),
    )
    .with_detail("The tuple structure of a not-yet-assigned record is indeterminate.")
}

/// A value converted to a variable's or result's type `to` as PL/pgSQL converts: the
/// assignment cast, else (no cast between the types: 42846) through the value's text, as
/// PostgreSQL's exec_cast_value falls back to I/O conversion (`d date := 20150717`).
pub(crate) fn assign_cast(v: Datum, from: TypeId, to: SqlType) -> PgResult<Datum> {
    match cast(v.clone(), from, to, CastContext::Assignment) {
        Err(e) if e.code == sqlstate::CANNOT_COERCE && !v.is_null() => {
            let mut text = String::new();
            keel_types::io::format_text(&v, from, &mut text);
            cast(Datum::Text(text), TypeId::Text, to, CastContext::Explicit)
        }
        r => r,
    }
}

/// Whether `t` is a composite type (named or anonymous).
pub(crate) fn is_composite(t: TypeId) -> bool {
    matches!(t, TypeId::Record | TypeId::Composite(_))
}

/// The record a variable holds once `d` (of type `from`) is assigned to it. A variable
/// declared with a composite type (`shape`) keeps its fields, each value converted as an
/// assignment converts it (missing ones NULL, extra ones dropped, as PostgreSQL assigns by
/// position); a `record` variable takes the value's own fields.
pub(crate) fn record_from(
    d: Datum,
    from: TypeId,
    shape: Option<&Record>,
    cat: &Catalog,
) -> PgResult<Record> {
    let r = match d {
        Datum::Record(r) => r,
        Datum::Null => {
            return Ok(match shape {
                Some(s) => Record {
                    values: vec![Datum::Null; s.types.len()],
                    is_null: true,
                    ..s.clone()
                },
                None => Record {
                    ty: TypeId::Record,
                    names: Vec::new(),
                    types: Vec::new(),
                    typmods: Vec::new(),
                    values: Vec::new(),
                    is_null: true,
                    declared: false,
                },
            });
        }
        // A scalar for a row variable is read as the text of one (record_in), as
        // PostgreSQL's I/O conversion does.
        d if shape.is_some() => {
            let s = shape.expect("matched a shape");
            let mut text = String::new();
            keel_types::io::format_text(&d, from, &mut text);
            let fields: Vec<SqlType> = (s.types.iter().zip(&s.typmods))
                .map(|(t, m)| SqlType::with_typmod(*t, *m))
                .collect();
            let r = keel_types::record::parse_text(&text, s.ty, &fields)?;
            return record_from(Datum::Record(Arc::new(r)), s.ty, shape, cat);
        }
        _ => {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                "cannot assign non-composite value to a record variable",
            ));
        }
    };
    if let Some(s) = shape {
        let mut values = Vec::with_capacity(s.types.len());
        for (i, (&to, &typmod)) in s.types.iter().zip(&s.typmods).enumerate() {
            let (v, t) = match (r.values.get(i), r.types.get(i)) {
                (Some(v), Some(&t)) => (v.clone(), t),
                _ => (Datum::Null, to),
            };
            values.push(if v.is_null() || t == to && typmod < 0 {
                v
            } else {
                cast(
                    v,
                    t,
                    SqlType::with_typmod(to, typmod),
                    CastContext::Assignment,
                )?
            });
        }
        return Ok(Record {
            values,
            is_null: false,
            ..s.clone()
        });
    }
    let names = match cat.composite_of(r.ty) {
        Some(c) => c.fields.iter().map(|f| f.name.clone()).collect(),
        None => (1..=r.values.len()).map(|i| format!("f{i}")).collect(),
    };
    Ok(Record {
        ty: r.ty,
        names,
        types: r.types.to_vec(),
        typmods: vec![-1; r.types.len()],
        values: r.values.clone(),
        is_null: false,
        declared: false,
    })
}

/// A composite value `d` returned by a function whose result is `target` (a named
/// composite, or `record`). A named result takes a row whose fields have exactly its field
/// types (PostgreSQL converts by position and does not cast: 42804 otherwise).
pub(crate) fn returned(d: Datum, target: TypeId, cat: &Catalog) -> PgResult<Datum> {
    let Datum::Record(r) = d else {
        return Ok(d);
    };
    if target == TypeId::Record || r.ty == target {
        return Ok(Datum::Record(r));
    }
    let Some(c) = cat.composite_of(target) else {
        return Ok(Datum::Record(r));
    };
    let mismatch = |detail: String| {
        PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            "returned record type does not match expected record type",
        )
        .with_detail(detail)
    };
    if r.values.len() != c.fields.len() {
        return Err(mismatch(format!(
            "Number of returned columns ({}) does not match expected column count ({}).",
            r.values.len(),
            c.fields.len()
        )));
    }
    for (i, (t, f)) in r.types.iter().zip(&c.fields).enumerate() {
        if *t != f.ty.id {
            return Err(mismatch(format!(
                "Returned type {} does not match expected type {} in column {}.",
                keel_sql::bind::types::type_display_in(SqlType::new(*t), cat),
                keel_sql::bind::types::type_display_in(SqlType::new(f.ty.id), cat),
                i + 1
            )));
        }
    }
    Ok(Datum::Record(Arc::new(keel_types::record::Record::new(
        target,
        c.field_types(),
        r.values.clone(),
    ))))
}
