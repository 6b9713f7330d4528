//! Relation locks a statement takes before it runs (keel_txn::rellock): ACCESS SHARE on every
//! table a query reads, ROW EXCLUSIVE on a write's target, ROW SHARE on the tables its
//! foreign keys refer to, a DDL statement's own modes (keel_sql::ddl_locks), and LOCK TABLE's.
//!
//! A statement is bound and planned before it locks; once its locks are held, a plan made
//! against an older catalog is made again (the lock may have waited for the DDL that changed
//! it, e.g. a TRUNCATE that gave the table a new file), and the new plan's tables are locked
//! in turn. The catalog a statement then runs with cannot change under it: changing a table's
//! definition takes ACCESS EXCLUSIVE, which waits for the statement's transaction.

use crate::session::Session;
use keel_access::{LockLimits, LockMode, Locked};
use keel_common::{PgError, PgResult, sqlstate};
use keel_sql::Prepared;
use std::sync::Arc;
use std::time::Duration;

/// How many times a statement re-plans after waiting for locks before it gives up (each
/// round follows a DDL that committed while it waited).
const REPLAN_ROUNDS: usize = 16;

/// (table oid, table name, mode).
pub(crate) type RelLock = (u32, String, LockMode);

impl Session {
    fn lock_limits(&self, nowait: bool) -> LockLimits {
        let ms = |name: &str| self.settings.int(name).max(0) as u64;
        LockLimits {
            nowait,
            deadlock_timeout: Duration::from_millis(ms("deadlock_timeout").max(1)),
            lock_timeout: match ms("lock_timeout") {
                0 => None,
                n => Some(Duration::from_millis(n)),
            },
            statement_deadline: self.deadline.map(tokio::time::Instant::from_std),
        }
    }

    /// Takes `locks` for the current transaction (started if need be). NOWAIT fails with
    /// 55P03 on the first lock that is not free.
    pub(crate) async fn lock_relations(&mut self, locks: &[RelLock], nowait: bool) -> PgResult<()> {
        if locks.is_empty() {
            return Ok(());
        }
        let limits = self.lock_limits(nowait);
        let engine = self.engine.clone();
        let cancel = self.cancel.clone();
        let txn = self.ensure_txn();
        for (rel, name, mode) in locks {
            match engine
                .lock_relation(txn, *rel, *mode, &limits, cancel.cancelled())
                .await?
            {
                Locked::Granted(_) => {}
                Locked::Busy => {
                    return Err(PgError::new(
                        sqlstate::LOCK_NOT_AVAILABLE,
                        format!("could not obtain lock on relation \"{name}\""),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Locks what `prep` touches and answers the plan to run: None for `prep` itself, or a
    /// new plan when the catalog changed since it was made (see the module comment).
    pub(crate) async fn lock_plan(
        &mut self,
        prep: &Arc<Prepared>,
    ) -> PgResult<Option<Arc<Prepared>>> {
        let mut newer: Option<Arc<Prepared>> = None;
        for _ in 0..REPLAN_ROUNDS {
            let cur = newer.as_ref().unwrap_or(prep);
            self.ensure_txn();
            let Some(txn) = self.txn.as_mut() else {
                return Err(PgError::internal("no transaction"));
            };
            // Free locks are taken without a wait's set-up; only a busy one goes the long way.
            let engine = &self.engine;
            let busy: Vec<(u32, LockMode)> = cur
                .locks()
                .iter()
                .filter(|&&(rel, mode)| !engine.try_lock_relation(txn, rel, mode))
                .copied()
                .collect();
            if !busy.is_empty() {
                let cat = cur.catalog.clone();
                let locks: Vec<RelLock> = busy
                    .into_iter()
                    .map(|(rel, mode)| {
                        let name = cat
                            .tables
                            .get(&rel)
                            .map(|t| t.name.clone())
                            .unwrap_or_default();
                        (rel, name, mode)
                    })
                    .collect();
                self.lock_relations(&locks, false).await?;
            }
            if let Some(txn) = self.txn.as_mut() {
                self.engine.refresh_pending_catalog(txn)?;
            }
            match self.replanned(cur, &cur.params)? {
                None => return Ok(newer),
                Some(p) => newer = Some(p),
            }
        }
        // Only statistics kept changing (auto-analyze going through a thousand partitions
        // one after another), not the catalog: the newest plan is as valid as the next would
        // be. It runs, under its own locks.
        if let Some(p) = &newer
            && self
                .txn
                .as_ref()
                .is_some_and(|txn| txn.catalog_is(&self.engine, &p.catalog))
        {
            let locks: Vec<RelLock> = (p.locks().iter())
                .map(|&(rel, mode)| {
                    let name =
                        (p.catalog.tables.get(&rel)).map_or_else(String::new, |t| t.name.clone());
                    (rel, name, mode)
                })
                .collect();
            self.lock_relations(&locks, false).await?;
            return Ok(newer);
        }
        Err(PgError::new(
            sqlstate::OBJECT_NOT_IN_PREREQUISITE_STATE,
            "the tables of the statement kept changing while it waited for their locks",
        ))
    }

    /// Takes SHARE UPDATE EXCLUSIVE on `table` for VACUUM or ANALYZE and answers its
    /// definition as it is once locked (None if it was dropped meanwhile).
    pub(crate) async fn lock_for_maintenance(
        &mut self,
        table: &Arc<keel_catalog::TableDef>,
    ) -> PgResult<Option<Arc<keel_catalog::TableDef>>> {
        let lock = (
            table.oid,
            table.name.clone(),
            LockMode::ShareUpdateExclusive,
        );
        self.lock_relations(&[lock], false).await?;
        Ok(self.catalog().tables.get(&table.oid).cloned())
    }
}
