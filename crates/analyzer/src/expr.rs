//! Bound (typed, name-resolved) expressions: plain data. The executor evaluates them.
//!
//! Binding resolves every operator and function once; evaluation only calls function
//! pointers, so a prepared statement's expressions cost no lookups per row.

use crate::query::Rel;
use keel_catalog::SequenceDef;
use keel_common::PgResult;
use keel_types::cast::CastContext;
use keel_types::func::Function;
use keel_types::{Datum, SqlType, TypeId};
use std::sync::Arc;

pub type BinFn = fn(&Datum, &Datum) -> PgResult<Datum>;
pub type UnFn = fn(&Datum) -> PgResult<Datum>;

/// Functions evaluated here rather than in `keel_types` (they need the engine or the session).
#[derive(Clone, Debug)]
pub enum Special {
    Version,
    Nextval(Arc<SequenceDef>),
    /// currval(seq): the session's last value of the sequence (55000 before the first).
    Currval(Arc<SequenceDef>),
    /// setval(seq, value [, is_called]): arguments are evaluated from the row.
    Setval(Arc<SequenceDef>, Box<Expr>, Option<Box<Expr>>),
    /// pg_relation_size / pg_total_relation_size of these relfiles (resolved at bind time).
    RelationSize(Vec<u32>),
    /// `current_setting(name [, missing_ok])`: with missing_ok, an unknown name is NULL.
    CurrentSetting(String, bool),
    PgBackendPid,
    /// pg_trigger_depth(): how many triggers are running around this evaluation.
    PgTriggerDepth,
    /// pg_sleep(seconds float8): waits, polling for cancel and statement_timeout.
    Sleep(Box<Expr>),
    /// An advisory lock function; its key is one int8 or two int4 arguments.
    Advisory(AdvisoryCall, Vec<Expr>),
    /// The current value of the select list's `k`-th set-returning call (see
    /// [`crate::srf::ProjectSet`]); named for EXPLAIN.
    SetValue(usize, &'static str),
    /// A call of a user-defined function with its (coerced, defaults filled in) arguments.
    UserFunction(Arc<UserCall>, Vec<Expr>),
    /// `tableoid` of a row read through a partitioned table: the leaf partition its key
    /// columns (the arguments, in [`TableOidOf::columns`] order) route to.
    TableOid(Arc<TableOidOf>, Vec<Expr>),
    /// regclass output of a non-constant: the relation's name in the running statement's
    /// catalog (the number for an oid no relation has), as text.
    RegClassName(Box<Expr>),
}

/// The partitions `tableoid` routes a partitioned table's rows to.
#[derive(Debug)]
pub struct TableOidOf {
    pub tree: keel_catalog::partition_tree::PartitionTree,
    /// The table columns the arguments give, ascending.
    pub columns: Vec<usize>,
}

/// A call site of a user-defined function: the definition and the catalog it was bound
/// against (the body is planned against the same one). The executor plans the body at the
/// first call and keeps the plan here, so a prepared statement plans it once.
pub struct UserCall {
    pub def: Arc<keel_catalog::FunctionDef>,
    pub catalog: Arc<keel_catalog::Catalog>,
    /// The planned body (the executor's type), set at the first call.
    pub body: std::sync::OnceLock<Arc<dyn std::any::Any + Send + Sync>>,
}

impl std::fmt::Debug for UserCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UserCall({})", self.def.signature)
    }
}

/// Which advisory lock function (pg_[try_]advisory_[xact_]lock[_shared],
/// pg_advisory_unlock[_shared], pg_advisory_unlock_all).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdvisoryCall {
    pub op: AdvisoryOp,
    pub shared: bool,
    pub xact: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdvisoryOp {
    Lock,
    TryLock,
    Unlock,
    UnlockAll,
}

impl AdvisoryCall {
    /// Parses a function name; None when it is not an advisory lock function.
    pub fn from_name(name: &str) -> Option<AdvisoryCall> {
        if name == "pg_advisory_unlock_all" {
            return Some(AdvisoryCall {
                op: AdvisoryOp::UnlockAll,
                shared: false,
                xact: false,
            });
        }
        let (shared, rest) = match name.strip_suffix("_shared") {
            Some(r) => (true, r),
            None => (false, name),
        };
        let (op, xact) = match rest {
            "pg_advisory_lock" => (AdvisoryOp::Lock, false),
            "pg_advisory_xact_lock" => (AdvisoryOp::Lock, true),
            "pg_try_advisory_lock" => (AdvisoryOp::TryLock, false),
            "pg_try_advisory_xact_lock" => (AdvisoryOp::TryLock, true),
            "pg_advisory_unlock" => (AdvisoryOp::Unlock, false),
            _ => return None,
        };
        Some(AdvisoryCall { op, shared, xact })
    }
}

#[derive(Clone)]
pub enum Expr {
    Const(Datum, TypeId),
    Col(usize, TypeId),
    Param(usize, TypeId),
    Bin {
        op: &'static str,
        f: BinFn,
        l: Box<Expr>,
        r: Box<Expr>,
        ty: TypeId,
    },
    Un {
        f: UnFn,
        arg: Box<Expr>,
        ty: TypeId,
    },
    Not(Box<Expr>),
    /// AND / OR of any number of operands (PostgreSQL's BoolExpr): a chain of 5,000 ANDs or
    /// an IN list of 300,000 values is one node, evaluated in a loop, never recursively.
    /// Build them with [`Expr::and`] / [`Expr::or`], which flatten.
    And(Vec<Expr>),
    Or(Vec<Expr>),
    IsNull(Box<Expr>, bool),
    /// `l IS [NOT] DISTINCT FROM r`: `eq` is the resolved `=` operator; NULL equals NULL.
    Distinct {
        l: Box<Expr>,
        r: Box<Expr>,
        eq: BinFn,
        negated: bool,
    },
    IsBool {
        arg: Box<Expr>,
        value: bool,
        negated: bool,
    },
    Cast {
        arg: Box<Expr>,
        from: TypeId,
        to: SqlType,
        ctx: CastContext,
    },
    Func {
        f: Function,
        args: Vec<Expr>,
    },
    Special(Special, TypeId),
    Case {
        whens: Vec<(Expr, Expr)>,
        default: Box<Expr>,
        ty: TypeId,
    },
    Coalesce(Vec<Expr>, TypeId),
    /// GREATEST / LEAST: NULLs are ignored; NULL only when all arguments are NULL.
    MinMax {
        args: Vec<Expr>,
        greatest: bool,
        ty: TypeId,
    },
    /// A column of an enclosing query (correlated subquery): index into `EvalCx::outer`.
    Outer(usize, TypeId),
    /// A subquery in an expression (PostgreSQL's SubLink/SubPlan): the planner plans its query
    /// into the statement's subplan list at `id`; the executor runs it from there.
    SubPlan(Arc<SubPlan>),
    /// Array constructors, subscripts and `op ANY/ALL (array)`.
    Array(Box<ArrayExpr>),
    /// Composite values: row constructors, whole-row references and field selection.
    Row(Box<RowExpr>),
    /// Integer and float8 arithmetic compiled into a program (`native`): made by the
    /// planner's last pass over a finished plan, so nothing that rewrites expressions sees it.
    Native(Arc<crate::native::Native>),
}

/// An expression over arrays.
#[derive(Clone)]
pub enum ArrayExpr {
    /// `ARRAY[a, b, ...]` of type `ty`. When `nested`, the elements are arrays themselves
    /// (`ARRAY[[1,2],[3,4]]`) and become the sub-arrays of a multidimensional result.
    Ctor {
        elems: Vec<Expr>,
        ty: TypeId,
        nested: bool,
    },
    /// `arr[i][j]` (an element, of the element type) or `arr[lo:hi]` (a slice, of the array
    /// type; a plain subscript next to a slice means `1:i`). Subscripts are int4.
    Subscript {
        arr: Expr,
        subs: Vec<ArraySub>,
        slice: bool,
        ty: TypeId,
    },
    /// `arr` with the element `arr[i][j]` or the slice `arr[lo:hi]` replaced by `value` (of
    /// the element type, or of the array type for a slice): the value an UPDATE's `SET
    /// a[i] = v` writes (PostgreSQL's array_set_element / array_set_slice). `ty` is the
    /// array type.
    Assign {
        arr: Expr,
        subs: Vec<ArraySub>,
        slice: bool,
        value: Expr,
        ty: TypeId,
    },
    /// `lhs op ANY (arr)` / `lhs op ALL (arr)`: `cmp` is bound over the two-column row
    /// `[lhs value, element]`.
    Quantified {
        lhs: Expr,
        arr: Expr,
        cmp: Expr,
        all: bool,
    },
}

/// An expression over composite values.
#[derive(Clone)]
pub enum RowExpr {
    /// `ROW(a, b, ...)`, `(a, b, ...)` and a whole-row reference `t`: a composite of type
    /// `ty` (`Composite(oid)` or anonymous `Record`) whose fields have `types`.
    Ctor {
        fields: Vec<Expr>,
        ty: TypeId,
        types: Arc<[TypeId]>,
    },
    /// `(arg).field`: the `index`-th field (of type `ty`, named `name`); NULL when `arg`
    /// is NULL.
    Field {
        arg: Expr,
        index: usize,
        ty: TypeId,
        name: Arc<str>,
    },
    /// A string read as composite type `ty` (`record_in`) with these field types, or as an
    /// array of one when `ty` is a `CompositeArray`.
    FromText {
        arg: Expr,
        ty: TypeId,
        fields: Arc<[SqlType]>,
    },
}

impl RowExpr {
    pub fn ty(&self) -> TypeId {
        match self {
            RowExpr::Ctor { ty, .. } | RowExpr::Field { ty, .. } | RowExpr::FromText { ty, .. } => {
                *ty
            }
        }
    }

    pub fn for_each_child<'e>(&'e self, f: &mut dyn FnMut(&'e Expr)) {
        match self {
            RowExpr::Ctor { fields, .. } => fields.iter().for_each(f),
            RowExpr::Field { arg, .. } | RowExpr::FromText { arg, .. } => f(arg),
        }
    }

    pub fn children_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            RowExpr::Ctor { fields, .. } => fields.iter_mut().collect(),
            RowExpr::Field { arg, .. } | RowExpr::FromText { arg, .. } => vec![arg],
        }
    }

    /// Rebuilds the expression with each child mapped by `f`.
    pub fn map_children(&self, f: &mut dyn FnMut(&Expr) -> PgResult<Expr>) -> PgResult<RowExpr> {
        Ok(match self {
            RowExpr::Ctor { fields, ty, types } => RowExpr::Ctor {
                fields: fields.iter().map(&mut *f).collect::<PgResult<_>>()?,
                ty: *ty,
                types: types.clone(),
            },
            RowExpr::Field {
                arg,
                index,
                ty,
                name,
            } => RowExpr::Field {
                arg: f(arg)?,
                index: *index,
                ty: *ty,
                name: name.clone(),
            },
            RowExpr::FromText { arg, ty, fields } => RowExpr::FromText {
                arg: f(arg)?,
                ty: *ty,
                fields: fields.clone(),
            },
        })
    }
}

/// One subscript: `[upper]` or `[lower:upper]` with either bound omitted.
#[derive(Clone)]
pub struct ArraySub {
    pub lower: Option<Expr>,
    pub upper: Option<Expr>,
    /// Written without a colon (`[i]`): among slices it means `[1:i]`, where `[:i]` starts
    /// at the array's lower bound.
    pub plain: bool,
}

impl ArraySub {
    fn map(&self, f: &mut dyn FnMut(&Expr) -> PgResult<Expr>) -> PgResult<ArraySub> {
        Ok(ArraySub {
            lower: self.lower.as_ref().map(&mut *f).transpose()?,
            upper: self.upper.as_ref().map(&mut *f).transpose()?,
            plain: self.plain,
        })
    }

    fn for_each<'e>(&'e self, f: &mut dyn FnMut(&'e Expr)) {
        if let Some(l) = &self.lower {
            f(l);
        }
        if let Some(u) = &self.upper {
            f(u);
        }
    }
}

impl ArrayExpr {
    pub fn ty(&self) -> TypeId {
        match self {
            ArrayExpr::Ctor { ty, .. }
            | ArrayExpr::Subscript { ty, .. }
            | ArrayExpr::Assign { ty, .. } => *ty,
            ArrayExpr::Quantified { .. } => TypeId::Bool,
        }
    }

    /// The sub-expressions evaluated in the enclosing row's context (not `cmp`, which reads
    /// its own two-column row).
    pub fn for_each_child<'e>(&'e self, f: &mut dyn FnMut(&'e Expr)) {
        match self {
            ArrayExpr::Ctor { elems, .. } => elems.iter().for_each(f),
            ArrayExpr::Subscript { arr, subs, .. } => {
                f(arr);
                subs.iter().for_each(|s| s.for_each(f));
            }
            ArrayExpr::Assign {
                arr, subs, value, ..
            } => {
                f(arr);
                subs.iter().for_each(|s| s.for_each(f));
                f(value);
            }
            ArrayExpr::Quantified { lhs, arr, .. } => {
                f(lhs);
                f(arr);
            }
        }
    }

    /// Rebuilds the expression with each row-context child mapped by `f`.
    pub fn map_children(&self, f: &mut dyn FnMut(&Expr) -> PgResult<Expr>) -> PgResult<ArrayExpr> {
        Ok(match self {
            ArrayExpr::Ctor { elems, ty, nested } => ArrayExpr::Ctor {
                elems: elems.iter().map(&mut *f).collect::<PgResult<_>>()?,
                ty: *ty,
                nested: *nested,
            },
            ArrayExpr::Subscript {
                arr,
                subs,
                slice,
                ty,
            } => ArrayExpr::Subscript {
                arr: f(arr)?,
                subs: subs.iter().map(|s| s.map(f)).collect::<PgResult<_>>()?,
                slice: *slice,
                ty: *ty,
            },
            ArrayExpr::Assign {
                arr,
                subs,
                slice,
                value,
                ty,
            } => ArrayExpr::Assign {
                arr: f(arr)?,
                subs: subs.iter().map(|s| s.map(f)).collect::<PgResult<_>>()?,
                slice: *slice,
                value: f(value)?,
                ty: *ty,
            },
            ArrayExpr::Quantified { lhs, arr, cmp, all } => ArrayExpr::Quantified {
                lhs: f(lhs)?,
                arr: f(arr)?,
                cmp: cmp.clone(),
                all: *all,
            },
        })
    }
}

/// How a subquery's rows become a value.
#[derive(Clone)]
pub enum SubKind {
    /// `(SELECT x ...)`: NULL for no rows, 21000 for more than one.
    Scalar,
    /// `EXISTS (...)`.
    Exists,
    /// `ARRAY(SELECT x ...)`: the rows' single column as a one-dimensional array (an
    /// empty array for no rows). When the column is itself an array (`stacked`), the rows'
    /// arrays are the slices of a result with one more dimension.
    Array { stacked: bool },
    /// `lhs op ANY (...)` / `lhs IN (...)` (`all` = false) and `lhs op ALL (...)`. `cmp` is
    /// bound over the two-column row `[lhs value, subquery value]`.
    Quantified {
        lhs: Box<Expr>,
        cmp: Box<Expr>,
        all: bool,
    },
}

/// A bound subquery. `outer_args` are evaluated on the enclosing row and become the
/// subquery's outer values; without them the subquery is uncorrelated and the executor computes
/// its result once per execution. `id` is unique within the statement: the planner's plan for
/// `query` is the statement's subplan `id`.
pub struct SubPlan {
    pub id: u32,
    pub kind: SubKind,
    pub query: Rel,
    pub outer_args: Vec<Expr>,
    pub ty: TypeId,
}

impl std::fmt::Debug for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expr::Const(d, t) => write!(f, "Const({d:?}::{t:?})"),
            Expr::Col(i, _) => write!(f, "${i}c"),
            Expr::Param(i, _) => write!(f, "${}", i + 1),
            _ => write!(f, "Expr({:?})", self.ty()),
        }
    }
}

impl Expr {
    pub fn ty(&self) -> TypeId {
        match self {
            Expr::Const(_, t) | Expr::Col(_, t) | Expr::Param(_, t) => *t,
            Expr::Bin { ty, .. }
            | Expr::Un { ty, .. }
            | Expr::Case { ty, .. }
            | Expr::Coalesce(_, ty)
            | Expr::MinMax { ty, .. } => *ty,
            Expr::Not(_)
            | Expr::And(..)
            | Expr::Or(..)
            | Expr::IsNull(..)
            | Expr::Distinct { .. }
            | Expr::IsBool { .. } => TypeId::Bool,
            Expr::Cast { to, .. } => to.id,
            Expr::Func { f, .. } => f.result,
            Expr::Special(_, t) => *t,
            Expr::Outer(_, t) => *t,
            Expr::SubPlan(sp) => sp.ty,
            Expr::Array(a) => a.ty(),
            Expr::Row(r) => r.ty(),
            Expr::Native(n) => n.ty,
        }
    }

    /// The expression a compiled program was made from; any other expression itself.
    pub fn uncompiled(&self) -> &Expr {
        match self {
            Expr::Native(n) => &n.source,
            e => e,
        }
    }

    /// The typmod of the result where it is known (casts to varchar(n) etc.).
    pub fn typmod(&self) -> i32 {
        match self {
            Expr::Cast { to, .. } => to.typmod,
            _ => -1,
        }
    }

    /// Whether the expression contains a subquery.
    pub fn has_subplan(&self) -> bool {
        match self {
            Expr::SubPlan(_) => true,
            Expr::Col(..) | Expr::Const(..) | Expr::Param(..) | Expr::Outer(..) => false,
            Expr::Native(_) => false,
            Expr::Special(Special::Sleep(arg) | Special::RegClassName(arg), _) => arg.has_subplan(),
            Expr::Special(
                Special::Advisory(_, args)
                | Special::UserFunction(_, args)
                | Special::TableOid(_, args),
                _,
            ) => args.iter().any(Expr::has_subplan),
            Expr::Special(..) => false,
            Expr::Bin { l, r, .. } | Expr::Distinct { l, r, .. } => {
                l.has_subplan() || r.has_subplan()
            }
            Expr::And(args) | Expr::Or(args) => args.iter().any(Expr::has_subplan),
            Expr::Un { arg, .. }
            | Expr::Not(arg)
            | Expr::IsNull(arg, _)
            | Expr::IsBool { arg, .. }
            | Expr::Cast { arg, .. } => arg.has_subplan(),
            Expr::Func { args, .. } | Expr::Coalesce(args, _) | Expr::MinMax { args, .. } => {
                args.iter().any(Expr::has_subplan)
            }
            Expr::Array(a) => {
                let mut any = false;
                a.for_each_child(&mut |c| any |= c.has_subplan());
                any
            }
            Expr::Row(r) => {
                let mut any = false;
                r.for_each_child(&mut |c| any |= c.has_subplan());
                any
            }
            Expr::Case { whens, default, .. } => {
                default.has_subplan()
                    || whens
                        .iter()
                        .any(|(a, b)| a.has_subplan() || b.has_subplan())
            }
        }
    }

    /// Whether the expression references no row column (constants, parameters, functions of them).
    pub fn is_row_independent(&self) -> bool {
        match self {
            Expr::Col(..) => false,
            Expr::Const(..) | Expr::Param(..) | Expr::Outer(..) => true,
            Expr::SubPlan(_) => false,
            Expr::Native(n) => n.source.is_row_independent(),
            Expr::Special(s, _) => !matches!(
                s,
                Special::Nextval(_)
                    | Special::Setval(..)
                    | Special::Sleep(_)
                    | Special::Advisory(..)
                    | Special::UserFunction(..)
                    | Special::TableOid(..)
                    | Special::RegClassName(_)
            ),
            Expr::Bin { l, r, .. } | Expr::Distinct { l, r, .. } => {
                l.is_row_independent() && r.is_row_independent()
            }
            Expr::And(args) | Expr::Or(args) => args.iter().all(Expr::is_row_independent),
            Expr::Un { arg, .. }
            | Expr::Not(arg)
            | Expr::IsNull(arg, _)
            | Expr::IsBool { arg, .. }
            | Expr::Cast { arg, .. } => arg.is_row_independent(),
            Expr::Func { f, args } => {
                f.volatility != keel_types::func::Volatility::Volatile
                    && args.iter().all(Expr::is_row_independent)
            }
            Expr::Case { whens, default, .. } => {
                default.is_row_independent()
                    && whens
                        .iter()
                        .all(|(a, b)| a.is_row_independent() && b.is_row_independent())
            }
            Expr::Coalesce(a, _) | Expr::MinMax { args: a, .. } => {
                a.iter().all(Expr::is_row_independent)
            }
            Expr::Array(a) => {
                let mut all = true;
                a.for_each_child(&mut |c| all &= c.is_row_independent());
                all
            }
            Expr::Row(r) => {
                let mut all = true;
                r.for_each_child(&mut |c| all &= c.is_row_independent());
                all
            }
        }
    }

    /// AND of two expressions, flattened into one n-ary node.
    pub fn and(l: Expr, r: Expr) -> Expr {
        Expr::bool_op(l, r, true)
    }

    /// OR of two expressions, flattened into one n-ary node.
    pub fn or(l: Expr, r: Expr) -> Expr {
        Expr::bool_op(l, r, false)
    }

    fn bool_op(l: Expr, r: Expr, and: bool) -> Expr {
        let mut args = match l {
            Expr::And(v) if and => v,
            Expr::Or(v) if !and => v,
            l => vec![l],
        };
        match r {
            Expr::And(v) if and => args.extend(v),
            Expr::Or(v) if !and => args.extend(v),
            r => args.push(r),
        }
        if and { Expr::And(args) } else { Expr::Or(args) }
    }
}

impl Expr {
    /// Calls `f` on each direct sub-expression evaluated in this expression's row context
    /// (a subquery's outer arguments and its IN/ANY left operand; not its own query).
    pub fn for_each_child<'e>(&'e self, f: &mut dyn FnMut(&'e Expr)) {
        match self {
            Expr::Const(..) | Expr::Col(..) | Expr::Param(..) | Expr::Outer(..) => {}
            Expr::Bin { l, r, .. } | Expr::Distinct { l, r, .. } => {
                f(l);
                f(r);
            }
            Expr::Un { arg, .. }
            | Expr::Not(arg)
            | Expr::IsNull(arg, _)
            | Expr::IsBool { arg, .. }
            | Expr::Cast { arg, .. } => f(arg),
            Expr::And(args)
            | Expr::Or(args)
            | Expr::Func { args, .. }
            | Expr::Coalesce(args, _)
            | Expr::MinMax { args, .. } => args.iter().for_each(f),
            Expr::Special(s, _) => match s {
                Special::Setval(_, a, b) => {
                    f(a);
                    if let Some(b) = b {
                        f(b);
                    }
                }
                Special::Sleep(a) | Special::RegClassName(a) => f(a),
                Special::Advisory(_, args)
                | Special::UserFunction(_, args)
                | Special::TableOid(_, args) => args.iter().for_each(f),
                _ => {}
            },
            Expr::Case { whens, default, .. } => {
                for (w, t) in whens {
                    f(w);
                    f(t);
                }
                f(default);
            }
            Expr::Array(a) => a.for_each_child(f),
            Expr::Row(r) => r.for_each_child(f),
            Expr::Native(n) => f(&n.source),
            Expr::SubPlan(sp) => {
                sp.outer_args.iter().for_each(&mut *f);
                if let SubKind::Quantified { lhs, cmp, .. } = &sp.kind {
                    f(lhs);
                    f(cmp);
                }
            }
        }
    }

    /// Calls `f` on every subquery in the expression, outermost first. Iterative: operator
    /// chains can nest hundreds of thousands deep.
    pub fn for_each_subplan<'e>(&'e self, f: &mut dyn FnMut(&'e Arc<SubPlan>)) {
        let mut todo = vec![self];
        while let Some(e) = todo.pop() {
            if let Expr::SubPlan(sp) = e {
                f(sp);
            }
            e.for_each_child(&mut |c| todo.push(c));
        }
    }
}
