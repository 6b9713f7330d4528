//! PostgreSQL `interval`: months, days and microseconds kept apart, as PostgreSQL does.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Interval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}
