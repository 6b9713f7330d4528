//! The scanner: a PL/pgSQL body as PostgreSQL's core lexer would cut it.
//!
//! Tokens keep their byte span in the body, so SQL text can be cut out of the source verbatim
//! and errors can point at a token. Only what the PL/pgSQL grammar needs is distinguished;
//! everything else (operators, numbers, bit strings) is carried along as opaque tokens.

use crate::error::PlSyntaxError;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    /// An identifier or keyword. `name` is downcased (ASCII) unless `quoted`.
    Ident {
        name: String,
        quoted: bool,
    },
    /// `$n`.
    Param,
    Number,
    /// A string constant, with its value decoded ('' and backslash escapes, dollar quotes).
    Str(String),
    /// B'..', X'..', U&'..': literals the grammar never looks inside.
    OtherLiteral,
    ColonEquals,
    DotDot,
    LessLess,
    GreaterGreater,
    /// Any other operator, e.g. `<>`, `::`, `||`.
    Op,
    /// A single punctuation character: `( ) [ ] , ; . : % = #` and one-character operators.
    Char(u8),
    Eof,
    /// A lexical error; the parser raises it when it reaches this token.
    Error(String),
}

#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

impl Token {
    /// Whether this is the unquoted keyword `kw` (lowercase).
    pub fn is_kw(&self, kw: &str) -> bool {
        matches!(&self.tok, Tok::Ident { name, quoted: false } if name == kw)
    }

    pub fn is_char(&self, c: u8) -> bool {
        self.tok == Tok::Char(c)
    }
}

/// PL/pgSQL's reserved words: never a variable name, never a statement's first word unless
/// the grammar says so.
pub(crate) const RESERVED: &[&str] = &[
    "all", "begin", "by", "case", "declare", "else", "end", "execute", "for", "foreach", "from",
    "if", "in", "into", "loop", "not", "null", "or", "strict", "then", "to", "using", "when",
    "while",
];

pub(crate) fn is_reserved(name: &str) -> bool {
    RESERVED.contains(&name)
}

const OP_CHARS: &[u8] = b"~!@#^&|`?+-*/%<>=";

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident_cont(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit() || b == b'$'
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Cuts `src` into tokens. A lexical error ends the list with a [`Tok::Error`] token (then
/// [`Tok::Eof`]), so an earlier syntax error is still reported first, as PostgreSQL's lazy
/// scanner would.
pub(crate) fn tokenize(src: &str) -> Vec<Token> {
    let mut lx = Lexer {
        src,
        b: src.as_bytes(),
        i: 0,
        out: Vec::new(),
    };
    if let Err((start, msg)) = lx.run() {
        lx.out.push(Token {
            tok: Tok::Error(msg),
            start,
            end: src.len(),
        });
    }
    lx.out.push(Token {
        tok: Tok::Eof,
        start: src.len(),
        end: src.len(),
    });
    lx.out
}

/// The error a [`Tok::Error`] token stands for: PostgreSQL reports the rest of the body as the
/// token text.
pub(crate) fn lex_error(src: &str, t: &Token, msg: &str) -> Box<PlSyntaxError> {
    PlSyntaxError::near(src, t.start, src.get(t.start..).unwrap_or(""), msg)
}

struct Lexer<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
    out: Vec<Token>,
}

type LexResult<T> = Result<T, (usize, String)>;

impl Lexer<'_> {
    fn at(&self, k: usize) -> u8 {
        self.b.get(self.i + k).copied().unwrap_or(0)
    }

    fn push(&mut self, tok: Tok, start: usize) {
        self.out.push(Token {
            tok,
            start,
            end: self.i,
        });
    }

    fn run(&mut self) -> LexResult<()> {
        while self.i < self.b.len() {
            let c = self.at(0);
            let start = self.i;
            if is_space(c) {
                self.i += 1;
            } else if c == b'-' && self.at(1) == b'-' {
                while self.i < self.b.len() && self.at(0) != b'\n' {
                    self.i += 1;
                }
            } else if c == b'/' && self.at(1) == b'*' {
                self.block_comment()?;
            } else if c == b'\'' {
                let v = self.quoted_string(false)?;
                self.push(Tok::Str(v), start);
            } else if (c == b'e' || c == b'E') && self.at(1) == b'\'' {
                self.i += 1;
                let v = self.quoted_string(true)?;
                self.push(Tok::Str(v), start);
            } else if (c == b'n' || c == b'N') && self.at(1) == b'\'' {
                self.i += 1;
                let v = self.quoted_string(false)?;
                self.push(Tok::Str(v), start);
            } else if matches!(c, b'b' | b'B' | b'x' | b'X') && self.at(1) == b'\'' {
                self.i += 1;
                self.quoted_string(false)?;
                self.push(Tok::OtherLiteral, start);
            } else if (c == b'u' || c == b'U') && self.at(1) == b'&' && self.at(2) == b'\'' {
                self.i += 2;
                self.quoted_string(false)?;
                self.push(Tok::OtherLiteral, start);
            } else if (c == b'u' || c == b'U') && self.at(1) == b'&' && self.at(2) == b'"' {
                self.i += 2;
                let name = self.quoted_ident()?;
                self.push(Tok::Ident { name, quoted: true }, start);
            } else if c == b'"' {
                let name = self.quoted_ident()?;
                self.push(Tok::Ident { name, quoted: true }, start);
            } else if c == b'$' {
                self.dollar()?;
            } else if is_ident_start(c) {
                while self.i < self.b.len() && is_ident_cont(self.at(0)) {
                    self.i += 1;
                }
                let name = self.src[start..self.i].to_ascii_lowercase();
                self.push(
                    Tok::Ident {
                        name,
                        quoted: false,
                    },
                    start,
                );
            } else if c.is_ascii_digit() || (c == b'.' && self.at(1).is_ascii_digit()) {
                self.number();
            } else if c == b':' && self.at(1) == b'=' {
                self.i += 2;
                self.push(Tok::ColonEquals, start);
            } else if c == b':' && self.at(1) == b':' {
                self.i += 2;
                self.push(Tok::Op, start);
            } else if c == b'.' && self.at(1) == b'.' {
                self.i += 2;
                self.push(Tok::DotDot, start);
            } else if OP_CHARS.contains(&c) {
                self.operator();
            } else {
                // Punctuation, and any other single byte the SQL parser will judge later.
                self.i += 1;
                self.push(Tok::Char(c), start);
            }
        }
        Ok(())
    }

    fn block_comment(&mut self) -> LexResult<()> {
        let start = self.i;
        let mut depth = 0usize;
        while self.i < self.b.len() {
            if self.at(0) == b'/' && self.at(1) == b'*' {
                depth += 1;
                self.i += 2;
            } else if self.at(0) == b'*' && self.at(1) == b'/' {
                depth -= 1;
                self.i += 2;
                if depth == 0 {
                    return Ok(());
                }
            } else {
                self.i += 1;
            }
        }
        Err((start, "unterminated /* comment".into()))
    }

    /// A '...' literal starting at `self.i`; `escapes` for E'...'. Returns the decoded value.
    fn quoted_string(&mut self, escapes: bool) -> LexResult<String> {
        let start = if escapes { self.i - 1 } else { self.i };
        self.i += 1;
        let mut v: Vec<u8> = Vec::new();
        loop {
            if self.i >= self.b.len() {
                return Err((start, "unterminated quoted string".into()));
            }
            let c = self.at(0);
            if c == b'\'' {
                if self.at(1) == b'\'' {
                    v.push(b'\'');
                    self.i += 2;
                    continue;
                }
                self.i += 1;
                break;
            }
            if escapes && c == b'\\' && self.i + 1 < self.b.len() {
                let e = self.at(1);
                self.i += 2;
                match e {
                    b'n' => v.push(b'\n'),
                    b't' => v.push(b'\t'),
                    b'r' => v.push(b'\r'),
                    b'b' => v.push(0x08),
                    b'f' => v.push(0x0c),
                    b'0'..=b'7' => {
                        let mut n = u32::from(e - b'0');
                        for _ in 0..2 {
                            match self.at(0) {
                                d @ b'0'..=b'7' => {
                                    n = n * 8 + u32::from(d - b'0');
                                    self.i += 1;
                                }
                                _ => break,
                            }
                        }
                        push_char(&mut v, n);
                    }
                    b'x' => {
                        let mut n = 0u32;
                        for _ in 0..2 {
                            match (self.at(0) as char).to_digit(16) {
                                Some(d) => {
                                    n = n * 16 + d;
                                    self.i += 1;
                                }
                                None => break,
                            }
                        }
                        push_char(&mut v, n);
                    }
                    b'u' | b'U' => {
                        let len = if e == b'u' { 4 } else { 8 };
                        let mut n = 0u32;
                        for _ in 0..len {
                            match (self.at(0) as char).to_digit(16) {
                                Some(d) => {
                                    n = n.saturating_mul(16).saturating_add(d);
                                    self.i += 1;
                                }
                                None => break,
                            }
                        }
                        push_char(&mut v, n);
                    }
                    other => v.push(other),
                }
                continue;
            }
            v.push(c);
            self.i += 1;
        }
        // PostgreSQL joins 'a' 'b' separated by whitespace containing a newline.
        let save = self.i;
        let mut j = self.i;
        let mut newline = false;
        while j < self.b.len() && is_space(self.b[j]) {
            newline |= self.b[j] == b'\n';
            j += 1;
        }
        if newline && self.b.get(j) == Some(&b'\'') {
            self.i = j;
            let more = self.quoted_string(escapes)?;
            v.extend_from_slice(more.as_bytes());
        } else {
            self.i = save;
        }
        Ok(String::from_utf8_lossy(&v).into_owned())
    }

    fn quoted_ident(&mut self) -> LexResult<String> {
        let start = self.i;
        self.i += 1;
        let mut v = String::new();
        loop {
            let Some(rest) = self.src.get(self.i..) else {
                return Err((start, "unterminated quoted identifier".into()));
            };
            match rest.find('"') {
                None => return Err((start, "unterminated quoted identifier".into())),
                Some(k) => {
                    v.push_str(&rest[..k]);
                    self.i += k + 1;
                    if self.at(0) == b'"' {
                        v.push('"');
                        self.i += 1;
                    } else {
                        break;
                    }
                }
            }
        }
        if v.is_empty() {
            return Err((start, "zero-length delimited identifier".into()));
        }
        Ok(v)
    }

    /// `$n`, `$tag$...$tag$`, or a lone `$`.
    fn dollar(&mut self) -> LexResult<()> {
        let start = self.i;
        if self.at(1).is_ascii_digit() {
            self.i += 1;
            while self.at(0).is_ascii_digit() {
                self.i += 1;
            }
            self.push(Tok::Param, start);
            return Ok(());
        }
        let mut j = self.i + 1;
        if j < self.b.len()
            && (self.b[j].is_ascii_alphabetic() || self.b[j] == b'_' || self.b[j] >= 0x80)
        {
            while j < self.b.len()
                && (self.b[j].is_ascii_alphanumeric() || self.b[j] == b'_' || self.b[j] >= 0x80)
            {
                j += 1;
            }
        }
        if self.b.get(j) != Some(&b'$') {
            self.i += 1;
            self.push(Tok::Op, start);
            return Ok(());
        }
        let delim = &self.src[start..=j];
        let body_start = j + 1;
        match self.src.get(body_start..).and_then(|r| r.find(delim)) {
            Some(k) => {
                let value = self.src[body_start..body_start + k].to_string();
                self.i = body_start + k + delim.len();
                self.push(Tok::Str(value), start);
                Ok(())
            }
            None => Err((start, "unterminated dollar-quoted string".into())),
        }
    }

    fn number(&mut self) {
        let start = self.i;
        while self.at(0).is_ascii_digit() {
            self.i += 1;
        }
        // `1..10`: the integer stops before the `..`.
        if self.at(0) == b'.' && self.at(1) != b'.' {
            self.i += 1;
            while self.at(0).is_ascii_digit() {
                self.i += 1;
            }
        }
        if matches!(self.at(0), b'e' | b'E')
            && (self.at(1).is_ascii_digit()
                || (matches!(self.at(1), b'+' | b'-') && self.at(2).is_ascii_digit()))
        {
            self.i += 2;
            while self.at(0).is_ascii_digit() {
                self.i += 1;
            }
        }
        self.push(Tok::Number, start);
    }

    /// An operator run, cut as PostgreSQL's lexer cuts it: a comment start ends it, and a
    /// trailing `+`/`-` is split off unless the run holds one of ``~!@#%^&|`?``.
    fn operator(&mut self) {
        let start = self.i;
        let mut end = self.i;
        while end < self.b.len() && OP_CHARS.contains(&self.b[end]) {
            if end > start
                && ((self.b[end] == b'-' && self.b.get(end + 1) == Some(&b'-'))
                    || (self.b[end] == b'/' && self.b.get(end + 1) == Some(&b'*')))
            {
                break;
            }
            end += 1;
        }
        let run = &self.b[start..end];
        let mut len = run.len();
        if len > 1 && !run.iter().any(|c| b"~!@#^&|`?%".contains(c)) {
            while len > 1 && matches!(run[len - 1], b'+' | b'-') {
                len -= 1;
            }
        }
        self.i = start + len.max(1);
        let text = &self.src[start..self.i];
        let tok = match text {
            "<<" => Tok::LessLess,
            ">>" => Tok::GreaterGreater,
            _ if text.len() == 1 => Tok::Char(text.as_bytes()[0]),
            _ => Tok::Op,
        };
        self.push(tok, start);
    }
}

fn push_char(v: &mut Vec<u8>, n: u32) {
    let c = char::from_u32(n).unwrap_or(char::REPLACEMENT_CHARACTER);
    let mut buf = [0u8; 4];
    v.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}
