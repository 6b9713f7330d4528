//! Set-returning SQL functions in FROM, inlined as PostgreSQL inlines them: the body (one
//! SELECT) with each parameter reference replaced by its argument becomes a subquery in
//! FROM, planned with the statement. The replacement is on tokens: `$n` and unqualified
//! words naming a parameter (as the body's own binding would resolve them when no column
//! has the name) become `(argument)::type`; quoted strings and comments are left alone.

use super::{Binder, Scope, ScopeCol, fold};
use crate::expr::Expr;
use crate::query::Rel;
use keel_catalog::{FuncLanguage, FunctionDef};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::cast::CastContext;
use keel_types::{SqlType, TypeId};
use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

/// The body of `def` with parameter references replaced by `args` (SQL text per input
/// parameter, in order).
fn substitute(def: &FunctionDef, args: &[String]) -> PgResult<String> {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, &def.body)
        .tokenize()
        .map_err(|e| PgError::new(sqlstate::SYNTAX_ERROR, e.to_string()))?;
    let names: Vec<Option<&str>> = def.input_args().map(|a| a.name.as_deref()).collect();
    let types: Vec<String> = def
        .input_args()
        .map(|a| a.ty.id.name().to_string())
        .collect();
    let mut out = String::with_capacity(def.body.len());
    let mut after_period = false;
    for t in &tokens {
        let param = match t {
            Token::Placeholder(p) => p
                .strip_prefix('$')
                .and_then(|n| n.parse::<usize>().ok())
                .and_then(|n| n.checked_sub(1)),
            Token::Word(w) if w.quote_style.is_none() && !after_period => {
                let v = w.value.to_lowercase();
                names.iter().position(|n| *n == Some(v.as_str()))
            }
            _ => None,
        };
        match param.filter(|&i| i < args.len()) {
            // Parenthesized whole: `x[1]` must not become a cast to `type[][1]`.
            Some(i) => out.push_str(&format!("(({})::{})", args[i], types[i])),
            None => out.push_str(&t.to_string()),
        }
        if !matches!(t, Token::Whitespace(_)) {
            after_period = matches!(t, Token::Period);
        }
    }
    Ok(out.trim().trim_end_matches(';').to_string())
}

impl Binder<'_> {
    /// `name(args)` in FROM when `name` is a user-defined set-returning function; None when
    /// no user function has the name.
    pub(crate) fn user_srf_in_from(
        &mut self,
        name: &str,
        args: &[ast::FunctionArg],
        alias: Option<&ast::TableAlias>,
        written: &ast::ObjectName,
    ) -> PgResult<Option<(Rel, Scope)>> {
        if !self.has_user_function(name) {
            return Ok(None);
        }
        let mut positional = Vec::new();
        let mut named = Vec::new();
        for a in args {
            match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => positional.push(e),
                ast::FunctionArg::Named {
                    name,
                    arg: ast::FunctionArgExpr::Expr(e),
                    ..
                }
                | ast::FunctionArg::ExprNamed {
                    name: ast::Expr::Identifier(name),
                    arg: ast::FunctionArgExpr::Expr(e),
                    ..
                } => named.push((fold(name), e)),
                _ => return Err(PgError::unsupported("this function argument in FROM")),
            }
        }
        let explicit = super::userfunc::explicit_variadic(&mut positional, &mut named);
        let mut bound = Vec::new();
        for e in positional.iter().chain(named.iter().map(|(_, e)| e)) {
            bound.push(self.expr(e, &Scope::default(), &mut None)?);
        }
        let names: Vec<String> = named.iter().map(|(n, _)| n.clone()).collect();
        let (def, slots) = super::userfunc::choose(
            self.catalog,
            name,
            &bound,
            positional.len(),
            &names,
            explicit,
        )
        .map_err(|e| self.at(e, ast::Spanned::span(written)))?;
        // The declared result: named columns (OUT, INOUT, RETURNS TABLE, a table's row type),
        // or one column of
        // the result type named after the function (or its alias).
        let columns = self.catalog.result_columns(&def);
        let declared: Vec<(Option<String>, SqlType)> = match columns.first() {
            Some(_) => columns,
            None if def.ret.id == TypeId::Record => {
                let err = PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    "a column definition list is required for functions returning \"record\"",
                );
                return Err(self.at(err, ast::Spanned::span(written)));
            }
            None => vec![(None, def.ret)],
        };
        let variadic = def
            .args
            .iter()
            .any(|a| a.mode == keel_catalog::ArgMode::Variadic);
        // A VARIADIC call's packed array has no text of its own to inline.
        let inlined = if def.language == FuncLanguage::Sql && !variadic {
            let texts: Vec<String> = positional
                .iter()
                .map(|e| e.to_string())
                .chain(named.iter().map(|(_, e)| e.to_string()))
                .collect();
            let ins: Vec<_> = def.input_args().collect();
            let mut args_text = Vec::with_capacity(ins.len());
            for (slot, a) in slots.iter().zip(&ins) {
                args_text.push(match slot {
                    Some(k) => texts[*k].clone(),
                    None => a.default.clone().unwrap_or_else(|| "NULL".into()),
                });
            }
            let text = substitute(&def, &args_text)?;
            let mut stmts =
                sqlparser::parser::Parser::parse_sql(&keel_parser::dialect::KeelDialect, &text)
                    .map_err(|e| PgError::new(sqlstate::SYNTAX_ERROR, e.to_string()))?;
            // One SELECT is inlined; a body of several statements runs when the statement
            // does, as a procedural language's.
            match (stmts.pop(), stmts.is_empty()) {
                (Some(ast::Statement::Query(q)), true) => {
                    let sub = self.query(&q)?;
                    Some(self.function_result(&def, sub, &declared)?)
                }
                _ => None,
            }
        } else {
            None
        };
        let root = if let Some(rel) = inlined {
            rel
        } else {
            // A function scan whose rows come from running the body (a SQL function's
            // statements, or its language's handler) when the statement runs.
            let spans: Vec<_> = positional
                .iter()
                .chain(named.iter().map(|(_, e)| e))
                .map(|e| ast::Spanned::span(*e))
                .collect();
            let mut bound = bound;
            if !explicit {
                super::userfunc::pack_variadic(&def, &mut bound, &mut self.params)?;
            }
            let args = self.call_args(&def, &slots, bound, &spans)?;
            let call = crate::expr::UserCall {
                def: def.clone(),
                catalog: std::sync::Arc::new(self.catalog.clone()),
                body: Default::default(),
            };
            Rel::Function {
                funcs: vec![crate::srf::TableFunc {
                    func: crate::srf::SetFunc::User,
                    args,
                    ty: declared.first().map_or(TypeId::Void, |(_, t)| t.id),
                    user: Some((std::sync::Arc::new(call), declared.len())),
                }],
                ordinality: false,
            }
        };
        let qual = alias.map_or_else(|| name.to_string(), |a| fold(&a.name));
        let cols = declared
            .iter()
            .enumerate()
            .map(|(i, (declared_name, ty))| ScopeCol {
                qualifier: Some(qual.clone()),
                name: alias
                    .and_then(|a| a.columns.get(i))
                    .map(|c| fold(&c.name))
                    .or_else(|| declared_name.clone())
                    .unwrap_or_else(|| match alias {
                        Some(a) => fold(&a.name),
                        None => name.to_string(),
                    }),
                ty: ty.id,
                typmod: ty.typmod,
                table_oid: 0,
                attnum: 0,
                hidden: false,
            })
            .collect();
        Ok(Some((root, Scope { cols })))
    }

    /// The body's rows as the declared result columns: as many columns as declared, each
    /// converted with an assignment cast (PostgreSQL's check_sql_fn_retval).
    fn function_result(
        &mut self,
        def: &FunctionDef,
        sub: crate::query::Query,
        declared: &[(Option<String>, SqlType)],
    ) -> PgResult<Rel> {
        let mismatch = |detail: String| {
            PgError::new(
                sqlstate::INVALID_FUNCTION_DEFINITION,
                format!(
                    "return type mismatch in function declared to return {}",
                    def.ret.id.name()
                ),
            )
            .with_detail(detail)
        };
        if sub.columns.len() != declared.len() {
            let which = if sub.columns.len() > declared.len() {
                "many"
            } else {
                "few"
            };
            return Err(mismatch(format!(
                "Final statement returns too {which} columns."
            )));
        }
        if sub
            .columns
            .iter()
            .zip(declared)
            .all(|(c, (_, t))| c.ty == t.id)
        {
            return Ok(sub.root);
        }
        let mut exprs = Vec::with_capacity(declared.len());
        for (i, (c, (_, t))) in sub.columns.iter().zip(declared).enumerate() {
            let e = self
                .coerce_in(Expr::Col(i, c.ty), *t, CastContext::Assignment)
                .map_err(|_| {
                    mismatch(format!(
                        "Final statement returns {} instead of {} at column {}.",
                        c.ty.name(),
                        t.id.name(),
                        i + 1
                    ))
                })?;
            exprs.push(e);
        }
        Ok(Rel::Project {
            input: Box::new(sub.root),
            exprs,
            srf: None,
        })
    }
}
