//! Scalar functions and aggregates, resolved by name and argument types.

use crate::{Datum, TypeId};
use keel_common::PgResult;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

#[path = "func_datetime.rs"]
mod dtfn;
#[path = "func_impl.rs"]
mod imp;
#[path = "func_numeric.rs"]
mod numfn;
pub(crate) use imp::float_power;
pub(crate) use numfn::numeric_power;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Volatility {
    Immutable,
    Stable,
    Volatile,
}

/// What a function may need from its caller: the statement/transaction start time for now(),
/// a random generator seeded per session, and the interrupt check.
pub trait FuncContext: Send {
    /// Transaction start time, microseconds since 2000-01-01 UTC (now(), CURRENT_TIMESTAMP).
    fn transaction_timestamp(&self) -> i64;
    /// Statement start time (statement_timestamp()).
    fn statement_timestamp(&self) -> i64;
    /// A uniformly distributed float in [0, 1) (random()).
    fn random(&mut self) -> f64;
    /// The value nextval()/setval() last gave sequence `seq` in this session (currval()).
    fn seq_last(&self, _seq: u32) -> Option<i64> {
        None
    }
    /// Records the session's last value of sequence `seq`.
    fn set_seq_last(&mut self, _seq: u32, _value: i64) {}
    /// 57014 when the statement has been cancelled or has run past statement_timeout
    /// (PostgreSQL's CHECK_FOR_INTERRUPTS). A function that may run long on one call (one
    /// that builds a result of up to 1 GB from small arguments) calls it every
    /// [`CHECK_BYTES`] or so. A context that cannot be interrupted answers Ok.
    fn check_interrupts(&mut self) -> PgResult<()> {
        Ok(())
    }
    /// A WARNING for the client (sent before the statement completes); dropped where no
    /// client listens.
    fn warning(&mut self, _w: keel_common::PgError) {}
    /// The session's open cursors: keel-executor's `exec::cursor::Cursors`, behind `Any`
    /// because this crate sits below the executor. None where no session holds cursors.
    fn cursors(&mut self) -> Option<&mut (dyn std::any::Any + Send)> {
        None
    }
}

/// How many bytes a function builds between two [`FuncContext::check_interrupts`] calls
/// (a fraction of a millisecond of copying).
pub const CHECK_BYTES: usize = 1 << 20;

/// A resolved scalar function.
#[derive(Clone, Copy)]
pub struct Function {
    /// The name it was resolved by, lower case (EXPLAIN shows it).
    pub name: &'static str,
    /// Types to coerce the arguments to (for variadic functions, one entry per actual argument).
    pub args: &'static [TypeId],
    pub result: TypeId,
    pub volatility: Volatility,
    /// Strict: any NULL argument gives NULL without calling `func`.
    pub strict: bool,
    pub func: fn(&[Datum], &mut dyn FuncContext) -> PgResult<Datum>,
}

type F = fn(&[Datum], &mut dyn FuncContext) -> PgResult<Datum>;

/// Interns an argument-type list so variadic resolutions can hand out `&'static` slices
/// without leaking one allocation per call (one per distinct list instead).
pub(crate) fn intern_types(types: &[TypeId]) -> &'static [TypeId] {
    static TABLE: OnceLock<Mutex<HashMap<Vec<TypeId>, &'static [TypeId]>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut t = match table.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if let Some(s) = t.get(types) {
        return s;
    }
    let leaked: &'static [TypeId] = Box::leak(types.to_vec().into_boxed_slice());
    t.insert(types.to_vec(), leaked);
    leaked
}

fn f(args: &'static [TypeId], result: TypeId, func: F) -> Option<Function> {
    Some(Function {
        name: "",
        args,
        result,
        volatility: Volatility::Immutable,
        strict: true,
        func,
    })
}

fn fv(
    args: &'static [TypeId],
    result: TypeId,
    volatility: Volatility,
    func: F,
) -> Option<Function> {
    Some(Function {
        name: "",
        args,
        result,
        volatility,
        strict: true,
        func,
    })
}

fn is_text(t: TypeId) -> bool {
    matches!(
        t,
        TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name | TypeId::Unknown
    )
}

fn is_int(t: TypeId) -> bool {
    matches!(t, TypeId::Int2 | TypeId::Int4 | TypeId::Int8)
}

fn is_number(t: TypeId) -> bool {
    matches!(
        t,
        TypeId::Int2
            | TypeId::Int4
            | TypeId::Int8
            | TypeId::Float4
            | TypeId::Float8
            | TypeId::Numeric
    )
}

/// Types with an implicit cast to numeric (ints, numeric, unknown literals). float4/float8
/// only cast to numeric by assignment, so PostgreSQL never matches them to a numeric-only
/// signature such as round(numeric, int4): that call is 42883, not a failed cast.
fn numericish(t: TypeId) -> bool {
    matches!(
        t,
        TypeId::Int2 | TypeId::Int4 | TypeId::Int8 | TypeId::Numeric | TypeId::Unknown
    )
}

/// Integer arguments that can be coerced to int4 (unknown literals too).
fn int4ish(t: TypeId) -> bool {
    matches!(t, TypeId::Int2 | TypeId::Int4 | TypeId::Unknown)
}

/// The float8-or-numeric family choice PostgreSQL makes for math functions: numeric stays
/// numeric, everything else (ints, floats, unknown) goes to float8.
fn math1(t: TypeId, num: F, flt: F) -> Option<Function> {
    use TypeId::*;
    match t {
        Numeric => f(&[Numeric], Numeric, num),
        Int2 | Int4 | Int8 | Float4 | Float8 | Unknown => f(&[Float8], Float8, flt),
        _ => None,
    }
}

/// Resolves a scalar function call: now, clock_timestamp, statement_timestamp,
/// transaction_timestamp, random, md5, abs, length/char_length/octet_length, lower, upper,
/// substr/substring, position/strpos, replace, repeat, concat, left, right, btrim/ltrim/rtrim,
/// lpad/rpad, round, trunc, floor, ceil/ceiling, mod, power, sqrt, sign, format, quote_ident,
/// quote_literal, quote_nullable, translate and the scalar regexp functions
/// ([`crate::regex`]); greatest/least are handled by the binder. `args` are the actual argument types (Unknown for untyped literals).
/// None = 42883 `function f(integer) does not exist`.
pub fn resolve_function(name: &str, args: &[TypeId]) -> Option<Function> {
    let mut f = resolve_builtin(name, args)?;
    f.name = intern_name(&name.to_ascii_lowercase());
    Some(f)
}

/// Interns a function name (one allocation per distinct name resolved).
fn intern_name(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<std::collections::HashSet<&'static str>>> = OnceLock::new();
    let mut t = match NAMES.get_or_init(Default::default).lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if let Some(s) = t.get(name) {
        return s;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    t.insert(leaked);
    leaked
}

fn resolve_builtin(name: &str, args: &[TypeId]) -> Option<Function> {
    use TypeId::*;
    use Volatility::*;
    let lname = name.to_ascii_lowercase();
    if let Some(f) = crate::regex::resolve_function(&lname, args)
        .or_else(|| crate::func_format::resolve(&lname, args))
    {
        return Some(f);
    }
    let a0 = args.first().copied();
    let a1 = args.get(1).copied();
    if let Some(found) = crate::array_ops::resolve_function(&lname, args) {
        return Some(found);
    }
    if let Some(found) = crate::hash::resolve_function(&lname, args) {
        return Some(found);
    }
    match (lname.as_str(), args.len()) {
        ("now" | "current_timestamp" | "transaction_timestamp", 0) => {
            fv(&[], TimestampTz, Stable, imp::now)
        }
        ("date_trunc", 2) if a0.is_some_and(is_text) => match a1? {
            Timestamp => f(&[Text, Timestamp], Timestamp, |a, _| {
                dtfn::date_trunc_timestamp(a)
            }),
            TimestampTz | Date => f(&[Text, TimestampTz], TimestampTz, |a, _| {
                dtfn::date_trunc_timestamp(a)
            }),
            Interval => f(&[Text, Interval], Interval, |a, _| {
                dtfn::date_trunc_interval(a)
            }),
            _ => None,
        },
        ("statement_timestamp", 0) => fv(&[], TimestampTz, Stable, imp::statement_timestamp),
        ("clock_timestamp", 0) => fv(&[], TimestampTz, Volatile, imp::clock_timestamp),
        ("timeofday", 0) => fv(&[], Text, Volatile, imp::timeofday),
        ("random", 0) => fv(&[], Float8, Volatile, imp::random),
        ("gen_random_uuid", 0) => fv(&[], Uuid, Volatile, imp::gen_random_uuid),
        ("pi", 0) => f(&[], Float8, imp::pi),
        ("md5", 1) => match a0? {
            Bytea => f(&[Bytea], Text, imp::md5),
            t if is_text(t) => f(&[Text], Text, imp::md5),
            _ => None,
        },
        ("abs", 1) => match a0? {
            Int2 => f(&[Int2], Int2, imp::abs),
            Int4 => f(&[Int4], Int4, imp::abs),
            Int8 => f(&[Int8], Int8, imp::abs),
            Float4 => f(&[Float4], Float4, imp::abs),
            Numeric => f(&[Numeric], Numeric, imp::abs),
            Float8 | Unknown => f(&[Float8], Float8, imp::abs),
            _ => None,
        },
        ("length" | "char_length" | "character_length", 1) => match a0? {
            Bytea if lname == "length" => f(&[Bytea], Int4, imp::octet_length),
            Bpchar => f(&[Bpchar], Int4, imp::bpchar_length),
            t if is_text(t) => f(&[Text], Int4, imp::char_length),
            _ => None,
        },
        ("octet_length", 1) => match a0? {
            Bytea => f(&[Bytea], Int4, imp::octet_length),
            Bpchar => f(&[Bpchar], Int4, imp::octet_length),
            t if is_text(t) => f(&[Text], Int4, imp::octet_length),
            _ => None,
        },
        ("lower", 1) if is_text(a0?) => f(&[Text], Text, imp::lower),
        ("upper", 1) if is_text(a0?) => f(&[Text], Text, imp::upper),
        ("initcap", 1) if is_text(a0?) => f(&[Text], Text, imp::initcap),
        ("reverse", 1) if is_text(a0?) => f(&[Text], Text, imp::reverse),
        ("ascii", 1) if is_text(a0?) => f(&[Text], Int4, imp::ascii),
        ("chr", 1) if int4ish(a0?) => f(&[Int4], Text, imp::chr),
        ("to_hex", 1) => match a0? {
            Int2 | Int4 | Unknown => f(&[Int4], Text, imp::to_hex),
            Int8 => f(&[Int8], Text, imp::to_hex),
            _ => None,
        },
        ("substr" | "substring", 2) if is_text(a0?) && int4ish(a1?) => {
            f(&[Text, Int4], Text, imp::substr)
        }
        ("substr" | "substring", 3) if is_text(a0?) && int4ish(a1?) && int4ish(args[2]) => {
            f(&[Text, Int4, Int4], Text, imp::substr)
        }
        ("substr" | "substring", 2 | 3) if a0? == Bytea => {
            if args.len() == 2 {
                f(&[Bytea, Int4], Bytea, imp::substr)
            } else {
                f(&[Bytea, Int4, Int4], Bytea, imp::substr)
            }
        }
        ("strpos" | "position", 2) if is_text(a0?) && is_text(a1?) => {
            f(&[Text, Text], Int4, imp::strpos)
        }
        ("starts_with", 2) if is_text(a0?) && is_text(a1?) => {
            f(&[Text, Text], Bool, imp::starts_with)
        }
        ("replace", 3) if args.iter().all(|t| is_text(*t)) => {
            f(&[Text, Text, Text], Text, imp::replace)
        }
        ("split_part", 3) if is_text(a0?) && is_text(a1?) && int4ish(args[2]) => {
            f(&[Text, Text, Int4], Text, imp::split_part)
        }
        ("overlay", 3) if is_text(a0?) && is_text(a1?) && int4ish(args[2]) => {
            f(&[Text, Text, Int4], Text, imp::overlay)
        }
        ("overlay", 4) if is_text(a0?) && is_text(a1?) && int4ish(args[2]) && int4ish(args[3]) => {
            f(&[Text, Text, Int4, Int4], Text, imp::overlay)
        }
        ("repeat", 2) if is_text(a0?) && int4ish(a1?) => f(&[Text, Int4], Text, imp::repeat),
        ("left", 2) if is_text(a0?) && int4ish(a1?) => f(&[Text, Int4], Text, imp::left),
        ("right", 2) if is_text(a0?) && int4ish(a1?) => f(&[Text, Int4], Text, imp::right),
        ("btrim" | "ltrim" | "rtrim", 1) if is_text(a0?) => {
            let func: F = match lname.as_str() {
                "btrim" => imp::btrim,
                "ltrim" => imp::ltrim,
                _ => imp::rtrim,
            };
            f(&[Text], Text, func)
        }
        ("btrim" | "ltrim" | "rtrim", 2) if is_text(a0?) && is_text(a1?) => {
            let func: F = match lname.as_str() {
                "btrim" => imp::btrim,
                "ltrim" => imp::ltrim,
                _ => imp::rtrim,
            };
            f(&[Text, Text], Text, func)
        }
        ("lpad" | "rpad", 2) if is_text(a0?) && int4ish(a1?) => f(
            &[Text, Int4],
            Text,
            if lname == "lpad" {
                imp::lpad
            } else {
                imp::rpad
            },
        ),
        ("lpad" | "rpad", 3) if is_text(a0?) && int4ish(a1?) && is_text(args[2]) => f(
            &[Text, Int4, Text],
            Text,
            if lname == "lpad" {
                imp::lpad
            } else {
                imp::rpad
            },
        ),
        ("concat", _) if !args.is_empty() => {
            let types: Vec<TypeId> = args
                .iter()
                .map(|t| if *t == Unknown { Text } else { *t })
                .collect();
            Some(Function {
                name: "",
                args: intern_types(&types),
                result: Text,
                volatility: Stable,
                strict: false,
                func: imp::concat,
            })
        }
        ("concat_ws", _) if args.len() >= 2 && is_text(a0?) => {
            let mut types: Vec<TypeId> = args
                .iter()
                .map(|t| if *t == Unknown { Text } else { *t })
                .collect();
            types[0] = Text;
            Some(Function {
                name: "",
                args: intern_types(&types),
                result: Text,
                volatility: Stable,
                strict: false,
                func: imp::concat_ws,
            })
        }
        ("round", 1) => math1(a0?, imp::num_round, imp::f_round),
        ("round", 2) if numericish(a0?) => {
            int4ish(a1?).then_some(())?;
            f(&[Numeric, Int4], Numeric, imp::num_round)
        }
        ("trunc", 1) => math1(a0?, imp::num_trunc, imp::f_trunc),
        ("trunc", 2) if numericish(a0?) => {
            int4ish(a1?).then_some(())?;
            f(&[Numeric, Int4], Numeric, imp::num_trunc)
        }
        ("floor", 1) => math1(a0?, imp::num_floor, imp::f_floor),
        ("ceil" | "ceiling", 1) => math1(a0?, imp::num_ceil, imp::f_ceil),
        ("sign", 1) => math1(a0?, imp::num_sign, imp::f_sign),
        ("sqrt", 1) => math1(a0?, numfn::num_sqrt, imp::f_sqrt),
        ("exp", 1) => math1(a0?, numfn::num_exp, imp::f_exp),
        ("ln", 1) => math1(a0?, numfn::num_ln, imp::f_ln),
        ("log" | "log10", 1) => math1(a0?, numfn::num_log10, imp::f_log10),
        ("log", 2) if numericish(a0?) && numericish(a1?) => {
            f(&[Numeric, Numeric], Numeric, numfn::num_log)
        }
        ("power" | "pow", 2) => {
            let (x, y) = (a0?, a1?);
            if !(is_number(x) || x == Unknown) || !(is_number(y) || y == Unknown) {
                return None;
            }
            // numeric -> float8 is implicit but not the reverse: any float makes it float8.
            if (x == Numeric || y == Numeric) && numericish(x) && numericish(y) {
                f(&[Numeric, Numeric], Numeric, numfn::num_power_fn)
            } else {
                f(&[Float8, Float8], Float8, imp::f_power)
            }
        }
        ("mod", 2) => {
            let (x, y) = (a0?, a1?);
            let xi = |t: TypeId| is_int(t) || t == Unknown;
            if xi(x) && xi(y) {
                let t = if x == Int8 || y == Int8 {
                    Int8
                } else if x == Int4 || y == Int4 || (x == Unknown && y == Unknown) {
                    Int4
                } else {
                    Int2
                };
                let (args, func): (&'static [TypeId], F) = match t {
                    Int8 => (&[Int8, Int8], imp::int_mod),
                    Int4 => (&[Int4, Int4], imp::int_mod),
                    _ => (&[Int2, Int2], imp::int_mod),
                };
                f(args, t, func)
            } else if numericish(x) && numericish(y) {
                f(&[Numeric, Numeric], Numeric, imp::num_mod)
            } else {
                None
            }
        }
        ("div", 2) if numericish(a0?) && numericish(a1?) => {
            f(&[Numeric, Numeric], Numeric, imp::num_div_trunc)
        }
        _ => None,
    }
}

/// An aggregate's transition state. `count`, `sum`, `avg`, `min`, `max`, `string_agg`,
/// `bool_and`, `bool_or`.
pub trait Accumulator: Send {
    /// Adds one input row's arguments (already coerced). Called for NULL inputs too; the
    /// accumulator ignores them where the aggregate is strict.
    fn update(&mut self, args: &[Datum]) -> PgResult<()>;
    /// The final value (sum of no rows = NULL, count of no rows = 0, ...). Called once: a
    /// state may hand over its buffer instead of copying it.
    fn finish(&mut self) -> PgResult<Datum>;
    /// Heap bytes the state holds beyond its fixed size (for the statement memory limit);
    /// only states whose aggregate has `state_grows` report it.
    fn heap_bytes(&self) -> usize {
        0
    }
}

#[derive(Clone, Copy)]
pub struct Aggregate {
    pub args: &'static [TypeId],
    /// Result type as PostgreSQL gives it: sum(int4) -> int8, sum(int8) -> numeric,
    /// avg(int) -> numeric, count -> int8, ...
    pub result: TypeId,
    pub new_accumulator: fn() -> Box<dyn Accumulator>,
    /// The state grows with its input (string_agg's buffer): the executor charges
    /// [`Accumulator::heap_bytes`] to the statement's memory after each row.
    pub state_grows: bool,
}

/// Resolves an aggregate by name and argument types; `count(*)` is `("count", &[])`.
pub fn resolve_aggregate(name: &str, args: &[TypeId]) -> Option<Aggregate> {
    crate::agg::resolve(name, args)
}

#[cfg(test)]
#[path = "func_tests.rs"]
mod tests;
