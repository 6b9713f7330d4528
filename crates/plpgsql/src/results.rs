//! What a body gives back besides RETURN's value: a set-returning function's rows (RETURN
//! NEXT, RETURN QUERY) converted to its result columns, the OUT parameters' values, and
//! assignment to a field of a record variable (a trigger's `NEW.col := ...`).

use crate::interp::PlState;
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::{CastContext, cast};
use keel_types::{Datum, SqlType, TypeId};

type Row = Vec<Datum>;

/// `rec.field := value` of a record variable (a trigger's `NEW.col := ...`): the value is
/// converted to the field's type as an assignment converts it. `shown` is the assignment as
/// written, which PostgreSQL names when the field does not exist; None for an INTO target,
/// whose errors name only the statement.
pub(crate) fn assign_field(
    st: &mut PlState,
    name: &str,
    field: &str,
    v: Datum,
    from: TypeId,
    shown: Option<&str>,
) -> PgResult<()> {
    let context = |e: PgError| match shown {
        Some(shown) => e.with_context_line(format!("PL/pgSQL assignment \"{shown}\"")),
        None => e,
    };
    let Some(var) = st.vars.find_mut(name) else {
        return Err(PgError::new(
            sqlstate::SYNTAX_ERROR,
            format!("\"{name}.{field}\" is not a known variable"),
        ));
    };
    if !var.is_record {
        return Err(PgError::unsupported(
            "assignment to a field of a composite value",
        ));
    }
    let Some(rec) = var.record.as_mut() else {
        return Err(crate::composite::unassigned(name));
    };
    let Some(i) = rec.names.iter().position(|n| n == field) else {
        return Err(context(PgError::new(
            sqlstate::UNDEFINED_COLUMN,
            format!("record \"{name}\" has no field \"{field}\""),
        )));
    };
    let to = rec.typmods.get(i).copied().unwrap_or(-1);
    rec.is_null = false;
    let declared = rec.declared;
    rec.values[i] = cast(
        v,
        from,
        SqlType::with_typmod(rec.types[i], to),
        CastContext::Assignment,
    )
    .map_err(|e| if declared { context(e) } else { e })?;
    Ok(())
}

pub(crate) fn not_setof(what: &str) -> PgError {
    PgError::new(
        sqlstate::DATATYPE_MISMATCH,
        format!("cannot use {what} in a non-SETOF function"),
    )
}

/// RETURN QUERY's columns must be the function's result columns, type for type.
pub(crate) fn query_matches(got: &[TypeId], want: &[SqlType]) -> PgResult<()> {
    let mismatch = |detail: String| {
        PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            "structure of query does not match function result type",
        )
        .with_detail(detail)
    };
    if got.len() != want.len() {
        return Err(mismatch(format!(
            "Number of returned columns ({}) does not match expected column count ({}).",
            got.len(),
            want.len()
        )));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if *g != w.id && *g != TypeId::Unknown {
            return Err(mismatch(format!(
                "Returned type {} does not match expected type {} in column {}.",
                keel_sql::bind::types::type_display(SqlType::new(*g)),
                keel_sql::bind::types::type_display(SqlType::new(w.id)),
                i + 1
            )));
        }
    }
    Ok(())
}

impl PlState {
    /// Whether the function's result is a row of a composite type's fields.
    pub(crate) fn result_composite(&self) -> bool {
        crate::composite::is_composite(self.ret_type) && self.out_names.is_empty()
    }

    /// The OUT parameters' values as the result columns' types.
    pub(crate) fn out_values_cast(&self) -> PgResult<Row> {
        let types: Vec<TypeId> = self
            .out_names
            .iter()
            .map(|n| self.vars.find(n).map_or(TypeId::Unknown, |v| v.ty))
            .collect();
        self.result_row(self.out_values(), &types)
    }

    /// The OUT parameters' values, as RETURN NEXT without an expression adds them.
    pub(crate) fn out_values(&self) -> Row {
        self.out_names
            .iter()
            .map(|n| self.vars.find(n).map_or(Datum::Null, |v| v.value.clone()))
            .collect()
    }

    /// `vals` (of types `types`) as a row of the result columns, each converted as an
    /// assignment converts it.
    pub(crate) fn result_row(&self, vals: Vec<Datum>, types: &[TypeId]) -> PgResult<Row> {
        if !self.out_names.is_empty() && self.result_types.len() > 1 && vals.len() == 1 {
            return Err(PgError::new(
                sqlstate::SYNTAX_ERROR,
                "RETURN NEXT cannot have a parameter in function with OUT parameters",
            ));
        }
        if vals.len() != self.result_types.len() {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                "wrong record type supplied in RETURN NEXT",
            ));
        }
        vals.into_iter()
            .zip(types)
            .zip(&self.result_types)
            .map(|((v, from), to)| {
                if v.is_null() || *from == to.id {
                    Ok(v)
                } else {
                    crate::composite::assign_cast(v, *from, *to)
                }
            })
            .collect()
    }

    pub(crate) fn push_row(&mut self, row: Row) -> PgResult<()> {
        match self.ret_rows.as_mut() {
            Some(rows) => {
                rows.push(row);
                Ok(())
            }
            None => Err(not_setof("RETURN NEXT")),
        }
    }
}
