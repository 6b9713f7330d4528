//! The 8 kB page format shared by every access method.
//!
//! ```text
//! 0      8         12      14      16      18        20     22      24
//! | lsn  | checksum | flags | lower | upper | special | kind | spare | line pointers ... ->
//!                         ... free space ...         <- items | special space |
//! ```
//! - `lsn`: end LSN of the last WAL record that changed the page (0 = never logged).
//! - `checksum`: CRC-32C of the page with this field zeroed, mixed with the block number, so a
//!   page written to the wrong place is caught too. Computed when the page is written out.
//! - Line pointers are 8 bytes: `[off: u16][len: u16][state: u16][spare: u16]` for a normal
//!   item, or for a redirect `[block: u32][slot: u16][state: u16]`. Slots are numbered from 0.
//! - An all-zero page is a valid "new" page (never initialized); `kind == 0` tells.

pub const PAGE_SIZE: usize = 8192;
pub const HEADER_SIZE: usize = 24;
pub const LP_SIZE: usize = 8;

const OFF_LSN: usize = 0;
const OFF_CHECKSUM: usize = 8;
const OFF_FLAGS: usize = 12;
const OFF_LOWER: usize = 14;
const OFF_UPPER: usize = 16;
const OFF_SPECIAL: usize = 18;
const OFF_KIND: usize = 20;

/// What a line pointer holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinePointer {
    /// Free for reuse.
    Unused,
    /// An item at `off` of `len` bytes.
    Normal { off: u16, len: u16 },
    /// A heap row root that now lives elsewhere (see the heap's README).
    Redirect { block: u32, slot: u16 },
    /// A dead row root still referenced by index entries.
    Dead,
}

const LP_UNUSED: u16 = 0;
const LP_NORMAL: u16 = 1;
const LP_REDIRECT: u16 = 2;
const LP_DEAD: u16 = 3;

pub fn encode_lp(lp: LinePointer) -> [u8; LP_SIZE] {
    let mut b = [0u8; LP_SIZE];
    match lp {
        LinePointer::Unused => b[4..6].copy_from_slice(&LP_UNUSED.to_le_bytes()),
        LinePointer::Normal { off, len } => {
            b[0..2].copy_from_slice(&off.to_le_bytes());
            b[2..4].copy_from_slice(&len.to_le_bytes());
            b[4..6].copy_from_slice(&LP_NORMAL.to_le_bytes());
        }
        LinePointer::Redirect { block, slot } => {
            b[0..4].copy_from_slice(&block.to_le_bytes());
            b[4..6].copy_from_slice(&slot.to_le_bytes());
            b[6..8].copy_from_slice(&LP_REDIRECT.to_le_bytes());
        }
        LinePointer::Dead => b[4..6].copy_from_slice(&LP_DEAD.to_le_bytes()),
    }
    b
}

pub(crate) fn decode_lp(b: &[u8]) -> LinePointer {
    let u16at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
    if u16at(6) == LP_REDIRECT {
        return LinePointer::Redirect {
            block: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            slot: u16at(4),
        };
    }
    match u16at(4) {
        LP_NORMAL => LinePointer::Normal {
            off: u16at(0),
            len: u16at(2),
        },
        LP_DEAD => LinePointer::Dead,
        _ => LinePointer::Unused,
    }
}

#[inline]
pub fn get_u16(p: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([p[off], p[off + 1]])
}

#[inline]
pub fn get_u32(p: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([p[off], p[off + 1], p[off + 2], p[off + 3]])
}

#[inline]
pub fn get_u64(p: &[u8], off: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&p[off..off + 8]);
    u64::from_le_bytes(b)
}

/// Read access to a page's structure, for any guard that can see the bytes.
pub trait PageRead {
    fn data(&self) -> &[u8; PAGE_SIZE];

    fn lsn(&self) -> u64 {
        get_u64(self.data(), OFF_LSN)
    }
    fn kind(&self) -> u16 {
        get_u16(self.data(), OFF_KIND)
    }
    fn flags(&self) -> u16 {
        get_u16(self.data(), OFF_FLAGS)
    }
    fn is_new(&self) -> bool {
        self.kind() == 0
    }
    fn lower(&self) -> usize {
        get_u16(self.data(), OFF_LOWER) as usize
    }
    fn upper(&self) -> usize {
        get_u16(self.data(), OFF_UPPER) as usize
    }
    fn special_offset(&self) -> usize {
        get_u16(self.data(), OFF_SPECIAL) as usize
    }
    fn special(&self) -> &[u8] {
        &self.data()[self.special_offset()..]
    }
    /// Number of line pointers (used or not).
    fn slot_count(&self) -> u16 {
        if self.is_new() {
            return 0;
        }
        ((self.lower() - HEADER_SIZE) / LP_SIZE) as u16
    }
    fn lp(&self, slot: u16) -> LinePointer {
        if slot >= self.slot_count() {
            return LinePointer::Unused;
        }
        let at = HEADER_SIZE + slot as usize * LP_SIZE;
        decode_lp(&self.data()[at..at + LP_SIZE])
    }
    /// The bytes of a normal item; empty for other states.
    fn item(&self, slot: u16) -> &[u8] {
        match self.lp(slot) {
            LinePointer::Normal { off, len } => {
                &self.data()[off as usize..off as usize + len as usize]
            }
            _ => &[],
        }
    }
    /// Contiguous free bytes between the line pointers and the items.
    fn free_space(&self) -> usize {
        if self.is_new() {
            return 0;
        }
        self.upper().saturating_sub(self.lower())
    }
    /// Space an `add_item` of `len` bytes needs (reusing a free slot if any).
    fn fits(&self, len: usize) -> bool {
        let has_unused = (0..self.slot_count()).any(|s| self.lp(s) == LinePointer::Unused);
        self.free_space() >= len + if has_unused { 0 } else { LP_SIZE }
    }
}

/// Checksum of a page image at `block`, with the checksum field taken as zero.
pub fn checksum(page: &[u8; PAGE_SIZE], block: u32) -> u32 {
    let c = crc32c::crc32c(&page[..OFF_CHECKSUM]);
    let c = crc32c::crc32c_append(c, &[0u8; 4]);
    let c = crc32c::crc32c_append(c, &page[OFF_CHECKSUM + 4..]);
    c ^ block.wrapping_mul(0x9E37_79B1)
}

/// Stamps the checksum before the page goes to disk.
pub fn set_checksum(page: &mut [u8; PAGE_SIZE], block: u32) {
    let c = checksum(page, block);
    page[OFF_CHECKSUM..OFF_CHECKSUM + 4].copy_from_slice(&c.to_le_bytes());
}

/// Whether a page read from disk is intact. An all-zero page (allocated, never written) is.
pub fn verify_checksum(page: &[u8; PAGE_SIZE], block: u32) -> bool {
    let stored = get_u32(page, OFF_CHECKSUM);
    if stored == 0 && page.iter().all(|&b| b == 0) {
        return true;
    }
    stored == checksum(page, block)
}

/// Layout offsets needed by writers (PageMut) in buffer.rs.
pub(crate) mod layout {
    pub const LSN: usize = super::OFF_LSN;
    pub const FLAGS: usize = super::OFF_FLAGS;
    pub const LOWER: usize = super::OFF_LOWER;
    pub const UPPER: usize = super::OFF_UPPER;
    pub const SPECIAL: usize = super::OFF_SPECIAL;
    pub const KIND: usize = super::OFF_KIND;
}
