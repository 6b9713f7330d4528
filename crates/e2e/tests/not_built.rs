//! Clauses keel does not carry out answer 0A000 instead of being accepted and ignored: a
//! statement that PostgreSQL would run differently must not succeed on keel.

use keel_e2e::Server;

/// The SQLSTATE psql reports for `sql` after `setup` (VERBOSITY verbose), or "ok".
fn outcome(srv: &Server, setup: &str, sql: &str) -> String {
    srv.psql(&["-v", "VERBOSITY=verbose", "-c", setup, "-c", sql])
        .first_sqlstate()
}

/// Foreign keys: MATCH FULL and deferrable checks are not built; the referential actions
/// and MATCH SIMPLE are (their behaviour is compared with PostgreSQL's in
/// tests/sql/foreign_keys.sql).
#[test]
fn foreign_key_clauses_that_are_not_built_answer_0a000() {
    let keel = Server::start(&[]);
    let setup = "create table if not exists nb_parent (i int primary key)";
    let cases = [
        (
            "create table nb_c1 (i int, foreign key (i) references nb_parent match full)",
            "0A000",
        ),
        (
            "create table nb_c2 (i int references nb_parent deferrable initially deferred)",
            "0A000",
        ),
        (
            "create table nb_c3 (i int references nb_parent deferrable)",
            "0A000",
        ),
        (
            "create table nb_c4 (i int references nb_parent on delete cascade)",
            "ok",
        ),
        (
            "create table nb_c5 (i int, foreign key (i) references nb_parent match simple not deferrable)",
            "ok",
        ),
        (
            "alter table nb_c5 add constraint nb_x foreign key (i) references nb_parent match full",
            "0A000",
        ),
    ];
    for (sql, want) in cases {
        assert_eq!(outcome(&keel, setup, sql), want, "{sql}");
    }
}
