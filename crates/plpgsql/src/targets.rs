//! Assignment targets beyond a plain variable or record field: array elements and slices
//! (`a[i] := v`, `a[i][j] := v`, `a[lo:hi] := array[...]`), and the items GET DIAGNOSTICS
//! reads.

use crate::Host;
use crate::interp::{Interp, PlState};
use keel_common::{PgError, PgResult, sqlstate};
use keel_pl::{AssignTarget, SqlText, TargetPart};
use keel_types::cast::{CastContext, cast};
use keel_types::{SqlType, TypeId};

impl<H: Host + ?Sized> Interp<'_, H> {
    /// `a[i]... := expr`: the subscripts, then the value, then the array with the element
    /// (or slice) replaced, as PostgreSQL's array_set_element / array_set_slice: a NULL array
    /// is an empty one, a one-dimensional array grows to take the subscript.
    pub(crate) async fn assign_element(
        &mut self,
        st: &mut PlState,
        target: &AssignTarget,
        path: &[TargetPart],
        expr: &SqlText,
    ) -> PgResult<()> {
        let context = |e: PgError| {
            e.with_context_line(format!(
                "PL/pgSQL assignment \"{} := {}\"",
                target.text.text, expr.text
            ))
        };
        let Some(var) = st.vars.find(&target.name) else {
            return Err(PgError::new(
                sqlstate::SYNTAX_ERROR,
                format!("\"{}\" is not a known variable", target.name),
            ));
        };
        let (ty, original) = (var.ty, var.value.clone());
        if ty.elem().is_none() {
            // PostgreSQL finds this parsing the assignment: the statement is the query.
            let mut e = PgError::new(
                sqlstate::DATATYPE_MISMATCH,
                format!(
                    "cannot subscript type {} because it does not support subscripting",
                    ty.name()
                ),
            );
            let o = e.objects.get_or_insert_with(Default::default);
            o.internal_query = Some(format!("{} := {}", target.text.text, expr.text));
            o.internal_position = Some(1);
            return Err(e);
        }
        let mut bounds = Vec::with_capacity(path.len());
        let mut plain = Vec::with_capacity(path.len());
        for part in path {
            let TargetPart::Subscript(sub) = part else {
                return Err(PgError::unsupported(
                    "assignment to a field of an array element in PL/pgSQL",
                ));
            };
            let halves = slice_bounds(&sub.text);
            plain.push(halves.is_none());
            let (lo, hi) = halves.unwrap_or(("", sub.text.as_str()));
            let given = |t: &str| (!t.trim().is_empty()).then(|| t.to_string());
            let (lo, hi) = (given(lo), given(hi));
            let mut pair = (None, None);
            for (slot, text) in [(&mut pair.0, lo), (&mut pair.1, hi)] {
                let Some(text) = text else { continue };
                let e = SqlText {
                    text,
                    offset: sub.offset,
                    line: sub.line,
                };
                let (v, from) = self.eval(st, &e).await.map_err(context)?;
                let v = cast(v, from, SqlType::new(TypeId::Int4), CastContext::Assignment)
                    .map_err(context)?;
                match v.int_value() {
                    Some(i) => *slot = Some(i),
                    None => {
                        return Err(PgError::new(
                            sqlstate::NULL_VALUE_NOT_ALLOWED,
                            "array subscript in assignment must not be null",
                        ));
                    }
                }
            }
            bounds.push(pair);
        }
        let slice = plain.iter().any(|p| !p);
        let (v, from) = self.eval(st, expr).await.map_err(context)?;
        let want = if slice {
            ty
        } else {
            ty.elem().unwrap_or(TypeId::Text)
        };
        let v = if v.is_null() || from == want {
            v
        } else {
            cast(v, from, SqlType::new(want), CastContext::Assignment).map_err(context)?
        };
        // The array's own errors (a subscript out of range) come from running the
        // assignment, not parsing it: no assignment line, as in PostgreSQL.
        let new = keel_sql::eval_array_assign::assign_subscripts(
            original, ty, &bounds, &plain, slice, v,
        )?;
        self.assign(st, &target.name, new, ty)
    }
}

/// A subscript's `lo:hi` halves (either may be empty); None when it is not a slice. A `::`
/// cast and anything inside parentheses, brackets or quotes is not the colon.
fn slice_bounds(text: &str) -> Option<(&str, &str)> {
    let b = text.as_bytes();
    let (mut depth, mut quote) = (0i32, None::<u8>);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                b'\'' | b'"' => quote = Some(c),
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b':' if b.get(i + 1) == Some(&b':') => i += 1,
                b':' if depth == 0 => return Some((&text[..i], &text[i + 1..])),
                _ => {}
            },
        }
        i += 1;
    }
    None
}

/// A GET DIAGNOSTICS text item: of the error being handled (STACKED), or PG_CONTEXT. What
/// the error does not carry is the empty string, as in PostgreSQL.
pub(crate) fn diagnostic(st: &PlState, item: keel_pl::DiagItem) -> PgResult<String> {
    use keel_pl::DiagItem as D;
    let Some(e) = st.handling.last() else {
        return Err(PgError::unsupported(format!(
            "GET DIAGNOSTICS {}",
            item.name()
        )));
    };
    let o = e.objects.as_deref();
    let field = |f: fn(&keel_common::ErrorObjects) -> &Option<String>| {
        o.and_then(|o| f(o).clone()).unwrap_or_default()
    };
    Ok(match item {
        D::ReturnedSqlstate => e.code.to_string(),
        D::MessageText => e.message.clone(),
        D::PgExceptionDetail => e.detail.clone().unwrap_or_default(),
        D::PgExceptionHint => e.hint.clone().unwrap_or_default(),
        D::PgExceptionContext => field(|o| &o.context),
        D::ColumnName => field(|o| &o.column),
        D::ConstraintName => field(|o| &o.constraint),
        D::PgDatatypeName => field(|o| &o.datatype),
        D::TableName => field(|o| &o.table),
        D::SchemaName => field(|o| &o.schema),
        D::RowCount | D::PgContext => {
            return Err(PgError::unsupported(format!(
                "GET DIAGNOSTICS {}",
                item.name()
            )));
        }
    })
}

/// `GET DIAGNOSTICS ... = PG_CONTEXT`: a line per running function, innermost first, as
/// PostgreSQL's error context stack prints them.
pub(crate) fn pg_context(calls: &[keel_sql::exec::cursor::PlFrame]) -> String {
    let lines: Vec<String> = (calls.iter().rev())
        .map(|f| {
            format!(
                "PL/pgSQL function {} line {} at {}",
                f.function, f.line, f.stmt
            )
        })
        .collect();
    lines.join("\n")
}
