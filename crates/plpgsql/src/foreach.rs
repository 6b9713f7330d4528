//! `FOREACH target [SLICE n] IN ARRAY expr LOOP`: the elements of an array in storage order,
//! or with SLICE n its n-dimensional sub-arrays over the last n dimensions (each keeping
//! those dimensions' lower bounds), as PostgreSQL's array iterator yields them.

use crate::interp::{Flow, Interp, PlState};
use crate::{Host, Ran};
use keel_common::{PgError, PgResult, sqlstate};
use keel_pl::{SqlText, Stmt, VarRef};
use keel_types::array::{Array, Dim};
use keel_types::{Datum, TypeId};
use std::sync::Arc;

impl<H: Host + ?Sized> Interp<'_, H> {
    pub(crate) async fn foreach(
        &mut self,
        st: &mut PlState,
        label: &Option<String>,
        targets: &[VarRef],
        slice: i32,
        array: &SqlText,
        body: &[Stmt],
    ) -> PgResult<Flow> {
        if slice > 0 {
            // The loop variable must take an array, checked before the array is computed.
            let scalar_array = match targets {
                [t] => st
                    .vars
                    .find(&t.names.join("."))
                    .is_some_and(|v| !v.is_record && v.ty.is_array()),
                _ => false,
            };
            if !scalar_array {
                return Err(PgError::new(
                    sqlstate::DATATYPE_MISMATCH,
                    "FOREACH ... SLICE loop variable must be of an array type",
                ));
            }
        }
        let (v, _) = self.eval(st, array).await?;
        let items = match v {
            Datum::Array(a) => a,
            Datum::Null => {
                return Err(PgError::new(
                    sqlstate::NULL_VALUE_NOT_ALLOWED,
                    "FOREACH expression must not be null",
                ));
            }
            _ => {
                return Err(PgError::new(
                    sqlstate::DATATYPE_MISMATCH,
                    "FOREACH expression must yield an array",
                ));
            }
        };
        let ndims = items.dims.len();
        if slice < 0 || slice as usize > ndims {
            return Err(PgError::new(
                sqlstate::ARRAY_SUBSCRIPT_ERROR,
                format!("slice dimension ({slice}) is out of the valid range 0..{ndims}"),
            ));
        }
        let elem = items.elem;
        let array = Arc::unwrap_or_clone(items);
        let (values, ty) = match slice as usize {
            0 => (array.items, elem),
            n => (
                slices(array, n),
                elem.array_of().unwrap_or(TypeId::AnyArray),
            ),
        };
        // Each element (or slice) a one-column row: the FOR-over-rows loop, FOUND included.
        // An element of a composite type is a row of its fields, so that it fills a row or
        // record variable, or a list of scalars, as PostgreSQL assigns a composite datum.
        let composite = match ty {
            TypeId::Composite(oid) => self.h.catalog().composite(oid),
            _ => None,
        };
        let ran = match composite {
            Some(c) => Ran {
                names: c.fields.iter().map(|f| f.name.clone()).collect(),
                types: c.fields.iter().map(|f| f.ty.id).collect(),
                count: values.len() as u64,
                rows: values
                    .into_iter()
                    .map(|v| match v {
                        Datum::Record(r) => Arc::unwrap_or_clone(r).values,
                        _ => vec![Datum::Null; c.fields.len()],
                    })
                    .collect(),
                writes: false,
            },
            None => Ran {
                names: vec![String::new()],
                types: vec![ty],
                count: values.len() as u64,
                rows: values.into_iter().map(|v| vec![v]).collect(),
                writes: false,
            },
        };
        self.for_rows(st, label, targets, ran, body).await
    }
}

/// The sub-arrays of `a` over its last `n` dimensions (1 <= n <= ndims), in storage order.
fn slices(a: Array, n: usize) -> Vec<Datum> {
    let inner: Vec<Dim> = a.dims[a.dims.len() - n..].to_vec();
    let size: usize = inner.iter().map(|d| d.len as usize).product();
    if size == 0 {
        return Vec::new();
    }
    let elem = a.elem;
    let mut out = Vec::with_capacity(a.items.len() / size);
    let mut items = a.items.into_iter();
    loop {
        let chunk: Vec<Datum> = items.by_ref().take(size).collect();
        if chunk.is_empty() {
            return out;
        }
        out.push(Datum::Array(Arc::new(Array {
            elem,
            dims: inner.clone(),
            items: chunk,
        })));
    }
}
