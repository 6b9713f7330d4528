//! Whether the pruning conditions contradict each other, as PostgreSQL's planner decides it
//! for every partition that survives pruning: relation_excluded_by_constraints asks
//! predicate_refuted_by (predtest.c, weak refutation) whether the restriction clauses refute
//! themselves, and if so scans no partition at all. Pruning proper misses some of these
//! (`a > 5 AND a < 3` within one partition, `a IN (1, 2) AND a = 3`), so EXPLAIN parity needs
//! this too.
//!
//! The proof is PostgreSQL's, not "is the intersection empty": it walks AND and OR structure
//! (an IN list of at most 100 elements is the OR of its `col = v`; a longer one is opaque)
//! with predtest's rules and compares two comparisons on the same column with its
//! refutation table. The NULL cases follow it too: an IN element that is NULL refutes
//! anything as a clause and is refuted by any comparison as a predicate, but not by another
//! NULL element, so `a = ANY('{NULL}')` alone prunes nothing.

use super::PartitionKey;
use super::prune::{Clause, Strategy};
use keel_types::Datum;
use std::cmp::Ordering;

/// predtest.c's MAX_SAOP_ARRAY_SIZE: longer IN lists are not expanded.
const MAX_SAOP_ARRAY_SIZE: usize = 100;

/// An atom of the proof. `Op`'s value is `None` for a NULL IN element.
#[derive(Clone, Copy)]
enum Atom<'a> {
    Op(usize, Strategy, Option<&'a Datum>),
    IsNull(usize),
    IsNotNull(usize),
    /// An IN list too long to expand.
    LongIn(usize),
}

#[derive(Clone, Copy)]
enum Node<'a> {
    /// The top-level AND of all conditions.
    And(&'a [Clause<'a>]),
    /// An IN list: the OR of `col = v`.
    Or(usize, &'a [Datum]),
    /// An atom, with its position among the conditions when it is one of them (a condition
    /// never refutes itself); IN elements have none.
    Atom(Atom<'a>, Option<usize>),
}

/// Whether the AND of `clauses` refutes itself (predicate_refuted_by(clauses, clauses,
/// weak = true)).
pub(super) fn refuted(key: &PartitionKey, clauses: &[Clause]) -> bool {
    let proof = Proof { key, clauses };
    let node = match clauses {
        // A one-element list stands for its element.
        [_] => proof.condition(0),
        _ => Node::And(clauses),
    };
    proof.refutes(node, node)
}

struct Proof<'a> {
    key: &'a PartitionKey,
    clauses: &'a [Clause<'a>],
}

impl<'a> Proof<'a> {
    fn condition(&self, i: usize) -> Node<'a> {
        match self.clauses[i] {
            Clause::Op(k, s, v) => Node::Atom(Atom::Op(k, s, Some(v)), Some(i)),
            Clause::IsNull(k) => Node::Atom(Atom::IsNull(k), Some(i)),
            Clause::IsNotNull(k) => Node::Atom(Atom::IsNotNull(k), Some(i)),
            Clause::In(k, values) if values.len() <= MAX_SAOP_ARRAY_SIZE => Node::Or(k, values),
            Clause::In(k, _) => Node::Atom(Atom::LongIn(k), Some(i)),
        }
    }

    fn len(node: Node) -> usize {
        match node {
            Node::And(c) => c.len(),
            Node::Or(_, values) => values.len(),
            Node::Atom(..) => 0,
        }
    }

    fn child(&self, node: Node<'a>, i: usize) -> Node<'a> {
        match node {
            Node::And(_) => self.condition(i),
            Node::Or(k, values) => {
                let v = &values[i];
                Node::Atom(Atom::Op(k, Strategy::Eq, (!v.is_null()).then_some(v)), None)
            }
            Node::Atom(..) => unreachable!("atoms have no components"),
        }
    }

    fn any(&self, node: Node<'a>, f: impl Fn(Node<'a>) -> bool) -> bool {
        (0..Self::len(node)).any(|i| f(self.child(node, i)))
    }

    fn all(&self, node: Node<'a>, f: impl Fn(Node<'a>) -> bool) -> bool {
        (0..Self::len(node)).all(|i| f(self.child(node, i)))
    }

    /// predicate_refuted_by_recurse: does `clause` (known true) prove `pred` not true?
    fn refutes(&self, clause: Node<'a>, pred: Node<'a>) -> bool {
        use Node::{And, Atom, Or};
        match (clause, pred) {
            (And(_), And(_)) => {
                self.any(pred, |p| self.refutes(clause, p))
                    || self.any(clause, |c| self.refutes(c, pred))
            }
            (And(_), Or(..)) | (Or(..), Or(..)) | (Atom(..), Or(..)) => {
                self.all(pred, |p| self.refutes(clause, p))
            }
            (And(_), Atom(..)) => self.any(clause, |c| self.refutes(c, pred)),
            (Or(..), And(_)) => self.all(clause, |c| self.any(pred, |p| self.refutes(c, p))),
            (Or(..), Atom(..)) => self.all(clause, |c| self.refutes(c, pred)),
            (Atom(..), And(_)) => self.any(pred, |p| self.refutes(clause, p)),
            (Atom(c, ci), Atom(p, pi)) => ci.is_none_or(|ci| Some(ci) != pi) && self.simple(c, p),
        }
    }

    /// predicate_refuted_by_simple_clause with weak refutation.
    fn simple(&self, clause: Atom, pred: Atom) -> bool {
        let column = |a: Atom| match a {
            Atom::Op(k, ..) | Atom::IsNull(k) | Atom::IsNotNull(k) | Atom::LongIn(k) => k,
        };
        let strict = |a: Atom| matches!(a, Atom::Op(..) | Atom::LongIn(_));
        if let Atom::IsNull(k) = clause {
            // `x IS NULL` refutes `x IS NOT NULL` and anything strict in x.
            return column(pred) == k && (matches!(pred, Atom::IsNotNull(_)) || strict(pred));
        }
        match pred {
            Atom::IsNull(k) => {
                return column(clause) == k
                    && (matches!(clause, Atom::IsNotNull(_)) || strict(clause));
            }
            Atom::IsNotNull(_) => return false,
            _ => {}
        }
        // operator_predicate_proof: two comparisons of the same column with constants.
        let (Atom::Op(ck, cs, cv), Atom::Op(pk, ps, pv)) = (clause, pred) else {
            return false;
        };
        if ck != pk {
            return false;
        }
        match (cv, pv) {
            // Equal (NULL) constants: the operators alone must refute each other.
            (None, None) => same_subexprs_refutes(cs, ps),
            // A NULL comparison is never true: as the clause it proves anything, as the
            // predicate it is weakly refuted.
            (None, Some(_)) | (Some(_), None) => true,
            (Some(c), Some(p)) => match refute_test(cs, ps) {
                Some(test) => test(self.key.cmp(ck, p, c)),
                None => false,
            },
        }
    }
}

/// RC_refutes_table (and the negator rule): does `x clause_op y` refute `x pred_op y`?
fn same_subexprs_refutes(clause: Strategy, pred: Strategy) -> bool {
    use Strategy::*;
    matches!(
        (clause, pred),
        (Lt, Eq | Ge | Gt) | (Le, Gt) | (Eq, Lt | Gt) | (Ge, Lt) | (Gt, Lt | Le | Eq)
    )
}

/// RC_refute_table: `x clause_op c` refutes `x pred_op p` when the returned test holds for
/// the comparison of p with c; None when no test can tell.
fn refute_test(clause: Strategy, pred: Strategy) -> Option<fn(Ordering) -> bool> {
    use Strategy::*;
    let lt: fn(Ordering) -> bool = |o| o == Ordering::Less;
    let le: fn(Ordering) -> bool = |o| o != Ordering::Greater;
    let ne: fn(Ordering) -> bool = |o| o != Ordering::Equal;
    let ge: fn(Ordering) -> bool = |o| o != Ordering::Less;
    let gt: fn(Ordering) -> bool = |o| o == Ordering::Greater;
    match (clause, pred) {
        (Lt, Eq | Ge | Gt) => Some(ge),
        (Le, Eq | Ge) => Some(gt),
        (Le, Gt) => Some(ge),
        (Eq, Lt) => Some(le),
        (Eq, Le) => Some(lt),
        (Eq, Eq) => Some(ne),
        (Eq, Ge) => Some(gt),
        (Eq, Gt) => Some(ge),
        (Ge, Lt) => Some(le),
        (Ge, Le | Eq) => Some(lt),
        (Gt, Lt | Le | Eq) => Some(le),
        _ => None,
    }
}
