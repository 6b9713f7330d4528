//! Function bodies from PostgreSQL's regression test `src/test/regress/sql/plpgsql.sql`
//! (the dollar-quoted ones), each marked with what PostgreSQL 15 does at CREATE FUNCTION:
//! `accept`, `reject` (a grammar error this parser must also report) or `reject-semantic`
//! (refused for a reason that needs the catalog, the function's signature or the SQL
//! parser: an unknown variable, RETURN with a value in a void function, a malformed query).

use keel_pl::parse_function_body;

struct Case<'a> {
    name: &'a str,
    expect: &'a str,
    body: &'a str,
}

fn cases(data: &str) -> Vec<Case<'_>> {
    let mut out = Vec::new();
    let mut rest = data;
    while let Some(start) = rest.find("#### ") {
        let after = &rest[start + 5..];
        let header_end = after.find('\n').unwrap_or(after.len());
        let mut header = after[..header_end].split_whitespace();
        let name = header.next().unwrap_or("");
        let expect = header.next().unwrap_or("");
        let body_and_more = &after[(header_end + 1).min(after.len())..];
        let body_end = body_and_more
            .find("\n#### ")
            .map_or(body_and_more.len(), |i| i + 1);
        out.push(Case {
            name,
            expect,
            body: &body_and_more[..body_end],
        });
        rest = &body_and_more[body_end..];
    }
    out
}

#[test]
fn regression_bodies() {
    let data = include_str!("data/plpgsql_regress.txt");
    let cases = cases(data);
    let mut failures = Vec::new();
    let (mut accepted, mut rejected, mut semantic_parsed) = (0, 0, 0);
    for c in &cases {
        let r = parse_function_body(c.body);
        match (c.expect, &r) {
            ("accept", Ok(_)) => accepted += 1,
            ("reject", Err(_)) => rejected += 1,
            ("reject-semantic", Ok(_)) => semantic_parsed += 1,
            _ => failures.push(format!("{} ({}): {:?}", c.name, c.expect, r.err())),
        }
    }
    eprintln!(
        "{} bodies: {accepted} accepted as PostgreSQL does, {rejected} rejected as PostgreSQL \
         does, {semantic_parsed} left to later checks",
        cases.len()
    );
    assert!(cases.len() > 60);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
