//! System columns: `tableoid`, the oid of the table a row was read from. It is no column of
//! the table's (not in `*`, not in the scan's rows): a name no user column has resolves to it
//! here. A plain table's rows all have its oid; a row read through a partitioned table has
//! its leaf partition's, which routing its key names (`keel_catalog::partition_tree`).

use super::{Binder, Scope};
use crate::expr::{Expr, Special, TableOidOf};
use keel_catalog::TableDef;
use keel_catalog::partition_tree::PartitionTree;
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::{Datum, TypeId};
use std::sync::Arc;

impl Binder<'_> {
    /// The system column `name` (qualified by `qual`) of a table in `scope`, or None when
    /// `name` is no system column or no table in scope has it.
    pub(crate) fn system_column(
        &self,
        qual: Option<&str>,
        name: &str,
        scope: &Scope,
    ) -> Option<PgResult<Expr>> {
        if name != "tableoid" {
            return None;
        }
        let mut found: Option<(usize, Arc<TableDef>)> = None;
        let mut i = 0;
        while i < scope.cols.len() {
            match self.table_at(scope, i, qual) {
                Some(t) => {
                    if found.is_some() {
                        return Some(Err(PgError::new(
                            sqlstate::AMBIGUOUS_COLUMN,
                            format!("column reference \"{name}\" is ambiguous"),
                        )));
                    }
                    let n = t.columns.len();
                    found = Some((i, t));
                    i += n.max(1);
                }
                None => i += 1,
            }
        }
        let (at, table) = found?;
        Some(self.table_oid_expr(at, &table))
    }

    /// The table whose columns, all of them in order, start at `scope.cols[i]` (under the
    /// qualifier `qual`, when given).
    fn table_at(&self, scope: &Scope, i: usize, qual: Option<&str>) -> Option<Arc<TableDef>> {
        let c = &scope.cols[i];
        if c.table_oid == 0
            || c.attnum != 1
            || qual.is_some_and(|q| c.qualifier.as_deref() != Some(q))
        {
            return None;
        }
        let t = self.catalog.tables.get(&c.table_oid)?;
        let range = scope.cols.get(i..i + t.columns.len())?;
        let whole = range.iter().enumerate().all(|(k, r)| {
            r.table_oid == t.oid && r.attnum as usize == k + 1 && r.qualifier == c.qualifier
        });
        whole.then(|| t.clone())
    }

    fn table_oid_expr(&self, at: usize, table: &TableDef) -> PgResult<Expr> {
        if table.partition_key().is_none() {
            return Ok(Expr::Const(Datum::Oid(table.oid), TypeId::Oid));
        }
        let tree = PartitionTree::build(self.catalog, table)?;
        let columns = tree.key_columns();
        let args = (columns.iter())
            .map(|&c| Expr::Col(at + c, table.columns[c].ty.id))
            .collect();
        let of = Arc::new(TableOidOf { tree, columns });
        Ok(Expr::Special(Special::TableOid(of, args), TypeId::Oid))
    }
}
