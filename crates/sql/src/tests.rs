//! Binding and planning tests (no engine needed).

use crate::plan::{Access, ModifyKind};
use crate::{NoSizes, Stmt, prepare};
use keel_catalog::{Catalog, ColumnDef, IndexDef, IndexMethod, Persistence, TableDef};
use keel_types::{SqlType, TypeId};
use std::sync::Arc;

fn catalog() -> Arc<Catalog> {
    let mut c = Catalog::default();
    let col = |n: &str, t: TypeId, nn: bool| ColumnDef {
        name: n.into(),
        ty: SqlType::new(t),
        not_null: nn,
        default: None,
    };
    let oid = c.new_oid();
    let t = TableDef {
        oid,
        name: "pgbench_accounts".into(),
        columns: vec![
            col("aid", TypeId::Int4, true),
            col("bid", TypeId::Int4, false),
            col("abalance", TypeId::Int4, false),
            ColumnDef {
                name: "filler".into(),
                ty: SqlType::with_typmod(TypeId::Bpchar, 88),
                not_null: false,
                default: None,
            },
        ],
        relfile: 1,
        persistence: Persistence::Permanent,
        fillfactor: 100,
        foreign_keys: vec![],
        checks: vec![],
        identity_always: vec![],
        triggers: vec![],
        partition: None,
    };
    c.tables.insert(oid, Arc::new(t));
    let ioid = c.new_oid();
    c.indexes.insert(
        ioid,
        Arc::new(IndexDef {
            parent: None,
            constraint: false,
            oid: ioid,
            name: "pgbench_accounts_pkey".into(),
            table: oid,
            columns: vec![0],
            unique: true,
            primary: true,
            method: IndexMethod::Btree,
            relfile: 2,
            opclasses: vec![1978],
        }),
    );
    let hoid = c.new_oid();
    let h = TableDef {
        oid: hoid,
        name: "pgbench_history".into(),
        columns: vec![
            col("tid", TypeId::Int4, false),
            col("bid", TypeId::Int4, false),
            col("aid", TypeId::Int4, false),
            col("delta", TypeId::Int4, false),
            col("mtime", TypeId::Timestamp, false),
            ColumnDef {
                name: "filler".into(),
                ty: SqlType::with_typmod(TypeId::Bpchar, 26),
                not_null: false,
                default: None,
            },
        ],
        relfile: 3,
        persistence: Persistence::Permanent,
        fillfactor: 100,
        foreign_keys: vec![],
        checks: vec![],
        identity_always: vec![],
        triggers: vec![],
        partition: None,
    };
    c.tables.insert(hoid, Arc::new(h));
    Arc::new(c)
}

#[test]
fn pgbench_update_infers_int4_params_and_uses_the_pkey() {
    let p = prepare(
        catalog(),
        &NoSizes,
        "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2",
        0,
        &[],
    )
    .unwrap();
    assert_eq!(p.params, vec![TypeId::Int4, TypeId::Int4]);
    let Stmt::Modify(m) = &p.stmt else {
        panic!("not a modify")
    };
    let ModifyKind::Update { access, .. } = &m.kind else {
        panic!("not an update")
    };
    assert!(matches!(access, Access::Index { eq, .. } if eq.len() == 1));
}

#[test]
fn pgbench_select_and_insert() {
    let p = prepare(
        catalog(),
        &NoSizes,
        "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
        0,
        &[],
    )
    .unwrap();
    assert_eq!(p.params, vec![TypeId::Int4]);
    let cols = p.columns().unwrap();
    assert_eq!(cols[0].name, "abalance");
    assert_eq!(cols[0].ty, TypeId::Int4);
    assert_eq!(cols[0].attnum, 3);
    let p = prepare(catalog(), &NoSizes, "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)", 0, &[]).unwrap();
    assert_eq!(p.params, vec![TypeId::Int4; 4]);
    assert!(p.columns().is_none());
}

#[test]
fn declared_parameter_types_win() {
    let p = prepare(
        catalog(),
        &NoSizes,
        "SELECT abalance FROM pgbench_accounts WHERE aid = $1",
        0,
        &[TypeId::Int8],
    )
    .unwrap();
    assert_eq!(p.params, vec![TypeId::Int8]);
}

#[test]
fn unknown_column_has_position() {
    let e = prepare(
        catalog(),
        &NoSizes,
        "select nosuch from pgbench_accounts",
        0,
        &[],
    )
    .err()
    .unwrap();
    assert_eq!(e.code, "42703");
    assert_eq!(e.position, Some(8));
    // Offsets of later statements in a multi-statement string are added.
    let e = prepare(catalog(), &NoSizes, "select * from nope", 10, &[])
        .err()
        .unwrap();
    assert_eq!(e.code, "42P01");
    assert_eq!(e.position, Some(25));
}

#[test]
fn syntax_error_position() {
    let e = prepare(catalog(), &NoSizes, "selec 1", 0, &[])
        .err()
        .unwrap();
    assert_eq!(e.code, "42601");
    assert_eq!(e.message, "syntax error at or near \"selec\"");
    assert_eq!(e.position, Some(1));
}

#[test]
fn grouping_errors() {
    let e = prepare(
        catalog(),
        &NoSizes,
        "select aid, count(*) from pgbench_accounts",
        0,
        &[],
    )
    .err()
    .unwrap();
    assert_eq!(e.code, "42803");
    assert!(
        prepare(
            catalog(),
            &NoSizes,
            "select bid, count(*) from pgbench_accounts group by bid order by 2 desc",
            0,
            &[]
        )
        .is_ok()
    );
    assert!(
        prepare(
            catalog(),
            &NoSizes,
            "select bid, sum(abalance) from pgbench_accounts group by 1 having sum(abalance) > 0",
            0,
            &[]
        )
        .is_ok()
    );
}

#[test]
fn unsupported_is_0a000() {
    let e = prepare(
        catalog(),
        &NoSizes,
        "select * from pg_catalog.pg_class",
        0,
        &[],
    )
    .err()
    .unwrap();
    assert_eq!(e.code, "0A000");
    let e = prepare(
        catalog(),
        &NoSizes,
        "select sum(aid) over () from pgbench_accounts",
        0,
        &[],
    )
    .err()
    .unwrap();
    assert_eq!(e.code, "0A000");
}

#[test]
fn joins_and_series_bind() {
    let p = prepare(
        catalog(),
        &NoSizes,
        "select a.aid, g from pgbench_accounts a join generate_series(1, 10) g on a.aid = g",
        0,
        &[],
    )
    .unwrap();
    assert_eq!(p.columns().unwrap().len(), 2);
    let p = prepare(
        catalog(),
        &NoSizes,
        "select generate_series(1, 3) as x",
        0,
        &[],
    )
    .unwrap();
    assert_eq!(p.columns().unwrap()[0].name, "x");
}

#[test]
fn subqueries_bind() {
    use crate::expr::Expr;
    // Correlated EXISTS on an equality of columns: a hash semi-join, keyed on aid.
    let p = prepare(
        catalog(),
        &NoSizes,
        "select aid from pgbench_accounts a where exists \
         (select 1 from pgbench_history h where h.aid = a.aid)",
        0,
        &[],
    )
    .unwrap();
    let Stmt::Query(q) = &p.stmt else { panic!() };
    fn semi(p: &crate::plan::Plan) -> Option<(usize, bool)> {
        use crate::plan::Plan;
        match p {
            Plan::SemiJoin {
                outer_keys, anti, ..
            } => Some((outer_keys.len(), *anti)),
            Plan::Project { input, .. } | Plan::Filter { input, .. } => semi(input),
            _ => None,
        }
    }
    assert_eq!(semi(&q.root), Some((1, false)));
    // Correlated on an inequality: a subplan reading the outer row's aid through one outer
    // reference.
    let p = prepare(
        catalog(),
        &NoSizes,
        "select aid from pgbench_accounts a where exists \
         (select 1 from pgbench_history h where h.aid > a.aid)",
        0,
        &[],
    )
    .unwrap();
    let Stmt::Query(q) = &p.stmt else { panic!() };
    let mut found = None;
    fn walk(p: &crate::plan::Plan, out: &mut Option<usize>) {
        use crate::plan::Plan;
        match p {
            Plan::Scan {
                filter: Some(Expr::SubPlan(sp)),
                ..
            }
            | Plan::Filter {
                pred: Expr::SubPlan(sp),
                ..
            } => *out = Some(sp.outer_args.len()),
            Plan::Project { input, .. } | Plan::Filter { input, .. } => walk(input, out),
            _ => {}
        }
    }
    walk(&q.root, &mut found);
    assert_eq!(found, Some(1));
    // Errors as PostgreSQL: one column only; unknown columns still reported.
    let e = prepare(catalog(), &NoSizes, "select (select 1, 2)", 0, &[])
        .err()
        .unwrap();
    assert_eq!((e.code, e.position), ("42601", Some(8)));
    let e = prepare(catalog(), &NoSizes, "select 1 in (select 1, 2)", 0, &[])
        .err()
        .unwrap();
    assert_eq!((e.code, e.position), ("42601", Some(10)));
    let e = prepare(catalog(), &NoSizes, "select (select nosuch)", 0, &[])
        .err()
        .unwrap();
    assert_eq!(e.code, "42703");
}

#[test]
fn syntax_errors_like_postgres() {
    let cases: &[(&str, &str, u32)] = &[
        ("select 1 +;", "syntax error at or near \";\"", 11),
        ("selec 1;", "syntax error at or near \"selec\"", 1),
        (
            "update t set where a = 1;",
            "syntax error at or near \"where\"",
            14,
        ),
        ("delete t;", "syntax error at or near \"t\"", 8),
        (
            "select count(*) from t group;",
            "syntax error at or near \";\"",
            29,
        ),
        ("select * frm t;", "syntax error at or near \"frm\"", 10),
        (
            "select case when 1 then end;",
            "syntax error at or near \"end\"",
            25,
        ),
        (
            "select\n  a,\n  from t;",
            "syntax error at or near \"from\"",
            15,
        ),
        (
            "select * from t t2 t3;",
            "syntax error at or near \"t3\"",
            20,
        ),
        ("select 1 union", "syntax error at end of input", 15),
    ];
    for (q, msg, pos) in cases {
        let e = prepare(catalog(), &NoSizes, q, 0, &[]).err().unwrap();
        assert_eq!((e.message.as_str(), e.position), (*msg, Some(*pos)), "{q}");
    }
}

#[test]
fn trim_side_without_characters_trims_spaces() {
    assert_eq!(
        crate::syntax::trim_without_characters(
            "SELECT trim(LEADING FROM '  a  '), trim(both 'x' from 'y')"
        )
        .as_deref(),
        Some("SELECT trim(LEADING ' ' FROM '  a  '), trim(both 'x' from 'y')")
    );
    assert_eq!(
        crate::syntax::trim_without_characters("SELECT trim(' a ')"),
        None
    );
}

#[test]
fn unbuilt_statement_forms_are_unsupported_not_a_syntax_error() {
    use crate::syntax::unsupported_statement;
    for sql in [
        "alter index idx_test_info set (gin_pending_list_limit = 4096)",
        "ALTER INDEX IF EXISTS i RESET (fillfactor)",
        "alter trigger a on t rename to b",
        "comment on trigger x on t is 'a'",
        "create or replace rule r as on insert to t do instead nothing",
        "alter table t inherit p",
        "create procedure p() language sql as 'select 1'",
        "create function f(int) returns bool language sql leakproof as 'select true'",
        "table x",
    ] {
        let e = unsupported_statement(sql).expect(sql);
        assert_eq!(
            e.code,
            keel_common::sqlstate::FEATURE_NOT_SUPPORTED,
            "{sql}"
        );
    }
    assert!(unsupported_statement("alter index i blah").is_none());
    assert!(unsupported_statement("alter table t attach column").is_none());
    assert!(unsupported_statement("alter table t set (fillfactor = 50)").is_none());
}
