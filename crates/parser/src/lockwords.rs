//! `FOR NO KEY UPDATE` and `FOR KEY SHARE`, which sqlparser does not parse: the extra words
//! are blanked at the token level (every other character keeps its offset, so error
//! positions stay right), leaving `FOR UPDATE` / `FOR SHARE`, and the strengths of all the
//! statement's locking clauses are returned in text order for the binder.

use crate::symmetric::{keyword, offset};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};
use std::borrow::Cow;

/// A locking clause's strength, weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockStrength {
    KeyShare,
    Share,
    NoKeyUpdate,
    Update,
}

impl LockStrength {
    /// As PostgreSQL's messages name the clause.
    pub fn clause(self) -> &'static str {
        match self {
            LockStrength::KeyShare => "FOR KEY SHARE",
            LockStrength::Share => "FOR SHARE",
            LockStrength::NoKeyUpdate => "FOR NO KEY UPDATE",
            LockStrength::Update => "FOR UPDATE",
        }
    }
}

/// The text with the weak clauses' extra words blanked, and every clause's strength in text
/// order. Borrowed, with no strengths, when no clause says KEY (sqlparser's own lock types
/// are then exact).
pub fn rewrite(text: &str) -> (Cow<'_, str>, Vec<LockStrength>) {
    if !crate::split::contains_ignore_case(text, "key") {
        return (Cow::Borrowed(text), Vec::new());
    }
    let dialect = PostgreSqlDialect {};
    let Ok(all) = Tokenizer::new(&dialect, text).tokenize_with_location() else {
        return (Cow::Borrowed(text), Vec::new());
    };
    let toks: Vec<&TokenWithSpan> = all
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let kw = |i: usize| toks.get(i).and_then(|t| keyword(&t.token));
    let mut strengths = Vec::new();
    let mut blank: Vec<(usize, usize)> = Vec::new();
    for i in 0..toks.len() {
        if kw(i) != Some(Keyword::FOR) {
            continue;
        }
        let (s, words) = match (kw(i + 1), kw(i + 2), kw(i + 3)) {
            (Some(Keyword::UPDATE), ..) => (LockStrength::Update, 0),
            (Some(Keyword::SHARE), ..) => (LockStrength::Share, 0),
            (Some(Keyword::KEY), Some(Keyword::SHARE), _) => (LockStrength::KeyShare, 1),
            (Some(Keyword::NO), Some(Keyword::KEY), Some(Keyword::UPDATE)) => {
                (LockStrength::NoKeyUpdate, 2)
            }
            _ => continue,
        };
        strengths.push(s);
        for t in &toks[i + 1..i + 1 + words] {
            blank.push((offset(text, t.span.start), offset(text, t.span.end)));
        }
    }
    if blank.is_empty() {
        return (Cow::Borrowed(text), Vec::new());
    }
    let mut out = text.to_string();
    for (s, e) in blank {
        out.replace_range(s..e, &" ".repeat(e - s));
    }
    (Cow::Owned(out), strengths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weak_clauses_are_blanked_in_place() {
        let (t, s) = rewrite("select * from t for no key update of t for key share skip locked");
        assert_eq!(
            t,
            "select * from t for        update of t for     share skip locked"
        );
        assert_eq!(s, vec![LockStrength::NoKeyUpdate, LockStrength::KeyShare]);
        let (t, s) = rewrite("select key from t for update");
        assert!(matches!(t, Cow::Borrowed(_)));
        assert!(s.is_empty());
    }
}
