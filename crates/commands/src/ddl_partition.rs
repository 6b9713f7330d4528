//! Declarative partitioning DDL: `CREATE TABLE ... PARTITION BY` (the key) and `CREATE TABLE
//! ... PARTITION OF parent FOR VALUES ...` (a partition: its own heap and indexes, the
//! parent's columns, CHECK constraints and unique indexes, its bound checked against its
//! siblings'). The bound logic itself is keel_catalog::partition.
//!
//! A partitioned table keeps an (always empty) heap file and its indexes' files, so every
//! path that opens a table's relation keeps working; rows never go there: writes route to a
//! partition, reads expand into the partitions (keel-planner's `partition.rs`). Its unique
//! indexes are the constraints each partition repeats, and what ON CONFLICT infers from.

use crate::ddl::{Interrupt, name_free, plain_name};
use keel_access::{Engine, Transaction};
use keel_analyzer::bind::{Binder, Scope, fold};
use keel_catalog::partition::{
    PartitionBound, PartitionDesc, PartitionKey, PartitionStrategy, RangeValue, check_new_partition,
};
use keel_catalog::{Catalog, ColumnDef, Partitioning, Persistence, TableDef};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::CastContext;
use keel_types::{Datum, SqlType};
use sqlparser::ast;
use std::sync::Arc;

/// The key `PARTITION BY strategy (columns)` declares over `columns`, if the statement has
/// one.
pub(crate) fn partition_key(
    ct: &ast::CreateTable,
    columns: &[ColumnDef],
) -> PgResult<Option<PartitionKey>> {
    let Some(by) = ct.partition_by.as_deref() else {
        return Ok(None);
    };
    let ast::Expr::Function(f) = by else {
        return Err(PgError::unsupported(format!("PARTITION BY {by}")));
    };
    let strategy = match f.name.to_string().to_ascii_lowercase().as_str() {
        "hash" => PartitionStrategy::Hash,
        "list" => PartitionStrategy::List,
        "range" => PartitionStrategy::Range,
        other => {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("unrecognized partitioning strategy \"{other}\""),
            ));
        }
    };
    let ast::FunctionArguments::List(list) = &f.args else {
        return Err(PgError::unsupported(format!("PARTITION BY {by}")));
    };
    let (mut cols, mut types) = (Vec::new(), Vec::new());
    for a in &list.args {
        let name = match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Identifier(id))) => {
                fold(id)
            }
            _ => return Err(PgError::unsupported("partition keys that are expressions")),
        };
        let Some(i) = columns.iter().position(|c| c.name == name) else {
            return Err(PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!("column \"{name}\" named in partition key does not exist"),
            ));
        };
        let ty = columns[i].ty.id;
        if strategy == PartitionStrategy::Hash && !keel_types::hash::is_hashable(ty) {
            return Err(PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!(
                    "data type {} has no default operator class for access method \"hash\"",
                    ty.name()
                ),
            )
            .with_hint(
                "You must specify a hash operator class or define a default hash operator class for the data type.",
            ));
        }
        cols.push(i);
        types.push(ty);
    }
    PartitionKey::new(strategy, cols, types).map(Some)
}

/// A unique constraint of a partitioned table must contain the whole key (each partition
/// enforces it alone): PostgreSQL's 0A000 otherwise.
pub(crate) fn check_unique_covers_key(
    key: &PartitionKey,
    cols: &[usize],
    primary: bool,
    table: &str,
    columns: &[ColumnDef],
) -> PgResult<()> {
    if let Some(&missing) = key.columns.iter().find(|c| !cols.contains(c)) {
        let kind = if primary { "PRIMARY KEY" } else { "UNIQUE" };
        return Err(PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "unique constraint on partitioned table must include all partitioning columns",
        )
        .with_detail(format!(
            "{kind} constraint on table \"{table}\" lacks column \"{}\" which is part of the partition key.",
            columns[missing].name
        )));
    }
    Ok(())
}

/// `oid` and, when it is partitioned, every partition below it (parents first).
pub(crate) fn with_partitions(cat: &Catalog, oid: u32, out: &mut Vec<u32>) {
    if let Some(t) = cat.tables.get(&oid) {
        out.extend(cat.partition_tree(t).iter().map(|t| t.oid));
    }
}

/// The partitions of `parent`.
pub(crate) fn partitions_of(cat: &Catalog, parent: u32) -> Vec<Arc<TableDef>> {
    cat.tables.owned_by(parent).cloned().collect()
}

pub(crate) fn bounds_of(parts: &[Arc<TableDef>]) -> Vec<(u32, PartitionBound)> {
    parts
        .iter()
        .filter_map(|t| t.partition_of().map(|(_, b)| (t.oid, b.clone())))
        .collect()
}

/// A bound value: a constant expression coerced to the key column's type.
fn bound_value(cat: &Catalog, e: &ast::Expr, ty: SqlType) -> PgResult<Datum> {
    let bound =
        Binder::new(cat, &[], "", 0).expr_as(e, ty, &Scope::default(), CastContext::Assignment)?;
    match bound {
        keel_analyzer::expr::Expr::Const(d, _) => Ok(d),
        _ => Err(PgError::unsupported(
            "partition bound expressions other than constants",
        )),
    }
}

pub(crate) fn bound_of(
    cat: &Catalog,
    key: &PartitionKey,
    spec: &ast::ForValues,
) -> PgResult<PartitionBound> {
    let ty = |i: usize| SqlType::new(key.types[i]);
    let wrong = |what: &str| {
        PgError::new(
            sqlstate::INVALID_TABLE_DEFINITION,
            format!("invalid bound specification for a {what} partition"),
        )
    };
    Ok(match spec {
        ast::ForValues::Default => PartitionBound::Default,
        ast::ForValues::With { modulus, remainder } => {
            if key.strategy != PartitionStrategy::Hash {
                return Err(wrong(strategy_name(key.strategy)));
            }
            let (modulus, remainder) = (
                u32::try_from(*modulus).unwrap_or(u32::MAX),
                u32::try_from(*remainder).unwrap_or(u32::MAX),
            );
            PartitionBound::Hash { modulus, remainder }
        }
        ast::ForValues::In(values) => {
            if key.strategy != PartitionStrategy::List {
                return Err(wrong(strategy_name(key.strategy)));
            }
            let mut out = Vec::with_capacity(values.len());
            for v in values {
                out.push(bound_value(cat, v, ty(0))?);
            }
            PartitionBound::List { values: out }
        }
        ast::ForValues::From { from, to } => {
            if key.strategy != PartitionStrategy::Range {
                return Err(wrong(strategy_name(key.strategy)));
            }
            let side = |vals: &[ast::PartitionBoundValue], which: &str| -> PgResult<_> {
                if vals.len() != key.len() {
                    return Err(PgError::new(
                        sqlstate::INVALID_TABLE_DEFINITION,
                        format!(
                            "{which} bound must have the same number of columns as the partition key"
                        ),
                    ));
                }
                vals.iter()
                    .enumerate()
                    .map(|(i, v)| {
                        Ok(match v {
                            ast::PartitionBoundValue::MinValue => RangeValue::MinValue,
                            ast::PartitionBoundValue::MaxValue => RangeValue::MaxValue,
                            ast::PartitionBoundValue::Expr(e) => {
                                RangeValue::Value(bound_value(cat, e, ty(i))?)
                            }
                        })
                    })
                    .collect::<PgResult<Vec<_>>>()
            };
            PartitionBound::Range {
                lower: side(from, "FROM")?,
                upper: side(to, "TO")?,
            }
        }
    })
}

fn strategy_name(s: PartitionStrategy) -> &'static str {
    match s {
        PartitionStrategy::Hash => "hash",
        PartitionStrategy::List => "list",
        PartitionStrategy::Range => "range",
    }
}

/// `CREATE TABLE name PARTITION OF parent FOR VALUES ...`.
pub(crate) fn create_partition(
    ct: &ast::CreateTable,
    engine: &Engine,
    txn: &mut Transaction,
    cat: &mut Catalog,
    notices: &mut Vec<PgError>,
) -> PgResult<String> {
    let name = plain_name(&ct.name)?;
    let parent_name = plain_name(ct.partition_of.as_ref().expect("PARTITION OF"))?;
    let parent = cat.table(&parent_name)?.clone();
    let Some(key) = parent.partition_key().cloned() else {
        return Err(PgError::new(
            sqlstate::INVALID_OBJECT_DEFINITION,
            format!("\"{parent_name}\" is not partitioned"),
        ));
    };
    if !ct.columns.is_empty() || !ct.constraints.is_empty() {
        return Err(PgError::unsupported(
            "column definitions and constraints in CREATE TABLE ... PARTITION OF",
        ));
    }
    if !name_free(cat, &name, ct.if_not_exists, notices)? {
        return Ok("CREATE TABLE".into());
    }
    let spec = ct
        .for_values
        .as_ref()
        .ok_or_else(|| PgError::new(sqlstate::SYNTAX_ERROR, "syntax error: FOR VALUES expected"))?;
    let bound = bound_of(cat, &key, spec)?;
    let siblings = partitions_of(cat, parent.oid);
    let existing = PartitionDesc::new(&key, &bounds_of(&siblings))?;
    let name_of = |oid: u32| {
        siblings
            .iter()
            .find(|t| t.oid == oid)
            .map_or_else(String::new, |t| t.name.clone())
    };
    check_new_partition(&existing, &name, &bound, name_of)?;
    if let Some(d) = existing.default_partition() {
        check_default_rows(engine, txn, cat, &key, &bound, existing.oids()[d])?;
    }
    let sub_key = partition_key(ct, &parent.columns)?;
    let oid = cat.new_type_oid();
    let relfile = cat.new_oid();
    engine.create_relfile(txn, relfile, ct.unlogged)?;
    let table = TableDef {
        oid,
        name: name.clone(),
        columns: parent.columns.clone(),
        relfile,
        persistence: if ct.unlogged {
            Persistence::Unlogged
        } else {
            Persistence::Permanent
        },
        fillfactor: parent.fillfactor,
        foreign_keys: vec![],
        checks: parent.checks.clone(),
        identity_always: parent.identity_always.clone(),
        triggers: Vec::new(),
        partition: Some(Box::new(Partitioning {
            key: sub_key,
            of: Some((parent.oid, bound.canonical())),
        })),
    };
    cat.tables.insert(oid, Arc::new(table));
    let parent_indexes: Vec<_> = cat.indexes_of(parent.oid).cloned().collect();
    let none = &Interrupt::NONE;
    for idx in parent_indexes {
        crate::ddl_partition_tree::index_partition(cat, engine, txn, &idx, oid, none)?;
    }
    Ok("CREATE TABLE".into())
}

/// A new partition must not take rows the default partition already holds (23514).
pub(crate) fn check_default_rows(
    engine: &Engine,
    txn: &Transaction,
    cat: &Catalog,
    key: &PartitionKey,
    bound: &PartitionBound,
    default: u32,
) -> PgResult<()> {
    let d = cat.table_of(default)?;
    if d.partition_key().is_some() {
        return Err(PgError::unsupported(
            "a new partition beside a partitioned default partition",
        ));
    }
    let only_new = PartitionDesc::new(key, &[(0, bound.clone())])?;
    for item in engine.scan(txn, &d) {
        let (_, row) = item?;
        let values: Vec<Datum> = key.columns.iter().map(|&c| row[c].clone()).collect();
        let hash = |v: &[Datum]| keel_types::hash::partition_hash(v, &key.types).unwrap_or(0);
        if only_new.route(&values, hash).is_some() {
            return Err(keel_catalog::partition::default_partition_violation(
                &d.name,
            ));
        }
    }
    Ok(())
}
