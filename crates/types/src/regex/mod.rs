//! PostgreSQL regular expressions (the Advanced Regular Expression flavour) on the
//! `regex-automata` engine: flags, compilation with a per-thread cache, PostgreSQL's match
//! selection, and the cores of the regexp functions.
//!
//! Match selection follows PostgreSQL, not Perl: a match starts at the leftmost position where
//! any match exists and, among those, is the longest when the RE is greedy and the shortest when
//! it is not (greediness by PostgreSQL's rules, worked out in `translate`). So
//! `regexp_replace('abcd', 'a|ab', 'X')` is `Xcd`, and `'a.*?b.*'` matches `axb` in `axbyb`.
//! The leftmost start comes from a leftmost-first search; the end from an anchored search
//! that reports every match end (`MatchKind::All`, longest) or stops at the first one
//! (shortest). Capturing groups come from a PikeVM run over exactly that span, so the whole
//! match is PostgreSQL's; within it, groups take Perl's preference order (earlier
//! alternatives and greedier quantifiers first), which agrees with PostgreSQL's in the usual
//! cases.
//!
//! Iteration (`g`, regexp_count, regexp_matches, splits) follows PostgreSQL's loop: the next
//! search starts where the last match ended, one character later after an empty match.

mod cores;
mod funcs;
mod translate;

pub use cores::{regexp_match, regexp_matches, regexp_split};
pub(crate) use funcs::{resolve_function, resolve_operator};

use crate::func::{CHECK_BYTES, FuncContext};
use keel_common::{PgError, PgResult, sqlstate};
use regex_automata::nfa::thompson::pikevm::{self, PikeVM};
use regex_automata::util::captures::Captures;
use regex_automata::{Anchored, Input, MatchKind, meta};
use std::cell::RefCell;

/// SQLSTATE 2201B, invalid_regular_expression.
const INVALID_REGULAR_EXPRESSION: &str = "2201B";

/// How many compiled REs each thread keeps (PostgreSQL keeps 32 per backend).
const CACHE_SIZE: usize = 32;

/// 2201B `invalid regular expression: {msg}`, PostgreSQL's wording for a pattern that does not
/// compile.
pub(crate) fn invalid(msg: &str) -> PgError {
    PgError::new(
        INVALID_REGULAR_EXPRESSION,
        format!("invalid regular expression: {msg}"),
    )
}

/// 0A000 for an ARE construct this engine cannot match faithfully.
pub(crate) fn unsupported(what: &str) -> PgError {
    PgError::new(
        sqlstate::FEATURE_NOT_SUPPORTED,
        format!("{what} are not supported"),
    )
}

/// The compile-time options of an RE (PostgreSQL's cflags), from a flags argument or
/// embedded options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `i`: case-insensitive (ASCII letters, as in the C locale).
    pub icase: bool,
    /// `n`/`p`: `.` and negated brackets do not match a newline.
    pub nlstop: bool,
    /// `n`/`w`: `^` and `$` match at line starts and ends too.
    pub nlanch: bool,
    /// `x`: white space and `#` comments in the pattern are ignored.
    pub expanded: bool,
    /// `q`: the whole pattern is a literal string.
    pub literal: bool,
}

impl Flags {
    /// Case-sensitive ARE defaults (`~`, regexp functions without flags).
    pub const DEFAULT: Flags = Flags {
        icase: false,
        nlstop: false,
        nlanch: false,
        expanded: false,
        literal: false,
    };

    /// Applies one option letter; false when `c` is no option letter. `b` and `e` (basic and
    /// extended POSIX flavours) are 0A000: only AREs are implemented.
    fn apply(&mut self, c: char) -> PgResult<bool> {
        match c {
            'b' | 'e' => {
                return Err(unsupported(
                    "basic and extended (non-advanced) regular expression flavours",
                ));
            }
            'c' => self.icase = false,
            'i' => self.icase = true,
            'm' | 'n' => (self.nlstop, self.nlanch) = (true, true),
            'p' => (self.nlstop, self.nlanch) = (true, false),
            's' => (self.nlstop, self.nlanch) = (false, false),
            'w' => (self.nlstop, self.nlanch) = (false, true),
            'q' => self.literal = true,
            't' => self.expanded = false,
            'x' => self.expanded = true,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// A regexp function's flags argument: compile options plus `g`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReFlags {
    pub flags: Flags,
    /// `g`: every match, not only the first.
    pub global: bool,
}

/// Parses a flags argument as PostgreSQL's `parse_re_flags` (22023 `invalid regular expression
/// option: "z"` for an unknown letter).
pub fn parse_flags(opts: Option<&str>) -> PgResult<ReFlags> {
    let mut r = ReFlags::default();
    for c in opts.unwrap_or("").chars() {
        if c == 'g' {
            r.global = true;
        } else if !r.flags.apply(c)? {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("invalid regular expression option: \"{c}\""),
            ));
        }
    }
    Ok(r)
}

/// 22023 `{func}() does not support the "global" option` for functions that take flags but
/// find one match.
pub(crate) fn no_global(r: &ReFlags, func: &str) -> PgResult<()> {
    if r.global {
        let err = PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!("{func}() does not support the \"global\" option"),
        );
        return Err(if func == "regexp_match" {
            err.with_hint("Use the regexp_matches function instead.")
        } else {
            err
        });
    }
    Ok(())
}

/// A compiled RE.
pub struct Regex {
    /// Leftmost-first: existence and the leftmost start of a match.
    find: meta::Regex,
    /// Every match end reported: anchored at a start, its longest match.
    longest: meta::Regex,
    /// Capture spans (and shortest ends), over one match's span.
    pike: PikeVM,
    pike_cache: pikevm::Cache,
    caps: Captures,
    /// Capturing groups in the pattern.
    pub groups: usize,
    greedy: bool,
}

/// A match: `spans[0]` is the whole match, `spans[i]` group i (None when it did not take
/// part); byte offsets.
pub type Spans = Vec<Option<(usize, usize)>>;

impl Regex {
    /// Compiles `pattern` (ARE syntax) under `flags`.
    pub fn new(pattern: &str, flags: Flags) -> PgResult<Regex> {
        let t = translate::translate(pattern, flags)?;
        // A syntax error here would be a translator bug: report it as one.
        let build = |kind: MatchKind| {
            meta::Regex::builder()
                .configure(meta::Regex::config().match_kind(kind))
                .build(&t.pattern)
                .map_err(|e| match e.size_limit() {
                    Some(_) => invalid("regular expression is too complex"),
                    None => {
                        PgError::internal(format!("regular expression translation failed: {e}"))
                    }
                })
        };
        let find = build(MatchKind::LeftmostFirst)?;
        let longest = build(MatchKind::All)?;
        let pike = PikeVM::builder()
            .configure(PikeVM::config().match_kind(MatchKind::All))
            .build(&t.pattern)
            .map_err(|_| invalid("regular expression is too complex"))?;
        let pike_cache = pike.create_cache();
        let caps = pike.create_captures();
        Ok(Regex {
            find,
            longest,
            pike,
            pike_cache,
            caps,
            groups: t.groups,
            greedy: t.greedy,
        })
    }

    /// Whether the RE matches anywhere in `hay` (`~`).
    pub fn is_match(&self, hay: &str) -> bool {
        self.find.is_match(hay)
    }

    /// The match PostgreSQL reports searching from byte `from`: the leftmost start, then the
    /// longest (greedy RE) or shortest end.
    pub fn find_at(&mut self, hay: &str, from: usize) -> Option<(usize, usize)> {
        if from > hay.len() {
            return None;
        }
        let m = self.find.search(&Input::new(hay).range(from..))?;
        let s = m.start();
        let anchored = Input::new(hay).range(s..).anchored(Anchored::Yes);
        let e = if self.greedy {
            self.longest.search(&anchored).map_or(m.end(), |l| l.end())
        } else {
            self.pike.search(
                &mut self.pike_cache,
                &anchored.earliest(true),
                &mut self.caps,
            );
            self.caps.get_match().map_or(m.end(), |l| l.end())
        };
        Some((s, e))
    }

    /// Like [`Regex::find_at`], with the span of each capturing group when `groups` is set
    /// (otherwise only the whole match).
    pub fn captures_at(&mut self, hay: &str, from: usize, groups: bool) -> Option<Spans> {
        let (s, e) = self.find_at(hay, from)?;
        let mut spans = vec![Some((s, e))];
        if groups && self.groups > 0 {
            let input = Input::new(hay).span(s..e).anchored(Anchored::Yes);
            self.pike
                .search(&mut self.pike_cache, &input, &mut self.caps);
            for i in 1..=self.groups {
                spans.push(self.caps.get_group(i).map(|g| (g.start, g.end)));
            }
        }
        Some(spans)
    }

    /// PostgreSQL's global search loop from byte `start`: calls `each` with every match (and
    /// its groups when `groups`) until it returns false. After an empty match the next search
    /// starts one character on. Checks for interrupts every [`CHECK_BYTES`] of haystack.
    pub fn for_each_match(
        &mut self,
        hay: &str,
        start: usize,
        groups: bool,
        ctx: &mut dyn FuncContext,
        mut each: impl FnMut(&Spans) -> PgResult<bool>,
    ) -> PgResult<()> {
        let mut from = start;
        let mut checked = start;
        while from <= hay.len() {
            let Some(spans) = self.captures_at(hay, from, groups) else {
                break;
            };
            let Some((s, e)) = spans[0] else { break };
            if !each(&spans)? {
                break;
            }
            from = e;
            if s == e {
                from += hay[e..].chars().next().map_or(1, char::len_utf8);
            }
            if from - checked >= CHECK_BYTES {
                ctx.check_interrupts()?;
                checked = from;
            }
        }
        Ok(())
    }
}

struct CacheEntry {
    pattern: String,
    flags: Flags,
    re: Regex,
}

thread_local! {
    /// The most recently used compiled REs of this thread, most recent first.
    static CACHE: RefCell<Vec<CacheEntry>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on the compiled form of `pattern` under `flags`, compiling it only when it is not
/// among this thread's [`CACHE_SIZE`] most recently used REs. Patterns that fail to compile
/// are not cached.
pub fn with_regex<T>(
    pattern: &str,
    flags: Flags,
    f: impl FnOnce(&mut Regex) -> PgResult<T>,
) -> PgResult<T> {
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        match cache
            .iter()
            .position(|e| e.flags == flags && e.pattern == pattern)
        {
            Some(0) => {}
            Some(i) => {
                let e = cache.remove(i);
                cache.insert(0, e);
            }
            None => {
                let re = Regex::new(pattern, flags)?;
                cache.truncate(CACHE_SIZE - 1);
                cache.insert(
                    0,
                    CacheEntry {
                        pattern: pattern.to_string(),
                        flags,
                        re,
                    },
                );
            }
        }
        f(&mut cache[0].re)
    })
}

/// The byte offset of the 1-based character position `pos` in `s` (past the end when `s` is
/// shorter: no match can start there).
fn char_pos_to_byte(s: &str, pos: i32) -> usize {
    let skip = (pos.max(1) - 1) as usize;
    match s.char_indices().nth(skip) {
        Some((b, _)) => b,
        None => s.len() + (skip - s.chars().count()),
    }
}

/// The 1-based character position of byte offset `b` in `s`.
fn byte_to_char_pos(s: &str, b: usize) -> i32 {
    (s[..b].chars().count() + 1) as i32
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_cores;
