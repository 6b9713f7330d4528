//! Identifier length: PostgreSQL's scanner truncates every identifier, quoted or not, to
//! NAMEDATALEN - 1 = 63 bytes (at a UTF-8 character boundary) and says so with NOTICE 42622
//! `identifier "..." will be truncated to "..."`. Because it happens in the scanner, the
//! same long name in `CREATE TABLE` and in a later `SELECT` reaches the same table.
//!
//! keel does it on sqlparser's tokens before the statement is parsed: each identifier longer
//! than 63 bytes is rewritten in the text, truncated and padded with spaces to its original
//! length in characters, so every later token keeps its position (error cursors stay right).

use keel_common::error::Severity;
use keel_common::{PgError, sqlstate};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

/// NAMEDATALEN - 1: the longest identifier, in bytes.
pub const MAX_IDENTIFIER_BYTES: usize = 63;

/// `text` with its over-long identifiers truncated (None when it has none), and a notice for
/// each, in text order.
pub fn truncate_identifiers(text: &str) -> Option<(String, Vec<PgError>)> {
    // Only a text with a long enough word or a quoted identifier can have one.
    let long_word = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .any(|w| w.len() > MAX_IDENTIFIER_BYTES);
    if !long_word && !text.contains('"') {
        return None;
    }
    let dialect = PostgreSqlDialect {};
    let tokens = Tokenizer::new(&dialect, text)
        .tokenize_with_location()
        .ok()?;
    // Byte offset of each line's start, to turn (line, column) into byte offsets.
    let mut line_starts = vec![0usize];
    line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    let byte_at = |line: u64, column: u64| -> Option<usize> {
        let start = *line_starts.get((line as usize).checked_sub(1)?)?;
        let rest = text.get(start..)?;
        let skip = (column as usize).checked_sub(1)?;
        Some(start + rest.char_indices().nth(skip).map_or(rest.len(), |(i, _)| i))
    };
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut notices = Vec::new();
    for t in &tokens {
        let Token::Word(w) = &t.token else { continue };
        if w.value.len() <= MAX_IDENTIFIER_BYTES || !matches!(w.quote_style, None | Some('"')) {
            continue;
        }
        let (Some(from), Some(to)) = (
            byte_at(t.span.start.line, t.span.start.column),
            byte_at(t.span.end.line, t.span.end.column),
        ) else {
            continue;
        };
        // Unquoted names are folded first (ASCII letters only, as PostgreSQL's scanner).
        let name = match w.quote_style {
            None => w.value.to_ascii_lowercase(),
            Some(_) => w.value.clone(),
        };
        let cut = clip(&name);
        notices.push(PgError::notice(
            Severity::Notice,
            sqlstate::NAME_TOO_LONG,
            format!("identifier \"{name}\" will be truncated to \"{cut}\""),
        ));
        let written = match w.quote_style {
            None => cut.to_string(),
            Some(_) => format!("\"{}\"", cut.replace('"', "\"\"")),
        };
        let original = &text[from..to];
        out.push_str(&text[copied..from]);
        out.push_str(&written);
        for _ in written.chars().count()..original.chars().count() {
            out.push(' ');
        }
        copied = to;
    }
    if notices.is_empty() {
        return None;
    }
    out.push_str(&text[copied..]);
    Some((out, notices))
}

/// The longest prefix of `name` of at most 63 bytes that ends at a character boundary.
fn clip(name: &str) -> &str {
    let mut end = MAX_IDENTIFIER_BYTES.min(name.len());
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_identifiers_are_cut_at_a_character_boundary_and_keep_positions() {
        let long = "A".repeat(70);
        let quoted = "é".repeat(40);
        let text = format!("select {long}, \"{quoted}\" from t where x = 'y'");
        let (out, notices) = truncate_identifiers(&text).unwrap();
        assert_eq!(out.chars().count(), text.chars().count());
        assert!(out.contains(&format!("{} ", "a".repeat(63))));
        assert!(out.contains(&format!("\"{}\"", "é".repeat(31))));
        assert!(out.ends_with("from t where x = 'y'"));
        assert_eq!(notices.len(), 2);
        assert!(notices[0].message.contains(&"a".repeat(70)));
        assert_eq!(notices[1].code, sqlstate::NAME_TOO_LONG);
        assert!(truncate_identifiers("select a from t").is_none());
    }
}
