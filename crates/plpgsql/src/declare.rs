//! Declarations: a block's variables get their types and default values as the block
//! starts, in order (a default may read the variables declared before it).

use crate::Host;
use crate::interp::{Interp, PlState};
use crate::vars::{Record, Var};
use keel_common::{PgError, PgResult, sqlstate};
use keel_pl::{Decl, TypeKind};
use keel_types::{Datum, SqlType, TypeId};

/// The composite type a declaration names: `t%ROWTYPE`, or a composite type's or table's
/// name written as a type (every table is also a composite type in PostgreSQL), when no
/// built-in type has that name.
fn row_type(
    text: &str,
    kind: &TypeKind,
    cat: &keel_catalog::Catalog,
) -> PgResult<Option<keel_catalog::Composite>> {
    match kind {
        TypeKind::RowTypeOf(names) => match names.as_slice() {
            [table] => {
                let t = cat.table(table)?;
                Ok(cat.composite(t.oid))
            }
            _ => Err(PgError::unsupported(format!(
                "PL/pgSQL variable type {text}"
            ))),
        },
        TypeKind::Named => {
            let plain = !text.is_empty()
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii());
            if !plain || keel_sql::bind::types::type_from_name(text).is_ok() {
                return Ok(None);
            }
            Ok(cat.composite_named(&text.to_lowercase()))
        }
        TypeKind::TypeOf(_) => Ok(None),
    }
}

fn type_of_decl(text: &str, kind: &TypeKind, cat: &keel_catalog::Catalog) -> PgResult<SqlType> {
    match kind {
        TypeKind::Named => keel_sql::bind::types::type_from_name_in(text, cat),
        TypeKind::TypeOf(names) if names.len() == 2 => {
            let t = cat.table(&names[0])?;
            let c = t
                .columns
                .iter()
                .find(|c| c.name == names[1])
                .ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_COLUMN,
                        format!(
                            "column \"{}\" of relation \"{}\" does not exist",
                            names[1], names[0]
                        ),
                    )
                })?;
            Ok(c.ty)
        }
        _ => Err(PgError::unsupported(format!(
            "PL/pgSQL variable type {text}"
        ))),
    }
}

impl<H: Host + ?Sized> Interp<'_, H> {
    pub(crate) async fn declare(&mut self, st: &mut PlState, d: &Decl) -> PgResult<()> {
        let v = match d {
            Decl::Var(v) => v,
            Decl::Alias { name, target, .. } => {
                let t = target.last().map(String::as_str).unwrap_or_default();
                if !st.vars.declare_alias(name, t) {
                    return Err(PgError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("variable \"{}\" does not exist", target.join(".")),
                    ));
                }
                return Ok(());
            }
            Decl::Cursor(c) => {
                // PostgreSQL 15 starts a bound cursor variable at its own name: the portal
                // OPEN makes is named after it unless the body assigns another name first.
                st.vars.declare(Var {
                    bound: Some(std::sync::Arc::new(c.clone())),
                    ..Var::scalar(&c.name, TypeId::Refcursor, Datum::Text(c.name.clone()))
                });
                return Ok(());
            }
        };
        let text = v.data_type.text.text.trim();
        if text.eq_ignore_ascii_case("record") {
            st.vars.declare(Var::record(&v.name, v.constant, None));
            return Ok(());
        }
        if let Some(c) = row_type(text, &v.data_type.kind, &self.h.catalog())? {
            // A composite: a record of its fields, each NULL to begin with.
            let mut rec = Record::of_composite(&c, false);
            if let Some(e) = &v.default {
                let (d, from) = self.eval(st, e).await?;
                rec = crate::composite::record_from(d, from, Some(&rec), &self.h.catalog())?;
            }
            st.vars.declare(Var::record(&v.name, v.constant, Some(rec)));
            return Ok(());
        }
        let ty = match &v.data_type.kind {
            // `var%TYPE`: the type of a variable in scope.
            TypeKind::TypeOf(names) if names.len() == 1 => match st.vars.find(&names[0]) {
                Some(var) if !var.is_record => SqlType::with_typmod(var.ty, var.typmod),
                _ => type_of_decl(text, &v.data_type.kind, &self.h.catalog())?,
            },
            kind => type_of_decl(text, kind, &self.h.catalog())?,
        };
        let value = match &v.default {
            Some(e) => {
                let (d, from) = self.eval(st, e).await?;
                crate::composite::assign_cast(d, from, ty)?
            }
            None => Datum::Null,
        };
        if v.not_null && value.is_null() {
            return Err(PgError::new(
                sqlstate::NULL_VALUE_NOT_ALLOWED,
                format!(
                    "variable \"{}\" must have a default value, since it's declared NOT NULL",
                    v.name
                ),
            ));
        }
        st.vars.declare(Var {
            name: v.name.clone(),
            ty: ty.id,
            typmod: ty.typmod,
            value,
            constant: v.constant,
            not_null: v.not_null,
            record: None,
            is_record: false,
            bound: None,
        });
        Ok(())
    }
}
