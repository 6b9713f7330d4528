//! The SQL comparison corpus (tests/sql/*.sql): each `-- case:` block is run through psql on
//! the server under test and on PostgreSQL 15, and the outputs must match. All mismatching
//! cases are reported together, with how many matched.

use keel_e2e::Server;
use std::path::Path;

struct Case {
    file: String,
    name: String,
    body: String,
}

fn load_cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sql");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{e}"));
        let file = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut cur: Option<Case> = None;
        for line in text.lines() {
            if let Some(name) = line.strip_prefix("-- case:") {
                cases.extend(cur.take());
                cur = Some(Case {
                    file: file.clone(),
                    name: name.trim().to_string(),
                    body: String::new(),
                });
            } else if let Some(c) = cur.as_mut() {
                c.body.push_str(line);
                c.body.push('\n');
            }
        }
        cases.extend(cur);
    }
    assert!(!cases.is_empty(), "no cases in {}", dir.display());
    cases
}

/// LOCATION names PostgreSQL's C source file and line: not part of the contract.
fn normalize(out: &str) -> String {
    out.lines()
        .filter(|l| !l.starts_with("LOCATION:"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn first_diff(got: &str, want: &str) -> String {
    let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    let i = g
        .iter()
        .zip(&w)
        .position(|(a, b)| a != b)
        .unwrap_or(g.len().min(w.len()));
    let lo = i.saturating_sub(3);
    let show = |v: &[&str]| v[lo.min(v.len())..(i + 4).min(v.len())].join("\n");
    format!(
        "first difference at output line {}\n  keel:\n{}\n  postgres:\n{}",
        i + 1,
        show(&g),
        show(&w)
    )
}

#[test]
fn sql_corpus_matches_postgres() {
    let (k, p) = (Server::start(&[]), Server::oracle(&[]));
    let cwd = k.scratch().to_path_buf();
    let cases = load_cases();
    let mut failures = Vec::new();
    for c in &cases {
        let input = format!("\\set VERBOSITY verbose\n{}", c.body);
        let args = ["-a"];
        let got = normalize(&k.psql_merged(&args, &input, &cwd).stdout);
        let want = normalize(&p.psql_merged(&args, &input, &cwd).stdout);
        if got != want {
            failures.push(format!(
                "{}:{}: {}",
                c.file,
                c.name,
                first_diff(&got, &want)
            ));
        }
    }
    eprintln!(
        "sql corpus: {}/{} cases match PostgreSQL 15",
        cases.len() - failures.len(),
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from PostgreSQL 15:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
