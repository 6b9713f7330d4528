//! tokio-postgres helpers for tests that need several concurrent sessions: connect with a
//! deadline, run statements, read SQLSTATEs, and check whether a statement is blocked.
//!
//! Every await that talks to the server goes through a timeout, so a server that stops
//! answering fails one test instead of hanging it.

use std::future::Future;
use std::time::Duration;
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

/// Deadline for one statement that is expected to finish promptly.
pub const STMT_TIMEOUT: Duration = Duration::from_secs(30);

/// A small multi-thread tokio runtime for one test (spawned connection tasks keep running
/// while the test awaits something else).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"))
}

/// A connected session; its connection task runs on the runtime until the client is dropped.
pub async fn connect(conn_str: &str) -> Client {
    let fut = tokio_postgres::connect(conn_str, NoTls);
    let (client, conn) = match tokio::time::timeout(STMT_TIMEOUT, fut).await {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => panic!("connect {conn_str}: {e:?}"),
        Err(_) => panic!("connect {conn_str}: timed out"),
    };
    tokio::spawn(async move {
        let _ = conn.await;
    });
    client
}

/// Awaits `fut` with [`STMT_TIMEOUT`], naming `what` if it does not finish.
pub async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    match tokio::time::timeout(STMT_TIMEOUT, fut).await {
        Ok(v) => v,
        Err(_) => panic!("{what}: no answer within {STMT_TIMEOUT:?}"),
    }
}

/// Runs `sql` (simple protocol, may hold several statements); panics on error.
pub async fn exec(c: &Client, sql: &str) {
    if let Err(e) = within(sql, c.batch_execute(sql)).await {
        panic!("{sql}: {e:?}");
    }
}

/// Rows affected by one statement (simple protocol); panics on error.
pub async fn affected(c: &Client, sql: &str) -> u64 {
    match try_affected(c, sql).await {
        Ok(n) => n,
        Err(e) => panic!("{sql}: {e:?}"),
    }
}

/// Rows affected by one statement (simple protocol), or the error.
pub async fn try_affected(c: &Client, sql: &str) -> Result<u64, tokio_postgres::Error> {
    let msgs = within(sql, c.simple_query(sql)).await?;
    Ok(msgs
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::CommandComplete(n) => Some(*n),
            _ => None,
        })
        .sum())
}

/// The rows of `sql` in text form (simple protocol), NULL as "NULL"; panics on error.
pub async fn rows(c: &Client, sql: &str) -> Vec<Vec<String>> {
    let msgs = match within(sql, c.simple_query(sql)).await {
        Ok(m) => m,
        Err(e) => panic!("{sql}: {e:?}"),
    };
    msgs.iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(
                (0..r.len())
                    .map(|i| r.get(i).unwrap_or("NULL").to_string())
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

/// The single value of a one-row, one-column query, as text.
pub async fn value(c: &Client, sql: &str) -> String {
    let r = rows(c, sql).await;
    match r.as_slice() {
        [row] if row.len() == 1 => row[0].clone(),
        _ => panic!("{sql}: expected one value, got {r:?}"),
    }
}

/// The SQLSTATE of a failed statement ("" if the error carries none, e.g. a closed connection).
pub fn sqlstate(e: &tokio_postgres::Error) -> String {
    e.code().map(|c| c.code().to_string()).unwrap_or_default()
}

/// Asserts that `fut` is still pending after `wait` (e.g. blocked on a row lock), and returns
/// it so the caller can keep awaiting it.
pub async fn assert_blocked<F: Future + Unpin>(what: &str, mut fut: F, wait: Duration) -> F {
    if tokio::time::timeout(wait, &mut fut).await.is_ok() {
        panic!("{what}: finished while it should have been blocked");
    }
    fut
}

/// Runs `scenario` (given a connection string) against keel (or the `KEEL_E2E_TARGET`) and
/// then against a PostgreSQL 15, both started with `settings`: the same assertions hold on
/// both, so what is asserted is PostgreSQL's behaviour.
pub fn on_both<F, Fut>(settings: &[(&str, &str)], scenario: F)
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = ()>,
{
    let rt = runtime();
    for srv in [
        crate::Server::start(settings),
        crate::Server::oracle(settings),
    ] {
        eprintln!("scenario on {:?}", srv.engine);
        rt.block_on(scenario(srv.conn_str()));
    }
}

/// Two statements that wait for each other: awaits both until deadlock detection fails one
/// with 40P01 (within 5 s) and returns whether that was `a`. The other is left pending (it
/// goes on once the victim's transaction ends) unless it already finished, which it may do
/// first: the victim's abort can free it before the victim's error is read.
pub async fn deadlock_victim<A, B>(a: &mut A, b: &mut B) -> (bool, bool)
where
    A: Future<Output = Result<u64, tokio_postgres::Error>> + Unpin,
    B: Future<Output = Result<u64, tokio_postgres::Error>> + Unpin,
{
    let first = tokio::time::timeout(Duration::from_secs(5), async {
        tokio::select! {
            r = &mut *a => (true, r),
            r = &mut *b => (false, r),
        }
    })
    .await;
    let (a_first, r) = first.unwrap_or_else(|_| panic!("deadlock not detected within 5 s"));
    match r {
        Err(e) => {
            assert_eq!(sqlstate(&e), "40P01", "{e:?}");
            (a_first, false)
        }
        Ok(_) => {
            let other = if a_first {
                within("the victim", &mut *b).await
            } else {
                within("the victim", &mut *a).await
            };
            let e = other.expect_err("both deadlocked statements finished normally");
            assert_eq!(sqlstate(&e), "40P01", "{e:?}");
            (!a_first, true)
        }
    }
}

/// Runs a deadlock between `a`'s pending statement `la` and `b`'s `lb` to its end: finds the
/// victim ([`deadlock_victim`]), rolls its transaction back, lets the survivor's statement
/// finish and commits it. Returns whether the victim was `a`.
pub async fn settle_deadlock<A, B>(a: &Client, b: &Client, mut la: A, mut lb: B) -> bool
where
    A: Future<Output = Result<u64, tokio_postgres::Error>> + Unpin,
    B: Future<Output = Result<u64, tokio_postgres::Error>> + Unpin,
{
    let (victim_is_a, survivor_done) = deadlock_victim(&mut la, &mut lb).await;
    let (loser, winner) = if victim_is_a { (a, b) } else { (b, a) };
    exec(loser, "rollback").await;
    if !survivor_done {
        let rest = if victim_is_a {
            within("the survivor", &mut lb).await
        } else {
            within("the survivor", &mut la).await
        };
        rest.unwrap_or_else(|e| panic!("survivor: {e:?}"));
    }
    exec(winner, "commit").await;
    victim_is_a
}
