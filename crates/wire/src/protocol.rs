//! One connection's life: startup packet, authentication, then the query loop.

use crate::backend::{Backend, BackendFactory, ExecuteOutcome, StartupInfo};
use crate::codec::{self, FrontendMessage, StartupPacket};
use crate::conn::{Conn, ReadError, Transport};
use crate::scram::{self, Exchange};
use crate::server::{PendingStartup, Shared, Slot};
use bytes::Bytes;
use keel_common::{PgError, Severity, sqlstate};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

const AUTH_OK: i32 = 0;
const AUTH_SASL: i32 = 10;
const AUTH_SASL_CONTINUE: i32 = 11;
const AUTH_SASL_FINAL: i32 = 12;

async fn fatal<S: Transport>(conn: &mut Conn<S>, e: &PgError) {
    let mut e = e.clone();
    e.severity = Severity::Fatal;
    conn.error(&e);
    conn.shutdown().await;
}

/// "host=H port=P" of the client, for the log (PostgreSQL's `connection received` words).
fn client_address(peer: Option<SocketAddr>) -> String {
    match peer {
        Some(a) => format!("host={} port={}", a.ip(), a.port()),
        None => "host=[local]".to_string(),
    }
}

pub(crate) async fn run<F: BackendFactory, S: Transport>(
    stream: S,
    shared: Arc<Shared<F>>,
    pending: PendingStartup<F>,
) {
    let mut conn = Conn::new(stream);
    let peer = conn.stream().peer();
    let in_auth = AtomicBool::new(false);
    let mut stop = shared.shutdown.clone();
    // Startup and authentication, bounded by authentication_timeout. A connection closed by
    // the timeout, by a newer connection pushing it out of the pending set, or by shutdown
    // is sent nothing, as PostgreSQL's backend exits without a word.
    let admitted = tokio::select! {
        r = tokio::time::timeout(
            shared.config.authentication_timeout,
            admit(&mut conn, &shared, &in_auth, peer),
        ) => match r {
            Ok(r) => r,
            Err(_) => {
                // PostgreSQL logs a timeout during authentication, not one during startup.
                if in_auth.load(Ordering::Relaxed) {
                    eprintln!(
                        "FATAL:  canceling authentication due to timeout\nDETAIL:  Connection from {}.",
                        client_address(peer)
                    );
                }
                conn.wbuf.clear();
                None
            }
        },
        _ = pending.evicted() => {
            conn.wbuf.clear();
            None
        }
        _ = stop.wait_for(|s| *s) => {
            conn.wbuf.clear();
            None
        }
    };
    let Some((info, slot)) = admitted else {
        conn.shutdown().await;
        return;
    };
    drop(pending);
    conn.authenticated();
    codec::auth_request(&mut conn.wbuf, AUTH_OK, &[]);
    let registration = shared.register();
    let mut backend =
        match shared
            .factory
            .connect(&info, registration.token.clone(), registration.pid)
        {
            Ok(b) => b,
            Err(e) => return fatal(&mut conn, &e).await,
        };
    for (name, value) in backend.startup_parameters() {
        codec::parameter_status(&mut conn.wbuf, &name, &value);
    }
    codec::backend_key_data(&mut conn.wbuf, registration.pid, registration.secret);
    codec::ready_for_query(&mut conn.wbuf, backend.ready_for_query());
    conn.flush_out().await;
    // The socket stays open until this task ends, after the backend is done with the token.
    registration.token.set_socket(conn.stream().raw_fd());
    query_loop(&mut conn, &mut backend, &shared, &registration.token).await;
    backend.terminate().await;
    registration.token.set_socket(None);
    conn.shutdown().await;
    drop(registration);
    drop(slot);
}

fn too_many_clients() -> PgError {
    PgError::fatal(
        sqlstate::TOO_MANY_CONNECTIONS,
        "sorry, too many clients already",
    )
}

/// Startup packet, then authentication, then a max_connections slot. `None` means the
/// connection ends here (any FATAL error is queued for sending). A failed authentication is
/// logged, as PostgreSQL logs it, with the client's address.
async fn admit<F: BackendFactory, S: Transport>(
    conn: &mut Conn<S>,
    shared: &Arc<Shared<F>>,
    in_auth: &AtomicBool,
    peer: Option<SocketAddr>,
) -> Option<(StartupInfo, Slot<F>)> {
    let info = startup(conn, shared).await?;
    // PostgreSQL reports a full server before authenticating.
    if shared.full() {
        conn.error(&too_many_clients());
        return None;
    }
    if shared.config.auth == crate::AuthMethod::ScramSha256 {
        in_auth.store(true, Ordering::Relaxed);
        match authenticate(conn, shared, &info.user).await {
            Ok(()) => {}
            Err(Some(e)) => {
                let e = as_fatal(e);
                let from = format!("Connection from {}", client_address(peer));
                let detail = match (&e.detail, e.code) {
                    (_, sqlstate::INVALID_PASSWORD) => {
                        format!("{from} matched auth_method = scram-sha-256.")
                    }
                    (Some(d), _) => format!("{d} {from}."),
                    (None, _) => format!("{from}."),
                };
                eprintln!("FATAL:  {}\nDETAIL:  {detail}", e.message);
                conn.error(&e);
                return None;
            }
            Err(None) => return None,
        }
        in_auth.store(false, Ordering::Relaxed);
    }
    // The slot is taken only now: connections that have not authenticated hold none.
    let Some(slot) = shared.try_slot() else {
        conn.error(&too_many_clients());
        return None;
    };
    Some((info, slot))
}

/// Reads the startup packet, answering SSL/GSS negotiation with 'N' and serving CancelRequests.
/// `None` means the connection ends here (any error was already queued for sending).
async fn startup<F: BackendFactory, S: Transport>(
    conn: &mut Conn<S>,
    shared: &Shared<F>,
) -> Option<StartupInfo> {
    // A client may ask for SSL and then GSS encryption before the real startup packet.
    for _ in 0..3 {
        let body = match conn.read_startup().await {
            Ok(b) => b,
            Err(ReadError::Gone) => return None,
            Err(ReadError::Fatal(e)) => {
                conn.error(&e);
                return None;
            }
        };
        match codec::decode_startup(&body) {
            Ok(StartupPacket::Ssl) | Ok(StartupPacket::GssEnc) => conn.write_raw(b"N").await,
            Ok(StartupPacket::Cancel { pid, secret }) => {
                shared.cancel(pid, secret);
                return None;
            }
            Ok(StartupPacket::Startup { minor, params }) => {
                let unrecognized: Vec<&str> = params
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .filter(|k| k.starts_with("_pq_."))
                    .collect();
                if minor > 0 || !unrecognized.is_empty() {
                    codec::negotiate_protocol_version(&mut conn.wbuf, 0, &unrecognized);
                }
                let get = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
                let Some(user) = get("user").filter(|u| !u.is_empty()) else {
                    conn.error(&PgError::fatal(
                        sqlstate::INVALID_AUTHORIZATION_SPECIFICATION,
                        "no PostgreSQL user name specified in startup packet",
                    ));
                    return None;
                };
                let database = get("database")
                    .filter(|d| !d.is_empty())
                    .unwrap_or_else(|| user.clone());
                return Some(StartupInfo {
                    user,
                    database,
                    params,
                });
            }
            Err(e) => {
                conn.error(&e);
                return None;
            }
        }
    }
    conn.error(&PgError::fatal(
        sqlstate::PROTOCOL_VIOLATION,
        "unsupported frontend protocol 1234.5679: server supports 3.0 to 3.0",
    ));
    None
}

/// Reads a SASL message during authentication. `Err(None)`: the client hung up, which psql does
/// on purpose to ask for a password, so it is not an error worth reporting.
async fn read_sasl<S: Transport>(conn: &mut Conn<S>) -> Result<Bytes, Option<PgError>> {
    match conn.read_message().await {
        Ok((b'p', body)) => Ok(body),
        Ok((tag, _)) => Err(Some(PgError::fatal(
            sqlstate::PROTOCOL_VIOLATION,
            format!("expected SASL response, got message type {tag}"),
        ))),
        Err(ReadError::Gone) => Err(None),
        Err(ReadError::Fatal(e)) => Err(Some(e)),
    }
}

async fn authenticate<F: BackendFactory, S: Transport>(
    conn: &mut Conn<S>,
    shared: &Shared<F>,
    user: &str,
) -> Result<(), Option<PgError>> {
    let mut mechanisms = Vec::from(scram::MECHANISM.as_bytes());
    mechanisms.extend_from_slice(&[0, 0]);
    codec::auth_request(&mut conn.wbuf, AUTH_SASL, &mechanisms);
    conn.flush_out().await;

    let initial = read_sasl(conn).await?;
    let mut r = codec::Reader::new(&initial);
    let mechanism = r.cstr().map_err(|e| Some(as_fatal(e)))?;
    if mechanism != scram::MECHANISM {
        return Err(Some(PgError::fatal(
            sqlstate::PROTOCOL_VIOLATION,
            "client selected an invalid SASL authentication mechanism",
        )));
    }
    let len = r.i32().map_err(|e| Some(as_fatal(e)))?;
    let client_first = if len < 0 {
        Bytes::new()
    } else {
        r.bytes(len as usize).map_err(|e| Some(as_fatal(e)))?
    };
    r.end().map_err(|e| Some(as_fatal(e)))?;

    let failed = || {
        PgError::fatal(
            sqlstate::INVALID_PASSWORD,
            format!("password authentication failed for user \"{user}\""),
        )
    };
    // A user without a password still goes through the exchange (against a random verifier),
    // so a client cannot tell "no such password" from "wrong password".
    let stored = shared.factory.verifier_for(user);
    let has_password = stored.is_some();
    let verifier = stored.unwrap_or_else(|| Arc::new(scram::Verifier::unmatchable()));
    let (exchange, server_first) = Exchange::start(verifier, &client_first)?;
    codec::auth_request(&mut conn.wbuf, AUTH_SASL_CONTINUE, server_first.as_bytes());
    conn.flush_out().await;

    let client_final = read_sasl(conn).await?;
    match exchange.finish(&client_final)? {
        Some(server_final) if has_password => {
            codec::auth_request(&mut conn.wbuf, AUTH_SASL_FINAL, server_final.as_bytes());
            Ok(())
        }
        _ => Err(Some(failed())),
    }
}

fn as_fatal(mut e: PgError) -> PgError {
    e.severity = Severity::Fatal;
    e
}

/// The client was found gone while a statement ran (client_connection_check_interval): the
/// statement has stopped, and the connection ends (its transaction rolls back), as PostgreSQL
/// logs and ends the backend.
fn client_lost(statement: Option<&str>) {
    match statement {
        Some(sql) => eprintln!("FATAL:  connection to client lost\nSTATEMENT:  {sql}"),
        None => eprintln!("FATAL:  connection to client lost"),
    }
}

/// Whether an error in this message starts skip-until-Sync (the extended-protocol messages).
fn is_extended(tag: u8) -> bool {
    matches!(tag, b'P' | b'B' | b'D' | b'E' | b'C' | b'H')
}

/// The main loop: one frontend message at a time until Terminate, EOF, a FATAL error or
/// server shutdown.
async fn query_loop<B: Backend, F: BackendFactory, S: Transport>(
    conn: &mut Conn<S>,
    backend: &mut B,
    shared: &Shared<F>,
    cancel: &crate::CancelToken,
) {
    let mut ignore_till_sync = false;
    // Idle between ReadyForQuery and the first message of the next command cycle: a cancel
    // that arrives while idle is discarded then, as PostgreSQL does.
    let mut cycle = crate::busy::Cycle::new(&shared.busy);
    let mut stop = shared.shutdown.clone();
    loop {
        if conn.broken {
            return;
        }
        let read = tokio::select! {
            biased;
            r = conn.read_message() => Some(r),
            _ = stop.wait_for(|s| *s) => None,
        };
        let (tag, body) = match read {
            None => {
                let e = PgError::fatal(
                    sqlstate::ADMIN_SHUTDOWN,
                    "terminating connection due to administrator command",
                );
                return fatal(conn, &e).await;
            }
            Some(Ok(m)) => m,
            Some(Err(ReadError::Gone)) => return,
            Some(Err(ReadError::Fatal(e))) => return fatal(conn, &e).await,
        };
        if ignore_till_sync && tag != b'S' && tag != b'X' {
            continue;
        }
        if cycle.idle() && tag != b'S' && tag != b'H' {
            cancel.reset();
            cycle.start();
            backend.command_started();
        }
        let msg = match codec::decode(tag, &body) {
            Ok(m) => m,
            Err(e) if e.severity == Severity::Fatal => return fatal(conn, &e).await,
            Err(e) => {
                conn.error(&e);
                if is_extended(tag) {
                    ignore_till_sync = true;
                } else {
                    codec::ready_for_query(&mut conn.wbuf, backend.ready_for_query());
                    cycle.finish().await;
                    conn.flush_out().await;
                }
                continue;
            }
        };
        let result: Result<(), PgError> = match msg {
            FrontendMessage::Query(sql) => {
                let r = backend.simple_query(sql, conn).await;
                if cancel.client_gone() {
                    return client_lost(Some(sql));
                }
                let failed = r.is_err();
                if let Err(e) = r {
                    if e.severity == Severity::Fatal {
                        return fatal(conn, &e).await;
                    }
                    conn.error(&e);
                }
                codec::ready_for_query(&mut conn.wbuf, backend.ready_for_query());
                cycle.finish().await;
                conn.flush_out().await;
                if failed {
                    backend.error_reported();
                }
                Ok(())
            }
            FrontendMessage::Parse {
                name,
                sql,
                param_types,
            } => backend
                .parse(name, sql, &param_types)
                .map(|()| codec::empty(&mut conn.wbuf, b'1')),
            FrontendMessage::Bind {
                portal,
                statement,
                param_formats,
                params,
                result_formats,
            } => backend
                .bind(portal, statement, &param_formats, &params, &result_formats)
                .map(|()| codec::empty(&mut conn.wbuf, b'2')),
            FrontendMessage::Describe { kind: b'S', name } => {
                backend.describe_statement(name).map(|(types, row)| {
                    codec::parameter_description(&mut conn.wbuf, &types);
                    match row {
                        Some(fields) => codec::row_description(&mut conn.wbuf, &fields),
                        None => codec::empty(&mut conn.wbuf, b'n'),
                    }
                })
            }
            FrontendMessage::Describe { name, .. } => {
                backend.describe_portal(name).map(|row| match row {
                    Some(fields) => codec::row_description(&mut conn.wbuf, &fields),
                    None => codec::empty(&mut conn.wbuf, b'n'),
                })
            }
            FrontendMessage::Execute { portal, max_rows } => backend
                .execute(portal, max_rows, conn)
                .await
                .map(|outcome| match outcome {
                    ExecuteOutcome::Complete(tag) => codec::command_complete(&mut conn.wbuf, &tag),
                    ExecuteOutcome::Suspended => codec::empty(&mut conn.wbuf, b's'),
                    ExecuteOutcome::Empty => codec::empty(&mut conn.wbuf, b'I'),
                }),
            FrontendMessage::Close { kind, name } => {
                if kind == b'S' {
                    backend.close_statement(name);
                } else {
                    backend.close_portal(name);
                }
                codec::empty(&mut conn.wbuf, b'3');
                Ok(())
            }
            FrontendMessage::Sync => {
                ignore_till_sync = false;
                if let Err(e) = backend.sync().await {
                    if e.severity == Severity::Fatal {
                        return fatal(conn, &e).await;
                    }
                    conn.error(&e);
                }
                codec::ready_for_query(&mut conn.wbuf, backend.ready_for_query());
                cycle.finish().await;
                conn.flush_out().await;
                Ok(())
            }
            FrontendMessage::Flush => {
                conn.flush_out().await;
                Ok(())
            }
            FrontendMessage::Terminate => return,
            // Leftovers of a COPY that failed: the client keeps sending until it sees the error.
            FrontendMessage::CopyData(_)
            | FrontendMessage::CopyDone
            | FrontendMessage::CopyFail(_) => Ok(()),
            FrontendMessage::FunctionCall => {
                conn.error(&PgError::unsupported(
                    "the fastpath function call interface",
                ));
                codec::ready_for_query(&mut conn.wbuf, backend.ready_for_query());
                cycle.finish().await;
                conn.flush_out().await;
                Ok(())
            }
            FrontendMessage::Password(_) => {
                return fatal(
                    conn,
                    &PgError::fatal(
                        sqlstate::PROTOCOL_VIOLATION,
                        format!("invalid frontend message type {tag}"),
                    ),
                )
                .await;
            }
        };
        if cancel.client_gone() {
            return client_lost(None);
        }
        if let Err(e) = result {
            if e.severity == Severity::Fatal {
                return fatal(conn, &e).await;
            }
            conn.error(&e);
            conn.flush_out().await;
            backend.error_reported();
            ignore_till_sync = true;
        }
        conn.flush_if_large().await;
    }
}
