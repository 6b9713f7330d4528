//! Planner statistics kept by the engine: ANALYZE's sample and results, their durability,
//! and the auto-analyze trigger.
//!
//! Statistics live beside the catalog, not in it, so ANALYZE never conflicts with DDL. They
//! are installed at once and are not transactional (as PostgreSQL's in-place `reltuples`
//! updates): a record `Statistics` (table oid, keel-stats encoding) is logged and the map
//! updated under the map's write lock, and ANALYZE waits for the record to be durable before
//! it reports success. A checkpoint saves the map (file `statistics`) under its read lock,
//! after setting its redo point, so every record before the redo point is in the file and
//! replay of the ones after it just replaces entries. Entries of tables no longer in the
//! catalog are dropped when a catalog is installed, at recovery, and at every save.

use crate::api::{Engine, Isolation, Transaction};
use crate::engine::EngineInner;
use crate::heap;
use keel_catalog::{Catalog, TableDef};
use keel_common::{Oid, PgError, PgResult, Tid, sqlstate};
use keel_stats::sample::{BlockSampler, Reservoir, estimate_total_rows};
use keel_stats::{DEFAULT_STATISTICS_TARGET, TableStats, compute_column, sample_rows_for};
use keel_storage::io::Fs;
use keel_storage::page::{LinePointer, PageRead};
use keel_storage::wal::RecordKind;
use keel_types::Datum;
use parking_lot::{Mutex, RwLock};
use rand::SeedableRng;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const FILE: &str = "statistics";

/// PostgreSQL's autovacuum_analyze_threshold and autovacuum_analyze_scale_factor: a table is
/// analyzed again once more rows than `50 + 0.1 × reltuples` changed since the last time.
pub const AUTOVACUUM_ANALYZE_THRESHOLD: f64 = 50.0;
pub const AUTOVACUUM_ANALYZE_SCALE_FACTOR: f64 = 0.1;

/// PostgreSQL's autovacuum_naptime default: autovacuum visits a database once a minute, so
/// it analyzes a table at most that often however fast it changes.
const AUTOVACUUM_NAPTIME: Duration = Duration::from_secs(60);

pub struct StatsStore {
    map: RwLock<HashMap<Oid, Arc<TableStats>>>,
    /// When auto-analyze last ran on each table (autovacuum thread only).
    auto_analyzed: Mutex<HashMap<Oid, Instant>>,
    naptime_ms: AtomicU64,
    /// Bumped whenever a table's statistics change: plans made before are made again.
    generation: Generation,
}

/// A counter read at every Bind and Execute and written only by ANALYZE: on a cache line of
/// its own, so reading it never misses because of a neighbour's writes.
#[repr(align(128))]
#[derive(Default)]
struct Generation(AtomicU64);

impl Default for StatsStore {
    fn default() -> StatsStore {
        StatsStore {
            map: RwLock::default(),
            auto_analyzed: Mutex::default(),
            naptime_ms: AtomicU64::new(AUTOVACUUM_NAPTIME.as_millis() as u64),
            generation: Generation::default(),
        }
    }
}

fn corrupt() -> PgError {
    PgError::new(sqlstate::DATA_CORRUPTED, "statistics file is corrupt")
}

impl StatsStore {
    /// Reads the statistics the last checkpoint saved (none before the first one).
    pub fn load(fs: &dyn Fs, dir: &Path) -> PgResult<StatsStore> {
        let Ok(b) = fs.read(&dir.join(FILE)) else {
            return Ok(StatsStore::default());
        };
        let mut map = HashMap::new();
        let mut at = 0usize;
        let mut take = |n: usize| -> PgResult<&[u8]> {
            let s = b.get(at..at + n).ok_or_else(corrupt)?;
            at += n;
            Ok(s)
        };
        let u32_of = |s: &[u8]| u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
        let count = u32_of(take(4)?);
        for _ in 0..count {
            let oid = u32_of(take(4)?);
            let len = u32_of(take(4)?) as usize;
            let stats = keel_stats::codec::decode(take(len)?)?;
            map.insert(oid, Arc::new(stats));
        }
        Ok(StatsStore {
            map: RwLock::new(map),
            ..StatsStore::default()
        })
    }

    /// Saves the statistics of the tables in `catalog` atomically and durably (a checkpoint
    /// does, after its redo point is set: see the module comment).
    pub fn persist(&self, fs: &dyn Fs, dir: &Path, catalog: &Catalog) -> PgResult<()> {
        let map = self.map.read();
        let live: Vec<(&Oid, &Arc<TableStats>)> = map
            .iter()
            .filter(|(oid, _)| catalog.tables.contains_key(oid))
            .collect();
        let mut out = Vec::new();
        out.extend_from_slice(&(live.len() as u32).to_le_bytes());
        for (oid, s) in live {
            let mut bytes = Vec::new();
            keel_stats::codec::encode(s, &mut bytes);
            out.extend_from_slice(&oid.to_le_bytes());
            out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(&bytes);
        }
        drop(map);
        crate::engine::write_atomic(fs, dir, FILE, &out)
    }

    /// Replays a `Statistics` record.
    pub fn redo(&self, payload: &[u8]) -> PgResult<()> {
        let (oid, rest) = payload.split_first_chunk::<4>().ok_or_else(corrupt)?;
        let stats = keel_stats::codec::decode(rest)?;
        self.map
            .write()
            .insert(u32::from_le_bytes(*oid), Arc::new(stats));
        Ok(())
    }

    /// Forgets the statistics of tables `catalog` no longer has (DROP TABLE).
    pub fn retain(&self, catalog: &Catalog) {
        let mut map = self.map.write();
        if map.is_empty() {
            return;
        }
        map.retain(|oid, _| catalog.tables.contains_key(oid));
    }

    pub fn get(&self, oid: Oid) -> Option<Arc<TableStats>> {
        self.map.read().get(&oid).cloned()
    }
}

/// What ANALYZE read: the sampled rows in physical order and the table's size.
struct Sample {
    rows: Vec<Vec<Datum>>,
    totalrows: f64,
    relpages: u32,
}

impl EngineInner {
    /// Samples `table` (PostgreSQL's `acquire_sample_rows`): rows visible to the snapshot of
    /// `own` (the session's transaction, whose own writes count as PostgreSQL's ANALYZE
    /// counts them), or to a fresh one, are live. `check` runs per block.
    fn sample(
        &self,
        own: Option<&Transaction>,
        table: &TableDef,
        targrows: usize,
        check: &dyn Fn() -> PgResult<()>,
    ) -> PgResult<Sample> {
        let fresh = own.is_none().then(|| {
            let txn = self.begin(Isolation::ReadCommitted, true);
            self.start_statement(&txn);
            txn
        });
        let snap = match (own, &fresh) {
            (Some(t), _) | (None, Some(t)) => self.snapshot(t),
            (None, None) => unreachable!("one of the two is set"),
        };
        let sampled = (|| {
            let rel = self.rel(table.relfile)?;
            let types = crate::rows::column_types(table);
            let nblocks = rel.file.nblocks();
            let mut blocks =
                BlockSampler::new(nblocks, targrows, rand::rngs::StdRng::from_entropy());
            let mut reservoir = Reservoir::new(targrows, rand::rngs::StdRng::from_entropy());
            for block in blocks.by_ref() {
                check()?;
                let page = self.pool.read(&rel.file, block)?;
                for slot in 0..page.slot_count() {
                    if let LinePointer::Normal { .. } = page.lp(slot) {
                        let item = page.item(slot);
                        if item.len() < heap::tuple::HEADER {
                            continue;
                        }
                        let h = heap::tuple::Header::read(item);
                        if heap::visible(&self.txns, &snap, &h) {
                            reservoir.offer_with(Tid::new(block, slot).to_u64(), || {
                                keel_types::row::decode_row(&item[heap::tuple::HEADER..], &types)
                            })?;
                        }
                    }
                }
            }
            let liverows = reservoir.seen() as f64;
            Ok(Sample {
                totalrows: estimate_total_rows(liverows, blocks.chosen(), nblocks),
                relpages: nblocks,
                rows: reservoir.finish(),
            })
        })();
        if let Some(txn) = fresh {
            self.rollback(txn);
        }
        sampled
    }

    /// ANALYZE of one table: sample (through `own`'s snapshot if given, see `sample`),
    /// compute, then install (logged, durable) and return the statistics. Resets the table's
    /// count of changed rows.
    pub fn analyze(
        &self,
        own: Option<&Transaction>,
        table: &TableDef,
        check: &dyn Fn() -> PgResult<()>,
    ) -> PgResult<Arc<TableStats>> {
        if let Ok(rel) = self.rel(table.relfile) {
            rel.mods_since_analyze.store(0, Ordering::Relaxed);
        }
        let target = DEFAULT_STATISTICS_TARGET;
        let sample = self.sample(own, table, sample_rows_for(target), check)?;
        let mut columns = Vec::with_capacity(table.columns.len());
        for (i, col) in table.columns.iter().enumerate() {
            check()?;
            let values: Vec<&Datum> = sample.rows.iter().map(|r| &r[i]).collect();
            columns.push(compute_column(&values, col.ty.id, sample.totalrows, target));
        }
        let stats = Arc::new(TableStats {
            reltuples: sample.totalrows,
            relpages: sample.relpages,
            columns,
        });
        let mut payload = table.oid.to_le_bytes().to_vec();
        keel_stats::codec::encode(&stats, &mut payload);
        let lsn = {
            let mut map = self.stats.map.write();
            let lsn = self.wal.log(RecordKind::Statistics, 0, &payload);
            map.insert(table.oid, stats.clone());
            self.stats.generation.0.fetch_add(1, Ordering::Release);
            lsn
        };
        self.wal.flush_blocking(lsn)?;
        Ok(stats)
    }

    /// Whether more rows of `table` changed since its last analyze than autovacuum's
    /// threshold allows, and auto-analyze has not run on it within the naptime; if so the
    /// count starts over (changes made while the analyze runs count towards the next one).
    /// Without the naptime, a hot table (pgbench_accounts: 10,050 changes at scale 1) would
    /// be analyzed every few seconds under load.
    pub(crate) fn take_analyze_due(&self, table: &TableDef) -> bool {
        let Ok(rel) = self.rel(table.relfile) else {
            return false;
        };
        let naptime = Duration::from_millis(self.stats.naptime_ms.load(Ordering::Relaxed));
        let mut last = self.stats.auto_analyzed.lock();
        if last.get(&table.oid).is_some_and(|t| t.elapsed() < naptime) {
            return false;
        }
        let reltuples = self.stats.get(table.oid).map_or(0.0, |s| s.reltuples);
        let threshold = AUTOVACUUM_ANALYZE_THRESHOLD + AUTOVACUUM_ANALYZE_SCALE_FACTOR * reltuples;
        if rel.mods_since_analyze.load(Ordering::Relaxed) as f64 > threshold {
            rel.mods_since_analyze.store(0, Ordering::Relaxed);
            last.insert(table.oid, Instant::now());
            return true;
        }
        false
    }
}

impl Engine {
    /// ANALYZE of one table (see `EngineInner::analyze`), seeing what the transaction `own`
    /// sees (its own uncommitted rows included; call `start_statement` on it first), or
    /// committed rows only. Reads up to 30,000 blocks: run it off the async workers.
    pub fn analyze(
        &self,
        own: Option<&Transaction>,
        table: &TableDef,
        check: &dyn Fn() -> PgResult<()>,
    ) -> PgResult<Arc<TableStats>> {
        self.inner.analyze(own, table, check)
    }

    /// Sets how often auto-analyze may analyze one table (PostgreSQL's autovacuum_naptime,
    /// 60 s by default; not yet a setting).
    pub fn set_autovacuum_naptime(&self, naptime: Duration) {
        self.inner
            .stats
            .naptime_ms
            .store(naptime.as_millis() as u64, Ordering::Relaxed);
    }

    /// The statistics of the last ANALYZE of table `oid`, if any.
    pub fn table_stats(&self, oid: Oid) -> Option<Arc<TableStats>> {
        self.inner.stats.get(oid)
    }

    /// How many times any table's statistics changed since the server started: a plan made
    /// under an older count was made with older statistics (PostgreSQL's plan cache drops a
    /// plan when ANALYZE of a table it reads invalidates the relation).
    pub fn stats_generation(&self) -> u64 {
        self.inner.stats.generation.0.load(Ordering::Acquire)
    }
}
