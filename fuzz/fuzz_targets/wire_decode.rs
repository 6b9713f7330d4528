//! libFuzzer entry for `keel_fuzz_targets::wire_decode` (crates/fuzz-targets/src/wire_decode.rs).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| keel_fuzz_targets::wire_decode(data));
