//! The byte form of `TableStats`, kept in the WAL and in checkpoint files. Little-endian:
//! `[version u8][reltuples f64][relpages u32][ncols u16]`, then per column `[present u8]`
//! and, when present, `[type oid u32][null_frac f32][avg_width i32][n_distinct f32]
//! [has_corr u8][correlation f32][mcv: values][nfreqs u16][freqs f32 …][histogram: values]`,
//! where values are `[len u32]` and a row (keel_types::row) of that many columns of the type.

use crate::{ColumnStats, TableStats};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::row::{decode_row, encode_row};
use keel_types::{Datum, TypeId};

const VERSION: u8 = 1;

pub fn encode(s: &TableStats, out: &mut Vec<u8>) {
    out.push(VERSION);
    out.extend_from_slice(&s.reltuples.to_le_bytes());
    out.extend_from_slice(&s.relpages.to_le_bytes());
    out.extend_from_slice(&(s.columns.len() as u16).to_le_bytes());
    for c in &s.columns {
        let Some(c) = c else {
            out.push(0);
            continue;
        };
        out.push(1);
        out.extend_from_slice(&c.ty.oid().to_le_bytes());
        out.extend_from_slice(&c.null_frac.to_le_bytes());
        out.extend_from_slice(&c.avg_width.to_le_bytes());
        out.extend_from_slice(&c.n_distinct.to_le_bytes());
        out.push(c.correlation.is_some() as u8);
        out.extend_from_slice(&c.correlation.unwrap_or(0.0).to_le_bytes());
        values(&c.mcv_values, c.ty, out);
        out.extend_from_slice(&(c.mcv_freqs.len() as u16).to_le_bytes());
        for f in &c.mcv_freqs {
            out.extend_from_slice(&f.to_le_bytes());
        }
        values(&c.histogram, c.ty, out);
    }
}

fn values(v: &[Datum], ty: TypeId, out: &mut Vec<u8>) {
    let mut row = Vec::new();
    encode_row(v, &vec![ty; v.len()], &mut row);
    out.extend_from_slice(&(row.len() as u32).to_le_bytes());
    out.extend_from_slice(&row);
}

fn corrupt() -> PgError {
    PgError::new(sqlstate::DATA_CORRUPTED, "corrupt table statistics")
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> PgResult<&'a [u8]> {
        let s = self.b.get(self.at..self.at + n).ok_or_else(corrupt)?;
        self.at += n;
        Ok(s)
    }
    fn arr<const N: usize>(&mut self) -> PgResult<[u8; N]> {
        self.take(N)?.try_into().map_err(|_| corrupt())
    }
    fn u8(&mut self) -> PgResult<u8> {
        Ok(self.take(1)?[0])
    }
    fn values(&mut self, ty: TypeId) -> PgResult<Vec<Datum>> {
        let len = u32::from_le_bytes(self.arr()?) as usize;
        let row = self.take(len)?;
        if row.len() < 2 {
            return Err(corrupt());
        }
        let n = u16::from_le_bytes([row[0], row[1]]) as usize;
        decode_row(row, &vec![ty; n])
    }
}

/// Decodes `encode`'s bytes; corrupt input is XX001, never a panic.
pub fn decode(b: &[u8]) -> PgResult<TableStats> {
    let mut r = Reader { b, at: 0 };
    if r.u8()? != VERSION {
        return Err(corrupt());
    }
    let reltuples = f64::from_le_bytes(r.arr()?);
    let relpages = u32::from_le_bytes(r.arr()?);
    let ncols = u16::from_le_bytes(r.arr()?) as usize;
    let mut columns = Vec::with_capacity(ncols);
    for _ in 0..ncols {
        if r.u8()? == 0 {
            columns.push(None);
            continue;
        }
        let ty = TypeId::from_oid(u32::from_le_bytes(r.arr()?)).ok_or_else(corrupt)?;
        let null_frac = f32::from_le_bytes(r.arr()?);
        let avg_width = i32::from_le_bytes(r.arr()?);
        let n_distinct = f32::from_le_bytes(r.arr()?);
        let has_corr = r.u8()? != 0;
        let corr = f32::from_le_bytes(r.arr()?);
        let mcv_values = r.values(ty)?;
        let nfreqs = u16::from_le_bytes(r.arr()?) as usize;
        let mut mcv_freqs = Vec::with_capacity(nfreqs.min(b.len()));
        for _ in 0..nfreqs {
            mcv_freqs.push(f32::from_le_bytes(r.arr()?));
        }
        if mcv_freqs.len() != mcv_values.len() {
            return Err(corrupt());
        }
        let histogram = r.values(ty)?;
        columns.push(Some(ColumnStats {
            ty,
            null_frac,
            avg_width,
            n_distinct,
            mcv_values,
            mcv_freqs,
            histogram,
            correlation: has_corr.then_some(corr),
        }));
    }
    if r.at != b.len() {
        return Err(corrupt());
    }
    Ok(TableStats {
        reltuples,
        relpages,
        columns,
    })
}
