//! The bodies of keel's fuzz targets. `fuzz/` (its own workspace, built by cargo-fuzz with
//! coverage instrumentation) wraps each in `fuzz_target!`; here they are compiled by the main
//! workspace's one build, so a change to the crates they drive that breaks them fails CI
//! without a second build of the fuzz workspace. See fuzz/README.md for what each must hold.

mod sql_prepare;
mod wire_decode;

pub use sql_prepare::sql_prepare;
pub use wire_decode::wire_decode;
