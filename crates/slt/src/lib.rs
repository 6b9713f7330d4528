//! Keel's sqllogictest corpus runner (`tests/slt/*.slt`).
//!
//! Two modes over the same files:
//! - **complete** (against PostgreSQL 15): every `statement` / `query` record is run and its
//!   expectation rewritten from what PostgreSQL returned — result rows, affected-row counts
//!   for `statement count`, and for errors the SQLSTATE (`statement error (22012)`). This is
//!   sqllogictest's override mode, except that errors are always recorded by SQLSTATE, never
//!   by message text.
//! - **run** (against keel): every record is checked; records under `skipif keel` are counted
//!   as skipped with the reason written in the `# keel: ...` comment above them, and a run
//!   reports records, passes, skips (with reasons) and failures per file.
//!
//! Each file runs in one session (plus any named `connection`s), top to bottom.

mod db;

pub use db::{PgDb, RECORD_TIMEOUT, SltError, render_value};

use sqllogictest::{
    Condition, DefaultColumnType, ExpectedError, QueryExpect, Record, RecordOutput, Runner,
    StatementExpect, default_normalizer, update_record_with_output,
};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The label keel runs under (`skipif keel`).
pub const KEEL: &str = "keel";
/// The label PostgreSQL runs under (`onlyif postgres` is never needed, but it exists).
pub const POSTGRES: &str = "postgres";

/// `tests/slt` in the workspace.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/slt")
}

/// The corpus files, sorted by name.
pub fn corpus_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "slt"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Results are compared exactly, row by row (values joined by one space): sqllogictest's
/// default validator collapses whitespace, which would hide padding bugs (char(n), lpad).
pub fn exact_validator(
    _normalizer: sqllogictest::Normalizer,
    actual: &[Vec<String>],
    expected: &[String],
) -> bool {
    actual.len() == expected.len()
        && actual
            .iter()
            .zip(expected)
            .all(|(row, line)| row.join(" ") == *line)
}

/// Only the number of result columns is checked: the simple protocol carries no type OIDs,
/// and the type letters in the files are documentation.
#[allow(clippy::ptr_arg)] // the signature is sqllogictest's ColumnTypeValidator
pub fn column_count_validator(
    actual: &Vec<DefaultColumnType>,
    expected: &Vec<DefaultColumnType>,
) -> bool {
    actual.len() == expected.len()
}

fn new_runner(
    conn_str: &str,
    label: &str,
) -> Runner<PgDb, impl sqllogictest::MakeConnection<Conn = PgDb>> {
    let (c, l) = (conn_str.to_string(), label.to_string());
    let mut runner = Runner::new(move || {
        let (c, l) = (c.clone(), l.clone());
        async move { PgDb::connect(&c, &l).await }
    });
    runner.add_label(label);
    runner.with_validator(exact_validator);
    runner.with_column_validator(column_count_validator);
    runner
}

/// A record skipped on keel, and why.
#[derive(Debug, Clone)]
pub struct Skip {
    pub line: u32,
    pub reason: String,
}

/// The outcome of running one file.
#[derive(Debug, Clone, Default)]
pub struct FileReport {
    pub name: String,
    /// `statement` and `query` records in the file.
    pub records: usize,
    pub passed: usize,
    pub skipped: Vec<Skip>,
    pub failures: Vec<String>,
}

fn conditions(record: &Record<DefaultColumnType>) -> Option<(&[Condition], u32)> {
    match record {
        Record::Statement {
            conditions, loc, ..
        }
        | Record::Query {
            conditions, loc, ..
        } => Some((conditions, loc.line())),
        _ => None,
    }
}

fn skipped_for(conds: &[Condition], label: &str) -> bool {
    conds.iter().any(|c| match c {
        Condition::SkipIf { label: l } => l == label,
        Condition::OnlyIf { label: l } => l != label,
    })
}

/// The reason given in a `# keel: <reason>` comment line.
fn keel_reason(record: &Record<DefaultColumnType>) -> Option<String> {
    match record {
        Record::Comment(lines) => lines
            .iter()
            .rev()
            .find_map(|l| l.trim().strip_prefix("keel:").map(|r| r.trim().to_string())),
        _ => None,
    }
}

/// Runs one file against the server at `conn_str` as engine `label`; never panics on a
/// failing record (it is reported and the file goes on).
pub async fn run_file(conn_str: &str, label: &str, path: &Path) -> FileReport {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut report = FileReport {
        name: name.clone(),
        ..FileReport::default()
    };
    let records = match sqllogictest::parse_file::<DefaultColumnType>(path) {
        Ok(r) => r,
        Err(e) => {
            report.failures.push(format!("{name}: parse error: {e}"));
            return report;
        }
    };
    let mut runner = new_runner(conn_str, label);
    let mut reason: Option<String> = None;
    for record in records {
        if let Some(r) = keel_reason(&record) {
            reason = Some(r);
            continue;
        }
        let Some((conds, line)) = conditions(&record) else {
            if !matches!(record, Record::Condition(_)) {
                reason = None;
            }
            runner_control(&mut runner, record).await;
            continue;
        };
        report.records += 1;
        let skip = skipped_for(conds, label);
        if skip {
            let why = reason
                .take()
                .unwrap_or_else(|| "(no `# keel:` reason given)".to_string());
            report.skipped.push(Skip { line, reason: why });
            continue;
        }
        reason = None;
        match runner.run_async(record).await {
            Ok(_) => report.passed += 1,
            Err(e) => report.failures.push(format!("{}", e.display(false))),
        }
    }
    runner.shutdown_async().await;
    report
}

/// Non-SQL records (`connection`, `control`, `sleep`, ...) still go through the runner.
async fn runner_control(
    runner: &mut Runner<PgDb, impl sqllogictest::MakeConnection<Conn = PgDb>>,
    record: Record<DefaultColumnType>,
) {
    if matches!(
        record,
        Record::Comment(_) | Record::Newline | Record::Condition(_)
    ) {
        return;
    }
    let _ = runner.run_async(record).await;
}

/// The expectation a record gets from what the oracle returned: errors by SQLSTATE,
/// everything else as sqllogictest's override mode writes it.
fn completed(
    record: &Record<DefaultColumnType>,
    output: &RecordOutput<DefaultColumnType>,
) -> Result<Record<DefaultColumnType>, String> {
    let error = match output {
        RecordOutput::Statement { error: Some(e), .. }
        | RecordOutput::Query { error: Some(e), .. } => Some(e),
        _ => None,
    };
    if let Some(e) = error {
        let code = e
            .downcast_ref::<SltError>()
            .and_then(|e| e.sqlstate.clone())
            .ok_or_else(|| format!("error without SQLSTATE: {e}"))?;
        let expect = ExpectedError::SqlState(code);
        let mut r = record.clone();
        match &mut r {
            Record::Statement { expected, .. } => *expected = StatementExpect::Error(expect),
            Record::Query { expected, .. } => *expected = QueryExpect::Error(expect),
            _ => {}
        }
        return Ok(r);
    }
    Ok(update_record_with_output(
        record,
        output,
        " ",
        exact_validator,
        default_normalizer,
        column_count_validator,
    )
    .unwrap_or_else(|| record.clone()))
}

/// Regenerates the expectations of `path` from the server at `conn_str` (PostgreSQL 15) and
/// rewrites the file in place. Returns the number of statement/query records.
pub async fn complete_file(conn_str: &str, path: &Path) -> Result<usize, String> {
    let records = sqllogictest::parse_file::<DefaultColumnType>(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut runner = new_runner(conn_str, POSTGRES);
    let mut out = String::new();
    let mut n = 0;
    for record in records {
        if matches!(record, Record::Injected(_)) {
            continue;
        }
        let new = if conditions(&record).is_some() {
            n += 1;
            let output = runner.apply_record(record.clone()).await;
            completed(&record, &output).map_err(|e| format!("{}: {e}", path.display()))?
        } else {
            if !matches!(
                record,
                Record::Comment(_) | Record::Newline | Record::Condition(_)
            ) {
                runner.apply_record(record.clone()).await;
            }
            record
        };
        let _ = writeln!(out, "{new}");
    }
    runner.shutdown_async().await;
    // Each record prints with its own trailing newline; keep exactly one at the end.
    let text = out.trim_end_matches('\n').to_string() + "\n";
    std::fs::write(path, text).map_err(|e| format!("write {}: {e}", path.display()))?;
    Ok(n)
}

/// The run's summary: per file records / passed / skipped / failed, then every skip with its
/// reason (grouped), then the failures.
pub fn summary(reports: &[FileReport]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<20} {:>8} {:>8} {:>8} {:>8}",
        "file", "records", "passed", "skipped", "failed"
    );
    let (mut r, mut p, mut k, mut f) = (0, 0, 0, 0);
    for rep in reports {
        let _ = writeln!(
            s,
            "{:<20} {:>8} {:>8} {:>8} {:>8}",
            rep.name,
            rep.records,
            rep.passed,
            rep.skipped.len(),
            rep.failures.len()
        );
        r += rep.records;
        p += rep.passed;
        k += rep.skipped.len();
        f += rep.failures.len();
    }
    let _ = writeln!(s, "{:<20} {r:>8} {p:>8} {k:>8} {f:>8}", "total");
    if k > 0 {
        let _ = writeln!(s, "\nskipped on keel:");
        for rep in reports {
            let mut reasons: Vec<(String, Vec<u32>)> = Vec::new();
            for sk in &rep.skipped {
                match reasons.iter_mut().find(|(why, _)| *why == sk.reason) {
                    Some((_, lines)) => lines.push(sk.line),
                    None => reasons.push((sk.reason.clone(), vec![sk.line])),
                }
            }
            for (why, lines) in reasons {
                let lines: Vec<String> = lines.iter().map(u32::to_string).collect();
                let _ = writeln!(s, "  {}:{} — {why}", rep.name, lines.join(","));
            }
        }
    }
    if f > 0 {
        let _ = writeln!(s, "\nfailures:");
        for rep in reports {
            for fail in &rep.failures {
                let _ = writeln!(s, "{fail}\n");
            }
        }
    }
    let _ = writeln!(s, "{p} passed, {f} failed, {k} skipped");
    s
}
