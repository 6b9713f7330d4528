//! The checks a new partition's bound must pass: the shape checks of PostgreSQL 15's
//! transformPartitionBound / validateInfiniteBounds (parse_utilcmd.c), then
//! check_new_partition_bound (partbounds.c) against the existing partitions, with their
//! SQLSTATEs, messages and DETAILs.
//!
//! Not here: whether rows already in the default partition would belong to the new
//! partition (check_default_partition_contents). That needs a scan of the default partition;
//! the caller does it after these checks pass and raises
//! [`super::default_partition_violation`] if a row would move.

use super::desc::{BoundInfo, NO_PART, PartitionDesc, pg_bsearch, rbound_cmp};
use super::text::range_values_text;
use super::{PartitionBound, PartitionKey, PartitionStrategy, RangeValue};
use keel_common::{Oid, PgError, PgResult, sqlstate};

/// The part of a bound an error is about, for the caller to turn into an error position
/// (PostgreSQL points its cursor there): the whole `FOR VALUES ...` / `DEFAULT` clause, the
/// i-th value of FROM, of TO, or of IN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundItem {
    Spec,
    Lower(usize),
    Upper(usize),
    Value(usize),
}

/// Checks `new_bound`, the bound of new partition `new_name` of the table whose current
/// partitions `existing` describes. `name_of` gives an existing partition's name from its
/// oid. See [`check_new_partition_located`] for the errors; this one reports no positions.
pub fn check_new_partition(
    existing: &PartitionDesc,
    new_name: &str,
    new_bound: &PartitionBound,
    name_of: impl Fn(Oid) -> String,
) -> PgResult<()> {
    check_new_partition_located(existing, new_name, new_bound, name_of, |_| None)
}

/// [`check_new_partition`], with `position_of` giving the error position of a part of the
/// bound (PostgreSQL's parser_errposition), when the caller knows it.
///
/// Errors, in the order PostgreSQL checks:
/// - 42P16 `a hash-partitioned table may not have a default partition`;
/// - 42P16 `invalid bound specification for a {range|list|hash} partition` (the bound's kind
///   is not the key's strategy);
/// - 42P16 `modulus for hash partition must be an integer value greater than zero`,
///   `remainder for hash partition must be less than modulus`;
/// - 42P16 `FROM (TO) must specify exactly one value per partitioning column`;
/// - 42P17 `cannot specify NULL in range bound`;
/// - 42804 `every bound following MINVALUE (MAXVALUE) must also be MINVALUE (MAXVALUE)`;
/// - 42P17 `partition "x" conflicts with existing default partition "y"`;
/// - 42P17 `every hash partition modulus must be a factor of the next larger modulus`, with
///   a DETAIL naming the existing partition whose modulus it does not fit;
/// - 42P17 `empty range bound specified for partition "x"`, DETAIL `Specified lower bound
///   (..) is greater than or equal to upper bound (..).`;
/// - 42P17 `partition "x" would overlap partition "y"`.
pub fn check_new_partition_located(
    existing: &PartitionDesc,
    new_name: &str,
    new_bound: &PartitionBound,
    name_of: impl Fn(Oid) -> String,
    position_of: impl Fn(BoundItem) -> Option<u32>,
) -> PgResult<()> {
    let at = |e: PgError, item: BoundItem| match position_of(item) {
        Some(p) => e.with_position(p),
        None => e,
    };
    let key = existing.key();
    validate_bound(key, new_bound, &at)?;
    let overlap = |with: usize, item: BoundItem| {
        at(
            PgError::new(
                sqlstate::INVALID_OBJECT_DEFINITION,
                format!(
                    "partition \"{new_name}\" would overlap partition \"{}\"",
                    name_of(existing.oids[with])
                ),
            ),
            item,
        )
    };
    match (&existing.info, new_bound) {
        (_, PartitionBound::Default) => match existing.default {
            // The default partition never overlaps another; only a second one conflicts.
            None => Ok(()),
            Some(d) => Err(at(
                PgError::new(
                    sqlstate::INVALID_OBJECT_DEFINITION,
                    format!(
                        "partition \"{new_name}\" conflicts with existing default partition \"{}\"",
                        name_of(existing.oids[d])
                    ),
                ),
                BoundItem::Spec,
            )),
        },
        (BoundInfo::Hash(h), &PartitionBound::Hash { modulus, remainder }) => {
            if h.bounds.is_empty() {
                return Ok(());
            }
            // Every modulus must divide the next larger one. Checking against the next
            // smaller and next larger existing moduli is enough: the rest already obey.
            let (offset, _) = pg_bsearch(h.bounds.len(), |i| {
                (h.bounds[i].modulus, h.bounds[i].remainder).cmp(&(modulus, remainder))
            });
            let not_factor = |next: usize| {
                let b = h.bounds[next];
                (b.modulus % modulus != 0).then(|| {
                    modulus_error(format!(
                        "The new modulus {modulus} is not a factor of {}, the modulus of existing partition \"{}\".",
                        b.modulus,
                        name_of(existing.oids[b.part])
                    ))
                })
            };
            if offset < 0 {
                if let Some(e) = not_factor(0) {
                    return Err(e);
                }
            } else {
                let prev = h.bounds[offset as usize];
                if modulus % prev.modulus != 0 {
                    return Err(modulus_error(format!(
                        "The new modulus {modulus} is not divisible by {}, the modulus of existing partition \"{}\".",
                        prev.modulus,
                        name_of(existing.oids[prev.part])
                    )));
                }
                if (offset as usize) + 1 < h.bounds.len()
                    && let Some(e) = not_factor(offset as usize + 1)
                {
                    return Err(e);
                }
            }
            // The slots the new partition would own, taken mod the greatest modulus.
            let greatest = h.slots.len();
            let mut r = remainder as usize % greatest;
            loop {
                if h.slots[r] != NO_PART {
                    return Err(overlap(h.slots[r] as usize, BoundItem::Spec));
                }
                r += modulus as usize;
                if r >= greatest {
                    return Ok(());
                }
            }
        }
        (BoundInfo::List(l), PartitionBound::List { values }) => {
            if existing.is_empty() {
                return Ok(());
            }
            for (i, v) in values.iter().enumerate() {
                let with = if v.is_null() {
                    l.null_part
                } else {
                    match super::desc::list_bsearch(key, l, v) {
                        (off, true) => Some(l.parts[off as usize]),
                        _ => None,
                    }
                };
                if let Some(with) = with {
                    return Err(overlap(with, BoundItem::Value(i)));
                }
            }
            Ok(())
        }
        (BoundInfo::Range(r), PartitionBound::Range { lower, upper }) => {
            // rbound_cmp cannot say "equal" here: the two bounds are of different sides.
            let mut cmp = rbound_cmp(key, lower, true, upper, false);
            if cmp > 0 {
                return Err(at(
                    PgError::new(
                        sqlstate::INVALID_OBJECT_DEFINITION,
                        format!("empty range bound specified for partition \"{new_name}\""),
                    )
                    .with_detail(format!(
                        "Specified lower bound {} is greater than or equal to upper bound {}.",
                        range_values_text(lower, key),
                        range_values_text(upper, key)
                    )),
                    BoundItem::Lower(cmp as usize - 1),
                ));
            }
            if existing.is_empty() {
                return Ok(());
            }
            // Where the new lower bound (inclusive) falls: inside an existing partition when
            // the next bound is some partition's upper bound, in a gap when it is a lower
            // bound (or there is none).
            let n = r.bounds.len() as isize;
            let (mut lo, mut hi) = (-1isize, n - 1);
            while lo < hi {
                let mid = (lo + hi + 1) / 2;
                let stored_lower = r.indexes[mid as usize].is_none();
                cmp = rbound_cmp(key, &r.bounds[mid as usize], stored_lower, lower, true);
                if cmp <= 0 {
                    lo = mid;
                    if cmp == 0 {
                        break;
                    }
                } else {
                    hi = mid - 1;
                }
            }
            let next = (lo + 1) as usize;
            match r.indexes[next] {
                Some(inside) => {
                    let col = if cmp == 0 {
                        0
                    } else {
                        cmp.unsigned_abs() as usize - 1
                    };
                    Err(overlap(inside, BoundItem::Lower(col)))
                }
                None if (next as isize) < n => {
                    // In a gap: the new upper bound must not pass the next lower bound.
                    let c = rbound_cmp(key, &r.bounds[next], true, upper, false);
                    match (c < 0).then(|| r.indexes[next + 1]).flatten() {
                        Some(with) => Err(overlap(
                            with,
                            BoundItem::Upper(c.unsigned_abs() as usize - 1),
                        )),
                        None => Ok(()),
                    }
                }
                None => Ok(()),
            }
        }
        _ => Err(PgError::internal("partition bound does not match the key")),
    }
}

fn modulus_error(detail: String) -> PgError {
    PgError::new(
        sqlstate::INVALID_OBJECT_DEFINITION,
        "every hash partition modulus must be a factor of the next larger modulus",
    )
    .with_detail(detail)
    .unplaced()
}

/// transformPartitionBound's checks of a bound against the key, before any comparison with
/// other partitions.
fn validate_bound(
    key: &PartitionKey,
    bound: &PartitionBound,
    at: &impl Fn(PgError, BoundItem) -> PgError,
) -> PgResult<()> {
    // PostgreSQL places none of these errors but the wrong-strategy one.
    let invalid =
        |msg: &str| PgError::new(sqlstate::INVALID_TABLE_DEFINITION, msg.to_string()).unplaced();
    match (key.strategy, bound) {
        (PartitionStrategy::Hash, PartitionBound::Default) => Err(invalid(
            "a hash-partitioned table may not have a default partition",
        )),
        (_, PartitionBound::Default) => Ok(()),
        (PartitionStrategy::Hash, &PartitionBound::Hash { modulus, remainder }) => {
            if modulus == 0 {
                Err(invalid(
                    "modulus for hash partition must be an integer value greater than zero",
                ))
            } else if remainder >= modulus {
                Err(invalid(
                    "remainder for hash partition must be less than modulus",
                ))
            } else {
                Ok(())
            }
        }
        (PartitionStrategy::List, PartitionBound::List { .. }) => Ok(()),
        (PartitionStrategy::Range, PartitionBound::Range { lower, upper }) => {
            if lower.len() != key.len() {
                return Err(invalid(
                    "FROM must specify exactly one value per partitioning column",
                ));
            }
            if upper.len() != key.len() {
                return Err(invalid(
                    "TO must specify exactly one value per partitioning column",
                ));
            }
            validate_range_values(lower, BoundItem::Lower, at)?;
            validate_range_values(upper, BoundItem::Upper, at)
        }
        (strategy, _) => {
            let name = match strategy {
                PartitionStrategy::Range => "range",
                PartitionStrategy::List => "list",
                PartitionStrategy::Hash => "hash",
            };
            Err(at(
                PgError::new(
                    sqlstate::INVALID_TABLE_DEFINITION,
                    format!("invalid bound specification for a {name} partition"),
                ),
                BoundItem::Spec,
            ))
        }
    }
}

/// No NULL in a range bound, and once a column is MINVALUE (MAXVALUE) every later one must
/// be too (validateInfiniteBounds): `(MINVALUE, 0)` would mean nothing more than
/// `(MINVALUE, MINVALUE)`, so PostgreSQL refuses it.
fn validate_range_values(
    values: &[RangeValue],
    item: fn(usize) -> BoundItem,
    at: &impl Fn(PgError, BoundItem) -> PgError,
) -> PgResult<()> {
    if values
        .iter()
        .any(|v| matches!(v, RangeValue::Value(d) if d.is_null()))
    {
        return Err(PgError::new(
            sqlstate::INVALID_OBJECT_DEFINITION,
            "cannot specify NULL in range bound",
        )
        .unplaced());
    }
    let mut kind = 1; // RangeValue::Value's rank
    for (i, v) in values.iter().enumerate() {
        if v.rank() == kind {
            continue;
        }
        let msg = match kind {
            0 => "every bound following MINVALUE must also be MINVALUE",
            2 => "every bound following MAXVALUE must also be MAXVALUE",
            _ => {
                kind = v.rank();
                continue;
            }
        };
        return Err(at(PgError::new(sqlstate::DATATYPE_MISMATCH, msg), item(i)));
    }
    Ok(())
}
