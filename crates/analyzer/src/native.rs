//! Compiled expressions: a subtree of integer and float8 arithmetic, comparisons, casts
//! between those types and strict function calls on them, flattened into a postorder program
//! over unboxed 64-bit slots (PostgreSQL's ExecInterpExpr steps play the same part).
//!
//! The tree evaluator returns a `PgResult<Datum>` per node: a 32-byte value moved through
//! memory at every level, and a dispatch over every expression kind. A program keeps its
//! intermediate values in registers and touches a `Datum` only to read a leaf and to return
//! the result. The planner compiles the finished plan's expressions (`keel_planner`'s
//! native pass); the executor runs the programs (`keel_executor::native`).
//!
//! Semantics are the tree's exactly. Every step is strict, and the program runs its steps in
//! the tree's evaluation order (operands left to right, each before its operator), so ending
//! at the first NULL gives NULL after the same side effects (`random()` calls) and the same
//! first error as the tree. The arithmetic is `keel_types::scalar`, which the Datum operators
//! share or are tested against.

use crate::expr::{Expr, UnFn};
use keel_types::func::Function;
use keel_types::scalar::{Arith, Compare};
use keel_types::{Datum, TypeId};

/// Slots a program may use at once; deeper expressions stay trees.
pub const SLOTS: usize = 16;

/// Below this many operators (operators, casts, calls) the tree is as quick.
const MIN_STEPS: usize = 2;

/// How deep the compiler recurses into a subtree before giving it up.
const MAX_DEPTH: usize = 32;

/// A compiled expression.
pub struct Native {
    pub steps: Box<[Step]>,
    /// The result type.
    pub ty: TypeId,
    /// The expression compiled: EXPLAIN prints it, and walkers that look for columns and
    /// subqueries see it.
    pub source: Expr,
}

/// One step. Loads push a slot, operators pop their operands and push their result; a NULL
/// operand or result ends the program with NULL.
#[derive(Clone)]
pub enum Step {
    Col(usize),
    Param(usize),
    Outer(usize),
    /// A non-NULL constant's bits.
    Const(u64),
    /// A NULL constant.
    Null,
    /// Integer arithmetic in the given integer type.
    Int(Arith, TypeId),
    Float(Arith),
    CmpInt(Compare),
    CmpFloat(Compare),
    /// An integer cast to a narrower integer type: a range check.
    IntToInt(TypeId),
    IntToFloat,
    FloatToInt(TypeId),
    /// A strict (or argument-less) function on slot types: its arguments' types.
    Call(Function, Box<[TypeId]>),
    /// A unary operator: its operand's type.
    Unary(UnFn, TypeId),
}

/// The types a slot holds: integers and booleans as `i64`, float8 as its bits.
pub fn is_slot_type(t: TypeId) -> bool {
    matches!(
        t,
        TypeId::Int2 | TypeId::Int4 | TypeId::Int8 | TypeId::Float8 | TypeId::Bool
    )
}

fn is_int(t: TypeId) -> bool {
    matches!(t, TypeId::Int2 | TypeId::Int4 | TypeId::Int8)
}

fn is_number(t: TypeId) -> bool {
    is_int(t) || t == TypeId::Float8
}

/// A non-NULL slot-typed datum's bits; None for NULL and any other value.
#[inline]
pub fn bits(d: &Datum) -> Option<u64> {
    Some(match d {
        Datum::Int4(v) => *v as i64 as u64,
        Datum::Int8(v) => *v as u64,
        Datum::Float8(v) => v.to_bits(),
        Datum::Int2(v) => *v as i64 as u64,
        Datum::Bool(b) => *b as u64,
        _ => return None,
    })
}

/// The datum of type `t` whose bits are `v`.
#[inline]
pub fn datum(t: TypeId, v: u64) -> Datum {
    match t {
        TypeId::Int4 => Datum::Int4(v as i64 as i32),
        TypeId::Int8 => Datum::Int8(v as i64),
        TypeId::Float8 => Datum::Float8(f64::from_bits(v)),
        TypeId::Int2 => Datum::Int2(v as i64 as i16),
        _ => Datum::Bool(v != 0),
    }
}

impl Native {
    /// Compiles `e` if all of it is slot arithmetic with at least two operators.
    pub fn compile(e: &Expr) -> Option<Native> {
        if !matches!(
            e,
            Expr::Bin { .. } | Expr::Cast { .. } | Expr::Func { .. } | Expr::Un { .. }
        ) || !is_slot_type(e.ty())
        {
            return None;
        }
        let mut c = Compiler::default();
        c.expr(e, 0)?;
        (c.operators >= MIN_STEPS).then(|| Native {
            steps: c.steps.into(),
            ty: e.ty(),
            source: e.clone(),
        })
    }
}

#[derive(Default)]
struct Compiler {
    steps: Vec<Step>,
    depth: usize,
    operators: usize,
}

impl Compiler {
    fn push(&mut self, s: Step) -> Option<()> {
        self.depth += 1;
        self.steps.push(s);
        (self.depth <= SLOTS).then_some(())
    }

    /// Pops `n` operands and pushes the result.
    fn op(&mut self, n: usize, s: Step) -> Option<()> {
        self.depth = self.depth + 1 - n;
        self.operators += 1;
        self.steps.push(s);
        Some(())
    }

    /// Emits `e` as a value of type `as_ty` (an integer widened to float8 where asked).
    fn operand(&mut self, e: &Expr, as_float: bool, level: usize) -> Option<()> {
        self.expr(e, level)?;
        if as_float && is_int(e.ty()) {
            self.steps.push(Step::IntToFloat);
        }
        Some(())
    }

    fn expr(&mut self, e: &Expr, level: usize) -> Option<()> {
        if level > MAX_DEPTH || !is_slot_type(e.ty()) {
            return None;
        }
        let next = level + 1;
        match e {
            Expr::Const(d, t) => match d {
                Datum::Null => self.push(Step::Null),
                Datum::Int2(_) | Datum::Int4(_) | Datum::Int8(_) if is_int(*t) => {
                    self.push(Step::Const(bits(d)?))
                }
                Datum::Float8(_) if *t == TypeId::Float8 => self.push(Step::Const(bits(d)?)),
                Datum::Bool(_) if *t == TypeId::Bool => self.push(Step::Const(bits(d)?)),
                _ => None,
            },
            Expr::Col(i, _) => self.push(Step::Col(*i)),
            Expr::Param(i, _) => self.push(Step::Param(*i)),
            Expr::Outer(i, _) => self.push(Step::Outer(*i)),
            Expr::Bin { op, l, r, ty, .. } => {
                let (lt, rt) = (l.ty(), r.ty());
                if let Some(a) = Arith::from_op(op) {
                    if is_int(*ty) && is_int(lt) && is_int(rt) {
                        self.expr(l, next)?;
                        self.expr(r, next)?;
                        return self.op(2, Step::Int(a, *ty));
                    }
                    if *ty == TypeId::Float8 && a != Arith::Mod && is_number(lt) && is_number(rt) {
                        self.operand(l, true, next)?;
                        self.operand(r, true, next)?;
                        return self.op(2, Step::Float(a));
                    }
                    return None;
                }
                let c = Compare::from_op(op)?;
                if *ty != TypeId::Bool || !is_number(lt) || !is_number(rt) {
                    return None;
                }
                if is_int(lt) && is_int(rt) {
                    self.expr(l, next)?;
                    self.expr(r, next)?;
                    self.op(2, Step::CmpInt(c))
                } else {
                    self.operand(l, true, next)?;
                    self.operand(r, true, next)?;
                    self.op(2, Step::CmpFloat(c))
                }
            }
            Expr::Cast { arg, from, to, .. } => {
                if *from != arg.ty() || !is_number(*from) || !is_number(to.id) {
                    return None;
                }
                self.expr(arg, next)?;
                let step = match (is_int(*from), is_int(to.id)) {
                    (true, true) => Step::IntToInt(to.id),
                    (true, false) => Step::IntToFloat,
                    (false, true) => Step::FloatToInt(to.id),
                    (false, false) => return Some(()),
                };
                self.op(1, step)
            }
            Expr::Func { f, args } => {
                if !(f.strict || args.is_empty()) || args.len() > 4 {
                    return None;
                }
                let mut types = Vec::with_capacity(args.len());
                for a in args {
                    self.expr(a, next)?;
                    types.push(a.ty());
                }
                // An argument-less call pushes a slot.
                if args.is_empty() && self.depth + 1 > SLOTS {
                    return None;
                }
                self.op(args.len(), Step::Call(*f, types.into()))
            }
            Expr::Un { f, arg, .. } => {
                self.expr(arg, next)?;
                self.op(1, Step::Unary(*f, arg.ty()))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
#[path = "native_tests.rs"]
mod tests;
