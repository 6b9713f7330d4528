//! Evaluation of composite expressions: row constructors, field selection and a string
//! read as a composite type.

use crate::eval::{Eval, EvalCx};
use keel_analyzer::expr::RowExpr;
use keel_common::PgResult;
use keel_types::Datum;
use keel_types::record::Record;
use std::sync::Arc;

pub(crate) fn eval(r: &RowExpr, row: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<Datum> {
    match r {
        RowExpr::Ctor { fields, ty, types } => {
            let mut values = Vec::with_capacity(fields.len());
            for f in fields {
                values.push(f.eval(row, cx)?);
            }
            Ok(Datum::Record(Arc::new(Record::new(
                *ty,
                types.clone(),
                values,
            ))))
        }
        RowExpr::Field { arg, index, .. } => Ok(match arg.eval(row, cx)? {
            Datum::Record(rec) => match Arc::try_unwrap(rec) {
                Ok(mut owned) => owned.values.swap_remove(*index),
                Err(shared) => shared.values.get(*index).cloned().unwrap_or(Datum::Null),
            },
            _ => Datum::Null,
        }),
        RowExpr::FromText { arg, ty, fields } => match arg.eval(row, cx)? {
            Datum::Text(s) => keel_types::record::parse_text_as(&s, *ty, fields),
            _ => Ok(Datum::Null),
        },
    }
}
