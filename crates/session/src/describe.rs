//! Row descriptions and value encoding for the wire.

use keel_common::{PgError, PgResult, sqlstate};
use keel_sql::plan::OutColumn;
use keel_types::{Datum, SqlType, TypeId};
use keel_wire::FieldDescription;

pub fn field(c: &OutColumn, format: i16) -> FieldDescription {
    FieldDescription {
        name: c.name.clone(),
        table_oid: c.table_oid,
        column_attnum: c.attnum,
        type_oid: c.ty.oid(),
        type_len: c.ty.typlen(),
        type_modifier: c.typmod,
        format,
    }
}

/// The protocol's 0/1/n format-code convention.
pub fn format_for(formats: &[i16], i: usize) -> i16 {
    match formats.len() {
        0 => 0,
        1 => formats[0],
        _ => formats.get(i).copied().unwrap_or(0),
    }
}

pub fn fields(cols: &[OutColumn], formats: &[i16]) -> Vec<FieldDescription> {
    cols.iter()
        .enumerate()
        .map(|(i, c)| field(c, format_for(formats, i)))
        .collect()
}

pub fn text_column(name: &str) -> OutColumn {
    OutColumn {
        name: name.to_string(),
        ty: TypeId::Text,
        typmod: -1,
        table_oid: 0,
        attnum: 0,
    }
}

/// Decodes Bind parameter number `number` (from 1).
pub fn decode_param(
    bytes: Option<&[u8]>,
    ty: TypeId,
    format: i16,
    number: usize,
) -> PgResult<Datum> {
    let Some(b) = bytes else {
        return Ok(Datum::Null);
    };
    match format {
        // PostgreSQL checks a text parameter's encoding before its type's input function
        // sees it: invalid UTF-8 and NUL bytes are 22021, whatever the type.
        0 => keel_types::io::parse_text(keel_wire::codec::client_text(b)?, SqlType::new(ty)),
        1 => {
            // The binary form of the string types is the text itself (textrecv and friends),
            // checked the same way.
            if matches!(
                ty,
                TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name | TypeId::Unknown
            ) {
                keel_wire::codec::client_text(b)?;
            }
            let (value, used) = keel_types::io::recv_binary(b, SqlType::new(ty))?;
            if used != b.len() {
                return Err(PgError::new(
                    sqlstate::INVALID_BINARY_REPRESENTATION,
                    format!("incorrect binary data format in bind parameter {number}"),
                ));
            }
            Ok(value)
        }
        f => Err(PgError::new(
            sqlstate::PROTOCOL_VIOLATION,
            format!("unsupported format code: {f}"),
        )),
    }
}

/// Encodes rows and sends them as DataRows.
pub struct RowWriter {
    text: Vec<String>,
    bin: Vec<Vec<u8>>,
    /// For the names of regclass values in text format (only when a column is regclass).
    catalog: Option<std::sync::Arc<keel_catalog::Catalog>>,
}

/// A value buffer that grew past this is dropped after its row, so one huge value does not
/// keep its memory for the rest of the result.
const KEEP_CAPACITY: usize = 1 << 20;

impl RowWriter {
    /// A writer for rows of `cols`; `catalog` is asked for only when a column is regclass.
    pub fn new(
        cols: &[OutColumn],
        catalog: impl FnOnce() -> std::sync::Arc<keel_catalog::Catalog>,
    ) -> RowWriter {
        let regclass = cols.iter().any(|c| c.ty == TypeId::RegClass);
        RowWriter {
            text: Vec::new(),
            bin: Vec::new(),
            catalog: regclass.then(catalog),
        }
    }

    /// Sends one DataRow. PostgreSQL builds the message in one buffer (a 2-byte count, then
    /// per column a 4-byte length and the value), which fails with 54000 past 1 GB; so does
    /// keel, before the message is written.
    pub fn send<C: keel_wire::Client>(
        &mut self,
        client: &mut C,
        row: &[Datum],
        cols: &[OutColumn],
        formats: &[i16],
    ) -> PgResult<()> {
        use keel_types::limits;
        let n = row.len();
        self.text.resize(n, String::new());
        self.bin.resize(n, Vec::new());
        let mut len = 2usize;
        for (i, d) in row.iter().enumerate() {
            let ty = cols.get(i).map_or(TypeId::Text, |c| c.ty);
            limits::enlarge(len, 4)?;
            len += 4;
            if d.is_null() {
                continue;
            }
            let bytes = if format_for(formats, i) == 1 {
                self.bin[i].clear();
                keel_types::io::format_binary(d, ty, &mut self.bin[i]);
                self.bin[i].len()
            } else {
                limits::text_out(d)?;
                self.text[i].clear();
                match (ty, d, &self.catalog) {
                    (TypeId::RegClass, Datum::Oid(oid), Some(cat)) => match cat.relation_name(*oid)
                    {
                        Some(name) => self.text[i].push_str(name),
                        None => keel_types::io::format_text(d, ty, &mut self.text[i]),
                    },
                    _ => keel_types::io::format_text(d, ty, &mut self.text[i]),
                }
                self.text[i].len()
            };
            limits::enlarge(len, bytes)?;
            len += bytes;
        }
        let vals: Vec<Option<&[u8]>> = row
            .iter()
            .enumerate()
            .map(|(i, d)| {
                if d.is_null() {
                    None
                } else if format_for(formats, i) == 1 {
                    Some(self.bin[i].as_slice())
                } else {
                    Some(self.text[i].as_bytes())
                }
            })
            .collect();
        client.data_row(&vals);
        for t in &mut self.text {
            if t.capacity() > KEEP_CAPACITY {
                *t = String::new();
            }
        }
        for b in &mut self.bin {
            if b.capacity() > KEEP_CAPACITY {
                *b = Vec::new();
            }
        }
        Ok(())
    }
}
