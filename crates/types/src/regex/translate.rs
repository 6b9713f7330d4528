//! Translates a PostgreSQL Advanced Regular Expression (ARE) into the syntax of the
//! `regex-automata` engine, and works out the RE's greediness by PostgreSQL's rules.
//!
//! The translation is explicit rather than textual: every literal becomes a plain character or
//! a `\x{..}` escape, every class an explicit ASCII range list, so no ARE construct can take
//! on a different meaning in the target syntax. The locale is C (as keel's collation), so
//! classes, word boundaries and case folding cover ASCII only, as PostgreSQL does there:
//! `'é' ~ '\w'` is false and `'É' ~* 'é'` is false.

use super::{Flags, invalid, unsupported};
use keel_common::PgResult;
use std::fmt::Write;

/// PostgreSQL's DUPMAX: the largest bound in `{m,n}`.
const DUPMAX: u32 = 255;

/// A translated RE.
pub(super) struct Translated {
    /// The pattern in regex-automata syntax.
    pub pattern: String,
    /// Capturing groups (PostgreSQL's `re_nsub`).
    pub groups: usize,
    /// Whether the whole RE prefers the longest match (PostgreSQL's greediness rules);
    /// false: the shortest.
    pub greedy: bool,
}

/// Translates `re` under `flags`, after the `***=` / `***:` directors and leading embedded
/// options `(?...)`.
pub(super) fn translate(re: &str, mut flags: Flags) -> PgResult<Translated> {
    let mut rest = re;
    if let Some(r) = rest.strip_prefix("***=") {
        flags.literal = true;
        rest = r;
    } else if let Some(r) = rest.strip_prefix("***:") {
        rest = r;
    }
    if !flags.literal {
        rest = embedded_options(rest, &mut flags)?;
    }
    let mut p = Parser {
        chars: rest.chars().collect(),
        pos: 0,
        flags,
        out: String::with_capacity(rest.len() * 2),
        groups: 0,
        closed: 0,
    };
    if flags.literal {
        for c in std::mem::take(&mut p.chars) {
            p.literal(c);
        }
        return Ok(Translated {
            pattern: p.out,
            groups: 0,
            greedy: true,
        });
    }
    let greed = p.alternation()?;
    if p.pos < p.chars.len() {
        // Only an unmatched ')' stops the top level early.
        return Err(invalid("parentheses () not balanced"));
    }
    Ok(Translated {
        pattern: p.out,
        groups: p.groups,
        greedy: greed != Some(false),
    })
}

/// Applies `(?bceimnpqstwx)` at the start of an ARE and returns the rest.
fn embedded_options<'a>(re: &'a str, flags: &mut Flags) -> PgResult<&'a str> {
    let Some(body) = re.strip_prefix("(?") else {
        return Ok(re);
    };
    if !body.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Ok(re);
    }
    let Some(end) = body.find(')') else {
        return Err(invalid("invalid embedded option"));
    };
    for c in body[..end].chars() {
        if !flags.apply(c)? {
            return Err(invalid("invalid embedded option"));
        }
    }
    Ok(&body[end + 1..])
}

/// Greediness of an RE piece: Some(true) greedy, Some(false) non-greedy, None no attribute.
type Greed = Option<bool>;

struct Parser {
    chars: Vec<char>,
    pos: usize,
    flags: Flags,
    out: String,
    /// Capturing groups opened so far.
    groups: usize,
    /// Capturing groups closed so far (a back reference may only name one of these).
    closed: usize,
}

/// What an atom is, for the quantifier that may follow.
enum Atom {
    /// Can be quantified; carries its greediness.
    Quantifiable(Greed),
    /// A constraint (`^`, `$`, `\m`, ...): quantifying it is an error.
    Constraint,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    /// Skips `(?#...)` comments, and white space and `#` comments in expanded (`x`) mode.
    fn skip_expanded(&mut self) {
        while let Some(c) = self.peek() {
            if c == '(' && self.peek_at(1) == Some('?') && self.peek_at(2) == Some('#') {
                while let Some(c) = self.next() {
                    if c == ')' {
                        break;
                    }
                }
            } else if !self.flags.expanded {
                break;
            } else if c.is_ascii_whitespace() {
                self.pos += 1;
            } else if c == '#' {
                while let Some(c) = self.next() {
                    if c == '\n' {
                        break;
                    }
                }
            } else {
                break;
            }
        }
    }

    /// branch ( '|' branch )*. An RE of two or more branches is greedy.
    fn alternation(&mut self) -> PgResult<Greed> {
        let greed = self.branch()?;
        let mut branches = 1;
        while self.peek() == Some('|') {
            self.pos += 1;
            self.out.push('|');
            self.branch()?;
            branches += 1;
        }
        Ok(if branches > 1 { Some(true) } else { greed })
    }

    /// A sequence of (possibly quantified) atoms; its greediness is that of the first one
    /// that has any.
    fn branch(&mut self) -> PgResult<Greed> {
        let mut greed = None;
        loop {
            self.skip_expanded();
            match self.peek() {
                None | Some('|') | Some(')') => return Ok(greed),
                _ => {}
            }
            let start = self.out.len();
            let atom = self.atom()?;
            self.skip_expanded();
            let g = match self.quantifier()? {
                None => match atom {
                    Atom::Quantifiable(g) => g,
                    Atom::Constraint => None,
                },
                Some((text, kind)) => {
                    let Atom::Quantifiable(inner) = atom else {
                        return Err(invalid("quantifier operand invalid"));
                    };
                    self.out.insert_str(start, "(?:");
                    self.out.push(')');
                    self.out.push_str(&text);
                    self.skip_expanded();
                    if self.at_quantifier() {
                        return Err(invalid("quantifier operand invalid"));
                    }
                    match kind {
                        QuantKind::Fixed => inner,
                        QuantKind::Greedy => Some(true),
                        QuantKind::Lazy => Some(false),
                    }
                }
            };
            if greed.is_none() {
                greed = g;
            }
        }
    }

    fn at_quantifier(&self) -> bool {
        match self.peek() {
            Some('*' | '+' | '?') => true,
            Some('{') => self.peek_at(1).is_some_and(|c| c.is_ascii_digit()),
            _ => false,
        }
    }

    /// `* + ? {m} {m,} {m,n}`, each optionally followed by `?` (non-greedy).
    fn quantifier(&mut self) -> PgResult<Option<(String, QuantKind)>> {
        if !self.at_quantifier() {
            return Ok(None);
        }
        let (mut text, fixed) = match self.next() {
            Some('{') => {
                let m = self.bound()?;
                let (text, fixed) = if self.peek() == Some(',') {
                    self.pos += 1;
                    if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        let n = self.bound()?;
                        if m > n {
                            return Err(invalid("invalid repetition count(s)"));
                        }
                        (format!("{{{m},{n}}}"), false)
                    } else {
                        (format!("{{{m},}}"), false)
                    }
                } else {
                    (format!("{{{m}}}"), true)
                };
                if self.next() != Some('}') {
                    return Err(invalid("braces {} not balanced"));
                }
                (text, fixed)
            }
            Some(c) => (c.to_string(), false),
            None => return Ok(None),
        };
        let lazy = self.peek() == Some('?');
        if lazy {
            self.pos += 1;
            text.push('?');
        }
        let kind = match (fixed, lazy) {
            (true, _) => QuantKind::Fixed,
            (false, true) => QuantKind::Lazy,
            (false, false) => QuantKind::Greedy,
        };
        Ok(Some((text, kind)))
    }

    fn bound(&mut self) -> PgResult<u32> {
        let mut v: u32 = 0;
        let mut any = false;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            self.pos += 1;
            any = true;
            v = v.saturating_mul(10).saturating_add(d);
        }
        if !any {
            return Err(invalid("braces {} not balanced"));
        }
        if v > DUPMAX {
            return Err(invalid("invalid repetition count(s)"));
        }
        Ok(v)
    }

    fn atom(&mut self) -> PgResult<Atom> {
        let Some(c) = self.next() else {
            return Err(invalid("quantifier operand invalid"));
        };
        match c {
            '(' => self.group(),
            '.' => {
                self.out.push_str(if self.flags.nlstop {
                    "[^\\n]"
                } else {
                    "(?s:.)"
                });
                Ok(Atom::Quantifiable(None))
            }
            '[' => self.bracket(),
            '\\' => self.escape(),
            '^' => {
                self.out
                    .push_str(if self.flags.nlanch { "(?m:^)" } else { "\\A" });
                Ok(Atom::Constraint)
            }
            '$' => {
                self.out
                    .push_str(if self.flags.nlanch { "(?m:$)" } else { "\\z" });
                Ok(Atom::Constraint)
            }
            '*' | '+' | '?' => Err(invalid("quantifier operand invalid")),
            '{' if self.peek().is_some_and(|c| c.is_ascii_digit()) => {
                Err(invalid("quantifier operand invalid"))
            }
            c => {
                self.literal(c);
                Ok(Atom::Quantifiable(None))
            }
        }
    }

    fn group(&mut self) -> PgResult<Atom> {
        let capturing = if self.peek() == Some('?') {
            match (self.peek_at(1), self.peek_at(2)) {
                (Some(':'), _) => {
                    self.pos += 2;
                    false
                }
                (Some('=' | '!'), _) | (Some('<'), Some('=' | '!')) => {
                    return Err(unsupported(
                        "lookahead and lookbehind constraints in regular expressions",
                    ));
                }
                _ => return Err(invalid("quantifier operand invalid")),
            }
        } else {
            true
        };
        if capturing {
            self.groups += 1;
            self.out.push('(');
        } else {
            self.out.push_str("(?:");
        }
        let greed = self.alternation()?;
        if self.next() != Some(')') {
            return Err(invalid("parentheses () not balanced"));
        }
        if capturing {
            self.closed += 1;
        }
        self.out.push(')');
        Ok(Atom::Quantifiable(greed))
    }

    /// An escape outside brackets: a character entry, a class shorthand, a constraint or a
    /// back reference.
    fn escape(&mut self) -> PgResult<Atom> {
        let Some(c) = self.peek() else {
            return Err(invalid("invalid escape \\ sequence"));
        };
        let constraint = match c {
            'A' => Some("\\A"),
            'Z' => Some("\\z"),
            'm' => Some("(?-u:\\b{start})"),
            'M' => Some("(?-u:\\b{end})"),
            'y' => Some("(?-u:\\b)"),
            'Y' => Some("(?-u:\\B)"),
            _ => None,
        };
        if let Some(s) = constraint {
            self.pos += 1;
            self.out.push_str(s);
            return Ok(Atom::Constraint);
        }
        if let Some(class) = shorthand(c) {
            self.pos += 1;
            let negated = c.is_ascii_uppercase();
            self.out.push('[');
            if negated {
                self.out.push('^');
            }
            self.out.push_str(class);
            if negated && self.flags.nlstop {
                self.out.push_str("\\n");
            }
            self.out.push(']');
            return Ok(Atom::Quantifiable(None));
        }
        if let Some(d) = c.to_digit(10).filter(|d| *d > 0) {
            self.pos += 1;
            if d as usize > self.closed {
                return Err(invalid("invalid backreference number"));
            }
            return Err(unsupported("back references in regular expressions"));
        }
        let ch = self.char_entry()?;
        self.literal(ch);
        Ok(Atom::Quantifiable(None))
    }

    /// A character-entry escape (after the backslash) or an escaped non-alphanumeric
    /// character: the character it stands for.
    fn char_entry(&mut self) -> PgResult<char> {
        let bad = || invalid("invalid escape \\ sequence");
        let c = self.next().ok_or_else(bad)?;
        Ok(match c {
            'a' => '\x07',
            'b' => '\x08',
            'B' => '\\',
            'e' => '\x1b',
            'f' => '\x0c',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\x0b',
            'c' => {
                let x = self.next().ok_or_else(bad)?;
                char::from_u32(x as u32 & 0x1f).ok_or_else(bad)?
            }
            'u' => self.hex(4, 4)?,
            'U' => self.hex(8, 8)?,
            'x' => self.hex(1, 8)?,
            '0' => {
                let mut v = 0u32;
                for _ in 0..2 {
                    match self.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            self.pos += 1;
                        }
                        None => break,
                    }
                }
                char::from_u32(v).ok_or_else(bad)?
            }
            c if c.is_alphanumeric() => return Err(bad()),
            c => c,
        })
    }

    fn hex(&mut self, min: usize, max: usize) -> PgResult<char> {
        let mut v: u32 = 0;
        let mut n = 0;
        while n < max {
            match self.peek().and_then(|c| c.to_digit(16)) {
                Some(d) => {
                    v = v * 16 + d;
                    self.pos += 1;
                    n += 1;
                }
                None => break,
            }
        }
        if n < min {
            return Err(invalid("invalid escape \\ sequence"));
        }
        char::from_u32(v).ok_or_else(|| invalid("invalid escape \\ sequence"))
    }

    /// A literal character; under case-insensitive matching an ASCII letter matches both
    /// cases (only ASCII folds in the C locale).
    fn literal(&mut self, c: char) {
        if self.flags.icase && c.is_ascii_alphabetic() {
            let _ = write!(
                self.out,
                "[{}{}]",
                c.to_ascii_lowercase(),
                c.to_ascii_uppercase()
            );
        } else {
            push_char(&mut self.out, c);
        }
    }

    /// A bracket expression, after its `[`.
    fn bracket(&mut self) -> PgResult<Atom> {
        let rest: String = self.chars[self.pos..].iter().take(6).collect();
        if rest == "[:<:]]" {
            self.pos += 6;
            self.out.push_str("(?-u:\\b{start})");
            return Ok(Atom::Constraint);
        }
        if rest == "[:>:]]" {
            self.pos += 6;
            self.out.push_str("(?-u:\\b{end})");
            return Ok(Atom::Constraint);
        }
        let unbalanced = || invalid("brackets [] not balanced");
        let negated = self.peek() == Some('^');
        if negated {
            self.pos += 1;
        }
        let mut set = String::new();
        let mut first = true;
        loop {
            let c = self.next().ok_or_else(unbalanced)?;
            if c == ']' && !first {
                break;
            }
            first = false;
            let lo = match self.bracket_item(c)? {
                Item::Class(class) => {
                    if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                        return Err(invalid("invalid character range"));
                    }
                    set.push_str(class);
                    continue;
                }
                Item::Char(ch) => ch,
            };
            let is_range = self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']');
            let hi = if is_range {
                self.pos += 1;
                let c = self.next().ok_or_else(unbalanced)?;
                match self.bracket_item(c)? {
                    Item::Char(hi) => hi,
                    Item::Class(_) => return Err(invalid("invalid character range")),
                }
            } else {
                lo
            };
            if lo > hi {
                return Err(invalid("invalid character range"));
            }
            push_range(&mut set, lo, hi);
            if self.flags.icase {
                for (a, z, shift) in [('a', 'z', -32i32), ('A', 'Z', 32)] {
                    let (l, h) = (lo.max(a), hi.min(z));
                    if l <= h {
                        let m = |c: char| char::from_u32((c as i32 + shift) as u32).unwrap_or(c);
                        push_range(&mut set, m(l), m(h));
                    }
                }
            }
        }
        self.out.push('[');
        if negated {
            self.out.push('^');
            if self.flags.nlstop {
                set.push_str("\\n");
            }
        }
        self.out.push_str(&set);
        self.out.push(']');
        Ok(Atom::Quantifiable(None))
    }

    /// One item of a bracket expression, its first character `c` already taken.
    fn bracket_item(&mut self, c: char) -> PgResult<Item> {
        match (c, self.peek()) {
            ('[', Some(':')) => {
                self.pos += 1;
                let name = self.bracket_name(':')?;
                let name = match name.as_str() {
                    "upper" | "lower" if self.flags.icase => "alpha",
                    n => n,
                };
                Ok(Item::Class(
                    posix_class(name).ok_or_else(|| invalid("invalid character class"))?,
                ))
            }
            ('[', Some(d @ ('.' | '='))) => {
                self.pos += 1;
                let name = self.bracket_name(d)?;
                let mut it = name.chars();
                match (it.next(), it.next()) {
                    (Some(ch), None) => Ok(Item::Char(ch)),
                    _ => Err(invalid("invalid collating element")),
                }
            }
            ('\\', Some(e)) => {
                if let Some(class) = shorthand(e) {
                    self.pos += 1;
                    return Ok(Item::Class(match e {
                        'D' => "[^0-9]",
                        'S' => "[^\\t-\\r ]",
                        'W' => "[^0-9A-Za-z_]",
                        _ => class,
                    }));
                }
                Ok(Item::Char(self.char_entry()?))
            }
            ('\\', None) => Err(invalid("brackets [] not balanced")),
            (c, _) => Ok(Item::Char(c)),
        }
    }

    /// The name in `[:name:]`, `[.name.]` or `[=name=]`, after its opening `[` and
    /// delimiter.
    fn bracket_name(&mut self, delim: char) -> PgResult<String> {
        let mut name = String::new();
        loop {
            match self.next() {
                None => return Err(invalid("brackets [] not balanced")),
                Some(c) if c == delim && self.peek() == Some(']') => {
                    self.pos += 1;
                    return Ok(name);
                }
                Some(c) => name.push(c),
            }
        }
    }
}

enum QuantKind {
    /// `{m}` / `{m}?`: as greedy as its atom.
    Fixed,
    Greedy,
    Lazy,
}

enum Item {
    Char(char),
    Class(&'static str),
}

/// The set of a class shorthand escape (`\d \s \w` and their complements), as the inside of
/// a character class.
fn shorthand(c: char) -> Option<&'static str> {
    match c {
        'd' | 'D' => Some("0-9"),
        's' | 'S' => Some("\\t-\\r "),
        'w' | 'W' => Some("0-9A-Za-z_"),
        _ => None,
    }
}

/// The POSIX character classes of the C locale (ASCII only), as the inside of a class.
fn posix_class(name: &str) -> Option<&'static str> {
    Some(match name {
        "alnum" => "0-9A-Za-z",
        "alpha" => "A-Za-z",
        "ascii" => "\\x00-\\x7F",
        "blank" => "\\t ",
        "cntrl" => "\\x00-\\x1F\\x7F",
        "digit" => "0-9",
        "graph" => "!-~",
        "lower" => "a-z",
        "print" => " -~",
        "punct" => "!-/:-@\\[-`{-~",
        "space" => "\\t-\\r ",
        "upper" => "A-Z",
        "word" => "0-9A-Za-z_",
        "xdigit" => "0-9A-Fa-f",
        _ => return None,
    })
}

fn push_char(out: &mut String, c: char) {
    if c.is_alphanumeric() {
        out.push(c);
    } else {
        let _ = write!(out, "\\x{{{:X}}}", c as u32);
    }
}

fn push_range(set: &mut String, lo: char, hi: char) {
    push_char(set, lo);
    if hi != lo {
        set.push('-');
        push_char(set, hi);
    }
}
