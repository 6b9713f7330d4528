//! `keel-slt`: run the sqllogictest corpus against a started keel, or regenerate its
//! expectations on a started PostgreSQL 15.
//!
//! ```text
//! keel-slt [--port N] [--host H] [--label keel|postgres] [FILE.slt ...]   # run mode
//! keel-slt --complete --port N [FILE.slt ...]                             # override mode (PG 15)
//! ```
//! Without files, every `tests/slt/*.slt` is used. Run mode prints the summary (records,
//! passes, skips with reasons, failures) and exits 1 on any failure. Complete mode gives each
//! file a fresh database `slt_<file stem>` so expectations do not depend on file order.

use keel_slt::{FileReport, KEEL, complete_file, corpus_dir, corpus_files, run_file, summary};
use sqllogictest::AsyncDB;
use std::path::PathBuf;
use std::process::ExitCode;

struct Args {
    complete: bool,
    host: String,
    port: u16,
    label: String,
    files: Vec<PathBuf>,
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: keel-slt [--complete] [--host H] [--port N] [--label keel|postgres] [FILE.slt ...]"
    );
    ExitCode::from(2)
}

fn parse_args() -> Option<Args> {
    let mut a = Args {
        complete: false,
        host: "127.0.0.1".into(),
        port: 5433,
        label: KEEL.into(),
        files: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--complete" | "--override" => a.complete = true,
            "--host" => a.host = it.next()?,
            "--port" | "-p" => a.port = it.next()?.parse().ok()?,
            "--label" => a.label = it.next()?,
            "-h" | "--help" => return None,
            f if !f.starts_with('-') => a.files.push(PathBuf::from(f)),
            _ => return None,
        }
    }
    if a.files.is_empty() {
        a.files = corpus_files(&corpus_dir());
    }
    Some(a)
}

fn conn_str(a: &Args, db: &str) -> String {
    format!(
        "host={} port={} user=postgres dbname={db} connect_timeout=30",
        a.host, a.port
    )
}

async fn complete(a: &Args) -> Result<(), String> {
    let mut admin = keel_slt::PgDb::connect(&conn_str(a, "postgres"), "postgres")
        .await
        .map_err(|e| e.to_string())?;
    for f in &a.files {
        let stem = f
            .file_stem()
            .map(|s| {
                s.to_string_lossy()
                    .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
            })
            .unwrap_or_default();
        let db = format!("slt_{stem}");
        for sql in [
            format!("DROP DATABASE IF EXISTS {db}"),
            format!("CREATE DATABASE {db}"),
        ] {
            admin.run(&sql).await.map_err(|e| format!("{sql}: {e}"))?;
        }
        let n = complete_file(&conn_str(a, &db), f).await?;
        println!("{}: {n} records regenerated", f.display());
    }
    Ok(())
}

async fn run(a: &Args) -> Vec<FileReport> {
    let mut reports = Vec::new();
    for f in &a.files {
        reports.push(run_file(&conn_str(a, "postgres"), &a.label, f).await);
    }
    reports
}

fn main() -> ExitCode {
    let Some(args) = parse_args() else {
        return usage();
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    if args.complete {
        match rt.block_on(complete(&args)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("keel-slt --complete: {e}");
                ExitCode::FAILURE
            }
        }
    } else {
        let reports = rt.block_on(run(&args));
        print!("{}", summary(&reports));
        if reports.iter().all(|r| r.failures.is_empty()) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }
}
