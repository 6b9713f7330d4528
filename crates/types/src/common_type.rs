//! The common type of a list of values (CASE results, COALESCE/GREATEST/LEAST arguments,
//! ARRAY elements, UNION/INTERSECT/EXCEPT columns, VALUES rows), as PostgreSQL's
//! `select_common_type` resolves it.
//!
//! The first known type leads. A later type of another category is an error (42804, "CASE
//! types integer and text cannot be matched"); one of the same category takes the lead when
//! the leader is not its category's preferred type and casts to it implicitly but not back
//! (int4 then numeric gives numeric; numeric then int4 stays numeric). Unknown literals
//! follow the others, and a list of only unknowns is text.

use crate::TypeId;
use crate::cast::{CastContext, can_cast};

/// pg_type.typcategory: the groups implicit casts stay within.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Category {
    Array,
    Boolean,
    DateTime,
    Numeric,
    Pseudo,
    String,
    Timespan,
    User,
    Unknown,
}

/// A type's category and whether it is the preferred type of that category.
pub fn category(t: TypeId) -> (Category, bool) {
    use TypeId::*;
    if t.is_array() {
        return (Category::Array, false);
    }
    match t {
        Bool => (Category::Boolean, true),
        Int2 | Int4 | Int8 | Float4 | Numeric | Oid => (Category::Numeric, false),
        Float8 => (Category::Numeric, true),
        Text => (Category::String, true),
        Varchar | Bpchar | Name => (Category::String, false),
        Date | Timestamp => (Category::DateTime, false),
        TimestampTz => (Category::DateTime, true),
        Interval => (Category::Timespan, true),
        Bytea | Uuid => (Category::User, false),
        Unknown => (Category::Unknown, false),
        _ => (Category::Pseudo, false),
    }
}

/// The common type of `types`, in PostgreSQL's order of significance (for CASE the ELSE
/// result comes first). `Err((led, other))` names the two types that cannot be matched.
pub fn select_common_type(
    types: impl IntoIterator<Item = TypeId>,
) -> Result<TypeId, (TypeId, TypeId)> {
    let mut lead: Option<(TypeId, Category, bool)> = None;
    for t in types {
        if t == TypeId::Unknown {
            continue;
        }
        let (cat, preferred) = category(t);
        match lead {
            None => lead = Some((t, cat, preferred)),
            Some((p, _, _)) if p == t => {}
            Some((p, pcat, _)) if pcat != cat => return Err((p, t)),
            Some((p, _, ppref)) => {
                if !ppref
                    && can_cast(p, t, CastContext::Implicit)
                    && !can_cast(t, p, CastContext::Implicit)
                {
                    lead = Some((t, cat, preferred));
                }
            }
        }
    }
    Ok(lead.map_or(TypeId::Text, |(t, _, _)| t))
}

/// [`select_common_type`] for the construct `what` ("CASE", "UNION", "VALUES", ...), with
/// PostgreSQL's 42804 error when two types cannot be matched.
pub fn common_type_of(
    what: &str,
    types: impl IntoIterator<Item = TypeId>,
) -> keel_common::PgResult<TypeId> {
    select_common_type(types).map_err(|(a, b)| {
        keel_common::PgError::new(
            keel_common::sqlstate::DATATYPE_MISMATCH,
            format!(
                "{what} types {} and {} cannot be matched",
                a.name(),
                b.name()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use TypeId::*;

    #[test]
    fn numbers_promote_whatever_the_order() {
        assert_eq!(select_common_type([Numeric, Int4]), Ok(Numeric));
        assert_eq!(select_common_type([Int4, Numeric]), Ok(Numeric));
        assert_eq!(select_common_type([Int4, Int8, Float8]), Ok(Float8));
        assert_eq!(select_common_type([Float8, Int4]), Ok(Float8));
    }

    #[test]
    fn unknowns_follow_and_default_to_text() {
        assert_eq!(select_common_type([Unknown, Int4]), Ok(Int4));
        assert_eq!(select_common_type([Unknown, Unknown]), Ok(Text));
        // text and varchar cast implicitly both ways: the first one leads.
        assert_eq!(select_common_type([Varchar, Text]), Ok(Varchar));
        assert_eq!(select_common_type([Text, Varchar]), Ok(Text));
    }

    #[test]
    fn categories_do_not_mix() {
        assert_eq!(select_common_type([Int4, Text]), Err((Int4, Text)));
        assert_eq!(select_common_type([Date, Bool]), Err((Date, Bool)));
        assert_eq!(select_common_type([Date, TimestampTz]), Ok(TimestampTz));
    }
}
