//! What one installed DDL transaction changed in the catalog: the unit a commit record logs
//! and recovery replays.
//!
//! A delta carries the *final* value of each entry it touched (or its removal) and the
//! counters after the change, never increments. Replaying it on a catalog that already
//! contains it therefore changes nothing; recovery skips such deltas by version anyway (the
//! checkpointed catalog may be newer than the redo point), and refuses a gap in versions.

use crate::{Catalog, FunctionDef, IndexDef, SequenceDef, TableDef, TypeDef, ViewDef};
use keel_common::{Oid, PgError, PgResult, sqlstate};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CatalogDelta {
    /// The version of the catalog this delta produces (its base's plus one).
    pub version: u64,
    pub next_oid: Oid,
    pub tables: Vec<Arc<TableDef>>,
    pub dropped_tables: Vec<Oid>,
    pub indexes: Vec<Arc<IndexDef>>,
    pub dropped_indexes: Vec<Oid>,
    pub sequences: Vec<Arc<SequenceDef>>,
    pub dropped_sequences: Vec<Oid>,
    #[serde(default)]
    pub functions: Vec<Arc<FunctionDef>>,
    #[serde(default)]
    pub dropped_functions: Vec<Oid>,
    #[serde(default)]
    pub views: Vec<Arc<ViewDef>>,
    #[serde(default)]
    pub dropped_views: Vec<Oid>,
    #[serde(default)]
    pub types: Vec<Arc<TypeDef>>,
    #[serde(default)]
    pub dropped_types: Vec<Oid>,
}

impl CatalogDelta {
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    pub fn from_bytes(bytes: &[u8]) -> PgResult<CatalogDelta> {
        serde_json::from_slice(bytes).map_err(|e| {
            PgError::new(
                sqlstate::DATA_CORRUPTED,
                format!("catalog change record is corrupt: {e}"),
            )
        })
    }
}

impl Catalog {
    /// The changes since this catalog's maps were last cleared (its base, the catalog it was
    /// cloned from when that was installed), at this catalog's version. O(changed entries).
    pub fn delta(&self) -> CatalogDelta {
        let (tables, dropped_tables) = self.tables.changes();
        let (indexes, dropped_indexes) = self.indexes.changes();
        let (sequences, dropped_sequences) = self.sequences.changes();
        let (functions, dropped_functions) = self.functions.changes();
        let (views, dropped_views) = self.views.changes();
        let (types, dropped_types) = self.types.changes();
        CatalogDelta {
            version: self.version,
            next_oid: self.next_oid,
            tables,
            dropped_tables,
            indexes,
            dropped_indexes,
            sequences,
            dropped_sequences,
            functions,
            dropped_functions,
            views,
            dropped_views,
            types,
            dropped_types,
        }
    }

    pub fn has_changes(&self) -> bool {
        self.tables.has_changes()
            || self.indexes.has_changes()
            || self.sequences.has_changes()
            || self.functions.has_changes()
            || self.views.has_changes()
            || self.types.has_changes()
    }

    /// Forgets the change sets: done when the catalog is installed, so the next DDL's
    /// delta holds only its own changes.
    pub fn clear_changes(&mut self) {
        self.tables.clear_changes();
        self.indexes.clear_changes();
        self.sequences.clear_changes();
        self.functions.clear_changes();
        self.views.clear_changes();
        self.types.clear_changes();
    }

    /// Replays `d` (recovery). Returns false when this catalog already contains it (its
    /// version is at least `d.version`); fails with XX001 on a gap, which would mean a lost
    /// commit record.
    pub fn apply_delta(&mut self, d: &CatalogDelta) -> PgResult<bool> {
        if d.version <= self.version {
            return Ok(false);
        }
        if d.version != self.version + 1 {
            return Err(PgError::new(
                sqlstate::DATA_CORRUPTED,
                format!(
                    "catalog change to version {} cannot follow catalog version {}",
                    d.version, self.version
                ),
            ));
        }
        self.tables.apply(&d.tables, &d.dropped_tables);
        self.indexes.apply(&d.indexes, &d.dropped_indexes);
        self.sequences.apply(&d.sequences, &d.dropped_sequences);
        self.functions.apply(&d.functions, &d.dropped_functions);
        self.views.apply(&d.views, &d.dropped_views);
        self.types.apply(&d.types, &d.dropped_types);
        self.next_oid = self.next_oid.max(d.next_oid);
        self.version = d.version;
        Ok(true)
    }

    /// This pending catalog (a transaction's: its base plus its own changes) rebased onto
    /// `current`, the catalog installed since by other transactions: `current` with this
    /// one's changes applied, at `current`'s version plus one. Relation locks keep other
    /// transactions off the entries this one changed; a name this one created that another
    /// transaction created meanwhile fails with 42P07, as the second CREATE would have.
    pub fn rebased_onto(&self, current: &Catalog) -> PgResult<Catalog> {
        let d = self.delta();
        let mut next = current.clone();
        next.clear_changes();
        for oid in &d.dropped_tables {
            next.tables.remove(oid);
        }
        for oid in &d.dropped_indexes {
            next.indexes.remove(oid);
        }
        for oid in &d.dropped_sequences {
            next.sequences.remove(oid);
        }
        for oid in &d.dropped_functions {
            next.functions.remove(oid);
        }
        for oid in &d.dropped_views {
            next.views.remove(oid);
        }
        for oid in &d.dropped_types {
            next.types.remove(oid);
        }
        let taken = |next: &Catalog, name: &str, oid: Oid| match next.relation(name) {
            Some(crate::Relation::Table(t)) => t.oid != oid,
            Some(crate::Relation::Index(i)) => i.oid != oid,
            Some(crate::Relation::Sequence(s)) => s.oid != oid,
            Some(crate::Relation::View(v)) => v.oid != oid,
            None => false,
        };
        let exists = |name: &str| {
            PgError::new(
                sqlstate::DUPLICATE_TABLE,
                format!("relation \"{name}\" already exists"),
            )
        };
        for t in &d.tables {
            if taken(&next, &t.name, t.oid) {
                return Err(exists(&t.name));
            }
            next.tables.insert(t.oid, t.clone());
        }
        for i in &d.indexes {
            if taken(&next, &i.name, i.oid) {
                return Err(exists(&i.name));
            }
            next.indexes.insert(i.oid, i.clone());
        }
        for s in &d.sequences {
            if taken(&next, &s.name, s.oid) {
                return Err(exists(&s.name));
            }
            next.sequences.insert(s.oid, s.clone());
        }
        for v in &d.views {
            if taken(&next, &v.name, v.oid) {
                return Err(exists(&v.name));
            }
            next.views.insert(v.oid, v.clone());
        }
        for t in &d.types {
            if next.type_name_taken(&t.name, t.oid) {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_OBJECT,
                    format!("type \"{}\" already exists", t.name),
                ));
            }
            next.types.insert(t.oid, t.clone());
        }
        for f in &d.functions {
            if next
                .functions
                .by_name(&f.signature)
                .is_some_and(|other| other.oid != f.oid)
            {
                return Err(PgError::new(
                    sqlstate::DUPLICATE_FUNCTION,
                    format!(
                        "function \"{}\" already exists with same argument types",
                        f.proname
                    ),
                ));
            }
            next.functions.insert(f.oid, f.clone());
        }
        next.version = current.version + 1;
        next.next_oid = current.next_oid.max(self.next_oid);
        Ok(next)
    }
}
