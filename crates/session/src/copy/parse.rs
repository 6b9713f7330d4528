//! COPY FROM input, cut as PostgreSQL 15's `copyfromparse.c` cuts it: the byte stream into
//! logical lines (`CopyReadLineText`: end-of-line style fixed by the first line, `\.` end
//! marker, CSV quotes spanning newlines), then each line into fields
//! (`CopyReadAttributesText` / `CopyReadAttributesCSV`). Malformed input is an error (22P04,
//! 22021) naming what PostgreSQL names, never a silently shortened load.

use keel_common::{PgError, PgResult, sqlstate};
use std::ops::Range;

fn bad_format(msg: &str) -> PgError {
    PgError::new(sqlstate::BAD_COPY_FILE_FORMAT, msg)
}

/// PostgreSQL's `report_invalid_encoding`: the bytes of the first bad character (as many
/// as its lead byte announces, at most what is there).
fn invalid_encoding(bad: &[u8]) -> PgError {
    let lead = bad.first().copied().unwrap_or(0);
    let len = match lead {
        b if b & 0x80 == 0 => 1,
        b if b & 0xe0 == 0xc0 => 2,
        b if b & 0xf0 == 0xe0 => 3,
        b if b & 0xf8 == 0xf0 => 4,
        _ => 1,
    };
    let shown: Vec<String> = bad
        .iter()
        .take(len.min(bad.len()).max(1))
        .map(|b| format!("0x{b:02x}"))
        .collect();
    PgError::new(
        sqlstate::CHARACTER_NOT_IN_REPERTOIRE,
        format!(
            "invalid byte sequence for encoding \"UTF8\": {}",
            shown.join(" ")
        ),
    )
}

/// Checks `bytes` as PostgreSQL checks UTF-8 input: well-formed and no NUL byte.
pub(super) fn verify_utf8(bytes: &[u8]) -> PgResult<&str> {
    let nul = bytes.iter().position(|&b| b == 0);
    match std::str::from_utf8(bytes) {
        Ok(s) if nul.is_none() => Ok(s),
        Ok(_) => Err(invalid_encoding(&bytes[nul.unwrap_or(0)..])),
        Err(e) => {
            let at = nul.map_or(e.valid_up_to(), |n| n.min(e.valid_up_to()));
            Err(invalid_encoding(&bytes[at..]))
        }
    }
}

/// The input format: text or CSV, with the single-byte characters that matter to it.
pub(super) struct InputFormat {
    pub csv: bool,
    pub delim: u8,
    pub quote: u8,
    pub escape: u8,
    pub null: Vec<u8>,
}

/// The end-of-line style, fixed by the first line (PostgreSQL's `EolType`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Eol {
    Unknown,
    Nl,
    Cr,
    CrNl,
}

/// Cuts the COPY data stream into logical lines. Feed it CopyData payloads; `next_line`
/// hands out complete lines until it needs more input.
pub(super) struct LineReader {
    pub fmt: InputFormat,
    buf: Vec<u8>,
    /// Start of the line being read.
    start: usize,
    /// Where scanning resumes (CSV quote state below is as of this offset).
    scan: usize,
    in_quote: bool,
    last_was_esc: bool,
    eol: Eol,
    /// The `\.` marker or the end of data was reached: nothing after it is data.
    done: bool,
}

impl LineReader {
    pub fn new(fmt: InputFormat) -> Self {
        LineReader {
            fmt,
            buf: Vec::new(),
            start: 0,
            scan: 0,
            in_quote: false,
            last_was_esc: false,
            eol: Eol::Unknown,
            done: false,
        }
    }

    /// Appends a CopyData payload. Everything after the end marker is ignored, as in
    /// PostgreSQL. A line is PostgreSQL's line buffer, which takes the input a payload at a
    /// time: past 1 GB without a line end, 54000 as that buffer gives.
    pub fn feed(&mut self, data: &[u8]) -> PgResult<()> {
        if self.done {
            return Ok(());
        }
        let line_part = data
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .map_or(data.len(), |i| i + 1);
        keel_types::limits::enlarge(self.buf.len() - self.start, line_part)?;
        if self.start > 0 && self.start * 2 >= self.buf.len() {
            self.buf.drain(..self.start);
            self.scan -= self.start;
            self.start = 0;
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }

    pub fn line(&self, r: Range<usize>) -> &[u8] {
        &self.buf[r]
    }

    fn literal_cr(&self) -> PgError {
        if !self.fmt.csv {
            bad_format("literal carriage return found in data")
                .with_hint("Use \"\\r\" to represent carriage return.")
        } else {
            bad_format("unquoted carriage return found in data")
                .with_hint("Use quoted CSV field to represent carriage return.")
        }
    }

    fn literal_nl(&self) -> PgError {
        if !self.fmt.csv {
            bad_format("literal newline found in data")
                .with_hint("Use \"\\n\" to represent newline.")
        } else {
            bad_format("unquoted newline found in data")
                .with_hint("Use quoted CSV field to represent newline.")
        }
    }

    /// Finishes the line `start..end` (terminator excluded) whose terminator ends at `next`.
    fn take(&mut self, end: usize, next: usize) -> PgResult<Option<Range<usize>>> {
        let r = self.start..end;
        self.start = next;
        self.scan = next;
        self.in_quote = false;
        self.last_was_esc = false;
        verify_utf8(&self.buf[r.clone()])?;
        Ok(Some(r))
    }

    /// The next complete line (without its terminator), or `None` when more input is needed
    /// (`at_end` false) or the data is over (`at_end` true, or after the `\.` marker).
    pub fn next_line(&mut self, at_end: bool) -> PgResult<Option<Range<usize>>> {
        if self.done || (self.start >= self.buf.len() && at_end) {
            self.done |= at_end;
            return Ok(None);
        }
        let csv = self.fmt.csv;
        let quote = self.fmt.quote;
        // An escape equal to the quote needs no tracking here: the quote just toggles.
        let escape = Some(self.fmt.escape).filter(|&e| e != quote);
        let len = self.buf.len();
        let byte = |i: usize| if i < len { self.buf[i] } else { 0 };
        let mut i = self.scan;
        loop {
            if i >= len {
                if !at_end {
                    self.scan = i;
                    return Ok(None);
                }
                // Data ends without a line end: the rest is the last line.
                self.done = true;
                return self.take(len, len);
            }
            let c = self.buf[i];
            // A backslash or carriage return looks ahead (up to three bytes for `\.` and
            // its line end): wait for them before changing any state.
            if (c == b'\\' || c == b'\r') && i + 3 >= len && !at_end {
                self.scan = i;
                return Ok(None);
            }
            let at = i;
            i += 1;
            if csv {
                if self.in_quote && Some(c) == escape {
                    self.last_was_esc = !self.last_was_esc;
                }
                if c == quote && !self.last_was_esc {
                    self.in_quote = !self.in_quote;
                }
                if Some(c) != escape {
                    self.last_was_esc = false;
                }
            }
            if c == b'\r' && (!csv || !self.in_quote) {
                if matches!(self.eol, Eol::Unknown | Eol::CrNl) {
                    if byte(i) == b'\n' {
                        self.eol = Eol::CrNl;
                        return self.take(at, i + 1);
                    }
                    if self.eol == Eol::CrNl {
                        return Err(self.literal_cr());
                    }
                    self.eol = Eol::Cr;
                } else if self.eol == Eol::Nl {
                    return Err(self.literal_cr());
                }
                return self.take(at, i);
            }
            if c == b'\n' && (!csv || !self.in_quote) {
                if matches!(self.eol, Eol::Cr | Eol::CrNl) {
                    return Err(self.literal_nl());
                }
                self.eol = Eol::Nl;
                return self.take(at, i);
            }
            // In CSV `\.` ends the data only alone on a line (it is a valid value); in text
            // a backslash escapes the next byte, newline included.
            if c == b'\\' && (!csv || at == self.start) {
                if i >= len {
                    // A backslash as the very last byte: the line ends with it.
                    self.done = true;
                    return self.take(len, len);
                }
                if byte(i) != b'.' {
                    if !csv {
                        i += 1;
                    }
                    continue;
                }
                let mut j = i + 1;
                let mut marker = true;
                if self.eol == Eol::CrNl {
                    let c2 = byte(j);
                    j += 1;
                    if c2 == b'\n' {
                        if !csv {
                            return Err(bad_format(
                                "end-of-copy marker does not match previous newline style",
                            ));
                        }
                        marker = false;
                    } else if c2 != b'\r' {
                        if !csv {
                            return Err(bad_format("end-of-copy marker corrupt"));
                        }
                        marker = false;
                    }
                }
                let c2 = byte(j);
                if marker && c2 != b'\r' && c2 != b'\n' {
                    if !csv {
                        return Err(bad_format("end-of-copy marker corrupt"));
                    }
                    marker = false;
                }
                if !marker {
                    // A CSV data value starting with `\.`: go on after the backslash.
                    continue;
                }
                let style_differs = match self.eol {
                    Eol::Unknown => false,
                    Eol::Cr => c2 != b'\r',
                    Eol::Nl | Eol::CrNl => c2 != b'\n',
                };
                if style_differs {
                    return Err(bad_format(
                        "end-of-copy marker does not match previous newline style",
                    ));
                }
                self.done = true;
                if at == self.start {
                    return Ok(None);
                }
                return self.take(at, at);
            }
        }
    }

    /// Splits one line into fields (None = NULL), as `CopyReadAttributesText` / `...CSV`.
    pub fn fields(&self, line: &[u8]) -> PgResult<Vec<Option<String>>> {
        if self.fmt.csv {
            csv_fields(line, &self.fmt)
        } else {
            text_fields(line, &self.fmt)
        }
    }
}

fn owned(bytes: Vec<u8>) -> PgResult<String> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        invalid_encoding(&e.as_bytes()[at..])
    })
}

fn text_fields(line: &[u8], f: &InputFormat) -> PgResult<Vec<Option<String>>> {
    let mut out = Vec::new();
    let mut cur = 0;
    loop {
        let start = cur;
        let mut val: Vec<u8> = Vec::new();
        let mut saw_non_ascii = false;
        let mut found_delim = false;
        let mut end = line.len();
        while cur < line.len() {
            let mut c = line[cur];
            cur += 1;
            if c == f.delim {
                found_delim = true;
                end = cur - 1;
                break;
            }
            if c == b'\\' {
                if cur >= line.len() {
                    break;
                }
                c = line[cur];
                cur += 1;
                match c {
                    b'0'..=b'7' => {
                        let mut v = u32::from(c - b'0');
                        for _ in 0..2 {
                            match line.get(cur) {
                                Some(&d @ b'0'..=b'7') => {
                                    v = v * 8 + u32::from(d - b'0');
                                    cur += 1;
                                }
                                _ => break,
                            }
                        }
                        c = (v & 0xff) as u8;
                        saw_non_ascii |= c == 0 || c >= 0x80;
                    }
                    b'x' => {
                        let hex = |b: Option<&u8>| b.and_then(|b| (*b as char).to_digit(16));
                        if let Some(h) = hex(line.get(cur)) {
                            let mut v = h;
                            cur += 1;
                            if let Some(h2) = hex(line.get(cur)) {
                                v = v * 16 + h2;
                                cur += 1;
                            }
                            c = v as u8;
                            saw_non_ascii |= c == 0 || c >= 0x80;
                        }
                    }
                    b'b' => c = 0x08,
                    b'f' => c = 0x0c,
                    b'n' => c = b'\n',
                    b'r' => c = b'\r',
                    b't' => c = b'\t',
                    b'v' => c = 0x0b,
                    _ => {}
                }
            }
            val.push(c);
        }
        // NULL is recognised on the raw input, before de-escaping.
        if line[start..end] == f.null[..] {
            out.push(None);
        } else {
            if saw_non_ascii {
                verify_utf8(&val)?;
            }
            out.push(Some(owned(val)?));
        }
        if !found_delim {
            return Ok(out);
        }
    }
}

fn csv_fields(line: &[u8], f: &InputFormat) -> PgResult<Vec<Option<String>>> {
    let mut out = Vec::new();
    let mut cur = 0;
    loop {
        let start = cur;
        let mut end;
        let mut val: Vec<u8> = Vec::new();
        let mut saw_quote = false;
        let mut found_delim = false;
        'field: loop {
            // Outside quotes: up to a delimiter, a quote or the end of the line.
            loop {
                end = cur;
                let Some(&c) = line.get(cur) else {
                    break 'field;
                };
                cur += 1;
                if c == f.delim {
                    found_delim = true;
                    break 'field;
                }
                if c == f.quote {
                    saw_quote = true;
                    break;
                }
                val.push(c);
            }
            // Inside quotes: up to the closing quote; escape + quote/escape is literal.
            loop {
                let Some(&c) = line.get(cur) else {
                    return Err(bad_format("unterminated CSV quoted field"));
                };
                cur += 1;
                if let Some(&n) = line.get(cur).filter(|_| c == f.escape)
                    && (n == f.escape || n == f.quote)
                {
                    val.push(n);
                    cur += 1;
                    continue;
                }
                if c == f.quote {
                    break;
                }
                val.push(c);
            }
        }
        if !saw_quote && line[start..end] == f.null[..] {
            out.push(None);
        } else {
            out.push(Some(owned(val)?));
        }
        if !found_delim {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(csv: bool) -> LineReader {
        LineReader::new(InputFormat {
            csv,
            delim: if csv { b',' } else { b'\t' },
            quote: b'"',
            escape: b'"',
            null: if csv { Vec::new() } else { b"\\N".to_vec() },
        })
    }

    /// All rows of `input` fed in chunks of `chunk` bytes, or the first error's message.
    fn rows(csv: bool, input: &[u8], chunk: usize) -> Result<Vec<Vec<Option<String>>>, String> {
        let mut r = reader(csv);
        let mut out = Vec::new();
        let mut chunks = input.chunks(chunk).peekable();
        loop {
            let next = chunks.next();
            let at_end = next.is_none();
            if let Some(c) = next {
                r.feed(c).map_err(|e| e.into_report().message)?;
            }
            while let Some(l) = r.next_line(at_end).map_err(|e| e.into_report().message)? {
                out.push(r.fields(r.line(l)).map_err(|e| e.into_report().message)?);
            }
            if at_end {
                return Ok(out);
            }
        }
    }

    fn same_in_any_chunks(csv: bool, input: &[u8]) -> Result<Vec<Vec<Option<String>>>, String> {
        let whole = rows(csv, input, input.len().max(1));
        for n in 1..4 {
            assert_eq!(rows(csv, input, n), whole, "chunks of {n}");
        }
        whole
    }

    fn s(v: &str) -> Option<String> {
        Some(v.to_string())
    }

    #[test]
    fn text_escapes_decode_as_postgres() {
        let r = same_in_any_chunks(
            false,
            b"1\ta\\x41\\x41u\n2\t\\101\\x4g\\x\\8\\zq\\N\n3\t\\N\n",
        )
        .unwrap();
        assert_eq!(r[0], vec![s("1"), s("aAAu")]);
        assert_eq!(r[1], vec![s("2"), s("A\x04gx8zqN")]);
        assert_eq!(r[2], vec![s("3"), None]);
        let r = same_in_any_chunks(false, b"a\\\tb\\\nc\t\\b\\f\\v\\r\\n\\t\\\\\n").unwrap();
        assert_eq!(r[0], vec![s("a\tb\nc"), s("\x08\x0c\x0b\r\n\t\\")]);
        assert_eq!(
            same_in_any_chunks(false, b"\\xc3\\xa9\t\\303\\251\n").unwrap()[0],
            vec![s("é"), s("é")]
        );
    }

    #[test]
    fn text_escapes_must_give_valid_utf8() {
        let e = |input: &[u8]| same_in_any_chunks(false, input).unwrap_err();
        assert_eq!(
            e(b"\\xc3\n"),
            "invalid byte sequence for encoding \"UTF8\": 0xc3"
        );
        assert_eq!(
            e(b"\\000\n"),
            "invalid byte sequence for encoding \"UTF8\": 0x00"
        );
        assert_eq!(
            e(b"ok\nx\xc3(\n"),
            "invalid byte sequence for encoding \"UTF8\": 0xc3 0x28"
        );
    }

    #[test]
    fn end_marker_and_line_ends() {
        let r = same_in_any_chunks(false, b"1\n2\\.\n3\n").unwrap();
        assert_eq!(r, vec![vec![s("1")], vec![s("2")]]);
        let r = same_in_any_chunks(false, b"1\r2\r\\.\r\nignored").unwrap();
        assert_eq!(r, vec![vec![s("1")], vec![s("2")]]);
        assert_eq!(same_in_any_chunks(false, b"a\r\nb\r\n").unwrap().len(), 2);
        let e = |input: &[u8]| same_in_any_chunks(false, input).unwrap_err();
        assert_eq!(e(b"1\\.x\n"), "end-of-copy marker corrupt");
        assert_eq!(e(b"1\n\\."), "end-of-copy marker corrupt");
        assert_eq!(
            e(b"1\r\n\\.\n"),
            "end-of-copy marker does not match previous newline style"
        );
        assert_eq!(
            e(b"1\n\\.\r\n"),
            "end-of-copy marker does not match previous newline style"
        );
        assert_eq!(e(b"1\r\n2\n"), "literal newline found in data");
        assert_eq!(e(b"1\n2\r3\n"), "literal carriage return found in data");
        assert_eq!(e(b"1\r\n2\r3\r\n"), "literal carriage return found in data");
    }

    #[test]
    fn csv_records() {
        let r =
            same_in_any_chunks(true, b"1,\"a,b\",\n2,\"x\"\"y\",z\n3,a\"b,c\"d,\"\"\n").unwrap();
        assert_eq!(r[0], vec![s("1"), s("a,b"), None]);
        assert_eq!(r[1], vec![s("2"), s("x\"y"), s("z")]);
        assert_eq!(r[2], vec![s("3"), s("ab,cd"), s("")]);
        let r = same_in_any_chunks(true, b"\"a\nb\"\n\\.a\n\\.\nlater\n").unwrap();
        assert_eq!(r, vec![vec![s("a\nb")], vec![s("\\.a")]]);
        // `\.` without a line end is a value in CSV.
        assert_eq!(
            same_in_any_chunks(true, b"\\.").unwrap(),
            vec![vec![s("\\.")]]
        );
    }

    #[test]
    fn csv_errors() {
        let e = |input: &[u8]| same_in_any_chunks(true, input).unwrap_err();
        assert_eq!(
            e(b"1,\"ok\"\n2,\"never closed\n3,\"x\"\n\\.\n"),
            "unterminated CSV quoted field"
        );
        assert_eq!(e(b"1,\"open"), "unterminated CSV quoted field");
        assert_eq!(e(b"1,a\r\n\\.\n"), "unquoted newline found in data");
        assert_eq!(
            e(b"1,a\n2,b\rc\n"),
            "unquoted carriage return found in data"
        );
    }
}
