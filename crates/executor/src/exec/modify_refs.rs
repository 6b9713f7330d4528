//! Foreign keys' referential actions (ON DELETE / ON UPDATE CASCADE, SET NULL, SET DEFAULT):
//! the referencing rows of a deleted or changed key are deleted or updated by a statement of
//! their own on the referencing table (`internal_sql`), as PostgreSQL's RI triggers run
//! theirs through SPI, so that table's triggers, constraints and actions apply in turn. It
//! runs after the referenced row was written, with a refreshed snapshot (see `check_refs`).

use super::ModifyExec;
use crate::eval::EvalCx;
use keel_access::{Engine, Transaction};
use keel_catalog::FkAction;
use keel_common::PgResult;
use keel_planner::plan::ModifyPlan;
use keel_types::{Datum, TypeId};

impl ModifyExec {
    /// ON DELETE / ON UPDATE CASCADE, SET NULL or SET DEFAULT of foreign key `r`: the
    /// referencing rows of the deleted or changed key `old_key` are deleted or updated by a
    /// statement of their own, whose triggers, constraints and actions apply in turn.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn referential_action(
        plan: &ModifyPlan,
        r: &keel_analyzer::query::RefCheck,
        action: FkAction,
        old_key: &[Datum],
        new: Option<&[Datum]>,
        engine: &Engine,
        txn: &Transaction,
        ev: &mut EvalCx<'_>,
    ) -> PgResult<()> {
        let quote = |n: &str| format!("\"{}\"", n.replace('"', "\"\""));
        let child_col = |k: usize| quote(&r.child.columns[r.child_columns[k]].name);
        let mut types: Vec<TypeId> = r.columns.iter().map(|&c| plan.types[c]).collect();
        let mut values = old_key.to_vec();
        let filter: Vec<String> = (0..r.columns.len())
            .map(|k| format!("{} = ${}", child_col(k), k + 1))
            .collect();
        let table = quote(&r.child.name);
        let set = |value: &dyn Fn(usize) -> String| -> String {
            (0..r.columns.len())
                .map(|k| format!("{} = {}", child_col(k), value(k)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let n = r.columns.len();
        let text = match (action, new) {
            (FkAction::Cascade, None) => {
                format!("DELETE FROM {table} WHERE {}", filter.join(" AND "))
            }
            (FkAction::Cascade, Some(new)) => {
                types.extend(r.columns.iter().map(|&c| plan.types[c]));
                values.extend(r.columns.iter().map(|&c| new[c].clone()));
                format!(
                    "UPDATE {table} SET {} WHERE {}",
                    set(&|k| format!("${}", n + k + 1)),
                    filter.join(" AND ")
                )
            }
            (FkAction::SetNull, _) => format!(
                "UPDATE {table} SET {} WHERE {}",
                set(&|_| "NULL".into()),
                filter.join(" AND ")
            ),
            (FkAction::SetDefault, _) => format!(
                "UPDATE {table} SET {} WHERE {}",
                set(&|_| "DEFAULT".into()),
                filter.join(" AND ")
            ),
            (FkAction::NoAction | FkAction::Restrict, _) => return Ok(()),
        };
        // The statement as PostgreSQL's ri_triggers.c writes it, for the CONTEXT line.
        let qualified = format!("ONLY \"public\".{table}");
        let eq = |k: usize, p: usize| format!("${p} OPERATOR(pg_catalog.=) {}", child_col(k));
        let shown = match (action, new) {
            (FkAction::Cascade, None) => format!(
                "DELETE FROM {qualified} WHERE {}",
                (0..n)
                    .map(|k| eq(k, k + 1))
                    .collect::<Vec<_>>()
                    .join(" AND ")
            ),
            (FkAction::Cascade, Some(_)) => format!(
                "UPDATE {qualified} SET {} WHERE {}",
                set(&|k| format!("${}", k + 1)),
                (0..n)
                    .map(|k| eq(k, n + k + 1))
                    .collect::<Vec<_>>()
                    .join(" AND ")
            ),
            _ => format!(
                "UPDATE {qualified} SET {} WHERE {}",
                set(&|_| if action == FkAction::SetNull {
                    "NULL"
                } else {
                    "DEFAULT"
                }
                .into()),
                (0..n)
                    .map(|k| eq(k, k + 1))
                    .collect::<Vec<_>>()
                    .join(" AND ")
            ),
        };
        let catalog = txn.catalog(engine);
        let mut inner = ev.nested(Some(txn), &[]);
        let r = crate::internal_sql::run_write(&text, &shown, &types, &values, catalog, &mut inner);
        let carried = inner.carried();
        ev.restore(carried);
        r
    }
}
