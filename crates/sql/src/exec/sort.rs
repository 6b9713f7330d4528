//! Sort: materializes its input and orders it by per-key memcomparable encodings
//! (keel_types::key), honouring DESC and NULLS FIRST/LAST per key.

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

impl<'a> Node<'a> for Sort<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        if let Some(mut input) = self.input.take() {
            let mut all: Vec<Keyed> = Vec::new();
            while let Some(r) = input.next(ev)? {
                let mut k = Vec::with_capacity(self.keys.len());
                for key in self.keys {
                    let v = key.expr.eval(&r, ev)?;
                    let mut b = Vec::new();
                    let null = v.is_null();
                    if !null {
                        keel_types::key::encode_key(
                            std::slice::from_ref(&v),
                            &[key.expr.ty()],
                            &mut b,
                        );
                    }
                    k.push((null, b));
                }
                all.push((k, r));
            }
            ev.check_cancel()?;
            let keys = self.keys;
            all.sort_by(|a, b| {
                for (i, key) in keys.iter().enumerate() {
                    let (an, ab) = &a.0[i];
                    let (bn, bb) = &b.0[i];
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
            });
            self.rows = all
                .into_iter()
                .map(|(_, r)| r)
                .collect::<Vec<_>>()
                .into_iter();
        }
        Ok(self.rows.next())
    }
}
