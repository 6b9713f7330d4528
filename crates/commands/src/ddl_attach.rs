//! `ALTER TABLE parent ATTACH PARTITION t FOR VALUES ...` and `DETACH PARTITION t`.
//!
//! ATTACH makes an existing table a partition, with PostgreSQL's checks in its order
//! (ATExecAttachPartition): the table's columns are the parent's (no others, none missing,
//! the same types, NOT NULL where the parent's are), it has each of the parent's CHECK
//! constraints under the same name and definition, and its bound fits beside its siblings'.
//! It gets the parent's indexes (a matching index it has is taken over, as CREATE INDEX
//! does), then its rows are checked against the partition constraint, unless its CHECK
//! constraints and NOT NULLs already prove them (`ddl_attach_proof.rs`). A default partition
//! is checked for rows the new partition would take. Any failure leaves nothing attached:
//! the statement's catalog is discarded.
//!
//! Keel's partitions hold their parent's columns at the same positions (routing moves rows
//! between them unchanged), so a table with the same columns in another order is refused
//! with 0A000 rather than rewritten.
//!
//! DETACH makes a partition a table of its own again; its indexes stop belonging to the
//! parent's. CONCURRENTLY runs as a plain DETACH (keel's readers never block on it for
//! longer than the catalog swap), with PostgreSQL's restrictions: not in a transaction block,
//! not beside a default partition. FINALIZE has no interrupted detach to finish.

use crate::ddl::{DdlOutcome, Interrupt, notice, plain_name};
use crate::ddl_partition::{bound_of, bounds_of, check_default_rows, partitions_of};
use keel_access::{Engine, Transaction};
use keel_catalog::partition::{PartitionBound, PartitionDesc, check_new_partition};
use keel_catalog::{Catalog, Partitioning, TableDef};
use keel_common::{PgError, PgResult, sqlstate};
use keel_parser::partition_cmd::{PartitionAction, PartitionCmd};
use std::sync::Arc;

/// Runs `cmd` on `cat`, the statement's copy of the catalog.
pub(crate) fn partition_cmd(
    cmd: &PartitionCmd,
    engine: &Engine,
    txn: &mut Transaction,
    cat: &mut Catalog,
    interrupt: &Interrupt<'_>,
) -> PgResult<DdlOutcome> {
    let done = |notices| DdlOutcome {
        tag: "ALTER TABLE".into(),
        notices,
    };
    let parent_name = plain_name(&cmd.parent)?;
    let Some(parent) = cat.table_by_name(&parent_name).cloned() else {
        if cmd.if_exists {
            let n = notice(format!(
                "relation \"{parent_name}\" does not exist, skipping"
            ));
            return Ok(done(vec![n]));
        }
        return Err(undefined_table(&parent_name));
    };
    let name = plain_name(&cmd.partition)?;
    let part = cat
        .table_by_name(&name)
        .cloned()
        .ok_or_else(|| undefined_table(&name))?;
    match &cmd.action {
        PartitionAction::Attach(spec) => attach(&parent, &part, spec, engine, txn, cat, interrupt)?,
        PartitionAction::Detach {
            concurrently,
            finalize,
        } => {
            if *concurrently {
                refuse_concurrent_detach(cat, &parent)?;
            }
            detach(&parent, &part, *finalize, cat)?
        }
    }
    Ok(done(Vec::new()))
}

fn undefined_table(name: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_TABLE,
        format!("relation \"{name}\" does not exist"),
    )
}

fn mismatch(msg: String) -> PgError {
    PgError::new(sqlstate::DATATYPE_MISMATCH, msg)
}

fn attach(
    parent: &Arc<TableDef>,
    part: &Arc<TableDef>,
    spec: &sqlparser::ast::ForValues,
    engine: &Engine,
    txn: &mut Transaction,
    cat: &mut Catalog,
    interrupt: &Interrupt<'_>,
) -> PgResult<()> {
    let Some(key) = parent.partition_key().cloned() else {
        return Err(PgError::new(
            sqlstate::INVALID_OBJECT_DEFINITION,
            format!("table \"{}\" is not partitioned", parent.name),
        ));
    };
    // The bound is read first: PostgreSQL transforms it when the statement is analysed.
    let bound = bound_of(cat, &key, spec)?;
    if part.partition_of().is_some() {
        return Err(PgError::new(
            sqlstate::WRONG_OBJECT_TYPE,
            format!("\"{}\" is already a partition", part.name),
        ));
    }
    if cat.partition_tree(part).iter().any(|t| t.oid == parent.oid) {
        return Err(PgError::new(
            sqlstate::DUPLICATE_TABLE,
            "circular inheritance not allowed",
        )
        .with_detail(format!(
            "\"{}\" is already a child of \"{}\".",
            parent.name, part.name
        )));
    }
    if let Some(c) = (part.columns.iter()).find(|c| parent.column_index(&c.name).is_none()) {
        return Err(mismatch(format!(
            "table \"{}\" contains column \"{}\" not found in parent \"{}\"",
            part.name, c.name, parent.name
        ))
        .with_detail("The new partition may contain only the columns present in parent."));
    }
    let siblings = partitions_of(cat, parent.oid);
    let existing = PartitionDesc::new(&key, &bounds_of(&siblings))?;
    let name_of = |oid: u32| {
        (siblings.iter())
            .find(|t| t.oid == oid)
            .map_or_else(String::new, |t| t.name.clone())
    };
    check_new_partition(&existing, &part.name, &bound, name_of)?;
    check_columns(parent, part)?;
    check_constraints(parent, part)?;
    let mut attached = (**part).clone();
    attached.partition = Some(Box::new(Partitioning {
        key: part.partition_key().cloned(),
        of: Some((parent.oid, bound.canonical())),
    }));
    let attached = Arc::new(attached);
    cat.tables.insert(attached.oid, attached.clone());
    let parent_indexes: Vec<_> = cat.indexes_of(parent.oid).cloned().collect();
    for idx in parent_indexes {
        crate::ddl_partition_tree::index_partition(cat, engine, txn, &idx, part.oid, interrupt)?;
    }
    if !crate::ddl_attach_proof::implied_by_constraints(cat, &attached)? {
        validate_rows(cat, engine, txn, &attached, interrupt)?;
    }
    if let Some(d) = existing.default_partition() {
        check_default_rows(engine, txn, cat, &key, &bound, existing.oids()[d])?;
    }
    Ok(())
}

/// MergeAttributesIntoExisting's checks: every parent column is there with its type, and
/// NOT NULL where the parent's is.
fn check_columns(parent: &TableDef, part: &TableDef) -> PgResult<()> {
    for pc in &parent.columns {
        let Some(i) = part.column_index(&pc.name) else {
            return Err(mismatch(format!(
                "child table is missing column \"{}\"",
                pc.name
            )));
        };
        let c = &part.columns[i];
        if c.ty != pc.ty {
            return Err(mismatch(format!(
                "child table \"{}\" has different type for column \"{}\"",
                part.name, pc.name
            )));
        }
        if pc.not_null && !c.not_null {
            return Err(mismatch(format!(
                "column \"{}\" in child table must be marked NOT NULL",
                pc.name
            )));
        }
    }
    let same_order = (parent.columns.iter().zip(&part.columns)).all(|(a, b)| a.name == b.name);
    if !same_order {
        return Err(PgError::unsupported(
            "attaching a table whose columns are in another order than its parent's",
        ));
    }
    Ok(())
}

/// MergeConstraintsIntoExisting's check: each of the parent's CHECK constraints is the
/// table's too, by name and definition.
fn check_constraints(parent: &TableDef, part: &TableDef) -> PgResult<()> {
    for pc in &parent.checks {
        match part.checks.iter().find(|c| c.name == pc.name) {
            None => {
                return Err(mismatch(format!(
                    "child table is missing constraint \"{}\"",
                    pc.name
                )));
            }
            Some(c) if c.expr != pc.expr => {
                return Err(mismatch(format!(
                    "child table \"{}\" has different definition for check constraint \"{}\"",
                    part.name, pc.name
                )));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Every row of the newly attached `table` (of its leaves, when it is partitioned) meets its
/// partition constraint, at every level up to the root (23514 otherwise).
fn validate_rows(
    cat: &Catalog,
    engine: &Engine,
    txn: &Transaction,
    table: &Arc<TableDef>,
    interrupt: &Interrupt<'_>,
) -> PgResult<()> {
    let Some(check) = keel_planner::partition::partition_check(cat, table)? else {
        return Ok(());
    };
    let mut wanted = vec![false; table.columns.len()];
    for (desc, _) in &check.levels {
        for &c in &desc.key().columns {
            wanted[c] = true;
        }
    }
    let wanted: Arc<[bool]> = wanted.into();
    for leaf in cat.partition_tree(table) {
        if leaf.partition_key().is_some() {
            continue;
        }
        for item in engine.scan_columns(txn, &leaf, Some(wanted.clone())) {
            let (_, row) = item?;
            interrupt.check()?;
            for (desc, at) in &check.levels {
                let key = desc.key();
                let values: Vec<_> = key.columns.iter().map(|&c| row[c].clone()).collect();
                if desc.route(&values, keel_planner::partition::row_hash(key)) != Some(*at) {
                    return Err(PgError::new(
                        sqlstate::CHECK_VIOLATION,
                        format!(
                            "partition constraint of relation \"{}\" is violated by some row",
                            leaf.name
                        ),
                    )
                    .with_table(leaf.name.clone()));
                }
            }
        }
    }
    Ok(())
}

fn detach(
    parent: &Arc<TableDef>,
    part: &Arc<TableDef>,
    finalize: bool,
    cat: &mut Catalog,
) -> PgResult<()> {
    if part.partition_of().map(|(p, _)| *p) != Some(parent.oid) {
        return Err(PgError::new(
            sqlstate::UNDEFINED_TABLE,
            format!(
                "relation \"{}\" is not a partition of relation \"{}\"",
                part.name, parent.name
            ),
        ));
    }
    if finalize {
        return Err(PgError::new(
            sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("cannot complete detaching partition \"{}\"", part.name),
        )
        .with_detail("There's no pending concurrent detach."));
    }
    let mut detached = (**part).clone();
    if let Some(p) = detached.partition.as_deref_mut() {
        p.of = None;
    }
    if detached.partition.as_ref().is_some_and(|p| p.key.is_none()) {
        detached.partition = None;
    }
    cat.tables.insert(detached.oid, Arc::new(detached));
    let linked: Vec<_> = (cat.indexes_of(part.oid))
        .filter(|i| i.parent.is_some())
        .cloned()
        .collect();
    for ix in linked {
        let mut own = (*ix).clone();
        own.parent = None;
        cat.indexes.insert(own.oid, Arc::new(own));
    }
    Ok(())
}

/// DETACH CONCURRENTLY's refusal beside a default partition (PostgreSQL's 55000).
fn refuse_concurrent_detach(cat: &Catalog, parent: &TableDef) -> PgResult<()> {
    if partitions_of(cat, parent.oid)
        .iter()
        .any(|t| matches!(t.partition_of(), Some((_, PartitionBound::Default))))
    {
        return Err(PgError::new(
            sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
            "cannot detach partitions concurrently when a default partition exists",
        ));
    }
    Ok(())
}
