//! `f(a, VARIADIC arr)`: a call that passes an array as a VARIADIC function's variadic
//! argument. sqlparser does not read the keyword there, so it is rewritten to the named
//! argument `"?var"=> arr` (the same 8 characters: positions stay true), which the binder
//! takes for the call's last, explicitly variadic, argument ([`MARKER`]). The keyword in a
//! parameter list (`CREATE FUNCTION f(VARIADIC a int[])`) is left alone.

use crate::symmetric::{keyword, offset, significant_tokens};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::Token;

/// The argument name the rewrite gives an explicitly variadic argument.
pub const MARKER: &str = "?var";

/// The text with each call argument's `VARIADIC` replaced by `"?var"=>`; None when it has
/// none.
pub fn rewrite(text: &str) -> Option<String> {
    if !text.to_ascii_lowercase().contains("variadic") {
        return None;
    }
    let sig = significant_tokens(text)?;
    let mut out = text.to_string();
    let mut changed = false;
    for (i, t) in sig.iter().enumerate() {
        if keyword(&t.token) != Some(Keyword::VARIADIC) || i == 0 {
            continue;
        }
        if !matches!(sig[i - 1].token, Token::LParen | Token::Comma) {
            continue;
        }
        if in_parameter_list(&sig, i) {
            continue;
        }
        let (from, to) = (offset(text, t.span.start), offset(text, t.span.end));
        if to - from == MARKER.len() + 4 {
            out.replace_range(from..to, &format!("\"{MARKER}\"=>"));
            changed = true;
        }
    }
    changed.then_some(out)
}

/// Whether the token at `i` sits in the parameter list of a function, procedure or aggregate
/// being defined, altered, dropped or commented on (`FUNCTION name(...`).
fn in_parameter_list(sig: &[sqlparser::tokenizer::TokenWithSpan], i: usize) -> bool {
    let mut depth = 0i32;
    let mut k = i;
    while k > 0 {
        k -= 1;
        match sig[k].token {
            Token::RParen => depth += 1,
            Token::LParen if depth > 0 => depth -= 1,
            Token::LParen => {
                // The name before the list, qualified or not, then the object keyword.
                let mut n = k;
                while n >= 2 && matches!(sig[n - 2].token, Token::Period) {
                    n -= 2;
                }
                return n >= 2
                    && matches!(
                        keyword(&sig[n - 2].token),
                        Some(Keyword::FUNCTION | Keyword::PROCEDURE | Keyword::AGGREGATE)
                    );
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn rewrites_call_arguments_only() {
        assert_eq!(
            rewrite("select f(1, variadic array[2])").as_deref(),
            Some("select f(1, \"?var\"=> array[2])")
        );
        assert_eq!(
            rewrite("create function f(variadic a int[]) returns int"),
            None
        );
        assert_eq!(rewrite("drop function public.f(variadic int[])"), None);
        assert_eq!(rewrite("select 'variadic'"), None);
    }
}
