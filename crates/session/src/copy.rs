//! COPY FROM STDIN / TO STDOUT, and from and to server-side files, in text and CSV formats.

use crate::exec::{Rows, stmt_env};
use crate::session::Session;
use keel_common::{PgError, PgResult, sqlstate};
use keel_sql::Stmt;
use keel_sql::exec::ModifyExec;
use keel_sql::expr::Eval;
use keel_sql::plan::ModifyKind;
use keel_sql::utility::{CopyOptions, CopyStmt};
use keel_types::{Datum, SqlType};
use keel_wire::Client;
use std::sync::Arc;

mod file;
mod parse;

use file::{CopyInput, CopyOutput};
use parse::{InputFormat, LineReader};

/// COPY FROM inserts its rows in batches of at most this many rows and bytes (so long rows
/// are not all parsed before the first is inserted).
const BATCH: usize = 10_000;
const BATCH_BYTES: usize = 8 << 20;

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

/// How COPY TO writes a line: PostgreSQL's `CopyOneRowTo`.
struct LineFormat<'a> {
    o: &'a CopyOptions,
    delim: char,
    null: &'a str,
    /// A one-column COPY (CSV quotes `\.` then).
    single: bool,
}

impl LineFormat<'_> {
    /// Writes `row` as one line into `line` (cleared first). `cols` gives the output types
    /// (None: the values are text, as in the header). The line is PostgreSQL's buffer, so it
    /// fails as that buffer does past 1 GB: each delimiter, field and the newline is an
    /// append (`keel_types::limits::enlarge`).
    fn line(
        &self,
        row: &[Datum],
        cols: Option<&[keel_sql::plan::OutColumn]>,
        line: &mut String,
        val: &mut String,
    ) -> PgResult<()> {
        use keel_types::limits;
        line.clear();
        for (i, d) in row.iter().enumerate() {
            if i > 0 {
                limits::enlarge(line.len(), 1)?;
                line.push(self.delim);
            }
            if d.is_null() {
                limits::enlarge(line.len(), self.null.len())?;
                line.push_str(self.null);
                continue;
            }
            let text = match (d, cols) {
                (Datum::Text(s), None) => s.as_str(),
                _ => {
                    limits::text_out(d)?;
                    let ty = cols
                        .and_then(|c| c.get(i))
                        .map_or(keel_types::TypeId::Text, |c| c.ty);
                    val.clear();
                    keel_types::io::format_text(d, ty, val);
                    val.as_str()
                }
            };
            // Escaping at most doubles a field (quoted CSV adds two quotes): below that, no
            // append can fail and the field is escaped in place.
            let at = line.len();
            if at + 2 * text.len() + 2 < limits::MAX_ALLOC_SIZE - 1 {
                self.field(text, line);
            } else {
                let mut escaped = String::new();
                self.field(text, &mut escaped);
                limits::enlarge(at, escaped.len())?;
                line.push_str(&escaped);
            }
        }
        limits::enlarge(line.len(), 1)?;
        line.push('\n');
        Ok(())
    }

    fn field(&self, text: &str, out: &mut String) {
        if self.o.csv {
            csv_field(text, self.o, self.delim, self.null, self.single, out);
        } else {
            escape_text(text, self.delim, out);
        }
    }
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
        let prep = self.lock_plan(&prep).await?.unwrap_or(prep);
        if !matches!(prep.stmt, Stmt::Query(_)) {
            return Err(PgError::unsupported("COPY of this statement"));
        }
        let cols = prep.columns().map(|x| x.to_vec()).unwrap_or_default();
        self.settle().await?;
        let Stmt::Query(q) = &prep.stmt else {
            return Err(PgError::internal("not a query"));
        };
        self.ensure_txn();
        let Some(txn) = self.txn.as_mut() else {
            return Err(PgError::internal("no transaction"));
        };
        self.engine.start_statement(txn);
        let cf = self.cancel_check();
        let txn = self
            .txn
            .as_ref()
            .ok_or_else(|| PgError::internal("no transaction"))?;
        let mut ev = crate::exec::eval_cx(stmt_env!(self), &[], &cf, Some(txn));
        let out = LineFormat {
            o: &o,
            delim,
            null,
            single: cols.len() == 1,
        };
        let (mut line, mut val) = (String::new(), String::new());
        // Rows go out as they are produced, as a query's do (`Session::stream_query`): the
        // executor stops whenever the socket has not taken what was written. The first row is
        // computed before CopyOutResponse, so an error there (PostgreSQL raises `1/0` while
        // planning) is a plain statement error.
        let cheap = q.root.is_cheap();
        let mut root = keel_sql::exec::open_query(q, &self.engine, txn, &mut ev)?;
        let mut next = crate::exec::maybe_blocking(cheap, || root.next(&mut ev))?;
        let mut dest = CopyOutput::open(c.file.as_deref())?;
        if dest.is_client() {
            client.copy_out_start(false, cols.len());
        }
        if o.header {
            let names: Vec<Datum> = cols.iter().map(|c| Datum::Text(c.name.clone())).collect();
            out.line(&names, None, &mut line, &mut val)?;
            dest.write(client, line.as_bytes())?;
        }
        let mut n = 0u64;
        while next.is_some() {
            next = crate::exec::maybe_blocking(cheap, || -> PgResult<Option<Vec<Datum>>> {
                while let Some(r) = next.take() {
                    out.line(&r, Some(&cols), &mut line, &mut val)?;
                    dest.write(client, line.as_bytes())?;
                    n += 1;
                    ev.tick()?;
                    next = root.next(&mut ev)?;
                    if next.is_some() && dest.is_client() && client.wants_flush() {
                        break;
                    }
                }
                Ok(next.take())
            })?;
            if next.is_some() {
                client.flush().await?;
            }
        }
        dest.finish()?;
        if dest.is_client() {
            client.copy_out_done();
        }
        Ok((vec![], format!("COPY {n}")))
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
        // Locked before its definition is read: it cannot change under the copy.
        let locks = {
            let cat = self.catalog();
            let t = cat.table(&table)?;
            vec![(t.oid, t.name.clone(), keel_access::LockMode::RowExclusive)]
        };
        self.lock_relations(&locks, false).await?;
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
        let mut source = CopyInput::open(c.file.as_deref(), self.engine.data_dir())?;
        if source.is_client() {
            client.copy_in_start(false, cols.len()).await?;
        }
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
        let mut batch_bytes = 0;
        let mut total = 0u64;
        let mut header_pending = o.header;
        let cf = self.cancel_check();
        let mut parsed = 0usize;
        // The first error ends the COPY at once, as in PostgreSQL: the protocol loop drops the
        // CopyData the client still sends, and the statement's rows are rolled back.
        loop {
            let chunk = source.next(client).await?;
            let at_end = chunk.is_none();
            if let Some(b) = &chunk {
                reader.feed(b)?;
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
                batch_bytes += keel_types::datum::row_heap_bytes(&row);
                batch.push(row);
                if batch.len() >= BATCH || batch_bytes >= BATCH_BYTES {
                    total += self.insert_batch(plan, row_exprs, &mut batch).await?;
                    batch_bytes = 0;
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
        let mut ev = crate::exec::eval_cx(stmt_env!(self), &[], &cf, self.txn.as_ref());
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
