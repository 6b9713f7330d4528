//! EXECUTE's arguments, as PostgreSQL's EvaluateParams binds them: each argument alone, with
//! no relation in scope, coerced to its parameter's type in assignment context. An argument
//! that cannot be coerced is 42804 at its place in the statement.

use super::Binder;
use crate::expr::Expr;
use keel_catalog::Catalog;
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::CastContext;
use keel_types::{SqlType, TypeId};
use sqlparser::ast::{self, Spanned};

/// Binds `args` (parsed from `text`, at `char_offset` in the query string) to `targets`.
/// The caller has checked that there are as many of each.
pub fn bind_execute_args(
    catalog: &Catalog,
    args: &[ast::Expr],
    text: &str,
    char_offset: usize,
    targets: &[TypeId],
) -> PgResult<Vec<Expr>> {
    let mut b = Binder::new(catalog, &[], text, char_offset);
    // An argument refers to no parameter of its own: `$1` in it is an error.
    b.no_new_params = true;
    let scope = super::Scope::default();
    let mut out = Vec::with_capacity(args.len());
    for (i, (a, &to)) in args.iter().zip(targets).enumerate() {
        let e = b.expr(a, &scope, &mut None)?;
        let from = e.ty();
        let bound = b.coerce_in(e, SqlType::new(to), CastContext::Assignment);
        let bound = bound.map_err(|err| {
            let err =
                if err.code == sqlstate::DATATYPE_MISMATCH || err.code == sqlstate::CANNOT_COERCE {
                    PgError::new(
                        sqlstate::DATATYPE_MISMATCH,
                        format!(
                            "parameter ${} of type {} cannot be coerced to the expected type {}",
                            i + 1,
                            super::types::type_display_in(SqlType::new(from), catalog),
                            super::types::type_display_in(SqlType::new(to), catalog),
                        ),
                    )
                    .with_hint("You will need to rewrite or cast the expression.")
                } else {
                    err
                };
            b.at(err, a.span())
        })?;
        out.push(bound);
    }
    Ok(out)
}
