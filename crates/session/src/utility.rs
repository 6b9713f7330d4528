//! Transaction control, SET/SHOW/RESET, VACUUM, ANALYZE, CHECKPOINT.

use crate::exec::Rows;
use crate::session::{Block, Session};
use keel_access::Isolation;
use keel_common::{PgError, PgResult, Severity, sqlstate};
use keel_sql::utility::{TxnModes, Utility};
use keel_types::Datum;
use keel_wire::Client;

use crate::prepared::unknown_prepared;

fn on_off(b: bool) -> String {
    if b { "on" } else { "off" }.to_string()
}

fn warning(code: &'static str, msg: &str) -> PgError {
    PgError::notice(Severity::Warning, code, msg)
}

impl Session {
    fn apply_modes(&mut self, m: &TxnModes) -> PgResult<()> {
        if let Some(t) = &mut self.txn {
            // The transaction has already run statements: PostgreSQL refuses late changes.
            if m.isolation.is_some_and(|i| i != t.isolation) {
                return Err(PgError::new(
                    sqlstate::ACTIVE_SQL_TRANSACTION,
                    "SET TRANSACTION ISOLATION LEVEL must be called before any query",
                ));
            }
            if m.read_only == Some(false) && t.read_only {
                // PostgreSQL's check_transaction_read_only.
                return Err(PgError::new(
                    sqlstate::ACTIVE_SQL_TRANSACTION,
                    if self.savepoints.is_empty() {
                        "transaction read-write mode must be set before any query"
                    } else {
                        "cannot set transaction read-write mode inside a read-only transaction"
                    },
                ));
            }
            if let Some(ro) = m.read_only {
                t.read_only = ro;
            }
            if let Some(d) = m.deferrable {
                t.deferrable = d;
            }
        } else {
            if m.deferrable.is_some() {
                self.next_deferrable = m.deferrable;
            }
            if m.isolation.is_some() {
                self.next_isolation = m.isolation;
            }
            if m.read_only.is_some() {
                self.next_read_only = m.read_only;
            }
        }
        Ok(())
    }

    /// COMMIT: commits an open block, rolls back a failed one.
    async fn end_block_commit<C: Client>(&mut self, client: &mut C) -> PgResult<(Rows, String)> {
        match self.block {
            Block::Idle => {
                client.notice(&warning(
                    sqlstate::NO_ACTIVE_SQL_TRANSACTION,
                    "there is no transaction in progress",
                ));
                self.commit_txn().await?;
            }
            Block::Open => {
                self.block = Block::Idle;
                self.commit_txn().await?;
            }
            Block::Failed => {
                self.block = Block::Idle;
                self.rollback_txn();
                return Ok((vec![], "ROLLBACK".into()));
            }
        }
        Ok((vec![], "COMMIT".into()))
    }

    /// ParameterStatus for reported settings that a transaction end changed back.
    /// Settings as they are now, when ending the transaction may change them (it ran SET):
    /// compare with `report_changed` afterwards. None (nothing to compare) otherwise.
    fn settings_before_end(&self) -> Option<keel_common::Settings> {
        self.guc_rollback.is_some().then(|| self.settings.clone())
    }

    pub(crate) fn report_changed<C: Client>(
        &self,
        before: &Option<keel_common::Settings>,
        client: &mut C,
    ) {
        let Some(before) = before else { return };
        for (def, v) in self.settings.iter() {
            if def.reported && before.raw(def.name) != v {
                self.report(def.name, client);
            }
        }
    }

    fn report<C: Client>(&self, def_name: &str, client: &mut C) {
        if let Some(def) = keel_common::settings::find_def(def_name)
            && def.reported
            && let Ok((n, v)) = self.settings.show(def.name)
        {
            client.parameter_status(&n, &v);
        }
    }

    pub(crate) async fn utility<C: Client>(
        &mut self,
        u: &Utility,
        client: &mut C,
    ) -> PgResult<(Rows, String)> {
        let tag = |s: &str| Ok((vec![], s.to_string()));
        match u {
            Utility::Begin(m) | Utility::StartTransaction(m) => {
                if self.block != Block::Idle {
                    client.notice(&warning(
                        sqlstate::ACTIVE_SQL_TRANSACTION,
                        "there is already a transaction in progress",
                    ));
                } else {
                    // Statements before BEGIN in the same Query join the block, as in PostgreSQL.
                    self.block = Block::Open;
                    if self.txn.is_none() {
                        self.next_isolation = None;
                        self.next_read_only = None;
                        self.next_deferrable = None;
                    }
                }
                self.apply_modes(m)?;
                tag(if matches!(u, Utility::StartTransaction(_)) {
                    "START TRANSACTION"
                } else {
                    "BEGIN"
                })
            }
            Utility::Commit => {
                let before = self.settings_before_end();
                let r = self.end_block_commit(client).await;
                self.report_changed(&before, client);
                r
            }
            Utility::Rollback => {
                if self.block == Block::Idle {
                    client.notice(&warning(
                        sqlstate::NO_ACTIVE_SQL_TRANSACTION,
                        "there is no transaction in progress",
                    ));
                }
                let before = self.settings_before_end();
                self.block = Block::Idle;
                self.rollback_txn();
                self.report_changed(&before, client);
                tag("ROLLBACK")
            }
            Utility::SetTransaction(m) => {
                if self.block == Block::Idle {
                    client.notice(&warning(
                        sqlstate::NO_ACTIVE_SQL_TRANSACTION,
                        "SET TRANSACTION can only be used in transaction blocks",
                    ));
                } else {
                    self.apply_modes(m)?;
                }
                tag("SET")
            }
            Utility::SetSessionCharacteristics(m) => {
                if let Some(i) = m.isolation {
                    self.set_guc(false, |s| {
                        s.set("default_transaction_isolation", i.name(), false)
                    })?;
                }
                if let Some(d) = m.deferrable {
                    let v = if d { "on" } else { "off" };
                    self.set_guc(false, |s| s.set("default_transaction_deferrable", v, false))?;
                }
                if let Some(ro) = m.read_only {
                    let v = if ro { "on" } else { "off" };
                    self.set_guc(false, |s| s.set("default_transaction_read_only", v, false))?;
                }
                tag("SET")
            }
            Utility::Set { name, value, local } => {
                if name == "transaction_isolation" {
                    let iso = Isolation::from_name(
                        value
                            .as_deref()
                            .map(str::to_lowercase)
                            .as_deref()
                            .unwrap_or(""),
                    );
                    self.apply_modes(&TxnModes {
                        isolation: Some(iso),
                        read_only: None,
                        deferrable: None,
                    })?;
                    return tag("SET");
                }
                if *local && self.block == Block::Idle {
                    // Validate, then warn: outside a block SET LOCAL has no effect.
                    let mut probe = self.settings.clone();
                    match value {
                        Some(v) => probe.set(name, v, false)?,
                        None => probe.reset(name, &self.boot)?,
                    };
                    client.notice(&warning(
                        sqlstate::NO_ACTIVE_SQL_TRANSACTION,
                        "SET LOCAL can only be used in transaction blocks",
                    ));
                    return tag("SET");
                }
                let boot = self.boot.clone();
                let def = self.set_guc(*local, |s| match value {
                    Some(v) => s.set(name, v, false),
                    None => s.reset(name, &boot),
                })?;
                self.report(def.name, client);
                tag("SET")
            }
            Utility::Reset(name) => {
                let boot = self.boot.clone();
                let def = self.set_guc(false, |s| s.reset(name, &boot))?;
                self.report(def.name, client);
                tag("RESET")
            }
            Utility::ResetAll => {
                let boot = self.boot.clone();
                let names: Vec<&'static str> = keel_common::settings::DEFS
                    .iter()
                    .filter(|d| d.context == keel_common::settings::Context::User)
                    .map(|d| d.name)
                    .collect();
                for n in names {
                    self.set_guc(false, |s| s.reset(n, &boot))?;
                    self.report(n, client);
                }
                tag("RESET")
            }
            Utility::Show(name) => {
                let v = match name.as_str() {
                    "transaction_isolation" => match self
                        .txn
                        .as_ref()
                        .map(|t| t.isolation)
                        .or(self.next_isolation)
                    {
                        Some(i) => i.name().to_string(),
                        None => self.settings.show("default_transaction_isolation")?.1,
                    },
                    // The transaction's modes (or those the next one will have), as PostgreSQL
                    // shows them, not the settings' stored values.
                    "transaction_read_only" => on_off(self.read_only_now()),
                    "transaction_deferrable" => on_off(match &self.txn {
                        Some(t) => t.deferrable,
                        None => self
                            .next_deferrable
                            .unwrap_or_else(|| self.settings.default_deferrable()),
                    }),
                    _ => self.settings.show(name)?.1,
                };
                Ok((vec![vec![Datum::Text(v)]], "SHOW".into()))
            }
            Utility::ShowAll => {
                let mut rows = Vec::new();
                let mut names: Vec<&'static str> =
                    keel_common::settings::DEFS.iter().map(|d| d.name).collect();
                names.sort_by_key(|n| n.to_lowercase());
                for n in names {
                    let v = self.settings.show(n)?.1;
                    rows.push(vec![
                        Datum::Text(n.to_string()),
                        Datum::Text(v),
                        Datum::Text(String::new()),
                    ]);
                }
                Ok((rows, "SHOW".into()))
            }
            Utility::Vacuum {
                verbose,
                analyze,
                tables,
                ..
            } => {
                if self.in_block() {
                    return Err(PgError::new(
                        sqlstate::ACTIVE_SQL_TRANSACTION,
                        "VACUUM cannot run inside a transaction block",
                    ));
                }
                let cf = self.cancel_check();
                let interrupt = keel_sql::ddl::Interrupt {
                    cancel: &cf,
                    deadline: self.deadline,
                };
                let cat = self.catalog();
                let targets: Vec<_> = if tables.is_empty() {
                    cat.tables.values().cloned().collect()
                } else {
                    let mut v = Vec::new();
                    for t in tables {
                        // A partitioned table is processed with its partitions.
                        v.extend(cat.partition_tree(cat.table(t)?));
                    }
                    v
                };
                for t in targets {
                    // SHARE UPDATE EXCLUSIVE, as PostgreSQL's VACUUM: no DDL changes the
                    // table under it. It is then read again: a TRUNCATE waited for may have
                    // given it a new file, a DROP removed it.
                    let Some(t) = self.lock_for_maintenance(&t).await? else {
                        continue;
                    };
                    let qual = format!("{}.public.{}", self.database, t.name);
                    if *verbose {
                        client.notice(&PgError::notice(
                            Severity::Info,
                            sqlstate::SUCCESSFUL_COMPLETION,
                            format!("vacuuming \"{qual}\""),
                        ));
                    }
                    // Reads and writes every page: off this shard's worker.
                    let s = crate::exec::maybe_blocking(false, || {
                        self.engine.vacuum(&t, &|| interrupt.check())
                    })?;
                    if *verbose {
                        let msg = format!(
                            "finished vacuuming \"{qual}\": index scans: {}\npages: 0 removed, {} remain, {} scanned (100.00% of total)\ntuples: {} removed, {} remain, {} are dead but not yet removable\nindex entries: {} removed",
                            u64::from(s.index_entries_removed > 0),
                            s.pages,
                            s.pages,
                            s.removed_versions,
                            s.live_rows,
                            s.dead_rows,
                            s.index_entries_removed
                        );
                        client.notice(&PgError::notice(
                            Severity::Info,
                            sqlstate::SUCCESSFUL_COMPLETION,
                            msg,
                        ));
                    }
                    if *analyze && *verbose {
                        client.notice(&PgError::notice(
                            Severity::Info,
                            sqlstate::SUCCESSFUL_COMPLETION,
                            format!("analyzing \"public.{}\"", t.name),
                        ));
                    }
                    if *analyze {
                        self.analyze_table(&t)?;
                    }
                }
                tag("VACUUM")
            }
            Utility::Analyze { tables } => {
                self.analyze_tables(tables).await?;
                tag("ANALYZE")
            }
            Utility::Checkpoint => {
                // Writes and fsyncs every dirty page: off this shard's worker.
                crate::exec::maybe_blocking(false, || self.engine.checkpoint())?;
                tag("CHECKPOINT")
            }
            Utility::Discard => {
                self.stmts.clear();
                self.portals.clear();
                tag("DISCARD ALL")
            }
            Utility::Copy(c) => self.copy(c, client).await,
            Utility::Savepoint(op, name) => {
                let t = self.savepoint_stmt(*op, name, client)?;
                Ok((vec![], t))
            }
            Utility::Lock {
                tables,
                mode,
                nowait,
            } => {
                if self.block == Block::Idle {
                    return Err(PgError::new(
                        sqlstate::NO_ACTIVE_SQL_TRANSACTION,
                        "LOCK TABLE can only be used in transaction blocks",
                    ));
                }
                let mode = keel_access::LockMode::ALL[(*mode as usize).clamp(1, 8) - 1];
                let cat = self.catalog();
                let mut locks = Vec::new();
                for t in tables {
                    let table = cat.table(t.rsplit('.').next().unwrap_or(t))?;
                    locks.push((table.oid, table.name.clone(), mode));
                }
                self.lock_relations(&locks, *nowait).await?;
                Ok((vec![], "LOCK TABLE".into()))
            }
            Utility::Execute { .. } | Utility::Prepare { .. } => Err(PgError::internal(
                "PREPARE and EXECUTE run from their statement",
            )),
            Utility::Do {
                body,
                body_position,
            } => {
                self.run_do(body, *body_position, client).await?;
                tag("DO")
            }
            Utility::Fetch { is_move, dir, name } => {
                let (rows, n) = self.funcs.cursors.get(name)?.fetch(*dir, !is_move)?;
                let verb = if *is_move { "MOVE" } else { "FETCH" };
                Ok((rows, format!("{verb} {n}")))
            }
            Utility::CloseCursor(Some(name)) => {
                self.funcs.cursors.close(name)?;
                tag("CLOSE CURSOR")
            }
            Utility::CloseCursor(None) => {
                self.funcs.cursors.close_all();
                tag("CLOSE CURSOR ALL")
            }
            Utility::DeclareCursor { .. } => {
                Err(PgError::internal("DECLARE runs from its statement"))
            }
            Utility::Partition(cmd) => {
                let out = self.run_partition_cmd(cmd, client).await?;
                Ok((vec![], out))
            }
            Utility::Deallocate(None) => {
                self.stmts.clear();
                tag("DEALLOCATE ALL")
            }
            Utility::Deallocate(Some(name)) => {
                if self.stmts.remove(name).is_none() {
                    return Err(unknown_prepared(name));
                }
                tag("DEALLOCATE")
            }
        }
    }
}
