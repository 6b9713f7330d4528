//! Row constructors (`ROW(a, b)`, `(a, b)`) where PostgreSQL takes them field by field:
//! `IS [NOT] NULL` and comparisons of two rows of the same width.

use super::{AggCtx, Binder, Scope};
use crate::expr::Expr;
use keel_common::{PgError, PgResult, sqlstate};
use sqlparser::ast;

/// The fields of a row constructor, `ROW(a, b)` or `(a, b)`; None for any other expression.
pub fn row_fields(e: &ast::Expr) -> Option<Vec<&ast::Expr>> {
    match e {
        ast::Expr::Tuple(items) => Some(items.iter().collect()),
        ast::Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("row") => match &f.args {
            ast::FunctionArguments::None => Some(vec![]),
            ast::FunctionArguments::List(l) if l.duplicate_treatment.is_none() => l
                .args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => Some(x),
                    _ => None,
                })
                .collect(),
            _ => None,
        },
        _ => None,
    }
}

impl Binder<'_> {
    /// `(a1, a2) op (b1, b2)` for a comparison `op`, as PostgreSQL's row comparison: `=` is
    /// the AND of the pairs, `<>` their OR, and the orderings decide at the first pair that is
    /// not equal (NULL when that pair has a NULL). None when `op` is not a comparison.
    #[inline(never)]
    pub(crate) fn row_compare(
        &mut self,
        op: &'static str,
        left: &[&ast::Expr],
        right: &[&ast::Expr],
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Option<Expr>> {
        if !matches!(op, "=" | "<>" | "<" | "<=" | ">" | ">=") {
            return Ok(None);
        }
        if left.len() != right.len() {
            return Err(PgError::new(
                sqlstate::SYNTAX_ERROR,
                "unequal number of entries in row expressions",
            ));
        }
        if left.is_empty() {
            return Err(PgError::unsupported("comparison of zero-column rows"));
        }
        let mut pairs = Vec::with_capacity(left.len());
        for (l, r) in left.iter().zip(right) {
            pairs.push((self.expr(l, scope, agg)?, self.expr(r, scope, agg)?));
        }
        // Built from the last pair backwards: cmp(i) = a_i strict b_i OR (a_i = b_i AND cmp(i+1)).
        let strict = match op {
            "<=" => "<",
            ">=" => ">",
            other => other,
        };
        let mut acc: Option<Expr> = None;
        for (l, r) in pairs.into_iter().rev() {
            acc = Some(match (op, acc) {
                (_, None) => self.binary(op, l, r)?,
                ("=", Some(rest)) => Expr::and(self.binary("=", l, r)?, rest),
                ("<>", Some(rest)) => Expr::or(self.binary("<>", l, r)?, rest),
                (_, Some(rest)) => {
                    let lt = self.binary(strict, l.clone(), r.clone())?;
                    let eq = self.binary("=", l, r)?;
                    Expr::or(lt, Expr::and(eq, rest))
                }
            });
        }
        Ok(acc)
    }
}
