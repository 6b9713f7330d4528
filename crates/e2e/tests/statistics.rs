//! ANALYZE end to end: keel and PostgreSQL 15 analyze the same generated tables over the wire;
//! keel is then killed, its data directory opened in-process (so its statistics came back
//! through WAL replay), and its statistics, rendered as `pg_stats` rows, must equal the
//! oracle's `pg_stats` (the correlation within 0.01: PostgreSQL's bulk insert does not fill
//! its pages in strict insertion order, keel's does, and correlation measures exactly that).

use keel_e2e::{CmdOutput, Engine, Server};

const S1: &str = include_str!("../../stats/testdata/s1.sql");
const S2: &str = "create table s2 (x int, y text); \
    insert into s2 select g % 5, case when g % 4 = 0 then null else 'w' || (g % 300) end \
    from generate_series(1, 1000) g";

const PG_STATS: &str = "select attname, null_frac, avg_width, n_distinct, most_common_vals, \
    most_common_freqs, histogram_bounds, correlation from pg_stats where tablename = '{}' \
    order by attname";

fn keel_rows(engine: &keel_access::Engine, table: &str) -> Vec<String> {
    let cat = engine.catalog();
    let t = cat.table(table).expect("table");
    let stats = engine.table_stats(t.oid).expect("statistics");
    let cols: Vec<(String, _)> = t
        .columns
        .iter()
        .map(|c| (c.name.clone(), c.ty.id))
        .collect();
    let mut rows: Vec<String> = keel_stats::pg_stats_rows("public", table, &cols, &stats)
        .iter()
        .map(|r| {
            let c = r.columns();
            [&c[2..3], &c[4..]]
                .concat()
                .into_iter()
                .map(Option::unwrap_or_default)
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect();
    rows.sort();
    rows
}

fn compare(table: &str, keel: &[String], pg: &str) {
    let pg: Vec<&str> = pg.lines().collect();
    assert_eq!(keel.len(), pg.len(), "{table}: columns with statistics");
    let mut bad = Vec::new();
    for (k, p) in keel.iter().zip(&pg) {
        let (kf, pf): (Vec<&str>, Vec<&str>) = (k.split('|').collect(), p.split('|').collect());
        assert_eq!(kf.len(), pf.len(), "{table}: {k} vs {p}");
        for (i, (a, b)) in kf.iter().zip(&pf).enumerate() {
            let same = if i == 7 && !a.is_empty() && !b.is_empty() {
                let (x, y): (f64, f64) = (a.parse().expect("corr"), b.parse().expect("corr"));
                (x - y).abs() < 0.01
            } else {
                a == b
            };
            if !same {
                bad.push(format!("{table}.{} field {i}: keel {a} / pg {b}", kf[0]));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn error_line(out: &CmdOutput) -> String {
    out.stderr.lines().next().unwrap_or_default().to_string()
}

#[test]
fn analyze_matches_postgres_and_survives_a_crash() {
    let mut keel = Server::start_engine(Engine::Keel, &[]);
    let pg = Server::oracle(&[]);
    for srv in [&keel, &pg] {
        srv.query(S1);
        srv.query(S2);
        srv.query("vacuum analyze s2");
    }
    assert_eq!(
        pg.query("select reltuples from pg_class where relname = 's1'"),
        "5000"
    );
    for table in ["nosuch", "s1, nosuch"] {
        let sql = format!("analyze {table}");
        assert_eq!(
            error_line(&keel.psql(&["-c", &sql])),
            error_line(&pg.psql(&["-c", &sql])),
        );
    }

    // Statistics are durable once ANALYZE returns: kill keel and read them back.
    keel.crash();
    let engine = keel_access::Engine::open(keel.data_dir(), &keel_common::Settings::default())
        .expect("open keel's data directory");
    for table in ["s1", "s2"] {
        let rows = keel_rows(&engine, table);
        compare(table, &rows, &pg.query(&PG_STATS.replace("{}", table)));
    }
    let cat = engine.catalog();
    let s1 = cat.table("s1").expect("s1");
    let stats = engine.table_stats(s1.oid).expect("statistics");
    assert_eq!(stats.reltuples, 5000.0);
    assert_eq!(
        stats.relpages as u64 * 8192,
        engine.relation_size(s1.relfile)
    );
    engine.shutdown();
    engine.release_data_dir();

    // ANALYZE with no table names analyzes every table; DROP TABLE drops its statistics.
    keel.restart();
    keel.query(
        "insert into s2 select 7, 'new' from generate_series(1, 1000); analyze; drop table s1",
    );
    keel.stop();
    let engine = keel_access::Engine::open(keel.data_dir(), &keel_common::Settings::default())
        .expect("open keel's data directory");
    let cat = engine.catalog();
    assert!(engine.table_stats(s1.oid).is_none());
    let s2 = cat.table("s2").expect("s2");
    let stats = engine.table_stats(s2.oid).expect("statistics");
    assert_eq!(stats.reltuples, 2000.0);
    let x = stats.columns[0].as_ref().expect("x");
    assert_eq!(x.mcv_values.first(), Some(&keel_types::Datum::Int4(7)));
    assert_eq!(x.mcv_freqs.first(), Some(&0.5));
    engine.shutdown();
    engine.release_data_dir();
}
