//! User-defined types (pg_type rows of `CREATE TYPE`), and the composite types every table
//! has: a table's row type is `TypeId::Composite(table oid)`, a standalone composite type's
//! is `TypeId::Composite(type oid)`. Both kinds share the oid counter, so one oid names one
//! type.

use crate::Catalog;
use keel_common::Oid;
use keel_types::{SqlType, TypeId};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One field of a composite type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldDef {
    pub name: String,
    pub ty: SqlType,
}

/// `CREATE TYPE name AS (field type, ...)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TypeDef {
    pub oid: Oid,
    pub name: String,
    pub fields: Vec<FieldDef>,
}

impl crate::CatalogEntry for TypeDef {
    fn oid(&self) -> Oid {
        self.oid
    }
    fn name(&self) -> &str {
        &self.name
    }
}

/// A composite type's name and fields, whichever kind defines it.
#[derive(Clone, Debug, PartialEq)]
pub struct Composite {
    pub ty: TypeId,
    pub name: String,
    pub fields: Vec<FieldDef>,
}

impl Composite {
    pub fn field(&self, name: &str) -> Option<(usize, &FieldDef)> {
        self.fields.iter().enumerate().find(|(_, f)| f.name == name)
    }

    /// The fields' types, as a value of this type carries them.
    pub fn field_types(&self) -> Arc<[TypeId]> {
        self.fields.iter().map(|f| f.ty.id).collect()
    }
}

impl Catalog {
    /// An oid for a new composite type (a table's, a view's or `CREATE TYPE`'s), with the
    /// next one reserved for its array type (`TypeId::CompositeArray`), so that no other
    /// object is ever given it.
    pub fn new_type_oid(&mut self) -> Oid {
        use std::sync::atomic::Ordering::SeqCst;
        // One atomic step: another session's DDL shares the counter.
        self.oids.0.fetch_max(self.next_oid, SeqCst);
        let oid = self.oids.0.fetch_add(2, SeqCst);
        self.next_oid = self.next_oid.max(oid + 2);
        oid
    }

    /// The type whose pg_type oid is `oid`: a built-in type, a composite type, or the array
    /// type of one.
    pub fn type_of_oid(&self, oid: Oid) -> Option<TypeId> {
        if let Some(t) = TypeId::from_oid(oid) {
            return Some(t);
        }
        if self.composite(oid).is_some() {
            return Some(TypeId::Composite(oid));
        }
        let elem = oid.checked_sub(1)?;
        self.composite(elem).map(|_| TypeId::CompositeArray(elem))
    }

    /// The composite type `oid` (a table's row type or a `CREATE TYPE ... AS` type).
    pub fn composite(&self, oid: Oid) -> Option<Composite> {
        if let Some(t) = self.types.get(&oid) {
            return Some(Composite {
                ty: TypeId::Composite(oid),
                name: t.name.clone(),
                fields: t.fields.clone(),
            });
        }
        let t = self.tables.get(&oid)?;
        Some(Composite {
            ty: TypeId::Composite(oid),
            name: t.name.clone(),
            fields: t
                .columns
                .iter()
                .map(|c| FieldDef {
                    name: c.name.clone(),
                    ty: c.ty,
                })
                .collect(),
        })
    }

    /// The fields of `ty` when it is a named composite type.
    pub fn composite_of(&self, ty: TypeId) -> Option<Composite> {
        match ty {
            TypeId::Composite(oid) => self.composite(oid),
            _ => None,
        }
    }

    /// The composite type a (lower-cased) type name names: a `CREATE TYPE`, else a table.
    pub fn composite_named(&self, name: &str) -> Option<Composite> {
        let oid = match self.types.by_name(name) {
            Some(t) => t.oid,
            None => self.tables.by_name(name)?.oid,
        };
        self.composite(oid)
    }

    /// Whether `name` names a type other than `oid`: a user-defined type or a table's or
    /// view's row type (they share pg_type's namespace).
    pub fn type_name_taken(&self, name: &str, oid: Oid) -> bool {
        self.types.by_name(name).is_some_and(|t| t.oid != oid)
            || self.tables.by_name(name).is_some_and(|t| t.oid != oid)
            || self.views.by_name(name).is_some_and(|v| v.oid != oid)
    }

    /// How a user sees a type's name: a composite's from the catalog, a built-in's its own.
    pub fn type_name(&self, ty: TypeId) -> String {
        match ty {
            TypeId::Composite(oid) => self
                .composite(oid)
                .map_or_else(|| oid.to_string(), |c| c.name),
            TypeId::CompositeArray(oid) => format!("{}[]", self.type_name(TypeId::Composite(oid))),
            t => t.name().to_string(),
        }
    }
}
