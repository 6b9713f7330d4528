//! Executes SQL through prepare -> plan -> executor against a real engine in a temp dir and
//! checks results PostgreSQL 15 gives for the same statements (subqueries, set operations,
//! CTEs, join kinds, DISTINCT ON, ordered/filtered aggregates).

use keel_access::{Engine, Isolation, Transaction};
use keel_common::{PgError, Settings};
use keel_sql::exec::{ModifyExec, Step, run_query};
use keel_sql::expr::{EvalCx, SessionFuncs};
use keel_sql::{Stmt, prepare};
use std::sync::Arc;

struct Db {
    engine: Arc<Engine>,
    txn: Option<Transaction>,
    settings: Settings,
    funcs: SessionFuncs,
    dir: std::path::PathBuf,
}

impl Drop for Db {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Db {
    fn new(tag: &str) -> Db {
        let dir = std::env::temp_dir().join(format!("keel-sql-exec-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let settings = Settings::default();
        let engine = Engine::open(&dir, &settings).unwrap();
        let txn = Some(engine.begin(Isolation::ReadCommitted, false));
        Db {
            engine,
            txn,
            settings,
            funcs: SessionFuncs::new(1),
            dir,
        }
    }

    /// Runs one statement; rows as `a|b|c` text lines (NULL as empty). Each runs in its own
    /// savepoint, rolled back when it fails: a failed statement leaves nothing behind, as
    /// when a session's transaction aborts at the error.
    fn run(&mut self, sql: &str) -> Result<Vec<String>, PgError> {
        let engine = &self.engine;
        let depth = engine.savepoint(self.txn.as_mut().unwrap());
        let r = self.run_statement(sql);
        let txn = self.txn.as_mut().unwrap();
        if r.is_err() {
            self.engine.rollback_to_savepoint(txn, depth);
        }
        self.engine.release_savepoint(txn, depth);
        r
    }

    fn run_statement(&mut self, sql: &str) -> Result<Vec<String>, PgError> {
        let txn = self.txn.as_mut().unwrap();
        let catalog = txn.catalog(&self.engine);
        let prep = prepare(catalog, &keel_sql::EngineSizes(&self.engine), sql, 0, &[])?;
        self.engine.start_statement(txn);
        let no_cancel = || false;
        let mut ev = EvalCx {
            params: &[],
            fctx: &mut self.funcs,
            engine: &self.engine,
            settings: &self.settings,
            pid: 1,
            cancel: &no_cancel,
            txn: None,
            outer: &[],
            subq: Default::default(),
            subplans: Default::default(),
            deadline: None,
            ticker: Default::default(),
            blocking: keel_sql::expr::run_inline,
            mem: keel_sql::exec::mem::StatementMem::unlimited(),
            transition: &[],
        };
        match &prep.stmt {
            Stmt::Query(q) => {
                let txn: &Transaction = txn;
                ev.txn = Some(txn);
                let rows = run_query(q, &self.engine, txn, &mut ev)?;
                Ok(rows
                    .iter()
                    .map(|r| {
                        r.iter()
                            .zip(&q.columns)
                            .map(|(d, c)| {
                                let mut s = String::new();
                                if !d.is_null() {
                                    keel_types::io::format_text(d, c.ty, &mut s);
                                }
                                s
                            })
                            .collect::<Vec<_>>()
                            .join("|")
                    })
                    .collect())
            }
            Stmt::Modify(m) => {
                let mut exec = ModifyExec::new();
                match exec.step(m, &self.engine, txn, &mut ev)? {
                    Step::Done => Ok(vec![]),
                    Step::Wait(_) => panic!("unexpected wait"),
                }
            }
            Stmt::Ddl(s) => {
                let no_cancel = || false;
                let interrupt = keel_sql::ddl::Interrupt {
                    cancel: &no_cancel,
                    deadline: None,
                };
                keel_sql::ddl::execute_ddl(s, &self.engine, txn, &interrupt, &Default::default())?;
                Ok(vec![])
            }
            _ => Ok(vec![]),
        }
    }

    fn q(&mut self, sql: &str) -> String {
        match self.run(sql) {
            Ok(rows) => rows.join(","),
            Err(e) => panic!("{sql}: {} {}", e.code, e.message),
        }
    }

    fn err(&mut self, sql: &str) -> (&'static str, String) {
        let e = self
            .run(sql)
            .err()
            .unwrap_or_else(|| panic!("{sql}: no error"));
        (e.code, e.message.clone())
    }
}

fn setup(tag: &str) -> Db {
    let mut db = Db::new(tag);
    db.q("create table d (id int primary key, name text)");
    db.q("create table e (id int primary key, dept_id int, name text, salary int)");
    db.q("insert into d values (1, 'eng'), (2, 'ops'), (3, 'empty')");
    db.q("insert into e values (1, 1, 'ann', 100), (2, 1, 'bob', 90), (3, 2, 'cid', 80), (4, null, 'dan', 70)");
    db
}

#[test]
fn subqueries() {
    let mut db = setup("sub");
    assert_eq!(
        db.q("select name from e where salary > (select avg(salary) from e) order by name"),
        "ann,bob"
    );
    assert_eq!(
        db.q(
            "select name from e where dept_id in (select id from d where name = 'eng') order by 1"
        ),
        "ann,bob"
    );
    // NOT IN over a set containing NULL is never true.
    assert_eq!(
        db.q("select name from e where id not in (select dept_id from e)"),
        ""
    );
    assert_eq!(db.q("select 1 in (select null::int), 1 not in (select 2), null::int in (select 1 where false)"), "|t|f");
    // Correlated, one and two levels deep.
    assert_eq!(
        db.q("select d.name, (select count(*) from e where e.dept_id = d.id) from d order by d.id"),
        "eng|2,ops|1,empty|0"
    );
    assert_eq!(
        db.q("select name from d where not exists (select 1 from e where e.dept_id = d.id)"),
        "empty"
    );
    assert_eq!(
        db.q("select d.id from d where exists (select 1 from e where e.dept_id = d.id and e.salary = (select max(salary) from e e2 where e2.dept_id = d.id)) order by 1"),
        "1,2"
    );
    assert_eq!(
        db.q("select name from e where salary >= all (select salary from e)"),
        "ann"
    );
    assert_eq!(db.q("select name from e where salary < any (select salary from e where dept_id = 1) order by 1"), "bob,cid,dan");
    assert_eq!(db.err("select (select id from d)").0, "21000");
    assert_eq!(db.err("select (select 1, 2)").0, "42601");
    db.q("update e set salary = (select max(salary) from e) where id = 4");
    assert_eq!(db.q("select salary from e where id = 4"), "100");
}

#[test]
fn set_operations_and_ctes() {
    let mut db = setup("setop");
    assert_eq!(
        db.q("select dept_id from e union select id from d order by 1"),
        "1,2,3,"
    );
    assert_eq!(
        db.q("select dept_id from e union all select id from d order by 1 limit 4"),
        "1,1,1,2"
    );
    assert_eq!(
        db.q("select id from d intersect select dept_id from e order by 1"),
        "1,2"
    );
    assert_eq!(
        db.q("select dept_id from e intersect all select 1 order by 1"),
        "1"
    );
    assert_eq!(db.q("select id from d except select dept_id from e"), "3");
    assert_eq!(
        db.q("select dept_id from e except all select 1 order by 1"),
        "1,2,"
    );
    assert_eq!(db.q("select 1 union select 1.5 order by 1"), "1,1.5");
    assert_eq!(db.err("select 1 union select 'x'").0, "22P02");
    assert_eq!(db.err("select 1, 2 union select 1").0, "42601");
    assert_eq!(db.q("with t as (select id from d where id > 1), u(x) as (select id from t) select count(*) from t join u on u.x = t.id"), "2");
}

#[test]
fn joins_distinct_on_aggregates() {
    let mut db = setup("join");
    assert_eq!(
        db.q("select e.name, d.name from e right join d on d.id = e.dept_id order by d.id, e.id"),
        "ann|eng,bob|eng,cid|ops,|empty"
    );
    assert_eq!(
        db.q("select count(*) from e full join d on d.id = e.dept_id"),
        "5"
    );
    assert_eq!(db.q("select count(*) from e full join d on false"), "7");
    db.q("create table j1 (id int, a text)");
    db.q("create table j2 (id int, b text)");
    db.q("insert into j1 values (1, 'a1'), (2, 'a2')");
    db.q("insert into j2 values (2, 'b2'), (3, 'b3')");
    assert_eq!(db.q("select * from j1 join j2 using (id)"), "2|a2|b2");
    assert_eq!(
        db.q("select * from j1 full join j2 using (id) order by id"),
        "1|a1|,2|a2|b2,3||b3"
    );
    assert_eq!(
        db.q("select id, j1.id, j2.id from j1 right join j2 using (id) order by 1"),
        "2|2|2,3||3"
    );
    assert_eq!(
        db.q("select * from j1 natural left join j2 order by id"),
        "1|a1|,2|a2|b2"
    );
    assert_eq!(
        db.q("select distinct on (k) k, v from (values (1, 5), (1, 3), (2, 7), (2, 1)) x(k, v) order by k, v desc"),
        "1|5,2|7"
    );
    assert_eq!(
        db.q("select string_agg(name, ',' order by name desc) from e"),
        "dan,cid,bob,ann"
    );
    assert_eq!(
        db.q("select count(distinct dept_id), count(*) filter (where salary > 85) from e"),
        "2|2"
    );
}

#[test]
fn foreign_keys_restrict_referenced_rows() {
    let mut db = Db::new("fk");
    db.q("create table fp (id int primary key)");
    db.q("create table fc (id int, p int references fp)");
    db.q("insert into fp values (1), (2)");
    db.q("insert into fc values (1, 1)");
    let (code, msg) = db.err("delete from fp where id = 1");
    assert_eq!(code, "23503");
    assert_eq!(
        msg,
        "update or delete on table \"fp\" violates foreign key constraint \"fc_p_fkey\" on table \"fc\""
    );
    assert_eq!(db.err("update fp set id = 3 where id = 1").0, "23503");
    db.q("update fp set id = 1 where id = 1");
    db.q("delete from fp where id = 2");
    db.q("create table fc2 (p int)");
    db.q("insert into fc2 values (9)");
    assert_eq!(
        db.err("alter table fc2 add foreign key (p) references fp (id)")
            .0,
        "23503"
    );
}

#[test]
fn expression_forms_sqlparser_lacks() {
    // Expected values from PostgreSQL 15.
    let mut db = setup("exprforms");
    assert_eq!(
        db.q("select 1 between symmetric 2 and 0, 1 not between symmetric 2 and 0, 3 between asymmetric 2 and 4"),
        "t|f|t"
    );
    assert_eq!(
        db.q("select name from e where salary between symmetric 95 and (select 85) order by 1"),
        "bob"
    );
    assert_eq!(db.q("select - 5 ^ 2, - 2 ^ 3 ^ 2, -(5 ^ 2)"), "25|64|-25");
    assert_eq!(
        db.q("select name from e where dept_id is distinct from 1 order by 1"),
        "cid,dan"
    );
    assert_eq!(
        db.q("select null is not distinct from null, 1 is distinct from null, 1.0 is not distinct from 1"),
        "t|t|t"
    );
    assert_eq!(
        db.q("select row(1, null) is null, row(null, null) is null, (1, 2) is not null"),
        "f|t|t"
    );
    assert_eq!(
        db.q("select interval '1 day' / 3, |/ 16, @ -5, ~5"),
        "08:00:00|4|5|-6"
    );
    assert_eq!(
        db.q("select 'abcdef'::varchar(3), varchar(3) 'abcdef'"),
        "abc|abc"
    );
    assert_eq!(
        db.q(
            "select (1, null) < (2, 1), (null, 1) < (1, 2), (1, 2) <= (1, 2), (1, null) <> (2, 2)"
        ),
        "t||t|t"
    );
    assert_eq!(db.err("select (1, 2) = (1, 2, 3)").0, "42601");
    db.q("create table v (s varchar(3))");
    assert_eq!(db.err("insert into v values ('abcd')").0, "22001");
}
