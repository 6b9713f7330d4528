//! DDL commands, one command area per file: tables (CREATE / DROP / TRUNCATE) in [`ddl`],
//! ALTER TABLE in `ddl_alter`, indexes in `ddl_index`, sequences in `ddl_sequence`, triggers
//! in `ddl_trigger`, views in `ddl_view`. They run
//! against the transaction's pending catalog (see keel-catalog).

pub mod body_position;
pub mod ddl;
mod ddl_alter;
mod ddl_attach;
mod ddl_attach_proof;
mod ddl_create_as;
mod ddl_drop_column;
mod ddl_function;
mod ddl_index;
pub mod ddl_locks;
mod ddl_partition;
mod ddl_partition_tree;
mod ddl_sequence;
mod ddl_trigger;
mod ddl_type;
mod ddl_view;
pub mod plpgsql_check;
pub mod plpgsql_shadow;
