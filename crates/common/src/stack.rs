//! Stack depth: PostgreSQL's `max_stack_depth` check (SQLSTATE 54001).
//!
//! Every recursive pass over a statement (bind, plan, evaluation, later PL/pgSQL and json)
//! calls [`check`] once per level. It compares how much of the current thread's stack is in
//! use with the session's `max_stack_depth`, so a statement nested too deeply fails alone,
//! with PostgreSQL's error, instead of overflowing the thread and aborting the process.
//!
//! How "in use" is measured: the thread's stack bounds come from `pthread_getattr_np` once per
//! thread (cached in a thread-local); the current position is the address of a local. Used =
//! top of the stack minus that address, which counts the runtime's own frames below the
//! statement, as PostgreSQL's count includes the backend's frames below the query.
//!
//! Two limits apply, whichever is hit first:
//! - the session's `max_stack_depth` ([`set_limit`], called when a statement starts on a
//!   thread; the value is per thread, so a task moved to another thread keeps a limit set
//!   there by its own last statement start, or the default);
//! - [`MARGIN`] bytes (half the stack on a thread smaller than twice that) must stay free
//!   below the check, whatever the setting says: recursion that is not checked (dropping or
//!   cloning a deep tree) runs within it. The SQL parser's descent does not: sqlparser grows
//!   its stack on the heap (keel_sql::parse).
//!
//! Session threads are created with [`SESSION_STACK_BYTES`] of stack (reserved address space;
//! the kernel backs only the pages touched).

use crate::{PgError, PgResult, sqlstate};
use std::cell::Cell;

/// Stack size of every thread that runs statements (the shard workers and the threads that
/// take over a shard during a long statement).
pub const SESSION_STACK_BYTES: usize = 64 << 20;

/// Stack kept free below every check, for recursion that does not check.
pub const MARGIN: usize = 4 << 20;

/// The largest `max_stack_depth` (kB) a session may set: the session stack less the margin.
pub const MAX_STACK_DEPTH_KB: i64 = ((SESSION_STACK_BYTES - MARGIN) / 1024) as i64;

/// PostgreSQL's default `max_stack_depth`, 2 MB.
const DEFAULT_LIMIT: usize = 2048 * 1024;

thread_local! {
    /// (lowest address, highest address) of this thread's stack; (0, 0) until looked up,
    /// (1, 0) when the platform could not tell.
    static BOUNDS: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    static LIMIT: Cell<usize> = const { Cell::new(DEFAULT_LIMIT) };
}

/// Sets this thread's `max_stack_depth`, in bytes.
pub fn set_limit(bytes: u64) {
    LIMIT.with(|l| l.set(bytes as usize));
}

/// The current call chain's position: the address of a local of this frame.
#[inline(always)]
fn position() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

fn bounds() -> (usize, usize) {
    BOUNDS.with(|b| {
        let cur = b.get();
        if cur != (0, 0) {
            return cur;
        }
        let found = thread_stack_bounds().unwrap_or((1, 0));
        b.set(found);
        found
    })
}

#[cfg(target_os = "linux")]
fn thread_stack_bounds() -> Option<(usize, usize)> {
    // SAFETY: pthread_getattr_np fills `attr` for the calling thread; it is destroyed after
    // the two reads, on every path where it was initialised.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let rc = libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        if rc != 0 || addr.is_null() || size == 0 {
            return None;
        }
        Some((addr as usize, addr as usize + size))
    }
}

#[cfg(not(target_os = "linux"))]
fn thread_stack_bounds() -> Option<(usize, usize)> {
    None
}

/// Bytes of this thread's stack in use at the caller (0 when the bounds are unknown).
pub fn used() -> usize {
    let (_, top) = bounds();
    top.saturating_sub(position())
}

/// Bytes left below the caller (usize::MAX when the bounds are unknown).
pub fn remaining() -> usize {
    let (low, top) = bounds();
    if top == 0 {
        return usize::MAX;
    }
    position().saturating_sub(low)
}

/// Fails with 54001 when the caller is deeper than `max_stack_depth` or too close to the end
/// of the thread's stack. Call it once per level of every recursive pass.
#[inline]
pub fn check() -> PgResult<()> {
    let (low, top) = bounds();
    if top == 0 {
        return Ok(());
    }
    let here = position();
    let limit = LIMIT.with(Cell::get);
    // A thread smaller than the session threads (a test's 2 MB) keeps half its stack free.
    let margin = MARGIN.min((top - low) / 2);
    if top.saturating_sub(here) > limit || here.saturating_sub(low) < margin {
        return Err(depth_exceeded());
    }
    Ok(())
}

/// PostgreSQL's error for a statement nested beyond `max_stack_depth`.
pub fn depth_exceeded() -> PgError {
    let kb = LIMIT.with(Cell::get) / 1024;
    PgError::new(
        sqlstate::STATEMENT_TOO_COMPLEX,
        "stack depth limit exceeded".to_string(),
    )
    .with_hint(format!(
        "Increase the configuration parameter \"max_stack_depth\" (currently {kb}kB), after ensuring the platform's stack depth limit is adequate."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recurse(n: usize) -> PgResult<usize> {
        check()?;
        let pad = std::hint::black_box([0u8; 512]);
        if n == 0 {
            return Ok(pad[0] as usize);
        }
        Ok(recurse(n - 1)? + pad[1] as usize)
    }

    #[test]
    fn deep_recursion_fails_with_54001_instead_of_overflowing() {
        let r = std::thread::Builder::new()
            .stack_size(SESSION_STACK_BYTES)
            .spawn(|| {
                set_limit(1 << 20);
                let shallow = recurse(100);
                let deep = recurse(1_000_000);
                (shallow, deep)
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(r.0.is_ok());
        let e = r.1.unwrap_err();
        assert_eq!(e.code, sqlstate::STATEMENT_TOO_COMPLEX);
        assert!(e.hint.as_deref().unwrap().contains("(currently 1024kB)"));
    }

    #[test]
    fn the_margin_holds_whatever_the_setting() {
        let r = std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn(|| {
                set_limit(1 << 40);
                recurse(1_000_000)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(r.unwrap_err().code, sqlstate::STATEMENT_TOO_COMPLEX);
    }

    #[test]
    fn used_grows_with_depth() {
        let outer = used();
        fn inner() -> usize {
            let pad = std::hint::black_box([0u8; 4096]);
            used() + pad[0] as usize
        }
        assert!(inner() > outer);
        assert!(remaining() > 0);
    }
}
