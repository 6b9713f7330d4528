//! Calls of user-defined functions (pg_proc rows in the catalog): overload choice among the
//! functions of one name, named arguments (`f(a => 1)`), DEFAULTs for arguments left out.
//!
//! A candidate fits when every given argument lands on one input parameter (positional ones
//! first, then by name), every parameter left over has a DEFAULT, and each argument's type
//! is the parameter's or casts to it implicitly. Among fitting candidates the one with the
//! most exactly matching types wins; a tie is 42725, as PostgreSQL's resolution ends.

use super::{Binder, Scope};
use crate::expr::{Expr, Special, UserCall};
use keel_catalog::{ArgMode, Catalog, FunctionDef};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::TypeId;
use keel_types::cast::{CastContext, can_cast};
use sqlparser::tokenizer::Span;
use std::sync::Arc;

use super::polymorphic::{self, Binding};
use super::types::coerce;
use keel_types::SqlType;

/// Where each input parameter's value comes from: `Some(k)` = the k-th given argument
/// (positional ones, then named ones), `None` = its DEFAULT.
pub(crate) type Slots = Vec<Option<usize>>;

/// How well a candidate fits: exactly matching argument types, then unknown literals
/// landing on text (the preferred type of the string category PostgreSQL resolves them to),
/// then (1) not being a VARIADIC function's expanded form, which PostgreSQL prefers a plain
/// function of the same argument types to.
type Score = (usize, usize, usize);

fn fit(
    f: &FunctionDef,
    tys: &[TypeId],
    positional: usize,
    named: &[String],
) -> Option<(Score, Slots, Option<Binding>)> {
    let ins: Vec<_> = f.input_args().collect();
    if tys.len() > ins.len() {
        return None;
    }
    let mut slots: Slots = vec![None; ins.len()];
    for (i, s) in slots.iter_mut().enumerate().take(positional) {
        *s = Some(i);
    }
    for (j, n) in named.iter().enumerate() {
        let p = ins
            .iter()
            .position(|a| a.name.as_deref() == Some(n.as_str()))?;
        if slots[p].is_some() {
            return None;
        }
        slots[p] = Some(positional + j);
    }
    let mut exact = 0;
    let mut unknown_text = 0;
    let mut polymorphic = Vec::new();
    for (s, a) in slots.iter().zip(&ins) {
        match s {
            None if a.default.is_none() => return None,
            None => {}
            Some(k) => {
                let t = tys[*k];
                if a.ty.id.is_polymorphic() {
                    polymorphic.push((a.ty.id, t));
                } else if t == a.ty.id {
                    exact += 1;
                } else if t == TypeId::Unknown && a.ty.id == TypeId::Text {
                    unknown_text += 1;
                } else if t != TypeId::Unknown && !can_cast(t, a.ty.id, CastContext::Implicit) {
                    return None;
                }
            }
        }
    }
    let binding = match polymorphic.is_empty() {
        true => None,
        false => Some(polymorphic::bind(&polymorphic)?),
    };
    Some(((exact, unknown_text, 1), slots, binding))
}

/// How many input parameters come before `f`'s VARIADIC one (its number of inputs when it
/// has none).
fn variadic_at(f: &FunctionDef) -> usize {
    let ins: Vec<_> = f.input_args().collect();
    ins.iter()
        .position(|a| a.mode == ArgMode::Variadic)
        .unwrap_or(ins.len())
}

/// A VARIADIC function as a call of `positional` arguments sees it, as PostgreSQL expands
/// it: the variadic array parameter becomes one parameter of its element type per extra
/// argument (at least one; anyarray's element is anyelement). None when `f` has no VARIADIC
/// parameter or the call cannot take that form (too few positional arguments, or named
/// ones).
fn variadic_form(f: &FunctionDef, positional: usize, named: &[String]) -> Option<FunctionDef> {
    let ins: Vec<_> = f.input_args().cloned().collect();
    let at = ins.iter().position(|a| a.mode == ArgMode::Variadic)?;
    if !named.is_empty() || positional < ins.len() {
        return None;
    }
    let elem = match ins[at].ty.id {
        TypeId::AnyArray => TypeId::AnyElement,
        TypeId::AnyCompatibleArray => TypeId::AnyCompatible,
        t => t.elem()?,
    };
    let mut expanded = f.clone();
    expanded.args = ins[..at].to_vec();
    expanded
        .args
        .extend((at..positional).map(|_| keel_catalog::FunctionArg {
            name: None,
            ty: SqlType::new(elem),
            mode: ArgMode::In,
            default: None,
        }));
    Some(expanded)
}

/// The arguments of a call that `choose` matched to a VARIADIC function's expanded form:
/// those from the variadic parameter's position on become one `ARRAY[...]` of its element
/// type (`def` is the chosen, specialized definition).
pub(crate) fn pack_variadic(
    def: &FunctionDef,
    given: &mut Vec<Expr>,
    params: &mut [TypeId],
) -> PgResult<()> {
    let Some(a) = def.input_args().find(|a| a.mode == ArgMode::Variadic) else {
        return Ok(());
    };
    let at = variadic_at(def);
    let ty = a.ty.id;
    let elem = ty
        .elem()
        .ok_or_else(|| PgError::internal("VARIADIC parameter of a non-array type"))?;
    let elems = given
        .split_off(at.min(given.len()))
        .into_iter()
        .map(|e| coerce(e, SqlType::new(elem), CastContext::Implicit, params))
        .collect::<PgResult<Vec<_>>>()?;
    given.push(Expr::Array(Box::new(crate::expr::ArrayExpr::Ctor {
        elems,
        ty,
        nested: false,
    })));
    Ok(())
}

/// Takes the `VARIADIC arr` argument of a call (the parser's `"?var" => arr`, see
/// keel_parser::variadic_arg) out of the named ones and makes it the last positional one.
pub(crate) fn explicit_variadic<T>(args: &mut Vec<T>, named: &mut Vec<(String, T)>) -> bool {
    match named.last() {
        Some((n, _)) if n == keel_parser::variadic_arg::MARKER => {
            if let Some((_, e)) = named.pop() {
                args.push(e);
            }
            true
        }
        _ => false,
    }
}

/// `f` with its polymorphic parameter and result types replaced by what `b` binds them to:
/// the definition a call plans and runs. Its signature stays the declared one.
fn specialize(f: &FunctionDef, b: &Binding) -> PgResult<FunctionDef> {
    let mut def = f.clone();
    for a in &mut def.args {
        a.ty = SqlType::new(b.concrete(a.ty.id)?);
    }
    if def.ret.id.is_polymorphic() {
        def.ret = SqlType::new(b.concrete(def.ret.id)?);
    }
    Ok(def)
}

fn shown_args(tys: &[TypeId], positional: usize, named: &[String]) -> String {
    let mut list: Vec<String> = tys[..positional]
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    for (j, n) in named.iter().enumerate() {
        list.push(format!("{n} => {}", tys[positional + j].name()));
    }
    list.join(", ")
}

/// The overload of `name` that the given arguments (`positional` of them, then the
/// `named` ones) choose, with where each of its input parameters takes its value from.
/// `explicit`: the last positional argument was written `VARIADIC arr`, so only VARIADIC
/// functions fit, taking it as their variadic array.
pub(crate) fn choose(
    catalog: &Catalog,
    name: &str,
    given: &[Expr],
    positional: usize,
    named: &[String],
    explicit: bool,
) -> PgResult<(Arc<FunctionDef>, Slots)> {
    let tys: Vec<TypeId> = given.iter().map(Expr::ty).collect();
    let mut best: Option<(Score, Arc<FunctionDef>, Slots, Option<Binding>)> = None;
    let mut tied = false;
    for f in catalog.functions_named(name) {
        let is_variadic = f.args.iter().any(|a| a.mode == ArgMode::Variadic);
        let fitted = match variadic_form(f, positional, named) {
            _ if explicit && !is_variadic => None,
            _ if explicit => fit(f, &tys, positional, named),
            Some(expanded) => {
                fit(&expanded, &tys, positional, named).map(|((e, u, _), mut slots, b)| {
                    let score = (e, u, 0);
                    // The variadic parameter takes the packed array, at the first extra argument.
                    slots.truncate(expanded.args.len() - (positional - variadic_at(f)));
                    slots.push(Some(variadic_at(f)));
                    (score, slots, b)
                })
            }
            None if is_variadic => None,
            None => fit(f, &tys, positional, named),
        };
        let Some((score, slots, binding)) = fitted else {
            continue;
        };
        match &best {
            Some((s, ..)) if *s > score => {}
            Some((s, ..)) if *s == score => tied = true,
            _ => {
                tied = false;
                best = Some((score, f.clone(), slots, binding));
            }
        }
    }
    let shown = shown_args(&tys, positional, named);
    let Some((_, def, slots, binding)) = best else {
        return Err(PgError::new(
            sqlstate::UNDEFINED_FUNCTION,
            format!("function {name}({shown}) does not exist"),
        )
        .with_hint(
            "No function matches the given name and argument types. You might need to add explicit type casts.",
        ));
    };
    if tied {
        return Err(PgError::new(
            sqlstate::AMBIGUOUS_FUNCTION,
            format!("function {name}({shown}) is not unique"),
        )
        .with_hint(
            "Could not choose a best candidate function. You might need to add explicit type casts.",
        ));
    }
    match binding {
        Some(b) => Ok((Arc::new(specialize(&def, &b)?), slots)),
        None => Ok((def, slots)),
    }
}

impl Binder<'_> {
    /// Whether `name` could be a user-defined function (the catalog has one of that name).
    pub(crate) fn has_user_function(&self, name: &str) -> bool {
        self.catalog.functions_named(name).next().is_some()
    }

    /// A call's arguments in the function's parameter order: those given (by position or name,
    /// `slots` from `choose`), the DEFAULTs of the others, each coerced to its parameter type.
    /// `spans` are the given arguments' places in the statement, where a literal that does
    /// not convert to its parameter's type is reported.
    pub(crate) fn call_args(
        &mut self,
        def: &FunctionDef,
        slots: &[Option<usize>],
        given: Vec<Expr>,
        spans: &[Span],
    ) -> PgResult<Vec<Expr>> {
        let mut given: Vec<Option<Expr>> = given.into_iter().map(Some).collect();
        let ins: Vec<_> = def.input_args().cloned().collect();
        let mut call_args = Vec::with_capacity(ins.len());
        for (slot, a) in slots.iter().zip(&ins) {
            let e = match slot {
                Some(k) => given[*k]
                    .take()
                    .ok_or_else(|| PgError::internal("argument used twice"))?,
                None => self.default_arg(a.default.as_deref().unwrap_or("NULL"))?,
            };
            let e = self
                .coerce_in(e, a.ty, CastContext::Implicit)
                .map_err(|err| match slot.and_then(|k| spans.get(k)) {
                    Some(span) => self.at(err, *span),
                    None => err,
                })?;
            call_args.push(e);
        }
        Ok(call_args)
    }

    /// A call of the user-defined function `name`: positional `args` then `named` ones.
    pub(crate) fn user_function(
        &mut self,
        name: &str,
        args: Vec<Expr>,
        named: Vec<(String, Expr)>,
        span: Span,
        spans: &[Span],
    ) -> PgResult<Expr> {
        let (mut args, mut named) = (args, named);
        let explicit = explicit_variadic(&mut args, &mut named);
        if explicit && !self.has_user_function(name) {
            return Err(PgError::unsupported(
                "VARIADIC arguments of built-in functions",
            ));
        }
        let positional = args.len();
        let names: Vec<String> = named.iter().map(|(n, _)| n.clone()).collect();
        let mut given: Vec<Expr> = args;
        given.extend(named.into_iter().map(|(_, e)| e));
        let (def, slots) = choose(self.catalog, name, &given, positional, &names, explicit)?;
        if !explicit {
            pack_variadic(&def, &mut given, &mut self.params)?;
        }
        if def.set_returning {
            return self.user_set_function(def, &slots, given, span, spans);
        }
        let call_args = self.call_args(&def, &slots, given, spans)?;
        // A result of several columns is one composite value here: of the row type the
        // function returns, else an anonymous record.
        let ty = match (def.ret.id, def.row_type) {
            (TypeId::Record, Some(oid)) => TypeId::Composite(oid),
            (t, _) => t,
        };
        let call = UserCall {
            def,
            catalog: Arc::new(self.catalog.clone()),
            body: Default::default(),
        };
        Ok(Expr::Special(
            Special::UserFunction(Arc::new(call), call_args),
            ty,
        ))
    }

    /// A set-returning user function in an expression: in the select list, one of the
    /// projection's set functions, its rows run by the language (a SQL body's query, a
    /// PL/pgSQL body's RETURN NEXT / RETURN QUERY rows).
    fn user_set_function(
        &mut self,
        def: Arc<FunctionDef>,
        slots: &[Option<usize>],
        given: Vec<Expr>,
        span: Span,
        spans: &[Span],
    ) -> PgResult<Expr> {
        let width = self.catalog.result_columns(&def).len().max(1);
        if width > 1 || def.ret.id == TypeId::Record {
            return Err(PgError::unsupported(
                "set-returning functions of several columns outside FROM",
            ));
        }
        let mut nested = false;
        for e in &given {
            let mut todo = vec![e];
            while let Some(x) = todo.pop() {
                nested |= matches!(x, Expr::Special(Special::SetValue(..), _));
                x.for_each_child(&mut |c| todo.push(c));
            }
        }
        if nested {
            return Err(PgError::unsupported(
                "a set-returning call in the arguments of a set-returning user function",
            ));
        }
        let args = self.call_args(&def, slots, given, spans)?;
        let ty = def.ret.id;
        let call = UserCall {
            def,
            catalog: Arc::new(self.catalog.clone()),
            body: Default::default(),
        };
        let tf = crate::srf::TableFunc {
            func: crate::srf::SetFunc::User,
            args,
            ty,
            user: Some((Arc::new(call), 1)),
        };
        self.place_set_function(tf, "function", span)
    }

    /// A parameter's DEFAULT, bound where the call leaves it out.
    fn default_arg(&mut self, text: &str) -> PgResult<Expr> {
        let dialect = keel_parser::dialect::KeelDialect;
        let e = sqlparser::parser::Parser::new(&dialect)
            .try_with_sql(text)
            .and_then(|mut p| p.parse_expr())
            .map_err(|e| PgError::new(sqlstate::SYNTAX_ERROR, e.to_string()))?;
        self.expr(&e, &Scope::default(), &mut None)
    }
}
