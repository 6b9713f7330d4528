//! Index-only scans and the visibility map, through EXPLAIN ANALYZE's `Heap Fetches`.
//!
//! After VACUUM every page of a freshly loaded table is all-visible: an index-only scan reads
//! no heap row. A change to a row (update, delete, insert, even one rolled back) clears its
//! page's bit, and the scan reads that page's rows from the heap again, seeing the change; the
//! next VACUUM sets the bit again. The map is not kept across a restart (crash or clean): the
//! planner then prices index-only scans as reading the heap, and answers stay the same, until
//! the next VACUUM.

use keel_e2e::Server;

const EXPLAIN: &str = "explain (analyze, costs off, timing off, summary off) ";

/// `Heap Fetches` of the index-only scan in `sql`'s plan (which must use one).
fn heap_fetches(s: &Server, sql: &str) -> u64 {
    let plan = s.query(&format!("{EXPLAIN}{sql}"));
    assert!(
        plan.contains("Index Only Scan"),
        "no index-only scan:\n{plan}"
    );
    let line = plan
        .lines()
        .find_map(|l| l.trim().strip_prefix("Heap Fetches: "))
        .unwrap_or_else(|| panic!("no Heap Fetches line:\n{plan}"));
    line.parse().expect("a count")
}

const COUNT_7: &str = "select count(*) from io where k = 7";

#[test]
fn heap_fetches_follow_the_visibility_map() {
    let mut s = Server::start(&[]);
    s.query(
        "create table io (id int primary key, k int, pad text); \
         insert into io select g, g % 100, repeat('x', 300) from generate_series(1, 20000) g; \
         create index io_k on io (k)",
    );
    s.query("vacuum analyze io");
    assert_eq!(s.query(COUNT_7), "200");
    assert_eq!(heap_fetches(&s, COUNT_7), 0, "all-visible after VACUUM");

    // A key change: the old entry stays (stale) and its page is no longer all-visible, so the
    // first scan reads the row from the heap and does not count it under its old key. No
    // snapshot needs the stale entry any more, so that scan removes it: the next one reads
    // nothing from the heap.
    s.query("update io set k = 1007 where id = 7");
    let after_update = heap_fetches(&s, COUNT_7);
    assert!(after_update >= 1, "the updated row's page is read");
    assert!(
        after_update < 20,
        "only the changed pages are read: {after_update}"
    );
    assert_eq!(s.query(COUNT_7), "199");
    assert_eq!(heap_fetches(&s, COUNT_7), 0, "the stale entry was removed");

    s.query("delete from io where id = 107");
    assert_eq!(s.query(COUNT_7), "198");
    s.query("begin; update io set k = 2007 where id = 207; rollback");
    assert_eq!(s.query(COUNT_7), "198");
    assert_eq!(s.query("select count(*) from io where k = 2007"), "0");
    s.query("insert into io values (20001, 7, 'new')");
    assert_eq!(s.query(COUNT_7), "199");

    s.query("vacuum io");
    assert_eq!(s.query(COUNT_7), "199");
    // The pages with the updated and deleted rows keep a redirect or an old version: they
    // stay out of the map. The others are back in it.
    let after_vacuum = heap_fetches(&s, COUNT_7);
    assert!(
        after_vacuum <= after_update + 2,
        "{after_vacuum} heap fetches after VACUUM"
    );

    // The map starts empty after a crash: an index-only scan would read every row from the
    // heap, so the planner prices it so (here a bitmap scan wins); same answer. The next
    // VACUUM fills the map again.
    s.crash();
    s.restart();
    assert_eq!(s.query(COUNT_7), "199");
    let plan = s.query(&format!("explain {COUNT_7}"));
    assert!(!plan.contains("Index Only Scan"), "{plan}");
    s.query("vacuum io");
    assert_eq!(heap_fetches(&s, COUNT_7), after_vacuum);
    assert_eq!(s.query(COUNT_7), "199");
}
