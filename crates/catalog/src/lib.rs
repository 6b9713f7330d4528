//! The system catalog: tables, columns, indexes and sequences.
//!
//! A [`Catalog`] is an immutable value. DDL clones the current one, changes the clone, and the
//! session keeps it as its transaction's pending catalog; COMMIT installs it as the new current
//! catalog (WAL-logged by the engine), ROLLBACK drops it. So DDL is transactional and readers
//! never see a half-made change. Installation is serialized by the engine and fails with 40001
//! if another DDL committed since the pending catalog was cloned.
//!
//! Relation names share one namespace per schema (tables, indexes and sequences), as in
//! PostgreSQL's pg_class. Only schema `public` exists for user objects.
//!
//! Scale: entries live in persistent maps ([`RelMap`]) found by oid, by name and by owner
//! (a table's indexes and serial sequences), so lookups never scan and a clone is O(1) at any
//! number of relations. Each map notes what changed since the catalog was installed, so a DDL
//! commit logs a [`CatalogDelta`], not the whole catalog.
//!
//! Declarative partitioning's bound logic (keys, bounds, routing, pruning) is [`partition`].

pub mod am;
mod defs;
mod delta;
pub mod partition;
pub mod partition_tree;
mod relmap;
mod types;
mod view;
pub use defs::*;
pub use delta::CatalogDelta;
pub use relmap::{CatalogEntry, RelMap};
pub use types::{Composite, FieldDef, TypeDef};
pub use view::ViewDef;

use keel_common::{Oid, PgError, PgResult, RelFileId, sqlstate};
use keel_types::SqlType;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// First OID handed to user objects, as PostgreSQL's FirstNormalObjectId.
pub const FIRST_USER_OID: Oid = 16384;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// Bumped by every installed change; a transaction's pending catalog whose base is older
    /// than the installed one is rebased onto it ([`Catalog::rebased_onto`]).
    pub version: u64,
    /// The next oid as far as this catalog knows (what checkpoints and commit records keep).
    pub next_oid: Oid,
    /// The oid allocator, shared by every clone of a catalog: concurrent DDL transactions,
    /// each changing its own clone, never hand out the same oid.
    #[serde(skip)]
    pub oids: OidCounter,
    pub tables: RelMap<TableDef>,
    pub indexes: RelMap<IndexDef>,
    pub sequences: RelMap<SequenceDef>,
    /// User-defined functions, keyed by signature (`FunctionDef::signature`). Absent in
    /// catalogs written before functions existed.
    #[serde(default)]
    pub functions: RelMap<FunctionDef>,
    /// Views. Absent in catalogs written before views existed.
    #[serde(default)]
    pub views: RelMap<ViewDef>,
    /// User-defined types. Absent in catalogs written before they existed.
    #[serde(default)]
    pub types: RelMap<TypeDef>,
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog {
            version: 0,
            next_oid: FIRST_USER_OID,
            oids: OidCounter::default(),
            tables: RelMap::default(),
            indexes: RelMap::default(),
            sequences: RelMap::default(),
            functions: RelMap::default(),
            views: RelMap::default(),
            types: RelMap::default(),
        }
    }
}

/// See [`Catalog::oids`]. Equal to any other: it is an allocator, not content.
#[derive(Clone, Debug, Default)]
pub struct OidCounter(pub Arc<std::sync::atomic::AtomicU32>);

impl PartialEq for OidCounter {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Any relation a name can refer to.
#[derive(Clone, Debug)]
pub enum Relation {
    Table(Arc<TableDef>),
    Index(Arc<IndexDef>),
    Sequence(Arc<SequenceDef>),
    View(Arc<ViewDef>),
}

impl Catalog {
    pub fn new_oid(&mut self) -> Oid {
        use std::sync::atomic::Ordering::SeqCst;
        // A catalog read back from disk (or rebuilt by recovery) knows a later next_oid
        // than its new counter.
        self.oids.0.fetch_max(self.next_oid, SeqCst);
        let oid = self.oids.0.fetch_add(1, SeqCst);
        self.next_oid = self.next_oid.max(oid + 1);
        oid
    }

    /// Looks a relation up by (lower-cased, unquoted-folded) name.
    pub fn relation(&self, name: &str) -> Option<Relation> {
        if let Some(t) = self.tables.by_name(name) {
            return Some(Relation::Table(t.clone()));
        }
        if let Some(i) = self.indexes.by_name(name) {
            return Some(Relation::Index(i.clone()));
        }
        if let Some(v) = self.views.by_name(name) {
            return Some(Relation::View(v.clone()));
        }
        self.sequences
            .by_name(name)
            .map(|s| Relation::Sequence(s.clone()))
    }

    /// The name of relation `oid` (table, index, view or sequence), as regclass prints it.
    pub fn relation_name(&self, oid: Oid) -> Option<&str> {
        if let Some(t) = self.tables.get(&oid) {
            return Some(&t.name);
        }
        if let Some(i) = self.indexes.get(&oid) {
            return Some(&i.name);
        }
        if let Some(v) = self.views.get(&oid) {
            return Some(&v.name);
        }
        self.sequences.get(&oid).map(|s| s.name.as_str())
    }

    pub fn name_taken(&self, name: &str) -> bool {
        self.tables.by_name(name).is_some()
            || self.indexes.by_name(name).is_some()
            || self.sequences.by_name(name).is_some()
            || self.views.by_name(name).is_some()
            || self.types.by_name(name).is_some()
    }

    /// The views that read relation (table or view) `oid`, directly.
    pub fn views_reading(&self, oid: Oid) -> impl Iterator<Item = &Arc<ViewDef>> {
        self.views
            .values()
            .filter(move |v| v.depends_on.contains(&oid))
    }

    /// `table` and, when it is partitioned, every partition below it, parents first.
    pub fn partition_tree(&self, table: &Arc<TableDef>) -> Vec<Arc<TableDef>> {
        let mut out = vec![table.clone()];
        let mut i = 0;
        while i < out.len() {
            if out[i].partition_key().is_some() {
                let below: Vec<_> = self.tables.owned_by(out[i].oid).cloned().collect();
                out.extend(below);
            }
            i += 1;
        }
        out
    }

    pub fn table_by_name(&self, name: &str) -> Option<&Arc<TableDef>> {
        self.tables.by_name(name)
    }

    /// The table `name`, or 42P01 `relation "name" does not exist`.
    /// Table `oid`, which the caller found in this catalog (XX000 if it is gone).
    pub fn table_of(&self, oid: Oid) -> PgResult<Arc<TableDef>> {
        (self.tables.get(&oid).cloned()).ok_or_else(|| PgError::internal("table vanished"))
    }

    pub fn table(&self, name: &str) -> PgResult<&Arc<TableDef>> {
        self.table_by_name(name).ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{name}\" does not exist"),
            )
        })
    }

    /// The named result columns of function `f` (name, type): the columns of the table whose
    /// row type it returns, else its OUT, INOUT and RETURNS TABLE parameters; empty when the
    /// result is the one unnamed `ret`.
    pub fn result_columns(&self, f: &FunctionDef) -> Vec<(Option<String>, SqlType)> {
        if let Some(c) = f.row_type.and_then(|oid| self.composite(oid)) {
            return (c.fields.into_iter())
                .map(|f| (Some(f.name), f.ty))
                .collect();
        }
        // Unnamed OUT parameters of a several-column result are `columnN`, as PostgreSQL
        // names them; one alone leaves the result named after the function.
        let cols: Vec<_> = f.result_columns().collect();
        let several = cols.len() > 1;
        cols.iter()
            .enumerate()
            .map(|(i, a)| {
                let name = match &a.name {
                    None if several => Some(format!("column{}", i + 1)),
                    n => n.clone(),
                };
                (name, a.ty)
            })
            .collect()
    }

    /// The table's indexes in oid order, found through the table: O(their number).
    pub fn indexes_of(&self, table: Oid) -> impl Iterator<Item = &Arc<IndexDef>> {
        self.indexes.owned_by(table)
    }

    /// The sequences owned by a column of `table` (serial and identity columns).
    pub fn sequences_of(&self, table: Oid) -> impl Iterator<Item = &Arc<SequenceDef>> {
        self.sequences.owned_by(table)
    }

    /// The overloads of function `name`, in oid order. O(functions): there are few.
    pub fn functions_named<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = &'a Arc<FunctionDef>> {
        self.functions.values().filter(move |f| f.proname == name)
    }

    pub fn sequence_by_name(&self, name: &str) -> Option<&Arc<SequenceDef>> {
        self.sequences.by_name(name)
    }

    /// Every relation file in use, with its persistence (for recovery and crash reset).
    pub fn relfiles(&self) -> Vec<(RelFileId, Persistence)> {
        let mut out: Vec<_> = self
            .tables
            .values()
            .map(|t| (t.relfile, t.persistence))
            .collect();
        for i in self.indexes.values() {
            let persistence = self
                .tables
                .get(&i.table)
                .map_or(Persistence::Permanent, |t| t.persistence);
            out.push((i.relfile, persistence));
        }
        out
    }

    /// Picks an unused name `base`, `base1`, `base2`... as PostgreSQL names implicit indexes.
    pub fn choose_name(&self, base: &str) -> String {
        if !self.name_taken(base) {
            return base.to_string();
        }
        (1..)
            .map(|n| format!("{base}{n}"))
            .find(|n| !self.name_taken(n))
            .unwrap_or_else(|| base.to_string())
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    pub fn from_bytes(bytes: &[u8]) -> PgResult<Catalog> {
        serde_json::from_slice(bytes)
            .map_err(|e| PgError::new(sqlstate::DATA_CORRUPTED, format!("catalog is corrupt: {e}")))
    }
}

// Tests written against the public API: `keel_catalog::` resolves to this crate in them.
#[cfg(test)]
extern crate self as keel_catalog;
#[cfg(test)]
mod map_tests;
