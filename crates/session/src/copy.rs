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

mod parse;

use parse::{InputFormat, LineReader};

const BATCH: usize = 10_000;

/// Rows parsed or formatted between two interrupt checks (a row costs about a microsecond).
const CHECK_ROWS: usize = 256;

/// PostgreSQL's `CopyAttributeOutText`: backslash, the delimiter and the control characters
/// that have a letter escape are escaped whatever the delimiter; other bytes go out as they are.
fn escape_text(s: &str, delim: char, out: &mut String) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x08' => out.push_str("\\b"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            c if c == delim => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
}

/// PostgreSQL's `CopyAttributeOutCSV`. `single` (a one-column COPY) also quotes `\.`, which
/// alone on a line would read back as the end-of-data marker.
fn csv_field(s: &str, o: &CopyOptions, delim: char, null: &str, single: bool, out: &mut String) {
    let quote = o.quote.unwrap_or('"');
    let needs = s == null
        || single && s == "\\."
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

/// One row's values from its fields, checked as PostgreSQL's `NextCopyFrom` checks them:
/// too many fields first, then column by column a missing field or the type's input error.
fn row_values(
    fields: &[Option<String>],
    cols: &[String],
    types: &[SqlType],
) -> PgResult<Vec<Datum>> {
    if !cols.is_empty() && fields.len() > cols.len() {
        return Err(PgError::new(
            sqlstate::BAD_COPY_FILE_FORMAT,
            "extra data after last expected column",
        ));
    }
    let mut vals = Vec::with_capacity(cols.len());
    for (i, (col, ty)) in cols.iter().zip(types).enumerate() {
        vals.push(match fields.get(i) {
            None => {
                return Err(PgError::new(
                    sqlstate::BAD_COPY_FILE_FORMAT,
                    format!("missing data for column \"{col}\""),
                ));
            }
            Some(None) => Datum::Null,
            Some(Some(s)) => keel_types::io::parse_text(s, *ty)?,
        });
    }
    Ok(vals)
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
        let cf = self.cancel_check();
        let interrupt = keel_sql::ddl::Interrupt {
            cancel: &cf,
            deadline: self.deadline,
        };
        client.copy_out_start(false, cols.len());
        let mut line = String::new();
        if o.header {
            for (i, col) in cols.iter().enumerate() {
                if i > 0 {
                    line.push(delim);
                }
                if o.csv {
                    csv_field(&col.name, &o, delim, null, cols.len() == 1, &mut line);
                } else {
                    escape_text(&col.name, delim, &mut line);
                }
            }
            line.push('\n');
            client.copy_out_data(line.as_bytes());
        }
        let mut val = String::new();
        for (n, r) in rows.iter().enumerate() {
            if n.is_multiple_of(CHECK_ROWS) {
                interrupt.check()?;
            }
            if client.wants_flush() {
                client.flush().await?;
            }
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
                    csv_field(&val, &o, delim, null, r.len() == 1, &mut line);
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
        let quote = o.quote.unwrap_or('"');
        let mut reader = LineReader::new(InputFormat {
            csv: o.csv,
            // The options allow only one-byte (ASCII) delimiter, quote and escape.
            delim: delim as u8,
            quote: quote as u8,
            escape: o.escape.unwrap_or(quote) as u8,
            null: null.as_bytes().to_vec(),
        });
        let mut batch: Vec<Vec<Datum>> = Vec::new();
        let mut total = 0u64;
        let mut header_pending = o.header;
        let cf = self.cancel_check();
        let mut parsed = 0usize;
        // The first error ends the COPY at once, as in PostgreSQL: the protocol loop drops the
        // CopyData the client still sends, and the statement's rows are rolled back.
        loop {
            let chunk = client.copy_in_next().await?;
            let at_end = chunk.is_none();
            if let Some(b) = &chunk {
                reader.feed(b);
            }
            // PostgreSQL adds a CONTEXT naming the line (`COPY t, line 3: "..."`); keel's
            // errors have no context field yet, and no other field should stand in for it.
            while let Some(range) = reader.next_line(at_end)? {
                if parsed.is_multiple_of(CHECK_ROWS) {
                    keel_sql::ddl::Interrupt {
                        cancel: &cf,
                        deadline: self.deadline,
                    }
                    .check()?;
                }
                parsed += 1;
                if header_pending {
                    header_pending = false;
                    continue;
                }
                let row = reader
                    .fields(reader.line(range))
                    .and_then(|fields| row_values(&fields, &cols, &types))?;
                batch.push(row);
                if batch.len() >= BATCH {
                    total += self.insert_batch(plan, row_exprs, &mut batch).await?;
                }
            }
            if at_end {
                break;
            }
        }
        total += self.insert_batch(plan, row_exprs, &mut batch).await?;
        Ok((vec![], format!("COPY {total}")))
    }

    /// Inserts and empties `batch`; returns the number of rows inserted.
    async fn insert_batch(
        &mut self,
        plan: &keel_sql::plan::ModifyPlan,
        row_exprs: &[keel_sql::expr::Expr],
        batch: &mut Vec<Vec<Datum>>,
    ) -> PgResult<u64> {
        if batch.is_empty() {
            return Ok(0);
        }
        let full = self.complete_rows(row_exprs, std::mem::take(batch))?;
        let mut exec = ModifyExec::with_rows(full);
        self.drive_modify(plan, &mut exec, &[]).await?;
        Ok(exec.count)
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
            self.deadline,
        );
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            ev.tick()?;
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

    fn text(s: &str, delim: char) -> String {
        let mut out = String::new();
        escape_text(s, delim, &mut out);
        out
    }

    #[test]
    fn text_output_escapes_as_postgres_whatever_the_delimiter() {
        let data = "a\\b\tc\nd\re\x08f\x0bg\x0ch|i\x01j";
        assert_eq!(text(data, '|'), "a\\\\b\\tc\\nd\\re\\bf\\vg\\fh\\|i\x01j");
        assert_eq!(text(data, '\t'), "a\\\\b\\tc\\nd\\re\\bf\\vg\\fh|i\x01j");
        assert_eq!(text("a\x01b", '\x01'), "a\\\x01b");
    }

    #[test]
    fn csv_output_quotes_end_marker_in_one_column() {
        let o = CopyOptions {
            csv: true,
            ..Default::default()
        };
        let field = |s: &str, single: bool| {
            let mut out = String::new();
            csv_field(s, &o, ',', "", single, &mut out);
            out
        };
        assert_eq!(field("\\.", true), "\"\\.\"");
        assert_eq!(field("\\.", false), "\\.");
        assert_eq!(field("", false), "\"\"");
        assert_eq!(field("a\"b", false), "\"a\"\"b\"");
    }
}
