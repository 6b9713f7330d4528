//! `array_fill` and `trim_array`: arrays built to a shape, with PostgreSQL's checks and
//! messages for the shape arguments.

use crate::TypeId;
use crate::array::{Array, Dim, MAX_ITEMS};
use crate::datum::Datum;
use crate::func::FuncContext;
use keel_common::{PgError, PgResult, sqlstate};
use std::sync::Arc;

fn subscripts_error(detail: &str) -> PgError {
    PgError::new(
        sqlstate::ARRAY_SUBSCRIPT_ERROR,
        "wrong number of array subscripts",
    )
    .with_detail(detail)
}

/// The int4 values of a one-dimensional shape argument (`dims` or `lbounds`).
fn shape(d: &Datum, which: &str) -> PgResult<Vec<i32>> {
    let Datum::Array(a) = d else {
        return Err(PgError::new(
            sqlstate::NULL_VALUE_NOT_ALLOWED,
            "dimension array or low bound array cannot be null",
        ));
    };
    if a.dims.len() > 1 {
        return Err(subscripts_error(&format!(
            "{which} array must be one dimensional."
        )));
    }
    a.items
        .iter()
        .map(|x| match x {
            Datum::Int4(v) => Ok(*v),
            Datum::Int2(v) => Ok(*v as i32),
            _ => Err(PgError::new(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                "dimension values cannot be null",
            )),
        })
        .collect()
}

/// `array_fill(value, dims [, lbounds])`: an array of shape `dims` (lower bounds `lbounds`,
/// else 1) with every element `value` (which may be NULL). `elem` is the value's type.
pub fn array_fill(a: &[Datum], elem: TypeId) -> PgResult<Datum> {
    let dims = shape(&a[1], "Dimension")?;
    let lowers = match a.get(2) {
        Some(l) => {
            let l = shape(l, "Low bound")?;
            if l.len() != dims.len() {
                return Err(subscripts_error(
                    "Low bound array has different size than dimensions array.",
                ));
            }
            l
        }
        None => vec![1; dims.len()],
    };
    if dims.len() > crate::array::MAXDIM {
        return Err(crate::array::too_many_dims(dims.len()));
    }
    let mut total: i64 = 1;
    for &n in &dims {
        total = total.saturating_mul(n as i64);
        if n < 0 || total > MAX_ITEMS as i64 {
            return Err(PgError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!("array size exceeds the maximum allowed ({MAX_ITEMS})"),
            ));
        }
    }
    if dims.is_empty() || total == 0 {
        return Ok(Datum::Array(Arc::new(Array::empty(elem))));
    }
    let value = a[0].clone();
    Ok(Datum::Array(Arc::new(Array {
        elem,
        dims: dims
            .iter()
            .zip(&lowers)
            .map(|(&len, &lower)| Dim { len, lower })
            .collect(),
        items: vec![value; total as usize],
    })))
}

/// `array_fill` for values of type `elem`: the element type is known when the call is
/// resolved, and stays in the result even when the value is NULL.
pub fn array_fill_for(elem: TypeId) -> fn(&[Datum], &mut dyn FuncContext) -> PgResult<Datum> {
    fn fill<const OID: u32>(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
        let elem = TypeId::from_oid(OID).unwrap_or(TypeId::Text);
        array_fill(a, elem)
    }
    /// Element types without an instance of their own: the value's natural type.
    fn natural(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
        array_fill(a, a[0].natural_type().unwrap_or(TypeId::Text))
    }
    match elem {
        TypeId::Bool => fill::<16>,
        TypeId::Int2 => fill::<21>,
        TypeId::Int4 => fill::<23>,
        TypeId::Int8 => fill::<20>,
        TypeId::Float4 => fill::<700>,
        TypeId::Float8 => fill::<701>,
        TypeId::Numeric => fill::<1700>,
        TypeId::Text => fill::<25>,
        TypeId::Varchar => fill::<1043>,
        TypeId::Bpchar => fill::<1042>,
        TypeId::Date => fill::<1082>,
        TypeId::Timestamp => fill::<1114>,
        TypeId::TimestampTz => fill::<1184>,
        TypeId::Interval => fill::<1186>,
        TypeId::Uuid => fill::<2950>,
        _ => natural,
    }
}

/// `trim_array(array, n)`: the array without its last `n` elements along the first
/// dimension; the result's lower bounds are 1, as a slice's are.
pub fn trim_array(a: &[Datum]) -> PgResult<Datum> {
    let (Datum::Array(arr), Some(n)) = (&a[0], a[1].int_value()) else {
        return Ok(Datum::Null);
    };
    let first = arr.dims.first().map_or(0, |d| d.len as i64);
    if n < 0 || n > first {
        return Err(PgError::new(
            sqlstate::ARRAY_SUBSCRIPT_ERROR,
            format!("number of elements to trim must be between 0 and {first}"),
        ));
    }
    let keep = (first - n) as usize;
    if keep == 0 {
        return Ok(Datum::Array(Arc::new(Array::empty(arr.elem))));
    }
    let stride: usize = arr.dims[1..].iter().map(|d| d.len as usize).product();
    let mut dims: Vec<Dim> = arr
        .dims
        .iter()
        .map(|d| Dim {
            len: d.len,
            lower: 1,
        })
        .collect();
    dims[0].len = keep as i32;
    Ok(Datum::Array(Arc::new(Array {
        elem: arr.elem,
        dims,
        items: arr.items[..keep * stride].to_vec(),
    })))
}
