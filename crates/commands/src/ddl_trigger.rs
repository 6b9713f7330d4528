//! CREATE TRIGGER, DROP TRIGGER and ALTER TABLE ... ENABLE | DISABLE TRIGGER. A trigger is a
//! row of its table's definition (`TableDef::triggers`, kept in name order, the order
//! PostgreSQL fires them in), so DROP TABLE drops it and every plan of a write on the table
//! sees the table's triggers as of the catalog it was planned with.

use crate::ddl::{notice, plain_name};
use keel_analyzer::bind::fold;
use keel_catalog::{Catalog, FunctionDef, TableDef, TriggerDef, TriggerTiming, ViewDef};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::TypeId;
use sqlparser::ast;
use std::sync::Arc;

/// The trigger function `EXECUTE FUNCTION name()` names: no arguments, returning trigger.
fn trigger_function(cat: &Catalog, desc: &ast::FunctionDesc) -> PgResult<Arc<FunctionDef>> {
    let name = plain_name(&desc.name)?;
    let sig = FunctionDef::signature_of(&name, &[]);
    let f = cat.functions.by_name(&sig).cloned().ok_or_else(|| {
        PgError::new(
            sqlstate::UNDEFINED_FUNCTION,
            format!("function {name}() does not exist"),
        )
    })?;
    if f.ret.id != TypeId::Trigger {
        return Err(PgError::new(
            sqlstate::INVALID_OBJECT_DEFINITION,
            format!("function {name} must return type trigger"),
        ));
    }
    Ok(f)
}

pub(crate) fn create_trigger(ct: &ast::CreateTrigger, cat: &mut Catalog) -> PgResult<String> {
    if ct.is_constraint || ct.temporary || ct.or_alter || ct.statements.is_some() {
        return Err(PgError::unsupported("this form of CREATE TRIGGER"));
    }
    let (table, view) = trigger_target(cat, &ct.table_name)?;
    let name = plain_name(&ct.name)?;
    let timing = match ct.period {
        Some(ast::TriggerPeriod::Before) => TriggerTiming::Before,
        Some(ast::TriggerPeriod::After) | Some(ast::TriggerPeriod::For) => TriggerTiming::After,
        Some(ast::TriggerPeriod::InsteadOf) if view.is_some() => TriggerTiming::InsteadOf,
        Some(ast::TriggerPeriod::InsteadOf) => {
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("\"{}\" is a table", table.name),
            )
            .with_detail("Tables cannot have INSTEAD OF triggers."));
        }
        None => {
            return Err(PgError::new(
                sqlstate::SYNTAX_ERROR,
                "syntax error in CREATE TRIGGER",
            ));
        }
    };
    let (mut on_insert, mut on_update, mut on_delete) = (false, false, false);
    let mut truncate = false;
    let mut update_columns = Vec::new();
    let duplicate = || {
        PgError::new(
            sqlstate::SYNTAX_ERROR,
            "duplicate trigger events specified at or near \"ON\"",
        )
    };
    for e in &ct.events {
        match e {
            ast::TriggerEvent::Insert if on_insert => return Err(duplicate()),
            ast::TriggerEvent::Delete if on_delete => return Err(duplicate()),
            ast::TriggerEvent::Update(_) if on_update => return Err(duplicate()),
            ast::TriggerEvent::Truncate if truncate => return Err(duplicate()),
            ast::TriggerEvent::Insert => on_insert = true,
            ast::TriggerEvent::Delete => on_delete = true,
            ast::TriggerEvent::Update(cols) => {
                on_update = true;
                for c in cols {
                    let n = fold(c);
                    let i = table.column_index(&n).ok_or_else(|| {
                        PgError::new(
                            sqlstate::UNDEFINED_COLUMN,
                            format!(
                                "column \"{n}\" of relation \"{}\" does not exist",
                                table.name
                            ),
                        )
                    })?;
                    if update_columns.contains(&i) {
                        return Err(PgError::new(
                            sqlstate::DUPLICATE_COLUMN,
                            format!("column \"{n}\" specified more than once"),
                        ));
                    }
                    update_columns.push(i);
                }
            }
            ast::TriggerEvent::Truncate => truncate = true,
        }
    }
    let row = matches!(
        ct.trigger_object,
        Some(ast::TriggerObjectKind::ForEach(ast::TriggerObject::Row))
            | Some(ast::TriggerObjectKind::For(ast::TriggerObject::Row))
    );
    let when = ct.condition.as_ref().map(|c| c.to_string());
    if view.is_some() {
        view_trigger_allowed(&table.name, timing, row, truncate, &when, &update_columns)?;
    }
    if truncate && row {
        return Err(PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "TRUNCATE FOR EACH ROW triggers are not supported",
        ));
    }
    let events = [on_insert, on_update, on_delete];
    let (old_table, new_table) =
        transition_names(ct, &table.name, view.is_some(), timing, truncate, events)?;
    if let Some(w) = &when {
        let (uses_old, uses_new) = row_references(w);
        let invalid = |m: &str| Err(PgError::new(sqlstate::INVALID_OBJECT_DEFINITION, m));
        if !row && (uses_old || uses_new) {
            return invalid("statement trigger's WHEN condition cannot reference column values");
        }
        if on_insert && uses_old {
            return invalid("INSERT trigger's WHEN condition cannot reference OLD values");
        }
        if on_delete && uses_new {
            return invalid("DELETE trigger's WHEN condition cannot reference NEW values");
        }
        let (old_system, new_system) = system_column_references(w);
        if new_system && timing == TriggerTiming::Before {
            // PostgreSQL's SQLSTATE for this one is 0A000, not 42P17.
            return Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "BEFORE trigger's WHEN condition cannot reference NEW system columns",
            ));
        }
        if old_system || new_system {
            // The WHEN condition is evaluated over the row's values alone.
            return Err(PgError::unsupported(
                "system columns in a trigger's WHEN condition",
            ));
        }
    }
    let body = ct
        .exec_body
        .as_ref()
        .ok_or_else(|| PgError::new(sqlstate::SYNTAX_ERROR, "syntax error in CREATE TRIGGER"))?;
    let function = trigger_function(cat, &body.func_desc)?;
    let existing = table.triggers.iter().position(|t| t.name == name);
    if existing.is_some() && !ct.or_replace {
        return Err(PgError::new(
            sqlstate::DUPLICATE_OBJECT,
            format!(
                "trigger \"{name}\" for relation \"{}\" already exists",
                table.name
            ),
        ));
    }
    let oid = match existing {
        Some(i) => table.triggers[i].oid,
        None => cat.new_oid(),
    };
    let def = TriggerDef {
        oid,
        name,
        function: function.oid,
        function_name: function.proname.clone(),
        timing,
        on_insert,
        on_update,
        on_delete,
        on_truncate: truncate,
        update_columns,
        row,
        when,
        args: keel_parser::trigger_args::args_of(&body.func_desc),
        enabled: true,
        fires_on: Default::default(),
        old_table,
        new_table,
    };
    let mut triggers = table.triggers.clone();
    triggers.retain(|t| t.name != def.name);
    triggers.push(def);
    triggers.sort_by(|a, b| a.name.cmp(&b.name));
    store_triggers(cat, &table, view.as_deref(), triggers);
    Ok("CREATE TRIGGER".into())
}

/// The names REFERENCING gives the transition tables (OLD, NEW), checked as PostgreSQL
/// does: only AFTER triggers of one INSERT, UPDATE or DELETE event on a table, without a
/// column list, may have them; OLD for UPDATE and DELETE, NEW for INSERT and UPDATE, each
/// once, under different names.
fn transition_names(
    ct: &ast::CreateTrigger,
    table: &str,
    view: bool,
    timing: TriggerTiming,
    truncate: bool,
    [on_insert, on_update, on_delete]: [bool; 3],
) -> PgResult<(Option<String>, Option<String>)> {
    let (mut old, mut new) = (None, None);
    let invalid = |m: &str| Err(PgError::new(sqlstate::INVALID_OBJECT_DEFINITION, m));
    for r in &ct.referencing {
        if view {
            return Err(PgError::new(
                sqlstate::WRONG_OBJECT_TYPE,
                format!("\"{table}\" is a view"),
            )
            .with_detail("Triggers on views cannot have transition tables."));
        }
        if timing != TriggerTiming::After {
            return invalid("transition table name can only be specified for an AFTER trigger");
        }
        if truncate {
            return Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "TRUNCATE triggers with transition tables are not supported",
            ));
        }
        if [on_insert, on_update, on_delete]
            .iter()
            .filter(|e| **e)
            .count()
            != 1
        {
            return Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "transition tables cannot be specified for triggers with more than one event",
            ));
        }
        if ct
            .events
            .iter()
            .any(|e| matches!(e, ast::TriggerEvent::Update(c) if !c.is_empty()))
        {
            return Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "transition tables cannot be specified for triggers with column lists",
            ));
        }
        let name = plain_name(&r.transition_relation_name)?;
        let (side, slot, allowed, events) = match r.refer_type {
            ast::TriggerReferencingType::NewTable => (
                "NEW",
                &mut new,
                on_insert || on_update,
                "an INSERT or UPDATE",
            ),
            ast::TriggerReferencingType::OldTable => (
                "OLD",
                &mut old,
                on_delete || on_update,
                "a DELETE or UPDATE",
            ),
        };
        if !allowed {
            return invalid(&format!(
                "{side} TABLE can only be specified for {events} trigger"
            ));
        }
        if slot.is_some() {
            return invalid(&format!("{side} TABLE cannot be specified multiple times"));
        }
        *slot = Some(name);
    }
    if old.is_some() && old == new {
        return invalid("OLD TABLE name and NEW TABLE name cannot be the same");
    }
    Ok((old, new))
}

/// The relation CREATE / DROP TRIGGER names: a table, or a view (as a target, with its
/// definition), else 42P01.
fn trigger_target(
    cat: &Catalog,
    name: &ast::ObjectName,
) -> PgResult<(Arc<TableDef>, Option<Arc<ViewDef>>)> {
    let n = plain_name(name)?;
    if let Some(v) = cat.views.by_name(&n) {
        return Ok((Arc::new(v.as_target()), Some(v.clone())));
    }
    Ok((cat.table(&n)?.clone(), None))
}

/// Replaces the triggers of the table, or of the view when the target is one.
fn store_triggers(
    cat: &mut Catalog,
    table: &TableDef,
    view: Option<&ViewDef>,
    triggers: Vec<TriggerDef>,
) {
    match view {
        Some(v) => {
            let mut nv = v.clone();
            nv.triggers = triggers;
            cat.views.insert(nv.oid, Arc::new(nv));
        }
        None => {
            let mut nt = table.clone();
            nt.triggers = triggers;
            cat.tables.insert(nt.oid, Arc::new(nt));
        }
    }
}

/// What a view's trigger may be, as PostgreSQL's CreateTrigger checks it: INSTEAD OF row
/// triggers without WHEN or columns, and statement triggers; no TRUNCATE.
fn view_trigger_allowed(
    view: &str,
    timing: TriggerTiming,
    row: bool,
    truncate: bool,
    when: &Option<String>,
    update_columns: &[usize],
) -> PgResult<()> {
    let is_view = |detail: &str| {
        Err(
            PgError::new(sqlstate::WRONG_OBJECT_TYPE, format!("\"{view}\" is a view"))
                .with_detail(detail.to_string()),
        )
    };
    if timing != TriggerTiming::InsteadOf && row {
        return is_view("Views cannot have row-level BEFORE or AFTER triggers.");
    }
    if truncate {
        return is_view("Views cannot have TRUNCATE triggers.");
    }
    if timing == TriggerTiming::InsteadOf {
        if !row {
            return Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "INSTEAD OF triggers must be FOR EACH ROW",
            ));
        }
        if when.is_some() {
            return Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "INSTEAD OF triggers cannot have WHEN conditions",
            ));
        }
        if !update_columns.is_empty() {
            return Err(PgError::new(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "INSTEAD OF triggers cannot have column lists",
            ));
        }
    }
    Ok(())
}

/// Whether a WHEN condition refers to `OLD.x` and to `NEW.x` (whole words, any case).
fn row_references(when: &str) -> (bool, bool) {
    references(when, |_| true)
}

/// Whether the WHEN condition reads a system column (`new.tableoid`, `old.xmin`) of OLD, of
/// NEW. A user column cannot have such a name.
fn system_column_references(when: &str) -> (bool, bool) {
    const SYSTEM: [&str; 6] = ["tableoid", "ctid", "xmin", "xmax", "cmin", "cmax"];
    references(when, |column| SYSTEM.contains(&column))
}

/// Whether the condition has `old.x`, `new.x` (unquoted OLD / NEW) with `column(x)` true;
/// `x` is case-folded unless quoted.
fn references(when: &str, column: impl Fn(&str) -> bool) -> (bool, bool) {
    use sqlparser::tokenizer::{Token, Tokenizer};
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let Ok(tokens) = Tokenizer::new(&dialect, when).tokenize() else {
        return (false, false);
    };
    let (mut old, mut new) = (false, false);
    for triple in tokens.windows(3) {
        if let [Token::Word(w), Token::Period, next] = triple
            && w.quote_style.is_none()
        {
            let field = match next {
                Token::Word(f) if f.quote_style.is_none() => f.value.to_ascii_lowercase(),
                Token::Word(f) => f.value.clone(),
                _ => String::new(),
            };
            if column(&field) {
                old |= w.value.eq_ignore_ascii_case("old");
                new |= w.value.eq_ignore_ascii_case("new");
            }
        }
    }
    (old, new)
}

pub(crate) fn drop_trigger(
    dt: &ast::DropTrigger,
    cat: &mut Catalog,
    notices: &mut Vec<PgError>,
) -> PgResult<String> {
    let name = plain_name(&dt.trigger_name)?;
    let Some(tname) = &dt.table_name else {
        return Err(PgError::new(
            sqlstate::SYNTAX_ERROR,
            "syntax error at end of input",
        ));
    };
    let (table, view) = trigger_target(cat, tname)?;
    if !table.triggers.iter().any(|t| t.name == name) {
        if dt.if_exists {
            notices.push(notice(format!(
                "trigger \"{name}\" for relation \"{}\" does not exist, skipping",
                table.name
            )));
            return Ok("DROP TRIGGER".into());
        }
        return Err(missing(&name, &table.name));
    }
    let mut triggers = table.triggers.clone();
    triggers.retain(|t| t.name != name);
    store_triggers(cat, &table, view.as_deref(), triggers);
    Ok("DROP TRIGGER".into())
}

fn missing(name: &str, table: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_OBJECT,
        format!("trigger \"{name}\" for table \"{table}\" does not exist"),
    )
}

/// ALTER TABLE ... ENABLE [REPLICA | ALWAYS] | DISABLE TRIGGER name | ALL | USER on table
/// `nt`: `fires_on` is None for DISABLE.
pub(crate) fn set_enabled(
    nt: &mut TableDef,
    which: &ast::Ident,
    fires_on: Option<keel_catalog::TriggerFires>,
) -> PgResult<()> {
    let name = fold(which);
    let set = |t: &mut keel_catalog::TriggerDef| {
        t.enabled = fires_on.is_some();
        if let Some(f) = fires_on {
            t.fires_on = f;
        }
    };
    if which.quote_style.is_none() && (name == "all" || name == "user") {
        nt.triggers.iter_mut().for_each(set);
        return Ok(());
    }
    let t = nt
        .triggers
        .iter_mut()
        .find(|t| t.name == name)
        .ok_or_else(|| missing(&name, &nt.name))?;
    set(t);
    Ok(())
}

/// The triggers that call function `oid`, as (relation, its name, trigger name), oldest
/// first (DROP FUNCTION's DETAIL).
pub(crate) fn triggers_calling(cat: &Catalog, oid: u32) -> Vec<(u32, String, String)> {
    let mut out = Vec::new();
    let tables = cat.tables.values().map(|t| (t.oid, &t.name, &t.triggers));
    let views = cat.views.values().map(|v| (v.oid, &v.name, &v.triggers));
    let mut found = Vec::new();
    for (rel, rel_name, triggers) in tables.chain(views) {
        for tg in triggers {
            if tg.function == oid {
                found.push((tg.oid, (rel, rel_name.clone(), tg.name.clone())));
            }
        }
    }
    // In creation order, as PostgreSQL lists dependent objects.
    found.sort_by_key(|(tg, _)| *tg);
    out.extend(found.into_iter().map(|(_, t)| t));
    out
}

/// Changes the triggers of relation `oid`, a table or a view.
pub(crate) fn update_triggers(
    cat: &mut Catalog,
    oid: u32,
    change: impl FnOnce(&mut Vec<TriggerDef>),
) {
    if let Some(t) = cat.tables.get(&oid).cloned() {
        let mut nt = (*t).clone();
        change(&mut nt.triggers);
        cat.tables.insert(oid, Arc::new(nt));
    } else if let Some(v) = cat.views.get(&oid).cloned() {
        let mut nv = (*v).clone();
        change(&mut nv.triggers);
        cat.views.insert(oid, Arc::new(nv));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn when_conditions_name_their_row_and_system_columns() {
        use super::{row_references, system_column_references};
        assert_eq!(row_references("old.* is distinct from new.*"), (true, true));
        assert_eq!(row_references("new.a = 1"), (false, true));
        assert_eq!(row_references("\"new\".a = 1"), (false, false));
        assert_eq!(system_column_references("NEW.tableoid <> 0"), (false, true));
        assert_eq!(system_column_references("old.xmin = new.a"), (true, false));
        assert_eq!(
            system_column_references("new.\"tableoid\" <> 0"),
            (false, true)
        );
        assert_eq!(
            system_column_references("new.\"TABLEOID\" <> 0"),
            (false, false)
        );
        assert_eq!(system_column_references("new.a = old.b"), (false, false));
    }
}
