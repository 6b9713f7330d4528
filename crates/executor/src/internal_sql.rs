//! Statements the server runs on its own behalf inside a user's statement, as PostgreSQL's
//! referential action triggers run theirs through SPI: `DELETE FROM child WHERE ...` for ON
//! DELETE CASCADE, `UPDATE child SET ...` for CASCADE, SET NULL and SET DEFAULT.
//!
//! Each is planned as the body of an anonymous volatile SQL function over its parameters and
//! run through the SQL-body write handler, so the child's own triggers, constraints and
//! referential actions apply to it. Plans are kept by text, parameter types and the catalog
//! they were planned against (its identity: a transaction's own DDL makes a catalog of its
//! own, which may carry the same version number as another's): a DELETE of many referenced
//! rows plans its cascade once.

use crate::eval::EvalCx;
use keel_analyzer::expr::UserCall;
use keel_catalog::{ArgMode, Catalog, FuncLanguage, FuncVolatility, FunctionArg, FunctionDef};
use keel_common::{PgError, PgResult};
use keel_types::{Datum, SqlType, TypeId};
use std::sync::{Arc, Mutex};

/// Text, parameter types, and the catalog's address: the cached call holds the catalog, so
/// the address is not reused while the entry exists.
type Key = (String, Vec<TypeId>, usize);

/// Calls kept by key, all of one catalog; bounded, cleared when full (a handful of
/// constraints are hot at once).
static CALLS: std::sync::LazyLock<Mutex<rustc_hash::FxHashMap<Key, Arc<UserCall>>>> =
    std::sync::LazyLock::new(Default::default);
const KEEP: usize = 256;

fn call_for(text: &str, types: &[TypeId], catalog: Arc<Catalog>) -> Arc<UserCall> {
    let key = (
        text.to_string(),
        types.to_vec(),
        Arc::as_ptr(&catalog) as usize,
    );
    let mut calls = match CALLS.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if let Some(c) = calls.get(&key) {
        return c.clone();
    }
    let def = FunctionDef {
        oid: 0,
        proname: "referential action".into(),
        schema: "pg_catalog".into(),
        args: types
            .iter()
            .map(|t| FunctionArg {
                name: None,
                ty: SqlType::new(*t),
                mode: ArgMode::In,
                default: None,
            })
            .collect(),
        ret: SqlType::new(TypeId::Void),
        set_returning: false,
        language: FuncLanguage::Sql,
        body: text.to_string(),
        volatility: FuncVolatility::Volatile,
        strict: false,
        leakproof: false,
        signature: String::new(),
        row_type: None,
    };
    let call = Arc::new(UserCall {
        def: Arc::new(def),
        catalog,
        body: Default::default(),
    });
    // Entries of another catalog go: each holds its catalog alive, and a catalog is
    // replaced (DDL) far more rarely than its cascades run.
    if calls.len() >= KEEP || calls.keys().any(|k| k.2 != key.2) {
        calls.clear();
    }
    calls.insert(key, call.clone());
    call
}

/// The CONTEXT line the function wrapper adds to an error of its statement.
const WRAPPER_CONTEXT: &str = "SQL function \"referential action\" statement 1";

/// Runs the write `text` with `$n` = `values[n-1]` (of `types`) in the running statement's
/// transaction. An error names the statement in a CONTEXT line as `shown`, the text
/// PostgreSQL's referential triggers run.
pub fn run_write(
    text: &str,
    shown: &str,
    types: &[TypeId],
    values: &[Datum],
    catalog: Arc<Catalog>,
    cx: &mut EvalCx<'_>,
) -> PgResult<()> {
    let call = call_for(text, types, catalog);
    crate::sqlfunc::run_internal(&call, values, cx).map_err(|mut e: PgError| {
        // The anonymous function is an implementation detail: its line is replaced.
        if let Some(o) = e.objects.as_deref_mut()
            && let Some(c) = o.context.take()
        {
            let kept: Vec<&str> = c.lines().filter(|l| *l != WRAPPER_CONTEXT).collect();
            o.context = (!kept.is_empty()).then(|| kept.join("\n"));
        }
        e.with_context_line(format!("SQL statement \"{shown}\""))
    })
}
