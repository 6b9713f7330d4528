//! Splitting a query string into statements, and the small pre-parser for utility statements
//! `sqlparser` does not know (or does not parse the way PostgreSQL does): VACUUM, ANALYZE,
//! CHECKPOINT, COPY, SET, SHOW, RESET and the transaction-control commands.

use keel_common::{PgError, PgResult, sqlstate};

/// One statement of a query string: its text and its byte offset in the whole string.
#[derive(Clone, Debug)]
pub struct RawStmt<'a> {
    pub text: &'a str,
    pub offset: usize,
}

/// Splits on top-level `;`, honouring quotes, dollar quotes and comments. Statements that are
/// only whitespace/comments are dropped (PostgreSQL does the same).
///
/// Inside `CREATE [OR REPLACE] FUNCTION | PROCEDURE ... BEGIN ATOMIC ... END` a `;` does not
/// end the statement, found as PostgreSQL's scanners (psql's, the server's) find it: outside
/// parentheses, BEGIN opens a block, CASE inside one opens another, END closes one.
pub fn split_statements(sql: &str) -> Vec<RawStmt<'_>> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let mut routine = RoutineBlocks::default();
    while i < b.len() {
        match b[i] {
            b'(' => {
                routine.parens += 1;
                i += 1;
            }
            b')' => {
                routine.parens -= 1;
                i += 1;
            }
            c if (c.is_ascii_alphabetic() || c == b'_') && (i == 0 || !is_ident(b[i - 1])) => {
                let mut j = i + 1;
                while j < b.len() && is_ident(b[j]) {
                    j += 1;
                }
                routine.word(&sql[i..j]);
                i = j;
            }
            b';' if routine.depth > 0 => i += 1,
            b'\'' => {
                // E'..' strings allow backslash escapes.
                let escaped = i > 0
                    && (b[i - 1] == b'E' || b[i - 1] == b'e')
                    && (i < 2 || !is_ident(b[i - 2]));
                i += 1;
                while i < b.len() {
                    if escaped && b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == b'\'' {
                        if i + 1 < b.len() && b[i + 1] == b'\'' {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += 1;
                }
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'$' if i == 0 || !is_ident(b[i - 1]) => {
                // $tag$ ... $tag$ (but not $1 parameters).
                let mut j = i + 1;
                while j < b.len()
                    && (b[j].is_ascii_alphabetic()
                        || b[j] == b'_'
                        || (j > i + 1 && b[j].is_ascii_digit()))
                {
                    j += 1;
                }
                if j < b.len() && b[j] == b'$' {
                    let tag = &sql[i..=j];
                    match sql[j + 1..].find(tag) {
                        Some(p) => i = j + 1 + p + tag.len(),
                        None => i = b.len(),
                    }
                } else {
                    i += 1;
                }
            }
            b';' => {
                // The `;` stays in the text: PostgreSQL reports `syntax error at or near ";"`.
                push_stmt(sql, start, i + 1, &mut out);
                i += 1;
                start = i;
                routine = RoutineBlocks::default();
            }
            _ => i += 1,
        }
    }
    push_stmt(sql, start, b.len().min(sql.len()), &mut out);
    out
}

/// The words of the statement being split, as far as BEGIN ATOMIC blocks need them.
#[derive(Default)]
struct RoutineBlocks {
    head: Head,
    parens: i32,
    /// Open BEGIN (and CASE within one) blocks.
    depth: u32,
}

/// How far the statement's first words match CREATE [OR REPLACE] FUNCTION | PROCEDURE.
#[derive(Default, PartialEq)]
enum Head {
    #[default]
    Start,
    Create,
    Or,
    OrReplace,
    Routine,
    Other,
}

impl RoutineBlocks {
    fn word(&mut self, w: &str) {
        let is = |k: &str| w.eq_ignore_ascii_case(k);
        self.head = match self.head {
            Head::Routine => Head::Routine,
            Head::Other => return,
            Head::Start if is("create") => Head::Create,
            Head::Create if is("or") => Head::Or,
            Head::Or if is("replace") => Head::OrReplace,
            Head::Create | Head::OrReplace if is("function") || is("procedure") => {
                return self.head = Head::Routine;
            }
            _ => Head::Other,
        };
        if self.head != Head::Routine || self.parens != 0 {
            return;
        }
        if is("begin") {
            self.depth += 1;
        } else if is("case") {
            if self.depth > 0 {
                self.depth += 1;
            }
        } else if is("end") {
            self.depth = self.depth.saturating_sub(1);
        }
    }
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn push_stmt<'a>(sql: &'a str, start: usize, end: usize, out: &mut Vec<RawStmt<'a>>) {
    let text = &sql[start..end];
    if strip_comments_ws(text.strip_suffix(';').unwrap_or(text)).is_empty() {
        return;
    }
    out.push(RawStmt {
        text,
        offset: start,
    });
}

/// The statement's first word (leading whitespace and comments skipped), as written.
pub fn first_word(text: &str) -> &str {
    strip_comments_ws(text)
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .next()
        .unwrap_or("")
}

/// Whether `text` contains `needle` (ASCII), ignoring ASCII case, without allocating.
pub fn contains_ignore_case(text: &str, needle: &str) -> bool {
    let n = needle.as_bytes();
    !n.is_empty()
        && text
            .as_bytes()
            .windows(n.len())
            .any(|w| w.eq_ignore_ascii_case(n))
}

/// The text with leading whitespace and comments removed.
pub fn strip_comments_ws(mut s: &str) -> &str {
    loop {
        let t = s.trim_start();
        if let Some(rest) = t.strip_prefix("--") {
            s = rest.find('\n').map_or("", |p| &rest[p..]);
        } else if let Some(rest) = t.strip_prefix("/*") {
            s = rest.find("*/").map_or("", |p| &rest[p + 2..]);
        } else {
            return t;
        }
    }
}

/// A token of the utility pre-parser.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// An unquoted word, lower-cased.
    Word(String),
    /// A double-quoted identifier, as written.
    Quoted(String),
    Str(String),
    Num(String),
    Punct(char),
}

impl Tok {
    pub fn is_word(&self, w: &str) -> bool {
        matches!(self, Tok::Word(x) if x == w)
    }
    /// The token's value as a setting value / option value.
    pub fn text(&self) -> String {
        match self {
            Tok::Word(s) | Tok::Quoted(s) | Tok::Str(s) | Tok::Num(s) => s.clone(),
            Tok::Punct(c) => c.to_string(),
        }
    }
}

/// Tokenizes a utility statement. Errors only on unterminated quotes.
pub fn tokenize(s: &str) -> PgResult<Vec<Tok>> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '-' && chars.get(i + 1) == Some(&'-') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '\'' || ((c == 'E' || c == 'e') && chars.get(i + 1) == Some(&'\'')) {
            let esc = c != '\'';
            i += if esc { 2 } else { 1 };
            let mut v = String::new();
            loop {
                match chars.get(i) {
                    None => return Err(syntax("unterminated quoted string")),
                    Some('\\') if esc => {
                        if let Some(n) = chars.get(i + 1) {
                            v.push(match n {
                                'n' => '\n',
                                't' => '\t',
                                'r' => '\r',
                                o => *o,
                            });
                        }
                        i += 2;
                    }
                    Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                        v.push('\'');
                        i += 2;
                    }
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some(x) => {
                        v.push(*x);
                        i += 1;
                    }
                }
            }
            out.push(Tok::Str(v));
        } else if c == '"' {
            let mut v = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(syntax("unterminated quoted identifier")),
                    Some('"') if chars.get(i + 1) == Some(&'"') => {
                        v.push('"');
                        i += 2;
                    }
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some(x) => {
                        v.push(*x);
                        i += 1;
                    }
                }
            }
            out.push(Tok::Quoted(v));
        } else if c.is_ascii_digit()
            || ((c == '-' || c == '.') && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let st = i;
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
            out.push(Tok::Num(chars[st..i].iter().collect()));
        } else if c.is_alphabetic() || c == '_' {
            let st = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric()
                    || chars[i] == '_'
                    || chars[i] == '$'
                    || chars[i] == '.')
            {
                i += 1;
            }
            out.push(Tok::Word(
                chars[st..i].iter().collect::<String>().to_lowercase(),
            ));
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
    }
    Ok(out)
}

pub fn syntax(msg: impl Into<String>) -> PgError {
    PgError::new(sqlstate::SYNTAX_ERROR, msg)
}

/// `syntax error at or near "tok"` / `at end of input`.
pub fn syntax_near(tok: Option<&Tok>) -> PgError {
    match tok {
        Some(t) => syntax(format!("syntax error at or near \"{}\"", t.text())),
        None => syntax("syntax error at end of input"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_respecting_quotes() {
        let s = split_statements("select ';'; select $$a;b$$ ;-- c;\n select \"x;\" ; ");
        let t: Vec<_> = s
            .iter()
            .map(|r| r.text.trim_end_matches(';').trim())
            .collect();
        assert_eq!(
            t,
            vec!["select ';'", "select $$a;b$$", "-- c;\n select \"x;\""]
        );
        assert_eq!(s[1].offset, 11);
    }

    #[test]
    fn begin_atomic_bodies_keep_their_semicolons() {
        let sql = "create function f() returns int begin atomic select case when true then 1 end; \
                   select (2); end; select 'begin'; create or replace procedure p() begin atomic \
                   select 1; end; begin; end;";
        let t: Vec<_> = split_statements(sql)
            .iter()
            .map(|r| r.text.trim_end_matches(';').trim().to_string())
            .collect();
        assert_eq!(t.len(), 5, "{t:?}");
        assert!(t[0].ends_with("select (2); end"), "{t:?}");
        assert_eq!(t[1], "select 'begin'");
        assert!(t[2].ends_with("select 1; end"), "{t:?}");
        assert_eq!(&t[3..], ["begin", "end"]);
    }

    #[test]
    fn params_are_not_dollar_quotes() {
        let s = split_statements("select $1; select $2");
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn empty_statements_dropped() {
        assert!(split_statements(" ; ;-- x").is_empty());
        assert_eq!(split_statements("BEGIN;").len(), 1);
    }

    #[test]
    fn tokenizes() {
        let t = tokenize("SET work_mem = '64MB'").unwrap();
        assert_eq!(
            t,
            vec![
                Tok::Word("set".into()),
                Tok::Word("work_mem".into()),
                Tok::Punct('='),
                Tok::Str("64MB".into())
            ]
        );
    }
}
