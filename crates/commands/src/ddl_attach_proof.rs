//! Whether a table's own constraints already prove the partition constraint ATTACH PARTITION
//! would otherwise check row by row (PostgreSQL's PartConstraintImpliedByRelConstraint).
//!
//! The proof is deliberately narrow: a single-column RANGE or LIST bound of a partition of a
//! root table, the column NOT NULL (a CHECK passes on NULL, so it proves nothing about NULL
//! rows), and CHECK conjuncts of the forms `col op constant` (`<`, `<=`, `>`, `>=`, `=`),
//! `col BETWEEN c1 AND c2` and `col IN (constants)`. Constants must be of the key's type
//! or cast to it implicitly (a lossy cast such as numeric to integer could round a bound).
//! Anything else is "not proven", and the rows are scanned: a missed proof costs a scan, a
//! wrong one would cost a misplaced row.

use keel_analyzer::bind::{Binder, Scope, fold};
use keel_catalog::partition::{PartitionBound, RangeValue};
use keel_catalog::{Catalog, TableDef};
use keel_common::PgResult;
use keel_types::cast::CastContext;
use keel_types::{Datum, SqlType};
use sqlparser::ast::{self, BinaryOperator as B};
use std::cmp::Ordering;

/// What the CHECK constraints say about the key column's non-NULL values.
#[derive(Default)]
struct Facts {
    not_null: bool,
    /// Lower limits: (value, inclusive).
    lower: Vec<(Datum, bool)>,
    /// Upper limits: (value, inclusive).
    upper: Vec<(Datum, bool)>,
    /// Value sets the column is confined to.
    sets: Vec<Vec<Datum>>,
}

pub(crate) fn implied_by_constraints(cat: &Catalog, table: &TableDef) -> PgResult<bool> {
    let Some((parent, bound)) = table.partition_of() else {
        return Ok(false);
    };
    let Some(parent) = cat.tables.get(parent) else {
        return Ok(false);
    };
    let Some(key) = parent.partition_key() else {
        return Ok(false);
    };
    if parent.partition_of().is_some() || table.partition_key().is_some() || key.len() != 1 {
        return Ok(false);
    }
    let col = key.columns[0];
    let column = &table.columns[col];
    let mut facts = Facts {
        not_null: column.not_null,
        ..Facts::default()
    };
    for check in &table.checks {
        let Ok(e) = keel_parser::parse::expression(&check.expr) else {
            return Ok(false);
        };
        collect(
            cat,
            &e,
            &column.name,
            SqlType::new(key.types[0]),
            &mut facts,
        );
    }
    let cmp = |a: &Datum, b: &Datum| keel_types::ops::compare_typed(a, b, key.types[0]);
    Ok(match bound {
        PartitionBound::Range { lower, upper } => {
            facts.not_null && above(&facts, &lower[0], cmp) && below(&facts, &upper[0], cmp)
        }
        PartitionBound::List { values } => {
            let has_null = values.iter().any(|v| matches!(v, Datum::Null));
            let within = |v: &Datum| values.iter().any(|w| cmp(v, w) == Ordering::Equal);
            (facts.not_null || has_null) && facts.sets.iter().any(|s| s.iter().all(within))
        }
        PartitionBound::Hash { .. } | PartitionBound::Default => false,
    })
}

/// The non-NULL values are all at or above the lower bound `lo`.
fn above(f: &Facts, lo: &RangeValue, cmp: impl Fn(&Datum, &Datum) -> Ordering) -> bool {
    let lo = match lo {
        RangeValue::MinValue => return true,
        RangeValue::MaxValue => return false,
        RangeValue::Value(v) => v,
    };
    f.lower.iter().any(|(c, _)| cmp(c, lo) != Ordering::Less)
        || f.sets
            .iter()
            .any(|s| s.iter().all(|v| cmp(v, lo) != Ordering::Less))
}

/// The non-NULL values are all below the (exclusive) upper bound `hi`.
fn below(f: &Facts, hi: &RangeValue, cmp: impl Fn(&Datum, &Datum) -> Ordering) -> bool {
    let hi = match hi {
        RangeValue::MaxValue => return true,
        RangeValue::MinValue => return false,
        RangeValue::Value(v) => v,
    };
    f.upper.iter().any(|(c, inclusive)| match cmp(c, hi) {
        Ordering::Less => true,
        Ordering::Equal => !inclusive,
        Ordering::Greater => false,
    }) || f
        .sets
        .iter()
        .any(|s| s.iter().all(|v| cmp(v, hi) == Ordering::Less))
}

fn collect(cat: &Catalog, e: &ast::Expr, col: &str, ty: SqlType, f: &mut Facts) {
    let is_col = |e: &ast::Expr| matches!(e, ast::Expr::Identifier(id) if fold(id) == col);
    let constant = |e: &ast::Expr| -> Option<Datum> {
        let bound = Binder::new(cat, &[], "", 0)
            .expr_as(e, ty, &Scope::default(), CastContext::Implicit)
            .ok()?;
        match bound {
            keel_analyzer::expr::Expr::Const(d, _) if !matches!(d, Datum::Null) => Some(d),
            _ => None,
        }
    };
    match e {
        ast::Expr::Nested(inner) => collect(cat, inner, col, ty, f),
        ast::Expr::BinaryOp {
            left,
            op: B::And,
            right,
        } => {
            collect(cat, left, col, ty, f);
            collect(cat, right, col, ty, f);
        }
        ast::Expr::IsNotNull(x) if is_col(x) => f.not_null = true,
        ast::Expr::BinaryOp { left, op, right } => {
            let (op, value) = if is_col(left) {
                (op.clone(), right)
            } else if is_col(right) {
                (flip(op), left)
            } else {
                return;
            };
            let Some(v) = constant(value) else { return };
            match op {
                B::Gt => f.lower.push((v, false)),
                B::GtEq => f.lower.push((v, true)),
                B::Lt => f.upper.push((v, false)),
                B::LtEq => f.upper.push((v, true)),
                B::Eq => f.sets.push(vec![v]),
                _ => {}
            }
        }
        ast::Expr::Between {
            expr,
            negated: false,
            low,
            high,
        } if is_col(expr) => {
            if let (Some(lo), Some(hi)) = (constant(low), constant(high)) {
                f.lower.push((lo, true));
                f.upper.push((hi, true));
            }
        }
        ast::Expr::InList {
            expr,
            list,
            negated: false,
        } if is_col(expr) => {
            let values: Option<Vec<Datum>> = list.iter().map(constant).collect();
            if let Some(values) = values {
                f.sets.push(values);
            }
        }
        _ => {}
    }
}

fn flip(op: &B) -> B {
    match op {
        B::Lt => B::Gt,
        B::LtEq => B::GtEq,
        B::Gt => B::Lt,
        B::GtEq => B::LtEq,
        other => other.clone(),
    }
}
