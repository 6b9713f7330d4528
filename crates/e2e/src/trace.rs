//! Isolation scripts as traces: several sessions run their statements in a given order, and
//! the trace records what each returned (rows, row counts, SQLSTATEs), which statement
//! blocked and when it went on, and the tables at the end. Running the same script on keel
//! and on PostgreSQL 15 and comparing the traces asserts PostgreSQL's behaviour without
//! writing it down by hand (PostgreSQL's own isolation tester works the same way).

use crate::client::{STMT_TIMEOUT, connect, exec, within};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio_postgres::{Client, SimpleQueryMessage};

/// How long a statement must stay pending to count as blocked.
pub const BLOCKED: Duration = Duration::from_millis(500);

/// One step: (session 1..=n, statement).
pub type Step<'a> = (usize, &'a str);

type Pending = Pin<Box<dyn Future<Output = String> + Send>>;

/// A statement's outcome as the trace records it: its rows, its row count, or its SQLSTATE.
pub fn outcome(r: Result<Vec<SimpleQueryMessage>, tokio_postgres::Error>) -> String {
    match r {
        Err(e) => format!("ERROR {}", e.code().map(|c| c.code()).unwrap_or("(none)")),
        Ok(msgs) => {
            let mut rows = Vec::new();
            let mut done = Vec::new();
            for m in &msgs {
                match m {
                    SimpleQueryMessage::Row(r) => rows.push(
                        (0..r.len())
                            .map(|i| r.get(i).unwrap_or("NULL"))
                            .collect::<Vec<_>>()
                            .join(","),
                    ),
                    SimpleQueryMessage::CommandComplete(n) => done.push(*n),
                    _ => {}
                }
            }
            if rows.is_empty() {
                format!("ok {done:?}")
            } else {
                format!("rows [{}]", rows.join("; "))
            }
        }
    }
}

fn send(c: &Arc<Client>, sql: &str) -> Pending {
    let (c, sql) = (c.clone(), sql.to_string());
    Box::pin(async move { outcome(c.simple_query(&sql).await) })
}

/// Runs `steps` on the server at `conn`: `setup` first (one connection, its own
/// transaction), then each session begins a transaction with `begin`, then the steps in
/// order; `check` (a query) closes the trace. A step for a session whose last statement is
/// still blocked ends the trace as an invalid order (PostgreSQL's isolation tester refuses it
/// too), and the sessions are disconnected.
pub async fn trace(
    conn: &str,
    setup: &str,
    begin: &str,
    steps: &[Step<'_>],
    check: &str,
) -> Vec<String> {
    let admin = connect(conn).await;
    exec(&admin, setup).await;
    let n = steps.iter().map(|s| s.0).max().unwrap_or(0);
    let mut sessions = Vec::new();
    for _ in 0..n {
        let c = Arc::new(connect(conn).await);
        for sql in begin.split("; ") {
            exec(&c, sql).await;
        }
        sessions.push(c);
    }
    let mut pending: Vec<Option<(String, Pending)>> = (0..n).map(|_| None).collect();
    let mut out = Vec::new();
    let mut invalid = false;
    for &(t, sql) in steps {
        let i = t - 1;
        if let Some((what, fut)) = pending[i].as_mut() {
            match tokio::time::timeout(BLOCKED * 4, fut).await {
                Ok(r) => out.push(format!("T{t} {what} -> finally {r}")),
                Err(_) => {
                    out.push(format!("T{t} {sql}: invalid order, T{t} is blocked"));
                    invalid = true;
                    break;
                }
            }
            pending[i] = None;
        }
        let mut fut = send(&sessions[i], sql);
        match tokio::time::timeout(BLOCKED, &mut fut).await {
            Ok(r) => out.push(format!("T{t} {sql} -> {r}")),
            Err(_) => {
                out.push(format!("T{t} {sql} -> blocked"));
                pending[i] = Some((sql.to_string(), fut));
            }
        }
        // What this statement let go on.
        for (j, p) in pending.iter_mut().enumerate() {
            if j == i {
                continue;
            }
            if let Some((what, fut)) = p
                && let Ok(r) = tokio::time::timeout(BLOCKED, fut).await
            {
                out.push(format!("T{} {what} -> then {r}", j + 1));
                *p = None;
            }
        }
    }
    if invalid {
        drop(pending);
        drop(sessions);
        // The sessions' transactions end as the server notices the disconnects.
        tokio::time::sleep(BLOCKED).await;
    } else {
        for (j, p) in pending.iter_mut().enumerate() {
            if let Some((what, fut)) = p.take() {
                let r = tokio::time::timeout(STMT_TIMEOUT, fut).await;
                out.push(format!("T{} {what} -> at the end {r:?}", j + 1));
            }
        }
        for c in &sessions {
            exec(c, "rollback").await;
        }
    }
    let end = outcome(within("final state", admin.simple_query(check)).await);
    out.push(format!("final {end}"));
    out
}

/// Every interleaving of the sessions' step lists that keeps each session's own order.
pub fn interleavings<'a>(sessions: &[&[&'a str]]) -> Vec<Vec<Step<'a>>> {
    fn go<'a>(
        sessions: &[&[&'a str]],
        next: &mut Vec<usize>,
        cur: &mut Vec<Step<'a>>,
        out: &mut Vec<Vec<Step<'a>>>,
    ) {
        let mut done = true;
        for s in 0..sessions.len() {
            if next[s] < sessions[s].len() {
                done = false;
                cur.push((s + 1, sessions[s][next[s]]));
                next[s] += 1;
                go(sessions, next, cur, out);
                next[s] -= 1;
                cur.pop();
            }
        }
        if done {
            out.push(cur.clone());
        }
    }
    let mut out = Vec::new();
    go(
        sessions,
        &mut vec![0; sessions.len()],
        &mut Vec::new(),
        &mut out,
    );
    out
}
