//! `CREATE TABLE name [(col, ...)] AS query [WITH [NO] DATA]`: the two parts of PostgreSQL's
//! CREATE TABLE AS that sqlparser does not read. A column list without types is taken for a
//! list of column definitions, and `WITH [NO] DATA` after the query is not PostgreSQL-only
//! syntax sqlparser knows. Both are blanked out of the text before parsing (every other
//! character keeps its offset) and given back: the names become column definitions of type
//! [`ast::DataType::Unspecified`] ([`restore`]), and WITH NO DATA a flag of the parse.

use crate::symmetric::{blank_ranges, keyword, offset, significant_tokens};
use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

/// What [`rewrite`] took out of a CREATE TABLE AS.
pub struct CreateAs {
    /// The text with the column list and WITH [NO] DATA blanked.
    pub text: String,
    /// The column names of `(col, ...)`, folded as identifiers are.
    pub columns: Vec<String>,
    /// False for WITH NO DATA.
    pub with_data: bool,
}

/// None when `text` is not a CREATE TABLE AS with a column list or WITH [NO] DATA.
pub fn rewrite(text: &str) -> Option<CreateAs> {
    let sig = significant_tokens(text)?;
    let kw = |i: usize| sig.get(i).and_then(|t| keyword(&t.token));
    if kw(0) != Some(Keyword::CREATE) {
        return None;
    }
    let mut i = 1;
    if matches!(kw(i), Some(Keyword::GLOBAL | Keyword::LOCAL)) {
        i += 1;
    }
    if matches!(
        kw(i),
        Some(Keyword::TEMP | Keyword::TEMPORARY | Keyword::UNLOGGED)
    ) {
        i += 1;
    }
    if kw(i) != Some(Keyword::TABLE) {
        return None;
    }
    i += 1;
    if kw(i) == Some(Keyword::IF) && kw(i + 1) == Some(Keyword::NOT) {
        i += 3;
    }
    // The table's name: words joined by dots.
    while matches!(sig.get(i).map(|t| &t.token), Some(Token::Word(_)))
        && matches!(sig.get(i + 1).map(|t| &t.token), Some(Token::Period))
    {
        i += 2;
    }
    if !matches!(sig.get(i).map(|t| &t.token), Some(Token::Word(_))) {
        return None;
    }
    i += 1;
    let mut blank: Vec<(usize, usize)> = Vec::new();
    let mut columns = Vec::new();
    if matches!(sig.get(i).map(|t| &t.token), Some(Token::LParen)) {
        let open = i;
        let mut k = open + 1;
        loop {
            match &sig.get(k)?.token {
                Token::Word(w) if w.quote_style.is_some() => columns.push(w.value.clone()),
                Token::Word(w) => columns.push(w.value.to_lowercase()),
                _ => return None,
            }
            match &sig.get(k + 1)?.token {
                Token::Comma => k += 2,
                Token::RParen => break,
                _ => return None,
            }
        }
        let close = k + 1;
        blank.push((
            offset(text, sig[open].span.start),
            offset(text, sig[close].span.end),
        ));
        i = close + 1;
    }
    if kw(i) != Some(Keyword::AS) {
        return None;
    }
    let n = sig.len();
    let mut with_data = true;
    let tail = if n >= 3 && kw(n - 3) == Some(Keyword::WITH) && kw(n - 2) == Some(Keyword::NO) {
        with_data = false;
        Some(n - 3)
    } else if n >= 2 && kw(n - 2) == Some(Keyword::WITH) {
        Some(n - 2)
    } else {
        None
    };
    if let Some(t) = tail.filter(|_| kw(n - 1) == Some(Keyword::DATA)) {
        blank.push((
            offset(text, sig[t].span.start),
            offset(text, sig[n - 1].span.end),
        ));
    } else {
        with_data = true;
    }
    if blank.is_empty() {
        return None;
    }
    let out = blank_ranges(text, &blank);
    Some(CreateAs {
        text: out,
        columns,
        with_data,
    })
}

/// Puts the column names [`rewrite`] took out back into the parsed CREATE TABLE AS, as
/// columns without a type (the query gives them theirs).
pub fn restore(stmt: &mut ast::Statement, columns: &[String]) {
    if let ast::Statement::CreateTable(ct) = stmt {
        ct.columns = columns
            .iter()
            .map(|c| ast::ColumnDef {
                name: ast::Ident::with_quote('"', c.clone()),
                data_type: ast::DataType::Unspecified,
                options: Vec::new(),
            })
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_list_and_no_data_are_blanked_in_place() {
        let r = rewrite("create table t (a, \"B\") as select 1, 2 with no data").unwrap();
        assert_eq!(
            r.text,
            "create table t          as select 1, 2             "
        );
        assert_eq!(r.columns, ["a", "B"]);
        assert!(!r.with_data);
        let r = rewrite("CREATE TEMP TABLE t AS SELECT 1 WITH DATA").unwrap();
        assert!(r.with_data && r.columns.is_empty());
        assert_eq!(r.text.trim_end(), "CREATE TEMP TABLE t AS SELECT 1");
    }

    #[test]
    fn other_statements_are_left_alone() {
        assert!(rewrite("create table t (a int) as select 1").is_none());
        assert!(rewrite("create table t as select 1").is_none());
        assert!(rewrite("create table t (a, b)").is_none());
        assert!(rewrite("select 1 with no data").is_none());
    }
}
