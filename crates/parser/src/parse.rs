//! Running `sqlparser` with PostgreSQL's nesting behaviour.
//!
//! PostgreSQL's grammar is a bison parser: nesting costs parser-stack entries, not C stack,
//! and past `YYMAXDEPTH` (10,000 entries) a statement fails with 42601 `memory exhausted` at
//! the token being read. sqlparser is a recursive-descent parser: each nested expression,
//! query or type costs it a few kB of thread stack (measured in release builds: ~4.5 kB per
//! parenthesis, ~14 kB per nested function call, ~31 kB per nested scalar subquery). So that
//! keel parses the nesting PostgreSQL parses, the workspace enables sqlparser's
//! `recursive-protection`: its recursive functions continue on heap-allocated stack segments
//! when the thread's stack runs low, and free them on return.
//!
//! Two bounds keep the parse itself bounded:
//! - [`too_deep`] counts nesting on the tokens (parentheses, brackets, CASE ... END, runs of
//!   prefix NOT/-/+) and stops past [`MAX_NESTING`] with PostgreSQL's `memory exhausted`
//!   error, before sqlparser runs;
//! - sqlparser's own recursion counter stops at [`MAX_PARSE_DEPTH`] plus a little headroom
//!   whatever the shape (a scalar subquery costs it two levels), with the same error.
//!
//! Nesting that parses but is deeper than `max_stack_depth` allows later (binding, planning,
//! evaluation) fails there with 54001 (keel_common::stack).

use keel_common::{PgError, sqlstate};
use sqlparser::ast;
use sqlparser::parser::{Parser, ParserError};

/// sqlparser recursion levels a statement may use: PostgreSQL's YYMAXDEPTH. A parenthesis,
/// a CASE, a function call or a NOT costs one level (one to five bison entries in
/// PostgreSQL), a scalar subquery two.
pub const MAX_PARSE_DEPTH: usize = 10_000;

/// The deepest nesting the token scan ([`too_deep`]) lets through: PostgreSQL 15 parses
/// `SELECT` with 9,993 nested parentheses and fails at 9,994 (its parser stack holds 10,000
/// entries, a few of which the statement itself takes).
pub const MAX_NESTING: usize = 9_993;

/// The most operators, postfix tests and set operations a statement may have. sqlparser
/// builds a chain of them (`1+1+...`, `a OR b OR ...`, `... UNION ALL ...`) as a left-deep
/// tree without recursing, but dropping that tree recurses once per link (32 to 112 bytes of
/// stack each): past ~500,000 links that is more than the session stack's margin. Past this
/// many the statement fails with 54001, as PostgreSQL fails such chains (past ~4,000 terms,
/// except AND/OR, which it runs at any length).
pub const MAX_CHAIN_LINKS: usize = 200_000;

/// Levels sqlparser may use beyond the nesting [`too_deep`] counts (the statement, its query
/// and its select item are levels too), so that nesting past the limit is stopped by the
/// token scan, not in the middle of sqlparser's backtracking.
const PARSER_HEADROOM: usize = 64;

/// Why a text did not parse.
pub enum Failure {
    /// A syntax error, as sqlparser reports it.
    Syntax(ParserError),
    /// Nested deeper than [`MAX_PARSE_DEPTH`]: PostgreSQL's `memory exhausted` error, and
    /// the 1-based character position in the text of the token the parser stopped at.
    TooDeep(Box<PgError>, Option<usize>),
}

/// Parses `text` into statements.
pub fn statements(text: &str) -> Result<Vec<ast::Statement>, Failure> {
    if let Some(f) = too_deep(text) {
        return Err(f);
    }
    let dialect = crate::dialect::KeelDialect;
    let mut parser = Parser::new(&dialect)
        .with_recursion_limit(MAX_PARSE_DEPTH + PARSER_HEADROOM)
        .try_with_sql(text)
        .map_err(Failure::Syntax)?;
    parser
        .parse_statements()
        .map_err(|e| failure(e, &parser, text))
}

/// Parses `text` as one expression (stored DEFAULT and CHECK texts).
pub fn expression(text: &str) -> Result<ast::Expr, Failure> {
    if let Some(f) = too_deep(text) {
        return Err(f);
    }
    let dialect = crate::dialect::KeelDialect;
    let mut parser = Parser::new(&dialect)
        .with_recursion_limit(MAX_PARSE_DEPTH + PARSER_HEADROOM)
        .try_with_sql(text)
        .map_err(Failure::Syntax)?;
    parser.parse_expr().map_err(|e| failure(e, &parser, text))
}

impl Failure {
    /// The error as a client sees it, for a text at `char_offset` in the query string
    /// (`syntax` builds syntax errors).
    pub fn into_error(
        self,
        char_offset: usize,
        syntax: impl FnOnce(ParserError) -> PgError,
    ) -> PgError {
        match self {
            Failure::Syntax(e) => syntax(e),
            Failure::TooDeep(e, Some(p)) => (*e).with_position((char_offset + p) as u32),
            Failure::TooDeep(e, None) => *e,
        }
    }
}

/// The nesting limit, checked on the tokens before sqlparser runs: parentheses, brackets,
/// CASE ... END and runs of prefix operators (NOT, unary minus and plus) each open one level,
/// as each costs sqlparser one level of recursion. sqlparser's own counter stops the same
/// statements, but some of its paths report the stop as a syntax error elsewhere, and for a
/// CASE nested 10,000 deep it first backtracks for more than a minute. Only a text longer
/// than the limit can nest that deep, so shorter statements are not scanned.
fn too_deep(text: &str) -> Option<Failure> {
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::{Token, Tokenizer};
    if text.len() <= MAX_NESTING {
        return None;
    }
    let dialect = crate::dialect::KeelDialect;
    let tokens = Tokenizer::new(&dialect, text)
        .tokenize_with_location()
        .ok()?;
    let mut depth = 0usize;
    let mut prefix_run = 0usize;
    let mut links = 0usize;
    // Whether the previous token ends an operand (then `-` is binary, not a prefix).
    let mut after_operand = false;
    for t in &tokens {
        let mut prefix = false;
        let operand_end = match &t.token {
            Token::Whitespace(_) => continue,
            Token::LParen | Token::LBracket => {
                depth += 1;
                false
            }
            Token::RParen | Token::RBracket => {
                depth = depth.saturating_sub(1);
                true
            }
            Token::Word(w) if w.keyword == Keyword::CASE => {
                depth += 1;
                false
            }
            Token::Word(w) if w.keyword == Keyword::END => {
                depth = depth.saturating_sub(1);
                true
            }
            Token::Word(w) if w.keyword == Keyword::NOT => {
                prefix = true;
                false
            }
            Token::Minus | Token::Plus if !after_operand => {
                prefix = true;
                false
            }
            Token::Word(_) | Token::Number(..) | Token::SingleQuotedString(_) => true,
            _ => false,
        };
        prefix_run = if prefix { prefix_run + 1 } else { 0 };
        if links_chain(&t.token) {
            links += 1;
            if links > MAX_CHAIN_LINKS {
                return Some(Failure::TooDeep(
                    Box::new(keel_common::stack::depth_exceeded()),
                    None,
                ));
            }
        }
        after_operand = operand_end;
        if depth + prefix_run > MAX_NESTING {
            return Some(Failure::TooDeep(
                Box::new(PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    format!("memory exhausted at or near \"{}\"", t.token),
                )),
                char_position(text, t.span.start),
            ));
        }
    }
    None
}

/// Whether a token can add a level to a left-deep chain in sqlparser's syntax tree (an infix
/// operator, a postfix test, a set operation).
fn links_chain(t: &sqlparser::tokenizer::Token) -> bool {
    use sqlparser::keywords::Keyword as K;
    use sqlparser::tokenizer::Token as T;
    match t {
        T::Word(w) => matches!(
            w.keyword,
            K::AND
                | K::OR
                | K::UNION
                | K::INTERSECT
                | K::EXCEPT
                | K::IS
                | K::LIKE
                | K::ILIKE
                | K::BETWEEN
                | K::IN
                | K::COLLATE
                | K::AT
        ),
        T::Plus
        | T::Minus
        | T::Mul
        | T::Div
        | T::Mod
        | T::StringConcat
        | T::Eq
        | T::DoubleEq
        | T::Neq
        | T::Lt
        | T::Gt
        | T::LtEq
        | T::GtEq
        | T::DoubleColon
        | T::Caret
        | T::Ampersand
        | T::Pipe
        | T::Sharp
        | T::ShiftLeft
        | T::ShiftRight
        | T::Tilde
        | T::LBracket => true,
        _ => false,
    }
}

fn failure(e: ParserError, parser: &Parser<'_>, text: &str) -> Failure {
    if !matches!(e, ParserError::RecursionLimitExceeded) {
        return Failure::Syntax(e);
    }
    let tok = parser.peek_token();
    let near = match &tok.token {
        sqlparser::tokenizer::Token::EOF => "memory exhausted at end of input".to_string(),
        t => format!("memory exhausted at or near \"{t}\""),
    };
    Failure::TooDeep(
        Box::new(PgError::new(sqlstate::SYNTAX_ERROR, near)),
        char_position(text, tok.span.start),
    )
}

/// 1-based character position of a tokenizer location in `text`.
pub fn char_position(text: &str, at: sqlparser::tokenizer::Location) -> Option<usize> {
    if at.line == 0 {
        return None;
    }
    let mut chars = 0;
    for (i, l) in text.split('\n').enumerate() {
        if i as u64 + 1 == at.line {
            return Some(chars + at.column as usize);
        }
        chars += l.chars().count() + 1;
    }
    None
}
