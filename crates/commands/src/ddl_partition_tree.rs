//! DDL that a partition tree takes as a whole. Every partition has its parent's columns at
//! the same positions (routing moves rows between them unchanged), so a column change on a
//! partitioned table is made on every table below it, and refused on a partition, with
//! PostgreSQL's errors. An index on a partitioned table is an index on each partition,
//! linked to it (`IndexDef::parent`): existing partitions get one (or lend a matching one
//! they already have), later partitions get one when they are created or attached, and the
//! partitions' indexes go when the parent's does.

use crate::ddl::Interrupt;
use crate::ddl_index::add_index;
use keel_access::{Engine, Transaction};
use keel_analyzer::bind::fold;
use keel_catalog::{Catalog, IndexDef, TableDef};
use keel_common::{PgError, PgResult, sqlstate};
use sqlparser::ast;
use std::sync::Arc;

/// The tables an ALTER TABLE operation on `table` is carried out on, parents first: the
/// whole tree for a column or CHECK change of a partitioned table, the table alone
/// otherwise. A change a partition cannot make alone fails as in PostgreSQL.
pub(crate) fn alter_targets(
    cat: &Catalog,
    table: &Arc<TableDef>,
    op: &ast::AlterTableOperation,
) -> PgResult<Vec<u32>> {
    use ast::AlterTableOperation as Op;
    let inherited = |msg: String| PgError::new(sqlstate::INVALID_TABLE_DEFINITION, msg);
    if let Some((parent, _)) = table.partition_of() {
        match op {
            Op::AddColumn { .. } => {
                return Err(PgError::new(
                    sqlstate::WRONG_OBJECT_TYPE,
                    "cannot add column to a partition",
                ));
            }
            Op::DropColumn { column_names, .. } => {
                if let Some(c) = column_names
                    .iter()
                    .find(|c| table.column_index(&fold(c)).is_some())
                {
                    return Err(inherited(format!(
                        "cannot drop inherited column \"{}\"",
                        fold(c)
                    )));
                }
            }
            Op::RenameColumn {
                old_column_name, ..
            } if table.column_index(&fold(old_column_name)).is_some() => {
                return Err(inherited(format!(
                    "cannot rename inherited column \"{}\"",
                    fold(old_column_name)
                )));
            }
            Op::AlterColumn {
                column_name,
                op: ast::AlterColumnOperation::DropNotNull,
            } => {
                let n = fold(column_name);
                let parent = cat.table_of(*parent)?;
                if parent
                    .column_index(&n)
                    .is_some_and(|i| parent.columns[i].not_null)
                {
                    return Err(inherited(format!(
                        "column \"{n}\" is marked NOT NULL in parent table"
                    )));
                }
            }
            Op::AlterColumn {
                column_name,
                op: ast::AlterColumnOperation::SetDataType { .. },
            } => {
                return Err(inherited(format!(
                    "cannot alter inherited column \"{}\"",
                    fold(column_name)
                )));
            }
            _ => {}
        }
    }
    let recurses = matches!(
        op,
        Op::AddColumn { .. }
            | Op::DropColumn { .. }
            | Op::RenameColumn { .. }
            | Op::AlterColumn { .. }
            | Op::AddConstraint {
                constraint: ast::TableConstraint::Check(_),
                ..
            }
    );
    if table.partition_key().is_none() || !recurses {
        return Ok(vec![table.oid]);
    }
    let tree = cat.partition_tree(table);
    if let Op::DropColumn { column_names, .. } = op {
        for t in &tree {
            let Some(key) = t.partition_key() else {
                continue;
            };
            for c in column_names {
                let n = fold(c);
                if t.column_index(&n).is_some_and(|i| key.columns.contains(&i)) {
                    return Err(inherited(format!(
                        "cannot drop column \"{n}\" because it is part of the partition key of relation \"{}\"",
                        t.name
                    )));
                }
            }
        }
    }
    Ok(tree.iter().map(|t| t.oid).collect())
}

/// One ALTER TABLE operation (other than ADD COLUMN and the index constraints) on `table`
/// and, where PostgreSQL recurses, on every table below it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn alter_across_tree(
    op: &ast::AlterTableOperation,
    table: &Arc<TableDef>,
    engine: &Engine,
    txn: &Transaction,
    cat: &mut Catalog,
    notices: &mut Vec<PgError>,
    interrupt: &Interrupt<'_>,
) -> PgResult<()> {
    let mut targets = alter_targets(cat, table, op)?;
    let mut dropped: Vec<usize> = match op {
        ast::AlterTableOperation::DropColumn { column_names, .. } => {
            let t = cat.table_of(table.oid)?;
            (column_names.iter())
                .filter_map(|c| t.column_index(&fold(c)))
                .collect()
        }
        _ => Vec::new(),
    };
    if dropped.is_empty() && matches!(op, ast::AlterTableOperation::DropColumn { .. }) {
        // IF EXISTS of a missing column: one notice, for the table named.
        targets.truncate(1);
    }
    let mut op = op.clone();
    for oid in &targets {
        crate::ddl_alter::alter_op(&op, *oid, engine, txn, cat, notices, interrupt)?;
        // The partitions' CHECK constraints take the name the parent's got.
        if let ast::AlterTableOperation::AddConstraint {
            constraint: ast::TableConstraint::Check(c),
            ..
        } = &mut op
            && c.name.is_none()
            && let Some(made) = cat.table_of(*oid)?.checks.last()
        {
            c.name = Some(ast::Ident::new(made.name.clone()));
        }
    }
    if targets.len() > 1 {
        // Dropped in the order named, each shifting the later positions.
        for k in 0..dropped.len() {
            let col = dropped[k];
            shift_keys_after_drop(cat, &targets, col);
            for later in dropped.iter_mut().skip(k + 1) {
                if *later > col {
                    *later -= 1;
                }
            }
        }
    }
    Ok(())
}

/// After column `col` left every table of a tree: the partition keys' column positions
/// past it move down by one.
pub(crate) fn shift_keys_after_drop(cat: &mut Catalog, tree: &[u32], col: usize) {
    for &oid in tree {
        let Some(t) = cat.tables.get(&oid).cloned() else {
            continue;
        };
        let Some(p) = t.partition.as_deref() else {
            continue;
        };
        let Some(key) = &p.key else { continue };
        let mut nkey = key.clone();
        for c in &mut nkey.columns {
            if *c > col {
                *c -= 1;
            }
        }
        let mut nt = (*t).clone();
        if let Some(np) = nt.partition.as_deref_mut() {
            np.key = Some(nkey);
        }
        cat.tables.insert(oid, Arc::new(nt));
    }
}

/// What an index is, for matching a partition's index to its parent's.
fn same_index(a: &IndexDef, b: &IndexDef) -> bool {
    a.columns == b.columns
        && a.unique == b.unique
        && a.primary == b.primary
        && a.method == b.method
        && a.opclasses == b.opclasses
}

/// An index on `table_oid`, and when it is partitioned, on every partition below it: a
/// unique one must contain the partition key (0A000), and a partition's existing index of
/// the same shape that belongs to no other index is taken instead of a new one, as
/// PostgreSQL's DefineIndex does.
#[allow(clippy::too_many_arguments)]
pub(crate) fn add_index_tree(
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
    if unique && let Some(key) = table.partition_key() {
        crate::ddl_partition::check_unique_covers_key(
            key,
            &cols,
            primary,
            &table.name,
            &table.columns,
        )?;
    }
    let index = add_index(
        cat, engine, txn, table_oid, name, cols, unique, primary, constraint, interrupt,
    )?;
    if table.partition_key().is_some() {
        let parts: Vec<u32> = cat.tables.owned_by(table_oid).map(|t| t.oid).collect();
        for p in parts {
            index_partition(cat, engine, txn, &index, p, interrupt)?;
        }
    }
    Ok(index)
}

/// Gives partition `part` its index of the parent's `index`: a matching free one it has,
/// or a new one (recursively, for a partitioned partition).
pub(crate) fn index_partition(
    cat: &mut Catalog,
    engine: &Engine,
    txn: &mut Transaction,
    index: &IndexDef,
    part: u32,
    interrupt: &Interrupt<'_>,
) -> PgResult<()> {
    let existing = cat
        .indexes_of(part)
        .find(|i| i.parent.is_none() && same_index(i, index))
        .cloned();
    let child = match existing {
        Some(i) => i,
        None => add_index_tree(
            cat,
            engine,
            txn,
            part,
            None,
            index.columns.clone(),
            index.unique,
            index.primary,
            index.constraint,
            interrupt,
        )?,
    };
    let mut linked = (*child).clone();
    linked.parent = Some(index.oid);
    cat.indexes.insert(linked.oid, Arc::new(linked));
    Ok(())
}

/// DROP INDEX targets with the partitions' indexes of each: a partition's own index of a
/// parent's index cannot be dropped alone (2BP01, as PostgreSQL's dependency check).
pub(crate) fn drop_index_targets(cat: &Catalog, targets: &[u32]) -> PgResult<Vec<u32>> {
    for &oid in targets {
        let Some(ix) = cat.indexes.get(&oid) else {
            continue;
        };
        if let Some(parent) = ix.parent.and_then(|p| cat.indexes.get(&p))
            && !targets.contains(&parent.oid)
        {
            return Err(PgError::new(
                sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                format!(
                    "cannot drop index {} because index {} requires it",
                    ix.name, parent.name
                ),
            )
            .with_hint(format!("You can drop index {} instead.", parent.name)));
        }
    }
    let mut out = targets.to_vec();
    let mut i = 0;
    while i < out.len() {
        let below = children_of(cat, out[i]);
        out.extend(below.into_iter().filter(|c| !targets.contains(c)));
        i += 1;
    }
    Ok(out)
}

/// The partitions' indexes linked to index `oid`.
fn children_of(cat: &Catalog, oid: u32) -> Vec<u32> {
    let Some(ix) = cat.indexes.get(&oid) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for part in cat.tables.owned_by(ix.table) {
        out.extend(
            cat.indexes_of(part.oid)
                .filter(|i| i.parent == Some(oid))
                .map(|i| i.oid),
        );
    }
    out
}
