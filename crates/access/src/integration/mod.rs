//! keel-access's tests against its public API (`keel_access::...`, as a user of the crate writes them).
//! They are part of the crate's unit-test binary rather than an integration-test binary of their
//! own: every test binary is another full link of everything below it with thin LTO, which CI
//! pays for on every run.

mod catalog_recovery;
mod common;
mod crash_sim;
mod engine;
mod stats;
