//! CREATE TABLE AS (and SELECT INTO, which the front end turns into it): the table whose
//! columns are the query's. This command makes the empty table; the session then inserts the
//! query's rows through an ordinary INSERT plan against the catalog this command left
//! (unless WITH NO DATA), so the rows are written, WAL-logged and locked as any insert's.

use crate::ddl::{MAX_TABLE_COLUMNS, fillfactor, name_free, plain_name};
use keel_access::{Engine, Transaction};
use keel_analyzer::bind::view::bind_create_as;
use keel_catalog::{Catalog, Persistence, TableDef};
use keel_common::{PgError, PgResult, sqlstate};
use sqlparser::ast;
use std::sync::Arc;

pub(crate) fn create_table_as(
    ct: &ast::CreateTable,
    engine: &Engine,
    txn: &mut Transaction,
    cat: &mut Catalog,
    notices: &mut Vec<PgError>,
) -> PgResult<String> {
    if ct.like.is_some()
        || ct.partition_by.is_some()
        || ct.inherits.is_some()
        || !ct.constraints.is_empty()
    {
        return Err(PgError::unsupported(
            "CREATE TABLE AS with LIKE, PARTITION BY, INHERITS or constraints",
        ));
    }
    let name = plain_name(&ct.name)?;
    if !name_free(cat, &name, ct.if_not_exists, notices)? {
        return Ok("CREATE TABLE AS".into());
    }
    let (columns, _) = bind_create_as(cat, ct, "", 0)?;
    if columns.len() > MAX_TABLE_COLUMNS {
        return Err(PgError::new(
            sqlstate::TOO_MANY_COLUMNS,
            format!("tables can have at most {MAX_TABLE_COLUMNS} columns"),
        ));
    }
    let fillfactor = fillfactor(ct)?;
    let oid = cat.new_type_oid();
    let relfile = cat.new_oid();
    engine.create_relfile(txn, relfile, ct.unlogged)?;
    let table = TableDef {
        oid,
        name,
        columns,
        relfile,
        persistence: if ct.unlogged {
            Persistence::Unlogged
        } else {
            Persistence::Permanent
        },
        fillfactor,
        foreign_keys: vec![],
        checks: vec![],
        identity_always: vec![],
        triggers: Vec::new(),
        partition: None,
    };
    cat.tables.insert(oid, Arc::new(table));
    Ok("CREATE TABLE AS".into())
}
