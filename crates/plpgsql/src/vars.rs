//! PL/pgSQL variables and how SQL text inside a body sees them.
//!
//! A statement or expression of a body is SQL text; before it is prepared, every identifier
//! that names a variable in scope (and `rec.field` of a record variable) becomes a parameter
//! `$n`, and the variable's current value is passed for it. The same text with the same
//! variables always becomes the same parameterized statement, so a statement in a loop is
//! prepared once and run with new values (the session's plan cache does the rest).
//!
//! Unlike PostgreSQL, which resolves names in the parser (and by default reports a name that
//! is both a column and a variable as ambiguous), a variable here always wins over a column
//! of the same name: name variables so they do not collide with columns (`v_id`, `p_name`).

use keel_types::{Datum, TypeId};
use std::sync::Arc;

/// A variable: a scalar of a declared type, or a record (fields known once assigned).
pub struct Var {
    pub name: String,
    pub ty: TypeId,
    pub typmod: i32,
    pub value: Datum,
    pub constant: bool,
    pub not_null: bool,
    /// Set for `record` variables: field names, types and values.
    pub record: Option<Record>,
    pub is_record: bool,
    /// A bound cursor's declaration (`c CURSOR [(args)] FOR query`).
    pub bound: Option<Arc<keel_pl::CursorDecl>>,
}

impl Var {
    /// A scalar variable holding `value`.
    pub fn scalar(name: &str, ty: TypeId, value: Datum) -> Var {
        Var {
            name: name.to_string(),
            ty,
            typmod: -1,
            value,
            constant: false,
            not_null: false,
            record: None,
            is_record: false,
            bound: None,
        }
    }
}

impl Var {
    /// A record variable: `record` (fields known once assigned) when `rec` is None, else a
    /// record of that shape.
    pub fn record(name: &str, constant: bool, rec: Option<Record>) -> Var {
        Var {
            name: name.to_string(),
            ty: TypeId::Void,
            typmod: -1,
            value: Datum::Null,
            constant,
            not_null: false,
            record: rec,
            is_record: true,
            bound: None,
        }
    }

    /// A scalar that may not be assigned (a handler's SQLSTATE and SQLERRM).
    pub fn constant(name: &str, ty: TypeId, value: Datum) -> Var {
        Var {
            constant: true,
            ..Var::scalar(name, ty, value)
        }
    }
}

#[derive(Clone)]
pub struct Record {
    /// The composite type: a named one's `Composite(oid)` (`v compostype`, `t%ROWTYPE`, or
    /// what was assigned), else `Record`.
    pub ty: TypeId,
    pub names: Vec<String>,
    pub types: Vec<TypeId>,
    /// Type modifiers by field, where known (a table's row: `varchar(10)`); -1 otherwise.
    pub typmods: Vec<i32>,
    pub values: Vec<Datum>,
    /// A null row of a known shape (a trigger's OLD on INSERT): its fields read as NULL and
    /// `RETURN` of it returns NULL.
    pub is_null: bool,
    /// Declared with its shape (`t%ROWTYPE`): PostgreSQL converts a value assigned to a field
    /// inside the assignment's expression, so its errors name the assignment.
    pub declared: bool,
}

impl Record {
    /// The variable's value as one composite datum (NULL for a null row).
    pub fn to_datum(&self) -> Datum {
        if self.is_null {
            return Datum::Null;
        }
        Datum::Record(Arc::new(keel_types::record::Record::new(
            self.ty,
            self.types.as_slice().into(),
            self.values.clone(),
        )))
    }

    /// A record of the fields of composite `c`, each NULL (`is_null`: the row itself is).
    pub fn of_composite(c: &keel_catalog::Composite, is_null: bool) -> Record {
        Record {
            ty: c.ty,
            names: c.fields.iter().map(|f| f.name.clone()).collect(),
            types: c.fields.iter().map(|f| f.ty.id).collect(),
            typmods: c.fields.iter().map(|f| f.ty.typmod).collect(),
            values: vec![Datum::Null; c.fields.len()],
            is_null,
            declared: true,
        }
    }
}

/// Variables by block, innermost last, and the block-scoped `ALIAS FOR` names.
#[derive(Default)]
pub struct Scopes {
    pub scopes: Vec<Vec<Var>>,
    /// Each block's label, parallel to `scopes`: the function's name for its parameters'
    /// block, a `<<label>>` for a labelled block. `label.var` names a variable of that block.
    pub labels: Vec<Option<String>>,
    /// `name ALIAS FOR target`: (index of the declaring block in `scopes`, name, target).
    pub aliases: Vec<(usize, String, String)>,
}

impl Scopes {
    /// Where `name` is: (block, index), the innermost block first; an alias declared in a
    /// block is looked up from that block outwards.
    fn locate(&self, name: &str, from: usize) -> Option<(usize, usize)> {
        for d in (0..from).rev() {
            if let Some(k) = self.scopes[d].iter().rposition(|v| v.name == name) {
                return Some((d, k));
            }
            if let Some((_, _, target)) = self
                .aliases
                .iter()
                .rev()
                .find(|(at, alias, _)| *at == d && alias == name)
            {
                return self.locate(target, d + 1);
            }
        }
        None
    }

    pub fn find(&self, name: &str) -> Option<&Var> {
        let (d, k) = self.locate(name, self.scopes.len())?;
        Some(&self.scopes[d][k])
    }

    pub fn find_mut(&mut self, name: &str) -> Option<&mut Var> {
        let (d, k) = self.locate(name, self.scopes.len())?;
        Some(&mut self.scopes[d][k])
    }

    pub fn declare(&mut self, v: Var) {
        if let Some(s) = self.scopes.last_mut() {
            s.push(v);
        }
    }

    /// Declares `name` in the innermost block as another name for `target`, which must be
    /// visible there (PostgreSQL resolves the target at the declaration).
    pub fn declare_alias(&mut self, name: &str, target: &str) -> bool {
        if self.find(target).is_none() {
            return false;
        }
        let at = self.scopes.len().saturating_sub(1);
        self.aliases
            .push((at, name.to_string(), target.to_string()));
        true
    }

    pub fn push_scope(&mut self, vars: Vec<Var>) {
        self.push_labelled(vars, None);
    }

    /// Enters a block with label `label`.
    pub fn push_labelled(&mut self, vars: Vec<Var>, label: Option<String>) {
        self.scopes.push(vars);
        self.labels.push(label);
    }

    /// `label.name`: variable `name` of the innermost enclosing block labelled `label`.
    pub fn find_labelled(&self, label: &str, name: &str) -> Option<&Var> {
        let d = self.labelled(label)?;
        self.scopes[d].iter().rfind(|v| v.name == name)
    }

    pub fn find_labelled_mut(&mut self, label: &str, name: &str) -> Option<&mut Var> {
        let d = self.labelled(label)?;
        self.scopes[d].iter_mut().rfind(|v| v.name == name)
    }

    /// The innermost enclosing block labelled `label`.
    fn labelled(&self, label: &str) -> Option<usize> {
        let at = |d: &usize| {
            self.labels
                .get(*d)
                .is_some_and(|l| l.as_deref() == Some(label))
        };
        (0..self.scopes.len()).rev().find(at)
    }

    /// Leaves the innermost block, with its variables and aliases.
    pub fn pop_scope(&mut self) {
        self.scopes.pop();
        self.labels.pop();
        let depth = self.scopes.len();
        self.aliases.retain(|(at, _, _)| *at < depth);
    }
}

/// The parameterized form of a body's SQL text, and the values for its parameters.
pub struct Bound {
    pub text: String,
    pub types: Vec<TypeId>,
    pub values: Vec<Datum>,
    /// The variable each parameter stands for: its name for a plain variable, None for a
    /// record's field or a `$n` reference (which no column can be confused with).
    pub names: Vec<Option<String>>,
    /// Where the variables were replaced (see [`Replaced`]).
    pub subs: Replaced,
}

/// Each replacement `bind_vars` made, as (start, end) in its text and (start, end) in the
/// original, in bytes.
#[derive(Default)]
pub struct Replaced(Vec<(usize, usize, usize, usize)>);

impl Replaced {
    /// Appends to `out` the text of `sql` from `copied` up to the reference at `at` (its
    /// byte range), then `$n` in its place, and records the replacement: where copying
    /// goes on from.
    fn replace(
        &mut self,
        out: &mut String,
        sql: &str,
        copied: usize,
        at: (usize, usize),
        n: usize,
    ) -> usize {
        out.push_str(&sql[copied..at.0]);
        let start = out.len();
        out.push('$');
        out.push_str(&n.to_string());
        self.0.push((start, out.len(), at.0, at.1));
        at.1
    }

    /// The 1-based character position in `original` (the text `bind_vars` was given) of
    /// character `pos` of `text` (the text it made): a position inside a replaced variable
    /// is the variable's.
    pub fn original_position(&self, text: &str, original: &str, pos: u32) -> u32 {
        let at = (pos as usize).saturating_sub(1);
        let off = text.char_indices().nth(at).map_or(text.len(), |(b, _)| b);
        let mut shift = 0isize;
        for &(bs, be, os, oe) in &self.0 {
            if off < bs {
                break;
            }
            if off < be {
                return original[..os].chars().count() as u32 + 1;
            }
            shift += (oe - os) as isize - (be - bs) as isize;
        }
        let o = ((off as isize + shift).max(0) as usize).min(original.len());
        original.get(..o).map_or(o, |s| s.chars().count()) as u32 + 1
    }
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// Replaces the variables in `sql` with parameters `$k` (numbered after `first` already
/// used ones). Quoted strings, dollar quotes, comments, qualified names (`t.col`) and
/// function names (`f(`) are left alone.
pub fn bind_vars(sql: &str, scopes: &Scopes) -> Bound {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut types = Vec::new();
    let mut values = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    let mut subs = Replaced::default();
    let mut i = 0;
    let mut copied = 0;
    let mut prev_sig: u8 = b' ';
    while i < b.len() {
        let c = b[i];
        // Skip literals and comments whole.
        let skip_to = match c {
            b'\'' => Some(skip_quoted(b, i, b'\'')),
            b'"' => None,
            b'-' if b.get(i + 1) == Some(&b'-') => Some(
                b[i..]
                    .iter()
                    .position(|&x| x == b'\n')
                    .map_or(b.len(), |p| i + p),
            ),
            b'/' if b.get(i + 1) == Some(&b'*') => {
                Some(sql[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2))
            }
            b'$' if b.get(i + 1).is_some_and(|&x| !x.is_ascii_digit()) => {
                let close = sql[i + 1..].find('$').map(|p| i + 1 + p);
                match close {
                    Some(cl) if sql[i + 1..cl].bytes().all(is_ident) => {
                        let tag = &sql[i..=cl];
                        Some(
                            sql[cl + 1..]
                                .find(tag)
                                .map_or(b.len(), |p| cl + 1 + p + tag.len()),
                        )
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(end) = skip_to {
            i = end.max(i + 1);
            prev_sig = b'\'';
            continue;
        }
        let (start, word, quoted, end) = if c == b'"' {
            let end = skip_quoted(b, i, b'"');
            let inner = sql[i + 1..end.saturating_sub(1).max(i + 1)].replace("\"\"", "\"");
            (i, inner, true, end)
        } else if c == b'$'
            && b.get(i + 1).is_some_and(u8::is_ascii_digit)
            && !(i > 0 && is_ident(b[i - 1]))
        {
            // `$n`: a function's n-th parameter (a variable named so).
            let mut e = i + 1;
            while e < b.len() && b[e].is_ascii_digit() {
                e += 1;
            }
            (i, sql[i..e].to_string(), false, e)
        } else if is_ident_start(c) && !(i > 0 && is_ident(b[i - 1])) {
            let mut e = i;
            while e < b.len() && is_ident(b[e]) {
                e += 1;
            }
            (i, sql[i..e].to_ascii_lowercase(), false, e)
        } else {
            if !c.is_ascii_whitespace() {
                prev_sig = c;
            }
            i += 1;
            continue;
        };
        let _ = quoted;
        let next = b[end..]
            .iter()
            .position(|x| !x.is_ascii_whitespace())
            .map(|p| end + p);
        let next_c = next.map(|p| b[p]);
        let qualified = prev_sig == b'.';
        let called = next_c == Some(b'(');
        let mut replaced = false;
        if next_c == Some(b'.')
            && !qualified
            && !called
            && !scopes.find(&word).is_some_and(|v| v.is_record)
            && let Some((_, fe, field)) = word_after_dot(sql, next.map_or(end, |p| p + 1))
            && let Some(v) = scopes.find_labelled(&word, &field)
            && !v.is_record
        {
            // `label.var` (the function's name for a parameter): one parameter for the whole.
            let key = format!("{word}.{}", v.name);
            let n = param_index(&mut keys, &mut types, &mut values, key, v.ty, &v.value);
            copied = subs.replace(&mut out, sql, copied, (start, fe), n);
            i = fe;
            prev_sig = b'a';
            continue;
        }
        if !qualified
            && !called
            && let Some(v) = scopes.find(&word)
        {
            // `rec.field`: the whole reference becomes one parameter.
            if v.is_record && next_c == Some(b'.') {
                if let Some((_, fe, field)) = word_after_dot(sql, next.map_or(end, |p| p + 1))
                    && let Some(r) = &v.record
                    && let Some(k) = r.names.iter().position(|n| *n == field)
                {
                    let key = format!("{word}.{field}");
                    let n = param_index(
                        &mut keys,
                        &mut types,
                        &mut values,
                        key,
                        r.types[k],
                        &r.values[k],
                    );
                    copied = subs.replace(&mut out, sql, copied, (start, fe), n);
                    i = fe;
                    replaced = true;
                }
            } else if v.is_record
                && next_c != Some(b'.')
                && let Some(r) = &v.record
            {
                // A record variable as a whole: one composite parameter.
                let n = param_index(
                    &mut keys,
                    &mut types,
                    &mut values,
                    word.clone(),
                    r.ty,
                    &r.to_datum(),
                );
                copied = subs.replace(&mut out, sql, copied, (start, end), n);
                i = end;
                replaced = true;
            } else if !v.is_record && next_c != Some(b'.') {
                let n = param_index(
                    &mut keys,
                    &mut types,
                    &mut values,
                    word.clone(),
                    v.ty,
                    &v.value,
                );
                copied = subs.replace(&mut out, sql, copied, (start, end), n);
                i = end;
                replaced = true;
            }
        }
        if !replaced {
            i = end;
        }
        prev_sig = b'a';
    }
    out.push_str(&sql[copied..]);
    let names = keys
        .into_iter()
        .map(|k| (!k.contains('.') && !k.starts_with('$')).then_some(k))
        .collect();
    Bound {
        text: out,
        types,
        values,
        names,
        subs,
    }
}

/// The identifier after a `.` at `from` (whitespace skipped): its byte range and its name
/// (folded, or as written between double quotes).
fn word_after_dot(sql: &str, from: usize) -> Option<(usize, usize, String)> {
    let b = sql.as_bytes();
    let fs = b[from.min(b.len())..]
        .iter()
        .position(|x| !x.is_ascii_whitespace())
        .map_or(b.len(), |p| from + p);
    if b.get(fs) == Some(&b'"') {
        let fe = skip_quoted(b, fs, b'"');
        let name = sql[fs + 1..fe.saturating_sub(1).max(fs + 1)].replace("\"\"", "\"");
        return (fe > fs + 1 && b[fe - 1] == b'"').then_some((fs, fe, name));
    }
    let mut fe = fs;
    while fe < b.len() && is_ident(b[fe]) {
        fe += 1;
    }
    (fe > fs && is_ident_start(b[fs])).then(|| (fs, fe, sql[fs..fe].to_ascii_lowercase()))
}

fn param_index(
    keys: &mut Vec<String>,
    types: &mut Vec<TypeId>,
    values: &mut Vec<Datum>,
    key: String,
    ty: TypeId,
    value: &Datum,
) -> usize {
    if let Some(k) = keys.iter().position(|x| *x == key) {
        return k + 1;
    }
    keys.push(key);
    types.push(ty);
    values.push(value.clone());
    keys.len()
}

/// The index just past a quoted run starting at `i` (doubled quotes stay inside).
fn skip_quoted(b: &[u8], i: usize, q: u8) -> usize {
    let mut j = i + 1;
    while j < b.len() {
        if b[j] == q {
            if b.get(j + 1) == Some(&q) {
                j += 2;
                continue;
            }
            return j + 1;
        }
        if q == b'\'' && b[j] == b'\\' && i > 0 && matches!(b[i - 1], b'e' | b'E') {
            j += 2;
            continue;
        }
        j += 1;
    }
    b.len()
}
