//! `DO [LANGUAGE lang] code`: the one utility statement whose argument is code.

use crate::split::syntax_near;
use crate::utility::Utility;
use keel_common::{PgError, PgResult};

/// `DO [LANGUAGE lang] code [LANGUAGE lang]`: the code is a string constant ('...', E'...'
/// or dollar-quoted); only plpgsql is a language.
pub(crate) fn parse_do(text: &str) -> PgResult<Utility> {
    use keel_common::sqlstate;
    let b = text.as_bytes();
    let skip_space = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let word_end = |i: usize| {
        let mut j = i;
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
            j += 1;
        }
        j
    };
    // Past the DO keyword (`first_word` is a slice of `text`, after comments and spaces).
    let word = crate::split::first_word(text);
    let mut i = skip_space(word.as_ptr() as usize - text.as_ptr() as usize + word.len());
    let mut body: Option<(String, usize)> = None;
    let mut language: Option<String> = None;
    while i < b.len() {
        let c = b[i];
        if c == b';' {
            break;
        }
        if c == b'$' {
            let close = text[i + 1..]
                .find('$')
                .map(|k| i + 1 + k)
                .ok_or_else(|| syntax_near(None))?;
            let tag = &text[i..=close];
            let start = close + 1;
            let end = text[start..].find(tag).map(|k| start + k).ok_or_else(|| {
                PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    format!(
                        "unterminated dollar-quoted string at or near \"{}\"",
                        &text[i..]
                    ),
                )
                .with_position(text[..i].chars().count() as u32 + 1)
            })?;
            if body.is_some() {
                return Err(PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    "conflicting or redundant options",
                ));
            }
            body = Some((
                text[start..end].to_string(),
                text[..start].chars().count() + 1,
            ));
            i = skip_space(end + tag.len());
        } else if c == b'\'' || (matches!(c, b'e' | b'E') && b.get(i + 1) == Some(&b'\'')) {
            let escapes = c != b'\'';
            let start = if escapes { i + 2 } else { i + 1 };
            let mut s = String::new();
            let mut j = start;
            loop {
                let Some(ch) = text[j..].chars().next() else {
                    return Err(PgError::new(
                        sqlstate::SYNTAX_ERROR,
                        "unterminated quoted string",
                    ));
                };
                if ch == '\'' {
                    if b.get(j + 1) == Some(&b'\'') {
                        s.push('\'');
                        j += 2;
                        continue;
                    }
                    break;
                }
                if escapes
                    && ch == '\\'
                    && let Some(n) = text[j + 1..].chars().next()
                {
                    s.push(match n {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        other => other,
                    });
                    j += 1 + n.len_utf8();
                    continue;
                }
                s.push(ch);
                j += ch.len_utf8();
            }
            if body.is_some() {
                return Err(PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    "conflicting or redundant options",
                ));
            }
            body = Some((s, text[..start].chars().count() + 1));
            i = skip_space(j + 1);
        } else if text[i..].len() >= 8
            && text[i..i + 8].eq_ignore_ascii_case("language")
            && word_end(i) == i + 8
        {
            i = skip_space(i + 8);
            let (name, next) = if b.get(i) == Some(&b'"') {
                let end = text[i + 1..]
                    .find('"')
                    .map(|k| i + 1 + k)
                    .ok_or_else(|| syntax_near(None))?;
                (text[i + 1..end].to_string(), end + 1)
            } else if b.get(i) == Some(&b'\'') {
                let end = text[i + 1..]
                    .find('\'')
                    .map(|k| i + 1 + k)
                    .ok_or_else(|| syntax_near(None))?;
                (text[i + 1..end].to_string(), end + 1)
            } else {
                let e = word_end(i);
                if e == i {
                    return Err(syntax_near(None));
                }
                (text[i..e].to_ascii_lowercase(), e)
            };
            if language.is_some() {
                return Err(PgError::new(
                    sqlstate::SYNTAX_ERROR,
                    "conflicting or redundant options",
                ));
            }
            language = Some(name);
            i = skip_space(next);
        } else {
            let e = word_end(i).max(i + 1);
            return Err(PgError::new(
                sqlstate::SYNTAX_ERROR,
                format!(
                    "syntax error at or near \"{}\"",
                    &text[i..e.min(text.len())]
                ),
            )
            .with_position((text[..i].chars().count() + 1) as u32));
        }
    }
    let Some((body, body_position)) = body else {
        return Err(PgError::new(
            sqlstate::SYNTAX_ERROR,
            "no inline code specified",
        ));
    };
    match language.as_deref().unwrap_or("plpgsql") {
        "plpgsql" => Ok(Utility::Do {
            body,
            body_position,
        }),
        "sql" => Err(PgError::new(
            sqlstate::FEATURE_NOT_SUPPORTED,
            "language \"sql\" does not support inline code execution",
        )),
        other => Err(PgError::new(
            sqlstate::UNDEFINED_OBJECT,
            format!("language \"{other}\" does not exist"),
        )),
    }
}
