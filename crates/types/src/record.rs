//! Composite values (PostgreSQL's row types): a row of a table, of a `CREATE TYPE ... AS`
//! type, or an anonymous `ROW(...)`. The conversions every composite type shares: text
//! input/output (`record_in` / `record_out`), the binary wire form (`record_send` /
//! `record_recv`), the stored row form, the comparison B-tree and hashing use, and the
//! memcomparable key.
//!
//! The field types travel with the value, as an array's element type does, so output,
//! comparison and storage need no catalog: only a field's *name* needs the type's
//! definition, and names are resolved when a statement is bound.

use crate::{Datum, SqlType, TypeId};
use keel_common::{PgError, PgResult, sqlstate};
use std::cmp::Ordering;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// `TypeId::Composite(oid)` for a named row type, `TypeId::Record` for an anonymous row.
    pub ty: TypeId,
    /// The fields' types, shared by every value an expression makes.
    pub types: Arc<[TypeId]>,
    pub values: Vec<Datum>,
}

impl Record {
    pub fn new(ty: TypeId, types: Arc<[TypeId]>, values: Vec<Datum>) -> Record {
        debug_assert_eq!(types.len(), values.len());
        Record { ty, types, values }
    }

    pub fn heap_bytes(&self) -> usize {
        let slots = crate::datum::alloc_size(self.values.capacity() * size_of::<Datum>());
        slots + self.values.iter().map(Datum::heap_bytes).sum::<usize>()
    }
}

// ---------------------------------------------------------------- text

/// `record_out`: `(v1,v2,...)`; a NULL field is empty, and a value that is empty or holds
/// a quote, backslash, parenthesis, comma or white space is double-quoted, with `"` and `\`
/// doubled inside.
pub fn write_text(r: &Record, out: &mut String) {
    out.push('(');
    let mut field = String::new();
    for (i, (v, ty)) in r.values.iter().zip(r.types.iter()).enumerate() {
        if i > 0 {
            out.push(',');
        }
        if v.is_null() {
            continue;
        }
        field.clear();
        crate::io::format_text(v, *ty, &mut field);
        let quote = field.is_empty()
            || field
                .bytes()
                .any(|c| matches!(c, b'"' | b'\\' | b'(' | b')' | b',') || c.is_ascii_whitespace());
        if quote {
            out.push('"');
        }
        for c in field.chars() {
            if c == '"' || c == '\\' {
                out.push(c);
            }
            out.push(c);
        }
        if quote {
            out.push('"');
        }
    }
    out.push(')');
}

fn malformed(input: &str, detail: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_TEXT_REPRESENTATION,
        format!("malformed record literal: \"{input}\""),
    )
    .with_detail(detail)
}

/// The text of a value of composite type `ty`, or of an array of one
/// (`TypeId::CompositeArray`), whose elements are each read by `record_in`.
pub fn parse_text_as(input: &str, ty: TypeId, fields: &[SqlType]) -> PgResult<Datum> {
    match ty {
        TypeId::CompositeArray(oid) => {
            let elem = TypeId::Composite(oid);
            let a = crate::array::parse_text_with(input, elem, &mut |text| {
                Ok(Datum::Record(Arc::new(parse_text(text, elem, fields)?)))
            })?;
            Ok(Datum::Array(Arc::new(a)))
        }
        _ => Ok(Datum::Record(Arc::new(parse_text(input, ty, fields)?))),
    }
}

/// `record_in`: reads `(f1,f2,...)` for fields of the given types. An unquoted empty field
/// is NULL; inside a field `"` starts and ends quoting (`""` within quotes is one quote) and
/// `\` takes the next character literally. White space around the parentheses is allowed.
pub fn parse_text(input: &str, ty: TypeId, fields: &[SqlType]) -> PgResult<Record> {
    let b = input.as_bytes();
    let mut pos = 0;
    while pos < b.len() && b[pos].is_ascii_whitespace() {
        pos += 1;
    }
    if b.get(pos) != Some(&b'(') {
        return Err(malformed(input, "Missing left parenthesis."));
    }
    pos += 1;
    let mut values = Vec::with_capacity(fields.len());
    let mut buf = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        match b.get(pos) {
            Some(b',') | Some(b')') => values.push(Datum::Null),
            _ => {
                buf.clear();
                let mut quoted = false;
                loop {
                    let Some(&c) = b.get(pos) else {
                        return Err(malformed(input, "Unexpected end of input."));
                    };
                    if !quoted && (c == b',' || c == b')') {
                        break;
                    }
                    pos += 1;
                    match c {
                        b'\\' => {
                            let Some(&n) = b.get(pos) else {
                                return Err(malformed(input, "Unexpected end of input."));
                            };
                            buf.push(n);
                            pos += 1;
                        }
                        b'"' if !quoted => quoted = true,
                        b'"' if b.get(pos) == Some(&b'"') => {
                            buf.push(b'"');
                            pos += 1;
                        }
                        b'"' => quoted = false,
                        _ => buf.push(c),
                    }
                }
                // The field's bytes are whole characters: only ASCII delimiters were removed.
                let text = std::str::from_utf8(&buf).map_err(|_| malformed(input, ""))?;
                values.push(crate::io::parse_text(text, *f)?);
            }
        }
        if b.get(pos) == Some(&b',') {
            if i + 1 == fields.len() {
                return Err(malformed(input, "Too many columns."));
            }
            pos += 1;
        } else if i + 1 < fields.len() {
            return Err(malformed(input, "Too few columns."));
        }
    }
    if b.get(pos) != Some(&b')') {
        return Err(malformed(input, "Too many columns."));
    }
    pos += 1;
    while pos < b.len() && b[pos].is_ascii_whitespace() {
        pos += 1;
    }
    if pos < b.len() {
        return Err(malformed(input, "Junk after right parenthesis."));
    }
    let types: Arc<[TypeId]> = fields.iter().map(|f| f.id).collect();
    Ok(Record::new(ty, types, values))
}

// ---------------------------------------------------------------- binary

/// `record_send`: the number of fields (int4), then per field its type's oid (int4), its
/// length (int4, -1 for NULL) and its binary form.
pub fn write_binary(r: &Record, out: &mut Vec<u8>) {
    out.extend_from_slice(&(r.values.len() as i32).to_be_bytes());
    for (v, ty) in r.values.iter().zip(r.types.iter()) {
        out.extend_from_slice(&ty.oid().to_be_bytes());
        if v.is_null() {
            out.extend_from_slice(&(-1i32).to_be_bytes());
            continue;
        }
        let len_at = out.len();
        out.extend_from_slice(&[0; 4]);
        crate::io::format_binary(v, *ty, out);
        let len = (out.len() - len_at - 4) as i32;
        out[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    }
}

/// `record_recv` for fields of the given types: the count and each field's type oid must
/// match (22P03, PostgreSQL's messages).
pub fn read_binary(b: &[u8], ty: TypeId, fields: &[SqlType]) -> PgResult<(Record, usize)> {
    let bad = |m: String| PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, m);
    let short = || {
        PgError::new(
            sqlstate::PROTOCOL_VIOLATION,
            "insufficient data left in message",
        )
    };
    let int = |pos: &mut usize| -> PgResult<i32> {
        let s = b.get(*pos..*pos + 4).ok_or_else(short)?;
        *pos += 4;
        Ok(i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    };
    let mut pos = 0;
    let n = int(&mut pos)?;
    if n != fields.len() as i32 {
        return Err(bad(format!(
            "wrong number of columns: {n}, expected {}",
            fields.len()
        )));
    }
    let mut values = Vec::with_capacity(fields.len());
    for (i, f) in fields.iter().enumerate() {
        let oid = int(&mut pos)? as u32;
        if oid != f.id.oid() {
            return Err(bad(format!(
                "binary data has type {oid} ({}) instead of expected {} ({}) in record column {}",
                TypeId::from_oid(oid).map_or("unknown", TypeId::name),
                f.id.oid(),
                f.id.name(),
                i + 1
            )));
        }
        let len = int(&mut pos)?;
        if len < 0 {
            values.push(Datum::Null);
            continue;
        }
        let body = b.get(pos..pos + len as usize).ok_or_else(short)?;
        values.push(crate::io::parse_binary(body, *f)?);
        pos += len as usize;
    }
    let types: Arc<[TypeId]> = fields.iter().map(|f| f.id).collect();
    Ok((Record::new(ty, types, values), pos))
}

// ---------------------------------------------------------------- stored form

/// The stored (row) form, after the row's u32 length word: the record's type oid (u32),
/// the number of fields (u16), each field's type oid (u32), then the values as a row of
/// those types (`row.rs`). Self-describing, so a nested record needs no catalog to read.
pub fn encode_stored(r: &Record, out: &mut Vec<u8>) {
    out.extend_from_slice(&r.ty.oid().to_le_bytes());
    out.extend_from_slice(&(r.types.len() as u16).to_le_bytes());
    for t in r.types.iter() {
        out.extend_from_slice(&t.oid().to_le_bytes());
    }
    crate::row::encode_row(&r.values, &r.types, out);
}

/// Reads the stored form written by [`encode_stored`] (XX001 on corrupt bytes).
pub fn decode_stored(b: &[u8]) -> PgResult<Record> {
    let corrupt = || PgError::new(sqlstate::DATA_CORRUPTED, "corrupt record data");
    let u32_at = |pos: usize| -> PgResult<u32> {
        let s = b.get(pos..pos + 4).ok_or_else(corrupt)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    };
    let ty = TypeId::from_oid(u32_at(0)?).unwrap_or(TypeId::Composite(u32_at(0)?));
    let n = b.get(4..6).ok_or_else(corrupt)?;
    let n = u16::from_le_bytes([n[0], n[1]]) as usize;
    let mut types = Vec::with_capacity(n);
    for i in 0..n {
        let oid = u32_at(6 + 4 * i)?;
        types.push(TypeId::from_oid(oid).unwrap_or(TypeId::Composite(oid)));
    }
    let rest = b.get(6 + 4 * n..).ok_or_else(corrupt)?;
    let values = crate::row::decode_row(rest, &types)?;
    Ok(Record::new(ty, types.into(), values))
}

// ---------------------------------------------------------------- order and keys

/// PostgreSQL's `record_cmp`: field by field, NULL after every value; a record with fewer
/// fields sorts first when the common fields are equal.
pub fn compare(a: &Record, b: &Record) -> Ordering {
    for ((x, y), ty) in a.values.iter().zip(&b.values).zip(a.types.iter()) {
        let o = crate::ops::compare_typed(x, y, *ty);
        if o != Ordering::Equal {
            return o;
        }
    }
    a.values.len().cmp(&b.values.len())
}

/// Memcomparable key of a record, ordered as [`compare`]: each field's column key, then a
/// 0x00 terminator.
pub fn encode_key(r: &Record, out: &mut Vec<u8>) {
    for (v, ty) in r.values.iter().zip(r.types.iter()) {
        crate::key::encode_key_value(v, *ty, out);
    }
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(values: Vec<Datum>, types: &[TypeId]) -> Record {
        Record::new(TypeId::Record, types.into(), values)
    }

    #[test]
    fn text_output_quotes_as_record_out() {
        let r = rec(
            vec![
                Datum::Int4(1),
                Datum::Text("a b".into()),
                Datum::Null,
                Datum::Text("x\"y".into()),
                Datum::Text(String::new()),
            ],
            &[
                TypeId::Int4,
                TypeId::Text,
                TypeId::Text,
                TypeId::Text,
                TypeId::Text,
            ],
        );
        let mut s = String::new();
        write_text(&r, &mut s);
        assert_eq!(s, r#"(1,"a b",,"x""y","")"#);
    }

    #[test]
    fn text_input_round_trips_and_reports_malformed() {
        let f = [SqlType::new(TypeId::Int4), SqlType::new(TypeId::Text)];
        let r = parse_text(r#" (1,"a ""b"" \\c") "#, TypeId::Record, &f).unwrap();
        assert_eq!(r.values[1], Datum::Text(r#"a "b" \c"#.into()));
        let r = parse_text("(,)", TypeId::Record, &f).unwrap();
        assert!(r.values.iter().all(Datum::is_null));
        for (bad, detail) in [
            ("1,2)", "Missing left parenthesis."),
            ("(1)", "Too few columns."),
            ("(1,2,3)", "Too many columns."),
            ("(1,2) x", "Junk after right parenthesis."),
            ("(1,\"2", "Unexpected end of input."),
        ] {
            let e = parse_text(bad, TypeId::Record, &f).unwrap_err();
            assert_eq!(e.detail.as_deref(), Some(detail), "{bad}");
        }
    }

    #[test]
    fn stored_and_binary_forms_round_trip() {
        let r = rec(
            vec![Datum::Int8(7), Datum::Null, Datum::Text("z".into())],
            &[TypeId::Int8, TypeId::Int4, TypeId::Text],
        );
        let mut b = Vec::new();
        encode_stored(&r, &mut b);
        assert_eq!(decode_stored(&b).unwrap(), r);
        let mut w = Vec::new();
        write_binary(&r, &mut w);
        let f: Vec<SqlType> = r.types.iter().map(|t| SqlType::new(*t)).collect();
        let (back, used) = read_binary(&w, TypeId::Record, &f).unwrap();
        assert_eq!((back, used), (r, w.len()));
    }
}
