//! The end-to-end tests, as one test binary: each module was its own `tests/*.rs` target,
//! and linking 40 binaries against tokio and the workspace with thin LTO cost CI a quarter
//! of an hour. nextest still runs every test in its own process, so isolation is as before.
//! A test is named `module::test` (`survival::generated_sql_never_takes_the_server_down`).

mod advisory_locks;
mod auth_log;
mod bad_input;
mod catalog_crash;
mod client_gone;
mod connections;
mod crash;
mod data_dir_permissions;
mod definitions;
mod disk_full;
mod drivers;
mod early_lock_release;
mod explain;
mod explain_format;
mod explain_verbose;
mod function_crash;
mod heap_progress;
mod hermitage;
mod index_only;
mod interrupts;
mod isolation;
mod join_order;
mod memory_limits;
mod name_limits;
mod not_built;
mod operators;
mod pgbench;
mod prepared;
mod protocol_input;
mod psql;
mod recovery;
mod replan;
mod row_locks;
mod savepoints;
mod secrets;
mod select_for_update;
mod shutdown_signal;
mod slt_corpus;
mod sql_compare;
mod ssi_specs;
mod stack_depth;
mod statement_safety;
mod statistics;
mod storage_layout;
mod survival;
mod table_locks;
mod upsert_race;
