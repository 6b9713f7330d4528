//! Expressions back to text, as PostgreSQL's `deparse_expression` prints them in EXPLAIN
//! (ruleutils.c without pretty-printing): every operator, AND/OR, NOT and IS test in its own
//! parentheses, constants with a cast unless their text reads back as the same type
//! (`42`, `1.5`, `true`, but `'400'::numeric`, `'x'::text`, `'-1'::integer`).

use keel_analyzer::expr::{Expr, SubKind, SubPlan};
use keel_types::{Datum, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;

thread_local! {
    /// While a correlated subquery's plan is printed: the texts of its outer arguments
    /// (`Expr::Outer(k)` is the k-th), deparsed in the enclosing node with relation prefixes,
    /// as PostgreSQL prints a subplan's parameters by their referents.
    static OUTER: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// The InitPlans met so far by the EXPLAIN being printed, by subquery id, in the order
    /// of their `$n`.
    static INIT_PLANS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    /// The names of the composite types (by oid) of the catalog the EXPLAIN reads.
    static TYPE_NAMES: RefCell<HashMap<u32, String>> = RefCell::new(HashMap::new());
}

/// Takes the composite types' names from `catalog` for the EXPLAIN about to be printed.
pub fn set_type_names(catalog: &keel_catalog::Catalog) {
    let names = (catalog.types.values().map(|t| (t.oid, t.name.clone())))
        .chain(catalog.tables.values().map(|t| (t.oid, t.name.clone())))
        .collect();
    TYPE_NAMES.with(|n| *n.borrow_mut() = names);
}

/// A type's name as the user sees it: a composite's from the catalog.
fn type_name(ty: TypeId) -> String {
    match ty {
        TypeId::Composite(oid) => TYPE_NAMES
            .with(|n| n.borrow().get(&oid).cloned())
            .unwrap_or_else(|| ty.name().to_string()),
        t => t.name().to_string(),
    }
}

/// Whether `sp` runs as an InitPlan: an uncorrelated scalar subquery, which keel (as
/// PostgreSQL) evaluates once per execution; its value is then a parameter, `$n`.
pub fn is_init_plan(sp: &SubPlan) -> bool {
    sp.outer_args.is_empty() && matches!(sp.kind, SubKind::Scalar)
}

/// The `n` of `$n`, the parameter InitPlan `id` returns: numbered from 0 in the order the
/// EXPLAIN meets them (PostgreSQL numbers them in plan order).
pub fn init_param(id: u32) -> usize {
    INIT_PLANS.with(|v| {
        let mut v = v.borrow_mut();
        match v.iter().position(|&x| x == id) {
            Some(i) => i,
            None => {
                v.push(id);
                v.len() - 1
            }
        }
    })
}

/// Forgets the InitPlans of the previous EXPLAIN on this thread.
pub fn reset_init_params() {
    INIT_PLANS.with(|v| v.borrow_mut().clear());
}

/// Runs `f` with `outer` as the texts of `Expr::Outer` references.
pub fn with_outer<R>(outer: Vec<String>, f: impl FnOnce() -> R) -> R {
    let saved = OUTER.with(|o| std::mem::replace(&mut *o.borrow_mut(), outer));
    let r = f();
    OUTER.with(|o| *o.borrow_mut() = saved);
    r
}

/// The names of the columns of the row an expression is evaluated on, already in the form
/// EXPLAIN prints them (qualified with the relation name where the plan has several).
pub type Names = [String];

/// `e` as EXPLAIN prints it, over a row whose columns are `names`; `outer` names an
/// enclosing query's columns (a correlated subquery's `Expr::Outer`).
pub fn deparse(e: &Expr, names: &Names) -> String {
    let mut out = String::new();
    write_expr(e, names, &mut out);
    out
}

fn write_list(args: &[Expr], names: &Names, sep: &str, out: &mut String) {
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        write_expr(a, names, out);
    }
}

fn write_expr(e: &Expr, names: &Names, out: &mut String) {
    match e {
        Expr::Native(n) => write_expr(&n.source, names, out),
        Expr::Const(d, t) => write_const(d, *t, out),
        Expr::Col(i, _) => match names.get(*i) {
            Some(n) => out.push_str(n),
            None => out.push_str(&format!("${i}")),
        },
        Expr::Param(i, _) => out.push_str(&format!("${}", i + 1)),
        Expr::Outer(i, _) => {
            let text = OUTER.with(|o| o.borrow().get(*i).cloned());
            out.push_str(&text.unwrap_or_else(|| format!("${}", i)));
        }
        Expr::Bin { op, l, r, .. } => {
            out.push('(');
            write_expr(l, names, out);
            out.push(' ');
            out.push_str(op);
            out.push(' ');
            write_expr(r, names, out);
            out.push(')');
        }
        Expr::Distinct { l, r, negated, .. } => {
            out.push('(');
            write_expr(l, names, out);
            out.push_str(if *negated {
                " IS NOT DISTINCT FROM "
            } else {
                " IS DISTINCT FROM "
            });
            write_expr(r, names, out);
            out.push(')');
        }
        Expr::Un { arg, .. } => {
            out.push_str("(- ");
            write_expr(arg, names, out);
            out.push(')');
        }
        Expr::Not(a) => {
            out.push_str("(NOT ");
            write_expr(a, names, out);
            out.push(')');
        }
        Expr::And(args) => {
            out.push('(');
            write_list(args, names, " AND ", out);
            out.push(')');
        }
        Expr::Or(args) => {
            out.push('(');
            write_list(args, names, " OR ", out);
            out.push(')');
        }
        Expr::IsNull(a, negated) => {
            out.push('(');
            write_expr(a, names, out);
            out.push_str(if *negated {
                " IS NOT NULL)"
            } else {
                " IS NULL)"
            });
        }
        Expr::IsBool {
            arg,
            value,
            negated,
        } => {
            out.push('(');
            write_expr(arg, names, out);
            out.push_str(match (value, negated) {
                (true, false) => " IS TRUE)",
                (true, true) => " IS NOT TRUE)",
                (false, false) => " IS FALSE)",
                (false, true) => " IS NOT FALSE)",
            });
        }
        Expr::Cast { arg, to, .. } => {
            if let Expr::Const(d, from) = arg.as_ref() {
                let int = |t: TypeId| matches!(t, TypeId::Int2 | TypeId::Int4 | TypeId::Int8);
                if int(*from) && int(to.id) {
                    // Keel widens an integer operand to the other side's type; PostgreSQL
                    // has cross-type integer operators and keeps the constant as written.
                    write_const(d, *from, out);
                } else {
                    // PostgreSQL folds a cast of a constant at plan time.
                    write_const(d, to.id, out);
                }
                return;
            }
            out.push('(');
            write_expr(arg, names, out);
            out.push_str(")::");
            out.push_str(to.id.name());
        }
        Expr::Func { f, args } => {
            out.push_str(if f.name.is_empty() {
                "function"
            } else {
                f.name
            });
            out.push('(');
            write_list(args, names, ", ", out);
            out.push(')');
        }
        Expr::Special(keel_analyzer::expr::Special::UserFunction(call, args), _) => {
            out.push_str(&call.def.proname);
            out.push('(');
            write_list(args, names, ", ", out);
            out.push(')');
        }
        Expr::Special(keel_analyzer::expr::Special::TableOid(..), _) => out.push_str("tableoid"),
        Expr::Special(..) => out.push_str("function()"),
        Expr::Case { whens, default, .. } => {
            out.push_str("CASE");
            for (w, t) in whens {
                out.push_str(" WHEN ");
                write_expr(w, names, out);
                out.push_str(" THEN ");
                write_expr(t, names, out);
            }
            out.push_str(" ELSE ");
            write_expr(default, names, out);
            out.push_str(" END");
        }
        Expr::Coalesce(args, _) => {
            out.push_str("COALESCE(");
            write_list(args, names, ", ", out);
            out.push(')');
        }
        Expr::MinMax { args, greatest, .. } => {
            out.push_str(if *greatest { "GREATEST(" } else { "LEAST(" });
            write_list(args, names, ", ", out);
            out.push(')');
        }
        Expr::Array(a) => write_array(a, names, out),
        Expr::Row(r) => write_row(r, names, out),
        Expr::SubPlan(sp) if is_init_plan(sp) => out.push_str(&format!("${}", init_param(sp.id))),
        Expr::SubPlan(sp) => {
            let n = sp.id + 1;
            match &sp.kind {
                SubKind::Exists | SubKind::Scalar => out.push_str(&format!("(SubPlan {n})")),
                SubKind::Array { .. } => out.push_str(&format!("ARRAY(SubPlan {n})")),
                SubKind::Quantified { .. } if crate::hashed_subplan(sp).is_some() => {
                    out.push_str(&format!("(hashed SubPlan {n})"))
                }
                SubKind::Quantified { .. } => out.push_str(&format!("(SubPlan {n})")),
            }
        }
    }
}

/// A constant as ruleutils' get_const_expr prints it.
fn write_const(d: &Datum, ty: TypeId, out: &mut String) {
    if d.is_null() {
        out.push_str("NULL");
        if ty != TypeId::Unknown {
            out.push_str("::");
            out.push_str(&type_name(ty));
        }
        return;
    }
    let mut text = String::new();
    keel_types::io::format_text(d, ty, &mut text);
    match ty {
        TypeId::Int4 | TypeId::Numeric | TypeId::Float8
            if !text.starts_with('-')
                && text.chars().all(|c| {
                    c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+'
                }) =>
        {
            // Digits read back as int4; with a point (or exponent) as numeric.
            let reads_back = match ty {
                TypeId::Int4 => true,
                TypeId::Numeric => text.contains('.'),
                _ => false,
            };
            if reads_back {
                out.push_str(&text);
                return;
            }
        }
        TypeId::Bool => {
            out.push_str(if text == "t" { "true" } else { "false" });
            return;
        }
        _ => {}
    }
    out.push('\'');
    for c in text.chars() {
        if c == '\'' {
            out.push('\'');
        }
        out.push(c);
    }
    out.push('\'');
    if ty != TypeId::Unknown {
        out.push_str("::");
        out.push_str(&type_name(ty));
    }
}

/// Array expressions as ruleutils prints them: `ARRAY[1, 2]`, `a[1]`, `a[1:2]`,
/// `(x = ANY (a))`.
fn write_subscripts(
    subs: &[keel_analyzer::expr::ArraySub],
    slice: bool,
    names: &Names,
    out: &mut String,
) {
    for s in subs {
        out.push('[');
        if let Some(l) = &s.lower {
            write_expr(l, names, out);
        }
        if slice {
            out.push(':');
        }
        if let Some(u) = &s.upper {
            write_expr(u, names, out);
        }
        out.push(']');
    }
}

fn write_row(r: &keel_analyzer::expr::RowExpr, names: &Names, out: &mut String) {
    use keel_analyzer::expr::RowExpr;
    match r {
        RowExpr::Ctor { fields, ty, .. } => {
            out.push_str("ROW(");
            write_list(fields, names, ", ", out);
            out.push(')');
            if let TypeId::Composite(_) = ty {
                out.push_str("::");
                out.push_str(&type_name(*ty));
            }
        }
        RowExpr::Field { arg, name, .. } => {
            out.push('(');
            write_expr(arg, names, out);
            out.push_str(").");
            out.push_str(name);
        }
        RowExpr::FromText { arg, .. } => {
            write_expr(arg, names, out);
            out.push_str("::record");
        }
    }
}

fn write_array(a: &keel_analyzer::expr::ArrayExpr, names: &Names, out: &mut String) {
    use keel_analyzer::expr::ArrayExpr;
    match a {
        ArrayExpr::Ctor { elems, .. } => {
            out.push_str("ARRAY[");
            write_list(elems, names, ", ", out);
            out.push(']');
        }
        // PostgreSQL's `(a[2] := 20)[3:4] := '{1,2}'`.
        ArrayExpr::Assign {
            arr,
            subs,
            slice,
            value,
            ..
        } => {
            let nested = matches!(arr, Expr::Array(a) if matches!(**a, ArrayExpr::Assign { .. }));
            if nested {
                out.push('(');
            }
            write_expr(arr, names, out);
            if nested {
                out.push(')');
            }
            write_subscripts(subs, *slice, names, out);
            out.push_str(" := ");
            write_expr(value, names, out);
        }
        ArrayExpr::Subscript {
            arr, subs, slice, ..
        } => {
            out.push('(');
            write_expr(arr, names, out);
            out.push(')');
            write_subscripts(subs, *slice, names, out);
        }
        ArrayExpr::Quantified { lhs, arr, cmp, all } => {
            out.push('(');
            write_expr(lhs, names, out);
            let op = match cmp {
                Expr::Bin { op, .. } => *op,
                _ => "=",
            };
            out.push_str(&format!(" {op} {} (", if *all { "ALL" } else { "ANY" }));
            write_expr(arr, names, out);
            out.push_str("))");
        }
    }
}
