//! libFuzzer entry for `keel_fuzz_targets::sql_prepare` (crates/fuzz-targets/src/sql_prepare.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| keel_fuzz_targets::sql_prepare(data));
