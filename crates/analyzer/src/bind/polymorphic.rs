//! Polymorphic parameters of user-defined functions, as PostgreSQL's parse_coerce.c resolves
//! them (check_generic_type_consistency / enforce_generic_type_consistency).
//!
//! Two families bind independently:
//! - `anyelement`, `anynonarray` and `anyarray` bind to one element type T, taken from the
//!   actual arguments without any casting: every `anyelement` argument is T, every `anyarray`
//!   argument is T's array type. `anynonarray` also requires T not to be an array.
//! - `anycompatible`, `anycompatiblenonarray` and `anycompatiblearray` bind to the common type
//!   of their arguments (the elements, for the array ones), as UNION chooses it; every
//!   argument must cast to it implicitly. When all are unknown literals it is text.
//!
//! Unknown literals take no part in choosing a type. A family whose arguments are all unknown
//! cannot resolve `anyelement` (42804), as in PostgreSQL.

use keel_common::{PgError, PgResult, sqlstate};
use keel_types::TypeId;
use keel_types::cast::{CastContext, can_cast};
use keel_types::common_type::select_common_type;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Any,
    Compatible,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Element,
    NonArray,
    Array,
}

fn kind(t: TypeId) -> Option<(Family, Shape)> {
    Some(match t {
        TypeId::AnyElement => (Family::Any, Shape::Element),
        TypeId::AnyNonArray => (Family::Any, Shape::NonArray),
        TypeId::AnyArray => (Family::Any, Shape::Array),
        TypeId::AnyCompatible => (Family::Compatible, Shape::Element),
        TypeId::AnyCompatibleNonArray => (Family::Compatible, Shape::NonArray),
        TypeId::AnyCompatibleArray => (Family::Compatible, Shape::Array),
        _ => return None,
    })
}

/// What a call binds the two families to: the element types (None when no argument gave one).
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct Binding {
    any: Option<TypeId>,
    compatible: Option<TypeId>,
    /// Some argument of the compatible family was given (all may be unknown).
    compatible_seen: bool,
}

/// The binding the actual argument types `pairs` (declared, actual) give, or None when they
/// are inconsistent: the candidate does not fit the call.
pub(crate) fn bind(pairs: &[(TypeId, TypeId)]) -> Option<Binding> {
    let mut b = Binding::default();
    let mut compatible = Vec::new();
    let mut nonarray = [false; 2];
    for &(decl, actual) in pairs {
        let Some((family, shape)) = kind(decl) else {
            continue;
        };
        if shape == Shape::NonArray {
            nonarray[(family == Family::Compatible) as usize] = true;
        }
        if family == Family::Compatible {
            b.compatible_seen = true;
        }
        if actual == TypeId::Unknown {
            continue;
        }
        let elem = match shape {
            Shape::Array => actual.elem()?,
            _ => actual,
        };
        match family {
            Family::Any => match b.any {
                Some(t) if t != elem => return None,
                _ => b.any = Some(elem),
            },
            Family::Compatible => compatible.push(elem),
        }
    }
    if !compatible.is_empty() {
        let common = select_common_type(compatible.iter().copied()).ok()?;
        if compatible
            .iter()
            .any(|t| *t != common && !can_cast(*t, common, CastContext::Implicit))
        {
            return None;
        }
        b.compatible = Some(common);
    }
    for (i, t) in [b.any, b.compatible].into_iter().enumerate() {
        if nonarray[i] && t.is_some_and(TypeId::is_array) {
            return None;
        }
    }
    Some(b)
}

impl Binding {
    /// The concrete type `t` stands for in this call: itself when not polymorphic. 42804 when
    /// its family was given only unknown literals (anycompatible's then resolve to text).
    pub(crate) fn concrete(&self, t: TypeId) -> PgResult<TypeId> {
        let Some((family, shape)) = kind(t) else {
            return Ok(t);
        };
        let elem = match family {
            Family::Any => self.any,
            Family::Compatible => self
                .compatible
                .or(self.compatible_seen.then_some(TypeId::Text)),
        };
        let Some(elem) = elem else {
            return Err(PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                "could not determine polymorphic type because input has type unknown",
            )
            .unplaced());
        };
        match shape {
            Shape::Array => elem
                .array_of()
                .filter(|_| elem != TypeId::Unknown)
                .ok_or_else(|| {
                    PgError::new(
                        sqlstate::UNDEFINED_OBJECT,
                        format!("could not find array type for data type {}", elem.name()),
                    )
                    .unplaced()
                }),
            _ => Ok(elem),
        }
    }
}

/// PostgreSQL's check at CREATE FUNCTION: a polymorphic result (or OUT parameter) needs an
/// input of its family, else nothing could tell a call's result type (42P13).
pub fn check_result(result: TypeId, inputs: &[TypeId]) -> PgResult<()> {
    let Some((family, _)) = kind(result) else {
        return Ok(());
    };
    if inputs
        .iter()
        .any(|t| kind(*t).is_some_and(|(f, _)| f == family))
    {
        return Ok(());
    }
    let detail = match family {
        Family::Any => "anyelement, anyarray, anynonarray, anyenum, anyrange, or anymultirange",
        Family::Compatible => {
            "anycompatible, anycompatiblearray, anycompatiblenonarray, anycompatiblerange, or anycompatiblemultirange"
        }
    };
    Err(PgError::new(
        sqlstate::INVALID_FUNCTION_DEFINITION,
        "cannot determine result data type",
    )
    .with_detail(format!(
        "A result of type {} requires at least one input of type {detail}.",
        result.name()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use TypeId::*;

    fn resolve(pairs: &[(TypeId, TypeId)], t: TypeId) -> Option<TypeId> {
        bind(pairs).and_then(|b| b.concrete(t).ok())
    }

    #[test]
    fn anyelement_binds_without_casting() {
        assert_eq!(resolve(&[(AnyElement, Int4)], AnyArray), Some(Int4Array));
        assert_eq!(
            resolve(&[(AnyArray, NumericArray)], AnyElement),
            Some(Numeric)
        );
        assert!(bind(&[(AnyElement, Int4), (AnyElement, Numeric)]).is_none());
        assert!(bind(&[(AnyElement, Int2), (AnyElement, Int4)]).is_none());
        assert_eq!(
            resolve(&[(AnyElement, Int4), (AnyElement, Unknown)], AnyElement),
            Some(Int4)
        );
        assert!(bind(&[(AnyArray, Int4)]).is_none());
        assert!(bind(&[(AnyNonArray, Int4Array)]).is_none());
        // anyelement may be an array, but then anyarray has no type.
        assert_eq!(
            resolve(&[(AnyElement, Int4Array)], AnyElement),
            Some(Int4Array)
        );
    }

    #[test]
    fn unknown_only_inputs() {
        assert!(resolve(&[(AnyElement, Unknown)], AnyElement).is_none());
        assert_eq!(
            resolve(&[(AnyCompatible, Unknown)], AnyCompatibleArray),
            Some(TextArray)
        );
    }

    #[test]
    fn anycompatible_takes_the_common_type() {
        let p = [(AnyCompatible, Int4), (AnyCompatible, Numeric)];
        assert_eq!(resolve(&p, AnyCompatibleArray), Some(NumericArray));
        let p = [
            (AnyCompatibleNonArray, Int4),
            (AnyCompatibleArray, NumericArray),
        ];
        assert_eq!(resolve(&p, AnyCompatible), Some(Numeric));
        assert!(bind(&[(AnyCompatible, Int4), (AnyCompatible, Text)]).is_none());
    }

    #[test]
    fn results_need_an_input_of_their_family() {
        assert!(check_result(AnyElement, &[Int4]).is_err());
        assert!(check_result(AnyCompatible, &[AnyElement]).is_err());
        assert!(check_result(AnyArray, &[AnyNonArray]).is_ok());
        assert!(check_result(Int4, &[]).is_ok());
    }
}
