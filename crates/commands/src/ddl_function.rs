//! CREATE [OR REPLACE] FUNCTION and DROP FUNCTION: pg_proc rows in the catalog's function map.
//!
//! A function is keyed by its signature (name and input argument types), so overloads
//! coexist. The body is kept as text: SQL bodies are planned when first called (see
//! keel-executor's `sqlfunc`), PL/pgSQL bodies are parsed here so syntax errors show at
//! CREATE, as PostgreSQL reports them.

use keel_analyzer::bind::types;
use keel_catalog::{ArgMode, Catalog, FuncLanguage, FuncVolatility, FunctionArg, FunctionDef};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::{SqlType, TypeId};
use sqlparser::ast;
use std::sync::Arc;

fn arg_mode(m: Option<&ast::ArgMode>) -> ArgMode {
    match m {
        None | Some(ast::ArgMode::In) => ArgMode::In,
        Some(ast::ArgMode::Out) => ArgMode::Out,
        Some(ast::ArgMode::InOut) => ArgMode::InOut,
        Some(ast::ArgMode::Variadic) => ArgMode::Variadic,
    }
}

/// A parameter or result type: a column type, or a polymorphic pseudo-type.
fn sql_type(t: &ast::DataType, cat: &Catalog) -> PgResult<SqlType> {
    let name = t.to_string().to_ascii_lowercase();
    let id = match name.trim_start_matches("pg_catalog.") {
        "anyelement" => TypeId::AnyElement,
        "anyarray" => TypeId::AnyArray,
        "anynonarray" => TypeId::AnyNonArray,
        "anycompatible" => TypeId::AnyCompatible,
        "anycompatiblearray" => TypeId::AnyCompatibleArray,
        "anycompatiblenonarray" => TypeId::AnyCompatibleNonArray,
        "anyrange" | "anycompatiblerange" | "anymultirange" | "anycompatiblemultirange" => {
            return Err(PgError::unsupported("range types"));
        }
        "anyenum" => return Err(PgError::unsupported("enum types")),
        _ => return types::type_from_name_in(&t.to_string(), cat),
    };
    Ok(SqlType::new(id))
}

/// A RETURNS type: any column type, the pseudo-types `void`, `record` and `trigger`, or a
/// table's name, whose row type it is (`record`, with the table's oid in `row_type`).
fn return_type(
    t: &ast::DataType,
    cat: &Catalog,
    row_type: &mut Option<keel_common::Oid>,
) -> PgResult<SqlType> {
    let name = t.to_string().to_ascii_lowercase();
    match name.trim_start_matches("pg_catalog.") {
        "void" => Ok(SqlType::new(TypeId::Void)),
        "record" => Ok(SqlType::new(TypeId::Record)),
        "trigger" => Ok(SqlType::new(TypeId::Trigger)),
        "event_trigger" => Err(PgError::unsupported("event trigger functions")),
        // A composite type's name (a table's row type or a CREATE TYPE type): a result of
        // several columns, whose shape is the type's (`row_type`).
        _ => match sql_type(t, cat)? {
            SqlType {
                id: TypeId::Composite(oid),
                ..
            } => {
                *row_type = Some(oid);
                Ok(SqlType::new(TypeId::Record))
            }
            other => Ok(other),
        },
    }
}

/// The result type the OUT and INOUT parameters give: the one parameter's type, or `record`
/// for several; None without any.
fn out_type(args: &[FunctionArg]) -> Option<SqlType> {
    let mut outs = args
        .iter()
        .filter(|a| matches!(a.mode, ArgMode::Out | ArgMode::InOut));
    let first = outs.next()?;
    Some(match outs.next() {
        None => first.ty,
        Some(_) => SqlType::new(TypeId::Record),
    })
}

/// The text between the quotes of `AS '...'` / `AS $$...$$`.
fn body_text(b: &ast::CreateFunctionBody) -> PgResult<String> {
    let e = match b {
        ast::CreateFunctionBody::AsBeforeOptions { body, .. } => body,
        ast::CreateFunctionBody::AsAfterOptions(e) => e,
        // The SQL-standard `RETURN expr` body (PostgreSQL 14): the query `SELECT expr`.
        ast::CreateFunctionBody::Return(e) => return Ok(format!("SELECT {e}")),
        _ => return Err(PgError::unsupported("this form of function body")),
    };
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => Ok(s.clone()),
            ast::Value::DollarQuotedString(d) => Ok(d.value.clone()),
            _ => Err(PgError::unsupported("this form of function body")),
        },
        _ => Err(PgError::unsupported("this form of function body")),
    }
}

/// The input argument types of a parsed argument list (OUT arguments are not part of it).
fn input_types(args: &[ast::OperateFunctionArg], cat: &Catalog) -> PgResult<Vec<SqlType>> {
    let mut out = Vec::new();
    for a in args {
        if !matches!(arg_mode(a.mode.as_ref()), ArgMode::Out) {
            out.push(sql_type(&a.data_type, cat)?);
        }
    }
    Ok(out)
}

pub(crate) fn create_function(
    cf: &ast::CreateFunction,
    cat: &mut Catalog,
    settings: &keel_common::Settings,
    notices: &mut Vec<PgError>,
) -> PgResult<String> {
    let name = super::ddl::plain_name(&cf.name)?;
    let mut args = Vec::new();
    let mut seen_default = false;
    for a in cf.args.iter().flatten() {
        let mode = arg_mode(a.mode.as_ref());
        let default = a.default_expr.as_ref().map(|e| e.to_string());
        if default.is_some() {
            seen_default = true;
        } else if seen_default && mode != ArgMode::Out {
            return Err(PgError::new(
                sqlstate::INVALID_FUNCTION_DEFINITION,
                "input parameters after one with a default value must also have defaults",
            ));
        }
        let ty = sql_type(&a.data_type, cat)?;
        if mode == ArgMode::Variadic && !(ty.id.is_array() || ty.id == TypeId::AnyArray) {
            return Err(PgError::new(
                sqlstate::INVALID_FUNCTION_DEFINITION,
                "VARIADIC parameter must be an array",
            ));
        }
        if mode != ArgMode::Out
            && args
                .iter()
                .any(|a: &FunctionArg| a.mode == ArgMode::Variadic)
        {
            return Err(PgError::new(
                sqlstate::INVALID_FUNCTION_DEFINITION,
                "VARIADIC parameter must be the last input parameter",
            ));
        }
        args.push(FunctionArg {
            name: a.name.as_ref().map(|n| n.value.to_lowercase()),
            ty,
            mode,
            default,
        });
    }
    let mut row_type = None;
    let (ret, set_returning) = match &cf.return_type {
        Some(ast::FunctionReturnType::DataType(ast::DataType::Table(Some(cols)))) => {
            if args
                .iter()
                .any(|a| matches!(a.mode, ArgMode::Out | ArgMode::InOut))
            {
                return Err(PgError::new(
                    sqlstate::INVALID_FUNCTION_DEFINITION,
                    "OUT and INOUT arguments aren't allowed in TABLE functions",
                ));
            }
            for c in cols {
                args.push(FunctionArg {
                    name: Some(c.name.value.to_lowercase()),
                    ty: sql_type(&c.data_type, cat)?,
                    mode: ArgMode::Table,
                    default: None,
                });
            }
            match cols.as_slice() {
                [_] => (args[args.len() - 1].ty, true),
                _ => (SqlType::new(TypeId::Record), true),
            }
        }
        Some(ast::FunctionReturnType::DataType(t)) => (return_type(t, cat, &mut row_type)?, false),
        Some(ast::FunctionReturnType::SetOf(t)) => (return_type(t, cat, &mut row_type)?, true),
        None => match out_type(&args) {
            Some(t) => (t, false),
            None => {
                return Err(PgError::new(
                    sqlstate::INVALID_FUNCTION_DEFINITION,
                    "function result type must be specified",
                ));
            }
        },
    };
    // OUT parameters decide the result type; a RETURNS clause must agree with them.
    if let Some(t) = out_type(&args)
        && t.id != ret.id
    {
        return Err(PgError::new(
            sqlstate::INVALID_FUNCTION_DEFINITION,
            format!(
                "function result type must be {} because of OUT parameters",
                t.id.name()
            ),
        ));
    }
    // RETURN expr, or BEGIN ATOMIC ... END (keel_parser::atomic_body makes it a string).
    let standard_body = match &cf.function_body {
        Some(ast::CreateFunctionBody::Return(_)) => true,
        Some(
            ast::CreateFunctionBody::AsBeforeOptions { body, .. }
            | ast::CreateFunctionBody::AsAfterOptions(body),
        ) => matches!(
            body,
            ast::Expr::Value(v) if matches!(&v.value, ast::Value::DollarQuotedString(d)
                if d.tag.as_deref() == Some(keel_parser::atomic_body::TAG))
        ),
        _ => false,
    };
    let language = match cf
        .language
        .as_ref()
        .map(|l| l.value.to_lowercase())
        .as_deref()
    {
        Some("sql") => FuncLanguage::Sql,
        Some("plpgsql") => FuncLanguage::Plpgsql,
        Some(other) => {
            return Err(PgError::new(
                sqlstate::UNDEFINED_OBJECT,
                format!("language \"{other}\" does not exist"),
            ));
        }
        // A SQL-standard body implies LANGUAGE sql.
        None if standard_body => FuncLanguage::Sql,
        None => {
            return Err(PgError::new(
                sqlstate::INVALID_FUNCTION_DEFINITION,
                "no language specified",
            ));
        }
    };
    if standard_body && language != FuncLanguage::Sql {
        return Err(PgError::new(
            sqlstate::INVALID_FUNCTION_DEFINITION,
            "inline SQL function body only valid for language SQL",
        ));
    }
    let body = match &cf.function_body {
        Some(b) => body_text(b)?,
        None => {
            return Err(PgError::new(
                sqlstate::INVALID_FUNCTION_DEFINITION,
                "no function body specified",
            ));
        }
    };
    if ret.id == TypeId::Trigger {
        if language == FuncLanguage::Sql {
            return Err(PgError::new(
                sqlstate::INVALID_FUNCTION_DEFINITION,
                "SQL functions cannot return type trigger",
            ));
        }
        if !args.is_empty() {
            return Err(PgError::new(
                sqlstate::INVALID_FUNCTION_DEFINITION,
                "trigger functions cannot have declared arguments",
            )
            .with_hint(
                "The arguments of the trigger can be accessed through TG_NARGS and TG_ARGV instead.",
            )
            .with_context_line(format!(
                "compilation of PL/pgSQL function \"{name}\" near line 1"
            )));
        }
    }
    let input_ids: Vec<TypeId> = args
        .iter()
        .filter(|a| matches!(a.mode, ArgMode::In | ArgMode::InOut | ArgMode::Variadic))
        .map(|a| a.ty.id)
        .collect();
    keel_analyzer::bind::polymorphic::check_result(ret.id, &input_ids)?;
    for a in &args {
        if matches!(a.mode, ArgMode::Out | ArgMode::InOut | ArgMode::Table) {
            keel_analyzer::bind::polymorphic::check_result(a.ty.id, &input_ids)?;
        }
    }
    if language == FuncLanguage::Plpgsql {
        let shape = crate::plpgsql_check::ResultShape {
            returns_set: set_returning,
            returns_void: ret.id == TypeId::Void,
            out_params: args
                .iter()
                .any(|a| matches!(a.mode, ArgMode::Out | ArgMode::InOut | ArgMode::Table)),
        };
        let parsed = keel_pl::parse_function_body_named(&body, &name)
            .and_then(|parsed| {
                crate::plpgsql_check::check_body(&parsed, &body, shape)?;
                Ok(parsed)
            })
            .map_err(|e| body_error(*e, &body, &name))?;
        let (warn, fail) = (settings.pl_checks(false), settings.pl_checks(true));
        if warn.shadowed_variables || fail.shadowed_variables {
            let params: Vec<String> = args.iter().filter_map(|a| a.name.clone()).collect();
            for s in crate::plpgsql_shadow::shadowed(&parsed, &params) {
                let report = s.report(&body);
                if fail.shadowed_variables {
                    return Err(report);
                }
                let mut w = report;
                w.severity = keel_common::Severity::Warning;
                notices.push(w);
            }
        }
    }
    let volatility = cf
        .behavior
        .as_ref()
        .map_or(FuncVolatility::Volatile, volatility);
    let strict = cf.called_on_null.as_ref().is_some_and(strict);
    let inputs = input_types(cf.args.as_deref().unwrap_or(&[]), cat)?;
    let signature = FunctionDef::signature_of(&name, &inputs);
    let existing = cat.functions.by_name(&signature).cloned();
    let oid = match &existing {
        Some(old) if cf.or_replace => {
            if old.ret != ret || old.set_returning != set_returning || old.row_type != row_type {
                return Err(PgError::new(
                    sqlstate::INVALID_FUNCTION_DEFINITION,
                    "cannot change return type of existing function",
                )
                .with_hint(format!("Use DROP FUNCTION {signature} first.")));
            }
            old.oid
        }
        Some(_) => {
            return Err(PgError::new(
                sqlstate::DUPLICATE_FUNCTION,
                format!("function \"{name}\" already exists with same argument types"),
            ));
        }
        None => cat.new_oid(),
    };
    let def = FunctionDef {
        oid,
        proname: name,
        schema: "public".into(),
        args,
        ret,
        set_returning,
        language,
        body,
        volatility,
        strict,
        leakproof: false,
        signature,
        row_type,
    };
    let def = Arc::new(def);
    cat.functions.insert(oid, def.clone());
    // A polymorphic function's body is planned per call, for the types the call binds (as
    // PostgreSQL's SQL validator, which only parses such a body).
    if def.language == FuncLanguage::Sql && !input_ids.iter().any(|t| t.is_polymorphic()) {
        keel_executor::sqlfunc::check_body(def, Arc::new(cat.clone()))?;
    }
    Ok("CREATE FUNCTION".into())
}

/// A PL/pgSQL body that does not compile. A placed error keeps its position as the internal
/// position in the body (the session moves it into the CREATE statement, see
/// `keel_sql::body_position`); an unplaced one names the line, as PostgreSQL's compile
/// callback does.
fn body_error(e: keel_pl::PlSyntaxError, body: &str, name: &str) -> PgError {
    let mut err = e.error;
    match err.position.take() {
        Some(p) => {
            let o = err.objects.get_or_insert_with(Default::default);
            o.internal_query = Some(body.to_string());
            o.internal_position = Some(p);
            err
        }
        None => err.with_context_line(format!(
            "compilation of PL/pgSQL function \"{name}\" near line {}",
            e.line
        )),
    }
}

pub(crate) fn drop_function(
    df: &ast::DropFunction,
    cat: &mut Catalog,
    notices: &mut Vec<keel_common::PgError>,
) -> PgResult<String> {
    for desc in &df.func_desc {
        let Some(f) = (match find(desc, cat)? {
            Ok(f) => Some(f),
            Err(missing) if df.if_exists => {
                notices.push(super::ddl::notice(format!(
                    "function {} does not exist, skipping",
                    missing.shown
                )));
                None
            }
            Err(missing) => return Err(missing.error()),
        }) else {
            continue;
        };
        let users = crate::ddl_trigger::triggers_calling(cat, f.oid);
        if !users.is_empty() {
            let shown = shown_signature(&f);
            let lines: Vec<String> = users
                .iter()
                .map(|(oid, rel, tg)| {
                    let kind = if cat.views.contains_key(oid) {
                        "view"
                    } else {
                        "table"
                    };
                    format!("trigger {tg} on {kind} {rel}")
                })
                .collect();
            if !matches!(df.drop_behavior, Some(ast::DropBehavior::Cascade)) {
                let detail = lines
                    .iter()
                    .map(|l| format!("{l} depends on function {shown}"))
                    .collect();
                return Err(crate::ddl_view::still_depended_on(
                    &format!("function {shown}"),
                    detail,
                ));
            }
            notices.push(crate::ddl_view::cascade_notice(lines));
            for (oid, _, tg) in users {
                crate::ddl_trigger::update_triggers(cat, oid, |ts| ts.retain(|x| x.name != tg));
            }
        }
        cat.functions.remove(&f.oid);
    }
    Ok("DROP FUNCTION".into())
}

/// `f(integer, text)`: a function as PostgreSQL's dependency messages name it.
fn shown_signature(f: &FunctionDef) -> String {
    let args: Vec<String> = (f.input_args())
        .map(|a| types::type_display(a.ty))
        .collect();
    format!("{}({})", f.proname, args.join(", "))
}

/// A function a statement names that does not exist, as PostgreSQL shows it.
struct Missing {
    /// `name(type, ...)`, or `name()` when no argument list was given.
    shown: String,
    name: String,
    listed: bool,
}

impl Missing {
    fn error(&self) -> PgError {
        PgError::new(
            sqlstate::UNDEFINED_FUNCTION,
            if self.listed {
                format!("function {} does not exist", self.shown)
            } else {
                format!("could not find a function named \"{}\"", self.name)
            },
        )
    }
}

/// The one function `desc` names (by signature, or by name alone when it is not overloaded).
fn find(desc: &ast::FunctionDesc, cat: &Catalog) -> PgResult<Result<Arc<FunctionDef>, Missing>> {
    let name = super::ddl::plain_name(&desc.name)?;
    let found: Vec<Arc<FunctionDef>> = match &desc.args {
        Some(args) => {
            let sig = FunctionDef::signature_of(&name, &input_types(args, cat)?);
            cat.functions.by_name(&sig).cloned().into_iter().collect()
        }
        None => cat.functions_named(&name).cloned().collect(),
    };
    if found.len() > 1 {
        return Err(PgError::new(
            sqlstate::AMBIGUOUS_FUNCTION,
            format!("function name \"{name}\" is not unique"),
        )
        .with_hint("Specify the argument list to select the function unambiguously."));
    }
    if let Some(f) = found.into_iter().next() {
        return Ok(Ok(f));
    }
    let shown = match &desc.args {
        Some(args) => {
            let tys: Vec<String> = input_types(args, cat)?
                .into_iter()
                .map(|t| types::type_display_in(t, cat))
                .collect();
            format!("{name}({})", tys.join(", "))
        }
        None => format!("{name}()"),
    };
    Ok(Err(Missing {
        shown,
        name,
        listed: desc.args.is_some(),
    }))
}

/// ALTER FUNCTION: volatility, strictness, LEAKPROOF and RENAME TO. PARALLEL, COST and ROWS
/// are accepted and have no effect, as in CREATE FUNCTION (keel runs no parallel plans and
/// does not cost function calls). What needs roles, schemas, extensions or per-function
/// settings is refused with 0A000.
pub(crate) fn alter_function(af: &ast::AlterFunction, cat: &mut Catalog) -> PgResult<String> {
    if af.kind != ast::AlterFunctionKind::Function {
        return Err(PgError::unsupported("ALTER AGGREGATE"));
    }
    let f = find(&af.function, cat)?.map_err(|m| m.error())?;
    let mut def = (*f).clone();
    match &af.operation {
        ast::AlterFunctionOperation::Actions { actions, .. } => {
            for a in actions {
                match a {
                    ast::AlterFunctionAction::Behavior(b) => def.volatility = volatility(b),
                    ast::AlterFunctionAction::CalledOnNull(c) => def.strict = strict(c),
                    ast::AlterFunctionAction::Leakproof(on) => def.leakproof = *on,
                    ast::AlterFunctionAction::Parallel(_)
                    | ast::AlterFunctionAction::Cost(_)
                    | ast::AlterFunctionAction::Rows(_) => {}
                    ast::AlterFunctionAction::Security { security, .. } => {
                        if *security == ast::FunctionSecurity::Definer {
                            return Err(PgError::unsupported("SECURITY DEFINER"));
                        }
                    }
                    ast::AlterFunctionAction::Support(_) => {
                        return Err(PgError::unsupported("SUPPORT functions"));
                    }
                    ast::AlterFunctionAction::Set(_) | ast::AlterFunctionAction::Reset(_) => {
                        return Err(PgError::unsupported("SET and RESET clauses on functions"));
                    }
                }
            }
        }
        ast::AlterFunctionOperation::RenameTo { new_name } => {
            let name = new_name.value.to_lowercase();
            let inputs: Vec<SqlType> = def.input_args().map(|a| a.ty).collect();
            let signature = FunctionDef::signature_of(&name, &inputs);
            if cat.functions.by_name(&signature).is_some() {
                let tys: Vec<String> = inputs.into_iter().map(types::type_display).collect();
                return Err(PgError::new(
                    sqlstate::DUPLICATE_FUNCTION,
                    format!(
                        "function {name}({}) already exists in schema \"{}\"",
                        tys.join(", "),
                        def.schema
                    ),
                ));
            }
            for (oid, _, _) in crate::ddl_trigger::triggers_calling(cat, def.oid) {
                crate::ddl_trigger::update_triggers(cat, oid, |ts| {
                    for tg in ts.iter_mut().filter(|tg| tg.function == def.oid) {
                        tg.function_name = name.clone();
                    }
                });
            }
            def.proname = name;
            def.signature = signature;
        }
        ast::AlterFunctionOperation::OwnerTo(_) => {
            return Err(PgError::unsupported("ALTER FUNCTION ... OWNER TO"));
        }
        ast::AlterFunctionOperation::SetSchema { .. } => {
            return Err(PgError::unsupported("ALTER FUNCTION ... SET SCHEMA"));
        }
        ast::AlterFunctionOperation::DependsOnExtension { .. } => {
            return Err(PgError::unsupported(
                "ALTER FUNCTION ... DEPENDS ON EXTENSION",
            ));
        }
    }
    cat.functions.insert(def.oid, Arc::new(def));
    Ok("ALTER FUNCTION".into())
}

fn volatility(b: &ast::FunctionBehavior) -> FuncVolatility {
    match b {
        ast::FunctionBehavior::Immutable => FuncVolatility::Immutable,
        ast::FunctionBehavior::Stable => FuncVolatility::Stable,
        ast::FunctionBehavior::Volatile => FuncVolatility::Volatile,
    }
}

fn strict(c: &ast::FunctionCalledOnNull) -> bool {
    matches!(
        c,
        ast::FunctionCalledOnNull::Strict | ast::FunctionCalledOnNull::ReturnsNullOnNullInput
    )
}
