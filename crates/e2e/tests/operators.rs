//! Operator resolution gaps found while writing the other end-to-end tests, compared with
//! PostgreSQL 15 through psql.

use keel_e2e::Server;

const SQL: &str = "select 'l' || 1, 2 || 'r', 'n' || null::int is null, 'v' || 1.5";

#[test]

fn concat_of_unknown_literal_and_non_text() {
    let pg = Server::oracle(&[]);
    let want = pg.query(SQL);
    assert_eq!(want, "l1|2r|t|v1.5");
    let srv = Server::start(&[]);
    let out = srv.psql(&["-A", "-t", "-c", SQL]);
    assert!(out.success(), "{out}");
    assert_eq!(out.stdout.trim(), want);
}
