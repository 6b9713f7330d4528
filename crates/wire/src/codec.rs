//! Message codec: decoding frontend messages from complete frames and encoding backend messages
//! into an output buffer.
//!
//! Decoding borrows from the frame (`&Bytes`): strings are `&str` views and Bind parameters are
//! `Bytes` slices of the frame, so a Bind costs no copy of its values. Encoding appends to a
//! `BytesMut` and patches the length word afterwards, so a DataRow costs no allocation.

use crate::backend::FieldDescription;
use bytes::{BufMut, Bytes, BytesMut};
use keel_common::{Oid, PgError, PgResult, sqlstate};

/// Upper bound for Query, Parse, Bind, CopyData, FunctionCall and SASL messages (PostgreSQL's
/// `PQ_LARGE_MESSAGE_LIMIT`, MaxAllocSize - 1).
pub const LARGE_MESSAGE_LIMIT: usize = 0x3fff_fffe;
/// Upper bound for every other message type (PostgreSQL's `PQ_SMALL_MESSAGE_LIMIT`): a garbage
/// length on a Sync or Terminate is caught without waiting for a gigabyte.
pub const SMALL_MESSAGE_LIMIT: usize = 10_000;
/// Upper bound of a startup packet (PostgreSQL's `MAX_STARTUP_PACKET_LENGTH`).
pub const MAX_STARTUP_PACKET_LENGTH: usize = 10_000;

pub const PROTOCOL_3_0: i32 = 196_608;
pub const SSL_REQUEST_CODE: i32 = 80_877_103;
pub const GSSENC_REQUEST_CODE: i32 = 80_877_104;
pub const CANCEL_REQUEST_CODE: i32 = 80_877_102;

fn protocol_error(msg: impl Into<String>) -> PgError {
    PgError::new(sqlstate::PROTOCOL_VIOLATION, msg)
}

fn fatal_protocol(msg: impl Into<String>) -> PgError {
    PgError::fatal(sqlstate::PROTOCOL_VIOLATION, msg)
}

/// Validates a regular message header. The error is FATAL: the stream cannot be re-synchronised.
pub fn check_header(tag: u8, len: i32) -> PgResult<usize> {
    let limit = match tag {
        b'Q' | b'P' | b'B' | b'd' | b'F' | b'p' => LARGE_MESSAGE_LIMIT,
        b'C' | b'D' | b'E' | b'H' | b'S' | b'X' | b'c' | b'f' => SMALL_MESSAGE_LIMIT,
        _ => {
            return Err(fatal_protocol(format!(
                "invalid frontend message type {tag}"
            )));
        }
    };
    if len < 4 || len as usize - 4 > limit {
        return Err(fatal_protocol("invalid message length"));
    }
    Ok(len as usize - 4)
}

/// A frontend message of the query phase, borrowing from its frame.
#[derive(Debug, PartialEq)]
pub enum FrontendMessage<'a> {
    Query(&'a str),
    Parse {
        name: &'a str,
        sql: &'a str,
        param_types: Vec<Oid>,
    },
    Bind {
        portal: &'a str,
        statement: &'a str,
        param_formats: Vec<i16>,
        params: Vec<Option<Bytes>>,
        result_formats: Vec<i16>,
    },
    /// `kind` is `b'S'` or `b'P'`.
    Describe {
        kind: u8,
        name: &'a str,
    },
    /// `max_rows` 0 means all rows.
    Execute {
        portal: &'a str,
        max_rows: u32,
    },
    Close {
        kind: u8,
        name: &'a str,
    },
    Sync,
    Flush,
    Terminate,
    CopyData(Bytes),
    CopyDone,
    CopyFail(&'a str),
    FunctionCall,
    /// SASLInitialResponse or SASLResponse; only meaningful during authentication.
    Password(Bytes),
}

/// A cursor over a message body with PostgreSQL's `pq_getmsg*` error messages.
pub struct Reader<'a> {
    frame: &'a Bytes,
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(frame: &'a Bytes) -> Self {
        Reader { frame, pos: 0 }
    }

    fn remaining(&self) -> usize {
        self.frame.len() - self.pos
    }

    fn take(&mut self, n: usize) -> PgResult<&'a [u8]> {
        if n > self.remaining() {
            return Err(protocol_error("insufficient data left in message"));
        }
        let frame: &'a [u8] = self.frame.as_ref();
        let s = &frame[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn i16(&mut self) -> PgResult<i16> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    pub fn i32(&mut self) -> PgResult<i32> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn u8(&mut self) -> PgResult<u8> {
        Ok(self.take(1)?[0])
    }

    /// A NUL-terminated UTF-8 string.
    pub fn cstr(&mut self) -> PgResult<&'a str> {
        let frame: &'a [u8] = self.frame.as_ref();
        let rest = &frame[self.pos..];
        let nul = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| protocol_error("invalid string in message"))?;
        let s = utf8(&rest[..nul])?;
        self.pos += nul + 1;
        Ok(s)
    }

    /// `n` bytes as a zero-copy slice of the frame.
    pub fn bytes(&mut self, n: usize) -> PgResult<Bytes> {
        if n > self.remaining() {
            return Err(protocol_error("insufficient data left in message"));
        }
        let b = self.frame.slice(self.pos..self.pos + n);
        self.pos += n;
        Ok(b)
    }

    pub fn rest(&mut self) -> Bytes {
        let b = self.frame.slice(self.pos..);
        self.pos = self.frame.len();
        b
    }

    /// PostgreSQL's `pq_getmsgend`.
    pub fn end(&self) -> PgResult<()> {
        if self.remaining() != 0 {
            return Err(protocol_error("invalid message format"));
        }
        Ok(())
    }

    /// A count of the items that follow, each at least `item` bytes long. Counts are unsigned
    /// 16-bit, as PostgreSQL reads them (`pq_getmsgint(msg, 2)`): up to 65,535 parameters.
    /// A count larger than the bytes present is garbage, refused before anything is allocated.
    fn count(&mut self, item: usize) -> PgResult<usize> {
        let b = self.take(2)?;
        let n = u16::from_be_bytes([b[0], b[1]]) as usize;
        if n * item > self.remaining() {
            return Err(protocol_error("insufficient data left in message"));
        }
        Ok(n)
    }
}

pub fn utf8(b: &[u8]) -> PgResult<&str> {
    std::str::from_utf8(b).map_err(|e| {
        let bad = &b[e.valid_up_to()..];
        let hex: Vec<String> = bad
            .iter()
            .take(e.error_len().unwrap_or(1).max(1))
            .map(|x| format!("0x{x:02x}"))
            .collect();
        PgError::new(
            sqlstate::CHARACTER_NOT_IN_REPERTOIRE,
            format!(
                "invalid byte sequence for encoding \"UTF8\": {}",
                hex.join(" ")
            ),
        )
    })
}

/// Text a client sends as a value (a text-format Bind parameter, a binary string): valid
/// UTF-8 without NUL bytes, which no PostgreSQL text value can hold. The first bad byte is
/// reported, as PostgreSQL's encoding check does: `invalid byte sequence for encoding "UTF8":
/// 0x00` (22021).
pub fn client_text(b: &[u8]) -> PgResult<&str> {
    let nul = b.iter().position(|&x| x == 0);
    let s = utf8(&b[..nul.unwrap_or(b.len())])?;
    if nul.is_some() {
        return Err(PgError::new(
            sqlstate::CHARACTER_NOT_IN_REPERTOIRE,
            "invalid byte sequence for encoding \"UTF8\": 0x00",
        ));
    }
    Ok(s)
}

/// Decodes the body of a message whose header passed [`check_header`]. Errors are ERROR-level
/// protocol violations: the framing is intact, so the connection can go on.
pub fn decode(tag: u8, frame: &Bytes) -> PgResult<FrontendMessage<'_>> {
    let mut r = Reader::new(frame);
    let msg = match tag {
        b'Q' => FrontendMessage::Query(r.cstr()?),
        b'P' => {
            let name = r.cstr()?;
            let sql = r.cstr()?;
            let n = r.count(4)?;
            let mut param_types = Vec::with_capacity(n);
            for _ in 0..n {
                param_types.push(r.i32()? as u32);
            }
            FrontendMessage::Parse {
                name,
                sql,
                param_types,
            }
        }
        b'B' => {
            let portal = r.cstr()?;
            let statement = r.cstr()?;
            let nf = r.count(2)?;
            let mut param_formats = Vec::with_capacity(nf);
            for _ in 0..nf {
                param_formats.push(r.i16()?);
            }
            let np = r.count(4)?;
            if nf > 1 && nf != np {
                return Err(protocol_error(format!(
                    "bind message has {nf} parameter formats but {np} parameters"
                )));
            }
            let mut params = Vec::with_capacity(np);
            for _ in 0..np {
                let len = r.i32()?;
                if len == -1 {
                    params.push(None);
                } else if len < 0 {
                    return Err(protocol_error("insufficient data left in message"));
                } else {
                    params.push(Some(r.bytes(len as usize)?));
                }
            }
            let nr = r.count(2)?;
            let mut result_formats = Vec::with_capacity(nr);
            for _ in 0..nr {
                result_formats.push(r.i16()?);
            }
            FrontendMessage::Bind {
                portal,
                statement,
                param_formats,
                params,
                result_formats,
            }
        }
        b'D' | b'C' => {
            let kind = r.u8()?;
            let name = r.cstr()?;
            if kind != b'S' && kind != b'P' {
                let what = if tag == b'D' { "DESCRIBE" } else { "CLOSE" };
                return Err(protocol_error(format!(
                    "invalid {what} message subtype {kind}"
                )));
            }
            if tag == b'D' {
                FrontendMessage::Describe { kind, name }
            } else {
                FrontendMessage::Close { kind, name }
            }
        }
        b'E' => {
            let portal = r.cstr()?;
            let max_rows = r.i32()?;
            FrontendMessage::Execute {
                portal,
                max_rows: max_rows.max(0) as u32,
            }
        }
        b'S' => FrontendMessage::Sync,
        b'H' => FrontendMessage::Flush,
        b'X' => FrontendMessage::Terminate,
        b'd' => FrontendMessage::CopyData(r.rest()),
        b'c' => FrontendMessage::CopyDone,
        b'f' => FrontendMessage::CopyFail(r.cstr()?),
        b'F' => {
            r.rest();
            FrontendMessage::FunctionCall
        }
        b'p' => FrontendMessage::Password(r.rest()),
        _ => {
            return Err(fatal_protocol(format!(
                "invalid frontend message type {tag}"
            )));
        }
    };
    r.end()?;
    Ok(msg)
}

/// The first packet of a connection (it has no type byte).
#[derive(Debug, PartialEq)]
pub enum StartupPacket {
    Ssl,
    GssEnc,
    Cancel {
        pid: i32,
        secret: i32,
    },
    /// Protocol 3.x: the minor version and the name/value pairs.
    Startup {
        minor: u16,
        params: Vec<(String, String)>,
    },
}

/// Decodes a startup packet body (after its length word). Errors are FATAL.
pub fn decode_startup(body: &Bytes) -> PgResult<StartupPacket> {
    let mut r = Reader::new(body);
    let code = r
        .i32()
        .map_err(|_| fatal_protocol("invalid length of startup packet"))?;
    match code {
        SSL_REQUEST_CODE => return Ok(StartupPacket::Ssl),
        GSSENC_REQUEST_CODE => return Ok(StartupPacket::GssEnc),
        CANCEL_REQUEST_CODE => {
            let pid = r
                .i32()
                .map_err(|_| fatal_protocol("invalid length of startup packet"))?;
            let secret = r
                .i32()
                .map_err(|_| fatal_protocol("invalid length of startup packet"))?;
            return Ok(StartupPacket::Cancel { pid, secret });
        }
        _ => {}
    }
    let major = (code as u32) >> 16;
    let minor = (code as u32 & 0xffff) as u16;
    if major != 3 {
        return Err(PgError::fatal(
            sqlstate::FEATURE_NOT_SUPPORTED,
            format!("unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0"),
        ));
    }
    let layout =
        || fatal_protocol("invalid startup packet layout: expected terminator as last byte");
    let mut params = Vec::new();
    loop {
        let name = r.cstr().map_err(|e| {
            if e.code == sqlstate::PROTOCOL_VIOLATION {
                layout()
            } else {
                as_fatal(e)
            }
        })?;
        if name.is_empty() {
            break;
        }
        let value = r.cstr().map_err(|e| {
            if e.code == sqlstate::PROTOCOL_VIOLATION {
                layout()
            } else {
                as_fatal(e)
            }
        })?;
        params.push((name.to_string(), value.to_string()));
    }
    if r.end().is_err() {
        return Err(layout());
    }
    Ok(StartupPacket::Startup { minor, params })
}

fn as_fatal(mut e: PgError) -> PgError {
    e.severity = keel_common::Severity::Fatal;
    e
}

// ---------------------------------------------------------------------------------------------
// Backend messages.

/// Starts a message: tag plus a length placeholder. Returns the length word's offset.
#[inline]
fn begin(buf: &mut BytesMut, tag: u8) -> usize {
    buf.put_u8(tag);
    let at = buf.len();
    buf.put_i32(0);
    at
}

/// Patches the length word written by [`begin`].
#[inline]
fn finish(buf: &mut BytesMut, at: usize) {
    let len = (buf.len() - at) as i32;
    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

#[inline]
fn put_cstr(buf: &mut BytesMut, s: &str) {
    // A NUL inside a string would corrupt framing; PostgreSQL never has them in text either.
    if s.as_bytes().contains(&0) {
        buf.extend(s.bytes().filter(|&b| b != 0));
    } else {
        buf.extend_from_slice(s.as_bytes());
    }
    buf.put_u8(0);
}

pub fn auth_request(buf: &mut BytesMut, code: i32, data: &[u8]) {
    let at = begin(buf, b'R');
    buf.put_i32(code);
    buf.extend_from_slice(data);
    finish(buf, at);
}

pub fn parameter_status(buf: &mut BytesMut, name: &str, value: &str) {
    let at = begin(buf, b'S');
    put_cstr(buf, name);
    put_cstr(buf, value);
    finish(buf, at);
}

pub fn backend_key_data(buf: &mut BytesMut, pid: i32, secret: i32) {
    let at = begin(buf, b'K');
    buf.put_i32(pid);
    buf.put_i32(secret);
    finish(buf, at);
}

pub fn negotiate_protocol_version(buf: &mut BytesMut, newest_minor: i32, unrecognized: &[&str]) {
    let at = begin(buf, b'v');
    buf.put_i32(newest_minor);
    buf.put_i32(unrecognized.len() as i32);
    for o in unrecognized {
        put_cstr(buf, o);
    }
    finish(buf, at);
}

pub fn ready_for_query(buf: &mut BytesMut, status: u8) {
    buf.extend_from_slice(&[b'Z', 0, 0, 0, 5, status]);
}

/// A message with no body (ParseComplete '1', BindComplete '2', CloseComplete '3', NoData 'n',
/// PortalSuspended 's', EmptyQueryResponse 'I', CopyDone 'c').
#[inline]
pub fn empty(buf: &mut BytesMut, tag: u8) {
    buf.extend_from_slice(&[tag, 0, 0, 0, 4]);
}

pub fn command_complete(buf: &mut BytesMut, tag: &str) {
    let at = begin(buf, b'C');
    put_cstr(buf, tag);
    finish(buf, at);
}

pub fn parameter_description(buf: &mut BytesMut, types: &[Oid]) {
    let at = begin(buf, b't');
    buf.put_i16(types.len() as i16);
    for &t in types {
        buf.put_u32(t);
    }
    finish(buf, at);
}

pub fn row_description(buf: &mut BytesMut, fields: &[FieldDescription]) {
    let at = begin(buf, b'T');
    buf.put_i16(fields.len() as i16);
    for f in fields {
        put_cstr(buf, &f.name);
        buf.put_u32(f.table_oid);
        buf.put_i16(f.column_attnum);
        buf.put_u32(f.type_oid);
        buf.put_i16(f.type_len);
        buf.put_i32(f.type_modifier);
        buf.put_i16(f.format);
    }
    finish(buf, at);
}

/// DataRow: the hot path of every SELECT. One reserve, then straight copies.
#[inline]
pub fn data_row(buf: &mut BytesMut, values: &[Option<&[u8]>]) {
    let payload: usize = values.iter().map(|v| 4 + v.map_or(0, <[u8]>::len)).sum();
    buf.reserve(7 + payload);
    buf.put_u8(b'D');
    buf.put_i32((6 + payload) as i32);
    buf.put_i16(values.len() as i16);
    for v in values {
        match v {
            Some(b) => {
                buf.put_i32(b.len() as i32);
                buf.extend_from_slice(b);
            }
            None => buf.put_i32(-1),
        }
    }
}

/// ErrorResponse ('E') or NoticeResponse ('N') with fields S, V, C, M, D, H, P, s, t, c, d, n.
pub fn error_fields(buf: &mut BytesMut, tag: u8, e: &PgError) {
    let at = begin(buf, tag);
    let sev = e.severity.as_str();
    buf.put_u8(b'S');
    put_cstr(buf, sev);
    buf.put_u8(b'V');
    put_cstr(buf, sev);
    buf.put_u8(b'C');
    put_cstr(buf, e.code);
    buf.put_u8(b'M');
    put_cstr(buf, &e.message);
    if let Some(d) = &e.detail {
        buf.put_u8(b'D');
        put_cstr(buf, d);
    }
    if let Some(h) = &e.hint {
        buf.put_u8(b'H');
        put_cstr(buf, h);
    }
    if let Some(p) = e.position {
        buf.put_u8(b'P');
        put_cstr(buf, &p.to_string());
    }
    if let Some(o) = &e.objects {
        for (tag, v) in [
            (b's', &o.schema),
            (b't', &o.table),
            (b'c', &o.column),
            (b'd', &o.datatype),
            (b'n', &o.constraint),
        ] {
            if let Some(v) = v {
                buf.put_u8(tag);
                put_cstr(buf, v);
            }
        }
        if let Some(p) = o.internal_position {
            buf.put_u8(b'p');
            put_cstr(buf, &p.to_string());
        }
        if let Some(q) = &o.internal_query {
            buf.put_u8(b'q');
            put_cstr(buf, q);
        }
        if let Some(w) = &o.context {
            buf.put_u8(b'W');
            put_cstr(buf, w);
        }
    }
    buf.put_u8(0);
    finish(buf, at);
}

/// CopyInResponse ('G') / CopyOutResponse ('H'): overall format and per-column formats.
pub fn copy_response(buf: &mut BytesMut, tag: u8, binary: bool, columns: usize) {
    let at = begin(buf, tag);
    let f = i16::from(binary);
    buf.put_i8(f as i8);
    buf.put_i16(columns as i16);
    for _ in 0..columns {
        buf.put_i16(f);
    }
    finish(buf, at);
}

pub fn copy_data(buf: &mut BytesMut, data: &[u8]) {
    buf.reserve(5 + data.len());
    buf.put_u8(b'd');
    buf.put_i32((4 + data.len()) as i32);
    buf.extend_from_slice(data);
}

#[cfg(test)]
mod tests;
