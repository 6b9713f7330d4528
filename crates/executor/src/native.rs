//! Runs compiled expressions (`keel_analyzer::native`): the program's steps over a fixed
//! array of 64-bit slots, with no `Datum` between a leaf's read and the result.

use crate::eval::EvalCx;
use keel_analyzer::native::{Native, SLOTS, Step, bits, datum};
use keel_common::{PgError, PgResult};
use keel_types::Datum;
use keel_types::scalar::{float_to_int, float8_arith, int_arith, int_to_int};

/// A leaf's bits, or the end of the program: NULL for a NULL value.
macro_rules! load {
    ($d:expr) => {
        match $d.and_then(bits) {
            Some(v) => v,
            None if $d.is_none_or(Datum::is_null) => return Ok(None),
            None => {
                return Err(PgError::internal(
                    "compiled expression read a value of another type",
                ))
            }
        }
    };
}

pub(crate) fn run(n: &Native, row: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<Datum> {
    Ok(match exec(n, row, cx)? {
        Some(v) => datum(n.ty, v),
        None => Datum::Null,
    })
}

pub(crate) fn run_into(
    n: &Native,
    row: &[Datum],
    cx: &mut EvalCx<'_>,
    out: &mut Datum,
) -> PgResult<()> {
    *out = match exec(n, row, cx)? {
        Some(v) => datum(n.ty, v),
        None => Datum::Null,
    };
    Ok(())
}

/// The result's bits; None for NULL.
#[inline]
fn exec(n: &Native, row: &[Datum], cx: &mut EvalCx<'_>) -> PgResult<Option<u64>> {
    let mut s = [0u64; SLOTS];
    let mut top = 0usize;
    for step in n.steps.iter() {
        match step {
            Step::Col(i) => {
                s[top] = load!(row.get(*i));
                top += 1;
            }
            Step::Param(i) => {
                s[top] = load!(cx.params.get(*i));
                top += 1;
            }
            Step::Outer(i) => {
                s[top] = load!(cx.outer.get(*i));
                top += 1;
            }
            Step::Const(v) => {
                s[top] = *v;
                top += 1;
            }
            Step::Null => return Ok(None),
            Step::Int(op, t) => {
                top -= 1;
                let (x, y) = (s[top - 1] as i64, s[top] as i64);
                s[top - 1] = int_arith(*op, *t, x, y)? as u64;
            }
            Step::Float(op) => {
                top -= 1;
                let (x, y) = (f64::from_bits(s[top - 1]), f64::from_bits(s[top]));
                s[top - 1] = float8_arith(*op, x, y)?.to_bits();
            }
            Step::CmpInt(c) => {
                top -= 1;
                let (x, y) = (s[top - 1] as i64, s[top] as i64);
                s[top - 1] = c.holds(x.cmp(&y)) as u64;
            }
            Step::CmpFloat(c) => {
                top -= 1;
                let (x, y) = (f64::from_bits(s[top - 1]), f64::from_bits(s[top]));
                s[top - 1] = c.floats(x, y) as u64;
            }
            Step::IntToInt(t) => s[top - 1] = int_to_int(s[top - 1] as i64, *t)? as u64,
            Step::IntToFloat => s[top - 1] = (s[top - 1] as i64 as f64).to_bits(),
            Step::FloatToInt(t) => {
                s[top - 1] = float_to_int(f64::from_bits(s[top - 1]), *t)? as u64
            }
            Step::Call(f, types) => {
                let base = top - types.len();
                let mut args = [Datum::Null, Datum::Null, Datum::Null, Datum::Null];
                for (k, t) in types.iter().enumerate() {
                    args[k] = datum(*t, s[base + k]);
                }
                let v = crate::eval::call_function(f, &args[..types.len()], cx)?;
                s[base] = load!(Some(&v));
                top = base + 1;
            }
            Step::Unary(f, t) => {
                let v = f(&datum(*t, s[top - 1]))?;
                s[top - 1] = load!(Some(&v));
            }
        }
    }
    Ok(Some(s[0]))
}
