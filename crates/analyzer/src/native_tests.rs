use super::*;
use keel_types::ops::resolve_binary;
use keel_types::{SqlType, cast::CastContext};

fn bin(op: &'static str, l: Expr, r: Expr) -> Expr {
    let o = resolve_binary(op, l.ty(), r.ty()).expect("operator");
    Expr::Bin {
        op,
        f: o.func,
        l: Box::new(l),
        r: Box::new(r),
        ty: o.result,
    }
}

fn int(v: i32) -> Expr {
    Expr::Const(Datum::Int4(v), TypeId::Int4)
}

#[test]
fn arithmetic_with_two_operators_compiles_in_evaluation_order() {
    let e = bin(
        "+",
        bin("*", Expr::Col(0, TypeId::Int4), int(6)),
        Expr::Param(1, TypeId::Int4),
    );
    let n = Native::compile(&e).expect("compiled");
    assert_eq!(n.ty, TypeId::Int4);
    let kinds: Vec<String> = n.steps.iter().map(step_name).collect();
    assert_eq!(kinds, ["col0", "const", "int*", "param1", "int+"]);
}

fn step_name(s: &Step) -> String {
    match s {
        Step::Col(i) => format!("col{i}"),
        Step::Param(i) => format!("param{i}"),
        Step::Const(_) => "const".into(),
        Step::Int(a, _) => match a {
            Arith::Add => "int+".into(),
            Arith::Mul => "int*".into(),
            _ => "int".into(),
        },
        Step::IntToFloat => "i2f".into(),
        Step::FloatToInt(_) => "f2i".into(),
        Step::Float(_) => "float".into(),
        Step::CmpFloat(_) => "cmpf".into(),
        _ => "other".into(),
    }
}

#[test]
fn one_operator_stays_a_tree() {
    assert!(Native::compile(&bin("+", Expr::Col(0, TypeId::Int4), int(1))).is_none());
}

#[test]
fn mixed_comparison_widens_integers_and_casts_round() {
    let x = Expr::Col(0, TypeId::Float8);
    let cast = Expr::Cast {
        arg: Box::new(bin("*", x, Expr::Const(Datum::Float8(6.0), TypeId::Float8))),
        from: TypeId::Float8,
        to: SqlType::new(TypeId::Int4),
        ctx: CastContext::Explicit,
    };
    let e = bin(">", cast, int(3));
    let n = Native::compile(&e).expect("compiled");
    let kinds: Vec<String> = n.steps.iter().map(step_name).collect();
    assert_eq!(kinds, ["col0", "const", "float", "f2i", "const", "other"]);
    assert_eq!(n.ty, TypeId::Bool);
}

#[test]
fn text_and_numeric_are_not_compiled() {
    let t = Expr::Col(0, TypeId::Numeric);
    assert!(Native::compile(&bin("+", bin("+", t.clone(), t.clone()), t)).is_none());
}
