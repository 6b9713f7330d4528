//! COPY FROM STDIN / TO STDOUT in text and CSV formats.

use crate::exec::Rows;
use crate::session::Session;
use keel_common::{PgError, PgResult, sqlstate};
use keel_sql::Stmt;
use keel_sql::exec::ModifyExec;
use keel_sql::plan::ModifyKind;
use keel_sql::utility::{CopyOptions, CopyStmt};
use keel_types::{Datum, SqlType};
use keel_wire::Client;
use std::sync::Arc;

const BATCH: usize = 10_000;

fn bad_copy(msg: String) -> PgError {
    PgError::new("22P04", msg)
}

/// Splits one text-format line into fields (None = NULL), undoing backslash escapes.
fn text_fields(line: &str, delim: char, null: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for raw in line.split(delim) {
        if raw == null {
            out.push(None);
            continue;
        }
        if !raw.contains('\\') {
            out.push(Some(raw.to_string()));
            continue;
        }
        let mut s = String::with_capacity(raw.len());
        let mut it = raw.chars().peekable();
        while let Some(c) = it.next() {
            if c != '\\' {
                s.push(c);
                continue;
            }
            match it.next() {
                Some('n') => s.push('\n'),
                Some('t') => s.push('\t'),
                Some('r') => s.push('\r'),
                Some('b') => s.push('\x08'),
                Some('f') => s.push('\x0c'),
                Some('v') => s.push('\x0b'),
                Some(d) if d.is_digit(8) => {
                    let mut v = d.to_digit(8).unwrap_or(0);
                    for _ in 0..2 {
                        match it.peek().and_then(|c| c.to_digit(8)) {
                            Some(x) => {
                                v = v * 8 + x;
                                it.next();
                            }
                            None => break,
                        }
                    }
                    s.push(char::from_u32(v).unwrap_or('?'));
                }
                Some(o) => s.push(o),
                None => {}
            }
        }
        out.push(Some(s));
    }
    out
}

/// Parses CSV records from `buf` (complete records only); returns them and the bytes consumed.
fn csv_records(
    buf: &str,
    delim: char,
    quote: char,
    escape: char,
    null: &str,
    at_end: bool,
) -> (Vec<Vec<Option<String>>>, usize) {
    let mut recs = Vec::new();
    let mut consumed = 0;
    let chars: Vec<(usize, char)> = buf.char_indices().collect();
    let mut i = 0;
    'outer: while i < chars.len() {
        let mut rec = Vec::new();
        let mut field = String::new();
        let mut quoted = false;
        let mut was_quoted = false;
        loop {
            if i >= chars.len() {
                if !at_end || quoted {
                    break 'outer;
                }
                rec.push(if !was_quoted && field == null {
                    None
                } else {
                    Some(std::mem::take(&mut field))
                });
                recs.push(rec);
                consumed = buf.len();
                break 'outer;
            }
            let c = chars[i].1;
            if quoted {
                if c == escape && i + 1 < chars.len() && chars[i + 1].1 == quote {
                    field.push(quote);
                    i += 2;
                    continue;
                }
                if c == quote {
                    quoted = false;
                } else {
                    field.push(c);
                }
                i += 1;
                continue;
            }
            if c == quote {
                quoted = true;
                was_quoted = true;
                i += 1;
            } else if c == delim {
                rec.push(if !was_quoted && field == null {
                    None
                } else {
                    Some(std::mem::take(&mut field))
                });
                was_quoted = false;
                i += 1;
            } else if c == '\n' || c == '\r' {
                rec.push(if !was_quoted && field == null {
                    None
                } else {
                    Some(std::mem::take(&mut field))
                });
                i += 1;
                if c == '\r' && i < chars.len() && chars[i].1 == '\n' {
                    i += 1;
                }
                recs.push(rec);
                consumed = if i < chars.len() {
                    chars[i].0
                } else {
                    buf.len()
                };
                continue 'outer;
            } else {
                field.push(c);
                i += 1;
            }
        }
    }
    (recs, consumed)
}

fn escape_text(s: &str, delim: char, out: &mut String) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' if delim == '\t' => out.push_str("\\t"),
            c if c == delim => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
}

fn csv_field(s: &str, o: &CopyOptions, delim: char, null: &str, out: &mut String) {
    let quote = o.quote.unwrap_or('"');
    let needs = s.is_empty() && null.is_empty()
        || s == null
        || s.contains(delim)
        || s.contains(quote)
        || s.contains('\n')
        || s.contains('\r');
    if needs {
        let esc = o.escape.unwrap_or(quote);
        out.push(quote);
        for c in s.chars() {
            if c == quote || c == esc {
                out.push(esc);
            }
            out.push(c);
        }
        out.push(quote);
    } else {
        out.push_str(s);
    }
}

/// The delimiter and NULL string in effect (defaults depend on the format).
fn delimiter_and_null(o: &CopyOptions) -> (char, String) {
    let delim = o.delimiter.unwrap_or(if o.csv { ',' } else { '\t' });
    let null = o
        .null
        .clone()
        .unwrap_or_else(|| if o.csv { String::new() } else { "\\N".into() });
    (delim, null)
}

impl Session {
    pub(crate) async fn copy<C: Client>(
        &mut self,
        c: &CopyStmt,
        client: &mut C,
    ) -> PgResult<(Rows, String)> {
        if c.from {
            self.copy_from(c, client).await
        } else {
            self.copy_to(c, client).await
        }
    }

    async fn copy_to<C: Client>(
        &mut self,
        c: &CopyStmt,
        client: &mut C,
    ) -> PgResult<(Rows, String)> {
        // PostgreSQL checks the table and column list before the options, the options
        // before the query.
        if c.query.is_some() {
            c.options()?;
        }
        if let Some(dup) = c
            .columns
            .iter()
            .enumerate()
            .find(|(i, x)| c.columns[..*i].contains(x))
        {
            if let Some(t) = &c.table {
                self.catalog().table(t)?;
            }
            return Err(PgError::new(
                sqlstate::DUPLICATE_COLUMN,
                format!("column \"{}\" specified more than once", dup.1),
            ));
        }
        let sql = match (&c.query, &c.table) {
            (Some(q), _) => q.clone(),
            (None, Some(t)) => {
                let cols = if c.columns.is_empty() {
                    "*".to_string()
                } else {
                    c.columns
                        .iter()
                        .map(|x| format!("\"{x}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                format!("select {cols} from \"{t}\"")
            }
            _ => return Err(PgError::internal("COPY without source")),
        };
        let prep = Arc::new(self.prepare(&sql, 0, &[])?);
        let o = c.options()?;
        let (delim, null) = delimiter_and_null(&o);
        let null = null.as_str();
        if !matches!(prep.stmt, Stmt::Query(_)) {
            return Err(PgError::unsupported("COPY of this statement"));
        }
        let cols = prep.columns().map(|x| x.to_vec()).unwrap_or_default();
        self.settle().await?;
        let rows = self.query_rows(&prep)?;
        client.copy_out_start(false, cols.len());
        let mut line = String::new();
        if o.header {
            for (i, col) in cols.iter().enumerate() {
                if i > 0 {
                    line.push(delim);
                }
                if o.csv {
                    csv_field(&col.name, &o, delim, null, &mut line);
                } else {
                    escape_text(&col.name, delim, &mut line);
                }
            }
            line.push('\n');
            client.copy_out_data(line.as_bytes());
        }
        let mut val = String::new();
        for r in &rows {
            line.clear();
            for (i, d) in r.iter().enumerate() {
                if i > 0 {
                    line.push(delim);
                }
                if d.is_null() {
                    line.push_str(null);
                    continue;
                }
                val.clear();
                keel_types::io::format_text(d, cols[i].ty, &mut val);
                if o.csv {
                    csv_field(&val, &o, delim, null, &mut line);
                } else {
                    escape_text(&val, delim, &mut line);
                }
            }
            line.push('\n');
            client.copy_out_data(line.as_bytes());
        }
        client.copy_out_done();
        Ok((vec![], format!("COPY {}", rows.len())))
    }

    async fn copy_from<C: Client>(
        &mut self,
        c: &CopyStmt,
        client: &mut C,
    ) -> PgResult<(Rows, String)> {
        let table = c
            .table
            .clone()
            .ok_or_else(|| PgError::internal("COPY FROM without table"))?;
        let cat = self.catalog();
        let t = cat.table(&table)?.clone();
        let cols: Vec<String> = if c.columns.is_empty() {
            t.columns.iter().map(|x| x.name.clone()).collect()
        } else {
            c.columns.clone()
        };
        let placeholders: Vec<String> = (1..=cols.len()).map(|i| format!("${i}")).collect();
        let quoted: Vec<String> = cols.iter().map(|x| format!("\"{x}\"")).collect();
        let sql = format!(
            "insert into \"{table}\" ({}) values ({})",
            quoted.join(","),
            placeholders.join(",")
        );
        let prep = Arc::new(self.prepare(&sql, 0, &[])?);
        let Stmt::Modify(plan) = &prep.stmt else {
            return Err(PgError::internal("COPY plan"));
        };
        let ModifyKind::Insert { row: row_exprs, .. } = &plan.kind else {
            return Err(PgError::internal("COPY plan"));
        };
        let o = c.options()?;
        let (delim, null) = delimiter_and_null(&o);
        let null = null.as_str();
        let types: Vec<SqlType> = cols
            .iter()
            .map(|n| {
                t.column_index(n)
                    .map(|i| t.columns[i].ty)
                    .unwrap_or(SqlType::new(keel_types::TypeId::Text))
            })
            .collect();
        self.settle().await?;
        self.ensure_txn();
        if let Some(txn) = self.txn.as_mut() {
            self.engine.start_statement(txn);
        }
        client.copy_in_start(false, cols.len()).await?;
        let mut pending = String::new();
        let mut raw_tail: Vec<u8> = Vec::new();
        let mut batch: Vec<Vec<Datum>> = Vec::new();
        let mut total = 0u64;
        let mut lineno = 0u64;
        let mut header_skipped = !o.header;
        let mut finished = false;
        let mut first_err: Option<PgError> = None;
        while !finished {
            let chunk = client.copy_in_next().await?;
            let at_end = chunk.is_none();
            if let Some(b) = chunk {
                raw_tail.extend_from_slice(&b);
                // Keep incomplete UTF-8 sequences for the next chunk.
                let valid = match std::str::from_utf8(&raw_tail) {
                    Ok(_) => raw_tail.len(),
                    Err(e) if e.error_len().is_none() => e.valid_up_to(),
                    Err(_) => {
                        return Err(PgError::new(
                            sqlstate::CHARACTER_NOT_IN_REPERTOIRE,
                            "invalid byte sequence for encoding \"UTF8\"",
                        ));
                    }
                };
                pending.push_str(std::str::from_utf8(&raw_tail[..valid]).unwrap_or_default());
                raw_tail.drain(..valid);
            } else {
                finished = true;
            }
            if first_err.is_some() {
                continue; // drain the rest of the data after an error
            }
            let mut records: Vec<Vec<Option<String>>> = Vec::new();
            if o.csv {
                let q = o.quote.unwrap_or('"');
                let (recs, used) =
                    csv_records(&pending, delim, q, o.escape.unwrap_or(q), null, at_end);
                pending.drain(..used);
                records = recs;
            } else {
                while let Some(nl) = pending.find('\n') {
                    let line: String = pending.drain(..=nl).collect();
                    let line = line.trim_end_matches('\n').trim_end_matches('\r');
                    if line == "\\." {
                        continue;
                    }
                    records.push(text_fields(line, delim, null));
                }
                if at_end && !pending.is_empty() {
                    let line = std::mem::take(&mut pending);
                    if line != "\\." {
                        records.push(text_fields(&line, delim, null));
                    }
                }
            }
            for rec in records {
                lineno += 1;
                if !header_skipped {
                    header_skipped = true;
                    continue;
                }
                if o.csv && rec.len() == 1 && rec[0].as_deref() == Some("\\.") {
                    continue;
                }
                let r = (|| {
                    if rec.len() < cols.len() {
                        return Err(bad_copy(format!(
                            "missing data for column \"{}\"",
                            cols[rec.len()]
                        )));
                    }
                    if rec.len() > cols.len() {
                        return Err(bad_copy("extra data after last expected column".into()));
                    }
                    let mut vals = Vec::with_capacity(rec.len());
                    for (i, f) in rec.iter().enumerate() {
                        vals.push(match f {
                            None => Datum::Null,
                            Some(s) => keel_types::io::parse_text(s, types[i])?,
                        });
                    }
                    Ok(vals)
                })();
                match r {
                    Ok(vals) => batch.push(vals),
                    Err(e) => {
                        let e = PgError {
                            message: e.message.clone(),
                            ..e
                        };
                        first_err = Some(e.with_detail(format!("COPY {table}, line {lineno}")));
                        break;
                    }
                }
            }
            if first_err.is_none() && (batch.len() >= BATCH || finished) && !batch.is_empty() {
                let full = self.complete_rows(row_exprs, std::mem::take(&mut batch))?;
                let mut exec = ModifyExec::with_rows(full);
                if let Err(e) = self.drive_modify(plan, &mut exec, &[]).await {
                    first_err = Some(e);
                } else {
                    total += exec.count;
                }
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        Ok((vec![], format!("COPY {total}")))
    }

    /// Applies the INSERT plan's column expressions (defaults, casts) to parsed COPY rows.
    fn complete_rows(
        &mut self,
        row_exprs: &[keel_sql::expr::Expr],
        rows: Vec<Vec<Datum>>,
    ) -> PgResult<Vec<Vec<Datum>>> {
        let cf = self.cancel_check();
        let mut ev = crate::exec::eval_cx(
            &self.engine,
            &[],
            &mut self.funcs,
            &self.settings,
            self.pid,
            &cf,
            self.txn.as_ref(),
        );
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let mut full = Vec::with_capacity(row_exprs.len());
            for e in row_exprs {
                full.push(e.eval(&r, &mut ev)?);
            }
            out.push(full);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_format_fields() {
        assert_eq!(
            text_fields("1\t\\N\ta\\tb", '\t', "\\N"),
            vec![Some("1".into()), None, Some("a\tb".into())]
        );
    }

    #[test]
    fn csv_format_records() {
        let (r, used) = csv_records(
            "1,\"a,b\",\n2,\"x\"\"y\",z\npartial",
            ',',
            '"',
            '"',
            "",
            false,
        );
        assert_eq!(r.len(), 2);
        assert_eq!(r[0], vec![Some("1".into()), Some("a,b".into()), None]);
        assert_eq!(r[1][1].as_deref(), Some("x\"y"));
        assert_eq!(&"1,\"a,b\",\n2,\"x\"\"y\",z\npartial"[used..], "partial");
    }
}
