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
    /// The pseudo-type of a function result with several columns (RETURNS TABLE, OUT
    /// parameters, SETOF record). No stored value has it.
    Record,
    /// The pseudo-type trigger functions return (RETURNS trigger). No value has it.
    Trigger,
    /// The pseudo-type of polymorphic array arguments and of the B-tree array operator class.
    AnyArray,
    /// Polymorphic pseudo-types of function parameters and results (no value has them): a
    /// call binds `anyelement` / `anynonarray` to one actual type and `anyarray` to its array
    /// type; the `anycompatible` family to the common type of its arguments.
    AnyElement,
    AnyNonArray,
    AnyCompatible,
    AnyCompatibleArray,
    AnyCompatibleNonArray,
    // One array type per element type, as PostgreSQL's typarray: int4[] and int4[][] are
    // the same type (dimensions are a property of the value).
    BoolArray,
    Int2Array,
    Int4Array,
    Int8Array,
    Float4Array,
    Float8Array,
    NumericArray,
    TextArray,
    VarcharArray,
    BpcharArray,
    NameArray,
    ByteaArray,
    DateArray,
    TimestampArray,
    TimestampTzArray,
    IntervalArray,
    OidArray,
    /// A cursor's name (PL/pgSQL's cursor variables, functions that return a cursor). Last,
    /// so the serialized catalogs keep their type numbers.
    Refcursor,
    /// A named composite (row) type: a table's row type, whose oid is the table's, or a
    /// `CREATE TYPE ... AS (...)` type. Its fields are in the catalog; its values carry their
    /// field types (`record::Record`).
    Composite(Oid),
    /// The array type of the composite type `Composite(oid)`. Its oid is the element's plus
    /// one: the catalog reserves that oid when it creates a composite type
    /// (`Catalog::new_type_oid`).
    CompositeArray(Oid),
    /// `record[]`: arrays of anonymous rows (`ARRAY[ROW(1, 2)]`, `array_agg` of rows).
    RecordArray,
    /// `int2vector` and `oidvector`, the catalogs' one-dimensional arrays (pg_index.indkey,
    /// pg_proc.proargtypes): values are arrays with lower bound 0, written space-separated
    /// (`'1 2 3'`). They subscript and unnest as arrays, cast implicitly to `int2[]` /
    /// `oid[]` for the array functions, and are scalars to `ARRAY[...]`, whose result is
    /// `int2vector[]` (PostgreSQL's `IsTrueArrayType` vectors are true arrays; its
    /// polymorphic and ARRAY rules then treat them as elements).
    Int2Vector,
    OidVector,
    Int2VectorArray,
    OidVectorArray,
    /// A relation's oid that prints as its name (`tableoid::regclass`). Values are
    /// `Datum::Oid` and compare as oids. Names need the catalog: a constant name is
    /// resolved when the statement is bound, and the name printed where the catalog is at
    /// hand (results sent to the client, casts to text); elsewhere the number is written,
    /// as PostgreSQL does for an oid no relation has.
    RegClass,
    /// A 128-bit universally unique identifier (RFC 4122), stored and sent as its 16 bytes
    /// in order; compared and hashed bytewise, as PostgreSQL's uuid_cmp and uuid_hash.
    Uuid,
    UuidArray,
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
            TypeId::Record => 2249,
            TypeId::Trigger => 2279,
            TypeId::AnyArray => 2277,
            TypeId::AnyElement => 2283,
            TypeId::AnyNonArray => 2776,
            TypeId::AnyCompatible => 5077,
            TypeId::AnyCompatibleArray => 5078,
            TypeId::AnyCompatibleNonArray => 5079,
            TypeId::BoolArray => 1000,
            TypeId::Int2Array => 1005,
            TypeId::Int4Array => 1007,
            TypeId::Int8Array => 1016,
            TypeId::Float4Array => 1021,
            TypeId::Float8Array => 1022,
            TypeId::NumericArray => 1231,
            TypeId::TextArray => 1009,
            TypeId::VarcharArray => 1015,
            TypeId::BpcharArray => 1014,
            TypeId::NameArray => 1003,
            TypeId::ByteaArray => 1001,
            TypeId::DateArray => 1182,
            TypeId::TimestampArray => 1115,
            TypeId::TimestampTzArray => 1185,
            TypeId::IntervalArray => 1187,
            TypeId::OidArray => 1028,
            TypeId::Refcursor => 1790,
            TypeId::Composite(oid) => oid,
            TypeId::CompositeArray(oid) => oid + 1,
            TypeId::RecordArray => 2287,
            TypeId::Int2Vector => 22,
            TypeId::OidVector => 30,
            TypeId::Int2VectorArray => 1006,
            TypeId::OidVectorArray => 1013,
            TypeId::RegClass => 2205,
            TypeId::Uuid => 2950,
            TypeId::UuidArray => 2951,
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
            2205 => TypeId::RegClass,
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
            2279 => TypeId::Trigger,
            2249 => TypeId::Record,
            2277 => TypeId::AnyArray,
            2283 => TypeId::AnyElement,
            2776 => TypeId::AnyNonArray,
            5077 => TypeId::AnyCompatible,
            5078 => TypeId::AnyCompatibleArray,
            5079 => TypeId::AnyCompatibleNonArray,
            1000 => TypeId::BoolArray,
            1005 => TypeId::Int2Array,
            1007 => TypeId::Int4Array,
            1016 => TypeId::Int8Array,
            1021 => TypeId::Float4Array,
            1022 => TypeId::Float8Array,
            1231 => TypeId::NumericArray,
            1009 => TypeId::TextArray,
            1015 => TypeId::VarcharArray,
            1014 => TypeId::BpcharArray,
            1003 => TypeId::NameArray,
            1001 => TypeId::ByteaArray,
            1182 => TypeId::DateArray,
            1115 => TypeId::TimestampArray,
            1185 => TypeId::TimestampTzArray,
            1187 => TypeId::IntervalArray,
            1028 => TypeId::OidArray,
            1790 => TypeId::Refcursor,
            2287 => TypeId::RecordArray,
            22 => TypeId::Int2Vector,
            30 => TypeId::OidVector,
            1006 => TypeId::Int2VectorArray,
            1013 => TypeId::OidVectorArray,
            2950 => TypeId::Uuid,
            2951 => TypeId::UuidArray,
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
            TypeId::RegClass => "regclass",
            TypeId::Unknown => "unknown",
            TypeId::Void => "void",
            TypeId::Record => "record",
            TypeId::Trigger => "trigger",
            TypeId::AnyArray => "anyarray",
            TypeId::AnyElement => "anyelement",
            TypeId::AnyNonArray => "anynonarray",
            TypeId::AnyCompatible => "anycompatible",
            TypeId::AnyCompatibleArray => "anycompatiblearray",
            TypeId::AnyCompatibleNonArray => "anycompatiblenonarray",
            TypeId::BoolArray => "boolean[]",
            TypeId::Int2Array => "smallint[]",
            TypeId::Int4Array => "integer[]",
            TypeId::Int8Array => "bigint[]",
            TypeId::Float4Array => "real[]",
            TypeId::Float8Array => "double precision[]",
            TypeId::NumericArray => "numeric[]",
            TypeId::TextArray => "text[]",
            TypeId::VarcharArray => "character varying[]",
            TypeId::BpcharArray => "character[]",
            TypeId::NameArray => "name[]",
            TypeId::ByteaArray => "bytea[]",
            TypeId::DateArray => "date[]",
            TypeId::TimestampArray => "timestamp without time zone[]",
            TypeId::TimestampTzArray => "timestamp with time zone[]",
            TypeId::IntervalArray => "interval[]",
            TypeId::OidArray => "oid[]",
            TypeId::Refcursor => "refcursor",
            // The name is the catalog's; code that shows one to a user asks the catalog.
            TypeId::Composite(_) => "record",
            TypeId::CompositeArray(_) | TypeId::RecordArray => "record[]",
            TypeId::Int2Vector => "int2vector",
            TypeId::OidVector => "oidvector",
            TypeId::Int2VectorArray => "int2vector[]",
            TypeId::OidVectorArray => "oidvector[]",
            TypeId::Uuid => "uuid",
            TypeId::UuidArray => "uuid[]",
        }
    }

    /// The element type of an array type; None for a scalar type.
    pub fn elem(self) -> Option<TypeId> {
        Some(match self {
            TypeId::BoolArray => TypeId::Bool,
            TypeId::Int2Array => TypeId::Int2,
            TypeId::Int4Array => TypeId::Int4,
            TypeId::Int8Array => TypeId::Int8,
            TypeId::Float4Array => TypeId::Float4,
            TypeId::Float8Array => TypeId::Float8,
            TypeId::NumericArray => TypeId::Numeric,
            TypeId::TextArray => TypeId::Text,
            TypeId::VarcharArray => TypeId::Varchar,
            TypeId::BpcharArray => TypeId::Bpchar,
            TypeId::NameArray => TypeId::Name,
            TypeId::ByteaArray => TypeId::Bytea,
            TypeId::DateArray => TypeId::Date,
            TypeId::TimestampArray => TypeId::Timestamp,
            TypeId::TimestampTzArray => TypeId::TimestampTz,
            TypeId::IntervalArray => TypeId::Interval,
            TypeId::OidArray => TypeId::Oid,
            TypeId::CompositeArray(oid) => TypeId::Composite(oid),
            TypeId::RecordArray => TypeId::Record,
            TypeId::Int2Vector => TypeId::Int2,
            TypeId::OidVector => TypeId::Oid,
            TypeId::Int2VectorArray => TypeId::Int2Vector,
            TypeId::OidVectorArray => TypeId::OidVector,
            TypeId::UuidArray => TypeId::Uuid,
            _ => return None,
        })
    }

    /// The array type whose elements are `self` (unknown literals become text, as
    /// `ARRAY['a']` is text[]); None for an array type or void.
    pub fn array_of(self) -> Option<TypeId> {
        Some(match self {
            TypeId::Unknown => TypeId::TextArray,
            TypeId::Bool => TypeId::BoolArray,
            TypeId::Int2 => TypeId::Int2Array,
            TypeId::Int4 => TypeId::Int4Array,
            TypeId::Int8 => TypeId::Int8Array,
            TypeId::Float4 => TypeId::Float4Array,
            TypeId::Float8 => TypeId::Float8Array,
            TypeId::Numeric => TypeId::NumericArray,
            TypeId::Text => TypeId::TextArray,
            TypeId::Varchar => TypeId::VarcharArray,
            TypeId::Bpchar => TypeId::BpcharArray,
            TypeId::Name => TypeId::NameArray,
            TypeId::Bytea => TypeId::ByteaArray,
            TypeId::Date => TypeId::DateArray,
            TypeId::Timestamp => TypeId::TimestampArray,
            TypeId::TimestampTz => TypeId::TimestampTzArray,
            TypeId::Interval => TypeId::IntervalArray,
            TypeId::Oid => TypeId::OidArray,
            TypeId::Composite(oid) => TypeId::CompositeArray(oid),
            TypeId::Record => TypeId::RecordArray,
            TypeId::Int2Vector => TypeId::Int2VectorArray,
            TypeId::OidVector => TypeId::OidVectorArray,
            TypeId::Uuid => TypeId::UuidArray,
            _ => return None,
        })
    }

    /// An array type in the sense of `ARRAY[...]`, polymorphism and the array operators:
    /// `int2vector` and `oidvector` have an element type but are not (see `devector`).
    pub fn is_array(self) -> bool {
        self.elem().is_some() && !self.is_vector()
    }

    /// `int2vector` or `oidvector`.
    pub fn is_vector(self) -> bool {
        matches!(self, TypeId::Int2Vector | TypeId::OidVector)
    }

    /// The plain array type a vector casts to implicitly (`int2vector` -> `int2[]`); any
    /// other type is itself.
    pub fn devector(self) -> TypeId {
        match self {
            TypeId::Int2Vector => TypeId::Int2Array,
            TypeId::OidVector => TypeId::OidArray,
            t => t,
        }
    }

    /// A polymorphic pseudo-type (`anyelement`, `anyarray`, `anycompatible`, ...).
    pub fn is_polymorphic(self) -> bool {
        matches!(
            self,
            TypeId::AnyArray
                | TypeId::AnyElement
                | TypeId::AnyNonArray
                | TypeId::AnyCompatible
                | TypeId::AnyCompatibleArray
                | TypeId::AnyCompatibleNonArray
        )
    }

    /// Fixed on-wire binary length (RowDescription's typlen), or -1 for variable length.
    pub fn typlen(self) -> i16 {
        match self {
            TypeId::Bool => 1,
            TypeId::Int2 => 2,
            TypeId::Int4 | TypeId::Float4 | TypeId::Date | TypeId::Oid | TypeId::RegClass => 4,
            TypeId::Int8 | TypeId::Float8 | TypeId::Timestamp | TypeId::TimestampTz => 8,
            TypeId::Interval | TypeId::Uuid => 16,
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
