//! Views (pg_class rows of relkind 'v' with their `_RETURN` rule): a stored SELECT that a
//! reference in FROM expands to, as PostgreSQL's rewriter expands it.
//!
//! The query is kept as SQL text (sqlparser's rendering of what CREATE VIEW parsed) and bound
//! again by every statement that reads the view, against the catalog of that statement. What
//! the view promises its users is fixed at CREATE time, as in PostgreSQL: its column names and
//! types (`columns`), which a `SELECT *` in the text does not widen when a table later grows
//! a column (the expansion keeps the first `columns.len()` outputs), and the relations it reads
//! (`depends_on`), which cannot be dropped without CASCADE while the view exists.

use crate::{ColumnDef, Persistence, TableDef, TriggerDef};
use keel_common::Oid;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewDef {
    pub oid: Oid,
    pub name: String,
    /// The output columns as CREATE VIEW resolved them (names from the column list or the
    /// query, types from the query). `not_null` is always false; `default` is what ALTER VIEW
    /// ... SET DEFAULT gives an INSERT through the view.
    pub columns: Vec<ColumnDef>,
    /// The defining SELECT as SQL text.
    pub query: String,
    /// Tables and views the query reads, by oid (pg_depend's normal dependencies).
    pub depends_on: Vec<Oid>,
    /// INSTEAD OF row triggers and statement triggers on the view, in name order.
    #[serde(default)]
    pub triggers: Vec<TriggerDef>,
}

impl ViewDef {
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// The view as a write's target sees it: its columns and triggers, no storage. A write
    /// planned on it runs the view's INSTEAD OF triggers instead of touching a heap
    /// (`relfile` 0 is never a file: relation files start at FIRST_USER_OID).
    pub fn as_target(&self) -> TableDef {
        TableDef {
            oid: self.oid,
            name: self.name.clone(),
            columns: self.columns.clone(),
            relfile: 0,
            persistence: Persistence::Permanent,
            fillfactor: 100,
            foreign_keys: Vec::new(),
            checks: Vec::new(),
            identity_always: Vec::new(),
            triggers: self.triggers.clone(),
            partition: None,
        }
    }
}

impl crate::CatalogEntry for ViewDef {
    fn oid(&self) -> Oid {
        self.oid
    }
    fn name(&self) -> &str {
        &self.name
    }
}
