//! Row lock strengths (SELECT ... FOR KEY SHARE / SHARE / NO KEY UPDATE / UPDATE) and the
//! shared lockers of a row version beyond the one its `xmax` names.
//!
//! A version's `xmax` holds one locker (or its deleter); when a second transaction takes a
//! compatible lock while the first still holds its own, the second is listed here, keyed by
//! (relation file, version), and the version is flagged so that lockers look here only then
//! (PostgreSQL's MultiXact, kept in memory: a crash ends every locker, so nothing here needs
//! to survive one). Each transaction remembers the versions it was listed on and prunes
//! those entries when it ends ([`RowLockers::prune`]), so the table holds at most one entry
//! per live shared lock.

use crate::{TxnManager, XidStatus};
use parking_lot::Mutex;
use std::collections::HashMap;

/// Lock strength, weakest first. Two locks conflict when their strengths add up to 3 or more:
/// KEY SHARE conflicts only with UPDATE, SHARE with NO KEY UPDATE and UPDATE, NO KEY UPDATE
/// with all but KEY SHARE, UPDATE with all (PostgreSQL's tuple lock conflict table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Strength {
    KeyShare = 0,
    Share = 1,
    NoKeyUpdate = 2,
    Update = 3,
}

impl Strength {
    pub fn conflicts(self, other: Strength) -> bool {
        self as u8 + other as u8 >= 3
    }

    pub fn from_bits(b: u16) -> Strength {
        match b & 3 {
            0 => Strength::KeyShare,
            1 => Strength::Share,
            2 => Strength::NoKeyUpdate,
            _ => Strength::Update,
        }
    }

    /// As pg_locks and error messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Strength::KeyShare => "FOR KEY SHARE",
            Strength::Share => "FOR SHARE",
            Strength::NoKeyUpdate => "FOR NO KEY UPDATE",
            Strength::Update => "FOR UPDATE",
        }
    }
}

/// (relation file, version tid as u64).
pub type VersionKey = (u32, u64);

const SHARDS: usize = 16;

/// One shard: version -> (locker xid, strength) beyond the locker in its `xmax`.
type Shard = Mutex<HashMap<VersionKey, Vec<(u64, Strength)>>>;

#[derive(Default)]
pub struct RowLockers {
    shards: [Shard; SHARDS],
}

impl RowLockers {
    fn shard(&self, key: VersionKey) -> &Shard {
        &self.shards[(key.1 as usize ^ key.0 as usize) % SHARDS]
    }

    /// The lockers listed for `key` (live or not; the caller judges).
    pub fn get(&self, key: VersionKey) -> Vec<(u64, Strength)> {
        self.shard(key)
            .lock()
            .get(&key)
            .cloned()
            .unwrap_or_default()
    }

    /// Lists `xid` as holding `s` on `key` (raising a weaker entry of the same xid).
    pub fn add(&self, key: VersionKey, xid: u64, s: Strength) {
        let mut m = self.shard(key).lock();
        let v = m.entry(key).or_default();
        match v.iter_mut().find(|(x, _)| *x == xid) {
            Some(e) => e.1 = e.1.max(s),
            None => v.push((xid, s)),
        }
    }

    /// Forgets every locker of `key` (its version was deleted or replaced: none is live).
    pub fn clear(&self, key: VersionKey) {
        self.shard(key).lock().remove(&key);
    }

    /// Drops the entries of `keys` whose transactions are no longer running.
    pub fn prune(&self, txns: &TxnManager, keys: &[VersionKey]) {
        for &key in keys {
            let mut m = self.shard(key).lock();
            if let Some(v) = m.get_mut(&key) {
                v.retain(|(x, _)| matches!(txns.status(*x), XidStatus::InProgress));
                if v.is_empty() {
                    m.remove(&key);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Strength::*;

    #[test]
    fn conflict_table_is_postgresqls() {
        let all = [KeyShare, Share, NoKeyUpdate, Update];
        let want = [
            [false, false, false, true],
            [false, false, true, true],
            [false, true, true, true],
            [true, true, true, true],
        ];
        for (i, a) in all.iter().enumerate() {
            for (j, b) in all.iter().enumerate() {
                assert_eq!(a.conflicts(*b), want[i][j], "{a:?} vs {b:?}");
            }
        }
    }
}
