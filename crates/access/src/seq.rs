//! Sequences: non-transactional counters, WAL-logged 32 values ahead as PostgreSQL does, so
//! a crash may skip values but never repeats one.

use keel_catalog::SequenceDef;
use keel_common::{Oid, PgError, PgResult, sqlstate};
use keel_storage::io::Fs;
use keel_storage::wal::RecordKind;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::Path;

const LOG_AHEAD: i64 = 32;

#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct SeqState {
    pub last: i64,
    pub called: bool,
    /// The WAL already covers values up to here.
    pub logged: i64,
}

#[derive(Default)]
pub struct Sequences {
    map: Mutex<HashMap<Oid, SeqState>>,
    /// End of the last sequence record logged: a commit that skips its flush (it wrote only
    /// unlogged relations) still flushes while this is not durable, since the values it
    /// handed out depend on it.
    pub(crate) last_lsn: std::sync::atomic::AtomicU64,
}

impl Sequences {
    pub fn load(fs: &dyn Fs, dir: &Path) -> PgResult<Sequences> {
        let map = match fs.read(&dir.join("sequences.json")) {
            Ok(b) => serde_json::from_slice(&b).map_err(|e| {
                PgError::new(
                    sqlstate::DATA_CORRUPTED,
                    format!("sequences file is corrupt: {e}"),
                )
            })?,
            Err(_) => HashMap::new(),
        };
        Ok(Sequences {
            map: Mutex::new(map),
            last_lsn: Default::default(),
        })
    }

    /// Saves the sequences atomically and durably (a checkpoint does, before its control file
    /// moves the redo point past the sequence records).
    pub fn persist(&self, fs: &dyn Fs, dir: &Path) -> PgResult<()> {
        let bytes =
            serde_json::to_vec(&*self.map.lock()).map_err(|e| PgError::internal(e.to_string()))?;
        crate::engine::write_atomic(fs, dir, "sequences.json", &bytes)
    }

    /// Replays a sequence record: resume after the logged value.
    pub fn redo(&self, payload: &[u8]) -> PgResult<()> {
        if payload.len() < 13 {
            return Err(PgError::new(
                sqlstate::DATA_CORRUPTED,
                "corrupt sequence record",
            ));
        }
        let oid = u32::from_le_bytes([payload[0], payload[1], payload[2], payload[3]]);
        let mut v = [0u8; 8];
        v.copy_from_slice(&payload[4..12]);
        let value = i64::from_le_bytes(v);
        let called = payload[12] != 0;
        self.map.lock().insert(
            oid,
            SeqState {
                last: value,
                called,
                logged: value,
            },
        );
        Ok(())
    }
}

fn record(oid: Oid, value: i64, called: bool) -> Vec<u8> {
    let mut p = Vec::with_capacity(13);
    p.extend_from_slice(&oid.to_le_bytes());
    p.extend_from_slice(&value.to_le_bytes());
    p.push(called as u8);
    p
}

impl crate::engine::EngineInner {
    pub fn nextval(&self, seq: &SequenceDef) -> PgResult<i64> {
        let mut map = self.seqs.map.lock();
        let st = map.entry(seq.oid).or_insert(SeqState {
            last: seq.start,
            called: false,
            logged: seq.start - seq.increment,
        });
        let mut wrapped = false;
        let value = if st.called {
            let next = st
                .last
                .checked_add(seq.increment)
                .filter(|v| *v <= seq.max && *v >= seq.min);
            match next {
                Some(v) => v,
                // CYCLE wraps to the other end (as PostgreSQL: to minvalue going up).
                None if seq.cycle => {
                    wrapped = true;
                    if seq.increment > 0 { seq.min } else { seq.max }
                }
                None => {
                    let (which, bound) = if seq.increment > 0 {
                        ("maximum", seq.max)
                    } else {
                        ("minimum", seq.min)
                    };
                    return Err(PgError::new(
                        sqlstate::SEQUENCE_GENERATOR_LIMIT_EXCEEDED,
                        format!(
                            "nextval: reached {which} value of sequence \"{}\" ({bound})",
                            seq.name
                        ),
                    ));
                }
            }
        } else {
            st.last
        };
        st.last = value;
        st.called = true;
        let beyond = if seq.increment > 0 {
            value > st.logged
        } else {
            value < st.logged
        };
        // After a wrap the logged mark is on the wrong side: log again from the new value.
        if beyond || wrapped {
            let ahead = value
                .saturating_add(seq.increment.saturating_mul(LOG_AHEAD))
                .clamp(seq.min, seq.max);
            st.logged = ahead;
            let end = self
                .wal
                .log(RecordKind::Sequence, 0, &record(seq.oid, ahead, true));
            self.seqs
                .last_lsn
                .fetch_max(end, std::sync::atomic::Ordering::AcqRel);
        }
        Ok(value)
    }

    pub fn setval(&self, seq: &SequenceDef, value: i64, is_called: bool) -> PgResult<()> {
        if value < seq.min || value > seq.max {
            return Err(PgError::new(
                sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                format!(
                    "setval: value {value} is out of bounds for sequence \"{}\" ({}..{})",
                    seq.name, seq.min, seq.max
                ),
            ));
        }
        self.seqs.map.lock().insert(
            seq.oid,
            SeqState {
                last: value,
                called: is_called,
                logged: value,
            },
        );
        let end = self
            .wal
            .log(RecordKind::Sequence, 0, &record(seq.oid, value, is_called));
        self.seqs
            .last_lsn
            .fetch_max(end, std::sync::atomic::Ordering::AcqRel);
        Ok(())
    }
}
