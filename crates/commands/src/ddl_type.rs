//! CREATE TYPE ... AS (composite) and DROP TYPE.
//!
//! A composite type shares two namespaces, as in PostgreSQL, where it is both a pg_type and
//! a pg_class row: a table's name is taken by its row type (`type "t" already exists`), and
//! a composite type's name is taken for relations (`relation "t" already exists`).

use crate::ddl::{notice, plain_name};
use crate::ddl_view::{cascade_notice, still_depended_on};
use keel_analyzer::bind::{fold, types};
use keel_catalog::{Catalog, FieldDef, FunctionDef, TypeDef};
use keel_common::{Oid, PgError, PgResult, sqlstate};
use keel_types::TypeId;
use sqlparser::ast;
use std::sync::Arc;

pub(crate) fn create_type(
    name: &ast::ObjectName,
    representation: &Option<ast::UserDefinedTypeRepresentation>,
    cat: &mut Catalog,
) -> PgResult<String> {
    let attributes = match representation {
        Some(ast::UserDefinedTypeRepresentation::Composite { attributes }) => attributes,
        Some(ast::UserDefinedTypeRepresentation::Enum { .. }) => {
            return Err(PgError::unsupported("enum types"));
        }
        Some(ast::UserDefinedTypeRepresentation::Range { .. }) => {
            return Err(PgError::unsupported("range types"));
        }
        _ => return Err(PgError::unsupported("base types and shell types")),
    };
    let name = plain_name(name)?;
    if cat.type_name_taken(&name, 0) || cat.name_taken(&name) {
        return Err(PgError::new(
            sqlstate::DUPLICATE_OBJECT,
            format!("type \"{name}\" already exists"),
        ));
    }
    let mut fields: Vec<FieldDef> = Vec::with_capacity(attributes.len());
    for a in attributes {
        let fname = fold(&a.name);
        if fields.iter().any(|f| f.name == fname) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_COLUMN,
                format!("column \"{fname}\" specified more than once"),
            ));
        }
        if a.collation.is_some() {
            return Err(PgError::unsupported("COLLATE in a composite type"));
        }
        let ty = types::type_from_name_in(&a.data_type.to_string(), cat)?;
        fields.push(FieldDef { name: fname, ty });
    }
    if fields.len() > crate::ddl::MAX_TABLE_COLUMNS {
        return Err(PgError::new(
            sqlstate::TOO_MANY_COLUMNS,
            format!(
                "tables can have at most {} columns",
                crate::ddl::MAX_TABLE_COLUMNS
            ),
        ));
    }
    let oid = cat.new_oid();
    cat.types
        .insert(oid, Arc::new(TypeDef { oid, name, fields }));
    Ok("CREATE TYPE".into())
}

/// DROP TYPE [IF EXISTS] name, ... [CASCADE]. A table's row type is dropped with its table
/// (2BP01, as PostgreSQL's "table requires it" error).
pub(crate) fn drop_types(
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
    cat: &mut Catalog,
    notices: &mut Vec<PgError>,
) -> PgResult<String> {
    let mut targets = Vec::new();
    for n in names {
        let name = plain_name(n)?;
        if let Some(t) = cat.types.by_name(&name) {
            targets.push(t.oid);
        } else if cat.tables.by_name(&name).is_some() {
            return Err(PgError::new(
                sqlstate::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("cannot drop type {name} because table {name} requires it"),
            )
            .with_hint(format!("You can drop table {name} instead.")));
        } else if if_exists {
            notices.push(notice(format!("type \"{name}\" does not exist, skipping")));
        } else {
            return Err(PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("type \"{name}\" does not exist"),
            ));
        }
    }
    let Some(&first) = targets.first() else {
        return Ok("DROP TYPE".into());
    };
    drop_type_users(
        cat,
        &targets,
        &format!("type {}", cat.type_name(TypeId::Composite(first))),
        cascade,
        notices,
    )?;
    for oid in targets {
        cat.types.remove(&oid);
    }
    Ok("DROP TYPE".into())
}

/// Whether function `f` mentions one of the composite types `oids` (a table's row type or
/// a `CREATE TYPE` type) in its arguments or result.
fn uses_type(f: &FunctionDef, oids: &[Oid]) -> bool {
    let named = |t: TypeId| matches!(t, TypeId::Composite(o) if oids.contains(&o));
    f.row_type.is_some_and(|t| oids.contains(&t))
        || named(f.ret.id)
        || f.args.iter().any(|a| named(a.ty.id))
}

/// DROP of the composite types `oids` (tables' row types or `CREATE TYPE` types): the
/// columns of other tables and the functions that use one depend on it. Without CASCADE
/// that is PostgreSQL's 2BP01 naming each; with it the functions are dropped too, with a
/// notice. Dropping a column is not built, so a column user with CASCADE is 0A000.
pub(crate) fn drop_type_users(
    cat: &mut Catalog,
    oids: &[Oid],
    what: &str,
    cascade: bool,
    notices: &mut Vec<PgError>,
) -> PgResult<()> {
    // (dependent's oid, what it is, the type it uses): PostgreSQL lists them in the order
    // they were made.
    let mut columns = Vec::new();
    let uses =
        |c: &keel_catalog::ColumnDef| matches!(c.ty.id, TypeId::Composite(o) if oids.contains(&o));
    for t in cat.tables.values().filter(|t| !oids.contains(&t.oid)) {
        for c in t.columns.iter().filter(|c| uses(c)) {
            let what = format!("column {} of table {}", c.name, t.name);
            columns.push((t.oid, what, cat.type_name(c.ty.id)));
        }
    }
    for t in cat.types.values().filter(|t| !oids.contains(&t.oid)) {
        for f in t
            .fields
            .iter()
            .filter(|f| matches!(f.ty.id, TypeId::Composite(o) if oids.contains(&o)))
        {
            let what = format!("column {} of composite type {}", f.name, t.name);
            columns.push((t.oid, what, cat.type_name(f.ty.id)));
        }
    }
    let mut functions: Vec<Arc<FunctionDef>> = (cat.functions.values())
        .filter(|f| uses_type(f, oids))
        .cloned()
        .collect();
    functions.sort_by_key(|f| f.oid);
    if columns.is_empty() && functions.is_empty() {
        return Ok(());
    }
    let function_type = |f: &FunctionDef| {
        let named = f.row_type.map(TypeId::Composite).into_iter();
        let mut all = named
            .chain(std::iter::once(f.ret.id))
            .chain(f.args.iter().map(|a| a.ty.id));
        all.find(|t| matches!(t, TypeId::Composite(o) if oids.contains(o)))
            .map_or_else(String::new, |t| cat.type_name(t))
    };
    let shown = |f: &FunctionDef| {
        let args: Vec<String> = (f.input_args())
            .map(|a| types::type_display_in(a.ty, cat))
            .collect();
        format!("function {}({})", f.proname, args.join(","))
    };
    if !cascade {
        let mut detail: Vec<(Oid, String)> = (columns.iter())
            .map(|(oid, c, t)| (*oid, format!("{c} depends on type {t}")))
            .collect();
        detail.extend((functions.iter()).map(|f| {
            (
                f.oid,
                format!("{} depends on type {}", shown(f), function_type(f)),
            )
        }));
        detail.sort_by_key(|(oid, _)| *oid);
        return Err(still_depended_on(
            what,
            detail.into_iter().map(|(_, d)| d).collect(),
        ));
    }
    if !columns.is_empty() {
        return Err(PgError::unsupported(
            "DROP ... CASCADE of a type that a column uses (dropping columns)",
        ));
    }
    notices.push(cascade_notice(functions.iter().map(|f| shown(f)).collect()));
    for f in functions {
        cat.functions.remove(&f.oid);
    }
    Ok(())
}
