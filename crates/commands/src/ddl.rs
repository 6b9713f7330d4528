//! DDL: CREATE/DROP TABLE, CREATE INDEX (`ddl_index`), ALTER TABLE ADD constraint/column,
//! TRUNCATE.
//!
//! Every command clones the transaction's catalog, changes the clone and stores it as the
//! transaction's pending catalog; files are created through the engine (removed again if the
//! transaction rolls back) and old files are dropped at commit. So DDL is transactional.

use crate::ddl_alter::PendingCheck;
use crate::ddl_index::{add_index, create_index, index_col_name};
use keel_access::{Engine, Transaction};
use keel_analyzer::bind::{fold, object_name, types};
use keel_catalog::{
    Catalog, ColumnDef, FkAction, ForeignKeyDef, IndexDef, Persistence, SequenceDef, TableDef,
};
use keel_common::{PgError, PgResult, Severity, sqlstate};
use sqlparser::ast;
use std::sync::Arc;

/// A foreign key declared in CREATE TABLE: (name, columns, referenced table, referenced columns).
type PendingFk = (
    Option<String>,
    Vec<usize>,
    ast::ObjectName,
    Vec<String>,
    (FkAction, FkAction),
);

pub struct DdlOutcome {
    pub tag: String,
    pub notices: Vec<PgError>,
}

/// Whether `stmt` is a TRUNCATE ... RESTART IDENTITY.
pub fn restarts_identity(stmt: &ast::Statement) -> bool {
    matches!(stmt, ast::Statement::Truncate(t)
        if matches!(t.identity, Some(ast::TruncateIdentityOption::Restart)))
}

pub(crate) fn notice(msg: String) -> PgError {
    PgError::notice(Severity::Notice, sqlstate::SUCCESSFUL_COMPLETION, msg)
}

pub(crate) fn plain_name(n: &ast::ObjectName) -> PgResult<String> {
    let (schema, name) = object_name(n);
    match schema.as_deref() {
        None | Some("public") => Ok(name),
        Some(s) => Err(PgError::new(
            sqlstate::UNDEFINED_OBJECT,
            format!("schema \"{s}\" does not exist"),
        )),
    }
}

/// What stops a DDL statement that reads existing rows (index builds, validation of CHECK,
/// FOREIGN KEY and NOT NULL).
pub use keel_executor::interrupt::Interrupt;

/// `settings` are the session's: CREATE FUNCTION's checks of a PL/pgSQL body read
/// `plpgsql.extra_warnings` and `plpgsql.extra_errors`.
pub fn execute_ddl(
    stmt: &ast::Statement,
    engine: &Engine,
    txn: &mut Transaction,
    interrupt: &Interrupt<'_>,
    settings: &keel_common::Settings,
) -> PgResult<DdlOutcome> {
    let mut cat = statement_catalog(engine, txn)?;
    let mut notices = Vec::new();
    let tag = match stmt {
        ast::Statement::CreateTable(ct) => create_table(ct, engine, txn, &mut cat, &mut notices)?,
        ast::Statement::CreateView(cv) => crate::ddl_view::create_view(cv, &mut cat)?,
        ast::Statement::Drop {
            object_type: ast::ObjectType::View,
            if_exists,
            names,
            cascade,
            ..
        } => crate::ddl_view::drop_views(names, *if_exists, *cascade, &mut cat, &mut notices)?,
        ast::Statement::Drop {
            object_type: ast::ObjectType::Type,
            if_exists,
            names,
            cascade,
            ..
        } => {
            let storage = crate::ddl_type::Storage { engine, txn };
            crate::ddl_type::drop_types(
                names,
                *if_exists,
                *cascade,
                &mut cat,
                &storage,
                &mut notices,
            )?
        }
        ast::Statement::CreateType {
            name,
            representation,
        } => crate::ddl_type::create_type(name, representation, &mut cat)?,
        ast::Statement::Drop {
            object_type,
            if_exists,
            names,
            cascade,
            ..
        } => drop_objects(
            *object_type,
            *if_exists,
            names,
            *cascade,
            engine,
            txn,
            &mut cat,
            &mut notices,
        )?,
        ast::Statement::CreateIndex(ci) => {
            create_index(ci, engine, txn, &mut cat, &mut notices, interrupt)?
        }
        ast::Statement::AlterTable(at) => {
            alter_table(at, engine, txn, &mut cat, &mut notices, interrupt)?
        }
        ast::Statement::CreateSequence { .. } => {
            crate::ddl_sequence::create_sequence(stmt, &mut cat, &mut notices)?
        }
        ast::Statement::Truncate(t) => {
            let mut names = Vec::new();
            for target in &t.table_names {
                names.push(plain_name(&target.name)?);
            }
            // A partitioned table is truncated with its partitions.
            let mut oids = Vec::new();
            for n in &names {
                crate::ddl_partition::with_partitions(&cat, cat.table(n)?.oid, &mut oids);
            }
            for oid in oids {
                let table = cat.table_of(oid)?;
                let mut nt = (*table).clone();
                nt.relfile = cat.new_oid();
                let idx: Vec<Arc<IndexDef>> = cat.indexes_of(table.oid).cloned().collect();
                let idx_files: Vec<u32> = idx.iter().map(|i| i.relfile).collect();
                engine.ssi_replace_relation(txn, table.relfile, &idx_files, Some(nt.relfile))?;
                engine.create_relfile(txn, nt.relfile, nt.persistence == Persistence::Unlogged)?;
                engine.drop_relfile_at_commit(txn, table.relfile);
                for i in idx {
                    let mut ni = (*i).clone();
                    ni.relfile = cat.new_oid();
                    engine.create_relfile(
                        txn,
                        ni.relfile,
                        nt.persistence == Persistence::Unlogged,
                    )?;
                    engine.drop_relfile_at_commit(txn, i.relfile);
                    // The new file needs an empty tree (meta page and root).
                    engine.build_index(txn, &nt, &ni, &|| Ok(()))?;
                    cat.indexes.insert(ni.oid, Arc::new(ni));
                }
                if matches!(t.identity, Some(ast::TruncateIdentityOption::Restart)) {
                    let owned: Vec<_> = cat
                        .sequences
                        .values()
                        .filter(|s| s.owned_by.is_some_and(|(o, _)| o == table.oid))
                        .cloned()
                        .collect();
                    for seq in owned {
                        engine.restart_sequence_at_commit(txn, seq);
                    }
                }
                cat.tables.insert(nt.oid, Arc::new(nt));
            }
            "TRUNCATE TABLE".into()
        }
        ast::Statement::CreateFunction(cf) => {
            crate::ddl_function::create_function(cf, &mut cat, settings, &mut notices)?
        }
        ast::Statement::AlterFunction(af) => crate::ddl_function::alter_function(af, &mut cat)?,
        ast::Statement::DropFunction(df) => {
            crate::ddl_function::drop_function(df, &mut cat, &mut notices)?
        }
        ast::Statement::CreateTrigger(ct) => crate::ddl_trigger::create_trigger(ct, &mut cat)?,
        ast::Statement::DropTrigger(dt) => {
            crate::ddl_trigger::drop_trigger(dt, &mut cat, &mut notices)?
        }
        _ => return Err(PgError::unsupported("this DDL statement")),
    };
    txn.pending_catalog = Some(Arc::new(cat));
    Ok(DdlOutcome { tag, notices })
}

/// The catalog a DDL statement changes: the transaction's, brought up to what others
/// installed since its earlier DDL, as the next version. The statement installs it as the
/// transaction's pending catalog when it succeeds; a failure discards it whole.
fn statement_catalog(engine: &Engine, txn: &mut Transaction) -> PgResult<Catalog> {
    engine.refresh_pending_catalog(txn)?;
    let mut cat: Catalog = (*txn.catalog(engine)).clone();
    if txn.pending_catalog.is_none() {
        // The engine installs a pending catalog only as the direct successor of the current one.
        cat.version += 1;
    }
    Ok(cat)
}

/// `ALTER TABLE ... ATTACH | DETACH PARTITION` (ddl_attach.rs).
pub fn execute_partition_cmd(
    cmd: &keel_parser::partition_cmd::PartitionCmd,
    engine: &Engine,
    txn: &mut Transaction,
    interrupt: &Interrupt<'_>,
) -> PgResult<DdlOutcome> {
    let mut cat = statement_catalog(engine, txn)?;
    let out = crate::ddl_attach::partition_cmd(cmd, engine, txn, &mut cat, interrupt)?;
    txn.pending_catalog = Some(Arc::new(cat));
    Ok(out)
}

/// A foreign key's referential actions (ON DELETE, ON UPDATE). Keel checks the key at once
/// (MATCH SIMPLE); MATCH FULL / PARTIAL and deferrable checks are not built: 0A000 rather
/// than a clause accepted and not carried out.
pub(crate) fn fk_actions(fk: &ast::ForeignKeyConstraint) -> PgResult<(FkAction, FkAction)> {
    if fk
        .match_kind
        .as_ref()
        .is_some_and(|m| !matches!(m, ast::ConstraintReferenceMatchKind::Simple))
    {
        return Err(PgError::unsupported(
            "MATCH FULL and MATCH PARTIAL foreign keys",
        ));
    }
    if fk
        .characteristics
        .as_ref()
        .is_some_and(|c| c.deferrable == Some(true))
    {
        return Err(PgError::unsupported("deferrable foreign keys"));
    }
    let action = |a: &Option<ast::ReferentialAction>| match a {
        None | Some(ast::ReferentialAction::NoAction) => FkAction::NoAction,
        Some(ast::ReferentialAction::Restrict) => FkAction::Restrict,
        Some(ast::ReferentialAction::Cascade) => FkAction::Cascade,
        Some(ast::ReferentialAction::SetNull) => FkAction::SetNull,
        Some(ast::ReferentialAction::SetDefault) => FkAction::SetDefault,
    };
    Ok((action(&fk.on_delete), action(&fk.on_update)))
}

/// The most columns a table may have (PostgreSQL's MaxHeapAttributeNumber).
pub const MAX_TABLE_COLUMNS: usize = 1600;

fn create_table(
    ct: &ast::CreateTable,
    engine: &Engine,
    txn: &mut Transaction,
    cat: &mut Catalog,
    notices: &mut Vec<PgError>,
) -> PgResult<String> {
    if ct.query.is_some() {
        return crate::ddl_create_as::create_table_as(ct, engine, txn, cat, notices);
    }
    if ct.like.is_some() || ct.inherits.is_some() {
        return Err(PgError::unsupported("CREATE TABLE LIKE / INHERITS"));
    }
    if ct.partition_of.is_some() {
        return crate::ddl_partition::create_partition(ct, engine, txn, cat, notices);
    }
    let name = plain_name(&ct.name)?;
    // PostgreSQL's MaxHeapAttributeNumber, checked before the name is looked up.
    if ct.columns.len() > MAX_TABLE_COLUMNS {
        return Err(PgError::new(
            sqlstate::TOO_MANY_COLUMNS,
            format!("tables can have at most {MAX_TABLE_COLUMNS} columns"),
        ));
    }
    if !name_free(cat, &name, ct.if_not_exists, notices)? {
        return Ok("CREATE TABLE".into());
    }
    let fillfactor = fillfactor(ct)?;
    let oid = cat.new_type_oid();
    let persistence = if ct.unlogged {
        Persistence::Unlogged
    } else {
        Persistence::Permanent
    };
    let mut columns: Vec<ColumnDef> = Vec::new();
    let mut pk: Option<Vec<usize>> = None;
    let mut uniques: Vec<Vec<usize>> = Vec::new();
    let mut fks: Vec<PendingFk> = Vec::new();
    let mut sequences = Vec::new();
    let mut checks = Vec::new();
    let mut identity_always = Vec::new();
    for (i, c) in ct.columns.iter().enumerate() {
        let cname = fold(&c.name);
        if columns.iter().any(|x| x.name == cname) {
            return Err(PgError::new(
                sqlstate::DUPLICATE_COLUMN,
                format!("column \"{cname}\" specified more than once"),
            ));
        }
        let tname = c.data_type.to_string();
        let (ty, mut default) = match types::is_serial(&tname) {
            Some(id) => {
                let seq_name = cat.choose_name(&format!("{name}_{cname}_seq"));
                let max = match id {
                    keel_types::TypeId::Int2 => i16::MAX as i64,
                    keel_types::TypeId::Int4 => i32::MAX as i64,
                    _ => i64::MAX,
                };
                let seq = SequenceDef {
                    oid: cat.new_oid(),
                    name: seq_name.clone(),
                    start: 1,
                    increment: 1,
                    min: 1,
                    max,
                    cycle: false,
                    owned_by: Some((oid, i)),
                };
                sequences.push(seq);
                (
                    keel_types::SqlType::new(id),
                    Some(format!("nextval('{seq_name}'::regclass)")),
                )
            }
            None => (types::type_from_name_in(&tname, cat)?, None),
        };
        let mut not_null = default.is_some();
        for opt in &c.options {
            match &opt.option {
                ast::ColumnOption::NotNull => not_null = true,
                ast::ColumnOption::Null => {}
                ast::ColumnOption::Default(e) => default = Some(e.to_string()),
                ast::ColumnOption::PrimaryKey(_) => {
                    if pk.is_some() {
                        return Err(PgError::new(
                            sqlstate::INVALID_TABLE_DEFINITION,
                            format!("multiple primary keys for table \"{name}\" are not allowed"),
                        ));
                    }
                    pk = Some(vec![i]);
                    not_null = true;
                }
                ast::ColumnOption::Unique(_) => uniques.push(vec![i]),
                ast::ColumnOption::Generated {
                    generated_as:
                        generated_as @ (ast::GeneratedAs::Always | ast::GeneratedAs::ByDefault),
                    sequence_options,
                    generation_expr: None,
                    ..
                } => {
                    if default.is_some() {
                        return Err(PgError::new(
                            sqlstate::SYNTAX_ERROR,
                            format!(
                                "both default and identity specified for column \"{cname}\" of table \"{name}\""
                            ),
                        ));
                    }
                    let seq_name = cat.choose_name(&format!("{name}_{cname}_seq"));
                    let mut seq = crate::ddl_sequence::sequence_def(
                        cat,
                        seq_name.clone(),
                        Some(&c.data_type),
                        sequence_options.as_deref().unwrap_or_default(),
                    )
                    .map_err(|e| {
                        if e.message.starts_with("sequence type") {
                            PgError::new(
                                sqlstate::DATATYPE_MISMATCH,
                                "identity column type must be smallint, integer, or bigint",
                            )
                        } else {
                            e
                        }
                    })?;
                    seq.owned_by = Some((oid, i));
                    sequences.push(seq);
                    default = Some(format!("nextval('{seq_name}'::regclass)"));
                    not_null = true;
                    if matches!(generated_as, ast::GeneratedAs::Always) {
                        identity_always.push(i);
                    }
                }
                ast::ColumnOption::Check(cc) => {
                    checks.push(PendingCheck::from_ast(cc, Some(cname.clone())));
                }
                ast::ColumnOption::ForeignKey(fk) => {
                    fks.push((
                        fk.name.as_ref().map(fold),
                        vec![i],
                        fk.foreign_table.clone(),
                        fk.referred_columns.iter().map(fold).collect(),
                        fk_actions(fk)?,
                    ));
                }
                other => return Err(PgError::unsupported(format!("column option {other}"))),
            }
        }
        columns.push(ColumnDef {
            name: cname,
            ty,
            not_null,
            default,
        });
    }
    let col_idx = |columns: &[ColumnDef], id: &str| -> PgResult<usize> {
        columns.iter().position(|c| c.name == id).ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!("column \"{id}\" named in key does not exist"),
            )
        })
    };
    for tc in &ct.constraints {
        match tc {
            ast::TableConstraint::PrimaryKey(p) => {
                let mut cols = Vec::new();
                for ic in &p.columns {
                    cols.push(col_idx(&columns, &index_col_name(ic)?)?);
                }
                for &c in &cols {
                    columns[c].not_null = true;
                }
                pk = Some(cols);
            }
            ast::TableConstraint::Unique(u) => {
                let mut cols = Vec::new();
                for ic in &u.columns {
                    cols.push(col_idx(&columns, &index_col_name(ic)?)?);
                }
                uniques.push(cols);
            }
            ast::TableConstraint::ForeignKey(fk) => {
                let actions = fk_actions(fk)?;
                let mut cols = Vec::new();
                for c in &fk.columns {
                    cols.push(col_idx(&columns, &fold(c))?);
                }
                fks.push((
                    fk.name.as_ref().map(fold),
                    cols,
                    fk.foreign_table.clone(),
                    fk.referred_columns.iter().map(fold).collect(),
                    actions,
                ));
            }
            ast::TableConstraint::Check(cc) => checks.push(PendingCheck::from_ast(cc, None)),
            other => return Err(PgError::unsupported(format!("table constraint {other}"))),
        }
    }
    let key = crate::ddl_partition::partition_key(ct, &columns)?;
    if let Some(key) = &key {
        if let Some(cols) = &pk {
            crate::ddl_partition::check_unique_covers_key(key, cols, true, &name, &columns)?;
        }
        for cols in &uniques {
            crate::ddl_partition::check_unique_covers_key(key, cols, false, &name, &columns)?;
        }
        if !fks.is_empty() {
            return Err(PgError::unsupported("foreign keys on partitioned tables"));
        }
    }
    let relfile = cat.new_oid();
    engine.create_relfile(txn, relfile, ct.unlogged)?;
    let table = TableDef {
        oid,
        name: name.clone(),
        columns,
        relfile,
        persistence,
        fillfactor,
        foreign_keys: vec![],
        checks: vec![],
        identity_always,
        triggers: Vec::new(),
        partition: key.map(|key| {
            Box::new(keel_catalog::Partitioning {
                key: Some(key),
                of: None,
            })
        }),
    };
    for s in sequences {
        cat.sequences.insert(s.oid, Arc::new(s));
    }
    cat.tables.insert(oid, Arc::new(table));
    crate::ddl_alter::add_checks(cat, oid, checks, None)?;
    // The table is empty: nothing to interrupt.
    let none = &Interrupt::NONE;
    if let Some(cols) = pk {
        add_index(cat, engine, txn, oid, None, cols, true, true, true, none)?;
    }
    for u in uniques {
        add_index(cat, engine, txn, oid, None, u, true, false, true, none)?;
    }
    for (fname, cols, rt, rcols, actions) in fks {
        add_fk(cat, oid, fname, cols, &rt, rcols, actions)?;
    }
    Ok("CREATE TABLE".into())
}

/// Whether a new relation may take `name`: false (with PostgreSQL's NOTICE) when it is taken
/// and IF NOT EXISTS was given, 42P07 when it is taken otherwise.
pub(crate) fn name_free(
    cat: &Catalog,
    name: &str,
    if_not_exists: bool,
    notices: &mut Vec<PgError>,
) -> PgResult<bool> {
    if !cat.name_taken(name) {
        return Ok(true);
    }
    if if_not_exists {
        notices.push(PgError::notice(
            Severity::Notice,
            sqlstate::DUPLICATE_TABLE,
            format!("relation \"{name}\" already exists, skipping"),
        ));
        return Ok(false);
    }
    Err(PgError::new(
        sqlstate::DUPLICATE_TABLE,
        format!("relation \"{name}\" already exists"),
    ))
}

/// The table's fillfactor from `WITH (fillfactor = n)`, 100 without it.
pub(crate) fn fillfactor(ct: &ast::CreateTable) -> PgResult<u8> {
    let mut fillfactor = 100u8;
    if let ast::CreateTableOptions::With(opts) = &ct.table_options {
        for o in opts {
            match o {
                ast::SqlOption::KeyValue { key, value } if fold(key) == "fillfactor" => {
                    let v: i64 = value.to_string().trim_matches('\'').parse().unwrap_or(-1);
                    if !(10..=100).contains(&v) {
                        return Err(PgError::new(
                            sqlstate::INVALID_PARAMETER_VALUE,
                            format!("value {value} out of bounds for option \"fillfactor\""),
                        )
                        .with_detail("Valid values are between \"10\" and \"100\"."));
                    }
                    fillfactor = v as u8;
                }
                ast::SqlOption::KeyValue { key, .. } => {
                    return Err(PgError::new(
                        sqlstate::INVALID_PARAMETER_VALUE,
                        format!("unrecognized parameter \"{}\"", fold(key)),
                    ));
                }
                _ => return Err(PgError::unsupported("this table option")),
            }
        }
    }
    Ok(fillfactor)
}
/// ALTER TABLE ADD FOREIGN KEY: every existing row's non-null key must be in the referenced
/// table (checks the newest constraint of `table_oid`).
fn validate_fk(
    cat: &Catalog,
    table_oid: u32,
    engine: &Engine,
    txn: &Transaction,
    interrupt: &Interrupt<'_>,
) -> PgResult<()> {
    let table = cat.table_of(table_oid)?;
    let Some(fk) = table.foreign_keys.last() else {
        return Ok(());
    };
    let Some(rt) = cat.tables.get(&fk.ref_table).cloned() else {
        return Ok(());
    };
    let tys: Vec<keel_types::TypeId> = fk.columns.iter().map(|&c| table.columns[c].ty.id).collect();
    let mut keys = std::collections::HashSet::new();
    let mut buf = Vec::new();
    for item in engine.scan(txn, &rt) {
        let (_, r) = item?;
        interrupt.check()?;
        let vals: Vec<_> = fk.ref_columns.iter().map(|&c| r[c].clone()).collect();
        buf.clear();
        keel_types::key::encode_key(&vals, &tys, &mut buf);
        keys.insert(buf.clone());
    }
    for item in engine.scan(txn, &table) {
        let (_, r) = item?;
        interrupt.check()?;
        let vals: Vec<_> = fk.columns.iter().map(|&c| r[c].clone()).collect();
        if vals.iter().any(|v| v.is_null()) {
            continue;
        }
        buf.clear();
        keel_types::key::encode_key(&vals, &tys, &mut buf);
        if !keys.contains(&buf) {
            let names: Vec<&str> = fk
                .columns
                .iter()
                .map(|&c| table.columns[c].name.as_str())
                .collect();
            return Err(PgError::new(
                sqlstate::FOREIGN_KEY_VIOLATION,
                format!(
                    "insert or update on table \"{}\" violates foreign key constraint \"{}\"",
                    table.name, fk.name
                ),
            )
            .with_detail(format!(
                "Key ({})=({}) is not present in table \"{}\".",
                names.join(", "),
                keel_executor::eval::row_text(&vals, &tys),
                rt.name
            ))
            .with_table(table.name.clone())
            .with_constraint(fk.name.clone()));
        }
    }
    Ok(())
}

fn add_fk(
    cat: &mut Catalog,
    table_oid: u32,
    name: Option<String>,
    cols: Vec<usize>,
    ref_table: &ast::ObjectName,
    ref_cols: Vec<String>,
    (on_delete, on_update): (FkAction, FkAction),
) -> PgResult<()> {
    let table = cat.table_of(table_oid)?;
    let rname = plain_name(ref_table)?;
    let rt = cat.table(&rname)?.clone();
    let ref_columns: Vec<usize> = if ref_cols.is_empty() {
        match cat.indexes_of(rt.oid).find(|i| i.primary) {
            Some(pk) => pk.columns.clone(),
            None => {
                return Err(PgError::new(
                    sqlstate::UNDEFINED_OBJECT,
                    format!("there is no primary key for referenced table \"{rname}\""),
                ));
            }
        }
    } else {
        let mut v = Vec::new();
        for c in &ref_cols {
            v.push(rt.column_index(c).ok_or_else(|| {
                PgError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column \"{c}\" referenced in foreign key constraint does not exist"),
                )
            })?);
        }
        v
    };
    if ref_columns.len() != cols.len() {
        return Err(PgError::new(
            "42830",
            "number of referencing and referenced columns for foreign key disagree",
        ));
    }
    if !cat
        .indexes_of(rt.oid)
        .any(|i| i.unique && i.columns == ref_columns)
    {
        return Err(PgError::new(
            "42830",
            format!(
                "there is no unique constraint matching given keys for referenced table \"{rname}\""
            ),
        ));
    }
    let colnames: Vec<&str> = cols
        .iter()
        .map(|&c| table.columns[c].name.as_str())
        .collect();
    let name = name.unwrap_or_else(|| format!("{}_{}_fkey", table.name, colnames.join("_")));
    let mut nt = (*table).clone();
    nt.foreign_keys.push(ForeignKeyDef {
        name,
        columns: cols,
        ref_table: rt.oid,
        ref_columns,
        on_delete,
        on_update,
    });
    cat.tables.insert(table_oid, Arc::new(nt));
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn drop_objects(
    kind: ast::ObjectType,
    if_exists: bool,
    names: &[ast::ObjectName],
    cascade: bool,
    engine: &Engine,
    txn: &mut Transaction,
    cat: &mut Catalog,
    notices: &mut Vec<PgError>,
) -> PgResult<String> {
    let (what, tag) = match kind {
        ast::ObjectType::Table => ("table", "DROP TABLE"),
        ast::ObjectType::Index => ("index", "DROP INDEX"),
        ast::ObjectType::Sequence => ("sequence", "DROP SEQUENCE"),
        _ => return Err(PgError::unsupported(format!("DROP {kind}"))),
    };
    let mut targets = Vec::new();
    for n in names {
        let name = plain_name(n)?;
        let found = match kind {
            ast::ObjectType::Table => cat.table_by_name(&name).map(|t| t.oid),
            ast::ObjectType::Index => cat.indexes.by_name(&name).map(|i| i.oid),
            _ => cat.sequence_by_name(&name).map(|s| s.oid),
        };
        if found.is_none() && kind == ast::ObjectType::Table && cat.views.by_name(&name).is_some() {
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("\"{name}\" is not a table"),
            )
            .with_hint("Use DROP VIEW to remove a view."));
        }
        match found {
            Some(oid) => targets.push(oid),
            None if if_exists => notices.push(notice(format!(
                "{what} \"{name}\" does not exist, skipping"
            ))),
            None => {
                // A missing index is an undefined object; tables and sequences are relations.
                let code = match kind {
                    ast::ObjectType::Index => sqlstate::UNDEFINED_OBJECT,
                    _ => sqlstate::UNDEFINED_TABLE,
                };
                return Err(PgError::new(
                    code,
                    format!("{what} \"{name}\" does not exist"),
                ));
            }
        }
    }
    match kind {
        ast::ObjectType::Table => {
            if let Some(first) = targets.first() {
                let what = format!("table {}", cat.tables.get(first).map_or("", |t| &t.name));
                let storage = crate::ddl_type::Storage { engine, txn };
                crate::ddl_type::drop_type_users(cat, &targets, &what, cascade, &storage, notices)?;
            }
            // Views reading the tables and foreign keys from tables that stay.
            if let Some(first) = targets.first() {
                let what = format!("table {}", cat.tables.get(first).map_or("", |t| &t.name));
                crate::ddl_view::drop_dependents(cat, &targets, &what, cascade, notices)?;
            }
            // A partitioned table goes with its partitions.
            let mut all = Vec::new();
            for oid in targets {
                crate::ddl_partition::with_partitions(cat, oid, &mut all);
            }
            for oid in all {
                let idx: Vec<u32> = cat.indexes_of(oid).map(|i| i.oid).collect();
                if let Some(t) = cat.tables.remove(&oid) {
                    let idx_files: Vec<u32> = (idx.iter())
                        .filter_map(|i| cat.indexes.get(i).map(|ix| ix.relfile))
                        .collect();
                    engine.ssi_replace_relation(txn, t.relfile, &idx_files, None)?;
                    engine.drop_relfile_at_commit(txn, t.relfile);
                }
                for i in idx {
                    if let Some(ix) = cat.indexes.remove(&i) {
                        engine.drop_relfile_at_commit(txn, ix.relfile);
                    }
                }
                cat.sequences
                    .retain(|_, s| s.owned_by.is_none_or(|(t, _)| t != oid));
            }
        }
        ast::ObjectType::Index => {
            for oid in crate::ddl_partition_tree::drop_index_targets(cat, &targets)? {
                if let Some(ix) = cat.indexes.remove(&oid) {
                    engine.drop_relfile_at_commit(txn, ix.relfile);
                }
            }
        }
        _ => {
            for oid in targets {
                cat.sequences.remove(&oid);
            }
        }
    }
    Ok(tag.into())
}

fn alter_table(
    at: &ast::AlterTable,
    engine: &Engine,
    txn: &mut Transaction,
    cat: &mut Catalog,
    notices: &mut Vec<PgError>,
    interrupt: &Interrupt<'_>,
) -> PgResult<String> {
    let tname = plain_name(&at.name)?;
    let table = match cat.table_by_name(&tname) {
        Some(t) => t.clone(),
        None if cat.views.by_name(&tname).is_some() => {
            let first = at.operations.first();
            return Err(match first {
                Some(op) => crate::ddl_alter::alter_view_refused(&tname, op),
                None => PgError::unsupported("ALTER TABLE on a view"),
            });
        }
        None if at.if_exists => {
            notices.push(notice(format!(
                "relation \"{tname}\" does not exist, skipping"
            )));
            return Ok("ALTER TABLE".into());
        }
        None => {
            return Err(PgError::new(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{tname}\" does not exist"),
            ));
        }
    };
    for op in &at.operations {
        match op {
            ast::AlterTableOperation::AddConstraint { constraint, .. } => match constraint {
                ast::TableConstraint::PrimaryKey(p) => {
                    let cols = constraint_cols(&table, &p.columns)?;
                    crate::ddl_partition_tree::add_index_tree(
                        cat,
                        engine,
                        txn,
                        table.oid,
                        p.name.as_ref().map(fold),
                        cols,
                        true,
                        true,
                        true,
                        interrupt,
                    )?;
                }
                ast::TableConstraint::Unique(u) => {
                    let cols = constraint_cols(&table, &u.columns)?;
                    crate::ddl_partition_tree::add_index_tree(
                        cat,
                        engine,
                        txn,
                        table.oid,
                        u.name.as_ref().map(fold),
                        cols,
                        true,
                        false,
                        true,
                        interrupt,
                    )?;
                }
                ast::TableConstraint::ForeignKey(fk) => {
                    if table.partition_key().is_some() {
                        return Err(PgError::unsupported("foreign keys on partitioned tables"));
                    }
                    let actions = fk_actions(fk)?;
                    let mut cols = Vec::new();
                    for c in &fk.columns {
                        let n = fold(c);
                        cols.push(table.column_index(&n).ok_or_else(|| {
                            PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{n}\" referenced in foreign key constraint does not exist"))
                        })?);
                    }
                    add_fk(
                        cat,
                        table.oid,
                        fk.name.as_ref().map(fold),
                        cols,
                        &fk.foreign_table,
                        fk.referred_columns.iter().map(fold).collect(),
                        actions,
                    )?;
                    validate_fk(cat, table.oid, engine, txn, interrupt)?;
                }
                ast::TableConstraint::Check(_) => crate::ddl_partition_tree::alter_across_tree(
                    op, &table, engine, txn, cat, notices, interrupt,
                )?,
                other => return Err(PgError::unsupported(format!("ALTER TABLE ADD {other}"))),
            },
            ast::AlterTableOperation::AddColumn {
                column_def,
                if_not_exists,
                ..
            } => {
                let targets = crate::ddl_partition_tree::alter_targets(cat, &table, op)?;
                let t = cat.table_of(table.oid)?;
                let cname = fold(&column_def.name);
                if t.column_index(&cname).is_some() {
                    if *if_not_exists {
                        continue;
                    }
                    return Err(PgError::new(
                        sqlstate::DUPLICATE_COLUMN,
                        format!(
                            "column \"{cname}\" of relation \"{}\" already exists",
                            t.name
                        ),
                    ));
                }
                let mut not_null = false;
                for o in &column_def.options {
                    match &o.option {
                        ast::ColumnOption::Null => {}
                        ast::ColumnOption::NotNull => not_null = true,
                        other => {
                            return Err(PgError::unsupported(format!("ADD COLUMN with {other}")));
                        }
                    }
                }
                if not_null {
                    return Err(PgError::unsupported("ADD COLUMN ... NOT NULL"));
                }
                let column = ColumnDef {
                    name: cname,
                    ty: types::type_from_name_in(&column_def.data_type.to_string(), cat)?,
                    not_null,
                    default: None,
                };
                // A partitioned table's partitions get the column at the same position.
                for oid in targets {
                    let mut nt = (*cat.table_of(oid)?).clone();
                    nt.columns.push(column.clone());
                    cat.tables.insert(nt.oid, Arc::new(nt));
                }
            }
            other => crate::ddl_partition_tree::alter_across_tree(
                other, &table, engine, txn, cat, notices, interrupt,
            )?,
        }
    }
    Ok("ALTER TABLE".into())
}

fn constraint_cols(table: &TableDef, cols: &[ast::IndexColumn]) -> PgResult<Vec<usize>> {
    let mut out = Vec::new();
    for ic in cols {
        let n = index_col_name(ic)?;
        out.push(table.column_index(&n).ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_COLUMN,
                format!(
                    "column \"{n}\" of relation \"{}\" does not exist",
                    table.name
                ),
            )
        })?);
    }
    Ok(out)
}
