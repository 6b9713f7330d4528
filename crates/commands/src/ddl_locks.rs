//! The relation locks a DDL statement takes before it runs, as PostgreSQL takes them:
//! TRUNCATE, DROP TABLE, DROP VIEW, DROP INDEX (on the index's table) and ALTER TABLE take ACCESS
//! EXCLUSIVE; CREATE INDEX takes SHARE, CONCURRENTLY SHARE UPDATE EXCLUSIVE. A foreign key
//! added by CREATE TABLE or ALTER TABLE takes SHARE ROW EXCLUSIVE on the table it refers to.
//!
//! Names are resolved in the catalog as it is when the statement starts; one that does not
//! resolve is left for the statement itself to report. Locks are held until the transaction
//! ends, so the statement then reads a catalog no other transaction changes under it.

use crate::ddl::plain_name;
use keel_access::LockMode;
use keel_catalog::Catalog;
use sqlparser::ast;

/// (table oid, table name, mode) for each lock `stmt` takes.
pub fn ddl_locks(stmt: &ast::Statement, cat: &Catalog) -> Vec<(u32, String, LockMode)> {
    let mut out = Vec::new();
    // The parent a new partition joins: locked alone, not with its other partitions.
    let mut out_parent = Vec::new();
    // A partition tree is locked as a whole: reads and writes through a partitioned table
    // lock only that table (not each partition), so DDL on any member also locks the
    // tables above it, and DDL on a partitioned table every partition below it.
    let mut table = |n: &ast::ObjectName, mode: LockMode| {
        if let Ok(name) = plain_name(n) {
            if let Some(t) = cat.table_by_name(&name) {
                let mut up = t.partition_of().map(|(p, _)| *p);
                while let Some(p) = up.and_then(|p| cat.tables.get(&p)) {
                    out.push((p.oid, p.name.clone(), mode));
                    up = p.partition_of().map(|(p, _)| *p);
                }
                out.push((t.oid, t.name.clone(), mode));
                let mut todo: Vec<u32> = vec![t.oid];
                while let Some(o) = todo.pop() {
                    for c in cat.tables.owned_by(o) {
                        out.push((c.oid, c.name.clone(), mode));
                        todo.push(c.oid);
                    }
                }
            } else if let Some(v) = cat.views.by_name(&name) {
                out.push((v.oid, v.name.clone(), mode));
            }
        }
    };
    match stmt {
        ast::Statement::Truncate(t) => {
            for target in &t.table_names {
                table(&target.name, LockMode::AccessExclusive);
            }
        }
        ast::Statement::Drop {
            object_type: ast::ObjectType::Table | ast::ObjectType::View,
            names,
            ..
        } => {
            for n in names {
                table(n, LockMode::AccessExclusive);
            }
        }
        ast::Statement::Drop {
            object_type: ast::ObjectType::Index,
            names,
            ..
        } => {
            for n in names {
                if let Ok(name) = plain_name(n)
                    && let Some(i) = cat.indexes.by_name(&name)
                    && let Some(t) = cat.tables.get(&i.table)
                {
                    out.push((t.oid, t.name.clone(), LockMode::AccessExclusive));
                }
            }
        }
        // As PostgreSQL: CREATE TRIGGER blocks writes to the table, DROP TRIGGER everything.
        ast::Statement::CreateTrigger(ct) => table(&ct.table_name, LockMode::ShareRowExclusive),
        ast::Statement::DropTrigger(dt) => {
            if let Some(t) = &dt.table_name {
                table(t, LockMode::AccessExclusive);
            }
        }
        ast::Statement::AlterTable(at) => {
            table(&at.name, LockMode::AccessExclusive);
            for op in &at.operations {
                match op {
                    ast::AlterTableOperation::AddConstraint {
                        constraint: ast::TableConstraint::ForeignKey(fk),
                        ..
                    } => table(&fk.foreign_table, LockMode::ShareRowExclusive),
                    ast::AlterTableOperation::AddColumn { column_def, .. } => {
                        for fk in column_fks(column_def) {
                            table(fk, LockMode::ShareRowExclusive);
                        }
                    }
                    _ => {}
                }
            }
        }
        ast::Statement::CreateTable(ct) => {
            // A new partition changes what its parent's readers and writers see.
            if let Some(p) = (ct.partition_of.as_ref())
                .and_then(|n| plain_name(n).ok())
                .and_then(|n| cat.table_by_name(&n))
            {
                out_parent.push((p.oid, p.name.clone(), LockMode::AccessExclusive));
            }
            for c in &ct.constraints {
                if let ast::TableConstraint::ForeignKey(fk) = c {
                    table(&fk.foreign_table, LockMode::ShareRowExclusive);
                }
            }
            for col in &ct.columns {
                for fk in column_fks(col) {
                    table(fk, LockMode::ShareRowExclusive);
                }
            }
        }
        ast::Statement::CreateIndex(ci) => table(
            &ci.table_name,
            if ci.concurrently {
                LockMode::ShareUpdateExclusive
            } else {
                LockMode::Share
            },
        ),
        _ => {}
    }
    out.extend(out_parent);
    out
}

/// The tables a column's REFERENCES clauses name.
fn column_fks(col: &ast::ColumnDef) -> impl Iterator<Item = &ast::ObjectName> {
    col.options.iter().filter_map(|o| match &o.option {
        ast::ColumnOption::ForeignKey(fk) => Some(&fk.foreign_table),
        _ => None,
    })
}

/// The locks of ATTACH and DETACH PARTITION: ACCESS EXCLUSIVE on the parent (and the tables
/// above it), on the partition and everything below it, and on the parent's default
/// partition, whose constraint ATTACH changes. PostgreSQL takes only SHARE UPDATE
/// EXCLUSIVE on the parent for ATTACH, because its writers lock each partition they route
/// to; keel's lock only the table they name, so the parent's lock is what keeps a
/// concurrent INSERT from routing a row by the old partition set (into the default
/// partition, say) while ATTACH checks the rows.
pub fn partition_cmd_locks(
    cmd: &keel_parser::partition_cmd::PartitionCmd,
    cat: &Catalog,
) -> Vec<(u32, String, LockMode)> {
    let mode = LockMode::AccessExclusive;
    let mut out = Vec::new();
    let Some(parent) = plain_name(&cmd.parent)
        .ok()
        .and_then(|n| cat.table_by_name(&n))
    else {
        return out;
    };
    let mut up = parent.partition_of().map(|(p, _)| *p);
    while let Some(p) = up.and_then(|p| cat.tables.get(&p)) {
        out.push((p.oid, p.name.clone(), mode));
        up = p.partition_of().map(|(p, _)| *p);
    }
    out.push((parent.oid, parent.name.clone(), mode));
    if let Some(part) = plain_name(&cmd.partition)
        .ok()
        .and_then(|n| cat.table_by_name(&n))
    {
        out.extend(
            cat.partition_tree(part)
                .iter()
                .map(|t| (t.oid, t.name.clone(), mode)),
        );
    }
    let default = cat.tables.owned_by(parent.oid).find(|t| {
        matches!(
            t.partition_of(),
            Some((_, keel_catalog::partition::PartitionBound::Default))
        )
    });
    if let Some(d) = default {
        out.push((d.oid, d.name.clone(), mode));
    }
    out
}
