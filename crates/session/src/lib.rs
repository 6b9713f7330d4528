//! Sessions: one per connection. Implements the wire protocol's `Backend` on top of the SQL
//! layer and the engine (transaction blocks, prepared statements, portals, SET/SHOW, COPY).
#![allow(unused_variables)]

use keel_access::Engine;
use keel_common::{PgResult, Settings};
use keel_wire::{BackendFactory, CancelToken, StartupInfo};
use std::sync::Arc;

/// Creates sessions; shared by the accept loop.
pub struct SessionFactory {
    engine: Arc<Engine>,
    settings: Settings,
}

impl SessionFactory {
    /// `settings` are the server's boot values (defaults + keel.conf + -c flags); each session
    /// starts from them.
    pub fn new(engine: Arc<Engine>, settings: Settings) -> SessionFactory {
        SessionFactory { engine, settings }
    }
}

impl BackendFactory for SessionFactory {
    type Backend = Session;

    fn connect(&self, startup: &StartupInfo, cancel: Arc<CancelToken>, pid: i32) -> PgResult<Session> {
        todo!()
    }

    fn password_for(&self, user: &str) -> Option<String> {
        todo!()
    }
}

/// One connection's state.
pub struct Session {}

impl keel_wire::Backend for Session {
    fn startup_parameters(&self) -> Vec<(String, String)> {
        todo!()
    }
    async fn simple_query<C: keel_wire::Client>(&mut self, sql: &str, client: &mut C) -> PgResult<()> {
        todo!()
    }
    fn parse(&mut self, name: &str, sql: &str, param_types: &[u32]) -> PgResult<()> {
        todo!()
    }
    fn bind(
        &mut self,
        portal: &str,
        statement: &str,
        param_formats: &[i16],
        params: &[Option<bytes::Bytes>],
        result_formats: &[i16],
    ) -> PgResult<()> {
        todo!()
    }
    fn describe_statement(&mut self, name: &str) -> PgResult<(Vec<u32>, Option<Vec<keel_wire::FieldDescription>>)> {
        todo!()
    }
    fn describe_portal(&mut self, name: &str) -> PgResult<Option<Vec<keel_wire::FieldDescription>>> {
        todo!()
    }
    async fn execute<C: keel_wire::Client>(
        &mut self,
        portal: &str,
        max_rows: u32,
        client: &mut C,
    ) -> PgResult<keel_wire::ExecuteOutcome> {
        todo!()
    }
    fn close_statement(&mut self, name: &str) {}
    fn close_portal(&mut self, name: &str) {}
    async fn sync(&mut self) -> PgResult<()> {
        todo!()
    }
    fn transaction_status(&self) -> u8 {
        b'I'
    }
    async fn terminate(&mut self) {}
}
