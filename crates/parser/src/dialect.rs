//! Keel's SQL dialect: sqlparser's PostgreSQL dialect, extended with the postfix operators
//! `expr ISNULL` and `expr NOTNULL` (PostgreSQL's grammar gives both the precedence of IS;
//! sqlparser 0.63 knows only NOTNULL). Everything else is PostgreSqlDialect's, method for
//! method, and the dialect reports PostgreSqlDialect's type id, so sqlparser's own
//! `dialect_of!(... is PostgreSqlDialect)` branches still take the PostgreSQL paths.

use sqlparser::ast::Expr;
use sqlparser::dialect::{Dialect, PostgreSqlDialect, Precedence};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;
use std::any::TypeId;

/// sqlparser's PostgreSqlDialect plus the postfix `ISNULL`.
#[derive(Debug, Default, Clone, Copy)]
pub struct KeelDialect;

const PG: PostgreSqlDialect = PostgreSqlDialect {};

/// Whether the parser's next token is the bare word ISNULL.
fn next_is_isnull(parser: &Parser) -> bool {
    matches!(&parser.peek_token_ref().token,
        Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("isnull"))
}

/// Forwards each listed `fn name(&self) -> bool` to PostgreSqlDialect.
macro_rules! forward_flags {
    ($($name:ident),* $(,)?) => {
        $(fn $name(&self) -> bool { PG.$name() })*
    };
}

impl Dialect for KeelDialect {
    fn dialect(&self) -> TypeId {
        TypeId::of::<PostgreSqlDialect>()
    }

    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        _precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        if next_is_isnull(parser) {
            parser.next_token();
            return Some(Ok(Expr::IsNull(Box::new(expr.clone()))));
        }
        None
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        if next_is_isnull(parser) {
            return Some(Ok(PG.prec_value(Precedence::Is)));
        }
        PG.get_next_precedence(parser)
    }

    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        PG.identifier_quote_style(identifier)
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        PG.is_delimited_identifier_start(ch)
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        PG.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        PG.is_identifier_part(ch)
    }

    fn is_reserved_for_identifier(&self, kw: Keyword) -> bool {
        PG.is_reserved_for_identifier(kw)
    }

    fn is_table_alias(&self, kw: &Keyword, parser: &mut Parser) -> bool {
        PG.is_table_alias(kw, parser)
    }

    fn is_custom_operator_part(&self, ch: char) -> bool {
        PG.is_custom_operator_part(ch)
    }

    fn prec_value(&self, prec: Precedence) -> u8 {
        PG.prec_value(prec)
    }

    forward_flags!(
        supports_unicode_string_literal,
        supports_filter_during_aggregation,
        supports_group_by_expr,
        supports_alter_user_as_alter_role,
        allow_extract_custom,
        allow_extract_single_quotes,
        supports_create_index_with_clause,
        supports_explain_with_utility_options,
        supports_listen_notify,
        supports_exclude_constraint,
        supports_factorial_operator,
        supports_bitwise_shift_operators,
        supports_comment_on,
        supports_load_extension,
        supports_named_fn_args_with_colon_operator,
        supports_named_fn_args_with_expr_name,
        supports_empty_projections,
        supports_nested_comments,
        supports_string_escape_constant,
        supports_numeric_literal_underscores,
        supports_array_typedef_with_brackets,
        supports_geometric_types,
        supports_order_by_using_operator,
        supports_set_names,
        supports_alter_column_type_using,
        supports_left_associative_joins_without_parens,
        supports_notnull_operator,
        supports_interval_options,
        supports_insert_table_alias,
        supports_create_table_like_parenthesized,
        supports_select_wildcard_with_alias,
        supports_comma_separated_trim,
        supports_xml_expressions,
        supports_aliased_function_args,
        supports_comment_optimizer_hint,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(sql: &str) -> String {
        Parser::parse_sql(&KeelDialect, sql)
            .map(|s| s[0].to_string())
            .unwrap_or_else(|e| format!("error: {e}"))
    }

    #[test]
    fn isnull_and_notnull_are_postfix_operators() {
        for (postfix, spelled) in [
            ("select a isnull", "select a is null"),
            ("select a notnull from t", "select a is not null from t"),
            (
                "select 1 where a + 1 isnull and b",
                "select 1 where a + 1 is null and b",
            ),
            ("select not a ISNULL", "select not a is null"),
        ] {
            // The trees compare without their source spans.
            let ours = Parser::parse_sql(&KeelDialect, postfix).unwrap();
            assert_eq!(ours, Parser::parse_sql(&PG, spelled).unwrap(), "{postfix}");
        }
        // PostgreSqlDialect alone reads the word as a column alias.
        assert_ne!(
            Parser::parse_sql(&KeelDialect, "select a isnull").unwrap(),
            Parser::parse_sql(&PG, "select a isnull").unwrap()
        );
        // Quoted, it is a name like any other.
        assert_eq!(parse("select a \"isnull\""), "SELECT a AS \"isnull\"");
    }

    #[test]
    fn postgres_paths_are_kept() {
        // Statements sqlparser parses only for PostgreSqlDialect.
        for sql in [
            "select a::int[] from t",
            "select e'\\n'",
            "select x from t order by a using <",
            "listen chan",
            "select 1_000",
        ] {
            assert_eq!(
                parse(sql),
                Parser::parse_sql(&PG, sql).unwrap()[0].to_string(),
                "{sql}"
            );
        }
    }
}
