//! Arrays: PostgreSQL's array value (any number of dimensions up to [`MAXDIM`], each with a
//! length and a lower bound, elements in row-major order, NULL elements allowed) and the
//! conversions every array type shares: text input/output (`array_in`/`array_out`), the
//! binary wire form (`array_send`/`array_recv`), the stored row form, the memcomparable key
//! and the comparison B-tree and hashing use.
//!
//! An array with no elements has no dimensions (`'{}'`), as in PostgreSQL. The element type
//! travels with the value, so output, comparison and the generic array functions need no
//! type context.

use crate::{Datum, SqlType, TypeId};
use keel_common::{PgError, PgResult, sqlstate};
use std::cmp::Ordering;

/// PostgreSQL's MAXDIM.
pub const MAXDIM: usize = 6;

/// The largest number of elements an array may have (PostgreSQL's MaxArraySize).
pub const MAX_ITEMS: usize = (1 << 30) / std::mem::size_of::<u64>() - 1;

/// One dimension: its length and the subscript of its first element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim {
    pub len: i32,
    pub lower: i32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    pub elem: TypeId,
    pub dims: Vec<Dim>,
    pub items: Vec<Datum>,
}

impl Array {
    /// A one-dimensional array with lower bound 1 (empty when `items` is).
    pub fn from_items(elem: TypeId, items: Vec<Datum>) -> Array {
        let dims = if items.is_empty() {
            Vec::new()
        } else {
            vec![Dim {
                len: items.len() as i32,
                lower: 1,
            }]
        };
        Array { elem, dims, items }
    }

    pub fn empty(elem: TypeId) -> Array {
        Array {
            elem,
            dims: Vec::new(),
            items: Vec::new(),
        }
    }

    pub fn ndims(&self) -> usize {
        self.dims.len()
    }

    pub fn has_nulls(&self) -> bool {
        self.items.iter().any(Datum::is_null)
    }

    /// Heap bytes held (for memory accounting).
    pub fn heap_bytes(&self) -> usize {
        crate::datum::alloc_size(self.items.capacity() * std::mem::size_of::<Datum>())
            + self.items.iter().map(Datum::heap_bytes).sum::<usize>()
            + crate::datum::alloc_size(self.dims.capacity() * 8)
            + 48
    }

    /// Checks the element count PostgreSQL allows (54000).
    pub fn check_size(nitems: usize) -> PgResult<()> {
        if nitems > MAX_ITEMS {
            return Err(size_exceeded());
        }
        Ok(())
    }
}

pub fn too_many_dims(n: usize) -> PgError {
    PgError::new(
        sqlstate::PROGRAM_LIMIT_EXCEEDED,
        format!("number of array dimensions ({n}) exceeds the maximum allowed ({MAXDIM})"),
    )
}

// ---------------------------------------------------------------- text output

fn needs_quotes(s: &str) -> bool {
    s.is_empty()
        || s.eq_ignore_ascii_case("NULL")
        || s.bytes().any(|c| {
            matches!(
                c,
                b'"' | b'\\' | b'{' | b'}' | b',' | b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c
            )
        })
}

/// `array_out`: `{1,2,NULL}`, `{{1,2},{3,4}}`, `[0:1]={a,b}` when a lower bound is not 1;
/// elements that are empty, `NULL`, or hold braces, commas, quotes, backslashes or white
/// space are double-quoted with `"` and `\` escaped.
pub fn write_text(a: &Array, out: &mut String) {
    if a.dims.is_empty() {
        out.push_str("{}");
        return;
    }
    if a.dims.iter().any(|d| d.lower != 1) {
        for d in &a.dims {
            out.push('[');
            out.push_str(itoa::Buffer::new().format(d.lower));
            out.push(':');
            out.push_str(itoa::Buffer::new().format(d.lower as i64 + d.len as i64 - 1));
            out.push(']');
        }
        out.push('=');
    }
    let nd = a.dims.len();
    // Subscript counters per dimension (0-based): an element opens a brace for each
    // innermost dimension whose counter is 0 and closes one for each counter that wraps.
    let mut idx = vec![0i32; nd];
    let mut elem = String::new();
    for (n, v) in a.items.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        for _ in 0..idx.iter().rev().take_while(|&&i| i == 0).count() {
            out.push('{');
        }
        match v {
            Datum::Null => out.push_str("NULL"),
            v => {
                elem.clear();
                crate::io::format_text(v, a.elem, &mut elem);
                if needs_quotes(&elem) {
                    out.push('"');
                    for c in elem.chars() {
                        if c == '"' || c == '\\' {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                    out.push('"');
                } else {
                    out.push_str(&elem);
                }
            }
        }
        let mut k = nd;
        while k > 0 {
            k -= 1;
            idx[k] += 1;
            if idx[k] < a.dims[k].len {
                break;
            }
            idx[k] = 0;
            out.push('}');
        }
    }
}

// ---------------------------------------------------------------- text input

fn malformed(input: &str, detail: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_TEXT_REPRESENTATION,
        format!("malformed array literal: \"{input}\""),
    )
    .with_detail(detail)
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// One scanned element: its text (escapes resolved) and whether it is an unquoted NULL.
struct Scanned {
    text: String,
    null: bool,
}

struct Reader<'a> {
    input: &'a str,
    b: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn skip_space(&mut self) {
        while self.pos < self.b.len() && is_space(self.b[self.pos]) {
            self.pos += 1;
        }
    }

    fn err(&self, detail: &str) -> PgError {
        malformed(self.input, detail)
    }

    fn int(&mut self) -> PgResult<i32> {
        let start = self.pos;
        if matches!(self.b.get(self.pos), Some(b'-' | b'+')) {
            self.pos += 1;
        }
        while self.b.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        self.input[start..self.pos]
            .parse::<i32>()
            .map_err(|_| self.err("\"[\" must introduce explicitly-specified array dimensions."))
    }

    /// `[lb:ub][lb:ub]...=`: the declared dimensions.
    fn dimensions(&mut self) -> PgResult<Vec<Dim>> {
        let mut dims = Vec::new();
        while self.b.get(self.pos) == Some(&b'[') {
            self.pos += 1;
            self.skip_space();
            if dims.len() == MAXDIM {
                return Err(too_many_dims(MAXDIM + 1));
            }
            let first = self.int()?;
            self.skip_space();
            let (lower, upper) = if self.b.get(self.pos) == Some(&b':') {
                self.pos += 1;
                self.skip_space();
                let u = self.int()?;
                (first, u)
            } else {
                (1, first)
            };
            self.skip_space();
            if self.b.get(self.pos) != Some(&b']') {
                return Err(self.err("Missing \"]\" after array dimensions."));
            }
            self.pos += 1;
            if (upper as i64) < lower as i64 - 1 {
                return Err(PgError::new(
                    sqlstate::ARRAY_SUBSCRIPT_ERROR,
                    "upper bound cannot be less than lower bound",
                ));
            }
            dims.push(Dim {
                len: (upper as i64 - lower as i64 + 1) as i32,
                lower,
            });
            self.skip_space();
        }
        if !dims.is_empty() {
            if self.b.get(self.pos) != Some(&b'=') {
                return Err(self.err("Missing \"=\" after array dimensions."));
            }
            self.pos += 1;
            self.skip_space();
        }
        Ok(dims)
    }

    fn element(&mut self) -> PgResult<Scanned> {
        let mut text = String::new();
        if self.b.get(self.pos) == Some(&b'"') {
            self.pos += 1;
            let mut run = self.pos;
            loop {
                match self.b.get(self.pos) {
                    None => return Err(self.err("Unexpected end of input.")),
                    Some(b'"') => break,
                    Some(b'\\') => {
                        text.push_str(&self.input[run..self.pos]);
                        self.pos += 1;
                        if self.pos >= self.b.len() {
                            return Err(self.err("Unexpected end of input."));
                        }
                        run = self.pos;
                        self.pos += 1;
                    }
                    Some(_) => self.pos += 1,
                }
            }
            text.push_str(&self.input[run..self.pos]);
            self.pos += 1;
            self.skip_space();
            return Ok(Scanned { text, null: false });
        }
        // Unquoted: up to the next delimiter, trailing white space trimmed unless escaped.
        let mut escaped = false;
        let mut keep = 0; // length of `text` that trailing-space trimming must not cut
        let mut run = self.pos;
        loop {
            match self.b.get(self.pos) {
                None => return Err(self.err("Unexpected end of input.")),
                Some(b',' | b'}') => break,
                Some(b'{') => return Err(self.err("Unexpected \"{\" character.")),
                Some(b'"') => return Err(self.err("Unexpected array element.")),
                Some(b'\\') => {
                    text.push_str(&self.input[run..self.pos]);
                    self.pos += 1;
                    let Some(c) = self.input[self.pos..].chars().next() else {
                        return Err(self.err("Unexpected end of input."));
                    };
                    text.push(c);
                    self.pos += c.len_utf8();
                    keep = text.len();
                    escaped = true;
                    run = self.pos;
                }
                Some(_) => self.pos += 1,
            }
        }
        text.push_str(&self.input[run..self.pos]);
        let trimmed = text.trim_end_matches(|c: char| c.is_ascii() && is_space(c as u8));
        let cut = trimmed.len().max(keep);
        text.truncate(cut);
        let null = !escaped && text.eq_ignore_ascii_case("NULL");
        Ok(Scanned { text, null })
    }

    /// Reads one `{...}` level at depth `depth` (the `{` is current), appending elements to
    /// `items` and recording each level's length in `lens` (checked for consistency).
    fn level(
        &mut self,
        depth: usize,
        lens: &mut Vec<Option<i32>>,
        items: &mut Vec<Scanned>,
    ) -> PgResult<()> {
        if depth >= MAXDIM {
            return Err(too_many_dims(depth + 1));
        }
        self.pos += 1; // '{'
        self.skip_space();
        if lens.len() <= depth {
            lens.push(None);
        }
        let mut count = 0i32;
        let mut sub: Option<bool> = None; // whether this level holds sub-arrays
        if self.b.get(self.pos) == Some(&b'}') {
            self.pos += 1;
        } else {
            loop {
                self.skip_space();
                let is_sub = self.b.get(self.pos) == Some(&b'{');
                match sub {
                    None => sub = Some(is_sub),
                    Some(s) if s != is_sub => {
                        return Err(self.err(if is_sub {
                            "Unexpected \"{\" character."
                        } else {
                            "Unexpected array element."
                        }));
                    }
                    _ => {}
                }
                if is_sub {
                    self.level(depth + 1, lens, items)?;
                    self.skip_space();
                } else {
                    if lens.len() > depth + 1 {
                        return Err(self.err(
                            "Multidimensional arrays must have sub-arrays with matching dimensions.",
                        ));
                    }
                    items.push(self.element()?);
                }
                count += 1;
                match self.b.get(self.pos) {
                    Some(b',') => self.pos += 1,
                    Some(b'}') => {
                        self.pos += 1;
                        break;
                    }
                    None => return Err(self.err("Unexpected end of input.")),
                    Some(b'{') => return Err(self.err("Unexpected \"{\" character.")),
                    Some(_) => return Err(self.err("Unexpected array element.")),
                }
            }
        }
        if sub == Some(false) && lens.len() > depth + 1 {
            return Err(
                self.err("Multidimensional arrays must have sub-arrays with matching dimensions.")
            );
        }
        match lens[depth] {
            None => lens[depth] = Some(count),
            Some(n) if n != count => {
                return Err(self.err(
                    "Multidimensional arrays must have sub-arrays with matching dimensions.",
                ));
            }
            _ => {}
        }
        Ok(())
    }
}

/// `int2vectorin` / `oidvectorin`: elements separated by white space, each read by the
/// element type's input function; the result is one-dimensional with lower bound 0.
pub fn parse_vector(input: &str, vector: TypeId) -> PgResult<Array> {
    let elem = vector.elem().unwrap_or(TypeId::Int2);
    let items = input
        .split(|c: char| c.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .map(|w| crate::io::parse_text(w, SqlType::new(elem)))
        .collect::<PgResult<Vec<_>>>()?;
    Ok(vector_of(elem, items))
}

/// A vector's value: its items at subscripts 0.., one dimension even when empty (PostgreSQL
/// shows `''::int2vector` as `[0:-1]`).
pub fn vector_of(elem: TypeId, items: Vec<Datum>) -> Array {
    Array {
        elem,
        dims: vec![Dim {
            len: items.len() as i32,
            lower: 0,
        }],
        items,
    }
}

/// `int2vectorout` / `oidvectorout`: the elements separated by single spaces.
pub fn write_vector(a: &Array, out: &mut String) {
    for (i, v) in a.items.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        crate::io::format_text(v, a.elem, out);
    }
}

/// `array_in`: parses the text form of an array whose elements have type `elem` (its
/// typmod applies to each element).
pub fn parse_text(input: &str, elem: SqlType) -> PgResult<Array> {
    parse_text_with(input, elem.id, &mut |text| {
        crate::io::parse_text(text, elem)
    })
}

/// `array_in` with the elements read by `read`: an array of a composite type reads each
/// element with the type's fields (`record::parse_text`).
pub fn parse_text_with(
    input: &str,
    elem: TypeId,
    read: &mut dyn FnMut(&str) -> PgResult<Datum>,
) -> PgResult<Array> {
    let mut r = Reader {
        input,
        b: input.as_bytes(),
        pos: 0,
    };
    r.skip_space();
    let declared = r.dimensions()?;
    if r.b.get(r.pos) != Some(&b'{') {
        return Err(r.err("Array value must start with \"{\" or dimension information."));
    }
    let mut lens = Vec::new();
    let mut scanned = Vec::new();
    r.level(0, &mut lens, &mut scanned)?;
    r.skip_space();
    if r.pos < r.b.len() {
        return Err(r.err("Junk after closing right brace."));
    }
    let mut dims: Vec<Dim> = if scanned.is_empty() {
        Vec::new()
    } else {
        lens.iter()
            .map(|l| Dim {
                len: l.unwrap_or(0),
                lower: 1,
            })
            .collect()
    };
    if !declared.is_empty() {
        let matches =
            declared.len() == dims.len() && declared.iter().zip(&dims).all(|(d, a)| d.len == a.len);
        let empty_declared = scanned.is_empty() && declared.iter().any(|d| d.len == 0);
        if !(matches || empty_declared) {
            return Err(r.err("Specified array dimensions do not match array contents."));
        }
        if !scanned.is_empty() {
            dims = declared;
        }
    }
    Array::check_size(scanned.len())?;
    let mut items = Vec::with_capacity(scanned.len());
    for s in scanned {
        items.push(if s.null { Datum::Null } else { read(&s.text)? });
    }
    Ok(Array { elem, dims, items })
}

// ---------------------------------------------------------------- binary I/O

fn bin_err(msg: impl Into<String>) -> PgError {
    PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, msg.into())
}

/// `array_send`: ndim, has-nulls flag, element type oid, (length, lower bound) per
/// dimension, then each element as a length word (-1 for NULL) and its binary form.
/// `elem` is the column's declared element type (a value built from varchar reports text).
pub fn write_binary(a: &Array, elem: TypeId, out: &mut Vec<u8>) {
    out.extend_from_slice(&(a.dims.len() as i32).to_be_bytes());
    out.extend_from_slice(&(a.has_nulls() as i32).to_be_bytes());
    out.extend_from_slice(&elem.oid().to_be_bytes());
    for d in &a.dims {
        out.extend_from_slice(&d.len.to_be_bytes());
        out.extend_from_slice(&d.lower.to_be_bytes());
    }
    for v in &a.items {
        if v.is_null() {
            out.extend_from_slice(&(-1i32).to_be_bytes());
            continue;
        }
        let at = out.len();
        out.extend_from_slice(&[0; 4]);
        crate::io::format_binary(v, a.elem, out);
        let len = (out.len() - at - 4) as i32;
        out[at..at + 4].copy_from_slice(&len.to_be_bytes());
    }
}

fn be_i32(b: &[u8], pos: &mut usize) -> PgResult<i32> {
    let s = b
        .get(*pos..*pos + 4)
        .ok_or_else(crate::io::insufficient_data)?;
    *pos += 4;
    Ok(i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// PostgreSQL's FirstGenbkiObjectId: OIDs below it are built in and the same everywhere.
const FIRST_GENBKI_OID: u32 = 10000;

/// What PostgreSQL's `format_type_extended(oid, -1, FORMAT_TYPE_ALLOW_INVALID)` prints for a
/// type OID: `-` for 0, `???` for an OID that names no type.
fn type_name_for_message(oid: u32) -> &'static str {
    match TypeId::from_oid(oid) {
        _ if oid == 0 => "-",
        Some(t) => t.name(),
        None => "???",
    }
}

fn size_exceeded() -> PgError {
    PgError::new(
        sqlstate::PROGRAM_LIMIT_EXCEEDED,
        format!("array size exceeds the maximum allowed ({MAX_ITEMS})"),
    )
}

/// `array_recv` for an array of `elem`: the array and the number of bytes it took from the
/// front of `b` (anything after it is the caller's to report). The checks and messages are
/// PostgreSQL's, in its order: a value cut short is 08P01, a malformed header or element
/// 22P03, an element type other than `elem` 42804 (only when both are built-in types;
/// otherwise the data is read as `elem`), sizes and bounds past int4 54000.
pub fn read_binary(b: &[u8], elem: SqlType) -> PgResult<(Array, usize)> {
    let mut pos = 0;
    let ndim = be_i32(b, &mut pos)?;
    if ndim < 0 {
        return Err(bin_err(format!("invalid number of dimensions: {ndim}")));
    }
    if ndim as usize > MAXDIM {
        return Err(too_many_dims(ndim as usize));
    }
    let flags = be_i32(b, &mut pos)?;
    if flags != 0 && flags != 1 {
        return Err(bin_err("invalid array flags"));
    }
    let oid = be_i32(b, &mut pos)? as u32;
    let want = elem.id.oid();
    if oid != want && oid < FIRST_GENBKI_OID && want < FIRST_GENBKI_OID {
        return Err(PgError::new(
            sqlstate::DATATYPE_MISMATCH,
            format!(
                "binary data has array element type {oid} ({}) instead of expected {want} ({})",
                type_name_for_message(oid),
                type_name_for_message(want),
            ),
        ));
    }
    let mut dims = Vec::with_capacity(ndim as usize);
    for _ in 0..ndim {
        let len = be_i32(b, &mut pos)?;
        let lower = be_i32(b, &mut pos)?;
        dims.push(Dim { len, lower });
    }
    // ArrayGetNItems, then ArrayCheckBounds.
    let mut nitems: usize = if ndim == 0 { 0 } else { 1 };
    for d in &dims {
        if d.len < 0 {
            return Err(size_exceeded());
        }
        nitems = i32::try_from(nitems as i64 * d.len as i64).map_err(|_| size_exceeded())? as usize;
    }
    Array::check_size(nitems)?;
    for d in &dims {
        if d.len.checked_add(d.lower).is_none() {
            return Err(PgError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!("array lower bound is too large: {}", d.lower),
            ));
        }
    }
    if nitems == 0 {
        dims.clear();
    }
    let mut items = Vec::with_capacity(nitems.min(b.len() / 4));
    for number in 1..=nitems {
        let len = be_i32(b, &mut pos)?;
        if len == -1 {
            items.push(Datum::Null);
            continue;
        }
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| pos.checked_add(l))
            .filter(|&e| e <= b.len())
            .ok_or_else(|| bin_err("insufficient data left in message"))?;
        let (value, used) = crate::io::recv_binary(&b[pos..end], elem)?;
        if used != end - pos {
            return Err(bin_err(format!(
                "improper binary format in array element {number}"
            )));
        }
        items.push(value);
        pos = end;
    }
    let array = Array {
        elem: elem.id,
        dims,
        items,
    };
    Ok((array, pos))
}

// ---------------------------------------------------------------- stored form

/// The stored (row) form, after the row's u32 length word: `[ndim u8]`, per dimension
/// `[len i32][lower i32]` little-endian, then the elements as a row of `nitems` columns of
/// the element type (`row.rs`: count, null bitmap, values).
pub fn encode_stored(a: &Array, out: &mut Vec<u8>) {
    out.push(a.dims.len() as u8);
    for d in &a.dims {
        out.extend_from_slice(&d.len.to_le_bytes());
        out.extend_from_slice(&d.lower.to_le_bytes());
    }
    out.extend_from_slice(&(a.items.len() as u32).to_le_bytes());
    let bitmap = out.len();
    out.resize(bitmap + a.items.len().div_ceil(8), 0);
    for (i, v) in a.items.iter().enumerate() {
        if !crate::row::encode_element(v, a.elem, out) {
            out[bitmap + i / 8] |= 1 << (i % 8);
        }
    }
}

/// Reads the stored form written by [`encode_stored`] (XX001 on corrupt bytes).
pub fn decode_stored(b: &[u8], elem: TypeId) -> PgResult<Array> {
    let corrupt = || PgError::new(sqlstate::DATA_CORRUPTED, "corrupt array data");
    let ndim = *b.first().ok_or_else(corrupt)? as usize;
    if ndim > MAXDIM {
        return Err(corrupt());
    }
    let mut pos = 1;
    let mut dims = Vec::with_capacity(ndim);
    let le = |pos: &mut usize| -> PgResult<i32> {
        let s = b.get(*pos..*pos + 4).ok_or_else(corrupt)?;
        *pos += 4;
        Ok(i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    };
    for _ in 0..ndim {
        let len = le(&mut pos)?;
        let lower = le(&mut pos)?;
        dims.push(Dim { len, lower });
    }
    let n = le(&mut pos)? as u32 as usize;
    let bitmap = pos;
    pos += n.div_ceil(8);
    if pos > b.len() || n > b.len() * 8 {
        return Err(corrupt());
    }
    let mut items = Vec::with_capacity(n);
    for i in 0..n {
        if b[bitmap + i / 8] & (1 << (i % 8)) != 0 {
            items.push(Datum::Null);
        } else {
            items.push(crate::row::decode_element(b, &mut pos, elem)?);
        }
    }
    Ok(Array { elem, dims, items })
}

// ---------------------------------------------------------------- order and keys

/// PostgreSQL's `array_cmp`: element by element (NULL after every value), then the
/// shorter array first, then fewer dimensions first, then dimension lengths and lower bounds.
pub fn compare(a: &Array, b: &Array) -> Ordering {
    for (x, y) in a.items.iter().zip(&b.items) {
        let o = crate::ops::compare_typed(x, y, a.elem);
        if o != Ordering::Equal {
            return o;
        }
    }
    a.items
        .len()
        .cmp(&b.items.len())
        .then(a.dims.len().cmp(&b.dims.len()))
        .then_with(|| {
            for (x, y) in a.dims.iter().zip(&b.dims) {
                let o = x.len.cmp(&y.len).then(x.lower.cmp(&y.lower));
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        })
}

/// Memcomparable key of an array, ordered as [`compare`]: each element's column key (tag
/// 0x01 value / 0x02 NULL), a 0x00 terminator (a prefix sorts first), then the number of
/// dimensions and each dimension's length and lower bound, sign-flipped big-endian.
pub fn encode_key(a: &Array, out: &mut Vec<u8>) {
    for v in &a.items {
        crate::key::encode_key_value(v, a.elem, out);
    }
    out.push(0);
    out.push(a.dims.len() as u8);
    for d in &a.dims {
        out.extend_from_slice(&((d.len as u32) ^ (1 << 31)).to_be_bytes());
        out.extend_from_slice(&((d.lower as u32) ^ (1 << 31)).to_be_bytes());
    }
}
