//! Index access methods and their operator classes, as PostgreSQL's pg_am, pg_opfamily,
//! pg_opclass and pg_amop show them (same names and OIDs as PostgreSQL 15, for the types Keel
//! has). These are built-in objects, fixed in the code like Keel's types and functions: they are
//! not part of the per-database [`crate::Catalog`] value and are never written to disk. What an
//! index stores is the OID of the operator class of each of its columns
//! ([`crate::IndexDef::opclasses`]).
//!
//! An operator class ties a method to one input type and names the operator family whose
//! operators it serves; the family's pg_amop rows say which operator (by OID, with its left and
//! right types) implements which strategy. For B-tree the strategies are fixed:
//! 1 `<`, 2 `<=`, 3 `=`, 4 `>=`, 5 `>`. Cross-type rows (int4 vs int8, date vs timestamp) are
//! listed as PostgreSQL lists them, so a planner can tell that `int4col < 5::int8` is served.

use crate::{IndexDef, IndexMethod, TableDef};
use keel_common::{Oid, PgError, PgResult, sqlstate};
use keel_types::TypeId;

/// A row of pg_am for an index method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmDef {
    pub oid: Oid,
    pub name: &'static str,
    /// `amhandler`: the name PostgreSQL gives the handler function.
    pub handler: &'static str,
    pub method: IndexMethod,
}

/// pg_am rows of the index methods Keel implements.
pub const ACCESS_METHODS: &[AmDef] = &[AmDef {
    oid: 403,
    name: "btree",
    handler: "bthandler",
    method: IndexMethod::Btree,
}];

/// B-tree strategy numbers (PostgreSQL's BTLessStrategyNumber ... BTGreaterStrategyNumber).
pub const BT_LESS: u16 = 1;
pub const BT_LESS_EQUAL: u16 = 2;
pub const BT_EQUAL: u16 = 3;
pub const BT_GREATER_EQUAL: u16 = 4;
pub const BT_GREATER: u16 = 5;

/// The operator each B-tree strategy stands for.
pub const BT_STRATEGY_OPERATORS: [&str; 5] = ["<", "<=", "=", ">=", ">"];

/// A row of pg_opfamily.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpFamilyDef {
    pub oid: Oid,
    pub name: &'static str,
    pub method: IndexMethod,
}

/// A row of pg_opclass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpClassDef {
    pub oid: Oid,
    pub name: &'static str,
    pub method: IndexMethod,
    pub family: Oid,
    /// `opcintype`: the type the class indexes.
    pub input: TypeId,
    /// `opcdefault`: chosen when CREATE INDEX names no class for a column of type `input`.
    pub default: bool,
}

/// pg_amop rows of one operator family for one (left, right) type pair: the operator OID of
/// each strategy, strategy 1 first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmOpRow {
    pub family: Oid,
    pub left: TypeId,
    pub right: TypeId,
    pub operators: [Oid; 5],
}

/// One pg_amop row: `operator` (`left` op `right`) serves `strategy` of `family`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmOp {
    pub family: Oid,
    pub strategy: u16,
    pub left: TypeId,
    pub right: TypeId,
    pub operator: Oid,
    /// The operator's name (`<`, `=` ...).
    pub name: &'static str,
}

macro_rules! families {
    ($($oid:expr, $name:expr;)*) => {
        /// pg_opfamily rows of the B-tree families Keel's types belong to.
        pub const OP_FAMILIES: &[OpFamilyDef] = &[$(OpFamilyDef {
            oid: $oid, name: $name, method: IndexMethod::Btree,
        }),*];
    };
}

families! {
    397, "array_ops";
    2994, "record_ops";
    424, "bool_ops";
    426, "bpchar_ops";
    428, "bytea_ops";
    434, "datetime_ops";
    1970, "float_ops";
    1976, "integer_ops";
    1982, "interval_ops";
    1988, "numeric_ops";
    1989, "oid_ops";
    1994, "text_ops";
    2968, "uuid_ops";
}

macro_rules! opclasses {
    ($($oid:expr, $name:expr, $family:expr, $ty:ident, $default:expr;)*) => {
        /// pg_opclass rows of the B-tree classes for Keel's types (`select oid, opcname,
        /// opcfamily, opcintype::regtype, opcdefault from pg_opclass where opcmethod = 403`
        /// on PostgreSQL 15).
        pub const OP_CLASSES: &[OpClassDef] = &[$(OpClassDef {
            oid: $oid, name: $name, method: IndexMethod::Btree, family: $family,
            input: TypeId::$ty, default: $default,
        }),*];
    };
}

opclasses! {
    1978, "int4_ops", 1976, Int4, true;
    1979, "int2_ops", 1976, Int2, true;
    1981, "oid_ops", 1989, Oid, true;
    3122, "date_ops", 434, Date, true;
    3123, "float8_ops", 1970, Float8, true;
    3124, "int8_ops", 1976, Int8, true;
    3125, "numeric_ops", 1988, Numeric, true;
    3126, "text_ops", 1994, Text, true;
    3127, "timestamptz_ops", 434, TimestampTz, true;
    3128, "timestamp_ops", 434, Timestamp, true;
    10003, "bool_ops", 424, Bool, true;
    10004, "bpchar_ops", 426, Bpchar, true;
    10006, "bytea_ops", 428, Bytea, true;
    10012, "float4_ops", 1970, Float4, true;
    10022, "interval_ops", 1982, Interval, true;
    10028, "name_ops", 1994, Name, true;
    10044, "varchar_ops", 1994, Text, false;
    10065, "uuid_ops", 2968, Uuid, true;
    397, "array_ops", 397, AnyArray, true;
    10034, "record_ops", 2994, Record, true;
}

macro_rules! amops {
    ($($family:expr, $l:ident, $r:ident, [$($op:expr),*];)*) => {
        /// pg_amop rows of the families above, one line per (left, right) type pair (`select
        /// amopfamily, amoplefttype, amoprighttype, amopopr from pg_amop where amopmethod =
        /// 403`, ordered by strategy, on PostgreSQL 15).
        pub const AM_OPS: &[AmOpRow] = &[$(AmOpRow {
            family: $family, left: TypeId::$l, right: TypeId::$r, operators: [$($op),*],
        }),*];
    };
}

amops! {
    397, AnyArray, AnyArray, [1072, 1074, 1070, 1075, 1073];
    2994, Record, Record, [2990, 2992, 2988, 2993, 2991];
    424, Bool, Bool, [58, 1694, 91, 1695, 59];
    426, Bpchar, Bpchar, [1058, 1059, 1054, 1061, 1060];
    428, Bytea, Bytea, [1957, 1958, 1955, 1960, 1959];
    434, Date, Date, [1095, 1096, 1093, 1098, 1097];
    434, Date, Timestamp, [2345, 2346, 2347, 2348, 2349];
    434, Date, TimestampTz, [2358, 2359, 2360, 2361, 2362];
    434, Timestamp, Date, [2371, 2372, 2373, 2374, 2375];
    434, Timestamp, Timestamp, [2062, 2063, 2060, 2065, 2064];
    434, Timestamp, TimestampTz, [2534, 2535, 2536, 2537, 2538];
    434, TimestampTz, Date, [2384, 2385, 2386, 2387, 2388];
    434, TimestampTz, Timestamp, [2540, 2541, 2542, 2543, 2544];
    434, TimestampTz, TimestampTz, [1322, 1323, 1320, 1325, 1324];
    1970, Float4, Float4, [622, 624, 620, 625, 623];
    1970, Float4, Float8, [1122, 1124, 1120, 1125, 1123];
    1970, Float8, Float4, [1132, 1134, 1130, 1135, 1133];
    1970, Float8, Float8, [672, 673, 670, 675, 674];
    1976, Int8, Int8, [412, 414, 410, 415, 413];
    1976, Int8, Int2, [1870, 1872, 1868, 1873, 1871];
    1976, Int8, Int4, [418, 420, 416, 430, 419];
    1976, Int2, Int8, [1864, 1866, 1862, 1867, 1865];
    1976, Int2, Int2, [95, 522, 94, 524, 520];
    1976, Int2, Int4, [534, 540, 532, 542, 536];
    1976, Int4, Int8, [37, 80, 15, 82, 76];
    1976, Int4, Int2, [535, 541, 533, 543, 537];
    1976, Int4, Int4, [97, 523, 96, 525, 521];
    1982, Interval, Interval, [1332, 1333, 1330, 1335, 1334];
    1988, Numeric, Numeric, [1754, 1755, 1752, 1757, 1756];
    1989, Oid, Oid, [609, 611, 607, 612, 610];
    1994, Name, Name, [660, 661, 93, 663, 662];
    1994, Name, Text, [255, 256, 254, 257, 258];
    1994, Text, Name, [261, 262, 260, 263, 264];
    1994, Text, Text, [664, 665, 98, 667, 666];
    2968, Uuid, Uuid, [2974, 2976, 2972, 2977, 2975];
}

impl IndexMethod {
    /// The method's pg_am row.
    pub fn am(self) -> &'static AmDef {
        // Every IndexMethod has exactly one row (checked by a test).
        ACCESS_METHODS
            .iter()
            .find(|a| a.method == self)
            .unwrap_or(&ACCESS_METHODS[0])
    }

    /// The method called `name` (`CREATE INDEX ... USING name`).
    pub fn by_name(name: &str) -> Option<IndexMethod> {
        ACCESS_METHODS
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.method)
    }
}

/// The type an operator class's input is matched against: varchar is binary-coercible to text
/// (PostgreSQL indexes a varchar column with text_ops), the other types stand for themselves.
fn class_input_of(ty: TypeId) -> TypeId {
    match ty {
        TypeId::Varchar => TypeId::Text,
        t if t.is_array() => TypeId::AnyArray,
        TypeId::Composite(_) => TypeId::Record,
        other => other,
    }
}

/// The operator class with this OID.
pub fn opclass(oid: Oid) -> Option<&'static OpClassDef> {
    OP_CLASSES.iter().find(|c| c.oid == oid)
}

/// The default operator class of `method` for a column of type `ty` (PostgreSQL's
/// GetDefaultOpClass), or 42704 as PostgreSQL words it.
pub fn default_opclass(method: IndexMethod, ty: TypeId) -> PgResult<&'static OpClassDef> {
    let input = class_input_of(ty);
    OP_CLASSES
        .iter()
        .find(|c| c.method == method && c.default && c.input == input)
        .ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!(
                    "data type {} has no default operator class for access method \"{}\"",
                    ty.name(),
                    method.am().name
                ),
            )
            .with_hint(
                "You must specify an operator class for the index or define a default operator class for the data type.",
            )
        })
}

/// The operator class `name` of `method` for a column of type `ty` (an explicit class in
/// CREATE INDEX): 42704 if the method has no such class, 42804 if it does not take `ty`.
pub fn named_opclass(method: IndexMethod, name: &str, ty: TypeId) -> PgResult<&'static OpClassDef> {
    let class = OP_CLASSES
        .iter()
        .find(|c| c.method == method && c.name == name)
        .ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!(
                    "operator class \"{name}\" does not exist for access method \"{}\"",
                    method.am().name
                ),
            )
        })?;
    if class.input != class_input_of(ty) {
        return Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "operator class \"{name}\" does not accept data type {}",
                ty.name()
            ),
        ));
    }
    Ok(class)
}

/// The operator class of each of the index's columns: the ones it was created with, or, for
/// an index from a catalog written before classes were recorded, the defaults of its columns'
/// types (all such indexes are B-trees on types that have one).
pub fn index_opclasses(index: &IndexDef, table: &TableDef) -> PgResult<Vec<&'static OpClassDef>> {
    if !index.opclasses.is_empty() {
        return index
            .opclasses
            .iter()
            .map(|&oid| {
                opclass(oid).ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("cache lookup failed for operator class {oid}"),
                    )
                })
            })
            .collect();
    }
    index
        .columns
        .iter()
        .map(|&c| default_opclass(index.method, table.columns[c].ty.id))
        .collect()
}

/// The pg_amop rows of `family`, one per (left, right, strategy).
pub fn family_operators(family: Oid) -> impl Iterator<Item = AmOp> {
    AM_OPS
        .iter()
        .filter(move |r| r.family == family)
        .flat_map(|r| {
            r.operators.iter().enumerate().map(move |(i, &op)| AmOp {
                family: r.family,
                strategy: i as u16 + 1,
                left: r.left,
                right: r.right,
                operator: op,
                name: BT_STRATEGY_OPERATORS[i],
            })
        })
}

/// The strategy by which `class` serves `indexed_column op value` (types as given), if it does
/// (pg_amop's lookup: the operator must belong to the class's family with these types).
pub fn strategy_of(class: &OpClassDef, op: &str, left: TypeId, right: TypeId) -> Option<u16> {
    let (left, right) = (class_input_of(left), class_input_of(right));
    family_operators(class.family)
        .find(|o| o.name == op && o.left == left && o.right == right)
        .map(|o| o.strategy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_has_an_am_row_and_names_round_trip() {
        for am in ACCESS_METHODS {
            assert_eq!(am.method.am(), am);
            assert_eq!(IndexMethod::by_name(am.name), Some(am.method));
        }
        assert_eq!(IndexMethod::Btree.am().oid, 403);
        assert_eq!(IndexMethod::by_name("gin"), None);
    }

    #[test]
    fn default_classes_as_postgres_picks_them() {
        let oid = |t| default_opclass(IndexMethod::Btree, t).unwrap().oid;
        assert_eq!(oid(TypeId::Int4), 1978);
        assert_eq!(oid(TypeId::Text), 3126);
        // A varchar column gets text_ops (PostgreSQL 15: indclass 3126).
        assert_eq!(oid(TypeId::Varchar), 3126);
        assert_eq!(oid(TypeId::Name), 10028);
        assert_eq!(oid(TypeId::Bpchar), 10004);
        let e = default_opclass(IndexMethod::Btree, TypeId::Void).unwrap_err();
        assert_eq!(e.code, sqlstate::UNDEFINED_OBJECT);
    }

    #[test]
    fn every_class_has_a_family_and_its_own_type_operators() {
        for c in OP_CLASSES {
            assert!(OP_FAMILIES.iter().any(|f| f.oid == c.family), "{}", c.name);
            for (s, op) in BT_STRATEGY_OPERATORS.iter().enumerate() {
                assert_eq!(
                    strategy_of(c, op, c.input, c.input),
                    Some(s as u16 + 1),
                    "{} {op}",
                    c.name
                );
            }
        }
        let int4 = opclass(1978).unwrap();
        assert_eq!(strategy_of(int4, "<", TypeId::Int4, TypeId::Int8), Some(1));
        assert_eq!(strategy_of(int4, "<>", TypeId::Int4, TypeId::Int4), None);
        assert_eq!(strategy_of(int4, "=", TypeId::Int4, TypeId::Text), None);
        // int4 = int4 is operator 96, as in pg_operator.
        let eq = family_operators(1976)
            .find(|o| o.strategy == BT_EQUAL && o.left == TypeId::Int4 && o.right == TypeId::Int4)
            .unwrap();
        assert_eq!(eq.operator, 96);
    }

    #[test]
    fn an_index_from_an_older_catalog_uses_default_classes() {
        // IndexDef as catalogs wrote it before `opclasses` existed.
        let old = r#"{"oid":16390,"name":"t_pkey","table":16384,"columns":[1,0],
            "unique":true,"primary":true,"method":"Btree","relfile":16391}"#;
        let index: IndexDef = serde_json::from_str(old).unwrap();
        assert!(index.opclasses.is_empty());
        let column = |name: &str, ty| crate::ColumnDef {
            name: name.into(),
            ty: keel_types::SqlType::new(ty),
            not_null: false,
            default: None,
        };
        let table = TableDef {
            oid: 16384,
            name: "t".into(),
            columns: vec![column("a", TypeId::Int8), column("b", TypeId::Varchar)],
            relfile: 16385,
            persistence: crate::Persistence::Permanent,
            fillfactor: 100,
            foreign_keys: vec![],
            checks: vec![],
            identity_always: vec![],
            triggers: vec![],
            partition: None,
        };
        let classes: Vec<_> = index_opclasses(&index, &table)
            .unwrap()
            .iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(classes, ["text_ops", "int8_ops"]);
        let recorded = IndexDef {
            opclasses: vec![3126, 3124],
            ..index
        };
        let classes: Vec<_> = index_opclasses(&recorded, &table)
            .unwrap()
            .iter()
            .map(|c| c.oid)
            .collect();
        assert_eq!(classes, [3126, 3124]);
    }

    #[test]
    fn named_classes_check_the_column_type() {
        assert_eq!(
            named_opclass(IndexMethod::Btree, "int4_ops", TypeId::Int4)
                .unwrap()
                .oid,
            1978
        );
        let e = named_opclass(IndexMethod::Btree, "int4_ops", TypeId::Text).unwrap_err();
        assert_eq!(e.code, sqlstate::DATATYPE_MISMATCH);
        let e = named_opclass(IndexMethod::Btree, "nope_ops", TypeId::Text).unwrap_err();
        assert_eq!(e.code, sqlstate::UNDEFINED_OBJECT);
    }
}
