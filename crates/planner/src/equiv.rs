//! Equivalence classes with constants, as PostgreSQL's `generate_base_implied_equalities_const`:
//! in an inner-join block, `a = b` between columns of different tables and `a = 10` put `a`,
//! `b` and the constant in one class; every member is then restricted by the constant
//! (`b = 10` is added, so both scans use it) and the column-to-column equalities of that class
//! are dropped, since the constant restrictions imply them. Only `=` between operands of one
//! type, and only constants or parameters (no volatile expression), as PostgreSQL requires
//! mergejoinable operators of the same type.

use keel_analyzer::expr::Expr;

/// A column of the block (written layout) and its type.
fn column(e: &Expr) -> Option<usize> {
    match e {
        Expr::Col(c, _) => Some(*c),
        _ => None,
    }
}

fn is_constant(e: &Expr) -> bool {
    matches!(e, Expr::Const(..) | Expr::Param(..))
}

/// `column = constant` (either way round, one type): the column and the conjunct.
fn const_eq(e: &Expr) -> Option<usize> {
    let Expr::Bin { op: "=", l, r, .. } = e else {
        return None;
    };
    let (c, v) = match (l.as_ref(), r.as_ref()) {
        (Expr::Col(..), v) if is_constant(v) => (l, v),
        (v, Expr::Col(..)) if is_constant(v) => (r, v),
        _ => return None,
    };
    (c.ty() == v.ty()).then(|| column(c)).flatten()
}

/// `column = column` of one type, over two different tables (`leaf_of`).
fn col_eq(e: &Expr, leaf_of: &dyn Fn(usize) -> Option<usize>) -> Option<(usize, usize)> {
    let Expr::Bin { op: "=", l, r, .. } = e else {
        return None;
    };
    let (a, b) = (column(l)?, column(r)?);
    (l.ty() == r.ty() && leaf_of(a).is_some() && leaf_of(a) != leaf_of(b)).then_some((a, b))
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

/// The block's conjuncts (written layout, `width` columns) with the implied constant
/// restrictions added and the equalities they make redundant removed.
pub(crate) fn apply_constants(
    conj: Vec<Expr>,
    width: usize,
    leaf_of: &dyn Fn(usize) -> Option<usize>,
) -> Vec<Expr> {
    let mut parent: Vec<usize> = (0..width).collect();
    for e in &conj {
        if let Some((a, b)) = col_eq(e, leaf_of)
            && a < width
            && b < width
        {
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            parent[ra] = rb;
        }
    }
    // Per class root: the constant conjunct that restricts it (None after a second,
    // different constant: such a class is left as written).
    let mut constant: Vec<Option<Option<usize>>> = vec![None; width];
    for (i, e) in conj.iter().enumerate() {
        if let Some(c) = const_eq(e)
            && c < width
        {
            let root = find(&mut parent, c);
            constant[root] = match constant[root] {
                None => Some(Some(i)),
                Some(Some(j)) if same_constant(&conj[j], e) => Some(Some(j)),
                Some(_) => Some(None),
            };
        }
    }
    let class_const = |parent: &mut [usize], c: usize| constant[find(parent, c)].flatten();
    let mut out = Vec::with_capacity(conj.len());
    let mut restricted: Vec<bool> = vec![false; width];
    for e in &conj {
        if let Some(c) = const_eq(e) {
            restricted[c] = true;
        }
    }
    for e in &conj {
        if let Some((a, _)) = col_eq(e, leaf_of)
            && class_const(&mut parent, a).is_some()
        {
            continue;
        }
        out.push(e.clone());
    }
    for (c, done) in restricted.into_iter().enumerate() {
        if done {
            continue;
        }
        if let Some(i) = class_const(&mut parent, c)
            && let Some(e) = with_column(&conj[i], c)
        {
            out.push(e);
        }
    }
    out
}

/// The constant side of a `column = constant` conjunct.
fn constant_of(e: &Expr) -> Option<&Expr> {
    let Expr::Bin { l, r, .. } = e else {
        return None;
    };
    if is_constant(l) { Some(l) } else { Some(r) }
}

fn same_constant(a: &Expr, b: &Expr) -> bool {
    match (constant_of(a), constant_of(b)) {
        (Some(Expr::Const(x, tx)), Some(Expr::Const(y, ty))) => tx == ty && x == y,
        (Some(Expr::Param(x, _)), Some(Expr::Param(y, _))) => x == y,
        _ => false,
    }
}

/// `e` (`column = constant`) with its column replaced by column `c` of the same type.
fn with_column(e: &Expr, c: usize) -> Option<Expr> {
    let Expr::Bin { op, f, l, r, ty } = e else {
        return None;
    };
    let swap = |x: &Expr| match x {
        Expr::Col(_, t) => Expr::Col(c, *t),
        other => other.clone(),
    };
    Some(Expr::Bin {
        op,
        f: *f,
        l: Box::new(swap(l)),
        r: Box::new(swap(r)),
        ty: *ty,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use keel_types::{Datum, TypeId};

    fn eq(l: Expr, r: Expr) -> Expr {
        fn f(_: &Datum, _: &Datum) -> keel_common::PgResult<Datum> {
            Ok(Datum::Null)
        }
        Expr::Bin {
            op: "=",
            f,
            l: Box::new(l),
            r: Box::new(r),
            ty: TypeId::Bool,
        }
    }
    fn col(i: usize) -> Expr {
        Expr::Col(i, TypeId::Int4)
    }
    fn int(v: i32) -> Expr {
        Expr::Const(Datum::Int4(v), TypeId::Int4)
    }
    /// Two tables of two columns: 0-1 and 2-3.
    fn leaf_of(c: usize) -> Option<usize> {
        (c < 4).then_some(c / 2)
    }
    /// `(column, constant)` of each `column = constant`, and the column pairs left.
    type Shape = (Vec<(usize, i32)>, Vec<(usize, usize)>);
    fn shape(conj: &[Expr]) -> Shape {
        let (mut consts, mut pairs) = (Vec::new(), Vec::new());
        for e in conj {
            let Expr::Bin { l, r, .. } = e else { continue };
            match (l.as_ref(), r.as_ref()) {
                (Expr::Col(c, _), Expr::Const(Datum::Int4(v), _)) => consts.push((*c, *v)),
                (Expr::Col(a, _), Expr::Col(b, _)) => pairs.push((*a, *b)),
                _ => {}
            }
        }
        consts.sort_unstable();
        (consts, pairs)
    }

    #[test]
    fn constant_restricts_every_member_and_drops_the_join_clause() {
        let out = apply_constants(vec![eq(col(2), col(0)), eq(col(0), int(10))], 4, &leaf_of);
        assert_eq!(shape(&out), (vec![(0, 10), (2, 10)], vec![]));
    }

    #[test]
    fn class_without_constant_is_kept() {
        let out = apply_constants(vec![eq(col(2), col(0)), eq(col(1), int(3))], 4, &leaf_of);
        assert_eq!(shape(&out), (vec![(1, 3)], vec![(2, 0)]));
    }

    #[test]
    fn two_different_constants_leave_the_class_as_written() {
        let conj = vec![eq(col(2), col(0)), eq(col(0), int(10)), eq(col(2), int(11))];
        let out = apply_constants(conj, 4, &leaf_of);
        assert_eq!(shape(&out), (vec![(0, 10), (2, 11)], vec![(2, 0)]));
    }

    #[test]
    fn columns_of_other_types_are_not_equated() {
        let other = Expr::Col(2, TypeId::Int8);
        let out = apply_constants(vec![eq(other, col(0)), eq(col(0), int(10))], 4, &leaf_of);
        assert_eq!(shape(&out), (vec![(0, 10)], vec![(2, 0)]));
    }
}
