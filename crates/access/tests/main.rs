//! keel-access's integration tests, linked as one test binary: every separate binary is
//! another full link of the engine with thin LTO, which CI pays for on every run.

mod catalog_recovery;
mod common;
mod crash_sim;
mod engine;
mod stats;
