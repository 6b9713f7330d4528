//! The heap tuple header.
//!
//! ```text
//! 0 xmin u64 | 8 xmax u64 | 16 cmin u32 | 20 cmax u32 | 24 next (block u32, slot u16)
//! 30 root (block u32, slot u16) | 36 flags u16 | 38 prev (block u32, slot u16)
//! 44 row bytes (types::row)
//! ```
//! `next` links a version to the newer version that replaced it (flag `HAS_NEXT`); `prev`
//! back to the one it replaced (invalid for the first); `root` is the row's stable identity
//! that index entries point to (a root version has root == itself).
//!
//! `xmax` is the transaction that deleted or replaced the version, or, with `LOCK_ONLY`, one
//! that only locked it (SELECT ... FOR UPDATE / SHARE) with the strength in `STRENGTH`.
//! `EXTRA_LOCKERS` says more lock-only holders may be listed in memory (`RowLockers`): the
//! shared locks of several transactions at once. A crash ends every locker, so neither needs
//! to survive one.

use keel_common::Tid;
use keel_storage::page::{get_u16, get_u32, get_u64};

pub const HEADER: usize = 44;
pub const HAS_NEXT: u16 = 1;
/// `xmax` only locks the version; it did not delete or replace it.
pub const LOCK_ONLY: u16 = 2;
/// The strength of `xmax`'s lock (`Strength as u16`), two bits.
pub const STRENGTH_SHIFT: u16 = 2;
pub const STRENGTH: u16 = 3 << STRENGTH_SHIFT;
/// Other transactions may hold shared locks on the version (listed in `RowLockers`).
pub const EXTRA_LOCKERS: u16 = 16;

pub const XMIN: usize = 0;
pub const XMAX: usize = 8;
pub const CMIN: usize = 16;
pub const CMAX: usize = 20;
pub const NEXT: usize = 24;
pub const ROOT: usize = 30;
pub const FLAGS: usize = 36;
pub const PREV: usize = 38;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub xmin: u64,
    pub xmax: u64,
    pub cmin: u32,
    pub cmax: u32,
    pub next: Tid,
    pub root: Tid,
    pub flags: u16,
    pub prev: Tid,
}

impl Header {
    /// The header at the front of `item` (at least `HEADER` bytes). Read for every version
    /// a scan meets: one bounds check, then fixed offsets.
    #[inline]
    pub fn read(item: &[u8]) -> Header {
        let h: &[u8; HEADER] = item[..HEADER].try_into().expect("a header's bytes");
        Header {
            xmin: get_u64(h, XMIN),
            xmax: get_u64(h, XMAX),
            cmin: get_u32(h, CMIN),
            cmax: get_u32(h, CMAX),
            next: read_tid(h, NEXT),
            root: read_tid(h, ROOT),
            flags: get_u16(h, FLAGS),
            prev: read_tid(h, PREV),
        }
    }

    pub fn has_next(&self) -> bool {
        self.flags & HAS_NEXT != 0
    }

    /// Whether `xmax` only locks the version.
    pub fn lock_only(&self) -> bool {
        self.flags & LOCK_ONLY != 0
    }

    /// The transaction that deleted or replaced the version (0 if none; a locker is none).
    #[inline]
    pub fn deleter(&self) -> u64 {
        if self.flags & LOCK_ONLY != 0 {
            0
        } else {
            self.xmax
        }
    }

    /// The strength of the lock `xmax` holds.
    pub fn strength(&self) -> keel_txn::Strength {
        if self.lock_only() {
            keel_txn::Strength::from_bits((self.flags & STRENGTH) >> STRENGTH_SHIFT)
        } else {
            keel_txn::Strength::Update
        }
    }
}

#[inline]
pub fn read_tid(item: &[u8], at: usize) -> Tid {
    Tid::new(get_u32(item, at), get_u16(item, at + 4))
}

pub fn tid_bytes(t: Tid) -> [u8; 6] {
    let mut b = [0u8; 6];
    b[..4].copy_from_slice(&t.block.to_le_bytes());
    b[4..].copy_from_slice(&t.slot.to_le_bytes());
    b
}

/// A new version's bytes: header (xmax 0) followed by the row.
pub fn build(xmin: u64, cmin: u32, root: Tid, prev: Tid, row: &[u8]) -> Vec<u8> {
    let mut t = Vec::with_capacity(HEADER + row.len());
    t.extend_from_slice(&xmin.to_le_bytes());
    t.extend_from_slice(&0u64.to_le_bytes());
    t.extend_from_slice(&cmin.to_le_bytes());
    t.extend_from_slice(&0u32.to_le_bytes());
    t.extend_from_slice(&tid_bytes(Tid::INVALID));
    t.extend_from_slice(&tid_bytes(root));
    t.extend_from_slice(&0u16.to_le_bytes());
    t.extend_from_slice(&tid_bytes(prev));
    t.extend_from_slice(row);
    t
}
