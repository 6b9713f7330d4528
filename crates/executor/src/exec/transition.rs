//! The scan of a transition table (PostgreSQL's Named Tuplestore Scan): the rows a trigger's
//! firing statement wrote, read by a statement of the trigger function under the name its
//! REFERENCING clause gave them. The name is looked up in the evaluation context's
//! transition tables when the scan first runs, so a plan made once serves every firing.

use super::rowstore::RowStore;
use super::{Node, Row};
use crate::eval::EvalCx;
use keel_common::{PgError, PgResult, sqlstate};
use std::sync::Arc;

pub struct TransitionScan<'a> {
    name: &'a str,
    rows: Option<Arc<RowStore>>,
    pos: usize,
}

impl<'a> TransitionScan<'a> {
    pub fn new(name: &'a str) -> Self {
        TransitionScan {
            name,
            rows: None,
            pos: 0,
        }
    }
}

impl<'a> Node<'a> for TransitionScan<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        let rows = match &self.rows {
            Some(r) => r,
            None => {
                let t = ev
                    .transition
                    .iter()
                    .find(|t| t.name == self.name)
                    .ok_or_else(|| {
                        PgError::new(
                            sqlstate::UNDEFINED_TABLE,
                            format!("relation \"{}\" does not exist", self.name),
                        )
                    })?;
                self.rows.insert(t.rows.clone())
            }
        };
        if self.pos >= rows.len() {
            return Ok(None);
        }
        ev.tick()?;
        let row = rows.get(self.pos)?;
        self.pos += 1;
        Ok(Some(row))
    }
}
