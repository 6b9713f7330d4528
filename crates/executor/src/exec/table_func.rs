//! Set-returning functions: the rows of one call ([`FuncRows`]), a function scan in FROM
//! ([`FunctionScan`]), and the expansion a select list's calls make ([`SetExpansion`], used by
//! the projection).

use super::values::SeriesState;
use super::{Node, Row};
use crate::eval::{Eval, EvalCx};
use keel_analyzer::srf::{SetFunc, TableFunc};
use keel_common::PgResult;
use keel_types::array::Array;
use keel_types::{Datum, TypeId};

/// The values one call still has to produce.
pub enum FuncRows {
    Series(SeriesState),
    /// Materialized results (unnest's elements, regular-expression results), in order.
    Values(std::vec::IntoIter<Datum>),
    /// generate_subscripts: `cur` stepping by `step` (±1) while it has not passed `stop`.
    Subscripts {
        cur: i64,
        stop: i64,
        step: i64,
    },
    /// A user function's rows (from its language's handler), each `width` values.
    Rows(std::vec::IntoIter<Row>),
}

fn text(d: &Datum) -> &str {
    match d {
        Datum::Text(s) => s,
        _ => "",
    }
}

fn text_array(groups: Vec<Option<String>>) -> Datum {
    let items = groups
        .into_iter()
        .map(|g| g.map_or(Datum::Null, Datum::Text))
        .collect();
    Datum::Array(std::sync::Arc::new(Array::from_items(TypeId::Text, items)))
}

impl FuncRows {
    /// Evaluates the call's arguments over `row`; None when one is NULL (the functions are
    /// strict: no rows).
    pub fn open(f: &TableFunc, row: &[Datum], ev: &mut EvalCx<'_>) -> PgResult<Option<FuncRows>> {
        let mut args = Vec::with_capacity(f.args.len());
        let strict = match &f.user {
            Some((c, _)) => c.def.strict,
            None => f.func != SetFunc::StringToTable,
        };
        for a in &f.args {
            let v = a.eval(row, ev)?;
            if v.is_null() && strict {
                // A strict function returning one value gives one NULL row, a set none.
                return Ok(match &f.user {
                    Some((c, w)) if !c.def.set_returning => {
                        Some(FuncRows::Rows(vec![vec![Datum::Null; *w]].into_iter()))
                    }
                    _ => None,
                });
            }
            args.push(v);
        }
        if let Some((call, _)) = &f.user {
            return Ok(Some(FuncRows::Rows(
                crate::sqlfunc::call_rows(call, args, ev)?.into_iter(),
            )));
        }
        let mut it = args.into_iter();
        let mut arg = || it.next().unwrap_or(Datum::Null);
        Ok(Some(match f.func {
            SetFunc::Series => {
                let (a, b) = (arg(), arg());
                let s = match arg() {
                    Datum::Null => Datum::Int4(1),
                    s => s,
                };
                match SeriesState::open(a, b, s, f.ty)? {
                    Some(st) => FuncRows::Series(st),
                    None => return Ok(None),
                }
            }
            SetFunc::Unnest => match arg() {
                Datum::Array(a) => {
                    FuncRows::Values(std::sync::Arc::unwrap_or_clone(a).items.into_iter())
                }
                _ => return Ok(None),
            },
            SetFunc::Subscripts => {
                let (Datum::Array(a), Datum::Int4(dim)) = (arg(), arg()) else {
                    return Ok(None);
                };
                let reverse = matches!(arg(), Datum::Bool(true));
                let Some(d) = usize::try_from(dim - 1).ok().and_then(|i| a.dims.get(i)) else {
                    return Ok(None);
                };
                let (lo, hi) = (d.lower as i64, d.lower as i64 + d.len as i64 - 1);
                if reverse {
                    FuncRows::Subscripts {
                        cur: hi,
                        stop: lo,
                        step: -1,
                    }
                } else {
                    FuncRows::Subscripts {
                        cur: lo,
                        stop: hi,
                        step: 1,
                    }
                }
            }
            SetFunc::User => {
                return Err(keel_common::PgError::internal("user function without call"));
            }
            SetFunc::StringToTable => {
                let (s, delim, null) = (arg(), arg(), arg());
                let Datum::Text(s) = s else {
                    return Ok(None);
                };
                let delim = (!delim.is_null()).then(|| text(&delim).to_string());
                let null = (!null.is_null()).then(|| text(&null).to_string());
                FuncRows::Values(
                    keel_types::array_ops::split_string(&s, delim.as_deref(), null.as_deref())
                        .into_iter(),
                )
            }
            SetFunc::RegexpMatches | SetFunc::RegexpSplit => {
                let (s, p, flags) = (arg(), arg(), arg());
                let flags = (!flags.is_null()).then(|| text(&flags).to_string());
                let mut fcx = crate::interrupt::Interruptible {
                    inner: &mut *ev.fctx,
                    cancel: ev.cancel,
                    deadline: ev.deadline,
                };
                let vals: Vec<Datum> = if f.func == SetFunc::RegexpMatches {
                    keel_types::regex::regexp_matches(
                        text(&s),
                        text(&p),
                        flags.as_deref(),
                        &mut fcx,
                    )?
                    .into_iter()
                    .map(text_array)
                    .collect()
                } else {
                    keel_types::regex::regexp_split(
                        text(&s),
                        text(&p),
                        flags.as_deref(),
                        "regexp_split_to_table",
                        &mut fcx,
                    )?
                    .into_iter()
                    .map(Datum::Text)
                    .collect()
                };
                FuncRows::Values(vals.into_iter())
            }
        }))
    }

    /// The call's next value; None when it is done.
    /// Appends the call's next row (`width` values) to `out`; false when it is done.
    fn next_into(&mut self, out: &mut Vec<Datum>) -> PgResult<bool> {
        match self {
            FuncRows::Rows(rows) => {
                return Ok(match rows.next() {
                    Some(r) => {
                        out.extend(r);
                        true
                    }
                    None => false,
                });
            }
            FuncRows::Series(s) => return s.next_into(out),
            _ => {}
        }
        Ok(match self.next_value()? {
            Some(v) => {
                out.push(v);
                true
            }
            None => false,
        })
    }

    pub fn next_value(&mut self) -> PgResult<Option<Datum>> {
        match self {
            FuncRows::Rows(rows) => Ok(rows.next().and_then(|r| r.into_iter().next())),
            FuncRows::Series(s) => s.next(),
            FuncRows::Values(it) => Ok(it.next()),
            FuncRows::Subscripts { cur, stop, step } => {
                if (*step > 0 && *cur > *stop) || (*step < 0 && *cur < *stop) {
                    return Ok(None);
                }
                let v = *cur;
                *cur += *step;
                Ok(Some(Datum::Int4(v as i32)))
            }
        }
    }
}

/// Several calls advancing together: each step gives one value per call, NULL for the calls
/// already done, until all are done.
pub struct SetExpansion {
    calls: Vec<Option<FuncRows>>,
    /// Values each call gives per step.
    widths: Vec<usize>,
}

impl SetExpansion {
    pub fn open(funcs: &[TableFunc], row: &[Datum], ev: &mut EvalCx<'_>) -> PgResult<Self> {
        let mut calls = Vec::with_capacity(funcs.len());
        for f in funcs {
            calls.push(FuncRows::open(f, row, ev)?);
        }
        let widths = funcs.iter().map(TableFunc::width).collect();
        Ok(SetExpansion { calls, widths })
    }

    /// The next step's values, or None when every call is done.
    pub fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Vec<Datum>>> {
        let mut out = Vec::with_capacity(self.calls.len());
        Ok(self.next_into(ev, &mut out)?.then_some(out))
    }

    /// The next step's values appended to `out` (true), or false with `out` unchanged when
    /// every call is done.
    pub fn next_into(&mut self, ev: &mut EvalCx<'_>, out: &mut Vec<Datum>) -> PgResult<bool> {
        ev.tick()?;
        let start = out.len();
        let mut any = false;
        for (c, &w) in self.calls.iter_mut().zip(&self.widths) {
            let got = match c.as_mut() {
                Some(rows) => rows.next_into(out)?,
                None => false,
            };
            if got {
                any = true;
            } else {
                *c = None;
                out.extend(std::iter::repeat_n(Datum::Null, w));
            }
        }
        if !any {
            out.truncate(start);
        }
        Ok(any)
    }
}

/// Set-returning functions in FROM: their values side by side, then the row number when
/// `WITH ORDINALITY`.
pub struct FunctionScan<'a> {
    funcs: &'a [TableFunc],
    ordinality: bool,
    state: Option<SetExpansion>,
    n: i64,
}

impl<'a> FunctionScan<'a> {
    pub fn new(funcs: &'a [TableFunc], ordinality: bool) -> Self {
        FunctionScan {
            funcs,
            ordinality,
            state: None,
            n: 0,
        }
    }
}

impl<'a> Node<'a> for FunctionScan<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        let mut row = Vec::new();
        Ok(self.next_into(ev, &mut row)?.then_some(row))
    }

    /// The values go straight into the consumer's buffer: a join or an aggregate over
    /// `generate_series` allocates no row per value.
    fn next_into(&mut self, ev: &mut EvalCx<'_>, out: &mut Row) -> PgResult<bool> {
        if self.state.is_none() {
            self.state = Some(SetExpansion::open(self.funcs, &[], ev)?);
        }
        let Some(st) = self.state.as_mut() else {
            return Ok(false);
        };
        if !st.next_into(ev, out)? {
            return Ok(false);
        }
        if self.ordinality {
            self.n += 1;
            out.push(Datum::Int8(self.n));
        }
        Ok(true)
    }
}
