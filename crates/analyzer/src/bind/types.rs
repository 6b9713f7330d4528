//! SQL type names -> `SqlType`, and literal/parameter coercion helpers.

use crate::expr::Expr;
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::{CastContext, can_cast};
use keel_types::{Datum, SqlType, TypeId};

/// Parses a type name as written (`int`, `char(84)`, `varchar(10)`, `timestamp with time
/// zone`, `numeric(10,2)`). Serial types map to their integer type; the caller checks
/// `is_serial` first.
pub fn type_from_name(name: &str) -> PgResult<SqlType> {
    if let Some(elem) = array_element_name(name) {
        let e = type_from_name(elem)?;
        return match e.id.array_of() {
            Some(a) if e.id != TypeId::Unknown => Ok(SqlType::with_typmod(a, e.typmod)),
            _ => Err(PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("could not find array type for data type {}", e.id.name()),
            )),
        };
    }
    let lower = name.trim().to_ascii_lowercase();
    let (base, args) = match lower.find('(') {
        Some(p) => {
            let close = lower.rfind(')').unwrap_or(lower.len());
            let args: Vec<i32> = lower[p + 1..close]
                .split(',')
                .filter_map(|a| a.trim().parse().ok())
                .collect();
            let rest = lower[close.min(lower.len())..]
                .trim_start_matches(')')
                .trim()
                .to_string();
            (
                format!("{} {}", lower[..p].trim(), rest).trim().to_string(),
                args,
            )
        }
        None => (lower.clone(), vec![]),
    };
    let base = base.trim_start_matches("pg_catalog.");
    let id = match base {
        "int" | "integer" | "int4" | "serial" | "serial4" => TypeId::Int4,
        "smallint" | "int2" | "smallserial" | "serial2" => TypeId::Int2,
        "bigint" | "int8" | "bigserial" | "serial8" => TypeId::Int8,
        "real" | "float4" => TypeId::Float4,
        "double precision" | "float8" | "float" | "double" => TypeId::Float8,
        "numeric" | "decimal" | "dec" => TypeId::Numeric,
        "text" => TypeId::Text,
        "varchar" | "character varying" | "char varying" => TypeId::Varchar,
        "char" | "character" | "bpchar" => TypeId::Bpchar,
        "name" => TypeId::Name,
        "bool" | "boolean" => TypeId::Bool,
        "bytea" => TypeId::Bytea,
        "date" => TypeId::Date,
        "timestamp" | "timestamp without time zone" => TypeId::Timestamp,
        "timestamptz" | "timestamp with time zone" => TypeId::TimestampTz,
        "interval" => TypeId::Interval,
        "uuid" => TypeId::Uuid,
        "oid" => TypeId::Oid,
        "regclass" => TypeId::RegClass,
        "refcursor" => TypeId::Refcursor,
        "int2vector" => TypeId::Int2Vector,
        "oidvector" => TypeId::OidVector,
        // PostgreSQL types keel does not have yet: unsupported, not unknown.
        "time"
        | "time without time zone"
        | "timetz"
        | "time with time zone"
        | "json"
        | "jsonb"
        | "money"
        | "inet"
        | "cidr"
        | "macaddr"
        | "macaddr8"
        | "point"
        | "line"
        | "lseg"
        | "box"
        | "path"
        | "polygon"
        | "circle"
        | "tsvector"
        | "tsquery"
        | "xml"
        | "bit"
        | "varbit"
        | "bit varying"
        | "int4range"
        | "int8range"
        | "numrange"
        | "tsrange"
        | "tstzrange"
        | "daterange"
        | "regtype"
        | "regproc" => {
            return Err(PgError::unsupported(format!("type {}", name.trim())));
        }
        _ => {
            return Err(PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("type \"{}\" does not exist", name.trim()),
            ));
        }
    };
    let typmod = match (id, args.as_slice()) {
        (TypeId::Varchar, [n]) | (TypeId::Bpchar, [n]) => n + 4,
        (TypeId::Bpchar, []) if base != "bpchar" => 5,
        (TypeId::Numeric, [p]) => (p << 16) + 4,
        (TypeId::Numeric, [p, s]) => (p << 16) + s + 4,
        _ => -1,
    };
    Ok(SqlType::with_typmod(id, typmod))
}

/// The element type's name when `name` names an array type: `int[]`, `int[3][]`,
/// `integer array`, `integer array[4]`, `_int4`. Extra dimensions name the same type.
fn array_element_name(name: &str) -> Option<&str> {
    let t = name.trim();
    if let Some(base) = t.strip_suffix(']') {
        let open = base.rfind('[')?;
        let inner = &base[open + 1..];
        if inner.trim().chars().all(|c| c.is_ascii_digit()) {
            let rest = base[..open].trim_end();
            return Some(array_element_name(rest).unwrap_or(rest));
        }
        return None;
    }
    let lower = t.to_ascii_lowercase();
    if lower.ends_with(" array") {
        return Some(t[..t.len() - " array".len()].trim_end());
    }
    if let Some(rest) = t.strip_prefix('_')
        && !rest.is_empty()
        && !rest.contains(' ')
    {
        return Some(rest);
    }
    None
}

pub fn is_serial(name: &str) -> Option<TypeId> {
    match name.trim().to_ascii_lowercase().as_str() {
        "serial" | "serial4" => Some(TypeId::Int4),
        "bigserial" | "serial8" => Some(TypeId::Int8),
        "smallserial" | "serial2" => Some(TypeId::Int2),
        _ => None,
    }
}

/// [`type_from_name`], and a name no built-in type has may name a composite type of
/// `cat`: a `CREATE TYPE ... AS` type or a table's row type.
pub fn type_from_name_in(name: &str, cat: &keel_catalog::Catalog) -> PgResult<SqlType> {
    type_from_name(name).or_else(|e| {
        if e.code != sqlstate::UNDEFINED_OBJECT {
            return Err(e);
        }
        let trimmed = name.trim();
        if let Some(elem) = array_element_name(trimmed)
            && let Some(TypeId::Composite(oid)) = composite_of(elem, cat)
        {
            return Ok(SqlType::new(TypeId::CompositeArray(oid)));
        }
        composite_of(trimmed, cat).map(SqlType::new).ok_or(e)
    })
}

fn composite_of(name: &str, cat: &keel_catalog::Catalog) -> Option<TypeId> {
    let unquoted = name.trim_start_matches("public.");
    let folded = match unquoted.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
        Some(q) => q.replace("\"\"", "\""),
        None => unquoted.to_lowercase(),
    };
    cat.composite_named(&folded).map(|c| c.ty)
}

/// [`type_display`], with a composite type's name from `cat`.
pub fn type_display_in(t: SqlType, cat: &keel_catalog::Catalog) -> String {
    match t.id {
        TypeId::Composite(_) | TypeId::CompositeArray(_) => cat.type_name(t.id),
        _ => type_display(t),
    }
}

/// How PostgreSQL prints a type with its typmod in messages (`character varying(10)`).
pub fn type_display(t: SqlType) -> String {
    match (t.id, t.typmod) {
        (TypeId::Varchar | TypeId::Bpchar, m) if m >= 4 => format!("{}({})", t.id.name(), m - 4),
        _ => t.id.name().to_string(),
    }
}

/// Coerces a bound expression to `to` in `ctx`. Unknown constants are converted right away; unknown-typed parameters take the target type.
#[inline(never)]
pub fn coerce(e: Expr, to: SqlType, ctx: CastContext, params: &mut [TypeId]) -> PgResult<Expr> {
    let from = e.ty();
    if from == to.id && (to.typmod < 0 || e.typmod() == to.typmod) {
        return Ok(e);
    }
    match e {
        Expr::Const(Datum::Text(s), TypeId::Unknown) => {
            // Through the cast, not the bare input function: the length rule depends on the
            // context ('abcdef'::varchar(5) truncates, an INSERT of it fails with 22001).
            let d = keel_types::cast::cast(Datum::Text(s), TypeId::Unknown, to, ctx)?;
            return Ok(Expr::Const(d, to.id));
        }
        Expr::Const(Datum::Null, _) => return Ok(Expr::Const(Datum::Null, to.id)),
        Expr::Param(i, TypeId::Unknown) => {
            params[i] = to.id;
            let p = Expr::Param(i, to.id);
            if to.typmod < 0 {
                return Ok(p);
            }
            return Ok(Expr::Cast {
                arg: Box::new(p),
                from: to.id,
                to,
                ctx,
            });
        }
        _ => {}
    }
    if from == to.id {
        // Same type, typmod to apply (varchar(n) length check).
        return Ok(Expr::Cast {
            arg: Box::new(e),
            from,
            to,
            ctx,
        });
    }
    if from == TypeId::Unknown || can_cast(from, to.id, ctx) {
        return Ok(Expr::Cast {
            arg: Box::new(e),
            from,
            to,
            ctx,
        });
    }
    let msg = match ctx {
        CastContext::Assignment => format!(
            "column is of type {} but expression is of type {}",
            type_display(to),
            from.name()
        ),
        _ => format!("cannot cast type {} to {}", from.name(), type_display(to)),
    };
    let code = if ctx == CastContext::Assignment {
        sqlstate::DATATYPE_MISMATCH
    } else {
        sqlstate::CANNOT_COERCE
    };
    Err(PgError::new(code, msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names() {
        assert_eq!(
            type_from_name("CHAR(84)").unwrap(),
            SqlType::with_typmod(TypeId::Bpchar, 88)
        );
        assert_eq!(type_from_name("int").unwrap(), SqlType::new(TypeId::Int4));
        assert_eq!(
            type_from_name("TIMESTAMP WITH TIME ZONE").unwrap().id,
            TypeId::TimestampTz
        );
        assert_eq!(
            type_from_name("character varying(10)").unwrap(),
            SqlType::with_typmod(TypeId::Varchar, 14)
        );
        assert_eq!(
            type_from_name("NUMERIC(10,2)").unwrap().typmod,
            (10 << 16) + 6
        );
        assert_eq!(type_from_name("char").unwrap().typmod, 5);
        assert!(type_from_name("widget").is_err());
        assert_eq!(is_serial("BIGSERIAL"), Some(TypeId::Int8));
    }
}
