//! The SQL front end on arbitrary text: split into statements, then parse, bind and plan each
//! (`keel_sql::prepare`) against a small catalog (two tables with an index, several column
//! types), with the first statement also prepared with `$n` parameter types. Errors are
//! expected; a panic or a hang is a bug (any client can send any text).

use keel_catalog::{Catalog, ColumnDef, IndexDef, IndexMethod, Persistence, TableDef};
use keel_sql::{NoSizes, prepare, split::split_statements};
use keel_types::{SqlType, TypeId};
use std::sync::{Arc, OnceLock};

fn col(name: &str, ty: TypeId, not_null: bool) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty: SqlType::new(ty),
        not_null,
        default: None,
    }
}

fn table(c: &mut Catalog, name: &str, columns: Vec<ColumnDef>, relfile: u32) -> u32 {
    let oid = c.new_oid();
    c.tables.insert(
        oid,
        Arc::new(TableDef {
            oid,
            name: name.into(),
            columns,
            relfile,
            persistence: Persistence::Permanent,
            fillfactor: 100,
            foreign_keys: vec![],
            checks: vec![],
            identity_always: vec![],
            triggers: vec![],
            partition: None,
        }),
    );
    oid
}

fn catalog() -> Arc<Catalog> {
    static CAT: OnceLock<Arc<Catalog>> = OnceLock::new();
    CAT.get_or_init(|| {
        let mut c = Catalog::default();
        let t = table(
            &mut c,
            "t",
            vec![
                col("a", TypeId::Int4, true),
                col("b", TypeId::Text, false),
                col("c", TypeId::Int8, false),
                col("d", TypeId::Numeric, false),
                col("e", TypeId::Bool, false),
                col("f", TypeId::Float8, false),
            ],
            1,
        );
        let ioid = c.new_oid();
        c.indexes.insert(
            ioid,
            Arc::new(IndexDef {
                parent: None,
                constraint: false,
                oid: ioid,
                name: "t_pkey".into(),
                table: t,
                columns: vec![0],
                unique: true,
                primary: true,
                method: IndexMethod::Btree,
                relfile: 2,
                opclasses: vec![],
            }),
        );
        table(
            &mut c,
            "u",
            vec![
                col("a", TypeId::Int4, false),
                col("v", TypeId::Varchar, false),
            ],
            3,
        );
        Arc::new(c)
    })
    .clone()
}

pub fn sql_prepare(data: &[u8]) {
    let Ok(sql) = std::str::from_utf8(data) else {
        return;
    };
    let cat = catalog();
    for (i, raw) in split_statements(sql).iter().enumerate() {
        let chars = sql.get(..raw.offset).map_or(0, |p| p.chars().count());
        let _ = prepare(cat.clone(), &NoSizes, raw.text, chars, &[]);
        if i == 0 {
            let _ = prepare(
                cat.clone(),
                &NoSizes,
                raw.text,
                chars,
                &[TypeId::Int4, TypeId::Text],
            );
        }
    }
}
