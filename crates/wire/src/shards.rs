//! Session shards: one single-worker runtime per core, each with its own event loop.
//!
//! With one work-stealing runtime, one worker waits in epoll while the others wait on a
//! condition variable. A client's request then wakes the polling worker, which hands the task
//! on, and so wakes a second thread, often on the other core. That cost two wake-ups per
//! request on a VM where a wake-up is an inter-processor interrupt (pgbench select-only at 4
//! clients: 0.19 futex calls and 5–8 % idle CPU per request). Here a connection belongs to one
//! shard for life. Its socket is registered with that shard's epoll, so a request wakes exactly
//! the thread that runs the session, and nothing is handed on.
//!
//! Each shard is a multi-thread runtime with one worker rather than a current-thread runtime,
//! for two reasons:
//! - a task woken by another task on the same shard (a row lock handed over) runs next,
//!   from the LIFO slot, instead of at the back of the queue;
//! - `block_in_place` works, so a long scan hands the shard's other sessions to a fresh
//!   worker instead of stalling them.
//!
//! Connections go to the shard with the fewest live sessions. A shard with nothing to run
//! spins briefly before it sleeps when the machine has a core to spare (spin.rs).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::runtime::{Builder, Handle, Runtime};

use crate::spin::{Governor, IdleSpin};

pub(crate) struct Shards {
    shards: Vec<Shard>,
}

struct Shard {
    spin: Arc<IdleSpin>,
    /// None once stopped. Dropping a runtime waits for its threads, which tokio forbids in
    /// async code, so `Drop` stops without waiting (`shutdown_background`).
    runtime: Option<Runtime>,
    sessions: Arc<AtomicUsize>,
}

/// Counts a session against its shard until dropped.
pub(crate) struct Placement {
    sessions: Arc<AtomicUsize>,
    spin: Arc<IdleSpin>,
}

impl Placement {
    /// Lets the session's socket end its shard's idle spin.
    pub(crate) fn watch(&self, socket: std::os::fd::RawFd) {
        self.spin.watch(socket);
    }
}

impl Drop for Placement {
    fn drop(&mut self) {
        self.sessions.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Shards {
    /// `n` shards, each spinning for up to `idle_spin` before it sleeps (see spin.rs).
    pub(crate) fn new(n: usize, idle_spin: Duration) -> std::io::Result<Shards> {
        let governor = Arc::new(Governor::new());
        let shards = (0..n)
            .map(|i| {
                let spin = Arc::new(IdleSpin::new(idle_spin)?);
                let runtime = shard_runtime(i, spin.clone(), governor.clone())?;
                Ok(Shard {
                    spin,
                    runtime: Some(runtime),
                    sessions: Arc::default(),
                })
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(Shards { shards })
    }

    /// The least loaded shard, with the new session counted against it.
    pub(crate) fn place(&self) -> (Handle, Placement) {
        let (shard, runtime) = self
            .shards
            .iter()
            .filter_map(|s| Some((s, s.runtime.as_ref()?)))
            .min_by_key(|(s, _)| s.sessions.load(Ordering::Relaxed))
            .expect("shards run until stopped");
        shard.sessions.fetch_add(1, Ordering::Relaxed);
        (
            runtime.handle().clone(),
            Placement {
                sessions: shard.sessions.clone(),
                spin: shard.spin.clone(),
            },
        )
    }

    /// Stops the shards: their sessions' tasks are dropped, and the worker threads are waited
    /// for up to `wait` (a statement running synchronously ends its thread only when it
    /// returns). Blocks: call it from a blocking thread.
    pub(crate) fn stop(mut self, wait: std::time::Duration) {
        let deadline = std::time::Instant::now() + wait;
        for s in &mut self.shards {
            if let Some(rt) = s.runtime.take() {
                rt.shutdown_timeout(deadline.saturating_duration_since(std::time::Instant::now()));
            }
        }
    }
}

/// One shard's runtime, its park hooks spinning with `spin`.
fn shard_runtime(
    i: usize,
    spin: Arc<IdleSpin>,
    governor: Arc<Governor>,
) -> std::io::Result<Runtime> {
    let unpark = spin.clone();
    Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name(format!("keel-shard-{i}"))
        // Statements run on these threads, and on the ones `block_in_place` starts when a
        // long statement takes its worker over (the runtime's blocking threads get the same
        // size): deep statements fail with 54001 inside this stack (keel_common::stack).
        .thread_stack_size(keel_common::stack::SESSION_STACK_BYTES)
        .on_thread_park(move || {
            // The hooks run on the worker, inside the runtime's context. (Keeping the handle
            // in the hook instead would be a cycle: the handle owns its hooks.) Looked up at
            // the first poll of a spin, so a park that does not spin pays nothing.
            let metrics = std::cell::OnceCell::new();
            spin.before_park(&governor, || {
                metrics
                    .get_or_init(|| Handle::try_current().ok().map(|h| h.metrics()))
                    .as_ref()
                    .is_some_and(|m| m.global_queue_depth() > 0)
            })
        })
        .on_thread_unpark(move || unpark.after_unpark())
        .enable_all()
        .build()
}

impl Drop for Shards {
    fn drop(&mut self) {
        for s in &mut self.shards {
            if let Some(rt) = s.runtime.take() {
                rt.shutdown_background();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_go_to_the_least_loaded_shard() {
        let shards = Shards::new(2, Duration::ZERO).unwrap();
        let (_, a) = shards.place();
        let (_, b) = shards.place();
        assert!(!Arc::ptr_eq(&a.sessions, &b.sessions));
        drop(a);
        let (_, c) = shards.place();
        assert!(!Arc::ptr_eq(&b.sessions, &c.sessions));
        let (h, _d) = shards.place();
        assert_eq!(h.block_on(async { 7 }), 7);
        drop((b, c));
        shards.stop(std::time::Duration::from_secs(5));
    }

    #[test]
    fn a_task_woken_from_another_thread_ends_the_spin() {
        let spin = Arc::new(IdleSpin::new(Duration::from_millis(400)).unwrap());
        let rt = shard_runtime(0, spin.clone(), Arc::new(Governor::always())).unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<std::time::Instant>();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        rt.spawn(async move {
            let sent = rx.await.unwrap();
            done_tx.send(sent.elapsed()).unwrap();
        });
        // The worker has nothing to run now: it spins (armed from the start).
        std::thread::sleep(Duration::from_millis(50));
        tx.send(std::time::Instant::now()).unwrap();
        let latency = done_rx.recv().unwrap();
        // Had the spin missed the hand-over, it would have run out (and disarmed) first.
        assert!(
            latency < Duration::from_millis(200),
            "woken after {latency:?}"
        );
        assert!(spin.armed());
    }
}
