//! Syntax errors as PostgreSQL reports them. `sqlparser`'s grammar is more permissive than
//! PostgreSQL's in places (reserved keywords taken as identifiers, DELETE without FROM, GROUP
//! without BY), so it can fail later than PostgreSQL or at a different token. This scan finds
//! the spots where PostgreSQL's parser stops; when it finds one, that is what is reported.

use keel_common::PgError;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

/// PostgreSQL's fully reserved keywords (never a column, table or bare alias name).
const RESERVED: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "both",
    "case",
    "cast",
    "check",
    "collate",
    "column",
    "constraint",
    "create",
    "current_catalog",
    "current_date",
    "current_role",
    "current_time",
    "current_timestamp",
    "current_user",
    "default",
    "deferrable",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "false",
    "fetch",
    "for",
    "foreign",
    "from",
    "grant",
    "group",
    "having",
    "in",
    "initially",
    "intersect",
    "into",
    "lateral",
    "leading",
    "limit",
    "localtime",
    "localtimestamp",
    "not",
    "null",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "placing",
    "primary",
    "references",
    "returning",
    "select",
    "session_user",
    "some",
    "symmetric",
    "table",
    "then",
    "to",
    "trailing",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "variadic",
    "when",
    "where",
    "window",
    "with",
];

/// Reserved keywords that may start an expression.
const EXPR_START: &[&str] = &[
    "case",
    "cast",
    "not",
    "null",
    "true",
    "false",
    "array",
    "current_date",
    "current_time",
    "current_timestamp",
    "current_user",
    "session_user",
    "user",
    "localtime",
    "localtimestamp",
    "current_role",
    "current_catalog",
];

fn word(t: &Token) -> Option<String> {
    match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_lowercase()),
        _ => None,
    }
}

fn reserved(t: &Token) -> bool {
    word(t).is_some_and(|w| RESERVED.contains(&w.as_str()))
}

/// Whether an expression must follow `t`.
fn wants_expr(t: &Token) -> bool {
    matches!(
        t,
        Token::Plus
            | Token::Minus
            | Token::Mul
            | Token::Div
            | Token::Mod
            | Token::Eq
            | Token::Neq
            | Token::Lt
            | Token::Gt
            | Token::LtEq
            | Token::GtEq
            | Token::StringConcat
    ) || word(t).is_some_and(|w| matches!(w.as_str(), "then" | "else" | "when" | "set"))
}

/// Where this scan sees PostgreSQL's grammar fail: the token (None = end of input), its
/// 1-based character position in `text`, and whether the spot is certain (a missing
/// FROM/BY) rather than only a candidate that holds when sqlparser fails later.
pub struct PgSyntaxError {
    pub token: Option<String>,
    pub pos: usize,
    pub certain: bool,
}

pub fn pg_error_token(text: &str) -> Option<PgSyntaxError> {
    let dialect = PostgreSqlDialect {};
    let toks: Vec<TokenWithSpan> = Tokenizer::new(&dialect, text)
        .tokenize_with_location()
        .ok()?
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let pos = |t: &TokenWithSpan| -> usize {
        let mut chars = 0;
        for (i, l) in text.split('\n').enumerate() {
            if i as u64 + 1 == t.span.start.line {
                return chars + t.span.start.column as usize;
            }
            chars += l.chars().count() + 1;
        }
        chars
    };
    let at = |i: usize, certain: bool| -> Option<PgSyntaxError> {
        let (token, pos) = match toks.get(i) {
            Some(t) if !matches!(t.token, Token::EOF) => (Some(t.token.to_string()), pos(t)),
            _ => (None, text.trim_end().chars().count() + 1),
        };
        Some(PgSyntaxError {
            token,
            pos,
            certain,
        })
    };
    let wildcard = |i: usize| {
        matches!(toks[i].token, Token::Mul)
            && i > 0
            && (matches!(
                toks[i - 1].token,
                Token::Comma | Token::Period | Token::LParen
            ) || word(&toks[i - 1].token).as_deref() == Some("select"))
    };
    for i in 0..toks.len() {
        let t = &toks[i].token;
        let next = toks.get(i + 1).map(|t| &t.token);
        let w = word(t);
        // DELETE needs FROM; GROUP and ORDER need BY.
        if i == 0
            && w.as_deref() == Some("delete")
            && next.and_then(word).as_deref() != Some("from")
        {
            return at(1, true);
        }
        if matches!(w.as_deref(), Some("group" | "order"))
            && i > 0
            && next.and_then(word).as_deref() != Some("by")
        {
            return at(i + 1, true);
        }
        // An expression is expected but a reserved keyword that cannot start one follows.
        if i > 0
            && wants_expr(t)
            && !wildcard(i)
            && let Some(n) = next
            && reserved(n)
            && !word(n).is_some_and(|x| EXPR_START.contains(&x.as_str()))
        {
            // After THEN/ELSE/WHEN sqlparser may have read CASE as a name and failed earlier.
            let case_arm = matches!(w.as_deref(), Some("then" | "else" | "when"));
            return at(i + 1, case_arm);
        }
        // `*` as a select-list wildcard takes no alias.
        if wildcard(i)
            && !matches!(toks[i - 1].token, Token::LParen)
            && let Some(n) = next
            && word(n).is_some()
            && !reserved(n)
        {
            return at(i + 1, false);
        }
    }
    None
}

/// `TRIM(LEADING FROM x)` (a side with no character list) is PostgreSQL syntax `sqlparser`
/// rejects; it means trimming spaces, so it is rewritten to `TRIM(LEADING ' ' FROM x)`.
/// Returns the rewritten text when the pattern occurs (used only after a parse failure).
pub fn trim_without_characters(text: &str) -> Option<String> {
    let dialect = PostgreSqlDialect {};
    let mut toks = Tokenizer::new(&dialect, text).tokenize().ok()?;
    let solid: Vec<usize> = (0..toks.len())
        .filter(|i| !matches!(toks[*i], Token::Whitespace(_)))
        .collect();
    let mut inserts = Vec::new();
    for w in solid.windows(4) {
        let kw = |i: usize| word(&toks[w[i]]);
        if kw(0).as_deref() == Some("trim")
            && toks[w[1]] == Token::LParen
            && kw(2).is_some_and(|s| matches!(s.as_str(), "leading" | "trailing" | "both"))
            && kw(3).as_deref() == Some("from")
        {
            inserts.push(w[3]);
        }
    }
    if inserts.is_empty() {
        return None;
    }
    for at in inserts.into_iter().rev() {
        toks.insert(
            at,
            Token::Whitespace(sqlparser::tokenizer::Whitespace::Space),
        );
        toks.insert(at, Token::SingleQuotedString(" ".into()));
    }
    Some(toks.iter().map(|t| t.to_string()).collect())
}

/// The PostgreSQL statement forms `sqlparser` cannot read and keel has not built, by their
/// leading words: each names its feature for the 0A000 message.
fn unbuilt_statement(w: &[&str]) -> Option<&'static str> {
    // `CREATE OR REPLACE x` reads as `CREATE x`: keep "create", drop "or replace".
    let replaced: Vec<&str>;
    let w = match w {
        ["create", "or", "replace", rest @ ..] => {
            replaced = std::iter::once("create")
                .chain(rest.iter().copied())
                .collect();
            &replaced[..]
        }
        w => w,
    };
    let in_alter_table = |words: &[&str]| {
        matches!(w, ["alter", "table", ..]) && w.windows(words.len()).any(|x| x == words)
    };
    Some(match w {
        ["alter", "trigger", ..] => "ALTER TRIGGER",
        ["comment", "on", ..] => "COMMENT ON",
        ["create", "rule", ..] => "rules (CREATE RULE)",
        ["create", "procedure", ..] => "procedures (CREATE PROCEDURE)",
        ["table", _, ..] => "the TABLE command",
        ["create", "function", ..] if w.contains(&"leakproof") => "LEAKPROOF functions",
        ["create", "function", ..] if w.contains(&"window") => "window functions in SQL",
        _ if in_alter_table(&["inherit"]) => "table inheritance (ALTER TABLE ... INHERIT)",
        _ => return None,
    })
}

/// After a parse failure: a well-formed PostgreSQL statement keel does not implement, which
/// must answer 0A000 rather than a syntax error. `ALTER INDEX [IF EXISTS] name SET|RESET (...)`
/// (index storage parameters such as gin_pending_list_limit, used by the seeds).
pub fn unsupported_statement(text: &str) -> Option<PgError> {
    let dialect = PostgreSqlDialect {};
    let toks = Tokenizer::new(&dialect, text).tokenize().ok()?;
    let words: Vec<String> = toks
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .map(|t| word(t).unwrap_or_default())
        .collect();
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    if w.windows(3).any(|x| x == ["where", "current", "of"]) {
        return Some(PgError::unsupported("WHERE CURRENT OF"));
    }
    if let Some(feature) = unbuilt_statement(&w) {
        return Some(PgError::unsupported(feature));
    }
    let rest = match w.as_slice() {
        ["alter", "index", "if", "exists", _, rest @ ..] => rest,
        ["alter", "index", _, rest @ ..] => rest,
        _ => return None,
    };
    match rest.first() {
        Some(&"set") | Some(&"reset") => Some(PgError::unsupported(
            "ALTER INDEX ... SET/RESET (index storage parameters)",
        )),
        _ => None,
    }
}
