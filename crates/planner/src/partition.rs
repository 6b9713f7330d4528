//! Partitioned tables in plans: a scan of a partitioned table becomes an Append of its
//! partitions' scans, pruned by the WHERE conjuncts on the key (PostgreSQL's partprune.c),
//! and an INSERT gets the routing of its rows.
//!
//! Pruning happens at two points, as in PostgreSQL. While planning, conjuncts `key op
//! constant` remove partitions outright: no child is planned for them. Conjuncts `key op
//! $n` (or other values fixed for the statement) are kept in the Append's `RunPrune` and
//! evaluated when the statement starts, so a prepared statement's one plan runs only the
//! partitions its parameters select: what runs per execution does not grow with the number
//! of partitions. Relation locks are taken on the partitioned table alone (keel-commands'
//! ddl_locks makes DDL on any partition lock the tables above it), so nothing per
//! partition is locked or opened either.

use crate::RelSizes;
use crate::access::conjuncts;
use crate::paths;
use crate::plan::{
    LeafConstraints, PartitionCheck, Plan, PruneExpr, PruneOp, RouteTarget, Routing, RunPrune,
};
use keel_analyzer::expr::Expr;
use keel_analyzer::query::OnConflict;
use keel_catalog::partition::{PartitionDesc, PartitionKey, PruneCond};
use keel_catalog::{Catalog, IndexDef, TableDef};
use keel_common::PgResult;
use keel_types::Datum;
use std::sync::Arc;

/// The partitions of `table` (a partitioned table) in its PartitionDesc's order, and the
/// desc.
fn partitions(
    catalog: &Catalog,
    table: &TableDef,
) -> PgResult<(PartitionDesc, Vec<Arc<TableDef>>)> {
    let key = table.partition_key().expect("a partitioned table");
    let parts: Vec<Arc<TableDef>> = catalog.tables.owned_by(table.oid).cloned().collect();
    let bounds: Vec<_> = parts
        .iter()
        .filter_map(|t| t.partition_of().map(|(_, b)| (t.oid, b.clone())))
        .collect();
    let desc = PartitionDesc::new(key, &bounds)?;
    let mut by_oid: std::collections::HashMap<u32, Arc<TableDef>> =
        parts.into_iter().map(|t| (t.oid, t)).collect();
    let ordered = (desc.oids().iter())
        .filter_map(|o| by_oid.remove(o))
        .collect();
    Ok((desc, ordered))
}

/// The row hash of hash partitioning (PostgreSQL's, so rows land where PostgreSQL puts them).
pub fn row_hash(key: &PartitionKey) -> impl Fn(&[Datum]) -> u64 + '_ {
    |values| keel_types::hash::partition_hash(values, &key.types).unwrap_or(0)
}

/// Replaces every scan of a partitioned table in `plan` by an Append of its partitions.
pub(crate) fn expand(catalog: &Catalog, sizes: &dyn RelSizes, plan: &mut Plan) -> PgResult<()> {
    keel_common::stack::check()?;
    if let Plan::Scan {
        table,
        alias,
        filter,
        run,
        ..
    } = plan
        && table.partition_key().is_some()
    {
        let (table, alias, filter) = (table.clone(), alias.clone(), filter.clone());
        let row_ids = run.row_ids;
        *plan = append(catalog, sizes, &table, alias, filter, row_ids)?;
        return Ok(());
    }
    let mut result = Ok(());
    plan.for_each_child_mut(&mut |c| {
        if result.is_ok() {
            result = expand(catalog, sizes, c);
        }
    });
    result
}

fn append(
    catalog: &Catalog,
    sizes: &dyn RelSizes,
    table: &Arc<TableDef>,
    alias: Option<String>,
    filter: Option<Expr>,
    row_ids: bool,
) -> PgResult<Plan> {
    let key = table.partition_key().expect("a partitioned table").clone();
    let (desc, parts) = partitions(catalog, table)?;
    let mut parts_conj = Vec::new();
    if let Some(f) = &filter {
        conjuncts(f.clone(), &mut parts_conj);
    }
    let conds = prune_conditions(&key, &parts_conj);
    let kept: Vec<usize> = match plan_set(&desc, &key, &conds) {
        Some(kept) => kept,
        None => (0..parts.len()).collect(),
    };
    let ors = run_ors(&conds);
    let params = conds.params;
    let mut children = Vec::with_capacity(kept.len());
    let mut child_of = vec![None; parts.len()];
    // PostgreSQL names the scans of several partitions after the table, numbered: `p_1`,
    // `p_2`, ...; a partition scanned alone goes by the table's own name.
    let base = alias.clone().unwrap_or_else(|| table.name.clone());
    let several = kept.len() > 1;
    for &i in &kept {
        let part = &parts[i];
        let alias = if several {
            Some(format!("{base}_{}", children.len() + 1))
        } else {
            Some(base.clone())
        };
        child_of[i] = Some(children.len());
        let child = if part.partition_key().is_some() {
            append(catalog, sizes, part, alias.clone(), filter.clone(), row_ids)?
        } else {
            let access = match &filter {
                Some(f) => paths::cheapest(catalog, sizes, part, Some(f)).access,
                None => crate::plan::Access::Seq,
            };
            Plan::Scan {
                table: part.clone(),
                alias: alias.clone(),
                access,
                filter: filter.clone(),
                run: crate::plan::ScanRun {
                    row_ids,
                    ..Default::default()
                },
            }
        };
        children.push(child);
    }
    let prune = (!params.is_empty() || !ors.is_empty()).then(|| {
        Arc::new(RunPrune {
            desc,
            conds: params,
            child_of,
            ors,
        })
    });
    Ok(Plan::Append {
        table: table.clone(),
        alias,
        children,
        prune,
    })
}

/// What pruning reads of AND-ed conjuncts: the conditions `key column op value` with
/// constants (pruned now) and with values fixed for the statement but unknown now
/// (parameters: pruned when it starts), and the ORs among the conjuncts, each arm read the
/// same way (PostgreSQL's partprune.c builds a union step of an OR's arms).
#[derive(Default)]
struct KeyConds {
    consts: Vec<PruneCond>,
    params: Vec<PruneExpr>,
    /// Every condition, constants included, as the executor evaluates them.
    all: Vec<PruneExpr>,
    ors: Vec<Vec<KeyConds>>,
}

impl KeyConds {
    fn has_params(&self) -> bool {
        !self.params.is_empty() || self.ors.iter().flatten().any(KeyConds::has_params)
    }
}

fn prune_conditions(key: &PartitionKey, parts: &[Expr]) -> KeyConds {
    let mut out = KeyConds::default();
    for p in parts {
        if let Expr::Or(arms) = p.uncompiled() {
            let arms = arms.iter().map(|a| {
                let mut conj = Vec::new();
                conjuncts(a.clone(), &mut conj);
                prune_conditions(key, &conj)
            });
            out.ors.push(arms.collect());
            continue;
        }
        if let Some((col, values)) = key_in_list(key, p) {
            out.consts.push(PruneCond::In(col, values));
            continue;
        }
        let Some((col, op, value)) = key_condition(key, p) else {
            continue;
        };
        let e = PruneExpr {
            col,
            op,
            value: value.clone(),
        };
        match value {
            Expr::Const(d, _) if d.is_null() => {}
            Expr::Const(d, _) => {
                out.consts.push(cond(op, col, d.clone()));
                out.all.push(e);
            }
            v if v.is_row_independent() && !v.has_subplan() => {
                out.params.push(e.clone());
                out.all.push(e);
            }
            _ => {}
        }
    }
    out
}

/// The partitions (ascending) the constant conditions of `c` keep, or None when they prune
/// nothing: no constant condition, and no OR every arm of which prunes.
fn plan_set(desc: &PartitionDesc, key: &PartitionKey, c: &KeyConds) -> Option<Vec<usize>> {
    let mut set = (!c.consts.is_empty()).then(|| desc.prune(&c.consts, row_hash(key)).partitions);
    for or in &c.ors {
        let arms: Option<Vec<Vec<usize>>> = or.iter().map(|a| plan_set(desc, key, a)).collect();
        let Some(arms) = arms else {
            continue;
        };
        set = Some(and_or(set, arms.into_iter().flatten().collect()));
    }
    set
}

/// `kept` (ascending partition indexes; None for all) narrowed by an OR whose arms keep
/// `union` together (any order, repeats allowed).
pub fn and_or(kept: Option<Vec<usize>>, mut union: Vec<usize>) -> Vec<usize> {
    union.sort_unstable();
    union.dedup();
    match kept {
        Some(k) => (k.into_iter())
            .filter(|i| union.binary_search(i).is_ok())
            .collect(),
        None => union,
    }
}

/// The ORs of `c` that prune only when the statement starts (an arm holds a parameter),
/// each arm as its AND-ed conditions; an OR with an arm that prunes nothing is left out.
/// An arm's own ORs are not kept: without them it keeps more, never less.
fn run_ors(c: &KeyConds) -> Vec<Vec<Vec<PruneExpr>>> {
    c.ors
        .iter()
        .filter(|or| or.iter().any(KeyConds::has_params))
        .filter_map(|or| {
            or.iter()
                .map(|arm| (!arm.all.is_empty()).then(|| arm.all.clone()))
                .collect()
        })
        .collect()
}

pub fn cond(op: PruneOp, col: usize, d: Datum) -> PruneCond {
    match op {
        PruneOp::Eq => PruneCond::Eq(col, d),
        PruneOp::Lt => PruneCond::Lt(col, d),
        PruneOp::Le => PruneCond::Le(col, d),
        PruneOp::Gt => PruneCond::Gt(col, d),
        PruneOp::Ge => PruneCond::Ge(col, d),
    }
}

/// `p` as (key position, values) when it is `key column = ANY (constant array)` of the key
/// column's type.
fn key_in_list(key: &PartitionKey, p: &Expr) -> Option<(usize, Vec<Datum>)> {
    use keel_analyzer::expr::ArrayExpr;
    let Expr::Array(a) = p.uncompiled() else {
        return None;
    };
    let ArrayExpr::Quantified {
        lhs: Expr::Col(c, t),
        arr: Expr::Const(Datum::Array(arr), _),
        cmp,
        all: false,
    } = a.as_ref()
    else {
        return None;
    };
    let Expr::Bin { op: "=", l, r, .. } = cmp.uncompiled() else {
        return None;
    };
    if !matches!((l.as_ref(), r.as_ref()), (Expr::Col(0, _), Expr::Col(1, _))) {
        return None;
    }
    let col = key.columns.iter().position(|k| k == c)?;
    (key.types[col] == *t && arr.elem == *t).then(|| (col, arr.items.clone()))
}

/// `p` as (key position, operator, value) when it compares a key column with a value of the
/// key column's own type.
fn key_condition<'e>(key: &PartitionKey, p: &'e Expr) -> Option<(usize, PruneOp, &'e Expr)> {
    let Expr::Bin { op, l, r, .. } = p.uncompiled() else {
        return None;
    };
    let op = match *op {
        "=" => PruneOp::Eq,
        "<" => PruneOp::Lt,
        "<=" => PruneOp::Le,
        ">" => PruneOp::Gt,
        ">=" => PruneOp::Ge,
        _ => return None,
    };
    let flip = |op| match op {
        PruneOp::Lt => PruneOp::Gt,
        PruneOp::Le => PruneOp::Ge,
        PruneOp::Gt => PruneOp::Lt,
        PruneOp::Ge => PruneOp::Le,
        o => o,
    };
    let key_col = |e: &Expr| match e {
        Expr::Col(c, t) => key
            .columns
            .iter()
            .position(|k| k == c)
            .filter(|&pos| key.types[pos] == *t),
        _ => None,
    };
    let (col, op, value) = match (key_col(l), key_col(r)) {
        (Some(c), None) => (c, op, &**r),
        (None, Some(c)) => (c, flip(op), &**l),
        _ => return None,
    };
    (value.ty() == key.types[col]).then_some((col, op, value))
}

/// The partition constraint of `table` when it is a partition: its place in its parent's
/// descriptor, and its parent's in the grandparent's, up to the root.
pub fn partition_check(catalog: &Catalog, table: &TableDef) -> PgResult<Option<PartitionCheck>> {
    let mut levels = Vec::new();
    let mut child = table.oid;
    let mut at = table.partition_of().map(|(parent, _)| *parent);
    while let Some(parent_oid) = at {
        let Some(parent) = catalog.tables.get(&parent_oid) else {
            break;
        };
        let (desc, _) = partitions(catalog, parent)?;
        let Some(i) = desc.oids().iter().position(|&o| o == child) else {
            break;
        };
        levels.push((desc, i));
        child = parent.oid;
        at = parent.partition_of().map(|(p, _)| *p);
    }
    Ok((!levels.is_empty()).then_some(PartitionCheck { levels }))
}

/// The routing of an INSERT into `table` (a partitioned table), with the partition indexes
/// that stand for `on_conflict`'s arbiters.
pub(crate) fn routing(
    catalog: &Catalog,
    table: &Arc<TableDef>,
    on_conflict: Option<&OnConflict>,
) -> PgResult<Routing> {
    routing_below(catalog, table, table, on_conflict)
}

fn routing_below(
    catalog: &Catalog,
    root: &TableDef,
    table: &Arc<TableDef>,
    on_conflict: Option<&OnConflict>,
) -> PgResult<Routing> {
    let (desc, parts) = partitions(catalog, table)?;
    let mut targets = Vec::with_capacity(parts.len());
    for part in parts {
        targets.push(if part.partition_key().is_some() {
            RouteTarget::Sub(Box::new(routing_below(catalog, root, &part, on_conflict)?))
        } else {
            let arbiters = match on_conflict {
                Some(oc) => leaf_arbiters(catalog, &part, &oc.arbiters),
                None => Vec::new(),
            };
            let own = leaf_constraints(catalog, root, &part)?;
            RouteTarget::Leaf {
                table: part,
                arbiters,
                own,
            }
        });
    }
    Ok(Routing {
        table: table.clone(),
        desc,
        targets,
    })
}

/// What partition `part` checks beyond `root`, the table the statement writes through.
fn leaf_constraints(
    catalog: &Catalog,
    root: &TableDef,
    part: &TableDef,
) -> PgResult<LeafConstraints> {
    let not_null = (part.columns.iter().zip(&root.columns).enumerate())
        .filter(|(_, (p, r))| p.not_null && !r.not_null)
        .map(|(i, _)| i)
        .collect();
    let extra: Vec<_> = (part.checks.iter())
        .filter(|c| {
            !root
                .checks
                .iter()
                .any(|r| r.name == c.name && r.expr == c.expr)
        })
        .cloned()
        .collect();
    let checks = if extra.is_empty() {
        Vec::new()
    } else {
        let mut only = part.clone();
        only.checks = extra;
        keel_analyzer::bind::Binder::new(catalog, &[], "", 0).check_exprs(&only)?
    };
    Ok(LeafConstraints { not_null, checks })
}

/// The partition's unique indexes on the same columns as `arbiters` (each partition got
/// one per unique index of its parent).
fn leaf_arbiters(
    catalog: &Catalog,
    part: &TableDef,
    arbiters: &[Arc<IndexDef>],
) -> Vec<Arc<IndexDef>> {
    let mut out: Vec<Arc<IndexDef>> = Vec::new();
    for a in arbiters {
        if let Some(i) = catalog
            .indexes_of(part.oid)
            .find(|i| i.unique && i.columns == a.columns && !out.iter().any(|o| o.oid == i.oid))
        {
            out.push(i.clone());
        }
    }
    out
}
