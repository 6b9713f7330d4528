//! Property test: random operation sequences against a `BTreeSet` model.

use crate::tests::{env, verify};
use crate::{Existing, UniqueInsert};
use keel_common::Tid;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::ops::Bound;

#[derive(Clone, Debug)]
enum Op {
    Insert(Vec<u8>, u16),
    /// Unique insert where existing entries with an even tid slot count as live.
    Unique(Vec<u8>, u16),
    /// Remove entries whose slot is divisible by the value.
    Delete(u16),
    Scan(Bound<Vec<u8>>, Bound<Vec<u8>>),
}

/// Short keys over a tiny alphabet (many equal keys and shared prefixes), some padded long so
/// that pages split after few entries.
fn key() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(prop::sample::select(vec![0u8, 1, b'a', b'b', 0xff]), 0..4),
        0usize..400,
    )
        .prop_map(|(mut k, pad)| {
            if pad > 250 {
                k.extend(std::iter::repeat_n(b'p', pad));
            }
            k
        })
}

fn bound() -> impl Strategy<Value = Bound<Vec<u8>>> {
    prop_oneof![
        Just(Bound::Unbounded),
        key().prop_map(Bound::Included),
        key().prop_map(Bound::Excluded),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (key(), 0u16..200).prop_map(|(k, t)| Op::Insert(k, t)),
        3 => (key(), 0u16..200).prop_map(|(k, t)| Op::Unique(k, t)),
        1 => (2u16..6).prop_map(Op::Delete),
        2 => (bound(), bound()).prop_map(|(l, h)| Op::Scan(l, h)),
    ]
}

/// The model's answer for prefix bounds, straight from their definition.
fn in_range(k: &[u8], lo: &Bound<Vec<u8>>, hi: &Bound<Vec<u8>>) -> bool {
    let lo_ok = match lo {
        Bound::Unbounded => true,
        Bound::Included(p) => k >= &p[..],
        Bound::Excluded(p) => k > &p[..] && !k.starts_with(p),
    };
    let hi_ok = match hi {
        Bound::Unbounded => true,
        Bound::Included(p) => k <= &p[..] || k.starts_with(p),
        Bound::Excluded(p) => k < &p[..],
    };
    lo_ok && hi_ok
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn matches_model(ops in prop::collection::vec(op(), 1..400)) {
        let e = env(16);
        let mut model: BTreeSet<(Vec<u8>, u16)> = BTreeSet::new();
        for op in ops {
            match op {
                Op::Insert(k, t) => {
                    e.tree.insert(&k, Tid::new(0, t), 2).unwrap();
                    model.insert((k, t));
                }
                Op::Unique(k, t) => {
                    let r = e.tree.insert_unique(&k, Tid::new(0, t), 2, &mut |x| {
                        Ok(if x.slot % 2 == 0 { Existing::Live } else { Existing::Dead })
                    }).unwrap();
                    let live = model.iter().find(|(mk, mt)| *mk == k && *mt != t && mt % 2 == 0);
                    match live {
                        Some((_, mt)) => prop_assert_eq!(r, UniqueInsert::Duplicate(Tid::new(0, *mt))),
                        None => {
                            prop_assert_eq!(r, UniqueInsert::Inserted);
                            model.insert((k, t));
                        }
                    }
                }
                Op::Delete(m) => {
                    let n = e
                        .tree
                        .bulk_delete(2, &|x: Tid| x.slot.is_multiple_of(m), &|| Ok(()))
                        .unwrap();
                    let before = model.len();
                    model.retain(|(_, t)| !t.is_multiple_of(m));
                    prop_assert_eq!(n as usize, before - model.len());
                }
                Op::Scan(lo, hi) => {
                    let got: Vec<(Vec<u8>, u16)> = e.tree.scan(lo.clone(), hi.clone())
                        .map(|r| r.map(|(k, t)| (k, t.slot))).collect::<Result<_, _>>().unwrap();
                    let want: Vec<(Vec<u8>, u16)> =
                        model.iter().filter(|(k, _)| in_range(k, &lo, &hi)).cloned().collect();
                    let back: Vec<(Vec<u8>, u16)> = e.tree.scan_backward(lo.clone(), hi.clone())
                        .map(|r| r.map(|(k, t)| (k, t.slot))).collect::<Result<_, _>>().unwrap();
                    let mut reversed = want.clone();
                    reversed.reverse();
                    prop_assert_eq!(back, reversed);
                    prop_assert_eq!(got, want);
                    if let Bound::Included(k) | Bound::Excluded(k) = &lo {
                        let tids: Vec<u16> = e.tree.lookup(k).unwrap().iter().map(|t| t.slot).collect();
                        let want: Vec<u16> = model.iter().filter(|(mk, _)| mk == k).map(|(_, t)| *t).collect();
                        prop_assert_eq!(tids, want);
                    }
                }
            }
        }
        let got: Vec<(Vec<u8>, u16)> = e.tree.scan(Bound::Unbounded, Bound::Unbounded)
            .map(|r| r.map(|(k, t)| (k, t.slot))).collect::<Result<_, _>>().unwrap();
        let mut back: Vec<(Vec<u8>, u16)> = e.tree.scan_backward(Bound::Unbounded, Bound::Unbounded)
            .map(|r| r.map(|(k, t)| (k, t.slot))).collect::<Result<_, _>>().unwrap();
        back.reverse();
        prop_assert_eq!(&back, &got);
        prop_assert_eq!(got, model.into_iter().collect::<Vec<_>>());
        verify(&e.tree);
    }
}
