//! keel-wire's integration tests, linked as one test binary (one link instead of three).

mod common;
mod protocol;
mod psql;
