//! A panic inside one statement ends that statement, not the session, the shard or the server.
//!
//! No client input should reach a panic; when a bug lets one through anyway, the panic is
//! caught at the statement's boundary (each protocol message the session handles) and turned
//! into an XX000 error. The session's ordinary error path then rolls back the implicit
//! transaction or marks the block failed, exactly as for any other error, so the session stays
//! usable.
//!
//! Why unwinding leaves the engine consistent: buffer latches and every other lock are guards
//! released on unwind (parking_lot locks do not poison), and a transaction's changes become
//! visible only through its commit, which the error path never reaches; a dropped
//! `Transaction` rolls back. The panic message still reaches the server log through the
//! default panic hook.

use keel_common::{PgError, PgResult};
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Runs `f`, turning a panic into an XX000 error.
pub(crate) fn guard<T>(f: impl FnOnce() -> PgResult<T>) -> PgResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| Err(panic_error(&*payload)))
}

/// Awaits `fut`, turning a panic during any of its polls into an XX000 error.
pub(crate) async fn guard_async<T>(fut: impl Future<Output = PgResult<T>>) -> PgResult<T> {
    CatchPanic { fut: Box::pin(fut) }.await
}

struct CatchPanic<F> {
    fut: Pin<Box<F>>,
}

impl<T, F: Future<Output = PgResult<T>>> Future for CatchPanic<F> {
    type Output = PgResult<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<PgResult<T>> {
        let fut = self.fut.as_mut();
        match catch_unwind(AssertUnwindSafe(|| fut.poll(cx))) {
            Ok(p) => p,
            Err(payload) => Poll::Ready(Err(panic_error(&*payload))),
        }
    }
}

fn panic_error(payload: &(dyn std::any::Any + Send)) -> PgError {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown cause".to_string());
    PgError::internal(format!("internal error: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_xx000() {
        let e = guard::<()>(|| panic!("boom {}", 1)).unwrap_err();
        assert_eq!(e.code, keel_common::sqlstate::INTERNAL_ERROR);
        assert_eq!(e.message, "internal error: boom 1");
        assert_eq!(guard(|| Ok(7)).unwrap(), 7);
    }

    #[test]
    fn a_panic_in_a_later_poll_becomes_xx000() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let e = rt
            .block_on(guard_async(async {
                tokio::task::yield_now().await;
                if true {
                    panic!("after a yield");
                }
                Ok(())
            }))
            .unwrap_err();
        assert_eq!(e.message, "internal error: after a yield");
    }
}
