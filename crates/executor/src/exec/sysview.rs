//! System views keel makes from its own structures when the node first runs: the catalog the
//! transaction sees and the engine's state of that moment.

use super::{Node, Row};
use crate::eval::EvalCx;
use keel_access::{Engine, Transaction};
use keel_common::PgResult;
use keel_planner::plan::SystemView;
use keel_types::Datum;

pub struct SystemViewScan<'a> {
    view: SystemView,
    engine: &'a Engine,
    txn: &'a Transaction,
    rows: Option<std::vec::IntoIter<Row>>,
}

impl<'a> SystemViewScan<'a> {
    pub fn new(view: SystemView, engine: &'a Engine, txn: &'a Transaction) -> Self {
        SystemViewScan {
            view,
            engine,
            txn,
            rows: None,
        }
    }

    fn make(&self, ev: &mut EvalCx<'_>) -> PgResult<Vec<Row>> {
        match self.view {
            SystemView::PgStats => pg_stats(self.engine, self.txn, ev),
            SystemView::PgLocks => Ok(pg_locks(self.engine)),
        }
    }
}

/// `pg_stats`: a row per column of each table with statistics from its last ANALYZE, tables
/// in name order (PostgreSQL's view has no order; a name order is stable to read).
fn pg_stats(engine: &Engine, txn: &Transaction, ev: &mut EvalCx<'_>) -> PgResult<Vec<Row>> {
    let catalog = txn.catalog(engine);
    let mut tables: Vec<_> = catalog.tables.values().collect();
    tables.sort_by(|a, b| a.name.cmp(&b.name));
    let real = |s: &str| s.parse::<f32>().map_or(Datum::Null, Datum::Float4);
    let text = |s: Option<String>| s.map_or(Datum::Null, Datum::Text);
    let mut out = Vec::new();
    for t in tables {
        ev.tick()?;
        let Some(stats) = engine.table_stats(t.oid) else {
            continue;
        };
        let cols: Vec<(String, keel_types::TypeId)> = t
            .columns
            .iter()
            .map(|c| (c.name.clone(), c.ty.id))
            .collect();
        for r in keel_stats::pg_stats_rows("public", &t.name, &cols, &stats) {
            out.push(vec![
                Datum::Text(r.schemaname),
                Datum::Text(r.tablename),
                Datum::Text(r.attname),
                Datum::Bool(r.inherited),
                real(&r.null_frac),
                Datum::Int4(r.avg_width),
                real(&r.n_distinct),
                text(r.most_common_vals),
                text(r.most_common_freqs),
                text(r.histogram_bounds),
                r.correlation.as_deref().map_or(Datum::Null, real),
                // Element statistics: only array and tsvector columns have them.
                Datum::Null,
                Datum::Null,
                Datum::Null,
            ]);
        }
    }
    Ok(out)
}

/// `pg_locks`: the relation locks held and awaited now, by relation, pid and mode, then the
/// advisory locks (classid and objid: the key's high and low 32 bits, or the two int keys;
/// objsubid 1 or 2).
fn pg_locks(engine: &Engine) -> Vec<Row> {
    let mut locks = engine.relation_locks();
    locks.sort_by_key(|l| (l.rel, l.pid, l.mode, !l.granted));
    let (held, waiting) = engine.advisory().snapshot();
    let mut adv: Vec<_> = held
        .into_iter()
        .map(|h| (h, true))
        .chain(waiting.into_iter().map(|w| (w, false)))
        .collect();
    adv.sort_by_key(|(h, granted)| (h.key.space, h.key.key, h.pid, h.exclusive, !granted));
    let advisory = adv.into_iter().map(|(h, granted)| {
        lock_row(LockRow {
            locktype: "advisory",
            database: true,
            object: Some((
                (h.key.key >> 32) as u32,
                h.key.key as u32,
                i16::from(h.key.space),
            )),
            pid: h.pid,
            exclusive: h.exclusive,
            granted,
            ..LockRow::default()
        })
    });
    let mut xids = engine.xid_locks();
    xids.sort_by_key(|&(xid, pid, granted)| (xid, !granted, pid));
    let xid_rows = xids.into_iter().map(|(xid, pid, granted)| {
        lock_row(LockRow {
            locktype: "transactionid",
            transactionid: Some(xid),
            pid,
            // The holder's own xid is exclusive; a waiter asks to share it.
            exclusive: granted,
            granted,
            ..LockRow::default()
        })
    });
    locks
        .into_iter()
        .map(|l| {
            vec![
                Datum::Text("relation".into()),
                Datum::Oid(keel_access::DATABASE_OID),
                Datum::Oid(l.rel),
                Datum::Null,
                Datum::Null,
                Datum::Null,
                Datum::Null,
                Datum::Null,
                Datum::Null,
                Datum::Null,
                Datum::Null,
                Datum::Int4(l.pid),
                Datum::Text(l.mode.name().into()),
                Datum::Bool(l.granted),
                Datum::Bool(l.fastpath),
                Datum::Null,
            ]
        })
        .chain(xid_rows)
        .chain(advisory)
        .collect()
}

/// A pg_locks row of a lock on something other than a relation; the columns its lock type
/// does not use are NULL.
#[derive(Default)]
struct LockRow {
    locktype: &'static str,
    /// The lock belongs to the database (advisory locks).
    database: bool,
    transactionid: Option<u64>,
    /// classid, objid, objsubid.
    object: Option<(u32, u32, i16)>,
    pid: i32,
    exclusive: bool,
    granted: bool,
}

fn lock_row(l: LockRow) -> Row {
    let (classid, objid, objsubid) = match l.object {
        Some((c, o, s)) => (Datum::Oid(c), Datum::Oid(o), Datum::Int2(s)),
        None => (Datum::Null, Datum::Null, Datum::Null),
    };
    vec![
        Datum::Text(l.locktype.into()),
        if l.database {
            Datum::Oid(keel_access::DATABASE_OID)
        } else {
            Datum::Null
        },
        Datum::Null,
        Datum::Null,
        Datum::Null,
        Datum::Null,
        l.transactionid
            .map_or(Datum::Null, |x| Datum::Int8(x as i64)),
        classid,
        objid,
        objsubid,
        Datum::Null,
        Datum::Int4(l.pid),
        Datum::Text(
            if l.exclusive {
                "ExclusiveLock"
            } else {
                "ShareLock"
            }
            .into(),
        ),
        Datum::Bool(l.granted),
        Datum::Bool(false),
        Datum::Null,
    ]
}

impl<'a> Node<'a> for SystemViewScan<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        if self.rows.is_none() {
            self.rows = Some(self.make(ev)?.into_iter());
        }
        Ok(self.rows.as_mut().and_then(Iterator::next))
    }
}
