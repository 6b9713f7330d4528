//! Type identities and their PostgreSQL OIDs.

use keel_common::Oid;

/// A SQL type known to Keel. `Unknown` is the type of an untyped literal or parameter before
/// binding resolves it, as in PostgreSQL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TypeId {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Numeric,
    Text,
    Varchar,
    Bpchar,
    Name,
    Bytea,
    Date,
    Timestamp,
    TimestampTz,
    Interval,
    Oid,
    Unknown,
    Void,
}

impl TypeId {
    pub fn oid(self) -> Oid {
        match self {
            TypeId::Bool => 16,
            TypeId::Bytea => 17,
            TypeId::Name => 19,
            TypeId::Int8 => 20,
            TypeId::Int2 => 21,
            TypeId::Int4 => 23,
            TypeId::Text => 25,
            TypeId::Oid => 26,
            TypeId::Float4 => 700,
            TypeId::Float8 => 701,
            TypeId::Unknown => 705,
            TypeId::Bpchar => 1042,
            TypeId::Varchar => 1043,
            TypeId::Date => 1082,
            TypeId::Timestamp => 1114,
            TypeId::TimestampTz => 1184,
            TypeId::Interval => 1186,
            TypeId::Numeric => 1700,
            TypeId::Void => 2278,
        }
    }

    pub fn from_oid(oid: Oid) -> Option<TypeId> {
        Some(match oid {
            16 => TypeId::Bool,
            17 => TypeId::Bytea,
            19 => TypeId::Name,
            20 => TypeId::Int8,
            21 => TypeId::Int2,
            23 => TypeId::Int4,
            25 => TypeId::Text,
            26 => TypeId::Oid,
            700 => TypeId::Float4,
            701 => TypeId::Float8,
            705 => TypeId::Unknown,
            1042 => TypeId::Bpchar,
            1043 => TypeId::Varchar,
            1082 => TypeId::Date,
            1114 => TypeId::Timestamp,
            1184 => TypeId::TimestampTz,
            1186 => TypeId::Interval,
            1700 => TypeId::Numeric,
            2278 => TypeId::Void,
            _ => return None,
        })
    }

    /// The name PostgreSQL prints for the type (`format_type`), without a typmod.
    pub fn name(self) -> &'static str {
        match self {
            TypeId::Bool => "boolean",
            TypeId::Int2 => "smallint",
            TypeId::Int4 => "integer",
            TypeId::Int8 => "bigint",
            TypeId::Float4 => "real",
            TypeId::Float8 => "double precision",
            TypeId::Numeric => "numeric",
            TypeId::Text => "text",
            TypeId::Varchar => "character varying",
            TypeId::Bpchar => "character",
            TypeId::Name => "name",
            TypeId::Bytea => "bytea",
            TypeId::Date => "date",
            TypeId::Timestamp => "timestamp without time zone",
            TypeId::TimestampTz => "timestamp with time zone",
            TypeId::Interval => "interval",
            TypeId::Oid => "oid",
            TypeId::Unknown => "unknown",
            TypeId::Void => "void",
        }
    }

    /// Fixed on-wire binary length (RowDescription's typlen), or -1 for variable length.
    pub fn typlen(self) -> i16 {
        match self {
            TypeId::Bool => 1,
            TypeId::Int2 => 2,
            TypeId::Int4 | TypeId::Float4 | TypeId::Date | TypeId::Oid => 4,
            TypeId::Int8 | TypeId::Float8 | TypeId::Timestamp | TypeId::TimestampTz => 8,
            TypeId::Interval => 16,
            TypeId::Name => 64,
            TypeId::Void => 4,
            TypeId::Unknown => -2,
            _ => -1,
        }
    }
}

/// A type with its modifier, as a column declares it: `varchar(20)` is
/// `SqlType { id: Varchar, typmod: 24 }` (PostgreSQL stores n + 4; -1 means none).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct SqlType {
    pub id: TypeId,
    pub typmod: i32,
}

impl SqlType {
    pub const fn new(id: TypeId) -> SqlType {
        SqlType { id, typmod: -1 }
    }

    pub const fn with_typmod(id: TypeId, typmod: i32) -> SqlType {
        SqlType { id, typmod }
    }
}

impl From<TypeId> for SqlType {
    fn from(id: TypeId) -> SqlType {
        SqlType::new(id)
    }
}
