//! Identifiers shared across layers.
//!
//! Transaction ids are 64-bit and never wrap, so nothing is ever frozen.

/// A transaction id. `Xid(0)` is invalid; `Xid(1)` is the bootstrap id whose rows are visible
/// to everyone (used for rows recovered from before the last restart, see `txn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Xid(pub u64);

impl Xid {
    pub const INVALID: Xid = Xid(0);
    pub const FROZEN: Xid = Xid(1);
    /// The xmin of a version taken back by ON CONFLICT's speculative insertion: aborted to
    /// every reader, whatever its transaction does.
    pub const ABORTED: Xid = Xid(2);
    pub const FIRST_NORMAL: Xid = Xid(3);
    pub fn is_valid(self) -> bool {
        self.0 != 0
    }
}

/// A commit sequence number: the order in which transactions became visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Csn(pub u64);

/// A log sequence number: a byte position in the write-ahead log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Lsn(pub u64);

impl std::fmt::Display for Lsn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:X}/{:X}", self.0 >> 32, self.0 & 0xffff_ffff)
    }
}

/// A catalog object id (tables, indexes, types), as PostgreSQL's `oid`.
pub type Oid = u32;

/// The file a relation's pages live in; a TRUNCATE gives a table a new one.
pub type RelFileId = u32;

/// A page number within a relation file.
pub type BlockNo = u32;

/// A tuple id: page and line-pointer slot within a relation, as PostgreSQL's `ctid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Tid {
    pub block: BlockNo,
    pub slot: u16,
}

impl Tid {
    pub const INVALID: Tid = Tid {
        block: u32::MAX,
        slot: u16::MAX,
    };

    pub fn new(block: BlockNo, slot: u16) -> Tid {
        Tid { block, slot }
    }

    pub fn is_valid(self) -> bool {
        self != Tid::INVALID
    }

    /// Packs into a sortable 64-bit integer (block-major), as index entries store it.
    pub fn to_u64(self) -> u64 {
        ((self.block as u64) << 16) | self.slot as u64
    }

    pub fn from_u64(v: u64) -> Tid {
        Tid {
            block: (v >> 16) as u32,
            slot: (v & 0xffff) as u16,
        }
    }
}

impl std::fmt::Display for Tid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({},{})", self.block, self.slot)
    }
}

/// A transaction's isolation level (shared by the parser, which reads it from SQL, and the
/// engine, which implements it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Isolation {
    /// READ COMMITTED (READ UNCOMMITTED too, as in PostgreSQL).
    #[default]
    ReadCommitted,
    /// REPEATABLE READ: snapshot isolation.
    RepeatableRead,
    /// SERIALIZABLE: snapshot isolation plus SSI (keel_txn::ssi).
    Serializable,
}

impl Isolation {
    /// The level as SHOW transaction_isolation names it.
    pub fn name(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "read committed",
            Isolation::RepeatableRead => "repeatable read",
            Isolation::Serializable => "serializable",
        }
    }

    /// The level a setting's canonical value names.
    pub fn from_name(s: &str) -> Isolation {
        match s {
            "serializable" => Isolation::Serializable,
            "repeatable read" => Isolation::RepeatableRead,
            _ => Isolation::ReadCommitted,
        }
    }
}
