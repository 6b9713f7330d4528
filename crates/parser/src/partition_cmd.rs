//! `ALTER TABLE [IF EXISTS] [ONLY] parent ATTACH PARTITION name FOR VALUES ... | DEFAULT` and
//! `ALTER TABLE [IF EXISTS] [ONLY] parent DETACH PARTITION name [CONCURRENTLY | FINALIZE]`.
//!
//! sqlparser reads ATTACH and DETACH PARTITION only in ClickHouse's form. The statement's head
//! is read here with sqlparser's token functions. The bound is read by sqlparser's own
//! `CREATE TABLE ... PARTITION OF` grammar: the text before the bound is replaced by a
//! CREATE TABLE head of the same length in characters, so a syntax error in the bound has
//! its position in the statement as written.

use crate::parse::{self, char_position};
use keel_common::{PgError, PgResult};
use sqlparser::ast;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

#[derive(Clone, Debug, PartialEq)]
pub struct PartitionCmd {
    pub parent: ast::ObjectName,
    pub if_exists: bool,
    pub partition: ast::ObjectName,
    pub action: PartitionAction,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PartitionAction {
    Attach(ast::ForValues),
    Detach { concurrently: bool, finalize: bool },
}

/// The head that stands in for `ALTER TABLE ... ATTACH PARTITION name` when the bound is
/// parsed.
const HEAD: &str = "CREATE TABLE x PARTITION OF x";

/// `Some` when `text` is ATTACH or DETACH PARTITION; `None` for any other statement (a
/// malformed head included: the general parser then reports it).
pub fn parse(text: &str, char_offset: usize) -> PgResult<Option<PartitionCmd>> {
    if !crate::split::first_word(text).eq_ignore_ascii_case("alter") {
        return Ok(None);
    }
    let dialect = crate::dialect::KeelDialect;
    let Ok(mut p) = Parser::new(&dialect).try_with_sql(text) else {
        return Ok(None);
    };
    if !p.parse_keywords(&[Keyword::ALTER, Keyword::TABLE]) {
        return Ok(None);
    }
    let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let _only = p.parse_keyword(Keyword::ONLY);
    let Ok(parent) = p.parse_object_name(false) else {
        return Ok(None);
    };
    let attach = if p.parse_keyword(Keyword::ATTACH) {
        true
    } else if p.parse_keyword(Keyword::DETACH) {
        false
    } else {
        return Ok(None);
    };
    if !p.parse_keyword(Keyword::PARTITION) {
        return Ok(None);
    }
    let Ok(partition) = p.parse_object_name(false) else {
        return Ok(None);
    };
    let action = if attach {
        PartitionAction::Attach(bound(text, &p, char_offset)?)
    } else {
        let concurrently = p.parse_keyword(Keyword::CONCURRENTLY);
        let finalize = !concurrently && next_word_is(&mut p, "finalize");
        let _ = p.consume_token(&Token::SemiColon);
        if p.peek_token().token != Token::EOF {
            return Ok(None);
        }
        PartitionAction::Detach {
            concurrently,
            finalize,
        }
    };
    Ok(Some(PartitionCmd {
        parent,
        if_exists,
        partition,
        action,
    }))
}

fn next_word_is(p: &mut Parser<'_>, word: &str) -> bool {
    match &p.peek_token().token {
        Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word) => {
            p.next_token();
            true
        }
        _ => false,
    }
}

/// The `FOR VALUES ... | DEFAULT` that starts at `p`'s next token.
fn bound(text: &str, p: &Parser<'_>, char_offset: usize) -> PgResult<ast::ForValues> {
    let at = char_position(text, p.peek_token().span.start).map_or(text.chars().count(), |c| c - 1);
    let rest_byte = text.char_indices().nth(at).map_or(text.len(), |(b, _)| b);
    let pad = at.saturating_sub(HEAD.len()).max(1);
    let synthetic = format!("{HEAD}{}{}", " ".repeat(pad), &text[rest_byte..]);
    let stmts = parse::statements(&synthetic).map_err(|f| {
        f.into_error(char_offset, |e| {
            crate::parse_error(e, &synthetic, char_offset)
        })
    })?;
    match stmts.as_slice() {
        [ast::Statement::CreateTable(ct)]
            if ct.columns.is_empty()
                && ct.constraints.is_empty()
                && ct.partition_by.is_none()
                && ct.for_values.is_some() =>
        {
            Ok(ct.for_values.clone().expect("checked"))
        }
        _ => Err(PgError::new(
            keel_common::sqlstate::SYNTAX_ERROR,
            "syntax error in ATTACH PARTITION's bound",
        )),
    }
}
