//! Interrupt checks (PostgreSQL's CHECK_FOR_INTERRUPTS): statement_timeout and the session's
//! cancel flag, cheap enough to call on every row of every loop.
//!
//! Reading the clock and the flag costs tens of nanoseconds, as much as a cheap row. So a loop
//! calls [`EvalCx::tick`], which only counts down a [`Ticker`]; every `stride` ticks the clock
//! and the flag are read. The stride adapts to the work: it doubles while checks come less
//! than [`TARGET`] apart and shrinks in proportion when one came later, so checks come
//! roughly every millisecond however expensive one tick is. A loop whose iterations differ
//! widely in cost (a run of a sort against one row) weighs them with [`EvalCx::tick_n`].
//!
//! Bound on the delay between the deadline (or the cancel) and the error: one interval of
//! [`TARGET`] while the cost per tick is steady; when ticks suddenly become dearer, at most
//! [`MAX_STRIDE`] ticks at the new cost before the stride shrinks.

use crate::eval::{EvalCx, statement_timeout};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::func::FuncContext;
use std::time::{Duration, Instant};

/// How much work to do between two reads of the clock and the cancel flag.
const TARGET: Duration = Duration::from_millis(1);

/// The longest stride. A check costs ~60 ns (two clock reads and an atomic load), so at this
/// stride it adds under 0.3 % to a loop of 5 ns iterations.
const MAX_STRIDE: u32 = 4096;

/// The countdown between interrupt checks (see the module doc). Copied into a nested
/// evaluation context for a subquery and back out of it, so a subquery run per row counts
/// against the same stride.
#[derive(Clone, Copy, Debug)]
pub struct Ticker {
    left: u32,
    stride: u32,
    /// When the last check ran (None before the first).
    last: Option<Instant>,
}

/// The first stride: a statement that ticks fewer times (a point lookup) never reads the
/// clock for it.
const FIRST_STRIDE: u32 = 64;

impl Default for Ticker {
    fn default() -> Self {
        Ticker {
            left: FIRST_STRIDE,
            stride: FIRST_STRIDE,
            last: None,
        }
    }
}

impl Ticker {
    /// Counts `n` units of work; true when a check is due.
    #[inline]
    fn count(&mut self, n: u32) -> bool {
        self.left = self.left.saturating_sub(n);
        self.left == 0
    }

    /// Starts the next stride, sized from how long the last one took; returns the time now.
    fn restart(&mut self) -> Instant {
        let now = Instant::now();
        self.restart_at(now);
        now
    }

    fn restart_at(&mut self, now: Instant) {
        if let Some(last) = self.last {
            let spent = now.saturating_duration_since(last);
            self.stride = if spent < TARGET / 2 {
                self.stride.saturating_mul(2).min(MAX_STRIDE)
            } else if spent > TARGET {
                let scaled = u128::from(self.stride) * TARGET.as_nanos() / spent.as_nanos();
                scaled.max(1) as u32
            } else {
                self.stride
            };
        }
        self.last = Some(now);
        self.left = self.stride;
    }
}

/// 57014 if `deadline` has passed at `now` or `cancel` reports a cancel request (or a client
/// that has gone).
pub fn check(
    cancel: &(dyn Fn() -> bool + Sync),
    deadline: Option<Instant>,
    now: Instant,
) -> PgResult<()> {
    if deadline.is_some_and(|d| now >= d) {
        return Err(statement_timeout());
    }
    if cancel() {
        return Err(PgError::new(
            sqlstate::QUERY_CANCELED,
            "canceling statement due to user request",
        ));
    }
    Ok(())
}

impl EvalCx<'_> {
    /// One unit of work done: checks for interrupts when the stride is used up. Call it on
    /// every iteration of any loop whose length the data decides.
    #[inline]
    pub fn tick(&mut self) -> PgResult<()> {
        self.tick_n(1)
    }

    /// `n` units of work done (e.g. one sorted run of `n` rows).
    #[inline]
    pub fn tick_n(&mut self, n: u32) -> PgResult<()> {
        if self.ticker.count(n) {
            return self.ticked();
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn ticked(&mut self) -> PgResult<()> {
        let now = self.ticker.restart();
        check(self.cancel, self.deadline, now)
    }

    /// Checks for interrupts now (before or after something long that does not tick).
    pub fn check_cancel(&self) -> PgResult<()> {
        check(self.cancel, self.deadline, Instant::now())
    }
}

/// The interrupt check of a statement's work outside an evaluation context (DDL, VACUUM,
/// COPY): the session's cancel flag and statement_timeout.
pub struct Interrupt<'a> {
    pub cancel: &'a (dyn Fn() -> bool + Sync),
    pub deadline: Option<Instant>,
}

fn never_cancelled() -> bool {
    false
}

impl Interrupt<'_> {
    /// For work that cannot run long (indexes of a table created by the same statement).
    pub const NONE: Interrupt<'static> = Interrupt {
        cancel: &never_cancelled,
        deadline: None,
    };

    /// 57014 if the statement was cancelled or has run past statement_timeout. Reads the
    /// clock: call it per page, or per row of work that costs a microsecond or more.
    pub fn check(&self) -> PgResult<()> {
        check(self.cancel, self.deadline, Instant::now())
    }
}

/// The context a function is called with: the session's, plus the interrupt check for
/// functions that may run long on one call (`FuncContext::check_interrupts`).
pub(crate) struct Interruptible<'a> {
    pub inner: &'a mut dyn FuncContext,
    pub cancel: &'a (dyn Fn() -> bool + Sync),
    pub deadline: Option<Instant>,
}

impl FuncContext for Interruptible<'_> {
    fn transaction_timestamp(&self) -> i64 {
        self.inner.transaction_timestamp()
    }
    fn statement_timestamp(&self) -> i64 {
        self.inner.statement_timestamp()
    }
    fn random(&mut self) -> f64 {
        self.inner.random()
    }
    fn seq_last(&self, seq: u32) -> Option<i64> {
        self.inner.seq_last(seq)
    }
    fn set_seq_last(&mut self, seq: u32, value: i64) {
        self.inner.set_seq_last(seq, value)
    }
    fn check_interrupts(&mut self) -> PgResult<()> {
        check(self.cancel, self.deadline, Instant::now())
    }
    fn cursors(&mut self) -> Option<&mut (dyn std::any::Any + Send)> {
        self.inner.cursors()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `ticks` ticks costing `cost` each on a simulated clock starting at `clock`;
    /// returns the longest time between two checks.
    fn run(t: &mut Ticker, clock: &mut Instant, cost: Duration, ticks: u32) -> Duration {
        let mut longest = Duration::ZERO;
        let mut last_check = *clock;
        for _ in 0..ticks {
            *clock += cost;
            if t.count(1) {
                t.restart_at(*clock);
                longest = longest.max(*clock - last_check);
                last_check = *clock;
            }
        }
        longest
    }

    #[test]
    fn cheap_ticks_grow_the_stride_to_its_limit() {
        let (mut t, mut clock) = (Ticker::default(), Instant::now());
        run(&mut t, &mut clock, Duration::from_nanos(5), 1_000_000);
        assert_eq!(t.stride, MAX_STRIDE);
    }

    #[test]
    fn dearer_ticks_shrink_the_stride_after_one_stride() {
        let (mut t, mut clock) = (Ticker::default(), Instant::now());
        run(&mut t, &mut clock, Duration::from_nanos(5), 1_000_000);
        // Ticks become 20 µs each: the stride in progress runs out at the new cost...
        let first = run(&mut t, &mut clock, Duration::from_micros(20), MAX_STRIDE);
        assert!(first <= Duration::from_micros(20) * MAX_STRIDE, "{first:?}");
        // ... and from then on checks come about every TARGET.
        let gap = run(&mut t, &mut clock, Duration::from_micros(20), 10_000);
        assert!(gap <= TARGET * 2, "{gap:?} between checks");
        // Ticks dearer than TARGET: every tick checks.
        run(&mut t, &mut clock, Duration::from_millis(3), 100);
        assert_eq!(t.stride, 1);
    }

    #[test]
    fn weighted_ticks_count_as_that_many() {
        let mut t = Ticker {
            left: 100,
            stride: 100,
            last: None,
        };
        assert!(!t.count(99));
        assert!(t.count(5));
    }
}
