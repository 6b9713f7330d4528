//! Sort: materializes its input and orders it by per-key memcomparable encodings
//! (keel_types::key), honouring DESC and NULLS FIRST/LAST per key.

use super::discard::discard;
use super::{BoxNode, Node, Row};
use crate::expr::EvalCx;
use crate::plan::SortKey;
use keel_common::PgResult;
use std::cmp::Ordering;

pub struct Sort<'a> {
    input: Option<BoxNode<'a>>,
    keys: &'a [SortKey],
    rows: std::vec::IntoIter<Row>,
}

impl<'a> Sort<'a> {
    pub fn new(input: BoxNode<'a>, keys: &'a [SortKey]) -> Self {
        Sort {
            input: Some(input),
            keys,
            rows: Vec::new().into_iter(),
        }
    }
}

type Keyed = (Vec<(bool, Vec<u8>)>, Row);

/// The per-key encodings of `row` under `keys` (also used for aggregate ORDER BY).
pub(crate) fn encode(
    keys: &[SortKey],
    row: &[keel_types::Datum],
    ev: &mut EvalCx<'_>,
) -> PgResult<Vec<(bool, Vec<u8>)>> {
    let mut k = Vec::with_capacity(keys.len());
    for key in keys {
        let v = key.expr.eval(row, ev)?;
        let mut b = Vec::new();
        let null = v.is_null();
        if !null {
            keel_types::key::encode_key(std::slice::from_ref(&v), &[key.expr.ty()], &mut b);
        }
        k.push((null, b));
    }
    Ok(k)
}

/// Orders two encodings from [`encode`]: DESC reverses the bytes' order; NULLS FIRST/LAST is
/// decided before the bytes are compared.
pub(crate) fn compare(keys: &[SortKey], a: &[(bool, Vec<u8>)], b: &[(bool, Vec<u8>)]) -> Ordering {
    for (i, key) in keys.iter().enumerate() {
        let (an, ab) = &a[i];
        let (bn, bb) = &b[i];
        let o = match (an, bn) {
            (true, true) => Ordering::Equal,
            (true, false) => {
                if key.nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (false, true) => {
                if key.nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (false, false) => {
                let o = ab.cmp(bb);
                if key.desc { o.reverse() } else { o }
            }
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

impl<'a> Node<'a> for Sort<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let mut all: Vec<Keyed> = Vec::new();
            let keys = self.keys;
            let sorted = (|| {
                while let Some(r) = input.next(ev)? {
                    ev.tick()?;
                    all.push((encode(keys, &r, ev)?, r));
                }
                // Stable: equal keys keep their input order.
                super::runs::sort_checked(&mut all, |a, b| compare(keys, &a.0, &b.0), ev)
            })();
            if let Err(e) = sorted {
                discard(all.len(), all);
                return Err(e);
            }
            self.rows = all
                .into_iter()
                .map(|(_, r)| r)
                .collect::<Vec<_>>()
                .into_iter();
        }
        Ok(self.rows.next())
    }
}

impl Drop for Sort<'_> {
    fn drop(&mut self) {
        super::discard::discard_in_place(&mut self.rows);
    }
}
