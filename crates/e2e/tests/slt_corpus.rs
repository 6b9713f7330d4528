//! The sqllogictest corpus (`tests/slt/*.slt`) against keel: each file on a fresh server
//! started by the e2e harness (`KEEL_BIN`, `KEEL_E2E_TARGET=pg` to run it on PostgreSQL 15
//! instead). Prints the summary with every skip and its reason; fails on any failed record.

use keel_e2e::{Engine, Server};
use keel_slt::{KEEL, POSTGRES, corpus_dir, corpus_files, run_file, summary};

#[test]
fn slt_corpus() {
    let files = corpus_files(&corpus_dir());
    assert!(
        !files.is_empty(),
        "no .slt files in {}",
        corpus_dir().display()
    );
    let rt = keel_e2e::client::runtime();
    let mut reports = Vec::new();
    for f in &files {
        let srv = Server::start(&[]);
        let label = match srv.engine {
            Engine::Keel => KEEL,
            Engine::Pg => POSTGRES,
        };
        reports.push(rt.block_on(run_file(&srv.conn_str(), label, f)));
    }
    let text = summary(&reports);
    println!("{text}");
    let failed: usize = reports.iter().map(|r| r.failures.len()).sum();
    assert_eq!(failed, 0, "sqllogictest corpus failures:\n{text}");
}
