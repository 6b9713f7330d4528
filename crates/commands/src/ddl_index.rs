//! CREATE INDEX and the indexes of PRIMARY KEY / UNIQUE constraints: naming, the NOT NULL a
//! primary key implies, and filling the new index from the table's rows (interruptible: the
//! build checks the statement's cancel flag and statement_timeout per page and per row).

use crate::ddl::{Interrupt, plain_name};
use keel_access::{Engine, Transaction};
use keel_analyzer::bind::fold;
use keel_catalog::am::{default_opclass, named_opclass};
use keel_catalog::{Catalog, IndexDef, IndexMethod, Persistence};
use keel_common::{PgError, PgResult, sqlstate};
use sqlparser::ast;
use std::sync::Arc;

pub(crate) fn index_col_name(ic: &ast::IndexColumn) -> PgResult<String> {
    match &ic.column.expr {
        ast::Expr::Identifier(id) => Ok(fold(id)),
        other => Err(PgError::unsupported(format!("index on expression {other}"))),
    }
}

/// Creates (and fills) an index on table `table_oid`. Implicit names follow PostgreSQL:
/// `t_pkey`, `t_a_b_key` (unique constraints, `constraint`), `t_a_b_idx` (CREATE INDEX).
#[allow(clippy::too_many_arguments)]
pub(crate) fn add_index(
    cat: &mut Catalog,
    engine: &Engine,
    txn: &mut Transaction,
    table_oid: u32,
    name: Option<String>,
    cols: Vec<usize>,
    unique: bool,
    primary: bool,
    constraint: bool,
    interrupt: &Interrupt<'_>,
) -> PgResult<Arc<IndexDef>> {
    let table = cat.table_of(table_oid)?;
    if primary && cat.indexes_of(table_oid).any(|i| i.primary) {
        return Err(PgError::new(
            sqlstate::INVALID_TABLE_DEFINITION,
            format!(
                "multiple primary keys for table \"{}\" are not allowed",
                table.name
            ),
        ));
    }
    let name = match name {
        Some(n) => {
            if cat.name_taken(&n) {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_TABLE,
                    format!("relation \"{n}\" already exists"),
                ));
            }
            n
        }
        None => {
            let colnames: Vec<&str> = cols
                .iter()
                .map(|&c| table.columns[c].name.as_str())
                .collect();
            let base = if primary {
                format!("{}_pkey", table.name)
            } else if unique && constraint {
                format!("{}_{}_key", table.name, colnames.join("_"))
            } else {
                format!("{}_{}_idx", table.name, colnames.join("_"))
            };
            cat.choose_name(&base)
        }
    };
    if primary {
        // PRIMARY KEY implies NOT NULL on its columns, checked first as PostgreSQL does.
        let mut nt = (*table).clone();
        for &c in &cols {
            if !nt.columns[c].not_null {
                crate::ddl_alter::ensure_no_nulls(engine, txn, &table, c, interrupt)?;
            }
            nt.columns[c].not_null = true;
        }
        cat.tables.insert(table_oid, Arc::new(nt));
    }
    let opclasses = cols
        .iter()
        .map(|&c| Ok(default_opclass(IndexMethod::Btree, table.columns[c].ty.id)?.oid))
        .collect::<PgResult<Vec<_>>>()?;
    let index = IndexDef {
        parent: None,
        oid: cat.new_oid(),
        name,
        table: table_oid,
        columns: cols,
        unique,
        primary,
        method: IndexMethod::Btree,
        relfile: cat.new_oid(),
        opclasses,
        constraint: constraint || primary,
    };
    let table = cat.table_of(table_oid)?;
    engine.create_relfile(
        txn,
        index.relfile,
        table.persistence == Persistence::Unlogged,
    )?;
    engine
        .build_index(txn, &table, &index, &|| interrupt.check())
        .map_err(|e| match e.code {
            sqlstate::UNIQUE_VIOLATION if e.objects.is_none() => e
                .with_table(table.name.clone())
                .with_constraint(index.name.clone()),
            _ => e,
        })?;
    let index = Arc::new(index);
    cat.indexes.insert(index.oid, index.clone());
    Ok(index)
}

/// An operator class name as written (`int4_ops`, `pg_catalog.int4_ops`), folded.
fn fold_name(name: &ast::ObjectName) -> String {
    name.0
        .last()
        .and_then(|p| p.as_ident())
        .map_or_else(|| name.to_string(), fold)
}

pub(crate) fn create_index(
    ci: &ast::CreateIndex,
    engine: &Engine,
    txn: &mut Transaction,
    cat: &mut Catalog,
    notices: &mut Vec<PgError>,
    interrupt: &Interrupt<'_>,
) -> PgResult<String> {
    if ci.predicate.is_some() || !ci.include.is_empty() || !ci.with.is_empty() {
        return Err(PgError::unsupported(
            "partial indexes, INCLUDE and index storage options",
        ));
    }
    if let Some(u) = &ci.using {
        let m = u.to_string().to_lowercase();
        if m != "btree" {
            return Err(PgError::unsupported(format!("index method \"{m}\"")));
        }
    }
    let tname = plain_name(&ci.table_name)?;
    let table = cat.table(&tname)?.clone();
    let mut cols = Vec::new();
    for ic in &ci.columns {
        let n = index_col_name(ic)?;
        let c = table.column_index(&n).ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!("column \"{n}\" does not exist"),
            )
        })?;
        if let Some(class) = &ic.operator_class {
            // Each type has one B-tree order here: only its default class is offered.
            let ty = table.columns[c].ty.id;
            let named = named_opclass(IndexMethod::Btree, &fold_name(class), ty)?;
            if named.oid != default_opclass(IndexMethod::Btree, ty)?.oid {
                return Err(PgError::unsupported(format!(
                    "operator class \"{}\"",
                    named.name
                )));
            }
        }
        cols.push(c);
    }
    let name = match &ci.name {
        Some(n) => {
            let n = plain_name(n)?;
            if ci.if_not_exists && !crate::ddl::name_free(cat, &n, true, notices)? {
                return Ok("CREATE INDEX".into());
            }
            Some(n)
        }
        None => None,
    };
    crate::ddl_partition_tree::add_index_tree(
        cat, engine, txn, table.oid, name, cols, ci.unique, false, false, interrupt,
    )?;
    Ok("CREATE INDEX".into())
}
