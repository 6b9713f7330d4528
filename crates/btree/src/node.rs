//! Node and meta page layout, item encoding and in-page binary search.
//!
//! Every node (page kind 3) has 16 bytes of special space:
//! `[flags: u16][level: u16][right: u32][spare: 8]`. Slot 0 always holds the high key
//! (`key || tid`), empty on the rightmost page of a level (high key = +infinity). Data items
//! start at slot 1:
//! - leaf (level 0): `key || tid` where tid is 6 bytes big-endian (block, slot);
//! - internal: `key || tid || child: u32 BE`. The first data item's key is minus infinity
//!   (its bytes are ignored): it covers everything from the page's low bound.
//!
//! The key length is implied by the item length, so no length field is stored.

use keel_common::{BlockNo, PgError, PgResult, Tid, sqlstate};
use keel_storage::PageRead;
use keel_storage::buffer::PageMut;
use keel_storage::page::{HEADER_SIZE, LP_SIZE, PAGE_SIZE};
use std::cmp::Ordering;

pub const KIND_META: u16 = 2;
pub const KIND_NODE: u16 = 3;
pub const SPECIAL_SIZE: usize = 16;
pub const NO_BLOCK: BlockNo = u32::MAX;
pub const META_BLOCK: BlockNo = 0;
pub const TID_LEN: usize = 6;
pub const CHILD_LEN: usize = 4;
pub const HIGH_KEY: u16 = 0;
pub const FIRST_DATA: u16 = 1;

/// The page is the root (exactly one page carries this flag; changes together with the meta
/// page in one WAL record).
pub const FLAG_ROOT: u16 = 1;

const META_MAGIC: u32 = 0x4B42_5452; // "KBTR"
const META_VERSION: u32 = 1;

/// Largest "index row size" accepted, as PostgreSQL reports it (key + 8-byte tuple header).
pub const MAX_ROW_SIZE: usize = 2704;
const ROW_HEADER: usize = 8;

/// Bytes a page can spend on line pointers and items.
pub const CAPACITY: usize = PAGE_SIZE - HEADER_SIZE - SPECIAL_SIZE;

pub fn check_key_size(key: &[u8]) -> PgResult<()> {
    let row = key.len() + ROW_HEADER;
    if row > MAX_ROW_SIZE {
        return Err(PgError::new(
            sqlstate::PROGRAM_LIMIT_EXCEEDED,
            format!(
                "index row size {row} exceeds btree version 4 maximum {MAX_ROW_SIZE} for index"
            ),
        )
        .with_hint(
            "Values larger than 1/3 of a buffer page cannot be indexed.\n\
             Consider a function index of an MD5 hash of the value, or use full text indexing.",
        ));
    }
    Ok(())
}

pub fn tid_bytes(tid: Tid) -> [u8; TID_LEN] {
    let mut b = [0u8; TID_LEN];
    b[..4].copy_from_slice(&tid.block.to_be_bytes());
    b[4..].copy_from_slice(&tid.slot.to_be_bytes());
    b
}

pub fn tid_from(b: &[u8]) -> Tid {
    Tid::new(
        u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
        u16::from_be_bytes([b[4], b[5]]),
    )
}

/// A search target: `(key, tid)`, where a missing tid sorts before every tid of that key.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    pub key: &'a [u8],
    pub tid: Option<[u8; TID_LEN]>,
}

impl Target<'_> {
    /// Compares the target with a stored `key || tid` (a leaf item or a high key).
    #[inline]
    pub fn cmp_entry(&self, entry: &[u8]) -> Ordering {
        let (k, t) = entry.split_at(entry.len() - TID_LEN);
        match cmp_bytes(self.key, k) {
            Ordering::Equal => match &self.tid {
                None => Ordering::Less,
                Some(mine) => cmp_bytes(mine, t),
            },
            o => o,
        }
    }
}

/// Lexicographic byte order, as `<[u8]>::cmp`. Keys of up to 16 bytes (one or two integers,
/// dates, tids: most keys) are compared as two big-endian words instead of through a
/// `memcmp` call: zero padding keeps the order, and on equal words the shorter (a prefix of
/// the other) sorts first.
#[inline]
pub fn cmp_bytes(a: &[u8], b: &[u8]) -> Ordering {
    if a.len() <= 16 && b.len() <= 16 {
        word_at(a, 0)
            .cmp(&word_at(b, 0))
            .then_with(|| word_at(a, 8).cmp(&word_at(b, 8)))
            .then(a.len().cmp(&b.len()))
    } else {
        a.cmp(b)
    }
}

/// `s[at..at + 8]` as a big-endian word, zero-padded past the end of `s`.
#[inline(always)]
fn word_at(s: &[u8], at: usize) -> u64 {
    let n = s.len().saturating_sub(at);
    if n >= 8 {
        u64::from_be_bytes([
            s[at],
            s[at + 1],
            s[at + 2],
            s[at + 3],
            s[at + 4],
            s[at + 5],
            s[at + 6],
            s[at + 7],
        ])
    } else if n == 0 {
        0
    } else if s.len() >= 8 {
        // The last eight bytes end with the n wanted: shift them to the top.
        let end = s.len();
        let w = u64::from_be_bytes([
            s[end - 8],
            s[end - 7],
            s[end - 6],
            s[end - 5],
            s[end - 4],
            s[end - 3],
            s[end - 2],
            s[end - 1],
        ]);
        w << ((8 - n) * 8)
    } else {
        let mut w = 0u64;
        for (i, &b) in s[at..].iter().enumerate() {
            w |= (b as u64) << (56 - 8 * i);
        }
        w
    }
}

/// Node special-space accessors.
#[derive(Clone, Copy, Debug)]
pub struct NodeInfo {
    pub flags: u16,
    pub level: u16,
    pub right: BlockNo,
}

impl NodeInfo {
    pub fn is_leaf(&self) -> bool {
        self.level == 0
    }
    pub fn is_rightmost(&self) -> bool {
        self.right == NO_BLOCK
    }
    pub fn is_root(&self) -> bool {
        self.flags & FLAG_ROOT != 0
    }
}

fn corrupt(block: BlockNo, what: &str) -> PgError {
    PgError::new(
        sqlstate::INDEX_CORRUPTED,
        format!("index block {block} is corrupted: {what}"),
    )
}

pub fn info<P: PageRead>(page: &P, block: BlockNo) -> PgResult<NodeInfo> {
    if page.kind() != KIND_NODE || page.special().len() != SPECIAL_SIZE || page.slot_count() < 1 {
        return Err(corrupt(block, "not a btree node"));
    }
    let s = page.special();
    Ok(NodeInfo {
        flags: u16::from_le_bytes([s[0], s[1]]),
        level: u16::from_le_bytes([s[2], s[3]]),
        right: u32::from_le_bytes([s[4], s[5], s[6], s[7]]),
    })
}

pub fn set_info(page: &mut PageMut<'_>, ni: NodeInfo) {
    let s = page.special_mut();
    s[0..2].copy_from_slice(&ni.flags.to_le_bytes());
    s[2..4].copy_from_slice(&ni.level.to_le_bytes());
    s[4..8].copy_from_slice(&ni.right.to_le_bytes());
}

/// Formats `page` as an empty node with the given high key (empty = rightmost).
pub fn init_node(page: &mut PageMut<'_>, ni: NodeInfo, high_key: &[u8]) {
    page.init(KIND_NODE, SPECIAL_SIZE);
    set_info(page, ni);
    let ok = page.insert_item_at(HIGH_KEY, high_key);
    debug_assert!(ok);
}

/// Root block and level from the meta page.
pub fn read_meta<P: PageRead>(page: &P) -> PgResult<(BlockNo, u16)> {
    let s = page.special();
    if page.kind() != KIND_META || s.len() != SPECIAL_SIZE {
        return Err(corrupt(META_BLOCK, "bad meta page"));
    }
    let magic = u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
    let version = u32::from_le_bytes([s[4], s[5], s[6], s[7]]);
    if magic != META_MAGIC || version != META_VERSION {
        return Err(corrupt(META_BLOCK, "bad meta page version"));
    }
    let root = u32::from_le_bytes([s[8], s[9], s[10], s[11]]);
    let level = u16::from_le_bytes([s[12], s[13]]);
    Ok((root, level))
}

pub fn write_meta(page: &mut PageMut<'_>, root: BlockNo, level: u16, init: bool) {
    if init {
        page.init(KIND_META, SPECIAL_SIZE);
    }
    let s = page.special_mut();
    s[0..4].copy_from_slice(&META_MAGIC.to_le_bytes());
    s[4..8].copy_from_slice(&META_VERSION.to_le_bytes());
    s[8..12].copy_from_slice(&root.to_le_bytes());
    s[12..14].copy_from_slice(&level.to_le_bytes());
}

/// The `key || tid` part of an item (strips an internal item's child pointer).
#[inline]
pub fn entry_part(item: &[u8], leaf: bool) -> &[u8] {
    if leaf {
        item
    } else {
        &item[..item.len() - CHILD_LEN]
    }
}

#[inline]
pub fn entry_key(entry: &[u8]) -> &[u8] {
    &entry[..entry.len() - TID_LEN]
}

#[inline]
pub fn child_of(item: &[u8]) -> BlockNo {
    let n = item.len();
    u32::from_be_bytes([item[n - 4], item[n - 3], item[n - 2], item[n - 1]])
}

pub fn leaf_item(key: &[u8], tid: Tid) -> Vec<u8> {
    let mut v = Vec::with_capacity(key.len() + TID_LEN);
    v.extend_from_slice(key);
    v.extend_from_slice(&tid_bytes(tid));
    v
}

pub fn internal_item(entry: &[u8], child: BlockNo) -> Vec<u8> {
    let mut v = Vec::with_capacity(entry.len() + CHILD_LEN);
    v.extend_from_slice(entry);
    v.extend_from_slice(&child.to_be_bytes());
    v
}

/// Whether `target` belongs to a page to the right (target >= high key).
pub fn beyond_high_key<P: PageRead>(page: &P, ni: &NodeInfo, target: &Target<'_>) -> bool {
    !ni.is_rightmost() && target.cmp_entry(page.item(HIGH_KEY)) != Ordering::Less
}

/// First data slot whose entry is >= target (slot_count() if none).
pub fn lower_bound<P: PageRead>(page: &P, leaf: bool, target: &Target<'_>) -> u16 {
    let (mut lo, mut hi) = (FIRST_DATA, page.slot_count());
    if !leaf {
        // The first internal item is minus infinity: never >= a target comparison matters for.
        lo = FIRST_DATA + 1;
    }
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if target.cmp_entry(entry_part(page.item(mid), leaf)) == Ordering::Greater {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The internal item whose subtree covers `target`: the last one with key <= target.
pub fn child_slot<P: PageRead>(page: &P, target: &Target<'_>) -> u16 {
    // Items from FIRST_DATA+1 on with key <= target are skipped over by upper-bound search.
    let (mut lo, mut hi) = (FIRST_DATA + 1, page.slot_count());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if target.cmp_entry(entry_part(page.item(mid), false)) == Ordering::Less {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo - 1
}

/// Space an item takes in a page, line pointer included.
pub fn footprint(len: usize) -> usize {
    len + LP_SIZE
}
