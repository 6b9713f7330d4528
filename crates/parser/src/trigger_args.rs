//! CREATE TRIGGER's argument list: `EXECUTE FUNCTION f('a', 1, name)`. The arguments are
//! constants PostgreSQL passes to the trigger function as strings (TG_ARGV), but sqlparser
//! reads the list as parameter declarations, which a string constant is not. So the list is
//! blanked out of the text before parsing (every other character keeps its offset), read here,
//! and put back into the parsed statement: each argument becomes a parameter whose name is the
//! argument's string ([`restore`]), which the CREATE TRIGGER command reads.

use crate::symmetric::{keyword, offset};
use sqlparser::ast;
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

/// The text with a CREATE TRIGGER's argument list blanked, and the arguments as strings; None
/// when `text` is not a CREATE TRIGGER with arguments.
pub fn rewrite(text: &str) -> Option<(String, Vec<String>)> {
    let tokens = Tokenizer::new(&PostgreSqlDialect {}, text)
        .tokenize_with_location()
        .ok()?;
    let sig: Vec<_> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .collect();
    let mut i = 0;
    let kw = |i: usize| sig.get(i).and_then(|t| keyword(&t.token));
    if kw(i) != Some(Keyword::CREATE) {
        return None;
    }
    i += 1;
    if kw(i) == Some(Keyword::OR) {
        i += 2;
    }
    if kw(i) == Some(Keyword::CONSTRAINT) {
        i += 1;
    }
    if kw(i) != Some(Keyword::TRIGGER) {
        return None;
    }
    // The last EXECUTE FUNCTION|PROCEDURE name ( ... ).
    let exec = (i..sig.len()).rev().find(|&k| {
        kw(k) == Some(Keyword::EXECUTE)
            && matches!(kw(k + 1), Some(Keyword::FUNCTION | Keyword::PROCEDURE))
    })?;
    let mut k = exec + 2;
    // The function's name: words joined by dots.
    while matches!(sig.get(k).map(|t| &t.token), Some(Token::Word(_)))
        && matches!(sig.get(k + 1).map(|t| &t.token), Some(Token::Period))
    {
        k += 2;
    }
    if !matches!(sig.get(k).map(|t| &t.token), Some(Token::Word(_))) {
        return None;
    }
    let open = k + 1;
    if !matches!(sig.get(open).map(|t| &t.token), Some(Token::LParen)) {
        return None;
    }
    let mut args = Vec::new();
    let mut k = open + 1;
    let close = loop {
        let t = &sig.get(k)?.token;
        match t {
            Token::RParen => break k,
            Token::Comma if !args.is_empty() => {}
            Token::SingleQuotedString(s)
            | Token::EscapedStringLiteral(s)
            | Token::DollarQuotedString(ast::DollarQuotedString { value: s, .. }) => {
                args.push(s.clone())
            }
            Token::Number(n, _) => args.push(n.clone()),
            Token::Minus => match &sig.get(k + 1)?.token {
                Token::Number(n, _) => {
                    args.push(format!("-{n}"));
                    k += 1;
                }
                _ => return None,
            },
            Token::Word(w) if w.quote_style.is_some() => args.push(w.value.clone()),
            Token::Word(w) => args.push(w.value.to_lowercase()),
            _ => return None,
        }
        k += 1;
    };
    if args.is_empty() {
        return None;
    }
    let from = offset(text, sig[open].span.end);
    let to = offset(text, sig[close].span.start);
    let blanked = crate::symmetric::blank_ranges(text, &[(from, to)]);
    Some((blanked, args))
}

/// Puts the arguments [`rewrite`] took out back into the parsed CREATE TRIGGER.
pub fn restore(stmt: &mut ast::Statement, args: Vec<String>) {
    if let ast::Statement::CreateTrigger(ct) = stmt
        && let Some(body) = ct.exec_body.as_mut()
    {
        body.func_desc.args = Some(
            args.into_iter()
                .map(|a| ast::OperateFunctionArg {
                    mode: None,
                    name: Some(ast::Ident::with_quote('\'', a)),
                    data_type: ast::DataType::Text,
                    default_expr: None,
                })
                .collect(),
        );
    }
}

/// The string arguments of a CREATE TRIGGER's function (see the module comment).
pub fn args_of(desc: &ast::FunctionDesc) -> Vec<String> {
    desc.args
        .iter()
        .flatten()
        .filter_map(|a| a.name.as_ref().map(|n| n.value.clone()))
        .collect()
}
