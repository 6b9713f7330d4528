//! How a scan turns stored rows into values, and the equalities it can test on a row's stored
//! bytes before decoding it.

use crate::api::Prefilter;
use keel_catalog::TableDef;
use keel_common::PgResult;
use keel_types::{Datum, TypeId};
use std::cell::Cell;
use std::sync::Arc;

/// Rows a pre-filter may hold back in a row before one goes up anyway: the reader's interrupt
/// checks (cancel, statement_timeout) run per row it sees, and a scan that rejects millions
/// of rows must still see them.
const HELD_BACK_MAX: u32 = 64;

pub(crate) fn column_types(table: &TableDef) -> Vec<TypeId> {
    table.columns.iter().map(|c| c.ty.id).collect()
}

/// The table's column types, the columns the reader needs (None: all; the others come back
/// NULL, never decoded), and the reader's pre-filter.
pub(crate) struct Decoder {
    types: Vec<TypeId>,
    columns: Option<Arc<[bool]>>,
    prefilter: Option<Arc<Prefilter>>,
    /// Rows the pre-filter held back since the last one that went up.
    held_back: Cell<u32>,
}

impl Decoder {
    /// `also`: columns the scan itself reads whatever its reader needs (an index's key
    /// columns, to recheck entries).
    pub(crate) fn new(table: &TableDef, columns: Option<Arc<[bool]>>, also: &[usize]) -> Decoder {
        let columns = match columns {
            Some(c) if also.iter().any(|&i| !c.get(i).copied().unwrap_or(true)) => {
                let mut c = c.to_vec();
                for &i in also {
                    if let Some(w) = c.get_mut(i) {
                        *w = true;
                    }
                }
                Some(c.into())
            }
            c => c,
        };
        Decoder {
            types: column_types(table),
            columns,
            prefilter: None,
            held_back: Cell::new(0),
        }
    }

    /// Tests `prefilter` on each row's stored bytes before decoding it (see [`Self::passes`]).
    pub(crate) fn with_prefilter(mut self, prefilter: Option<Arc<Prefilter>>) -> Decoder {
        self.prefilter = prefilter.filter(|p| !p.is_empty());
        self
    }

    pub(crate) fn width(&self) -> usize {
        self.types.len()
    }

    pub(crate) fn decode(&self, bytes: &[u8]) -> PgResult<Vec<Datum>> {
        let mut out = Vec::with_capacity(self.types.len());
        self.decode_into(bytes, &mut out)?;
        Ok(out)
    }

    /// [`Self::decode`], appending the values to `out`.
    pub(crate) fn decode_into(&self, bytes: &[u8], out: &mut Vec<Datum>) -> PgResult<()> {
        let wanted = self.columns.as_deref().unwrap_or(&[]);
        keel_types::row::decode_row_cols_into(bytes, &self.types, wanted, out)
    }

    /// Whether the row whose stored bytes are `bytes` goes up to the reader: false when the
    /// pre-filter proves the reader's WHERE false for it, except that one row in
    /// `HELD_BACK_MAX` goes up regardless (the reader re-tests every row it gets).
    pub(crate) fn passes(&self, bytes: &[u8]) -> PgResult<bool> {
        let Some(p) = &self.prefilter else {
            return Ok(true);
        };
        if self.fails(p, bytes)? {
            let held = self.held_back.get() + 1;
            if held < HELD_BACK_MAX {
                self.held_back.set(held);
                return Ok(false);
            }
        }
        self.held_back.set(0);
        Ok(true)
    }

    /// Whether the row whose stored bytes are `bytes` fails `p`.
    fn fails(&self, p: &Prefilter, bytes: &[u8]) -> PgResult<bool> {
        for (column, want) in &p.equals {
            if keel_types::row::column_bytes(bytes, &self.types, *column)? != Some(&want[..]) {
                return Ok(true);
            }
        }
        if let Some((column, keys)) = &p.join_keys {
            let key = keel_types::row::int_value(bytes, &self.types, *column)?;
            return Ok(!key.is_some_and(|k| keys.contains(k)));
        }
        Ok(false)
    }

    /// [`Self::decode_into`] for a row that [`Self::passes`]; false for one held back (`out`
    /// unchanged).
    pub(crate) fn decode_passing_into(&self, bytes: &[u8], out: &mut Vec<Datum>) -> PgResult<bool> {
        if !self.passes(bytes)? {
            return Ok(false);
        }
        self.decode_into(bytes, out).map(|()| true)
    }
}
