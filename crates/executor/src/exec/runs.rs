//! A stable in-memory sort that checks for interrupts while it compares: one `sort_by` call
//! over millions of rows runs for seconds with no way to stop it, so the input is sorted in
//! runs of [`RUN`] rows, checking between runs, and the runs are merged pairwise, ticking per
//! row moved. When interrupted, what it holds is freed off the thread ([`discard`]).

use super::discard::discard;
use crate::eval::EvalCx;
use keel_common::PgResult;
use std::cmp::Ordering;

/// Rows per sorted run: sorting one takes a few milliseconds.
const RUN: usize = 16 * 1024;

/// Sorts `v` stably by `cmp` (equal elements keep their order), as `slice::sort_by` does.
/// When interrupted, `v` keeps the rows not yet taken from it, for the caller to free.
pub(crate) fn sort_checked<T: Send + 'static>(
    v: &mut Vec<T>,
    cmp: impl Fn(&T, &T) -> Ordering,
    ev: &mut EvalCx<'_>,
) -> PgResult<()> {
    if v.len() <= RUN {
        ev.tick_n(v.len() as u32)?;
        v.sort_by(&cmp);
        return Ok(());
    }
    let mut runs: Vec<Vec<T>> = Vec::with_capacity(v.len().div_ceil(RUN));
    // Splitting copies every row once: checked too.
    while !v.is_empty() {
        if let Err(e) = ev.tick_n(RUN as u32) {
            discard(usize::MAX, runs);
            return Err(e);
        }
        let tail = v.split_off(v.len().saturating_sub(RUN));
        runs.push(tail);
    }
    *v = Vec::new();
    // split_off took the runs from the end.
    runs.reverse();
    let sorted = runs.iter_mut().try_for_each(|run| {
        ev.tick_n(RUN as u32)?;
        run.sort_by(&cmp);
        Ok(())
    });
    if let Err(e) = sorted {
        discard(runs.len() * RUN, runs);
        return Err(e);
    }
    while runs.len() > 1 {
        let mut merged = Vec::with_capacity(runs.len().div_ceil(2));
        let mut it = runs.into_iter();
        while let Some(a) = it.next() {
            match it.next() {
                Some(b) => match merge(a, b, &cmp, ev) {
                    Ok(m) => merged.push(m),
                    Err(e) => {
                        discard(usize::MAX, (merged, it));
                        return Err(e);
                    }
                },
                None => merged.push(a),
            }
        }
        runs = merged;
    }
    *v = runs.pop().unwrap_or_default();
    Ok(())
}

/// Merges two sorted runs; on ties the element of `a` (earlier in the input) comes first.
fn merge<T: Send + 'static>(
    a: Vec<T>,
    b: Vec<T>,
    cmp: &impl Fn(&T, &T) -> Ordering,
    ev: &mut EvalCx<'_>,
) -> PgResult<Vec<T>> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    loop {
        if let Err(e) = ev.tick() {
            discard(out.len() + a.len() + b.len(), (out, a, b));
            return Err(e);
        }
        let (Some(x), Some(y)) = (a.peek(), b.peek()) else {
            break;
        };
        let next = if cmp(y, x) == Ordering::Less {
            b.next()
        } else {
            a.next()
        };
        out.extend(next);
    }
    // What is left of one run only moves.
    out.extend(a);
    out.extend(b);
    Ok(out)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};

    /// Runs `f` with an evaluation context whose cancel flag is raised at its `cancel_at`-th
    /// reading (never when 0).
    pub(crate) fn with_cx(cancel_at: u32, f: impl FnOnce(&mut EvalCx<'_>)) {
        let mut funcs = crate::eval::SessionFuncs::new(1);
        let settings = keel_common::Settings::default();
        // One directory per context: tests run at once, and an engine locks its directory.
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, AtomicOrdering::Relaxed);
        let dir = std::env::temp_dir().join(format!("keel-runs-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let engine = keel_access::Engine::open(&dir, &settings).unwrap();
        let reads = AtomicU32::new(0);
        let cancel = || reads.fetch_add(1, AtomicOrdering::Relaxed) + 1 == cancel_at;
        f(&mut EvalCx {
            params: &[],
            fctx: &mut funcs,
            engine: &engine,
            settings: &settings,
            pid: 0,
            cancel: &cancel,
            txn: None,
            outer: &[],
            subq: Default::default(),
            subplans: Default::default(),
            deadline: None,
            ticker: Default::default(),
            blocking: crate::eval::run_inline,
            mem: crate::exec::mem::StatementMem::unlimited(),
            transition: &[],
        });
        drop(engine);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Keys with many duplicates; the second field records the input order.
    fn input() -> Vec<(u32, usize)> {
        (0..RUN * 5 + 123)
            .map(|i| ((i as u32).wrapping_mul(2_654_435_761) % 1000, i))
            .collect()
    }

    #[test]
    fn sorts_stably_across_runs() {
        with_cx(0, |ev| {
            let mut v = input();
            let mut expected = v.clone();
            expected.sort_by_key(|x| x.0);
            sort_checked(&mut v, |x, y| x.0.cmp(&y.0), ev).unwrap();
            assert_eq!(v, expected);
        });
    }

    #[test]
    fn a_cancel_stops_the_sort_while_it_splits_sorts_or_merges() {
        // 6 runs: 6 checks while splitting, 6 while sorting runs, then the merges.
        for cancel_at in [3, 9, 20, 40] {
            with_cx(cancel_at, |ev| {
                let mut v = input();
                let e = sort_checked(&mut v, |x, y| x.0.cmp(&y.0), ev).unwrap_err();
                assert_eq!(e.code, keel_common::sqlstate::QUERY_CANCELED, "{cancel_at}");
            });
        }
    }
}
