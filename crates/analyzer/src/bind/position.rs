//! Where PostgreSQL points in the query text for errors about an operator.
//!
//! sqlparser's `BinaryOp` carries no span for the operator itself, and the spans of some
//! operands stop short (a cast's span ends before its `::type`, a unary minus's starts after
//! the sign), so the operator is found by re-tokenizing the text between the operands.

use super::Binder;
use keel_common::PgError;
use keel_common::sqlstate::{AMBIGUOUS_FUNCTION, UNDEFINED_FUNCTION};
use sqlparser::ast::{self, Spanned};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan, Tokenizer};

/// Characters PostgreSQL operators are made of.
fn is_operator(t: &Token) -> bool {
    let s = t.to_string();
    !s.is_empty() && s.chars().all(|c| "+-*/<>=~!@#%^&|`?".contains(c))
}

fn precedes(a: Location, b: Location) -> bool {
    (a.line, a.column) < (b.line, b.column)
}

impl Binder<'_> {
    /// The statement's tokens without whitespace and comments, starting before `to` (None if
    /// the text does not tokenize).
    fn tokens_before(&self, to: Location) -> Option<Vec<TokenWithSpan>> {
        let toks = Tokenizer::new(&PostgreSqlDialect {}, self.text)
            .tokenize_with_location()
            .ok()?;
        Some(
            toks.into_iter()
                .filter(|t| !matches!(t.token, Token::Whitespace(_)))
                .take_while(|t| precedes(t.span.start, to))
                .collect(),
        )
    }

    /// Positions an error from the prefix operator applied to `operand` as PostgreSQL does:
    /// an operator that does not exist or is not unique at the operator (the last operator
    /// token before the operand), anything else (a literal that does not convert) at the
    /// operand.
    pub(super) fn at_prefix_operator(&self, err: PgError, operand: &ast::Expr) -> PgError {
        if err.code != UNDEFINED_FUNCTION && err.code != AMBIGUOUS_FUNCTION {
            return self.at(err, operand.span());
        }
        let op = self
            .tokens_before(operand.span().start)
            .and_then(|toks| toks.iter().rfind(|t| is_operator(&t.token)).map(|t| t.span));
        self.at(err, op.unwrap_or_else(|| operand.span()))
    }

    /// The 1-based position of the operator of `left op right`: the last operator token at
    /// the outer parenthesis level between the operands' starts that follows an operand (so
    /// not the sign in `a - -1`). Falls back to the first non-blank after `left`.
    pub(super) fn operator_position(&self, left: &ast::Expr, right: &ast::Expr) -> Option<u32> {
        self.operator_position_between(left, right.span().start)
    }

    /// `operator_position` where the right side starts at `to` (`x = any (subquery)`).
    pub(super) fn operator_position_between(&self, left: &ast::Expr, to: Location) -> Option<u32> {
        let from = left.span().start;
        let found = self.tokens_before(to).and_then(|toks| {
            let mut depth = 0i32;
            let mut prev: Option<&Token> = None;
            let mut at = None;
            for t in toks.iter().filter(|t| !precedes(t.span.start, from)) {
                match t.token {
                    Token::LParen | Token::LBracket => depth += 1,
                    Token::RParen | Token::RBracket if depth == 0 => {
                        // The left operand's span began inside its parentheses
                        // (`(1 + 2) = x`): all so far was the left operand.
                        at = None;
                    }
                    Token::RParen | Token::RBracket => depth -= 1,
                    _ => {}
                }
                let after_operand = prev
                    .is_some_and(|p| !is_operator(p) && !matches!(p, Token::LParen | Token::Comma));
                if depth == 0 && is_operator(&t.token) && after_operand {
                    at = Some(t.span.start);
                }
                prev = Some(&t.token);
            }
            at
        });
        match found {
            Some(loc) => self.position(Span::new(loc, loc)),
            None => self.position_near(left.span().end, false),
        }
    }
}

impl Binder<'_> {
    /// A cast that does not exist (42846) placed at its `::`, as PostgreSQL's TypeCast node
    /// is: the first `::` after the operand's start outside the operand's parentheses.
    pub(super) fn at_cast(&self, err: PgError, operand: &ast::Expr) -> PgError {
        if err.code != keel_common::sqlstate::CANNOT_COERCE || err.position.is_some() {
            return err;
        }
        self.at(err, self.cast_span(operand))
    }

    /// Where PostgreSQL's TypeCast node for `operand::type` is: its `::`, the first one after
    /// the operand's start outside the operand's parentheses, past those of the operand's
    /// own chained casts (`'{1}'::int2[]::int2vector` points at the second).
    pub(super) fn cast_span(&self, operand: &ast::Expr) -> Span {
        let from = operand.span().start;
        let mut skip = 0;
        let mut inner = operand;
        while let ast::Expr::Cast {
            kind: ast::CastKind::DoubleColon,
            expr,
            ..
        } = inner
        {
            skip += 1;
            inner = expr;
        }
        let toks = Tokenizer::new(&PostgreSqlDialect {}, self.text)
            .tokenize_with_location()
            .ok();
        let mut depth = 0i32;
        let found = toks
            .iter()
            .flatten()
            .filter(|t| !precedes(t.span.start, from))
            .find(|t| {
                match t.token {
                    Token::LParen | Token::LBracket => depth += 1,
                    Token::RParen | Token::RBracket => depth = (depth - 1).max(0),
                    _ => {}
                }
                if depth == 0 && t.token == Token::DoubleColon {
                    if skip == 0 {
                        return true;
                    }
                    skip -= 1;
                }
                false
            });
        found.map_or_else(|| operand.span(), |t| t.span)
    }

    /// `err` of `left [NOT] LIKE ANY (...)` placed at the LIKE (or its NOT), where
    /// PostgreSQL's grammar puts the operator, unless it has a position already.
    pub(super) fn like_position(
        &self,
        err: PgError,
        left: &ast::Expr,
        pattern: &ast::Expr,
    ) -> PgError {
        if !Self::wants_position(&err) {
            return err;
        }
        let end = left.span().end;
        let at = self.tokens_before(pattern.span().start).and_then(|toks| {
            toks.iter()
                .filter(|t| !precedes(t.span.start, end))
                .find(|t| {
                    matches!(&t.token, Token::Word(w) if matches!(
                        w.keyword,
                        sqlparser::keywords::Keyword::NOT
                            | sqlparser::keywords::Keyword::LIKE
                            | sqlparser::keywords::Keyword::ILIKE
                    ))
                })
                .map(|t| t.span.start)
        });
        match at.and_then(|loc| self.position(Span::new(loc, loc))) {
            Some(p) => err.or_position(p),
            None => err,
        }
    }
}
