//! Sessions: one per connection. Implements the wire protocol's `Backend` on top of the SQL
//! layer and the engine (transaction blocks, prepared statements, portals, SET/SHOW, COPY).
//! See README.md for the transaction state machine.

mod analyze;
mod copy;
mod cursor;
mod describe;
mod exec;
mod explain;
mod locking;
mod panic_guard;
mod plan_cache;
mod plpgsql;
mod prepared;
mod savepoint;
mod session;
mod utility;

pub use plan_cache::PlanCache;
pub use session::Session;

use keel_access::Engine;
use keel_common::{PgError, PgResult, Settings, sqlstate};
use keel_wire::{BackendFactory, CancelToken, StartupInfo};
use std::sync::Arc;

/// Creates sessions; shared by the accept loop.
pub struct SessionFactory {
    engine: Arc<Engine>,
    settings: Settings,
    plans: Arc<PlanCache>,
}

impl SessionFactory {
    /// `settings` are the server's boot values (defaults + keel.conf + -c flags); each session
    /// starts from them.
    pub fn new(engine: Arc<Engine>, settings: Settings) -> SessionFactory {
        // LANGUAGE plpgsql calls from the executor go to the interpreter.
        keel_plpgsql::call::register();
        SessionFactory {
            engine,
            settings,
            plans: Arc::default(),
        }
    }
}

impl BackendFactory for SessionFactory {
    type Backend = Session;

    fn connect(
        &self,
        startup: &StartupInfo,
        cancel: Arc<CancelToken>,
        pid: i32,
    ) -> PgResult<Session> {
        let mut settings = self.settings.clone();
        for (k, v) in &startup.params {
            match k.as_str() {
                "user" | "database" | "replication" => {}
                "options" => {
                    // `-c name=value` pairs, as libpq's PGOPTIONS.
                    let mut it = v.split_whitespace();
                    while let Some(t) = it.next() {
                        let kv = if t == "-c" {
                            it.next().unwrap_or("")
                        } else {
                            t.trim_start_matches("-c").trim_start_matches("--")
                        };
                        if let Some((name, value)) = kv.split_once('=') {
                            settings.set(&name.replace('-', "_"), value, false)?;
                        }
                    }
                }
                name => {
                    // Unknown startup parameters are errors in PostgreSQL too (FATAL 42704).
                    settings
                        .set(name, v, false)
                        .map_err(|mut e| PgError::fatal(e.code, std::mem::take(&mut e.message)))?;
                }
            }
        }
        if !startup.database.is_empty()
            && startup.database != "postgres"
            && startup.database != startup.user
            && startup.database != "template1"
        {
            return Err(PgError::fatal(
                sqlstate::UNDEFINED_DATABASE,
                format!("database \"{}\" does not exist", startup.database),
            ));
        }
        // RESET goes back to the session's defaults, startup parameters included (as
        // PostgreSQL's reset values: `options` and application_name from the client count).
        Ok(Session::new(
            self.engine.clone(),
            settings.clone(),
            settings,
            cancel,
            pid,
            startup,
            self.plans.clone(),
        ))
    }

    /// Sessions know no passwords: the server binary wraps this factory with its
    /// authentication policy and answers with the verifier it derived at start-up.
    fn verifier_for(&self, _user: &str) -> Option<std::sync::Arc<keel_wire::scram::Verifier>> {
        None
    }
}
