//! Trigger functions: the executor's write node fires a trigger through the handler
//! [`register`](crate::call::register) installs, and the function's body runs as a call does
//! (call.rs), with PostgreSQL's trigger variables:
//! - `NEW` and `OLD`, record variables holding the row (NEW for INSERT and UPDATE, OLD for
//!   UPDATE and DELETE; the other is a null row), with the table's column names and types;
//! - `TG_NAME`, `TG_WHEN`, `TG_LEVEL`, `TG_OP`, `TG_RELID`, `TG_RELNAME`, `TG_TABLE_NAME`,
//!   `TG_TABLE_SCHEMA`, `TG_NARGS` and `TG_ARGV` (text[] indexed from 0).
//!
//! A BEFORE ROW trigger's `RETURN NEW` (or any record, or a row-valued expression) gives the
//! row to write; `RETURN NULL` skips it. A WHEN condition is evaluated with the same
//! variables before the function is called; when it does not hold the function is not run.

use crate::call::{compiled_def, run_in_statement};
use crate::interp::PlState;
use crate::vars::{Record, Var};
use keel_catalog::{FuncVolatility, TriggerTiming};
use keel_common::{PgError, PgResult, sqlstate};
use keel_sql::expr::EvalCx;
use keel_sql::trigger::{TriggerFiring, TriggerOp};
use keel_types::{Datum, TypeId};
use std::sync::{Arc, Mutex};

/// WHEN conditions as one-statement blocks (`BEGIN RETURN (cond); END`), by their text.
static CONDITIONS: std::sync::LazyLock<Mutex<rustc_hash::FxHashMap<String, Arc<keel_pl::Body>>>> =
    std::sync::LazyLock::new(Default::default);

fn condition_block(when: &str) -> PgResult<Arc<keel_pl::Body>> {
    let mut map = match CONDITIONS.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if let Some(b) = map.get(when) {
        return Ok(b.clone());
    }
    let body = keel_pl::parse_function_body(&format!("begin return ({when}); end"))
        .map_err(|e| e.error.clone())?;
    let body = Arc::new(body);
    if map.len() > 1024 {
        map.clear();
    }
    map.insert(when.to_string(), body.clone());
    Ok(body)
}

fn text(v: &str) -> Datum {
    Datum::Text(v.to_string())
}

/// Runs one firing of a trigger (see the module comment).
pub fn fire_trigger(f: &TriggerFiring<'_>, cx: &mut EvalCx<'_>) -> PgResult<Option<Vec<Datum>>> {
    keel_common::stack::check()?;
    let txn = cx
        .txn
        .ok_or_else(|| PgError::unsupported("a trigger in this position"))?;
    let t = f.trigger;
    let catalog = txn.catalog(cx.engine);
    let def = catalog.functions.get(&t.function).cloned().ok_or_else(|| {
        PgError::new(
            sqlstate::UNDEFINED_FUNCTION,
            format!("function {}() does not exist", t.function_name),
        )
    })?;
    let c = compiled_def(&def)?;
    let table = f.table;
    // OLD on INSERT and NEW on DELETE are null rows of the table's shape, as in PostgreSQL.
    let record = |row: Option<&[Datum]>| {
        Some(Record {
            ty: TypeId::Composite(table.oid),
            names: table.columns.iter().map(|c| c.name.clone()).collect(),
            types: table.columns.iter().map(|c| c.ty.id).collect(),
            typmods: table.columns.iter().map(|c| c.ty.typmod).collect(),
            values: row.map_or_else(|| vec![Datum::Null; table.columns.len()], <[Datum]>::to_vec),
            is_null: row.is_none(),
            declared: false,
        })
    };
    let record_var = |name: &str, rec: Option<Record>| Var::record(name, false, rec);
    let argv = Arc::new(keel_types::array::Array {
        elem: TypeId::Text,
        dims: if t.args.is_empty() {
            Vec::new()
        } else {
            vec![keel_types::array::Dim {
                len: t.args.len() as i32,
                lower: 0,
            }]
        },
        items: t.args.iter().map(|a| text(a)).collect(),
    });
    let vars = || {
        vec![
            record_var("new", record(f.new)),
            record_var("old", record(f.old)),
            Var::scalar("tg_name", TypeId::Name, text(&t.name)),
            Var::scalar(
                "tg_when",
                TypeId::Text,
                text(match t.timing {
                    TriggerTiming::Before => "BEFORE",
                    TriggerTiming::After => "AFTER",
                    TriggerTiming::InsteadOf => "INSTEAD OF",
                }),
            ),
            Var::scalar(
                "tg_level",
                TypeId::Text,
                text(if t.row { "ROW" } else { "STATEMENT" }),
            ),
            Var::scalar("tg_op", TypeId::Text, text(f.op.name())),
            Var::scalar("tg_relid", TypeId::Oid, Datum::Oid(table.oid)),
            Var::scalar("tg_relname", TypeId::Name, text(&table.name)),
            Var::scalar("tg_table_name", TypeId::Name, text(&table.name)),
            Var::scalar("tg_table_schema", TypeId::Name, text("public")),
            Var::scalar("tg_nargs", TypeId::Int4, Datum::Int4(t.args.len() as i32)),
            Var::scalar("tg_argv", TypeId::TextArray, Datum::Array(argv.clone())),
        ]
    };
    // The row a BEFORE ROW trigger passes on when it does not change it.
    let unchanged = || match f.op {
        TriggerOp::Delete => f.old.map(<[Datum]>::to_vec),
        _ => f.new.map(<[Datum]>::to_vec),
    };
    let volatile = def.volatility == FuncVolatility::Volatile;
    if let Some(when) = &t.when {
        let block = condition_block(when)?;
        let mut st = PlState::new(format!("{}()", def.proname), vars());
        run_in_statement(cx, txn, &c, &block.block, false, &mut st)?;
        let holds = match st.ret.take() {
            Some((Datum::Bool(b), _)) => b,
            Some((Datum::Null, _)) | None => false,
            Some((v, from)) => matches!(
                keel_types::cast::cast(
                    v,
                    from,
                    keel_types::SqlType::new(TypeId::Bool),
                    keel_types::cast::CastContext::Assignment
                )?,
                Datum::Bool(true)
            ),
        };
        if !holds {
            return Ok(unchanged());
        }
    }
    let mut st = PlState::new(format!("{}()", def.proname), vars());
    st.ret_type = TypeId::Trigger;
    st.set_options(&c.body.options, cx.settings);
    run_in_statement(cx, txn, &c, &c.body.block, volatile, &mut st)?;
    if !(t.row && matches!(t.timing, TriggerTiming::Before | TriggerTiming::InsteadOf)) {
        return Ok(None);
    }
    if let Some(rec) = st.ret_record.take() {
        return Ok(rec);
    }
    match st.ret.take() {
        None => Err(PgError::new(
            sqlstate::FUNCTION_EXECUTED_NO_RETURN_STATEMENT,
            "control reached end of trigger procedure without RETURN",
        )
        .with_context_line(format!("PL/pgSQL function {}()", def.proname))),
        Some((Datum::Null, _)) => Ok(None),
        Some(_) => Err(PgError::unsupported(
            "a trigger function returning a row value other than a record variable",
        )),
    }
}
