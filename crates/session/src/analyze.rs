//! ANALYZE and VACUUM ANALYZE: planner statistics gathered by the engine (keel-access
//! stats.rs), one table at a time, off the async worker.

use crate::session::Session;
use keel_catalog::TableDef;
use keel_common::PgResult;

impl Session {
    /// ANALYZE of `tables` by name, or of every table when the list is empty. Installs the
    /// statistics at once, whether or not a transaction block is open (they are not
    /// transactional, see keel-access).
    pub(crate) async fn analyze_tables(&mut self, tables: &[String]) -> PgResult<()> {
        let cat = self.catalog();
        let targets: Vec<_> = if tables.is_empty() {
            cat.tables.values().cloned().collect()
        } else {
            let mut v = Vec::with_capacity(tables.len());
            for t in tables {
                // A partitioned table is processed with its partitions.
                v.extend(cat.partition_tree(cat.table(t)?));
            }
            v
        };
        for t in targets {
            if let Some(t) = self.lock_for_maintenance(&t).await? {
                self.analyze_table(&t)?;
            }
        }
        Ok(())
    }

    /// ANALYZE of one table; a cancel or statement_timeout stops it (57014) before anything
    /// is installed. Inside a transaction (a block, or the implicit one of a multi-statement
    /// query) it sees that transaction's own rows, as PostgreSQL's does: `CREATE TABLE; COPY;
    /// ANALYZE` in one transaction must not record an empty table.
    pub(crate) fn analyze_table(&mut self, table: &TableDef) -> PgResult<()> {
        if let Some(txn) = self.txn.as_mut() {
            self.engine.start_statement(txn);
        }
        let cf = self.cancel_check();
        let interrupt = keel_sql::ddl::Interrupt {
            cancel: &cf,
            deadline: self.deadline,
        };
        crate::exec::maybe_blocking(false, || {
            self.engine
                .analyze(self.txn.as_ref(), table, &|| interrupt.check())
        })?;
        Ok(())
    }
}
