//! Catalog entries.

use keel_common::{Oid, RelFileId};
use keel_types::SqlType;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Persistence {
    /// WAL-logged, survives crashes.
    Permanent,
    /// No WAL; emptied by crash recovery.
    Unlogged,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnDef {
    pub name: String,
    pub ty: SqlType,
    pub not_null: bool,
    /// The DEFAULT expression as SQL text, re-parsed when used (`nextval('t_id_seq'::regclass)`).
    pub default: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableDef {
    pub oid: Oid,
    pub name: String,
    pub columns: Vec<ColumnDef>,
    /// The file the heap lives in; TRUNCATE swaps it for a new one.
    pub relfile: RelFileId,
    pub persistence: Persistence,
    /// Percentage of each heap page filled by inserts (10..=100).
    pub fillfactor: u8,
    pub foreign_keys: Vec<ForeignKeyDef>,
    /// CHECK constraints, in creation order. Absent in catalogs written before they existed.
    #[serde(default)]
    pub checks: Vec<CheckDef>,
    /// Columns (0-based) declared GENERATED ALWAYS AS IDENTITY: INSERT and UPDATE may only
    /// give them DEFAULT (428C9). BY DEFAULT identity columns behave as serial ones.
    #[serde(default)]
    pub identity_always: Vec<usize>,
    /// Triggers (pg_trigger rows of the table), in name order: the order they fire in.
    #[serde(default)]
    pub triggers: Vec<TriggerDef>,
    /// Declarative partitioning: the key of a partitioned table, the parent and bound of a
    /// partition (both for a sub-partitioned partition). None for a plain table; absent in
    /// catalogs written before partitioning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<Box<Partitioning>>,
}

/// A table's place in a partition tree (pg_partitioned_table, pg_class.relpartbound).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Partitioning {
    /// PARTITION BY: the table holds no rows itself; each goes to the partition its key
    /// routes it to.
    pub key: Option<crate::partition::PartitionKey>,
    /// PARTITION OF: the parent table and this partition's bound.
    pub of: Option<(Oid, crate::partition::PartitionBound)>,
}

impl TableDef {
    /// The partition key, when the table is partitioned.
    pub fn partition_key(&self) -> Option<&crate::partition::PartitionKey> {
        self.partition.as_ref()?.key.as_ref()
    }

    /// The parent and bound, when the table is a partition.
    pub fn partition_of(&self) -> Option<&(Oid, crate::partition::PartitionBound)> {
        self.partition.as_ref()?.of.as_ref()
    }

    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum IndexMethod {
    Btree,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexDef {
    pub oid: Oid,
    pub name: String,
    pub table: Oid,
    /// Indexed columns, as 0-based positions in the table's column list.
    pub columns: Vec<usize>,
    pub unique: bool,
    pub primary: bool,
    pub method: IndexMethod,
    pub relfile: RelFileId,
    /// The operator class (pg_opclass OID, see `am.rs`) of each column, as pg_index.indclass.
    /// Empty in catalogs written before classes were recorded: the columns' default classes
    /// (`am::index_opclasses`).
    #[serde(default)]
    pub opclasses: Vec<Oid>,
    /// The partitioned table's index this partition's index belongs to (pg_inherits for
    /// indexes): created with it, dropped with it, and not droppable alone.
    #[serde(default)]
    pub parent: Option<Oid>,
    /// It is a PRIMARY KEY or UNIQUE constraint's index, not a CREATE INDEX one: a
    /// partition's copy is named `p_a_key`, not `p_a_idx`.
    #[serde(default)]
    pub constraint: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForeignKeyDef {
    pub name: String,
    pub columns: Vec<usize>,
    pub ref_table: Oid,
    pub ref_columns: Vec<usize>,
    /// What deleting a referenced row does to the referencing rows (pg_constraint.confdeltype).
    #[serde(default)]
    pub on_delete: FkAction,
    /// What changing a referenced key does to them (confupdtype).
    #[serde(default)]
    pub on_update: FkAction,
}

/// A foreign key's referential action.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum FkAction {
    /// The referenced row may not go while referenced (checked at once in keel).
    #[default]
    NoAction,
    Restrict,
    /// Delete the referencing rows, or give them the new key.
    Cascade,
    /// Set the referencing columns to NULL.
    SetNull,
    /// Set the referencing columns to their defaults.
    SetDefault,
}

/// When a trigger fires relative to its event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TriggerTiming {
    Before,
    After,
    /// A view's row trigger that does the write in place of the view (which has no rows).
    InsteadOf,
}

/// A trigger on a table: `CREATE TRIGGER name timing events ON table FOR EACH ROW|STATEMENT
/// [WHEN (cond)] EXECUTE FUNCTION function(args)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TriggerDef {
    pub oid: Oid,
    pub name: String,
    /// The trigger function (`RETURNS trigger`, no arguments) and its name for messages.
    pub function: Oid,
    pub function_name: String,
    pub timing: TriggerTiming,
    pub on_insert: bool,
    pub on_update: bool,
    pub on_delete: bool,
    /// TRUNCATE (statement-level only).
    #[serde(default)]
    pub on_truncate: bool,
    /// `UPDATE OF columns`: 0-based positions; empty = any UPDATE.
    pub update_columns: Vec<usize>,
    /// FOR EACH ROW (else FOR EACH STATEMENT).
    pub row: bool,
    /// The WHEN condition as SQL text over NEW and OLD.
    pub when: Option<String>,
    /// The arguments, as strings (TG_ARGV).
    pub args: Vec<String>,
    /// ALTER TABLE ... DISABLE TRIGGER turns it off.
    pub enabled: bool,
    /// Under which `session_replication_role` an enabled trigger fires (ENABLE, ENABLE
    /// REPLICA, ENABLE ALWAYS: pg_trigger.tgenabled 'O', 'R', 'A').
    #[serde(default)]
    pub fires_on: TriggerFires,
    /// `REFERENCING OLD TABLE AS name` / `NEW TABLE AS name` (AFTER triggers of one event):
    /// the names under which the function's statements read the rows the firing statement
    /// replaced or deleted / inserted or updated to (pg_trigger.tgoldtable, tgnewtable).
    #[serde(default)]
    pub old_table: Option<String>,
    #[serde(default)]
    pub new_table: Option<String>,
}

/// When an enabled trigger fires, by the session's `session_replication_role`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TriggerFires {
    /// Unless the role is `replica` (ENABLE; the default).
    #[default]
    Origin,
    /// Only when the role is `replica` (ENABLE REPLICA).
    Replica,
    /// Whatever the role (ENABLE ALWAYS).
    Always,
}

impl TriggerFires {
    /// Whether a trigger set so fires in a session whose role is `replica` or not.
    pub fn fires(self, replica: bool) -> bool {
        match self {
            TriggerFires::Origin => !replica,
            TriggerFires::Replica => replica,
            TriggerFires::Always => true,
        }
    }
}

/// A CHECK constraint: the expression as SQL text, re-parsed and bound against the table's
/// columns by every INSERT/UPDATE plan (as column defaults are).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckDef {
    pub name: String,
    pub expr: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SequenceDef {
    pub oid: Oid,
    pub name: String,
    pub start: i64,
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    /// CYCLE: wrap around to min (max) instead of failing with 2200H at the limit.
    #[serde(default)]
    pub cycle: bool,
    /// The column that owns it (serial), dropped with the table.
    pub owned_by: Option<(Oid, usize)>,
}

impl crate::CatalogEntry for TableDef {
    fn oid(&self) -> Oid {
        self.oid
    }
    fn name(&self) -> &str {
        &self.name
    }
    /// A partition is owned by its parent: `tables.owned_by(parent)` lists the partitions.
    fn owner(&self) -> Option<Oid> {
        self.partition_of().map(|(parent, _)| *parent)
    }
}

impl crate::CatalogEntry for IndexDef {
    fn oid(&self) -> Oid {
        self.oid
    }
    fn name(&self) -> &str {
        &self.name
    }
    /// A table's indexes are found through the table (every written row asks).
    fn owner(&self) -> Option<Oid> {
        Some(self.table)
    }
}

impl crate::CatalogEntry for SequenceDef {
    fn oid(&self) -> Oid {
        self.oid
    }
    fn name(&self) -> &str {
        &self.name
    }
    /// Serial sequences are found through their table (DROP TABLE, TRUNCATE RESTART IDENTITY).
    fn owner(&self) -> Option<Oid> {
        self.owned_by.map(|(table, _)| table)
    }
}

/// A parameter's mode (pg_proc.proargmodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ArgMode {
    In,
    Out,
    InOut,
    Variadic,
    /// A RETURNS TABLE column (PostgreSQL's 't').
    Table,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionArg {
    pub name: Option<String>,
    pub ty: SqlType,
    pub mode: ArgMode,
    /// The DEFAULT expression as SQL text, bound where a call leaves the argument out.
    pub default: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FuncVolatility {
    Immutable,
    Stable,
    Volatile,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FuncLanguage {
    Sql,
    Plpgsql,
}

/// A user-defined function (a pg_proc row). Overloads share a name; the catalog key is the
/// signature (`name(type, ...)`, input types only), unique as pg_proc's
/// (proname, proargtypes, pronamespace) is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionDef {
    pub oid: Oid,
    /// The function's name (pg_proc.proname); overloads share it.
    pub proname: String,
    pub schema: String,
    /// Every declared parameter, in order, with OUT and TABLE ones.
    pub args: Vec<FunctionArg>,
    /// The result type (the element type for SETOF; `record` for several OUT columns).
    pub ret: SqlType,
    /// SETOF or RETURNS TABLE: a set-returning function.
    pub set_returning: bool,
    pub language: FuncLanguage,
    /// The body as written between the quotes.
    pub body: String,
    pub volatility: FuncVolatility,
    /// STRICT / RETURNS NULL ON NULL INPUT: NULL when any argument is NULL, body not run.
    pub strict: bool,
    /// LEAKPROOF (pg_proc.proleakproof), set by ALTER FUNCTION. Nothing in keel reads it yet:
    /// it matters to security-barrier views and row security.
    #[serde(default)]
    pub leakproof: bool,
    /// `name(type, ...)` of the input arguments: the key in the catalog's function map.
    pub signature: String,
    /// The table whose row type is the result (`RETURNS [SETOF] t`, `ret` then `record`):
    /// the result's columns are the table's as it is now (`Catalog::result_columns`), and
    /// the table cannot be dropped without CASCADE while the function exists.
    #[serde(default)]
    pub row_type: Option<Oid>,
}

impl FunctionDef {
    /// The arguments a call passes (IN, INOUT, VARIADIC), in order.
    pub fn input_args(&self) -> impl Iterator<Item = &FunctionArg> {
        self.args
            .iter()
            .filter(|a| matches!(a.mode, ArgMode::In | ArgMode::InOut | ArgMode::Variadic))
    }

    /// The columns of the result when the declaration names them (OUT, INOUT and RETURNS
    /// TABLE parameters), in order; empty when the result is the one unnamed `ret`.
    pub fn result_columns(&self) -> impl Iterator<Item = &FunctionArg> {
        self.args
            .iter()
            .filter(|a| matches!(a.mode, ArgMode::Out | ArgMode::InOut | ArgMode::Table))
    }

    /// The signature key of `name` with these input argument types.
    pub fn signature_of(name: &str, types: &[SqlType]) -> String {
        // A composite is named by its oid: two row types must not share a signature.
        let list: Vec<String> = (types.iter())
            .map(|t| match t.id {
                keel_types::TypeId::Composite(oid) => format!("composite {oid}"),
                id => id.name().to_string(),
            })
            .collect();
        format!("{name}({})", list.join(", "))
    }
}

impl crate::CatalogEntry for FunctionDef {
    fn oid(&self) -> Oid {
        self.oid
    }
    fn name(&self) -> &str {
        &self.signature
    }
}
