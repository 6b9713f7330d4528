//! CREATE SEQUENCE: option defaults and validation as PostgreSQL 15 does them.

use keel_catalog::{Catalog, SequenceDef};
use keel_common::{PgError, PgResult, sqlstate};
use sqlparser::ast;
use std::sync::Arc;

fn invalid(msg: String) -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, msg)
}

fn int_option(e: &ast::Expr) -> PgResult<i64> {
    let text = e.to_string().replace(' ', "");
    text.parse::<i64>().map_err(|_| {
        PgError::new(
            sqlstate::INVALID_TEXT_REPRESENTATION,
            format!("invalid input syntax for type bigint: \"{text}\""),
        )
    })
}

/// The sequence a CREATE SEQUENCE describes (not yet in the catalog).
pub(crate) fn sequence_def(
    cat: &mut Catalog,
    name: String,
    data_type: Option<&ast::DataType>,
    options: &[ast::SequenceOptions],
) -> PgResult<SequenceDef> {
    let type_max = match data_type.map(|t| t.to_string().to_lowercase()) {
        None => i64::MAX,
        Some(t) => match t.as_str() {
            "smallint" | "int2" => i16::MAX as i64,
            "integer" | "int" | "int4" => i32::MAX as i64,
            "bigint" | "int8" => i64::MAX,
            _ => {
                return Err(invalid(
                    "sequence type must be smallint, integer, or bigint".into(),
                ));
            }
        },
    };
    let type_min = if type_max == i64::MAX {
        i64::MIN
    } else {
        -type_max - 1
    };
    let (mut increment, mut min, mut max, mut start, mut cycle) = (1, None, None, None, false);
    for o in options {
        match o {
            ast::SequenceOptions::IncrementBy(e, _) => increment = int_option(e)?,
            ast::SequenceOptions::MinValue(e) => min = e.as_ref().map(int_option).transpose()?,
            ast::SequenceOptions::MaxValue(e) => max = e.as_ref().map(int_option).transpose()?,
            ast::SequenceOptions::StartWith(e, _) => start = Some(int_option(e)?),
            ast::SequenceOptions::Cache(e) => {
                let c = int_option(e)?;
                if c <= 0 {
                    return Err(invalid(format!("CACHE ({c}) must be greater than zero")));
                }
            }
            // sqlparser's flag is true for NO CYCLE.
            ast::SequenceOptions::Cycle(no) => cycle = !no,
        }
    }
    if increment == 0 {
        return Err(invalid("INCREMENT must not be zero".into()));
    }
    let max = max.unwrap_or(if increment > 0 { type_max } else { -1 });
    let min = min.unwrap_or(if increment > 0 { 1 } else { type_min });
    for (what, v) in [("MAXVALUE", max), ("MINVALUE", min)] {
        if v < type_min || v > type_max {
            let ty = data_type.map_or("bigint".to_string(), |t| t.to_string().to_lowercase());
            return Err(invalid(format!(
                "{what} ({v}) is out of range for sequence data type {ty}"
            )));
        }
    }
    if min >= max {
        return Err(invalid(format!(
            "MINVALUE ({min}) must be less than MAXVALUE ({max})"
        )));
    }
    let start = start.unwrap_or(if increment > 0 { min } else { max });
    if start < min {
        return Err(invalid(format!(
            "START value ({start}) cannot be less than MINVALUE ({min})"
        )));
    }
    if start > max {
        return Err(invalid(format!(
            "START value ({start}) cannot be greater than MAXVALUE ({max})"
        )));
    }
    Ok(SequenceDef {
        oid: cat.new_oid(),
        name,
        start,
        increment,
        min,
        max,
        cycle,
        owned_by: None,
    })
}

/// CREATE SEQUENCE [IF NOT EXISTS] name [AS type] options.
pub(crate) fn create_sequence(
    stmt: &ast::Statement,
    cat: &mut Catalog,
    notices: &mut Vec<PgError>,
) -> PgResult<String> {
    let ast::Statement::CreateSequence {
        temporary: _,
        if_not_exists,
        name,
        data_type,
        sequence_options,
        owned_by,
    } = stmt
    else {
        return Err(PgError::internal("not a CREATE SEQUENCE"));
    };
    if owned_by.is_some() {
        return Err(PgError::unsupported("CREATE SEQUENCE ... OWNED BY"));
    }
    let name = super::ddl::plain_name(name)?;
    if !super::ddl::name_free(cat, &name, *if_not_exists, notices)? {
        return Ok("CREATE SEQUENCE".into());
    }
    let seq = sequence_def(cat, name, data_type.as_ref(), sequence_options)?;
    cat.sequences.insert(seq.oid, Arc::new(seq));
    Ok("CREATE SEQUENCE".into())
}
