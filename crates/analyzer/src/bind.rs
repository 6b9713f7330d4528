//! Binding: resolves names against the catalog and types every expression, following
//! PostgreSQL's rules (unknown literals and parameters take their type from context).

mod array;
mod composite;
pub mod dml;
pub mod execute_args;
mod fold;
mod from;
pub mod func;
pub mod join;
mod keyword_expr;
mod locking;
mod on_conflict;
pub mod polymorphic;
mod position;
pub mod query;
mod regclass;
mod row;
pub mod setop;
mod srf;
pub mod subquery;
mod system_column;
pub mod types;
mod userfunc;
mod userfunc_from;
pub mod view;
mod view_write;

use crate::expr::Expr;
use crate::query::AggCall;
use keel_catalog::Catalog;
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::CastContext;
use keel_types::{Datum, SqlType, TypeId};
use sqlparser::ast::{self, Spanned};

/// A column visible in a FROM scope.
#[derive(Clone, Debug)]
pub struct ScopeCol {
    pub qualifier: Option<String>,
    pub name: String,
    pub ty: TypeId,
    pub typmod: i32,
    pub table_oid: u32,
    pub attnum: i16,
    /// Not visible to unqualified names and `*` (the sides' copies of a JOIN USING column).
    pub hidden: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Scope {
    pub cols: Vec<ScopeCol>,
}

/// Aggregation context: expressions after GROUP BY see group keys and aggregate results.
pub struct AggCtx {
    pub input: Scope,
    pub group_asts: Vec<ast::Expr>,
    pub group: Vec<Expr>,
    pub aggs: Vec<AggCall>,
}

pub struct Binder<'a> {
    pub catalog: &'a Catalog,
    /// Set when an aggregate call was met outside an aggregation context (the SELECT is then
    /// re-bound as an aggregate query).
    pub agg_seen: bool,
    pub params: Vec<TypeId>,
    /// The statement text and its character offset in the query string (for positions).
    pub text: &'a str,
    pub char_offset: usize,
    /// Enclosing query levels while a subquery is bound (innermost last).
    pub outer: Vec<subquery::Frame>,
    /// Next `SubPlan::id` (unique within the statement).
    pub next_subplan: u32,
    /// WITH queries in scope (innermost last).
    pub ctes: Vec<setop::Cte>,
    /// Set for the next SELECT bound as a set-operation operand: its unknown literals stay
    /// unknown so the set operation can resolve them.
    pub keep_unknown: bool,
    /// The range-table entries other than tables met so far in the statement (subqueries in
    /// FROM, WITH references), by the address of their syntax node: a SELECT bound twice
    /// (re-bound as an aggregate query) counts each once. EXPLAIN reads the count.
    pub non_table_rtes: std::collections::BTreeSet<usize>,
    /// The strengths of the statement's locking clauses in text order, when the parser had
    /// to rewrite one (FOR NO KEY UPDATE, FOR KEY SHARE); empty otherwise.
    pub lock_strengths: Vec<crate::query::LockStrength>,
    /// Queries being bound (1 while the statement's own is, more inside subqueries and WITH).
    pub query_depth: u32,
    /// While a select list is bound: its query depth and the set-returning calls met in it
    /// ([`IN_AGGREGATE`] for the depth while an aggregate's arguments are).
    pub srf_sink: Option<(u32, Vec<crate::srf::TableFunc>)>,
    /// The clause being bound where PostgreSQL names set-returning calls as not allowed.
    pub srf_clause: Option<&'static str>,
    /// While a SQL function's body is bound: the function's name and its input parameters'
    /// names, which unqualified (or `fname.`-qualified) names that match no column refer to.
    pub fn_params: Option<FunctionParams>,
    /// While a PL/pgSQL statement is bound: which parameters stand for the body's variables
    /// (see [`PlVars`]).
    pub pl_vars: Option<PlVars>,
    /// Tables and views the statement's FROM clauses name, by oid, in the order met (what
    /// CREATE VIEW records as the view's dependencies).
    pub read_relations: Vec<keel_common::Oid>,
    /// Views being expanded around this binding (a view reading a view...): bounds a cycle
    /// CREATE OR REPLACE VIEW made.
    pub view_depth: u32,
    /// Only the parameters given when the binder was made exist (a view's query has none).
    pub no_new_params: bool,
}

/// The PL/pgSQL variables a statement's text named, each become a parameter
/// (`keel_plpgsql::vars::bind_vars`): `names[k]` is the variable `$k+1` stands for (None for
/// a record field or a `$n` reference). An unqualified variable that is also a column in
/// scope is resolved as `#variable_conflict` says, as PostgreSQL's parser hooks do.
/// `relations`: the transition tables of the trigger firing whose function runs, which the
/// statement reads by name before any table (PostgreSQL's ephemeral named relations).
#[derive(Clone, Debug, Default)]
pub struct PlVars {
    pub names: Vec<Option<String>>,
    pub conflict: VarConflict,
    pub relations: Vec<NamedRel>,
}

/// A relation a statement reads by name that is not in the catalog: a trigger's transition
/// table, with the columns of the table the trigger is on.
#[derive(Clone, Debug)]
pub struct NamedRel {
    pub name: String,
    pub table: std::sync::Arc<keel_catalog::TableDef>,
}

/// `#variable_conflict` (PostgreSQL's `plpgsql.variable_conflict`, default `error`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VarConflict {
    /// 42702 "column reference ... is ambiguous".
    #[default]
    Error,
    UseVariable,
    UseColumn,
}

/// [`Binder::srf_sink`]'s depth while an aggregate call's arguments are bound.
pub const IN_AGGREGATE: u32 = u32::MAX;

/// A SQL function body's parameters while it is bound: the function's name, and each input
/// parameter's name (if it has one) and type, in order.
pub type FunctionParams = (String, Vec<(Option<String>, TypeId)>);

/// Folds an identifier as PostgreSQL does: unquoted names are lower-cased.
pub fn fold(id: &ast::Ident) -> String {
    if id.quote_style.is_some() {
        id.value.clone()
    } else {
        id.value.to_lowercase()
    }
}

/// The last part of a (possibly schema-qualified) name, folded. `pg_catalog.x` keeps its schema
/// so the caller can tell system relations apart.
pub fn object_name(n: &ast::ObjectName) -> (Option<String>, String) {
    let parts: Vec<String> = n.0.iter().filter_map(|p| p.as_ident().map(fold)).collect();
    match parts.as_slice() {
        [.., schema, name] => (Some(schema.clone()), name.clone()),
        [name] => (None, name.clone()),
        [] => (None, String::new()),
    }
}

pub fn is_aggregate_name(name: &str) -> bool {
    matches!(
        name,
        "count"
            | "sum"
            | "avg"
            | "min"
            | "max"
            | "string_agg"
            | "array_agg"
            | "bool_and"
            | "bool_or"
            | "every"
    )
}

fn undefined_column(name: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_COLUMN,
        format!("column \"{name}\" does not exist"),
    )
}

impl<'a> Binder<'a> {
    pub fn new(
        catalog: &'a Catalog,
        param_types: &[TypeId],
        text: &'a str,
        char_offset: usize,
    ) -> Binder<'a> {
        Binder {
            catalog,
            agg_seen: false,
            params: param_types.to_vec(),
            text,
            char_offset,
            outer: Vec::new(),
            next_subplan: 0,
            ctes: Vec::new(),
            keep_unknown: false,
            non_table_rtes: Default::default(),
            lock_strengths: Vec::new(),
            query_depth: 0,
            srf_sink: None,
            srf_clause: None,
            fn_params: None,
            pl_vars: None,
            read_relations: Vec::new(),
            view_depth: 0,
            no_new_params: false,
        }
    }

    /// 1-based position in the whole query string of a span's start.
    pub fn position(&self, span: sqlparser::tokenizer::Span) -> Option<u32> {
        let loc = span.start;
        if loc.line == 0 || self.text.is_empty() {
            return None;
        }
        let mut chars = 0usize;
        for (i, line) in self.text.split('\n').enumerate() {
            if i + 1 == loc.line as usize {
                chars += (loc.column as usize).saturating_sub(1);
                return Some((self.char_offset + chars + 1) as u32);
            }
            chars += line.chars().count() + 1;
        }
        None
    }

    /// Position of the first non-blank character at or after `loc` (or, with `back`, of the
    /// `(` just before it): where PostgreSQL points for operators and parenthesized subqueries.
    pub fn position_near(&self, loc: sqlparser::tokenizer::Location, back: bool) -> Option<u32> {
        let p = self.position(sqlparser::tokenizer::Span::new(loc, loc))? as usize;
        let chars: Vec<char> = self.text.chars().collect();
        let mut i = p.checked_sub(self.char_offset + 1)?;
        if back {
            while i > 0 && chars.get(i) != Some(&'(') {
                i -= 1;
            }
        } else {
            // A parenthesized operand's span may end before its closing parenthesis.
            while chars.get(i).is_some_and(|c| c.is_whitespace() || *c == ')') {
                i += 1;
            }
        }
        Some((self.char_offset + i + 1) as u32)
    }

    /// Whether `err` still needs the position of the expression it is reported for:
    /// PostgreSQL reports a cursor position for analysis errors and bad literals only, and
    /// the innermost expression's position stands.
    fn wants_position(err: &PgError) -> bool {
        err.position.is_none()
            && !err.unplaced
            && (err.code.starts_with("42")
                || err.code == sqlstate::INVALID_TEXT_REPRESENTATION
                || err.code == sqlstate::INVALID_DATETIME_FORMAT
                || err.code == sqlstate::DATETIME_FIELD_OVERFLOW
                || err.code == sqlstate::NUMERIC_VALUE_OUT_OF_RANGE
                || err.code == sqlstate::PROGRAM_LIMIT_EXCEEDED)
    }

    pub fn at(&self, err: PgError, span: sqlparser::tokenizer::Span) -> PgError {
        if !Self::wants_position(&err) {
            return err;
        }
        match self.position(span) {
            Some(p) => err.or_position(p),
            None => err,
        }
    }

    pub fn table(
        &self,
        name: &ast::ObjectName,
    ) -> PgResult<std::sync::Arc<keel_catalog::TableDef>> {
        let (schema, n) = object_name(name);
        if let Some(s) = schema.as_deref() {
            if s == "pg_catalog" || s == "information_schema" {
                return Err(self.at(
                    PgError::unsupported(format!("system catalog \"{s}.{n}\"")),
                    name.span(),
                ));
            }
            if s != "public" {
                return Err(self.at(
                    PgError::new(
                        sqlstate::UNDEFINED_TABLE,
                        format!("relation \"{s}.{n}\" does not exist"),
                    ),
                    name.span(),
                ));
            }
        }
        if n.starts_with("pg_") && self.catalog.table_by_name(&n).is_none() {
            return Err(self.at(
                PgError::unsupported(format!("system catalog \"{n}\"")),
                name.span(),
            ));
        }
        self.catalog
            .table(&n)
            .cloned()
            .map_err(|e| self.at(e, name.span()))
    }

    // ---- expressions --------------------------------------------------------------------

    /// `a + b - c || ...`: sqlparser nests a chain of binary operators to the left, one level
    /// per operator. The left spine is walked down in a loop and the operators applied from
    /// the bottom up, so only right operands recurse: a chain of any length binds without
    /// nesting (evaluation walks it the same way, `Expr::eval`). The walk stops at AND/OR,
    /// row comparisons and, after GROUP BY, at a node equal to a group key, which bind as
    /// they do on their own.
    fn operator_chain(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        use ast::BinaryOperator as B;
        let mut spine = Vec::new();
        let mut cur = e;
        while let ast::Expr::BinaryOp { left, op, right } = cur
            && !matches!(op, B::And | B::Or)
            && (spine.is_empty()
                || (row::row_fields(left).is_none() || row::row_fields(right).is_none())
                    && !agg
                        .as_deref()
                        .is_some_and(|a| a.group_asts.iter().any(|g| g == cur)))
        {
            spine.push((cur, binary_op_name(op)?, left.as_ref(), right.as_ref()));
            cur = left;
        }
        let mut acc = self.expr(cur, scope, agg)?;
        for (node, name, left, right) in spine.into_iter().rev() {
            let step = self
                .expr(right, scope, agg)
                .and_then(|r| self.binary_at(name, acc, r, Some((left, right))));
            acc = step.map_err(|err| {
                // As `expr` positions an error at the node it binds (the top is `e`'s caller's).
                if Self::wants_position(&err) && !std::ptr::eq(node, e) {
                    self.at(err, node.span())
                } else {
                    err
                }
            })?;
        }
        Ok(acc)
    }

    /// Binds `e` in `scope` (or in the aggregation context when given).
    pub fn expr(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        // Every level of a nested expression: 54001 before the thread's stack runs out.
        keel_common::stack::check()?;
        // The span is computed only when the error takes it: a span walks the whole
        // subtree, and an error passing up through n levels would walk n^2 nodes.
        self.expr_inner(e, scope, agg).map_err(|err| {
            if Self::wants_position(&err) {
                self.at(err, e.span())
            } else {
                err
            }
        })
    }

    /// `a AND b AND c ...` (or OR): sqlparser nests the chain to the left, one level per
    /// operator; it is walked down in a loop and bound into one n-ary node, as PostgreSQL's
    /// grammar flattens it, so a chain of any length binds and runs without recursion.
    fn bool_chain(
        &mut self,
        e: &ast::Expr,
        op: &ast::BinaryOperator,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        let mut rights = Vec::new();
        let mut left = e;
        while let ast::Expr::BinaryOp {
            left: l,
            op: o,
            right,
        } = left
            && o == op
            && !agg
                .as_deref()
                .is_some_and(|a| a.group_asts.iter().any(|g| g == left))
        {
            rights.push(right.as_ref());
            left = l;
        }
        let mut out = Vec::with_capacity(rights.len() + 1);
        for operand in std::iter::once(left).chain(rights.into_iter().rev()) {
            out.push(self.bool_expr(operand, scope, agg)?);
        }
        Ok(if matches!(op, ast::BinaryOperator::And) {
            Expr::And(out)
        } else {
            Expr::Or(out)
        })
    }

    /// Binds and coerces to `to` (assignment context: INSERT values, UPDATE SET).
    pub fn expr_as(
        &mut self,
        e: &ast::Expr,
        to: SqlType,
        scope: &Scope,
        ctx: CastContext,
    ) -> PgResult<Expr> {
        let b = self.expr(e, scope, &mut None)?;
        self.coerce_in(b, to, ctx)
            .map_err(|err| self.at(err, e.span()))
    }

    pub fn bool_expr(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        let b = self.expr(e, scope, agg)?;
        self.as_bool(b, e)
    }

    /// The boolean-context check of [`Binder::bool_expr`], out of the recursive path.
    #[inline(never)]
    fn as_bool(&mut self, b: Expr, e: &ast::Expr) -> PgResult<Expr> {
        let b = self
            .coerce_in(b, SqlType::new(TypeId::Bool), CastContext::Implicit)
            .map_err(|err| self.at(err, e.span()))?;
        if b.ty() != TypeId::Bool {
            return Err(self.at(
                PgError::new(
                    sqlstate::DATATYPE_MISMATCH,
                    format!(
                        "argument of WHERE must be type boolean, not type {}",
                        b.ty().name()
                    ),
                ),
                e.span(),
            ));
        }
        Ok(b)
    }

    pub(crate) fn column(&self, qual: Option<&str>, name: &str, scope: &Scope) -> PgResult<Expr> {
        let mut found = None;
        for (i, c) in scope.cols.iter().enumerate() {
            let visible = match qual {
                None => !c.hidden,
                Some(_) => c.qualifier.as_deref() == qual,
            };
            if c.name == name && visible {
                if found.is_some() {
                    return Err(PgError::new(
                        sqlstate::AMBIGUOUS_COLUMN,
                        format!("column reference \"{name}\" is ambiguous"),
                    ));
                }
                found = Some((i, c.ty));
            }
        }
        if found.is_none()
            && let Some(sys) = self.system_column(qual, name, scope)
        {
            return sys;
        }
        match found {
            Some((i, ty)) => Ok(Expr::Col(i, ty)),
            None => match qual {
                Some(q) if !scope.cols.iter().any(|c| c.qualifier.as_deref() == Some(q)) => {
                    // A table in scope under an alias, named by its own name.
                    let aliased = scope.cols.iter().find(|c| {
                        c.table_oid != 0
                            && self
                                .catalog
                                .tables
                                .get(&c.table_oid)
                                .is_some_and(|t| t.name == q)
                    });
                    Err(match aliased.and_then(|c| c.qualifier.as_deref()) {
                        Some(alias) => PgError::new(
                            sqlstate::UNDEFINED_TABLE,
                            format!("invalid reference to FROM-clause entry for table \"{q}\""),
                        )
                        .with_hint(format!(
                            "Perhaps you meant to reference the table alias \"{alias}\"."
                        )),
                        None => PgError::new(
                            sqlstate::UNDEFINED_TABLE,
                            format!("missing FROM-clause entry for table \"{q}\""),
                        ),
                    })
                }
                // PostgreSQL's errorMissingColumn quotes only an unqualified name.
                Some(q) => Err(PgError::new(
                    sqlstate::UNDEFINED_COLUMN,
                    format!("column {q}.{name} does not exist"),
                )),
                None => Err(undefined_column(name)),
            },
        }
    }

    fn expr_inner(
        &mut self,
        e: &ast::Expr,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        use ast::Expr as E;
        // After GROUP BY: a whole expression equal to a group key refers to it.
        if let Some(a) = agg.as_deref()
            && let Some(i) = a.group_asts.iter().position(|g| g == e)
        {
            return Ok(Expr::Col(i, a.group[i].ty()));
        }
        match e {
            E::Identifier(id) => {
                let name = fold(id);
                match self.column_ref(None, &name, scope, agg) {
                    Err(err) if subquery::is_undefined(&err) && agg.is_none() => {
                        self.whole_row(&name, scope).ok_or(err)
                    }
                    r => r,
                }
            }
            E::Tuple(items) => {
                let items: Vec<&ast::Expr> = items.iter().collect();
                self.row_ctor(&items, scope, agg)
            }
            E::Function(f) if f.name.to_string().eq_ignore_ascii_case("row") => {
                match row::row_fields(e) {
                    Some(items) => self.row_ctor(&items, scope, agg),
                    None => self.function(f, scope, agg),
                }
            }
            E::CompoundIdentifier(ids) => {
                let parts: Vec<String> = ids.iter().map(fold).collect();
                let (q, n) = match parts.as_slice() {
                    [.., q, n] => (q.clone(), n.clone()),
                    _ => return Err(PgError::unsupported("this column reference")),
                };
                self.column_ref(Some(&q), &n, scope, agg)
            }
            E::Value(v) => match &v.value {
                ast::Value::Placeholder(p) if self.pl_vars.is_some() => {
                    match self.variable_as_column(p, scope, agg)? {
                        Some(col) => Ok(col),
                        None => self.value(&v.value),
                    }
                }
                other => self.value(other),
            },
            E::Nested(inner) => self.expr(inner, scope, agg),
            E::BinaryOp { left, op, right } => {
                use ast::BinaryOperator as B;
                match op {
                    B::And | B::Or => self.bool_chain(e, op, scope, agg),
                    _ => {
                        let name = binary_op_name(op)?;
                        if let (Some(lf), Some(rf)) =
                            (row::row_fields(left), row::row_fields(right))
                            && let Some(cmp) = self.row_compare(name, &lf, &rf, scope, agg)?
                        {
                            return Ok(cmp);
                        }
                        self.operator_chain(e, scope, agg)
                    }
                }
            }
            E::UnaryOp { op, expr } => {
                use ast::UnaryOperator as U;
                if let Some(e) = sign_binds_tighter(op, expr) {
                    return self.expr(&e, scope, agg);
                }
                match op {
                    U::Not => Ok(Expr::Not(Box::new(self.bool_expr(expr, scope, agg)?))),
                    U::Minus => {
                        // Fold negative numeric literals so -2147483648 stays an int4.
                        if let E::Value(v) = expr.as_ref()
                            && let ast::Value::Number(n, _) = &v.value
                        {
                            return self.number(&format!("-{n}"));
                        }
                        let a = self.expr(expr, scope, agg)?;
                        self.unary("-", a)
                            .map_err(|err| self.at_prefix_operator(err, expr))
                    }
                    U::Plus => self.expr(expr, scope, agg),
                    U::PGAbs | U::BitwiseNot | U::PGSquareRoot | U::PGCubeRoot => {
                        let a = self.expr(expr, scope, agg)?;
                        self.unary(
                            match op {
                                U::PGAbs => "@",
                                U::BitwiseNot => "~",
                                U::PGSquareRoot => "|/",
                                _ => "||/",
                            },
                            a,
                        )
                        .map_err(|err| self.at_prefix_operator(err, expr))
                    }
                    other => Err(PgError::unsupported(format!("operator {other}"))),
                }
            }
            E::Function(f) => self.function(f, scope, agg),
            E::Array(a) => self
                .array_ctor(a, scope, agg)
                .map_err(|err| self.at(err, e.span())),
            E::CompoundFieldAccess { root, access_chain } => {
                let names: Option<Vec<&ast::Ident>> = (access_chain.iter())
                    .map(|a| match a {
                        ast::AccessExpr::Dot(E::Identifier(i)) => Some(i),
                        _ => None,
                    })
                    .collect();
                match names {
                    Some(names)
                        if !matches!(**root, E::Identifier(_) | E::CompoundIdentifier(_)) =>
                    {
                        self.field_select(root, &names, scope, agg)
                    }
                    _ => self.array_subscript(root, access_chain, scope, agg),
                }
            }
            E::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | E::AllOp {
                left,
                compare_op,
                right,
            } if !matches!(right.as_ref(), E::Subquery(_)) => {
                let op = binary_op_name(compare_op)?;
                let all = matches!(e, E::AllOp { .. });
                self.array_quantified(left, op, right, all, scope, agg)
                    .map_err(|err| match self.operator_position(left, right) {
                        Some(p) if Self::wants_position(&err) => err.or_position(p),
                        _ => err,
                    })
            }
            E::Subquery(_)
            | E::Exists { .. }
            | E::InSubquery { .. }
            | E::AnyOp { .. }
            | E::AllOp { .. } => self.subquery_expr(e, scope, agg),
            other => self.keyword_expr(other, scope, agg),
        }
    }

    #[inline(never)]
    fn column_ref(
        &mut self,
        qual: Option<&str>,
        name: &str,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Expr> {
        if let Some(a) = agg.as_deref() {
            // Inside the aggregated scope a column must be a group key.
            let inner = match self.column(qual, name, &a.input) {
                Err(e) if subquery::is_undefined(&e) && !self.outer.is_empty() => {
                    return self.outer_column(qual, name, e);
                }
                Err(e) if subquery::is_undefined(&e) => {
                    return self.function_param(qual, name).ok_or(e);
                }
                r => r?,
            };
            if let Expr::Col(ci, _) = inner {
                for (i, g) in a.group.iter().enumerate() {
                    if let Expr::Col(gi, ty) = g
                        && *gi == ci
                    {
                        return Ok(Expr::Col(i, *ty));
                    }
                }
            }
            let shown = match qual {
                Some(q) => format!("{q}.{name}"),
                None => name.to_string(),
            };
            return Err(PgError::new(
                sqlstate::GROUPING_ERROR,
                format!(
                    "column \"{shown}\" must appear in the GROUP BY clause or be used in an aggregate function"
                ),
            ));
        }
        if qual.is_none() && name == "current_timestamp" || name == "current_date" {
            // sqlparser turns some keywords into identifiers in odd positions.
            return self.named_function(name, vec![]);
        }
        let r = match self.column(qual, name, scope) {
            Err(e) if subquery::is_undefined(&e) && !self.outer.is_empty() => {
                self.outer_column(qual, name, e)
            }
            r => r,
        };
        match r {
            Err(e) if subquery::is_undefined(&e) => self.function_param(qual, name).ok_or(e),
            r => r,
        }
    }

    /// A PL/pgSQL variable (parameter `p`) that is also a column in `scope`: an error, the
    /// column, or (None) the variable, as `#variable_conflict` says.
    fn variable_as_column(
        &mut self,
        p: &str,
        scope: &Scope,
        agg: &mut Option<&mut AggCtx>,
    ) -> PgResult<Option<Expr>> {
        let Some(vars) = &self.pl_vars else {
            return Ok(None);
        };
        let conflict = vars.conflict;
        let name = p
            .strip_prefix('$')
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| vars.names.get(n.checked_sub(1)?))
            .cloned()
            .flatten();
        let Some(name) = name else {
            return Ok(None);
        };
        if conflict == VarConflict::UseVariable {
            return Ok(None);
        }
        match self.column(None, &name, scope) {
            Err(e) if subquery::is_undefined(&e) => Ok(None),
            _ if conflict == VarConflict::UseColumn => {
                self.column_ref(None, &name, scope, agg).map(Some)
            }
            _ => Err(PgError::new(
                sqlstate::AMBIGUOUS_COLUMN,
                format!("column reference \"{name}\" is ambiguous"),
            )
            .with_detail("It could refer to either a PL/pgSQL variable or a table column.")),
        }
    }

    /// A SQL function body's reference to its parameter `name` (columns take precedence,
    /// as in PostgreSQL); `fname.name` also names it.
    fn function_param(&self, qual: Option<&str>, name: &str) -> Option<Expr> {
        let (fname, params) = self.fn_params.as_ref()?;
        if qual.is_some_and(|q| q != fname) {
            return None;
        }
        let i = params
            .iter()
            .position(|(n, _)| n.as_deref() == Some(name))?;
        Some(Expr::Param(i, params[i].1))
    }

    #[inline(never)]
    pub fn number(&self, n: &str) -> PgResult<Expr> {
        if let Ok(v) = n.parse::<i32>() {
            return Ok(Expr::Const(Datum::Int4(v), TypeId::Int4));
        }
        if let Ok(v) = n.parse::<i64>() {
            return Ok(Expr::Const(Datum::Int8(v), TypeId::Int8));
        }
        Ok(Expr::Const(
            keel_types::io::parse_text(n, SqlType::new(TypeId::Numeric))?,
            TypeId::Numeric,
        ))
    }

    #[inline(never)]
    fn value(&mut self, v: &ast::Value) -> PgResult<Expr> {
        use ast::Value as V;
        match v {
            V::Number(n, _) => self.number(n),
            V::SingleQuotedString(s) | V::EscapedStringLiteral(s) => {
                Ok(Expr::Const(Datum::Text(s.clone()), TypeId::Unknown))
            }
            V::DollarQuotedString(d) => {
                Ok(Expr::Const(Datum::Text(d.value.clone()), TypeId::Unknown))
            }
            V::Boolean(b) => Ok(Expr::Const(Datum::Bool(*b), TypeId::Bool)),
            V::Null => Ok(Expr::Const(Datum::Null, TypeId::Unknown)),
            V::Placeholder(p) => {
                let n: usize = p
                    .trim_start_matches('$')
                    .parse()
                    .map_err(|_| PgError::unsupported(format!("placeholder {p}")))?;
                if n == 0 || n > 65535 || (self.no_new_params && n > self.params.len()) {
                    return Err(PgError::new(
                        sqlstate::UNDEFINED_PARAMETER,
                        format!("there is no parameter ${n}"),
                    ));
                }
                if self.params.len() < n {
                    self.params.resize(n, TypeId::Unknown);
                }
                Ok(Expr::Param(n - 1, self.params[n - 1]))
            }
            other => Err(PgError::unsupported(format!("literal {other}"))),
        }
    }

    /// Resolves a binary operator, giving unknown-typed operands the other side's type.
    pub fn binary(&mut self, op: &'static str, l: Expr, r: Expr) -> PgResult<Expr> {
        self.binary_at(op, l, r, None)
    }

    /// `binary` for operands written as `left op right` in the query: as in PostgreSQL, an
    /// operator that does not exist is reported at the operator, and an operand that does not
    /// convert (`1 + 'a'`) at that operand.
    #[inline(never)]
    fn binary_at(
        &mut self,
        op: &'static str,
        l: Expr,
        r: Expr,
        src: Option<(&ast::Expr, &ast::Expr)>,
    ) -> PgResult<Expr> {
        let (mut lt, mut rt) = (l.ty(), r.ty());
        if op == "||" && (lt.is_array() || rt.is_array() || lt.is_vector() || rt.is_vector()) {
            return self.array_concat(l, r, src);
        }
        // String operators resolve untyped literals themselves ('l' || 1 is text || anynonarray).
        let string_op = matches!(op, "||" | "~~" | "!~~" | "~~*" | "!~~*");
        // PostgreSQL: an unknown literal against a known type is taken as that type.
        // A composite against an untyped literal is record op record, and the literal is
        // read as an anonymous record (which PostgreSQL cannot do either).
        if !string_op && matches!(lt, TypeId::Composite(_)) && rt == TypeId::Unknown {
            rt = TypeId::Record;
        } else if !string_op && matches!(rt, TypeId::Composite(_)) && lt == TypeId::Unknown {
            lt = TypeId::Record;
        }
        if string_op {
        } else if lt == TypeId::Unknown && rt != TypeId::Unknown {
            lt = rt;
        } else if rt == TypeId::Unknown && lt != TypeId::Unknown {
            rt = lt;
        } else if lt == TypeId::Unknown && rt == TypeId::Unknown {
            lt = TypeId::Text;
            rt = TypeId::Text;
        }
        // regclass is binary-coercible to oid and has no operators of its own.
        for t in [&mut lt, &mut rt] {
            if *t == TypeId::RegClass {
                *t = TypeId::Oid;
            }
        }
        let o = keel_types::ops::resolve_binary(op, lt, rt).ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!(
                    "operator does not exist: {} {op} {}",
                    self.catalog.type_name(l.ty()),
                    self.catalog.type_name(r.ty())
                ),
            )
            .with_hint("No operator matches the given name and argument types. You might need to add explicit type casts.")
        });
        let o = match (o, src) {
            (Ok(o), _) => o,
            (Err(err), Some((left, right))) => {
                return Err(match self.operator_position(left, right) {
                    Some(p) => err.or_position(p),
                    None => err,
                });
            }
            (Err(err), None) => return Err(err),
        };
        let (l, r) = self.coerce_operands(l, r, (o.left, o.right), src)?;
        // Folded only as a whole: a cast of a constant under an operator that does not fold
        // stays as written (PostgreSQL's cross-type operators take such constants uncast).
        // Only operators written in the query fold: callers that build an operator to take
        // it apart (IS DISTINCT FROM, NULLIF, IN lists) get it whole.
        if src.is_some()
            && let Some(folded) = fold::fold_binary(o.func, &l, &r, [o.left, o.right, o.result])
        {
            return Ok(folded);
        }
        Ok(Expr::Bin {
            op,
            f: o.func,
            l: Box::new(l),
            r: Box::new(r),
            ty: o.result,
        })
    }

    /// Converts an operator's operands to its argument types `to`; an operand written in
    /// the query (`src`) that does not convert is reported at that operand.
    pub(super) fn coerce_operands(
        &mut self,
        l: Expr,
        r: Expr,
        to: (TypeId, TypeId),
        src: Option<(&ast::Expr, &ast::Expr)>,
    ) -> PgResult<(Expr, Expr)> {
        let record = to.0 == TypeId::Record || to.1 == TypeId::Record;
        let at = |b: &Self, err: PgError, operand: Option<&ast::Expr>| match operand {
            // record_in refusing an untyped literal is placed at it, as PostgreSQL does.
            Some(e) if record && err.code == sqlstate::FEATURE_NOT_SUPPORTED => {
                match b.position(e.span()) {
                    Some(p) => err.or_position(p),
                    None => err,
                }
            }
            Some(e) => b.at(err, e.span()),
            None => err,
        };
        let l = self
            .coerce_in(l, SqlType::new(to.0), CastContext::Implicit)
            .map_err(|err| at(self, err, src.map(|s| s.0)))?;
        let r = self
            .coerce_in(r, SqlType::new(to.1), CastContext::Implicit)
            .map_err(|err| at(self, err, src.map(|s| s.1)))?;
        Ok((l, r))
    }

    #[inline(never)]
    fn unary(&mut self, op: &str, a: Expr) -> PgResult<Expr> {
        // An untyped literal: where every candidate is numeric (@, |/, ||/) PostgreSQL takes
        // the category's preferred type, float8; - and ~ also have interval, bit or inet
        // candidates, and it refuses to choose.
        let t = match a.ty() {
            TypeId::Unknown if matches!(op, "@" | "|/" | "||/") => TypeId::Float8,
            TypeId::Unknown => {
                return Err(PgError::new(
                    sqlstate::AMBIGUOUS_FUNCTION,
                    format!("operator is not unique: {op} unknown"),
                )
                .with_hint("Could not choose a best candidate operator. You might need to add explicit type casts."));
            }
            t => t,
        };
        let (arg_ty, res, f) = keel_types::ops::resolve_unary(op, t).ok_or_else(|| {
            PgError::new(
                sqlstate::UNDEFINED_FUNCTION,
                format!("operator does not exist: {op} {}", a.ty().name()),
            )
            .with_hint("No operator matches the given name and argument type. You might need to add an explicit type cast.")
        })?;
        let a = self.coerce_in(a, SqlType::new(arg_ty), CastContext::Implicit)?;
        Ok(Expr::Un {
            f,
            arg: Box::new(a),
            ty: res,
        })
    }

    /// Coerces `items` to their common type (`keel_types::common_type`), listed in
    /// PostgreSQL's order of significance; `what` names the construct in the 42804 error.
    #[inline(never)]
    fn unify(&mut self, items: Vec<Expr>, what: &str) -> PgResult<(TypeId, Vec<Expr>)> {
        let ty = keel_types::common_type::common_type_of(what, items.iter().map(Expr::ty))?;
        let mut out = Vec::with_capacity(items.len());
        for e in items {
            out.push(self.coerce_in(e, SqlType::new(ty), CastContext::Implicit)?);
        }
        Ok((ty, out))
    }

    /// Final parameter types: unresolved ones default to text, as PostgreSQL does for
    /// parameters that reach the output unconstrained.
    pub fn finish_params(&self) -> Vec<TypeId> {
        self.params
            .iter()
            .map(|t| {
                if *t == TypeId::Unknown {
                    TypeId::Text
                } else {
                    *t
                }
            })
            .collect()
    }
}

/// The PostgreSQL operator name of a binary operator.
pub fn binary_op_name(op: &ast::BinaryOperator) -> PgResult<&'static str> {
    use ast::BinaryOperator as B;
    Ok(match op {
        B::Plus => "+",
        B::Minus => "-",
        B::Multiply => "*",
        B::Divide => "/",
        B::Modulo => "%",
        B::StringConcat => "||",
        B::Gt => ">",
        B::Lt => "<",
        B::GtEq => ">=",
        B::LtEq => "<=",
        B::Eq => "=",
        B::NotEq => "<>",
        B::BitwiseAnd => "&",
        B::BitwiseOr => "|",
        B::PGBitwiseXor => "#",
        B::PGExp => "^",
        B::PGBitwiseShiftLeft => "<<",
        B::PGBitwiseShiftRight => ">>",
        B::AtArrow => "@>",
        B::ArrowAt => "<@",
        B::PGOverlap => "&&",
        B::PGRegexMatch => "~",
        B::PGRegexIMatch => "~*",
        B::PGRegexNotMatch => "!~",
        B::PGRegexNotIMatch => "!~*",
        other => return Err(PgError::unsupported(format!("operator {other}"))),
    })
}

/// sqlparser lets a prefix sign take in `^` (`- 5 ^ 2` as `-(5 ^ 2)`), but in PostgreSQL's
/// grammar unary minus and plus bind tighter than `^`: `(-5) ^ 2`. Pushes the sign down the
/// left spine of the (left-associative) `^` chain; None when the operand is not such a chain.
fn sign_binds_tighter(op: &ast::UnaryOperator, e: &ast::Expr) -> Option<ast::Expr> {
    use ast::UnaryOperator as U;
    if !matches!(op, U::Minus | U::Plus) {
        return None;
    }
    let ast::Expr::BinaryOp {
        left,
        op: ast::BinaryOperator::PGExp,
        right,
    } = e
    else {
        return None;
    };
    let signed = sign_binds_tighter(op, left).unwrap_or_else(|| ast::Expr::UnaryOp {
        op: *op,
        expr: left.clone(),
    });
    Some(ast::Expr::BinaryOp {
        left: Box::new(signed),
        op: ast::BinaryOperator::PGExp,
        right: right.clone(),
    })
}
