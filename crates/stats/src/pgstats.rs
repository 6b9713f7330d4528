//! The rows of PostgreSQL's `pg_stats` view, for the catalog to serve once it has one.

use crate::TableStats;
use keel_types::io::{format_float, format_text};
use keel_types::{Datum, TypeId};

/// One row of `pg_stats`, its columns in the view's text forms (None is SQL NULL). Arrays are
/// rendered as PostgreSQL's array text (`{1,2,"a b"}`).
#[derive(Clone, Debug, PartialEq)]
pub struct PgStatsRow {
    pub schemaname: String,
    pub tablename: String,
    pub attname: String,
    pub inherited: bool,
    pub null_frac: String,
    pub avg_width: i32,
    pub n_distinct: String,
    pub most_common_vals: Option<String>,
    pub most_common_freqs: Option<String>,
    pub histogram_bounds: Option<String>,
    pub correlation: Option<String>,
}

impl PgStatsRow {
    /// The row as `pg_stats` columns in view order, NULLs as None.
    pub fn columns(&self) -> Vec<Option<String>> {
        vec![
            Some(self.schemaname.clone()),
            Some(self.tablename.clone()),
            Some(self.attname.clone()),
            Some(if self.inherited { "t" } else { "f" }.to_string()),
            Some(self.null_frac.clone()),
            Some(self.avg_width.to_string()),
            Some(self.n_distinct.clone()),
            self.most_common_vals.clone(),
            self.most_common_freqs.clone(),
            self.histogram_bounds.clone(),
            self.correlation.clone(),
        ]
    }
}

fn float4(v: f32) -> String {
    let mut s = String::new();
    format_float(v as f64, true, &mut s);
    s
}

/// PostgreSQL's `array_out` for a one-dimensional array: elements quoted when empty, equal
/// to NULL (any case), or holding a brace, comma, quote, backslash or whitespace.
fn array_text(values: &[Datum], ty: TypeId) -> String {
    let mut out = String::from("{");
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let mut s = String::new();
        format_text(v, ty, &mut s);
        let quote = s.is_empty()
            || s.eq_ignore_ascii_case("null")
            || s.bytes()
                .any(|c| matches!(c, b'{' | b'}' | b',' | b'"' | b'\\') || c.is_ascii_whitespace());
        if quote {
            out.push('"');
            for c in s.chars() {
                if c == '"' || c == '\\' {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
        } else {
            out.push_str(&s);
        }
    }
    out.push('}');
    out
}

fn float4_array(values: &[f32]) -> String {
    let parts: Vec<String> = values.iter().map(|&v| float4(v)).collect();
    format!("{{{}}}", parts.join(","))
}

/// The `pg_stats` rows of a table: one per column (named by `columns`, the table's current
/// `(name, type)` list) that has statistics of the same type, in column order.
pub fn pg_stats_rows(
    schema: &str,
    table: &str,
    columns: &[(String, TypeId)],
    stats: &TableStats,
) -> Vec<PgStatsRow> {
    let mut rows = Vec::new();
    for (i, (name, ty)) in columns.iter().enumerate() {
        let Some(c) = stats.column(i, *ty) else {
            continue;
        };
        let nonempty = |v: &[Datum]| (!v.is_empty()).then(|| array_text(v, *ty));
        rows.push(PgStatsRow {
            schemaname: schema.to_string(),
            tablename: table.to_string(),
            attname: name.clone(),
            inherited: false,
            null_frac: float4(c.null_frac),
            avg_width: c.avg_width,
            n_distinct: float4(c.n_distinct),
            most_common_vals: nonempty(&c.mcv_values),
            most_common_freqs: (!c.mcv_freqs.is_empty()).then(|| float4_array(&c.mcv_freqs)),
            histogram_bounds: nonempty(&c.histogram),
            correlation: c.correlation.map(float4),
        });
    }
    rows
}
