//! Background workers: the checkpointer and autovacuum (which also runs auto-analyze). They hold only a weak reference to
//! the engine and take page latches one at a time, so they never block foreground sessions
//! for longer than a page access.

use crate::api::Engine;
use std::sync::{Arc, Weak};
use std::time::Duration;

pub fn start(engine: &Arc<Engine>) {
    let weak = Arc::downgrade(engine);
    let _ = std::thread::Builder::new()
        .name("keel-checkpointer".into())
        .spawn(move || checkpointer(weak));
    let weak = Arc::downgrade(engine);
    let _ = std::thread::Builder::new()
        .name("keel-autovacuum".into())
        .spawn(move || autovacuum(weak));
}

fn checkpointer(engine: Weak<Engine>) {
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let Some(e) = engine.upgrade() else { return };
        if e.inner.is_stopping() {
            return;
        }
        if let Some(cause) = e.inner.checkpoint_due()
            && let Err(err) = e.inner.checkpoint_inner(cause)
        {
            eprintln!("LOG:  checkpoint failed: {err}");
        }
    }
}

fn autovacuum(engine: Weak<Engine>) {
    loop {
        std::thread::sleep(Duration::from_secs(2));
        let Some(e) = engine.upgrade() else { return };
        if e.inner.is_stopping() {
            return;
        }
        let catalog = e.catalog();
        for table in catalog.tables.values() {
            let vacuum = e.inner.take_vacuum_due(table.relfile);
            let analyze = e.inner.take_analyze_due(table);
            if !vacuum && !analyze {
                continue;
            }
            // SHARE UPDATE EXCLUSIVE if it is free, as PostgreSQL's autovacuum: a table
            // under DDL is skipped this round. Once locked the table is read again (a
            // TRUNCATE may have given it a new file, a DROP removed it).
            let txn = e.begin(keel_common::Isolation::ReadCommitted, true);
            let locked =
                e.try_lock_relation(&txn, table.oid, keel_txn::LockMode::ShareUpdateExclusive);
            let current = e.catalog().tables.get(&table.oid).cloned();
            if let (true, Some(table)) = (locked, current) {
                if vacuum && let Err(err) = e.inner.vacuum(&table, &|| Ok(())) {
                    eprintln!(
                        "LOG:  automatic vacuum of table \"{}\" failed: {err}",
                        table.name
                    );
                }
                if analyze && let Err(err) = e.inner.analyze(None, &table, &|| Ok(())) {
                    eprintln!(
                        "LOG:  automatic analyze of table \"{}\" failed: {err}",
                        table.name
                    );
                }
            }
            e.rollback(txn);
        }
    }
}
