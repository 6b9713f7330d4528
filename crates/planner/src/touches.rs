//! The tables a plan reads or writes, and how: what the session locks before running it
//! (PostgreSQL's modes: ACCESS SHARE to read, ROW SHARE for a foreign-key check's
//! referenced row, ROW EXCLUSIVE to write).

use crate::plan::{ModifyKind, ModifyPlan, Plan, QueryPlan};
use keel_catalog::TableDef;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Touch {
    Read,
    /// A row another table's foreign key refers to is checked (and kept) by this write.
    KeyShare,
    Write,
}

/// Tables and how a statement touches them; a table appears once per kind of touch.
pub type Touches = Vec<(Arc<TableDef>, Touch)>;

fn add(out: &mut Touches, t: &Arc<TableDef>, how: Touch) {
    if !out.iter().any(|(o, h)| o.oid == t.oid && *h == how) {
        out.push((t.clone(), how));
    }
}

/// The tables scanned by `plans` (walked without recursion).
fn reads<'a>(plans: impl IntoIterator<Item = &'a Plan>, out: &mut Touches) {
    let mut todo: Vec<&Plan> = plans.into_iter().collect();
    while let Some(p) = todo.pop() {
        match p {
            Plan::Scan { table, .. } => add(out, table, Touch::Read),
            // The partitioned table alone: its lock covers the partitions (see
            // partition.rs).
            Plan::Append { table, .. } => add(out, table, Touch::Read),
            Plan::IndexNestLoop { outer, table, .. } => {
                add(out, table, Touch::Read);
                todo.push(outer);
            }
            Plan::Values { .. }
            | Plan::Function { .. }
            | Plan::SystemView(_)
            | Plan::NamedRows { .. } => {}
            Plan::LockRows { input, table, .. } => {
                // SELECT ... FOR UPDATE / SHARE takes ROW SHARE on its table.
                add(out, table, Touch::KeyShare);
                todo.push(input);
            }
            Plan::Filter { input, .. }
            | Plan::Project { input, .. }
            | Plan::Agg { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Limit { input, .. }
            | Plan::Distinct { input, .. } => todo.push(input),
            Plan::Join { left, right, .. } | Plan::SetOp { left, right, .. } => {
                todo.push(left);
                todo.push(right);
            }
            Plan::SemiJoin { input, inner, .. } => {
                todo.push(input);
                todo.push(inner);
            }
        }
    }
}

impl QueryPlan {
    pub fn touches(&self) -> Touches {
        let mut out = Vec::new();
        reads(
            std::iter::once(&self.root).chain(self.subplans.iter().flatten()),
            &mut out,
        );
        out
    }
}

impl ModifyPlan {
    pub fn touches(&self) -> Touches {
        let mut out = Vec::new();
        add(&mut out, &self.table, Touch::Write);
        let source = match &self.kind {
            ModifyKind::Insert { source, .. } => Some(source),
            _ => None,
        };
        let view_rows = self.instead_of.as_ref().and_then(|i| i.rows.as_ref());
        reads(
            source
                .into_iter()
                .chain(view_rows)
                .chain(self.subplans.iter().flatten()),
            &mut out,
        );
        for fk in &self.fks {
            add(&mut out, &fk.ref_table, Touch::KeyShare);
        }
        // A referencing row's check reads the child; its cascades would write it.
        for r in &self.refs {
            add(&mut out, &r.child, Touch::Read);
        }
        out
    }
}
