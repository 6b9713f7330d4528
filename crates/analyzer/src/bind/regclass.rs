//! regclass constants: `'name'::regclass` names a relation when the statement is bound, as
//! PostgreSQL folds the constant at parse time (so a prepared statement keeps the oid).

use super::Binder;
use crate::expr::{Expr, Special};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::CastContext;
use keel_types::{Datum, TypeId};

impl Binder<'_> {
    /// regclassin of a constant: an oid as digits, or a relation name (optionally schema-
    /// qualified; double quotes keep case), which must exist (42P01).
    pub(crate) fn regclass_constant(&self, text: &str) -> PgResult<Expr> {
        let t = text.trim();
        if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
            let oid = t.parse::<u32>().map_err(|_| {
                PgError::new(
                    sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
                    format!("value \"{t}\" is out of range for type oid"),
                )
            })?;
            return Ok(Expr::Const(Datum::Oid(oid), TypeId::RegClass));
        }
        let name = relation_name_part(t);
        match self.catalog.relation(&name) {
            Some(r) => Ok(Expr::Const(Datum::Oid(relation_oid(&r)), TypeId::RegClass)),
            None => Err(PgError::new(
                sqlstate::UNDEFINED_TABLE,
                format!("relation \"{t}\" does not exist"),
            )),
        }
    }

    /// A regclass value as text (its relation's name): a constant's now, another's when
    /// the statement runs.
    pub(crate) fn regclass_text(&self, e: Expr) -> Expr {
        match e {
            Expr::Const(Datum::Oid(oid), _) => {
                let name = (self.catalog.relation_name(oid))
                    .map_or_else(|| oid.to_string(), str::to_string);
                Expr::Const(Datum::Text(name), TypeId::Text)
            }
            Expr::Const(Datum::Null, _) => Expr::Const(Datum::Null, TypeId::Text),
            e => Expr::Special(Special::RegClassName(Box::new(e)), TypeId::Text),
        }
    }

    /// `satisfies_hash_partition(parent, modulus, remainder, values...)` with a constant
    /// parent: bound to its key, each value of the key column's type (PostgreSQL's 22023
    /// errors for a table that is not hash partitioned, a wrong count or a wrong type).
    pub(crate) fn satisfies_hash_partition(&mut self, args: Vec<Expr>) -> PgResult<Expr> {
        let invalid = |msg: String| PgError::new(sqlstate::INVALID_PARAMETER_VALUE, msg);
        let oid = match &args[0] {
            Expr::Const(Datum::Oid(o), _) => *o,
            Expr::Const(Datum::Null, _) => {
                return Ok(Expr::Const(Datum::Bool(false), TypeId::Bool));
            }
            Expr::Const(d, _) if d.int_value().is_some() => d.int_value().unwrap_or(0) as u32,
            _ => {
                return Err(PgError::unsupported(
                    "satisfies_hash_partition() of a non-constant table",
                ));
            }
        };
        let Some(table) = self.catalog.tables.get(&oid).cloned() else {
            return Ok(Expr::Const(Datum::Bool(false), TypeId::Bool));
        };
        let key = match table.partition_key() {
            Some(k) if k.strategy == keel_catalog::partition::PartitionStrategy::Hash => k,
            _ => {
                return Err(invalid(format!(
                    "\"{}\" is not a hash partitioned table",
                    table.name
                )));
            }
        };
        let mut it = args.into_iter().skip(1);
        let mut call = Vec::new();
        for _ in 0..2 {
            let e = it.next().unwrap_or(Expr::Const(Datum::Null, TypeId::Int4));
            call.push(self.coerce_in(
                e,
                keel_types::SqlType::new(TypeId::Int4),
                CastContext::Implicit,
            )?);
        }
        let values: Vec<Expr> = it.collect();
        if values.len() != key.len() {
            return Err(invalid(format!(
                "number of partitioning columns ({}) does not match number of partition keys provided ({})",
                key.len(),
                values.len()
            )));
        }
        for (i, (v, &t)) in values.into_iter().zip(&key.types).enumerate() {
            let v = match v.ty() {
                TypeId::Unknown => {
                    self.coerce_in(v, keel_types::SqlType::new(t), CastContext::Implicit)?
                }
                vt if vt == t => v,
                vt => {
                    return Err(invalid(format!(
                        "column {} of the partition key has type {}, but supplied value is of type {}",
                        i + 1,
                        t.name(),
                        vt.name()
                    )));
                }
            };
            call.push(Expr::Const(Datum::Oid(t.oid()), TypeId::Oid));
            call.push(v);
        }
        Ok(Expr::Func {
            f: keel_types::hash::satisfies_hash_partition(&key.types),
            args: call,
        })
    }

    /// The relation name a constant argument of a function taking a relation gives: a
    /// regclass constant's relation, or a string's text.
    pub(crate) fn relation_arg(&self, e: &Expr) -> Option<String> {
        match e {
            Expr::Const(Datum::Oid(oid), TypeId::RegClass) => {
                self.catalog.relation_name(*oid).map(str::to_string)
            }
            Expr::Const(Datum::Text(s), _) => Some(s.clone()),
            _ => None,
        }
    }
}

/// The relation part of a possibly schema-qualified name, folded as an identifier.
fn relation_name_part(t: &str) -> String {
    // A quoted last part keeps its case (and may hold dots); an unquoted one folds.
    if let Some(body) = t.strip_suffix('"')
        && let Some(open) = body
            .rfind('"')
            .filter(|&i| i == 0 || body[..i].ends_with('.'))
    {
        return body[open + 1..].replace("\"\"", "\"");
    }
    t.rsplit('.').next().unwrap_or(t).to_lowercase()
}

fn relation_oid(r: &keel_catalog::Relation) -> u32 {
    use keel_catalog::Relation as R;
    match r {
        R::Table(t) => t.oid,
        R::Index(i) => i.oid,
        R::Sequence(s) => s.oid,
        R::View(v) => v.oid,
    }
}
