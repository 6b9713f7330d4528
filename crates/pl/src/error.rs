//! The error a body that does not compile returns, with where in the body it was found.

use keel_common::{PgError, sqlstate};
use std::fmt;

/// A compile-time error in a PL/pgSQL body.
///
/// `error.position`, when set, is PostgreSQL's 1-based *character* position of the offending
/// token within the body text (not within the CREATE FUNCTION or DO statement: the caller adds
/// the body's own position when it reports the error against the statement). `offset` is the
/// same place as a byte offset into the body, and `line` its 1-based line in the body (what
/// PostgreSQL prints as `compilation of PL/pgSQL function "f" near line N`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlSyntaxError {
    pub error: PgError,
    pub offset: Option<usize>,
    pub line: u32,
}

impl PlSyntaxError {
    /// An error located at byte `offset` of `src`.
    pub(crate) fn at(src: &str, offset: usize, error: PgError) -> Box<Self> {
        let offset = offset.min(src.len());
        let chars = src.get(..offset).map_or(offset, |s| s.chars().count());
        Box::new(PlSyntaxError {
            error: error.with_position(chars as u32 + 1),
            offset: Some(offset),
            line: line_of(src, offset),
        })
    }

    /// An error PostgreSQL reports without a cursor position, charged to `line`.
    pub(crate) fn unplaced(error: PgError, line: u32) -> Box<Self> {
        Box::new(PlSyntaxError {
            error,
            offset: None,
            line,
        })
    }

    /// PostgreSQL's `yyerror`: `msg at or near "token"`, or `msg at end of input`.
    pub(crate) fn near(src: &str, offset: usize, token_text: &str, msg: &str) -> Box<Self> {
        let message = if token_text.is_empty() {
            format!("{msg} at end of input")
        } else {
            format!("{msg} at or near \"{token_text}\"")
        };
        Self::at(src, offset, PgError::new(sqlstate::SYNTAX_ERROR, message))
    }
}

impl From<PlSyntaxError> for PgError {
    fn from(e: PlSyntaxError) -> PgError {
        e.error
    }
}

impl From<Box<PlSyntaxError>> for PgError {
    fn from(e: Box<PlSyntaxError>) -> PgError {
        e.error
    }
}

impl fmt::Display for PlSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (line {})", self.error, self.line)
    }
}

impl std::error::Error for PlSyntaxError {}

/// 1-based line number of byte `offset` in `src`: line 1 is the text right after the opening
/// quote of the body, as PostgreSQL counts.
pub fn line_of(src: &str, offset: usize) -> u32 {
    let end = offset.min(src.len());
    1 + src.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u32
}
