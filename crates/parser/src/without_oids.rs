//! `CREATE TABLE ... WITHOUT OIDS`: PostgreSQL 12 dropped tables with OIDs but still accepts
//! the clause that asks for none, which old scripts carry. sqlparser does not know it, so
//! the trailing clause is blanked before parsing, every other character keeping its offset.

use crate::symmetric::{blank_ranges, keyword, offset, significant_tokens};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

/// The text with a trailing `WITHOUT OIDS` of a CREATE TABLE blanked; None when it has none.
pub fn rewrite(text: &str) -> Option<String> {
    let sig = significant_tokens(text)?;
    let kw = |i: usize| sig.get(i).and_then(|t| keyword(&t.token));
    let word = |i: usize, w: &str| {
        matches!(sig.get(i).map(|t| &t.token),
            Some(Token::Word(x)) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
    };
    let n = sig.len();
    if kw(0) != Some(Keyword::CREATE)
        || !sig
            .iter()
            .take(6)
            .any(|t| keyword(&t.token) == Some(Keyword::TABLE))
        || n < 3
        || !matches!(sig[n - 3].token, Token::RParen)
        || !word(n - 2, "without")
        || !word(n - 1, "oids")
    {
        return None;
    }
    let from = offset(text, sig[n - 2].span.start);
    let to = offset(text, sig[n - 1].span.end);
    Some(blank_ranges(text, &[(from, to)]))
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn blanks_a_trailing_without_oids_only() {
        let t = "CREATE TABLE t (a int) WITHOUT OIDS;";
        let r = rewrite(t).unwrap();
        assert_eq!(r.len(), t.len());
        assert_eq!(r, format!("CREATE TABLE t (a int){};", " ".repeat(13)));
        assert!(rewrite("CREATE TABLE t (a int)").is_none());
        assert!(rewrite("SELECT (1) without oids").is_none());
    }
}
