//! Arithmetic, comparison and casts on unboxed integers and float8s: what the operators of
//! `ops` do once their operands are out of their `Datum`s, for evaluators that keep values
//! in machine registers (the executor's compiled expressions). The errors are the operators'
//! own: the Datum operators of the same names either call these or are tested against them.

use crate::TypeId;
use crate::ops::{cmp_f64, div_zero, float_overflow, float_underflow, int_out_of_range};
use keel_common::PgResult;
use std::cmp::Ordering;

/// `+ - * / %`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

impl Arith {
    pub fn from_op(op: &str) -> Option<Arith> {
        Some(match op {
            "+" => Arith::Add,
            "-" => Arith::Sub,
            "*" => Arith::Mul,
            "/" => Arith::Div,
            "%" => Arith::Mod,
            _ => return None,
        })
    }
}

/// `= <> < <= > >=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Compare {
    pub fn from_op(op: &str) -> Option<Compare> {
        Some(match op {
            "=" => Compare::Eq,
            "<>" | "!=" => Compare::Ne,
            "<" => Compare::Lt,
            "<=" => Compare::Le,
            ">" => Compare::Gt,
            ">=" => Compare::Ge,
            _ => return None,
        })
    }

    #[inline]
    pub fn holds(self, o: Ordering) -> bool {
        match self {
            Compare::Eq => o.is_eq(),
            Compare::Ne => o.is_ne(),
            Compare::Lt => o.is_lt(),
            Compare::Le => o.is_le(),
            Compare::Gt => o.is_gt(),
            Compare::Ge => o.is_ge(),
        }
    }

    /// Integers compare as integers; float8s (and integers against them) by PostgreSQL's
    /// float order, where NaN equals itself and sorts above every number.
    #[inline]
    pub fn floats(self, x: f64, y: f64) -> bool {
        self.holds(cmp_f64(x, y))
    }
}

/// `x op y` in the integer type `t` (int2, int4 or int8): the operands are within `t` (the
/// resolver promotes to the wider one), the result is checked against it.
#[inline]
pub fn int_arith(op: Arith, t: TypeId, x: i64, y: i64) -> PgResult<i64> {
    match t {
        TypeId::Int2 => int_in::<i16>(op, t, x, y),
        TypeId::Int4 => int_in::<i32>(op, t, x, y),
        _ => int_in::<i64>(op, t, x, y),
    }
}

trait Checked: Sized + Copy + TryFrom<i64> + Into<i64> + Default {
    fn add(self, o: Self) -> Option<Self>;
    fn sub(self, o: Self) -> Option<Self>;
    fn mul(self, o: Self) -> Option<Self>;
    fn div(self, o: Self) -> Option<Self>;
    fn rem(self, o: Self) -> Option<Self>;
}

macro_rules! checked {
    ($($t:ty),*) => {$(
        impl Checked for $t {
            fn add(self, o: Self) -> Option<Self> { self.checked_add(o) }
            fn sub(self, o: Self) -> Option<Self> { self.checked_sub(o) }
            fn mul(self, o: Self) -> Option<Self> { self.checked_mul(o) }
            fn div(self, o: Self) -> Option<Self> { self.checked_div(o) }
            fn rem(self, o: Self) -> Option<Self> { self.checked_rem(o) }
        }
    )*};
}
checked!(i16, i32, i64);

#[inline]
fn int_in<T: Checked>(op: Arith, t: TypeId, x: i64, y: i64) -> PgResult<i64> {
    let x = T::try_from(x).map_err(|_| int_out_of_range(t))?;
    let y = T::try_from(y).map_err(|_| int_out_of_range(t))?;
    let r = match op {
        Arith::Add => x.add(y),
        Arith::Sub => x.sub(y),
        Arith::Mul => x.mul(y),
        Arith::Div | Arith::Mod if y.into() == 0 => return Err(div_zero()),
        Arith::Div => x.div(y),
        // MIN % -1 is 0 in PostgreSQL rather than an overflow.
        Arith::Mod => Some(x.rem(y).unwrap_or_default()),
    };
    r.map(Into::into).ok_or_else(|| int_out_of_range(t))
}

/// `x op y` in float8, with PostgreSQL's result checks: an infinite result from finite
/// operands overflows; a zero product or quotient of non-zero operands underflows.
#[inline]
pub fn float8_arith(op: Arith, x: f64, y: f64) -> PgResult<f64> {
    let (r, zero_ok) = match op {
        Arith::Add => (x + y, true),
        Arith::Sub => (x - y, true),
        Arith::Mul => (x * y, y == 0.0),
        Arith::Div => {
            if y == 0.0 && !x.is_nan() {
                return Err(div_zero());
            }
            (x / y, y.is_infinite())
        }
        Arith::Mod => return Err(keel_common::PgError::internal("float8 has no % operator")),
    };
    if r.is_infinite() && x.is_finite() && y.is_finite() {
        return Err(float_overflow());
    }
    if r == 0.0 && !zero_ok && x != 0.0 && y.is_finite() {
        return Err(float_underflow());
    }
    Ok(r)
}

/// An integer cast to the integer type `t`: checked against its range.
#[inline]
pub fn int_to_int(v: i64, t: TypeId) -> PgResult<i64> {
    let fits = match t {
        TypeId::Int2 => i16::try_from(v).is_ok(),
        TypeId::Int4 => i32::try_from(v).is_ok(),
        _ => true,
    };
    if fits {
        Ok(v)
    } else {
        Err(int_out_of_range(t))
    }
}

/// A float8 cast to the integer type `t`: rounded half to even (`rint`), then range-checked.
#[inline]
pub fn float_to_int(f: f64, t: TypeId) -> PgResult<i64> {
    let r = f.round_ties_even();
    let (lo, hi) = match t {
        TypeId::Int2 => (i16::MIN as f64, i16::MAX as f64 + 1.0),
        TypeId::Int4 => (i32::MIN as f64, i32::MAX as f64 + 1.0),
        _ => (i64::MIN as f64, -(i64::MIN as f64)),
    };
    if r.is_nan() || r < lo || r >= hi {
        return Err(int_out_of_range(t));
    }
    Ok(r as i64)
}

#[cfg(test)]
#[path = "scalar_tests.rs"]
mod tests;
