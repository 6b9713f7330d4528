//! EXPLAIN as PostgreSQL 15 prints it, for plans whose choice is clear-cut.
//!
//! The corpus is `tests/explain/queries.sql` (one `-- query: name` block per query) over the
//! schema in `tests/explain/schema.sql`, loaded and VACUUM ANALYZEd on the server under test
//! and on a PostgreSQL 15 oracle. Expected output is whatever the oracle prints at test time.
//!
//! - `explain_plans_match_postgres`: `EXPLAIN (COSTS OFF)` text must be identical.
//! - `explain_analyze_matches_postgres`: `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)`
//!   (each statement in a transaction that is rolled back, so the DML queries change nothing)
//!   must give the same lines, except `Buffers:` lines and `Planning:` sub-blocks, which are
//!   dropped, and the kB figures of sort, hash and aggregate memory and disk use, which are
//!   masked: they measure PostgreSQL's allocator and tuple layout, not the plan or its rows.
//!   Node names, row counts, loops, `Rows Removed by ...`, `Heap Fetches`, sort methods,
//!   hash buckets and batches, and trigger lines are all compared.
//! - `seed_004_sort_explain_matches_postgres`: the sort seed's
//!   `explain (analyze,verbose,timing,costs,buffers) select * from test order by info`
//!   over a scaled-down `test` table gives the same lines with every number masked.
//!
//! Both sessions run with `max_parallel_workers_per_gather = 0`, `jit = off` (plans are not
//! parallel) and `work_mem = '4MB'`; a setting the server under test rejects is reported, and
//! the comparison runs without it. Every mismatch is collected, and the failure lists, per
//! query, both texts. `tests/explain/README.md` lists the corpus with PostgreSQL 15's plans.
//! Queries keel does not print as PostgreSQL does yet are listed, per form and with the
//! reason, in `tests/explain/known_differences.txt`; every other query must match, a listed
//! one must still differ (so the list only shrinks), and at least 40 must match in each form.
//! `KEEL_E2E_TARGET=pg` runs the tests PostgreSQL against PostgreSQL, where all must match.

use keel_e2e::Server;
use keel_e2e::client::{self, connect, within};
use std::path::{Path, PathBuf};
use tokio_postgres::{Client, SimpleQueryMessage};

/// One corpus entry: its name and its statement (without the final semicolon).
struct Query {
    name: String,
    sql: String,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/explain")
}

/// The `-- query: name` blocks of queries.sql, in file order. Other `--` lines are comments.
fn load_queries() -> Vec<Query> {
    let path = corpus_dir().join("queries.sql");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut queries: Vec<Query> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("-- query:") {
            queries.push(Query {
                name: name.trim().to_string(),
                sql: String::new(),
            });
        } else if line.trim_start().starts_with("--") {
            continue;
        } else if let Some(q) = queries.last_mut() {
            q.sql.push_str(line);
            q.sql.push('\n');
        }
    }
    for q in &mut queries {
        q.sql = q.sql.trim().trim_end_matches(';').trim().to_string();
        assert!(!q.sql.is_empty(), "query {} has no statement", q.name);
    }
    let mut names: Vec<&str> = queries.iter().map(|q| q.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(
        names.len(),
        queries.len(),
        "duplicate query names in queries.sql"
    );
    assert!(
        queries.len() >= 45,
        "the corpus must keep at least 45 queries"
    );
    queries
}

/// Creates and loads the corpus schema through psql (which sends one statement at a time, as
/// VACUUM requires), stopping at the first error.
fn load_schema(server: &Server, file: &str) {
    let path = corpus_dir().join(file);
    let path = path.to_string_lossy();
    let out = server.psql(&["-q", "-v", "ON_ERROR_STOP=1", "-f", &path]);
    assert!(
        out.success(),
        "{:?}: loading {file} failed:\n{out}",
        server.engine
    );
}

/// The settings both sessions run with: no parallel plans, no JIT lines in ANALYZE output, and
/// PostgreSQL's default work_mem stated, since sort methods and hash batches depend on it.
const SESSION_SETTINGS: &[&str] = &[
    "set max_parallel_workers_per_gather = 0",
    "set jit = off",
    "set work_mem = '4MB'",
];

/// A session on `server` with [`SESSION_SETTINGS`] applied. The settings the server rejects
/// are returned (`setting: error`), to be reported once; the comparison still runs.
async fn session(server: &Server) -> (Client, Vec<String>) {
    let c = connect(&server.conn_str()).await;
    let mut rejected = Vec::new();
    for s in SESSION_SETTINGS {
        if let Err(e) = run(&c, s).await {
            rejected.push(format!("{s}: {e}"));
        }
    }
    (c, rejected)
}

/// Panics if PostgreSQL rejected a session setting: the comparison would mean nothing.
fn require_oracle_settings(rejected: &[String]) {
    assert!(
        rejected.is_empty(),
        "PostgreSQL 15 rejected session settings: {rejected:?}"
    );
}

/// The failure-message line for settings the server under test rejected.
fn rejected_note(engine: keel_e2e::Engine, rejected: &[String]) -> String {
    if rejected.is_empty() {
        String::new()
    } else {
        format!(
            "{engine:?} rejected session settings (compared without them):\n{}\n\n",
            indent(&rejected.join("\n"))
        )
    }
}

/// The rows of `sql` (one text column each: EXPLAIN's lines) joined by newlines, or the
/// server's error as `ERROR <sqlstate>: <message>`.
async fn run(c: &Client, sql: &str) -> Result<String, String> {
    match within(sql, c.simple_query(sql)).await {
        Ok(msgs) => Ok(msgs
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => Some(
                    (0..r.len())
                        .map(|i| r.get(i).unwrap_or("NULL"))
                        .collect::<Vec<_>>()
                        .join("|"),
                ),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")),
        Err(e) => Err(match e.as_db_error() {
            Some(d) => format!("ERROR {}: {}", d.code().code(), d.message()),
            None => format!("ERROR (no SQLSTATE): {e}"),
        }),
    }
}

/// Runs `explain` inside a transaction that is rolled back, so EXPLAIN ANALYZE of a DML
/// statement leaves the tables as they were (and the next query sees the same data).
async fn run_rolled_back(c: &Client, explain: &str) -> Result<String, String> {
    run(c, "begin").await?;
    let out = run(c, explain).await;
    run(c, "rollback").await?;
    out
}

/// Drops `Buffers:` lines and `Planning:` sub-blocks (the `Planning:` line and the lines
/// indented deeper below it).
fn drop_buffers_and_planning(text: &str) -> Vec<String> {
    let mut kept = Vec::new();
    let mut planning_indent: Option<usize> = None;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        if let Some(i) = planning_indent {
            if indent > i {
                continue;
            }
            planning_indent = None;
        }
        let body = line.trim_start();
        if body == "Planning:" {
            planning_indent = Some(indent);
        } else if !body.starts_with("Buffers:") {
            kept.push(line.to_string());
        }
    }
    kept
}

/// Replaces every run of digits directly followed by `kB` with `N` (memory and disk figures).
fn mask_kb(line: &str) -> String {
    mask_digits(line, |rest| rest.starts_with("kB"))
}

/// Replaces every number (digits, with an optional fraction) with `N`.
fn mask_numbers(line: &str) -> String {
    mask_digits(line, |_| true)
}

/// Replaces each number in `line` (digits with an optional `.digits` fraction) with `N` when
/// `mask_if(rest_of_line_after_it)` says so.
fn mask_digits(line: &str, mask_if: impl Fn(&str) -> bool) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        let (before, from) = rest.split_at(start);
        out.push_str(before);
        let digits = |s: &str| s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let mut len = digits(from);
        // `0.011..1.5` is two numbers: a fraction needs a digit right after its dot.
        if from[len..].starts_with('.') && from[len + 1..].starts_with(|c: char| c.is_ascii_digit())
        {
            len += 1 + digits(&from[len + 1..]);
        }
        let (number, after) = from.split_at(len);
        // A number glued to a name (`order_lines_1`, `$0`) is part of the name: keep it.
        let in_word = before
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$');
        if !in_word && mask_if(after) {
            out.push('N');
        } else {
            out.push_str(number);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

fn normalize_analyze(text: &str) -> String {
    drop_buffers_and_planning(text)
        .iter()
        .map(|l| mask_kb(l))
        .collect::<Vec<_>>()
        .join("\n")
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The corpus queries whose plans keel does not print as PostgreSQL 15 does yet, for one
/// form (`plans` or `analyze`), with the reason: `tests/explain/known_differences.txt`, one
/// `form name: reason` per line.
fn known_differences(form: &str) -> Vec<(String, String)> {
    let path = corpus_dir().join("known_differences.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (head, reason) = l.split_once(':')?;
            let (f, name) = head.trim().split_once(' ')?;
            (f == form).then(|| (name.trim().to_string(), reason.trim().to_string()))
        })
        .collect()
}

/// The bar: at least this many corpus queries print exactly as on PostgreSQL 15, in
/// each form.
const MIN_MATCHING: usize = 40;

/// Runs `explain_prefix <query>` for every corpus query on both servers. Every query must print
/// what PostgreSQL 15 prints, except those listed for `form` in known_differences.txt, which
/// must still differ (a listed query that now matches fails the test until it is taken off the
/// list), and at least [`MIN_MATCHING`] queries must match. Against PostgreSQL itself
/// (`KEEL_E2E_TARGET=pg`) the list does not apply. `normalize` is applied to both outputs
/// before comparing.
fn compare_corpus(
    form: &str,
    explain_prefix: &str,
    rolled_back: bool,
    normalize: fn(&str) -> String,
) {
    let queries = load_queries();
    let (target, oracle) = (Server::start(&[]), Server::oracle(&[]));
    let known = match target.engine {
        keel_e2e::Engine::Keel => known_differences(form),
        keel_e2e::Engine::Pg => Vec::new(),
    };
    for (name, _) in &known {
        assert!(
            queries.iter().any(|q| &q.name == name),
            "known_differences.txt names {name}, which is not in the corpus"
        );
    }
    load_schema(&oracle, "schema.sql");
    load_schema(&target, "schema.sql");
    let rt = client::runtime();
    let (failures, rejected) = rt.block_on(async {
        let (t, rejected) = session(&target).await;
        let (o, o_rejected) = session(&oracle).await;
        require_oracle_settings(&o_rejected);
        let mut failures = Vec::new();
        for q in &queries {
            let explain = format!("{explain_prefix} {}", q.sql);
            let (want, got) = if rolled_back {
                (
                    run_rolled_back(&o, &explain).await,
                    run_rolled_back(&t, &explain).await,
                )
            } else {
                (run(&o, &explain).await, run(&t, &explain).await)
            };
            let want = match want {
                Ok(w) => normalize(&w),
                Err(e) => panic!("corpus query {} fails on PostgreSQL 15: {e}", q.name),
            };
            let got = match got {
                Ok(g) => normalize(&g),
                Err(e) => e,
            };
            if got != want {
                failures.push((
                    q.name.clone(),
                    format!(
                        "--- {}: {}\n  {:?}:\n{}\n  PostgreSQL 15:\n{}",
                        q.name,
                        q.sql,
                        target.engine,
                        indent(&got),
                        indent(&want)
                    ),
                ));
            }
        }
        (failures, rejected)
    });
    let matching = queries.len() - failures.len();
    eprintln!(
        "{explain_prefix}: {matching}/{} queries match PostgreSQL 15 ({} listed as known differences)",
        queries.len(),
        known.len()
    );
    let is_known = |name: &str| known.iter().any(|(n, _)| n == name);
    let unexpected: Vec<&str> = (failures.iter())
        .filter(|(name, _)| !is_known(name))
        .map(|(_, text)| text.as_str())
        .collect();
    let fixed: Vec<&str> = (known.iter())
        .filter(|(name, _)| !failures.iter().any(|(n, _)| n == name))
        .map(|(name, _)| name.as_str())
        .collect();
    assert!(
        unexpected.is_empty() && rejected.is_empty(),
        "{}{} of {} queries differ from PostgreSQL 15 under {explain_prefix} without being \
         listed in known_differences.txt:\n\n{}",
        rejected_note(target.engine, &rejected),
        unexpected.len(),
        queries.len(),
        unexpected.join("\n\n")
    );
    assert!(
        fixed.is_empty(),
        "these queries now match PostgreSQL 15 under {explain_prefix}: take them off \
         known_differences.txt ({form}): {fixed:?}"
    );
    assert!(
        matching >= MIN_MATCHING,
        "only {matching} corpus queries match PostgreSQL 15 under {explain_prefix}"
    );
}

#[test]
fn explain_plans_match_postgres() {
    compare_corpus("plans", "explain (costs off)", false, |s| s.to_string());
}

#[test]
fn explain_analyze_matches_postgres() {
    compare_corpus(
        "analyze",
        "explain (analyze, costs off, timing off, summary off)",
        true,
        normalize_analyze,
    );
}

/// The sort seed (004): its EXPLAIN, over its `test` table scaled down from 10M rows to
/// 100,000, still more than `work_mem` (4MB) holds, so the sort spills as in the seed.
#[test]
fn seed_004_sort_explain_matches_postgres() {
    let (target, oracle) = (Server::start(&[]), Server::oracle(&[]));
    load_schema(&oracle, "seed_004.sql");
    load_schema(&target, "seed_004.sql");
    let explain = "explain (analyze,verbose,timing,costs,buffers) select * from test order by info";
    let rt = client::runtime();
    let (got, want, rejected) = rt.block_on(async {
        let (t, rejected) = session(&target).await;
        let (o, o_rejected) = session(&oracle).await;
        require_oracle_settings(&o_rejected);
        let want = run(&o, explain)
            .await
            .unwrap_or_else(|e| panic!("PostgreSQL 15: {e}"));
        (run(&t, explain).await, want, rejected)
    });
    let want = seed_lines(&want);
    // The seed's plan shape, so that a change of the oracle's plan is noticed here.
    for needle in [
        "Sort  (cost=",
        "Sort Key: test.info",
        "Sort Method: external merge  Disk: NkB",
        "->  Seq Scan on public.test",
        "Output: id, info",
        "Buffers: shared hit=N",
        "Execution Time: N ms",
    ] {
        assert!(
            want.contains(needle),
            "PostgreSQL 15's plan lacks {needle:?}:\n{want}"
        );
    }
    let got = got.map(|g| seed_lines(&g)).unwrap_or_else(|e| e);
    assert!(
        got == want && rejected.is_empty(),
        "{}{explain} differs (numbers masked):\n  {:?}:\n{}\n  PostgreSQL 15:\n{}",
        rejected_note(target.engine, &rejected),
        target.engine,
        indent(&got),
        indent(&want)
    );
}

/// The seed EXPLAIN's lines with every number masked. The `Planning:` sub-block is dropped:
/// it counts the catalog pages PostgreSQL's planner touched, which depends on what its catalog
/// caches held, not on the statement. The nodes' own `Buffers:` lines are kept.
fn seed_lines(text: &str) -> String {
    let mut kept = Vec::new();
    let mut planning_indent: Option<usize> = None;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        if let Some(i) = planning_indent {
            if indent > i {
                continue;
            }
            planning_indent = None;
        }
        if line.trim_start() == "Planning:" {
            planning_indent = Some(indent);
            continue;
        }
        kept.push(mask_numbers(line));
    }
    kept.join("\n")
}

#[test]
fn masking_keeps_names_and_masks_figures() {
    assert_eq!(
        mask_kb("Sort Method: quicksort  Memory: 931kB"),
        "Sort Method: quicksort  Memory: NkB"
    );
    assert_eq!(
        mask_kb("Buckets: 1024  Batches: 1  Memory Usage: 12kB"),
        "Buckets: 1024  Batches: 1  Memory Usage: NkB"
    );
    assert_eq!(
        mask_numbers("->  Seq Scan on events events_1 (actual time=0.011..1.5 rows=100 loops=1)"),
        "->  Seq Scan on events events_1 (actual time=N..N rows=N loops=N)"
    );
    assert_eq!(
        mask_numbers("InitPlan 1 (returns $0)"),
        "InitPlan N (returns $0)"
    );
    let plan = "Sort\n  Sort Key: x\n  Buffers: shared hit=3\nPlanning:\n  Buffers: shared hit=9\nExecution Time: 1.0 ms";
    assert_eq!(
        drop_buffers_and_planning(plan),
        vec!["Sort", "  Sort Key: x", "Execution Time: 1.0 ms"]
    );
    assert_eq!(
        seed_lines(plan),
        "Sort\n  Sort Key: x\n  Buffers: shared hit=N\nExecution Time: N ms"
    );
}
