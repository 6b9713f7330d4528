//! Validation of COPY options in PostgreSQL's order: each option as it is read (unknown
//! option, duplicate, bad value), then the cross-option rules. The session calls it after
//! resolving the table and column list, so errors come out in the same order as PostgreSQL's
//! and always before the client is put into COPY mode.

use crate::utility::{CopyOptValue, CopyOptions, CopyStmt};
use keel_common::sqlstate::{FEATURE_NOT_SUPPORTED, INVALID_PARAMETER_VALUE, SYNTAX_ERROR};
use keel_common::{PgError, PgResult};

fn syntax(msg: String) -> PgError {
    PgError::new(SYNTAX_ERROR, msg)
}

fn unsupported(msg: &str) -> PgError {
    PgError::new(FEATURE_NOT_SUPPORTED, msg.to_string())
}

fn invalid(msg: String) -> PgError {
    PgError::new(INVALID_PARAMETER_VALUE, msg)
}

/// PostgreSQL's `defGetBoolean`: no argument, 0/1, or true/false/on/off.
fn boolean(v: &Option<CopyOptValue>) -> Option<bool> {
    match v {
        None => Some(true),
        Some(CopyOptValue::Num(n)) => match n.as_str() {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        },
        Some(CopyOptValue::Str(s)) => match s.to_ascii_lowercase().as_str() {
            "true" | "on" => Some(true),
            "false" | "off" => Some(false),
            _ => None,
        },
        Some(CopyOptValue::List(_)) => None,
    }
}

fn string(name: &str, v: &Option<CopyOptValue>) -> PgResult<String> {
    match v {
        Some(CopyOptValue::Str(s)) | Some(CopyOptValue::Num(s)) => Ok(s.clone()),
        _ => Err(syntax(format!("{name} requires a parameter"))),
    }
}

fn one_char(s: &str, what: &str) -> PgResult<char> {
    let mut it = s.chars();
    match (it.next(), it.next()) {
        (Some(c), None) if c.is_ascii() => Ok(c),
        _ => Err(unsupported(&format!(
            "COPY {what} must be a single one-byte character"
        ))),
    }
}

impl CopyStmt {
    /// The validated options (SQLSTATEs as PostgreSQL 15's `ProcessCopyOptions`).
    pub fn options(&self) -> PgResult<CopyOptions> {
        let mut o = CopyOptions::default();
        let mut seen: Vec<&str> = Vec::new();
        let (mut delim, mut quote, mut escape): (Option<String>, Option<String>, Option<String>) =
            (None, None, None);
        let mut header_match = false;
        for (name, v) in &self.raw_options {
            let name = name.as_str();
            let known = [
                "format",
                "freeze",
                "delimiter",
                "null",
                "header",
                "quote",
                "escape",
                "force_quote",
                "force_not_null",
                "force_null",
                "convert_selectively",
                "encoding",
            ];
            if !known.contains(&name) {
                return Err(syntax(format!("option \"{name}\" not recognized")));
            }
            if seen.contains(&name) {
                return Err(syntax("conflicting or redundant options".into()));
            }
            seen.push(name);
            match name {
                "format" => {
                    let f = string(name, v)?;
                    match f.to_ascii_lowercase().as_str() {
                        "csv" => o.csv = true,
                        "text" => {}
                        "binary" => o.binary = true,
                        _ => return Err(invalid(format!("COPY format \"{f}\" not recognized"))),
                    }
                }
                "freeze" => {
                    o.freeze = boolean(v)
                        .ok_or_else(|| syntax(format!("{name} requires a Boolean value")))?
                }
                "header" => {
                    let is_match =
                        matches!(v, Some(CopyOptValue::Str(s)) if s.eq_ignore_ascii_case("match"));
                    if is_match {
                        header_match = true;
                        o.header = true;
                    } else {
                        o.header = boolean(v).ok_or_else(|| {
                            syntax(format!("{name} requires a Boolean value or \"match\""))
                        })?;
                    }
                }
                "delimiter" => delim = Some(string(name, v)?),
                "null" => o.null = Some(string(name, v)?),
                "quote" => quote = Some(string(name, v)?),
                "escape" => escape = Some(string(name, v)?),
                "encoding" => {
                    let e = string(name, v)?;
                    let norm = e.to_ascii_lowercase().replace(['-', '_'], "");
                    if !matches!(norm.as_str(), "utf8" | "unicode" | "sqlascii") {
                        return Err(invalid(format!(
                            "argument to option \"{name}\" must be a valid encoding name"
                        )));
                    }
                }
                _ => {}
            }
        }
        if o.binary && delim.is_some() {
            return Err(syntax("cannot specify DELIMITER in BINARY mode".into()));
        }
        if o.binary && o.null.is_some() {
            return Err(syntax("cannot specify NULL in BINARY mode".into()));
        }
        let delim = delim
            .as_deref()
            .map(|d| one_char(d, "delimiter"))
            .transpose()?;
        if delim.is_some_and(|c| c == '\n' || c == '\r') {
            return Err(invalid(
                "COPY delimiter cannot be newline or carriage return".into(),
            ));
        }
        if o.null.as_deref().is_some_and(|n| n.contains(['\n', '\r'])) {
            return Err(invalid(
                "COPY null representation cannot use newline or carriage return".into(),
            ));
        }
        if let Some(c) = delim {
            if !o.csv && "\\.abcdefghijklmnopqrstuvwxyz0123456789".contains(c) {
                return Err(invalid(format!("COPY delimiter cannot be \"{c}\"")));
            }
            o.delimiter = Some(c);
        }
        if o.binary && o.header {
            return Err(unsupported("cannot specify HEADER in BINARY mode"));
        }
        if let Some(q) = &quote {
            if !o.csv {
                return Err(unsupported("COPY quote available only in CSV mode"));
            }
            o.quote = Some(one_char(q, "quote")?);
        }
        if o.csv && o.delimiter.unwrap_or(',') == o.quote.unwrap_or('"') {
            return Err(unsupported("COPY delimiter and quote must be different"));
        }
        if let Some(e) = &escape {
            if !o.csv {
                return Err(unsupported("COPY escape available only in CSV mode"));
            }
            o.escape = Some(one_char(e, "escape")?);
        }
        for f in ["force_quote", "force_not_null", "force_null"] {
            if seen.contains(&f) {
                if !o.csv {
                    return Err(unsupported(&format!(
                        "COPY {} available only in CSV mode",
                        f.replace('_', " ")
                    )));
                }
                return Err(unsupported(&format!("COPY {}", f.to_uppercase())));
            }
        }
        // The defaults count too: text's `\N` rules out DELIMITER 'N'.
        let null = o.null.as_deref().unwrap_or(if o.csv { "" } else { "\\N" });
        let default_delim = if o.csv { ',' } else { '\t' };
        if !o.binary && null.contains(o.delimiter.unwrap_or(default_delim)) {
            return Err(unsupported(
                "COPY delimiter must not appear in the NULL specification",
            ));
        }
        if o.csv && null.contains(o.quote.unwrap_or('"')) {
            return Err(unsupported(
                "CSV quote character must not appear in the NULL specification",
            ));
        }
        if header_match && !self.from {
            return Err(unsupported("cannot use \"match\" with HEADER in COPY TO"));
        }
        if header_match {
            return Err(unsupported("COPY HEADER MATCH"));
        }
        if o.binary {
            return Err(unsupported("COPY BINARY"));
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use crate::utility::{Utility, parse_utility};
    use keel_common::PgResult;

    fn opts(sql: &str) -> PgResult<crate::utility::CopyOptions> {
        match parse_utility(sql)? {
            Some(Utility::Copy(c)) => c.options(),
            _ => panic!("not a COPY"),
        }
    }

    fn code(sql: &str) -> String {
        opts(sql)
            .err()
            .map(|e| e.code.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn option_errors_have_postgres_sqlstates() {
        assert_eq!(
            code("copy t from stdin with (format csv, header nosuch)"),
            "42601"
        );
        assert_eq!(code("copy t from stdin with (delimiter 'ab')"), "0A000");
        assert_eq!(
            code("copy t from stdin with (format binary, delimiter ',')"),
            "42601"
        );
        assert_eq!(
            code("copy t to stdout with (format csv, quote 'xy')"),
            "0A000"
        );
        assert_eq!(
            code("copy t from stdin with (format text, quote '\"')"),
            "0A000"
        );
        assert_eq!(code("copy t from stdin with (nosuchoption 1)"), "42601");
        assert_eq!(code("copy t to stdout with (header, header)"), "42601");
        assert_eq!(code("copy t to stdout with (delimiter 'a')"), "22023");
        assert_eq!(code("copy t to stdout with (format nosuch)"), "22023");
        assert_eq!(
            code("copy t to stdout with (format csv, null 'x,')"),
            "0A000"
        );
        assert_eq!(
            code("copy t to stdout with (delimiter '|', null 'x|')"),
            "0A000"
        );
        assert_eq!(code("copy t from stdin with (delimiter 'N')"), "0A000");
    }

    #[test]
    fn valid_options() {
        let o =
            opts("copy t to stdout with (format csv, header 1, delimiter ';', null 'x')").unwrap();
        assert!(o.csv && o.header);
        assert_eq!(o.delimiter, Some(';'));
        let o = opts("copy t from stdin csv header delimiter as '|'").unwrap();
        assert!(o.csv && o.header);
        assert_eq!(o.delimiter, Some('|'));
        assert!(!opts("copy t from stdin with (header off)").unwrap().header);
    }
}
