//! regclass constants: `'name'::regclass` names a relation when the statement is bound, as
//! PostgreSQL folds the constant at parse time (so a prepared statement keeps the oid).

use super::Binder;
use crate::expr::{Expr, Special};
use keel_common::{PgError, PgResult, sqlstate};
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
