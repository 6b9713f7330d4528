//! CREATE [OR REPLACE] VIEW, DROP VIEW, and the dependencies of views that DROP TABLE and
//! DROP VIEW respect.
//!
//! CREATE VIEW binds the query once against the transaction's catalog (the analyzer already
//! did, with the statement's text, to report errors at their position) to fix the view's
//! columns and the relations it reads; the query itself is stored as text
//! (keel_catalog::ViewDef). OR REPLACE keeps the view's oid and triggers and, as
//! PostgreSQL's checkViewTupleDesc, only lets the column list grow at its end.
//!
//! Dependencies: a view depends on each table and view its FROM clauses name. Dropping one
//! of those without CASCADE fails with 2BP01 listing every object that would go (views,
//! recursively, and foreign keys that reference a dropped table); with CASCADE they go too,
//! with PostgreSQL's NOTICE. The objects are listed in PostgreSQL's order: its
//! findDependentObjects visits the dependents of an object newest first, depth first, and
//! reports them in the reverse of the order it finished them.

use crate::ddl::{notice, plain_name};
use keel_analyzer::bind::view::bind_view;
use keel_catalog::{Catalog, ColumnDef, ViewDef};
use keel_common::{Oid, PgError, PgResult, sqlstate};
use sqlparser::ast;
use std::collections::BTreeSet;
use std::sync::Arc;

pub(crate) fn create_view(cv: &ast::CreateView, cat: &mut Catalog) -> PgResult<String> {
    if cv.materialized {
        return Err(PgError::unsupported("materialized views"));
    }
    if cv.temporary {
        return Err(PgError::unsupported("temporary views"));
    }
    if !matches!(cv.options, ast::CreateTableOptions::None) {
        return Err(PgError::unsupported("view options (WITH (...))"));
    }
    let name = plain_name(&cv.name)?;
    let (columns, depends_on) = bind_view(cat, cv, "", 0)?;
    let existing = cat.views.by_name(&name).cloned();
    if existing.is_none() && cat.name_taken(&name) {
        if cv.or_replace {
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("\"{name}\" is not a view"),
            ));
        }
        return Err(PgError::new(
            sqlstate::DUPLICATE_TABLE,
            format!("relation \"{name}\" already exists"),
        ));
    }
    let (oid, triggers) = match &existing {
        Some(_) if !cv.or_replace => {
            return Err(PgError::new(
                sqlstate::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists"),
            ));
        }
        Some(old) => {
            replaceable(old, &columns)?;
            (old.oid, old.triggers.clone())
        }
        None => (cat.new_type_oid(), Vec::new()),
    };
    if depends_on.contains(&oid) {
        return Err(PgError::new(
            sqlstate::INVALID_OBJECT_DEFINITION,
            format!("infinite recursion detected in rules for relation \"{name}\""),
        ));
    }
    let view = ViewDef {
        oid,
        name,
        columns,
        query: cv.query.to_string(),
        depends_on,
        triggers,
    };
    cat.views.insert(oid, Arc::new(view));
    Ok("CREATE VIEW".into())
}

/// OR REPLACE may add columns at the end, nothing else (42P16).
fn replaceable(old: &ViewDef, new: &[ColumnDef]) -> PgResult<()> {
    let invalid = |m: String| PgError::new(sqlstate::INVALID_TABLE_DEFINITION, m);
    if new.len() < old.columns.len() {
        return Err(invalid("cannot drop columns from view".into()));
    }
    for (o, n) in old.columns.iter().zip(new) {
        if o.name != n.name {
            return Err(invalid(format!(
                "cannot change name of view column \"{}\" to \"{}\"",
                o.name, n.name
            ))
            .with_hint(
                "Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead.",
            ));
        }
        if o.ty != n.ty {
            return Err(invalid(format!(
                "cannot change data type of view column \"{}\" from {} to {}",
                o.name,
                keel_analyzer::bind::types::type_display(o.ty),
                keel_analyzer::bind::types::type_display(n.ty)
            )));
        }
    }
    Ok(())
}

/// An object that depends on one being dropped.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Dependent {
    View(Oid),
    /// The foreign key `name` of table `table`, which references a dropped table.
    ForeignKey {
        table: Oid,
        name: String,
    },
}

fn describe_relation(cat: &Catalog, oid: Oid) -> String {
    if let Some(v) = cat.views.get(&oid) {
        return format!("view {}", v.name);
    }
    cat.tables
        .get(&oid)
        .map_or_else(String::new, |t| format!("table {}", t.name))
}

fn describe(cat: &Catalog, d: &Dependent) -> String {
    match d {
        Dependent::View(oid) => describe_relation(cat, *oid),
        Dependent::ForeignKey { table, name } => {
            format!("constraint {name} on {}", describe_relation(cat, *table))
        }
    }
}

/// Everything that depends on `targets` (tables and views being dropped), with what each
/// depends on, in PostgreSQL's report order.
pub(crate) fn dependents(cat: &Catalog, targets: &[Oid]) -> Vec<(Dependent, String)> {
    fn visit(
        cat: &Catalog,
        of: Oid,
        targets: &[Oid],
        seen: &mut BTreeSet<Oid>,
        done: &mut Vec<(Dependent, String)>,
    ) {
        // Newest first: views by oid, a foreign key by its table's.
        let mut direct: Vec<(Oid, Dependent)> = cat
            .views_reading(of)
            .map(|v| (v.oid, Dependent::View(v.oid)))
            .collect();
        for t in cat.tables.values().filter(|t| !targets.contains(&t.oid)) {
            for fk in t.foreign_keys.iter().filter(|f| f.ref_table == of) {
                direct.push((
                    t.oid,
                    Dependent::ForeignKey {
                        table: t.oid,
                        name: fk.name.clone(),
                    },
                ));
            }
        }
        direct.sort_by_key(|(k, _)| std::cmp::Reverse(*k));
        for (_, d) in direct {
            if let Dependent::View(v) = d {
                if targets.contains(&v) || !seen.insert(v) {
                    continue;
                }
                visit(cat, v, targets, seen, done);
            }
            done.push((d, describe_relation(cat, of)));
        }
    }
    let mut seen = BTreeSet::new();
    let mut done = Vec::new();
    for &t in targets.iter().rev() {
        visit(cat, t, targets, &mut seen, &mut done);
    }
    done.reverse();
    done
}

/// Refuses to drop `targets` (described as `what` for the message, e.g. `table t`) while
/// other objects depend on them, unless `cascade`; with it, drops those objects (views, and
/// the foreign keys referencing a dropped table) and says so.
pub(crate) fn drop_dependents(
    cat: &mut Catalog,
    targets: &[Oid],
    what: &str,
    cascade: bool,
    notices: &mut Vec<PgError>,
) -> PgResult<()> {
    let deps = dependents(cat, targets);
    if deps.is_empty() {
        return Ok(());
    }
    if !cascade {
        let detail = deps
            .iter()
            .map(|(d, on)| format!("{} depends on {on}", describe(cat, d)))
            .collect();
        return Err(still_depended_on(what, detail));
    }
    notices.push(cascade_notice(
        deps.iter().map(|(d, _)| describe(cat, d)).collect(),
    ));
    for (d, _) in deps {
        match d {
            Dependent::View(oid) => {
                cat.views.remove(&oid);
            }
            Dependent::ForeignKey { table, name } => {
                if let Some(t) = cat.tables.get(&table).cloned() {
                    let mut nt = (*t).clone();
                    nt.foreign_keys.retain(|f| f.name != name);
                    cat.tables.insert(table, Arc::new(nt));
                }
            }
        }
    }
    Ok(())
}

/// 2BP01 for dropping `what` (`table t`, `function f(integer)`) while the objects in
/// `detail` (`view v depends on table t`, one a line) depend on it.
pub(crate) fn still_depended_on(what: &str, detail: Vec<String>) -> PgError {
    PgError::new(
        sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
        format!("cannot drop {what} because other objects depend on it"),
    )
    .with_detail(detail.join("\n"))
    .with_hint("Use DROP ... CASCADE to drop the dependent objects too.")
}

/// CASCADE's NOTICE for the dependent objects it drops (`view v`, ...): one named, or a
/// count with each named in the DETAIL.
pub(crate) fn cascade_notice(objects: Vec<String>) -> PgError {
    match objects.as_slice() {
        [one] => notice(format!("drop cascades to {one}")),
        many => notice(format!("drop cascades to {} other objects", many.len())).with_detail(
            many.iter()
                .map(|o| format!("drop cascades to {o}"))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
    }
}

/// DROP VIEW [IF EXISTS] name, ... [CASCADE].
pub(crate) fn drop_views(
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
    cat: &mut Catalog,
    notices: &mut Vec<PgError>,
) -> PgResult<String> {
    let mut targets = Vec::new();
    for n in names {
        let name = plain_name(n)?;
        match cat.views.by_name(&name) {
            Some(v) => targets.push(v.oid),
            None if cat.table_by_name(&name).is_some() => {
                return Err(PgError::new(
                    sqlstate::WRONG_OBJECT_TYPE,
                    format!("\"{name}\" is not a view"),
                )
                .with_hint("Use DROP TABLE to remove a table."));
            }
            None if if_exists => {
                notices.push(notice(format!("view \"{name}\" does not exist, skipping")));
            }
            None => {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_TABLE,
                    format!("view \"{name}\" does not exist"),
                ));
            }
        }
    }
    if let Some(first) = targets.first() {
        let what = describe_relation(cat, *first);
        drop_dependents(cat, &targets, &what, cascade, notices)?;
    }
    for oid in targets {
        cat.views.remove(&oid);
    }
    Ok("DROP VIEW".into())
}
