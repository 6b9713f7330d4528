//! Aggregate transition states (count, sum, avg, min, max, string_agg, bool_and, bool_or).

use crate::func::{Accumulator, Aggregate};
use crate::interval::Interval;
use crate::numeric::Numeric;
use crate::ops::{compare_typed, int_out_of_range};
use crate::{Datum, TypeId};
use keel_common::{PgError, PgResult, sqlstate};
use std::cmp::Ordering;

struct CountStar(i64);
impl Accumulator for CountStar {
    fn update(&mut self, _: &[Datum]) -> PgResult<()> {
        self.0 += 1;
        Ok(())
    }
    fn finish(&mut self) -> PgResult<Datum> {
        Ok(Datum::Int8(self.0))
    }
}

struct Count(i64);
impl Accumulator for Count {
    fn update(&mut self, args: &[Datum]) -> PgResult<()> {
        if args.first().is_some_and(|a| !a.is_null()) {
            self.0 += 1;
        }
        Ok(())
    }
    fn finish(&mut self) -> PgResult<Datum> {
        Ok(Datum::Int8(self.0))
    }
}

/// sum/avg over int2/int4: an int64 sum (PostgreSQL's int4_sum / int4_avg_accum).
#[derive(Default)]
struct SumInt {
    sum: i64,
    count: i64,
    avg: bool,
}
impl Accumulator for SumInt {
    fn update(&mut self, args: &[Datum]) -> PgResult<()> {
        let v = match args.first() {
            Some(Datum::Int4(v)) => *v as i64,
            Some(Datum::Int2(v)) => *v as i64,
            Some(Datum::Int8(v)) => *v,
            _ => return Ok(()),
        };
        self.sum = self
            .sum
            .checked_add(v)
            .ok_or_else(|| int_out_of_range(TypeId::Int8))?;
        self.count += 1;
        Ok(())
    }
    fn finish(&mut self) -> PgResult<Datum> {
        if self.count == 0 {
            return Ok(Datum::Null);
        }
        if self.avg {
            let q = Numeric::from_i64(self.sum).div(&Numeric::from_i64(self.count))?;
            return Ok(Datum::Numeric(Box::new(q)));
        }
        Ok(Datum::Int8(self.sum))
    }
}

/// sum/avg over int8: an i128 sum, numeric result.
#[derive(Default)]
struct SumInt8 {
    sum: i128,
    count: i64,
    avg: bool,
}
impl Accumulator for SumInt8 {
    fn update(&mut self, args: &[Datum]) -> PgResult<()> {
        let v = match args.first() {
            Some(Datum::Int8(v)) => *v as i128,
            Some(Datum::Int4(v)) => *v as i128,
            Some(Datum::Int2(v)) => *v as i128,
            _ => return Ok(()),
        };
        // 2^64 additions of i64 fit in i128; no overflow check needed in practice.
        self.sum = self.sum.wrapping_add(v);
        self.count += 1;
        Ok(())
    }
    fn finish(&mut self) -> PgResult<Datum> {
        if self.count == 0 {
            return Ok(Datum::Null);
        }
        let s = Numeric::from_i128(self.sum);
        Ok(Datum::Numeric(Box::new(if self.avg {
            s.div(&Numeric::from_i64(self.count))?
        } else {
            s
        })))
    }
}

struct SumNumeric {
    sum: Numeric,
    /// The part of the sum kept as an exact `mantissa * 10^-scale` while every input fits:
    /// adding it needs no allocation. Folded into `sum` when an input does not fit (or the
    /// mantissa would overflow) and at the end. The scale only grows, to the largest input
    /// scale, which is the display scale `Numeric::add` keeps.
    small: Option<(i128, i64)>,
    count: i64,
    avg: bool,
}

/// Largest scale the exact part keeps (10^SMALL_MAX_SCALE fits an i128 with room to add).
const SMALL_MAX_SCALE: i64 = 30;

impl SumNumeric {
    fn new(avg: bool) -> SumNumeric {
        SumNumeric {
            sum: Numeric::zero(),
            small: Some((0, 0)),
            count: 0,
            avg,
        }
    }

    /// Adds `n` to the exact part; false when it does not fit there.
    fn add_small(&mut self, n: &Numeric) -> bool {
        let (Some((acc, scale)), Numeric::Small(m, s)) = (self.small, n) else {
            return false;
        };
        let s = i64::from(*s);
        if s > SMALL_MAX_SCALE {
            return false;
        }
        let to = scale.max(s);
        let up = |v: i128, by: i64| v.checked_mul(10i128.pow((to - by) as u32));
        let sum = up(acc, scale).and_then(|a| up(*m as i128, s).and_then(|b| a.checked_add(b)));
        match sum {
            Some(v) => {
                self.small = Some((v, to));
                true
            }
            None => false,
        }
    }

    /// The exact part folded into `sum` (it is then empty again at scale 0).
    fn fold_small(&mut self) {
        if let Some((v, scale)) = self.small.take() {
            let part = crate::numeric::finite(bigdecimal::num_bigint::BigInt::from(v), scale);
            self.sum = self.sum.add(&part);
            self.small = Some((0, 0));
        }
    }
}

impl Accumulator for SumNumeric {
    fn update(&mut self, args: &[Datum]) -> PgResult<()> {
        match args.first() {
            None | Some(Datum::Null) => return Ok(()),
            Some(d) => {
                let n = crate::ops::numeric_arg(d)?;
                if !self.add_small(&n) {
                    self.fold_small();
                    self.sum = self.sum.add(&n);
                }
            }
        }
        self.count += 1;
        Ok(())
    }
    fn finish(&mut self) -> PgResult<Datum> {
        if self.count == 0 {
            return Ok(Datum::Null);
        }
        self.fold_small();
        Ok(Datum::Numeric(Box::new(if self.avg {
            self.sum.div(&Numeric::from_i64(self.count))?
        } else {
            self.sum.clone()
        })))
    }
}

struct SumFloat {
    sum: f64,
    /// avg's running sum of squared deviations (float8_accum's Sxx): PostgreSQL keeps it
    /// for the variance aggregates and raises overflow when it overflows, so avg does too.
    sxx: f64,
    count: i64,
    avg: bool,
    float4: bool,
}
impl Accumulator for SumFloat {
    fn update(&mut self, args: &[Datum]) -> PgResult<()> {
        let v = match args.first() {
            Some(Datum::Float8(v)) => *v,
            Some(Datum::Float4(v)) => *v as f64,
            _ => return Ok(()),
        };
        let s = if self.float4 && !self.avg {
            ((self.sum as f32) + (v as f32)) as f64
        } else {
            self.sum + v
        };
        let overflowed = if self.float4 && !self.avg {
            (s as f32).is_infinite()
        } else {
            s.is_infinite()
        };
        if overflowed && self.sum.is_finite() && v.is_finite() {
            return Err(crate::ops::imp_float_overflow());
        }
        if self.avg {
            let n = (self.count + 1) as f64;
            if self.count > 0 {
                let dev = v * n - s;
                self.sxx += dev * dev / (n * self.count as f64);
                if self.sxx.is_infinite() {
                    if self.sum.is_finite() && v.is_finite() {
                        return Err(crate::ops::imp_float_overflow());
                    }
                    self.sxx = f64::NAN;
                }
            } else if !v.is_finite() {
                self.sxx = f64::NAN;
            }
        }
        self.sum = s;
        self.count += 1;
        Ok(())
    }
    fn finish(&mut self) -> PgResult<Datum> {
        if self.count == 0 {
            return Ok(Datum::Null);
        }
        Ok(if self.avg {
            Datum::Float8(self.sum / self.count as f64)
        } else if self.float4 {
            Datum::Float4(self.sum as f32)
        } else {
            Datum::Float8(self.sum)
        })
    }
}

#[derive(Default)]
struct SumInterval {
    sum: Interval,
    count: i64,
    avg: bool,
}
impl Accumulator for SumInterval {
    fn update(&mut self, args: &[Datum]) -> PgResult<()> {
        if let Some(Datum::Interval(iv)) = args.first() {
            self.sum = self.sum.add(iv)?;
            self.count += 1;
        }
        Ok(())
    }
    fn finish(&mut self) -> PgResult<Datum> {
        if self.count == 0 {
            return Ok(Datum::Null);
        }
        Ok(Datum::Interval(if self.avg {
            self.sum.mul_f64(1.0 / self.count as f64)?
        } else {
            self.sum
        }))
    }
}

struct MinMax {
    best: Datum,
    want: Ordering,
    ty: TypeId,
}
impl Accumulator for MinMax {
    fn update(&mut self, args: &[Datum]) -> PgResult<()> {
        match args.first() {
            None | Some(Datum::Null) => {}
            Some(v) => {
                if self.best.is_null() || compare_typed(v, &self.best, self.ty) == self.want {
                    self.best = v.clone();
                }
            }
        }
        Ok(())
    }
    fn finish(&mut self) -> PgResult<Datum> {
        Ok(self.best.clone())
    }
}

/// array_agg: the input values in order, NULLs included; no rows give NULL. The element
/// type is the first non-null value's (text-like values report text: the array codecs
/// treat the text family alike).
#[derive(Default)]
struct ArrayAgg {
    items: Option<Vec<Datum>>,
    elem: Option<TypeId>,
    bytes: usize,
}
impl Accumulator for ArrayAgg {
    fn update(&mut self, args: &[Datum]) -> PgResult<()> {
        let v = args.first().cloned().unwrap_or(Datum::Null);
        if self.elem.is_none() {
            self.elem = v.natural_type();
        }
        self.bytes += std::mem::size_of::<Datum>() + v.heap_bytes();
        let items = self.items.get_or_insert_with(Vec::new);
        crate::array::Array::check_size(items.len() + 1)?;
        items.push(v);
        Ok(())
    }
    fn heap_bytes(&self) -> usize {
        self.bytes
    }
    fn finish(&mut self) -> PgResult<Datum> {
        let Some(items) = self.items.take() else {
            return Ok(Datum::Null);
        };
        let elem = self.elem.unwrap_or(TypeId::Text);
        Ok(Datum::Array(std::sync::Arc::new(
            crate::array::Array::from_items(elem, items),
        )))
    }
}

/// array_agg over arrays: each input becomes one slice of a result with one more dimension.
/// Inputs must be non-null, non-empty and all of the first input's shape (PostgreSQL's
/// errors otherwise); the inner lower bounds are the first input's.
#[derive(Default)]
struct ArrayAggArrays {
    first: Option<crate::array::Array>,
    count: i32,
    items: Vec<Datum>,
    bytes: usize,
}
impl Accumulator for ArrayAggArrays {
    fn update(&mut self, args: &[Datum]) -> PgResult<()> {
        use crate::array::Array;
        let a = match args.first() {
            Some(Datum::Array(a)) => a,
            _ => {
                return Err(PgError::new(
                    sqlstate::NULL_VALUE_NOT_ALLOWED,
                    "cannot accumulate null arrays",
                ));
            }
        };
        if a.dims.is_empty() {
            return Err(PgError::new(
                sqlstate::ARRAY_SUBSCRIPT_ERROR,
                "cannot accumulate empty arrays",
            ));
        }
        match &self.first {
            None => {
                if a.dims.len() >= crate::array::MAXDIM {
                    return Err(crate::array::too_many_dims(a.dims.len() + 1));
                }
                self.first = Some(Array::empty(a.elem));
                if let Some(f) = self.first.as_mut() {
                    f.dims = a.dims.clone();
                }
            }
            Some(f) if f.dims.len() != a.dims.len() => {
                return Err(PgError::new(
                    sqlstate::ARRAY_SUBSCRIPT_ERROR,
                    "cannot accumulate arrays of different dimensionality",
                ));
            }
            Some(f) if f.dims.iter().zip(&a.dims).any(|(x, y)| x.len != y.len) => {
                return Err(PgError::new(
                    sqlstate::ARRAY_SUBSCRIPT_ERROR,
                    "cannot accumulate arrays of different dimensionality",
                ));
            }
            Some(_) => {}
        }
        Array::check_size(self.items.len() + a.items.len())?;
        self.bytes += a.heap_bytes();
        self.items.extend(a.items.iter().cloned());
        self.count += 1;
        Ok(())
    }
    fn heap_bytes(&self) -> usize {
        self.bytes
    }
    fn finish(&mut self) -> PgResult<Datum> {
        let Some(mut a) = self.first.take() else {
            return Ok(Datum::Null);
        };
        a.dims.insert(
            0,
            crate::array::Dim {
                len: self.count,
                lower: 1,
            },
        );
        a.items = std::mem::take(&mut self.items);
        Ok(Datum::Array(std::sync::Arc::new(a)))
    }
}

/// The arrays `subs` stacked into one array with one more dimension, as `ARRAY(subquery)`
/// of an array column builds it (array_agg over arrays' rules and errors); no inputs make
/// an empty array of `elem`.
pub fn stack_arrays(elem: TypeId, subs: Vec<Datum>) -> PgResult<Datum> {
    if subs.is_empty() {
        return Ok(Datum::Array(std::sync::Arc::new(
            crate::array::Array::empty(elem),
        )));
    }
    let mut acc = ArrayAggArrays::default();
    for s in subs {
        acc.update(std::slice::from_ref(&s))?;
    }
    acc.finish()
}

/// string_agg's buffer grows as PostgreSQL's StringInfo does: each delimiter and value is an
/// append that fails with 54000 past 1 GB (the first value has no delimiter before it).
#[derive(Default)]
struct StringAgg {
    buf: Option<Vec<u8>>,
    bytea: bool,
}
impl StringAgg {
    fn append(buf: &mut Vec<u8>, bytes: &[u8]) -> PgResult<()> {
        crate::limits::enlarge(buf.len(), bytes.len())?;
        buf.extend_from_slice(bytes);
        Ok(())
    }
}
impl Accumulator for StringAgg {
    fn update(&mut self, args: &[Datum]) -> PgResult<()> {
        let (value, delim): (&[u8], Option<&[u8]>) = match (args.first(), args.get(1)) {
            (Some(Datum::Text(v)), d) => (
                v.as_bytes(),
                if let Some(Datum::Text(d)) = d {
                    Some(d.as_bytes())
                } else {
                    None
                },
            ),
            (Some(Datum::Bytea(v)), d) => {
                self.bytea = true;
                (
                    v,
                    if let Some(Datum::Bytea(d)) = d {
                        Some(d)
                    } else {
                        None
                    },
                )
            }
            _ => return Ok(()),
        };
        match &mut self.buf {
            Some(buf) => {
                if let Some(d) = delim {
                    Self::append(buf, d)?;
                }
                Self::append(buf, value)?;
            }
            None => self.buf = Some(value.to_vec()),
        }
        Ok(())
    }
    fn heap_bytes(&self) -> usize {
        // The bytes written: a large buffer's spare capacity is never touched.
        self.buf.as_ref().map_or(0, Vec::len)
    }
    fn finish(&mut self) -> PgResult<Datum> {
        // The buffer becomes the value: moved, not copied (it may be near 1 GB).
        let Some(b) = self.buf.take() else {
            return Ok(Datum::Null);
        };
        crate::limits::varlena(b.len())?;
        if self.bytea {
            return Ok(Datum::Bytea(b));
        }
        // Concatenated UTF-8 strings are UTF-8.
        Ok(Datum::Text(String::from_utf8(b).map_err(|_| {
            PgError::internal("string_agg produced invalid UTF-8")
        })?))
    }
}

struct BoolAgg {
    state: Option<bool>,
    and: bool,
}
impl Accumulator for BoolAgg {
    fn update(&mut self, args: &[Datum]) -> PgResult<()> {
        if let Some(Datum::Bool(b)) = args.first() {
            self.state = Some(match self.state {
                None => *b,
                Some(s) => {
                    if self.and {
                        s && *b
                    } else {
                        s || *b
                    }
                }
            });
        }
        Ok(())
    }
    fn finish(&mut self) -> PgResult<Datum> {
        Ok(self.state.map(Datum::Bool).unwrap_or(Datum::Null))
    }
}

macro_rules! agg {
    ($args:expr, $result:expr, $ctor:expr) => {
        Some(Aggregate {
            args: $args,
            result: $result,
            new_accumulator: || Box::new($ctor),
            state_grows: false,
        })
    };
}

fn minmax(max: bool, ty: TypeId) -> Option<Aggregate> {
    use TypeId::*;
    macro_rules! mm {
        ($t:ident) => {
            if max {
                agg!(
                    &[$t],
                    $t,
                    MinMax {
                        best: Datum::Null,
                        want: Ordering::Greater,
                        ty: $t
                    }
                )
            } else {
                agg!(
                    &[$t],
                    $t,
                    MinMax {
                        best: Datum::Null,
                        want: Ordering::Less,
                        ty: $t
                    }
                )
            }
        };
    }
    match ty {
        Int2 => mm!(Int2),
        Int4 => mm!(Int4),
        Int8 => mm!(Int8),
        Float4 => mm!(Float4),
        Float8 => mm!(Float8),
        Numeric => mm!(Numeric),
        Text | Varchar | Name | Unknown => mm!(Text),
        Bpchar => mm!(Bpchar),
        Bytea => mm!(Bytea),
        Date => mm!(Date),
        Timestamp => mm!(Timestamp),
        TimestampTz => mm!(TimestampTz),
        Interval => mm!(Interval),
        Oid => mm!(Oid),
        // max(anyarray) / min(anyarray): array_cmp order.
        BoolArray => mm!(BoolArray),
        Int2Array => mm!(Int2Array),
        Int4Array => mm!(Int4Array),
        Int8Array => mm!(Int8Array),
        Float4Array => mm!(Float4Array),
        Float8Array => mm!(Float8Array),
        NumericArray => mm!(NumericArray),
        TextArray | VarcharArray | NameArray => mm!(TextArray),
        BpcharArray => mm!(BpcharArray),
        ByteaArray => mm!(ByteaArray),
        DateArray => mm!(DateArray),
        TimestampArray => mm!(TimestampArray),
        TimestampTzArray => mm!(TimestampTzArray),
        IntervalArray => mm!(IntervalArray),
        OidArray => mm!(OidArray),
        _ => None,
    }
}

/// Resolves an aggregate by name and argument types; `count(*)` is `("count", &[])`.
pub(crate) fn resolve(name: &str, args: &[TypeId]) -> Option<Aggregate> {
    use TypeId::*;
    let name = name.to_ascii_lowercase();
    match (name.as_str(), args) {
        ("count", []) => agg!(&[], Int8, CountStar(0)),
        ("count", [t]) => {
            let args: &'static [TypeId] =
                crate::func::intern_types(&[if *t == Unknown { Text } else { *t }]);
            Some(Aggregate {
                args,
                result: Int8,
                new_accumulator: || Box::new(Count(0)),
                state_grows: false,
            })
        }
        ("sum" | "avg", [t]) => {
            let avg = name == "avg";
            match (avg, t) {
                (false, Int2) => agg!(
                    &[Int2],
                    Int8,
                    SumInt {
                        avg: false,
                        ..Default::default()
                    }
                ),
                (false, Int4) => agg!(
                    &[Int4],
                    Int8,
                    SumInt {
                        avg: false,
                        ..Default::default()
                    }
                ),
                (true, Int2) => agg!(
                    &[Int2],
                    Numeric,
                    SumInt {
                        avg: true,
                        ..Default::default()
                    }
                ),
                (true, Int4) => agg!(
                    &[Int4],
                    Numeric,
                    SumInt {
                        avg: true,
                        ..Default::default()
                    }
                ),
                (_, Int8) => {
                    if avg {
                        agg!(
                            &[Int8],
                            Numeric,
                            SumInt8 {
                                avg: true,
                                ..Default::default()
                            }
                        )
                    } else {
                        agg!(
                            &[Int8],
                            Numeric,
                            SumInt8 {
                                avg: false,
                                ..Default::default()
                            }
                        )
                    }
                }
                (_, Numeric) => {
                    if avg {
                        agg!(&[Numeric], Numeric, SumNumeric::new(true))
                    } else {
                        agg!(&[Numeric], Numeric, SumNumeric::new(false))
                    }
                }
                (false, Float4) => agg!(
                    &[Float4],
                    Float4,
                    SumFloat {
                        sum: 0.0,
                        sxx: 0.0,
                        count: 0,
                        avg: false,
                        float4: true
                    }
                ),
                (true, Float4) => agg!(
                    &[Float4],
                    Float8,
                    SumFloat {
                        sum: 0.0,
                        sxx: 0.0,
                        count: 0,
                        avg: true,
                        float4: true
                    }
                ),
                (false, Float8) => agg!(
                    &[Float8],
                    Float8,
                    SumFloat {
                        sum: 0.0,
                        sxx: 0.0,
                        count: 0,
                        avg: false,
                        float4: false
                    }
                ),
                (true, Float8) => agg!(
                    &[Float8],
                    Float8,
                    SumFloat {
                        sum: 0.0,
                        sxx: 0.0,
                        count: 0,
                        avg: true,
                        float4: false
                    }
                ),
                (false, Interval) => agg!(
                    &[Interval],
                    Interval,
                    SumInterval {
                        avg: false,
                        ..Default::default()
                    }
                ),
                (true, Interval) => agg!(
                    &[Interval],
                    Interval,
                    SumInterval {
                        avg: true,
                        ..Default::default()
                    }
                ),
                _ => None,
            }
        }
        ("min", [t]) => minmax(false, *t),
        ("max", [t]) => minmax(true, *t),
        ("string_agg", [a, b]) => {
            let (args, result): (&'static [TypeId], TypeId) =
                if *a == Bytea && (*b == Bytea || *b == Unknown) {
                    (&[Bytea, Bytea], Bytea)
                } else if is_text(*a) && is_text(*b) {
                    (&[Text, Text], Text)
                } else {
                    return None;
                };
            Some(Aggregate {
                args,
                result,
                new_accumulator: || Box::new(StringAgg::default()),
                state_grows: true,
            })
        }
        ("array_agg", [t]) if t.is_array() => Some(Aggregate {
            args: crate::func::intern_types(&[*t]),
            result: *t,
            new_accumulator: || Box::new(ArrayAggArrays::default()),
            state_grows: true,
        }),
        ("array_agg", [t]) => {
            let elem = if *t == Unknown { Text } else { *t };
            let result = elem.array_of()?;
            Some(Aggregate {
                args: crate::func::intern_types(&[elem]),
                result,
                new_accumulator: || Box::new(ArrayAgg::default()),
                state_grows: true,
            })
        }
        ("bool_and" | "every", [Bool | Unknown]) => agg!(
            &[Bool],
            Bool,
            BoolAgg {
                state: None,
                and: true
            }
        ),
        ("bool_or", [Bool | Unknown]) => agg!(
            &[Bool],
            Bool,
            BoolAgg {
                state: None,
                and: false
            }
        ),
        _ => None,
    }
}

fn is_text(t: TypeId) -> bool {
    matches!(
        t,
        TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name | TypeId::Unknown
    )
}
