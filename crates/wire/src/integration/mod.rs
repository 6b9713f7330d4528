//! keel-wire's tests against its public API (`keel_wire::...`, as a user of the crate writes them).
//! They are part of the crate's unit-test binary rather than an integration-test binary of their
//! own: every test binary is another full link of everything below it with thin LTO, which CI
//! pays for on every run.

mod common;
mod protocol;
mod psql;
