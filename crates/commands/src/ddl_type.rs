//! CREATE TYPE ... AS (composite) and DROP TYPE.
//!
//! A composite type shares two namespaces, as in PostgreSQL, where it is both a pg_type and
//! a pg_class row: a table's name is taken by its row type (`type "t" already exists`), and
//! a composite type's name is taken for relations (`relation "t" already exists`).

use crate::ddl::{notice, plain_name};
use crate::ddl_view::{cascade_notice, still_depended_on};
use keel_access::{Engine, Transaction};
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
    let oid = cat.new_type_oid();
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
    storage: &Storage<'_>,
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
        storage,
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
    let named = |t: TypeId| mentions(t, oids);
    f.row_type.is_some_and(|t| oids.contains(&t))
        || named(f.ret.id)
        || f.args.iter().any(|a| named(a.ty.id))
}

/// Whether `t` is one of the composite types `oids` or the array type of one.
fn mentions(t: TypeId, oids: &[Oid]) -> bool {
    matches!(t, TypeId::Composite(o) | TypeId::CompositeArray(o) if oids.contains(&o))
}

/// Where a DROP ... CASCADE that drops columns rewrites their tables.
pub(crate) struct Storage<'a> {
    pub engine: &'a Engine,
    pub txn: &'a Transaction,
}

/// One object that uses a type being dropped.
enum TypeUser {
    /// Column `name` of table `table`.
    Column {
        table: Oid,
        name: String,
    },
    /// A field of another composite type.
    Field,
    Function(Oid),
}

/// DROP of the composite types `oids` (tables' row types or `CREATE TYPE` types): the
/// columns of other tables, the fields of other composite types and the functions that use
/// one (or its array type) depend on it. Without CASCADE that is PostgreSQL's 2BP01 naming
/// each; with it the columns (their tables rewritten) and functions are dropped too, with a
/// notice. Dropping a field of another composite type is not built (0A000).
pub(crate) fn drop_type_users(
    cat: &mut Catalog,
    oids: &[Oid],
    what: &str,
    cascade: bool,
    storage: &Storage<'_>,
    notices: &mut Vec<PgError>,
) -> PgResult<()> {
    // (order, what it is, the type it uses, the user). PostgreSQL lists the users of the
    // array type first (it depends on the type), then the rest in the order they were made.
    let mut users: Vec<((bool, Oid), String, String, TypeUser)> = Vec::new();
    let order = |t: TypeId, oid: Oid| (!matches!(t, TypeId::CompositeArray(_)), oid);
    for t in cat.tables.values().filter(|t| !oids.contains(&t.oid)) {
        for c in t.columns.iter().filter(|c| mentions(c.ty.id, oids)) {
            let what = format!("column {} of table {}", c.name, t.name);
            let user = TypeUser::Column {
                table: t.oid,
                name: c.name.clone(),
            };
            users.push((order(c.ty.id, t.oid), what, cat.type_name(c.ty.id), user));
        }
    }
    for t in cat.types.values().filter(|t| !oids.contains(&t.oid)) {
        for f in t.fields.iter().filter(|f| mentions(f.ty.id, oids)) {
            let what = format!("column {} of composite type {}", f.name, t.name);
            let ty = cat.type_name(f.ty.id);
            users.push((order(f.ty.id, t.oid), what, ty, TypeUser::Field));
        }
    }
    let function_type = |f: &FunctionDef| {
        let named = f.row_type.map(TypeId::Composite).into_iter();
        let mut all = named
            .chain(std::iter::once(f.ret.id))
            .chain(f.args.iter().map(|a| a.ty.id));
        all.find(|t| mentions(*t, oids))
            .unwrap_or(TypeId::Composite(0))
    };
    for f in cat.functions.values().filter(|f| uses_type(f, oids)) {
        let args: Vec<String> = (f.input_args())
            .map(|a| types::type_display_in(a.ty, cat))
            .collect();
        let what = format!("function {}({})", f.proname, args.join(","));
        let ty = function_type(f);
        users.push((
            order(ty, f.oid),
            what,
            cat.type_name(ty),
            TypeUser::Function(f.oid),
        ));
    }
    if users.is_empty() {
        return Ok(());
    }
    users.sort_by_key(|u| u.0);
    if !cascade {
        let detail = (users.iter())
            .map(|(_, what, ty, _)| format!("{what} depends on type {ty}"))
            .collect();
        return Err(still_depended_on(what, detail));
    }
    if users.iter().any(|u| matches!(u.3, TypeUser::Field)) {
        return Err(PgError::unsupported(
            "DROP ... CASCADE of a type that another composite type's field uses",
        ));
    }
    notices.push(cascade_notice(users.iter().map(|u| u.1.clone()).collect()));
    for (_, _, _, user) in users {
        match user {
            TypeUser::Column { table, name } => {
                let Some(col) = cat.tables.get(&table).and_then(|t| t.column_index(&name)) else {
                    continue;
                };
                let mut quiet = Vec::new();
                let how = crate::ddl_drop_column::How {
                    cascade: true,
                    notices: &mut quiet,
                };
                let none = &crate::ddl::Interrupt::NONE;
                crate::ddl_drop_column::drop_column(
                    cat,
                    table,
                    col,
                    how,
                    storage.engine,
                    storage.txn,
                    none,
                )?;
            }
            TypeUser::Function(oid) => {
                cat.functions.remove(&oid);
            }
            TypeUser::Field => {}
        }
    }
    Ok(())
}
