//! PL/pgSQL's grammar: a body's text to a syntax tree the interpreter executes.
//!
//! [`parse_function_body`] (CREATE FUNCTION / PROCEDURE) and [`parse_do_block`] (DO) return a
//! [`Body`]: the outermost [`Block`] and the `#option` directives. Embedded SQL is kept as
//! [`SqlText`] (see the crate README for where each piece is cut); nothing here looks up
//! variables, types or tables, so checks that need them (unknown variables, RETURN with a
//! value in a void function, cursor variable types) are the interpreter's.
//!
//! A body that does not compile gives a (boxed) [`PlSyntaxError`]: the [`keel_common::PgError`] as
//! PostgreSQL 15 words it, with `position` relative to the body, plus the byte offset and
//! line.

mod ast;
mod conditions;
mod cursor;
pub use cursor::cursor_arguments;
mod decls;
mod error;
mod parser;
mod raise;
mod stmts;
mod token;

#[cfg(test)]
mod tests;

pub use ast::*;
pub use conditions::{
    CONDITIONS, Condition, condition_name, condition_sqlstate, condition_sqlstates,
    is_valid_sqlstate,
};
pub use error::{PlSyntaxError, line_of};

use parser::Parser;
use token::Tok;

/// The label PostgreSQL gives a DO block's outermost block (`EXIT inline_code_block` works).
pub const DO_BLOCK_LABEL: &str = "inline_code_block";

/// Parses the body of a PL/pgSQL function or procedure.
pub fn parse_function_body(src: &str) -> Result<Body, Box<PlSyntaxError>> {
    parse(src, None)
}

/// Parses a function body whose outermost block answers to the function's name as a label,
/// as PostgreSQL's does (`EXIT fname`, `fname.param`).
pub fn parse_function_body_named(src: &str, name: &str) -> Result<Body, Box<PlSyntaxError>> {
    parse(src, Some(name))
}

/// Parses the code of a DO statement. The grammar is a function body's; the outermost block
/// answers to [`DO_BLOCK_LABEL`].
pub fn parse_do_block(src: &str) -> Result<Body, Box<PlSyntaxError>> {
    parse(src, Some(DO_BLOCK_LABEL))
}

fn parse(src: &str, outer_label: Option<&str>) -> parser::PResult<Body> {
    let mut p = Parser::new(src);
    let options = p.compile_options()?;
    p.scopes.push((outer_label.map(str::to_string), false));
    let label = p.opt_label()?;
    let block = p.block(label)?;
    if p.at_char(b';') {
        p.advance();
    }
    if p.peek().tok != Tok::Eof {
        return Err(p.syntax_error(p.pos));
    }
    Ok(Body { block, options })
}
