//! Set-returning functions: calls that produce rows rather than a value. In FROM they are a
//! relation of their own (a function scan); in a select list they expand each input row, all
//! of the list's calls advancing together until the longest is done (PostgreSQL 10's
//! ProjectSet rule: the shorter ones give NULL meanwhile).

use crate::expr::Expr;
use keel_types::TypeId;

/// Which set-returning function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetFunc {
    /// `generate_series(start, stop [, step])` over integers or timestamps.
    Series,
    /// `unnest(anyarray)`: the elements in storage order, whatever the dimensions.
    Unnest,
    /// `generate_subscripts(anyarray, dim [, reverse])`.
    Subscripts,
    /// `regexp_matches(string, pattern [, flags])`: one text[] per match.
    RegexpMatches,
    /// `regexp_split_to_table(string, pattern [, flags])`.
    RegexpSplit,
    /// `string_to_table(string, delimiter [, null_string])`: string_to_array's pieces as
    /// rows. Not strict in the delimiter (NULL splits into characters) nor the null string.
    StringToTable,
    /// A user-defined function in a procedural language (PL/pgSQL) in FROM: its rows come
    /// from the language's handler ([`TableFunc::user`]).
    User,
}

impl SetFunc {
    pub fn by_name(name: &str) -> Option<SetFunc> {
        Some(match name {
            "generate_series" => SetFunc::Series,
            "unnest" => SetFunc::Unnest,
            "generate_subscripts" => SetFunc::Subscripts,
            "regexp_matches" => SetFunc::RegexpMatches,
            "regexp_split_to_table" => SetFunc::RegexpSplit,
            "string_to_table" => SetFunc::StringToTable,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SetFunc::Series => "generate_series",
            SetFunc::Unnest => "unnest",
            SetFunc::Subscripts => "generate_subscripts",
            SetFunc::RegexpMatches => "regexp_matches",
            SetFunc::RegexpSplit => "regexp_split_to_table",
            SetFunc::StringToTable => "string_to_table",
            SetFunc::User => "function",
        }
    }
}

/// One bound call of a set-returning function with one output column of type `ty`. Its
/// arguments are coerced to the function's parameter types; a NULL argument gives no rows
/// (the functions are strict).
#[derive(Clone)]
pub struct TableFunc {
    pub func: SetFunc,
    pub args: Vec<Expr>,
    /// The (first) output column's type.
    pub ty: TypeId,
    /// `SetFunc::User`: the function called, and how many columns each of its rows has.
    pub user: Option<(std::sync::Arc<crate::expr::UserCall>, usize)>,
}

impl TableFunc {
    /// A built-in set-returning call: one output column.
    pub fn builtin(func: SetFunc, args: Vec<Expr>, ty: TypeId) -> TableFunc {
        TableFunc {
            func,
            args,
            ty,
            user: None,
        }
    }

    /// Columns each row of the call has.
    pub fn width(&self) -> usize {
        self.user.as_ref().map_or(1, |(_, w)| *w)
    }

    /// The name EXPLAIN shows.
    pub fn display_name(&self) -> &str {
        match &self.user {
            Some((c, _)) => &c.def.proname,
            None => self.func.name(),
        }
    }
}

/// The set-returning calls of a select list. The list's expressions read the value each call
/// produced for the current output row through `Special::SetValue(k)`: the projection appends
/// the calls' values to the input row, last call first, so `k` counts from the row's end.
#[derive(Clone)]
pub struct ProjectSet {
    pub funcs: Vec<TableFunc>,
}
