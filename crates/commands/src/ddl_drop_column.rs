//! ALTER TABLE ... DROP COLUMN: the catalog loses the column and the table is rewritten
//! without it.
//!
//! PostgreSQL keeps a dropped column in every tuple (`attisdropped`) and hides it; keel's
//! rows are positional and every reader takes the table's column list as the row's shape,
//! so the table is rewritten instead: a new heap file holds every visible row without the
//! column, and each remaining index is rebuilt in a new file. The old files go at commit;
//! a rollback removes the new ones. The statement holds the table's ACCESS EXCLUSIVE lock,
//! so no other writer is mid-way; like PostgreSQL's table rewrites it is not MVCC-safe for
//! a transaction whose snapshot is older than the commit (it sees the table empty).
//!
//! What depends on the column goes with it, as PostgreSQL's dependencies have it: indexes
//! and CHECK constraints using it, the table's own foreign keys on it, a sequence owned by
//! it. A foreign key of another table that references it refuses the drop (2BP01). A view
//! of the table, or a column elsewhere of the table's row type, is 0A000: the view keeps
//! its query's text, and stored values of the row type carry their fields.

use crate::ddl::Interrupt;
use keel_access::{Engine, Transaction, Write, WriteState};
use keel_catalog::{Catalog, IndexDef, Persistence, TableDef};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::TypeId;
use std::sync::Arc;

/// DROP COLUMN's CASCADE, and where its notices go.
pub(crate) struct How<'a> {
    pub cascade: bool,
    pub notices: &'a mut Vec<PgError>,
}

/// Drops column `col` of table `oid` (the caller checked that it exists).
pub(crate) fn drop_column(
    cat: &mut Catalog,
    oid: u32,
    col: usize,
    how: How<'_>,
    engine: &Engine,
    txn: &Transaction,
    interrupt: &Interrupt<'_>,
) -> PgResult<()> {
    let table = cat.table_of(oid)?;
    let name = table.columns[col].name.clone();
    refuse_dependents(cat, &table, col, &name)?;

    let mut nt = (*table).clone();
    // Triggers fired by an UPDATE OF the column depend on it (in creation order).
    let mut triggers: Vec<_> = (table.triggers.iter())
        .filter(|t| t.update_columns.contains(&col))
        .collect();
    triggers.sort_by_key(|t| t.oid);
    let shown: Vec<String> = (triggers.iter())
        .map(|t| format!("trigger {} on table {}", t.name, table.name))
        .collect();
    if !shown.is_empty() {
        if !how.cascade {
            let detail = (shown.iter())
                .map(|t| format!("{t} depends on column {name} of table {}", table.name))
                .collect();
            let what = format!("column {name} of table {}", table.name);
            return Err(crate::ddl_view::still_depended_on(&what, detail));
        }
        let gone: Vec<u32> = triggers.iter().map(|t| t.oid).collect();
        nt.triggers.retain(|t| !gone.contains(&t.oid));
        how.notices.push(crate::ddl_view::cascade_notice(shown));
    }
    nt.columns.remove(col);
    let shift = |c: usize| if c > col { c - 1 } else { c };
    nt.checks
        .retain(|c| !crate::ddl_alter::identifiers(&c.expr).contains(&name));
    nt.foreign_keys.retain(|fk| !fk.columns.contains(&col));
    for fk in &mut nt.foreign_keys {
        fk.columns.iter_mut().for_each(|c| *c = shift(*c));
        if fk.ref_table == oid {
            fk.ref_columns.iter_mut().for_each(|c| *c = shift(*c));
        }
    }
    nt.identity_always.retain(|&c| c != col);
    nt.identity_always.iter_mut().for_each(|c| *c = shift(*c));
    for t in &mut nt.triggers {
        t.update_columns.retain(|&c| c != col);
        t.update_columns.iter_mut().for_each(|c| *c = shift(*c));
    }
    let owned: Vec<_> = (cat.sequences.values())
        .filter(|s| s.owned_by.is_some_and(|(o, _)| o == oid))
        .cloned()
        .collect();
    for s in owned {
        let Some((_, c)) = s.owned_by else { continue };
        if c == col {
            cat.sequences.remove(&s.oid);
        } else {
            let mut ns = (*s).clone();
            ns.owned_by = Some((oid, shift(c)));
            cat.sequences.insert(ns.oid, Arc::new(ns));
        }
    }

    // The rewrite: every visible row, without the column, into a new heap file.
    let unlogged = nt.persistence == Persistence::Unlogged;
    nt.relfile = cat.new_oid();
    let old_indexes: Vec<Arc<IndexDef>> = cat.indexes_of(oid).cloned().collect();
    let old_files: Vec<u32> = old_indexes.iter().map(|i| i.relfile).collect();
    engine.ssi_replace_relation(txn, table.relfile, &old_files, Some(nt.relfile))?;
    engine.create_relfile(txn, nt.relfile, unlogged)?;
    engine.drop_relfile_at_commit(txn, table.relfile);
    // The rows go in through a definition no index belongs to: the indexes are built after.
    let mut heap_only = nt.clone();
    heap_only.oid = u32::MAX;
    for item in engine.scan(txn, &table) {
        let (_, mut row) = item?;
        interrupt.check()?;
        if col < row.len() {
            row.remove(col);
        }
        let mut state = WriteState::default();
        match engine.insert(txn, &heap_only, &row, &mut state)? {
            Write::Done(_) => {}
            _ => return Err(PgError::internal("a rewrite's insert did not complete")),
        }
    }
    for i in old_indexes {
        cat.indexes.remove(&i.oid);
        engine.drop_relfile_at_commit(txn, i.relfile);
        if i.columns.contains(&col) {
            continue;
        }
        let mut ni = (*i).clone();
        ni.columns.iter_mut().for_each(|c| *c = shift(*c));
        ni.relfile = cat.new_oid();
        engine.create_relfile(txn, ni.relfile, unlogged)?;
        engine.build_index(txn, &nt, &ni, &|| interrupt.check())?;
        cat.indexes.insert(ni.oid, Arc::new(ni));
    }
    cat.tables.insert(oid, Arc::new(nt));
    Ok(())
}

/// PostgreSQL's refusals of a drop that would break another object.
fn refuse_dependents(cat: &Catalog, table: &TableDef, col: usize, name: &str) -> PgResult<()> {
    let oid = table.oid;
    for t in cat.tables.values().filter(|t| t.oid != oid) {
        if let Some(fk) =
            (t.foreign_keys.iter()).find(|fk| fk.ref_table == oid && fk.ref_columns.contains(&col))
        {
            return Err(PgError::new(
                sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                format!(
                    "cannot drop column {name} of table {} because other objects depend on it",
                    table.name
                ),
            )
            .with_detail(format!(
                "constraint {} on table {} depends on column {name} of table {}",
                fk.name, t.name, table.name
            ))
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        if let Some(c) = (t.columns.iter()).find(
            |c| matches!(c.ty.id, TypeId::Composite(o) | TypeId::CompositeArray(o) if o == oid),
        ) {
            // Stored values of the row type carry their fields; they would keep the column.
            return Err(PgError::unsupported(format!(
                "DROP COLUMN of table \"{}\" whose row type column \"{}.{}\" uses",
                table.name, t.name, c.name
            )));
        }
    }
    if let Some(v) = cat.views.values().find(|v| v.depends_on.contains(&oid)) {
        return Err(PgError::unsupported(format!(
            "DROP COLUMN of a table that view \"{}\" reads",
            v.name
        )));
    }
    Ok(())
}
