//! CHECK constraints (CREATE TABLE and ALTER TABLE ADD CONSTRAINT) and the ALTER TABLE
//! operations that only change the catalog: RENAME, RENAME COLUMN, ALTER COLUMN SET/DROP
//! DEFAULT and SET/DROP NOT NULL. DROP COLUMN rewrites the table (`ddl_drop_column`);
//! ALTER COLUMN TYPE would too and is not supported (0A000) except for its error cases.

use crate::ddl::{notice, plain_name};
use keel_access::{Engine, Transaction};
use keel_analyzer::bind::{Binder, fold};
use keel_catalog::{Catalog, CheckDef, TableDef, TriggerFires};
use keel_common::{PgError, PgResult, Settings, sqlstate};
use keel_executor::eval::{Eval, EvalCx, SessionFuncs};
use keel_types::Datum;
use sqlparser::ast;
use std::sync::Arc;

/// A CHECK constraint as written: its name if given, its expression, and the column it was
/// attached to (column constraints are named after their column).
pub(crate) struct PendingCheck {
    pub name: Option<String>,
    pub expr: String,
    pub column: Option<String>,
}

impl PendingCheck {
    pub fn from_ast(c: &ast::CheckConstraint, column: Option<String>) -> PendingCheck {
        PendingCheck {
            name: c.name.as_ref().map(fold),
            expr: c.expr.to_string(),
            column,
        }
    }
}

fn undefined_column(table: &TableDef, name: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_COLUMN,
        format!(
            "column \"{name}\" of relation \"{}\" does not exist",
            table.name
        ),
    )
}

/// Identifiers (folded) in an SQL expression text.
pub(crate) fn identifiers(expr: &str) -> Vec<String> {
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    sqlparser::tokenizer::Tokenizer::new(&dialect, expr)
        .tokenize()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|t| match t {
            sqlparser::tokenizer::Token::Word(w) => Some(fold(&ast::Ident {
                value: w.value,
                quote_style: w.quote_style,
                span: sqlparser::tokenizer::Span::empty(),
            })),
            _ => None,
        })
        .collect()
}

/// Adds CHECK constraints to table `oid` (named as PostgreSQL names them: `t_col_check`, with
/// a number appended when taken), binds them to catch unknown columns and non-boolean
/// expressions, and with `validate` checks every existing row (23514).
pub(crate) fn add_checks(
    cat: &mut Catalog,
    oid: u32,
    pending: Vec<PendingCheck>,
    validate: Option<(&Engine, &Transaction, &crate::ddl::Interrupt<'_>)>,
) -> PgResult<()> {
    if pending.is_empty() {
        return Ok(());
    }
    let table = cat.table_of(oid)?;
    let mut nt = (*table).clone();
    let first = nt.checks.len();
    for p in pending {
        let name = match p.name {
            Some(n) => {
                if nt.checks.iter().any(|c| c.name == n) {
                    return Err(PgError::new(
                        sqlstate::DUPLICATE_OBJECT,
                        format!(
                            "constraint \"{n}\" for relation \"{}\" already exists",
                            nt.name
                        ),
                    ));
                }
                n
            }
            None => {
                let col = p.column.or_else(|| {
                    identifiers(&p.expr)
                        .into_iter()
                        .find(|i| nt.column_index(i).is_some())
                });
                let base = match col {
                    Some(c) => format!("{}_{c}_check", nt.name),
                    None => format!("{}_check", nt.name),
                };
                let taken = |n: &str| nt.checks.iter().any(|c| c.name == n);
                if taken(&base) {
                    (1..)
                        .map(|k| format!("{base}{k}"))
                        .find(|n| !taken(n))
                        .unwrap_or(base)
                } else {
                    base
                }
            }
        };
        nt.checks.push(CheckDef { name, expr: p.expr });
    }
    let added = TableDef {
        checks: nt.checks[first..].to_vec(),
        ..nt.clone()
    };
    let bound = Binder::new(cat, &[], "", 0).check_exprs(&added)?;
    if let Some((engine, txn, interrupt)) = validate {
        let mut funcs = SessionFuncs::new(1);
        let settings = Settings::default();
        let mut ev = EvalCx {
            params: &[],
            fctx: &mut funcs,
            engine,
            settings: &settings,
            pid: 0,
            cancel: interrupt.cancel,
            txn: Some(txn),
            outer: &[],
            subq: Default::default(),
            subplans: Default::default(),
            deadline: interrupt.deadline,
            ticker: Default::default(),
            // The session runs DDL off its async worker (block_in_place).
            blocking: keel_executor::eval::run_inline,
            // A CHECK is evaluated row by row; nothing accumulates.
            mem: keel_executor::exec::mem::StatementMem::unlimited(),
            transition: &[],
        };
        for item in engine.scan(txn, &table) {
            let (_, row) = item?;
            ev.tick()?;
            for (name, e) in &bound {
                if let Datum::Bool(false) = e.eval(&row, &mut ev)? {
                    return Err(PgError::new(
                        sqlstate::CHECK_VIOLATION,
                        format!(
                            "check constraint \"{name}\" of relation \"{}\" is violated by some row",
                            nt.name
                        ),
                    )
                    .with_table(nt.name.clone())
                    .with_constraint(name.clone()));
                }
            }
        }
    }
    cat.tables.insert(oid, Arc::new(nt));
    Ok(())
}

/// One ALTER TABLE operation that `ddl::alter_table` does not handle itself.
pub(crate) fn alter_op(
    op: &ast::AlterTableOperation,
    oid: u32,
    engine: &Engine,
    txn: &Transaction,
    cat: &mut Catalog,
    notices: &mut Vec<PgError>,
    interrupt: &crate::ddl::Interrupt<'_>,
) -> PgResult<()> {
    let table = cat.table_of(oid)?;
    let mut nt = (*table).clone();
    match op {
        ast::AlterTableOperation::AddConstraint {
            constraint: ast::TableConstraint::Check(c),
            ..
        } => {
            return add_checks(
                cat,
                oid,
                vec![PendingCheck::from_ast(c, None)],
                Some((engine, txn, interrupt)),
            );
        }
        ast::AlterTableOperation::DropColumn {
            column_names,
            if_exists,
            drop_behavior,
            ..
        } => {
            let cascade = matches!(drop_behavior, Some(ast::DropBehavior::Cascade));
            for c in column_names {
                let n = fold(c);
                let current = cat
                    .tables
                    .get(&oid)
                    .cloned()
                    .unwrap_or_else(|| table.clone());
                let Some(i) = current.column_index(&n) else {
                    if *if_exists {
                        notices.push(notice(format!(
                            "column \"{n}\" of relation \"{}\" does not exist, skipping",
                            nt.name
                        )));
                        continue;
                    }
                    return Err(undefined_column(&nt, &n));
                };
                let how = crate::ddl_drop_column::How { cascade, notices };
                crate::ddl_drop_column::drop_column(cat, oid, i, how, engine, txn, interrupt)?;
            }
            return Ok(());
        }
        ast::AlterTableOperation::RenameColumn {
            old_column_name,
            new_column_name,
        } => {
            let (old, new) = (fold(old_column_name), fold(new_column_name));
            let i = nt
                .column_index(&old)
                .ok_or_else(|| undefined_column(&nt, &old))?;
            if nt.column_index(&new).is_some() {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_COLUMN,
                    format!(
                        "column \"{new}\" of relation \"{}\" already exists",
                        nt.name
                    ),
                ));
            }
            views_keep_names(cat, oid)?;
            // CHECK constraints keep their expression as text naming the column.
            if nt
                .checks
                .iter()
                .any(|c| identifiers(&c.expr).contains(&old))
            {
                return Err(PgError::unsupported(
                    "RENAME COLUMN of a column used by a CHECK constraint",
                ));
            }
            nt.columns[i].name = new;
        }
        ast::AlterTableOperation::RenameTable { table_name } => {
            let (ast::RenameTableNameKind::To(n) | ast::RenameTableNameKind::As(n)) = table_name;
            let new = plain_name(n)?;
            views_keep_names(cat, oid)?;
            if cat.name_taken(&new) {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_TABLE,
                    format!("relation \"{new}\" already exists"),
                ));
            }
            nt.name = new;
        }
        ast::AlterTableOperation::AlterColumn { column_name, op } => {
            let n = fold(column_name);
            let i = nt
                .column_index(&n)
                .ok_or_else(|| undefined_column(&nt, &n))?;
            match op {
                ast::AlterColumnOperation::SetDefault { value } => {
                    // Bind it now so a bad default fails here, not at the next INSERT.
                    nt.columns[i].default = Some(value.to_string());
                    Binder::new(cat, &[], "", 0).default_expr(&nt, i)?;
                }
                ast::AlterColumnOperation::DropDefault => nt.columns[i].default = None,
                ast::AlterColumnOperation::DropNotNull => {
                    if cat
                        .indexes_of(oid)
                        .any(|ix| ix.primary && ix.columns.contains(&i))
                    {
                        return Err(PgError::new(
                            sqlstate::INVALID_TABLE_DEFINITION,
                            format!("column \"{n}\" is in a primary key"),
                        ));
                    }
                    nt.columns[i].not_null = false;
                }
                ast::AlterColumnOperation::SetNotNull => {
                    ensure_no_nulls(engine, txn, &table, i, interrupt)?;
                    nt.columns[i].not_null = true;
                }
                other => return Err(PgError::unsupported(format!("ALTER COLUMN {other}"))),
            }
        }
        ast::AlterTableOperation::EnableTrigger { name } => {
            crate::ddl_trigger::set_enabled(&mut nt, name, Some(TriggerFires::Origin))?
        }
        ast::AlterTableOperation::EnableReplicaTrigger { name } => {
            crate::ddl_trigger::set_enabled(&mut nt, name, Some(TriggerFires::Replica))?
        }
        ast::AlterTableOperation::EnableAlwaysTrigger { name } => {
            crate::ddl_trigger::set_enabled(&mut nt, name, Some(TriggerFires::Always))?
        }
        ast::AlterTableOperation::DisableTrigger { name } => {
            crate::ddl_trigger::set_enabled(&mut nt, name, None)?
        }
        other => return Err(PgError::unsupported(format!("ALTER TABLE {other}"))),
    }
    cat.tables.insert(oid, Arc::new(nt));
    Ok(())
}

/// Fails with PostgreSQL's 23502 when a visible row of `table` has NULL in column `col`: what
/// SET NOT NULL and ADD PRIMARY KEY check before they mark the column NOT NULL.
pub(crate) fn ensure_no_nulls(
    engine: &Engine,
    txn: &Transaction,
    table: &TableDef,
    col: usize,
    interrupt: &crate::ddl::Interrupt<'_>,
) -> PgResult<()> {
    for item in engine.scan(txn, table) {
        let (_, row) = item?;
        interrupt.check()?;
        if row.get(col).is_none_or(Datum::is_null) {
            let name = &table.columns[col].name;
            return Err(PgError::new(
                sqlstate::NOT_NULL_VIOLATION,
                format!(
                    "column \"{name}\" of relation \"{}\" contains null values",
                    table.name
                ),
            )
            .with_table(table.name.clone())
            .with_column(name.clone()));
        }
    }
    Ok(())
}

/// A view keeps its query as text naming tables and columns, so a rename under it would
/// leave it naming what is no longer there: refused (PostgreSQL's views follow the rename).
fn views_keep_names(cat: &Catalog, table: u32) -> PgResult<()> {
    match cat.views_reading(table).next() {
        Some(v) => Err(PgError::unsupported(format!(
            "renaming a table or column that view \"{}\" reads",
            v.name
        ))),
        None => Ok(()),
    }
}

/// ALTER TABLE naming a view: PostgreSQL's error for the actions it refuses on views; the
/// ones it allows (renames, column defaults) are not built for views yet.
pub(crate) fn alter_view_refused(view: &str, op: &ast::AlterTableOperation) -> PgError {
    let action = match op {
        ast::AlterTableOperation::EnableTrigger { .. }
        | ast::AlterTableOperation::EnableReplicaTrigger { .. }
        | ast::AlterTableOperation::EnableAlwaysTrigger { .. } => Some("ENABLE TRIGGER"),
        ast::AlterTableOperation::DisableTrigger { .. } => Some("DISABLE TRIGGER"),
        ast::AlterTableOperation::AddConstraint { .. } => Some("ADD CONSTRAINT"),
        _ => None,
    };
    match action {
        Some(a) => PgError::new(
            sqlstate::WRONG_OBJECT_TYPE,
            format!("ALTER action {a} cannot be performed on relation \"{view}\""),
        )
        .with_detail("This operation is not supported for views."),
        None => PgError::unsupported(format!("ALTER TABLE {op} on a view")),
    }
}
