//! psql against the server under test, compared with what the same psql command prints
//! against a throwaway PostgreSQL 15: error position reports, `\timing`, several statements
//! on one line, `\copy` round trips (text and csv), and server-side COPY to and from files.

use keel_e2e::{CmdOutput, Server};
use std::path::Path;

fn pair() -> (Server, Server) {
    (Server::start(&[]), Server::oracle(&[]))
}

/// Runs the same psql invocation (stdin `input`, stdout+stderr merged) in `cwd` on both.
fn both(
    target: &Server,
    oracle: &Server,
    args: &[&str],
    input: &str,
    cwd: &Path,
) -> (CmdOutput, CmdOutput) {
    (
        target.psql_merged(args, input, cwd),
        oracle.psql_merged(args, input, cwd),
    )
}

fn assert_same(what: &str, got: &str, want: &str) {
    assert!(
        got == want,
        "{what}: output differs from PostgreSQL 15\n--- keel ---\n{got}\n--- postgres ---\n{want}\n"
    );
}

fn scrub_timing(s: &str) -> String {
    s.lines()
        .map(|l| match l.strip_prefix("Time: ") {
            Some(_) => "Time: <ms>".to_string(),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn errors_report_position_like_postgres() {
    let (k, p) = pair();
    let cwd = k.scratch().to_path_buf();
    for sql in [
        "select * from nosuch;",
        "select 1 +;",
        "selec 1;",
        "select 1,\n  2 +;",
    ] {
        // Through -c (no "psql:<stdin>" prefix) and through stdin.
        let (a, b) = both(&k, &p, &["-c", sql], "", &cwd);
        assert_same(&format!("-c {sql:?}"), &a.stdout, &b.stdout);
        assert_eq!(a.code, b.code, "exit status for -c {sql:?}");
        let (a, b) = both(&k, &p, &[], sql, &cwd);
        assert_same(&format!("stdin {sql:?}"), &a.stdout, &b.stdout);
        assert!(
            b.stdout.contains("ERROR:"),
            "oracle printed no error for {sql:?}"
        );
    }
    // The session survives errors: the next statement on the same connection works.
    let (a, b) = both(
        &k,
        &p,
        &[],
        "select * from nosuch;\nselect 42 as answer;\n",
        &cwd,
    );
    assert_same("statement after an error", &a.stdout, &b.stdout);
}

#[test]
fn timing_output() {
    let (k, p) = pair();
    let cwd = k.scratch().to_path_buf();
    let input = "\\timing on\nselect 1 as one;\nselect 'x' as ex;\n\\timing off\nselect 2;\n";
    let (a, b) = both(&k, &p, &[], input, &cwd);
    assert!(a.success(), "{a}");
    assert_eq!(a.stdout.matches("Time: ").count(), 2, "{a}");
    assert_same(
        "\\timing",
        &scrub_timing(&a.stdout),
        &scrub_timing(&b.stdout),
    );
}

#[test]
fn several_statements_on_one_line() {
    let (k, p) = pair();
    let cwd = k.scratch().to_path_buf();
    let (a, b) = both(&k, &p, &["-c", "select 1; select 2;"], "", &cwd);
    assert_same("-c 'select 1; select 2;'", &a.stdout, &b.stdout);
    let (a, b) = both(
        &k,
        &p,
        &[],
        "select 1; select 2;\nselect 3 as c; select 'four' as d;\n",
        &cwd,
    );
    assert_same("stdin multi-statement", &a.stdout, &b.stdout);
    let (a, b) = both(
        &k,
        &p,
        &["-A", "-t", "-c", "select 1; select 1/0; select 3;"],
        "",
        &cwd,
    );
    assert_same("error in the middle of a -c string", &a.stdout, &b.stdout);
}

const COPY_SETUP: &str = "create table t (id int not null, name text, note text);\n\
insert into t values (1, 'plain', 'x'), (2, E'tab\\there', null), (3, E'new\\nline', 'a,b'),\n\
  (4, E'back\\\\slash', '\"q\"'), (5, '', E'caf\\u00e9'), (6, null, ''), (7, ' lead', 'trail ');\n\
create table t_text (id int not null, name text, note text);\n\
create table t_csv (id int not null, name text, note text);\n\
create table t_csvh (id int not null, name text, note text);\n";

#[test]
fn copy_round_trips_text_and_csv() {
    let (k, p) = pair();
    // Separate working dirs: each engine's files are written by psql (the client), then compared.
    let (kd, pd) = (k.scratch().join("copy"), p.scratch().join("copy"));
    for d in [&kd, &pd] {
        std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
    }
    let (a, b) = (
        k.psql_merged(&["-v", "ON_ERROR_STOP=1"], COPY_SETUP, &kd),
        p.psql_merged(&["-v", "ON_ERROR_STOP=1"], COPY_SETUP, &pd),
    );
    assert!(a.success(), "setup on keel: {a}");
    assert_same("setup", &a.stdout, &b.stdout);

    let script = "\\copy t to 'out.txt'\n\
\\copy t to 'out.csv' with (format csv)\n\
\\copy t to 'outh.csv' with (format csv, header)\n\
\\copy (select id, name from t where id > 3 order by id) to 'q.txt'\n\
\\copy t_text from 'out.txt'\n\
\\copy t_csv from 'out.csv' with (format csv)\n\
\\copy t_csvh from 'outh.csv' with (format csv, header)\n\
select * from t order by id;\n\
select * from t_text order by id;\n\
select * from t_csv order by id;\n\
select * from t_csvh order by id;\n\
select id, name is null as name_null, note is null as note_null from t_csv order by id;\n";
    let (a, b) = (
        k.psql_merged(&[], script, &kd),
        p.psql_merged(&[], script, &pd),
    );
    assert_same("\\copy script", &a.stdout, &b.stdout);
    for f in ["out.txt", "out.csv", "outh.csv", "q.txt"] {
        let got = std::fs::read(kd.join(f)).unwrap_or_default();
        let want = std::fs::read(pd.join(f)).unwrap_or_else(|e| panic!("oracle {f}: {e}"));
        assert_same(
            &format!("\\copy to {f}"),
            &String::from_utf8_lossy(&got),
            &String::from_utf8_lossy(&want),
        );
    }
}

/// Server-side COPY: `COPY t FROM '/path'` and `COPY t TO '/path'`, the files compared with
/// PostgreSQL's, and the errors for a missing file, a relative path and a directory.
#[test]
fn server_side_copy_reads_and_writes_files_as_postgres() {
    use std::os::unix::fs::PermissionsExt;
    let (k, p) = pair();
    let script = "create table cf (id int, name text, note text);\n\
copy cf from :'in_txt';\n\
copy cf from :'in_csv' with (format csv, header);\n\
select * from cf order by id, name;\n\
copy cf to :'out_txt';\n\
copy (select id, name from cf where id > 1 order by id) to :'out_csv' with (format csv, header);\n\
copy cf from :'missing';\n\
copy cf to 'relative.txt';\n\
copy cf from :'dir';\n\
copy cf to :'dir';\n\
select count(*) from cf;\n";
    let mut outputs = Vec::new();
    for srv in [&k, &p] {
        // PostgreSQL's server runs as `postgres`: the directory is open to it.
        let dir = srv.scratch().join("server-copy");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777))
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.join("in.txt"), "1\tone\t\\N\n2\ttwo\ta\\tb\n")
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            dir.join("in.csv"),
            "id,name,note\n3,\"th,ree\",\n4,four,\"\"\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let d = dir.to_string_lossy().to_string();
        let vars = [
            format!("in_txt={d}/in.txt"),
            format!("in_csv={d}/in.csv"),
            format!("out_txt={d}/out.txt"),
            format!("out_csv={d}/out.csv"),
            format!("missing={d}/missing.txt"),
            format!("dir={d}"),
        ];
        let mut args = vec!["-a"];
        for v in &vars {
            args.extend(["-v", v.as_str()]);
        }
        let out = srv.psql_merged(&args, script, srv.scratch());
        let files: Vec<String> = ["out.txt", "out.csv"]
            .iter()
            .map(|f| {
                String::from_utf8_lossy(&std::fs::read(dir.join(f)).unwrap_or_default()).to_string()
            })
            .collect();
        outputs.push((out.stdout.replace(&d, "DIR"), files));
    }
    let (ours, theirs) = (&outputs[0], &outputs[1]);
    assert_same("server-side COPY", &ours.0, &theirs.0);
    assert!(theirs.0.contains("COPY 2"), "{}", theirs.0);
    for (i, f) in ["out.txt", "out.csv"].iter().enumerate() {
        assert!(!theirs.1[i].is_empty(), "PostgreSQL wrote no {f}");
        assert_same(&format!("COPY TO {f}"), &ours.1[i], &theirs.1[i]);
    }
}
