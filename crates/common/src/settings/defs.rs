//! The table of every setting Keel knows: name, default, kind and unit, context.

use super::{Context, Def, Kind, Unit};

/// PostgreSQL's integer settings are C ints: INT_MAX is the usual upper bound.
pub(super) const INT_MAX: i64 = i32::MAX as i64;

/// All settings Keel knows. Unknown names are rejected with 42704, as in PostgreSQL.
pub static DEFS: &[Def] = &[
    d("application_name", "", Kind::Str, Context::User, true),
    // Seconds a connection may take from accept to the end of authentication (PostgreSQL's
    // default); a connection holds no max_connections slot before it authenticates.
    d(
        "authentication_timeout",
        "60",
        Kind::Int {
            unit: Unit::S,
            min: 1,
            max: 600,
        },
        Context::Sighup,
        false,
    ),
    d("client_encoding", "UTF8", Kind::Str, Context::User, true),
    // How often a running statement checks that its client is still connected (PostgreSQL's
    // setting, off there by default). Keel checks every second by default: the check is a
    // poll(POLLRDHUP) of the socket from the interrupt check, so it costs nothing between.
    d(
        "client_connection_check_interval",
        "1000",
        Kind::Int {
            unit: Unit::Ms,
            min: 0,
            max: INT_MAX,
        },
        Context::User,
        false,
    ),
    d(
        "client_min_messages",
        "notice",
        Kind::Enum(&[
            "debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice", "warning", "error",
        ]),
        Context::User,
        false,
    ),
    d(
        "checkpoint_timeout",
        "300",
        Kind::Int {
            unit: Unit::S,
            min: 30,
            max: 86400,
        },
        Context::Sighup,
        false,
    ),
    d(
        "checkpoint_completion_target",
        "0.9",
        Kind::Real { min: 0.0, max: 1.0 },
        Context::Sighup,
        false,
    ),
    d(
        "checkpoint_flush_after",
        "32",
        Kind::Int {
            unit: Unit::Blocks,
            min: 0,
            max: 256,
        },
        Context::Sighup,
        false,
    ),
    d("DateStyle", "ISO, MDY", Kind::Str, Context::User, true),
    d(
        "deadlock_timeout",
        "1000",
        Kind::Int {
            unit: Unit::Ms,
            min: 1,
            max: INT_MAX,
        },
        Context::User,
        false,
    ),
    d(
        "default_transaction_isolation",
        "read committed",
        Kind::Enum(&[
            "serializable",
            "repeatable read",
            "read committed",
            "read uncommitted",
        ]),
        Context::User,
        false,
    ),
    d(
        "default_transaction_deferrable",
        "off",
        Kind::Bool,
        Context::User,
        false,
    ),
    d(
        "default_transaction_read_only",
        "off",
        Kind::Bool,
        Context::User,
        true,
    ),
    d(
        "extra_float_digits",
        "1",
        Kind::Int {
            unit: Unit::None,
            min: -15,
            max: 3,
        },
        Context::User,
        false,
    ),
    d("fsync", "on", Kind::Bool, Context::Sighup, false),
    d(
        "gin_pending_list_limit",
        "4096",
        Kind::Int {
            unit: Unit::Kb,
            min: 64,
            max: INT_MAX,
        },
        Context::User,
        false,
    ),
    d(
        "idle_in_transaction_session_timeout",
        "0",
        Kind::Int {
            unit: Unit::Ms,
            min: 0,
            max: INT_MAX,
        },
        Context::User,
        false,
    ),
    d(
        "integer_datetimes",
        "on",
        Kind::Bool,
        Context::Internal,
        true,
    ),
    d("IntervalStyle", "postgres", Kind::Str, Context::User, true),
    d("is_superuser", "on", Kind::Bool, Context::Internal, true),
    d(
        "listen_addresses",
        "127.0.0.1",
        Kind::Str,
        Context::Postmaster,
        false,
    ),
    // Hash-based operations may use this multiple of work_mem (PostgreSQL's setting).
    d(
        "hash_mem_multiplier",
        "2",
        Kind::Real {
            min: 1.0,
            max: 1000.0,
        },
        Context::User,
        false,
    ),
    d(
        "lock_timeout",
        "0",
        Kind::Int {
            unit: Unit::Ms,
            min: 0,
            max: INT_MAX,
        },
        Context::User,
        false,
    ),
    d("log_checkpoints", "on", Kind::Bool, Context::Sighup, false),
    d(
        "maintenance_work_mem",
        "65536",
        Kind::Int {
            unit: Unit::Kb,
            min: 1024,
            max: INT_MAX,
        },
        Context::User,
        false,
    ),
    d(
        "max_connections",
        "100",
        Kind::Int {
            unit: Unit::None,
            min: 1,
            max: 262143,
        },
        Context::Postmaster,
        false,
    ),
    // The deepest stack a statement may use, in kB, before it fails with 54001 (PostgreSQL's
    // setting and default). Session threads have SESSION_STACK_BYTES of stack, so the limit
    // can be raised to that minus a margin.
    d(
        "max_stack_depth",
        "2048",
        Kind::Int {
            unit: Unit::Kb,
            min: 100,
            max: crate::stack::MAX_STACK_DEPTH_KB,
        },
        Context::User,
        false,
    ),
    d(
        "max_wal_size",
        "1024",
        Kind::Int {
            unit: Unit::Mb,
            min: 2,
            max: INT_MAX,
        },
        Context::Sighup,
        false,
    ),
    d(
        "password_encryption",
        "scram-sha-256",
        Kind::Str,
        Context::User,
        false,
    ),
    // PL/pgSQL's settings (the extension's own, registered as PostgreSQL's plpgsql module
    // does): compile-time checks (`extra_warnings` / `extra_errors`: none, all, or a list of
    // shadowed_variables, too_many_rows, strict_multi_assignment), ASSERT, whether a STRICT
    // error lists the statement's parameters, and how a name that is both a variable and a
    // column resolves.
    d(
        "plpgsql.check_asserts",
        "on",
        Kind::Bool,
        Context::User,
        false,
    ),
    d(
        "plpgsql.extra_errors",
        "none",
        Kind::Str,
        Context::User,
        false,
    ),
    d(
        "plpgsql.extra_warnings",
        "none",
        Kind::Str,
        Context::User,
        false,
    ),
    d(
        "plpgsql.print_strict_params",
        "off",
        Kind::Bool,
        Context::User,
        false,
    ),
    // A prepared statement runs its one plan (PostgreSQL's generic plan) whatever this says:
    // its partitions are pruned from the parameters when it starts (session/prepared.rs).
    d(
        "plan_cache_mode",
        "auto",
        Kind::Enum(&["auto", "force_generic_plan", "force_custom_plan"]),
        Context::User,
        false,
    ),
    d(
        "plpgsql.variable_conflict",
        "error",
        Kind::Enum(&["error", "use_variable", "use_column"]),
        Context::User,
        false,
    ),
    d(
        "port",
        "5433",
        Kind::Int {
            unit: Unit::None,
            min: 1,
            max: 65535,
        },
        Context::Postmaster,
        false,
    ),
    d(
        "search_path",
        "\"$user\", public",
        Kind::Str,
        Context::User,
        false,
    ),
    d(
        "server_encoding",
        "UTF8",
        Kind::Str,
        Context::Internal,
        true,
    ),
    d(
        "server_version",
        "15.18",
        Kind::Str,
        Context::Internal,
        true,
    ),
    d(
        "server_version_num",
        "150018",
        Kind::Str,
        Context::Internal,
        false,
    ),
    // Whether this session applies changes as a replica: triggers enabled on origin (the
    // default, and the foreign key checks) do not fire under `replica`, ENABLE REPLICA ones
    // fire only then, ENABLE ALWAYS ones always.
    d(
        "session_replication_role",
        "origin",
        Kind::Enum(&["origin", "replica", "local"]),
        Context::User,
        false,
    ),
    d(
        "session_authorization",
        "postgres",
        Kind::Str,
        Context::Internal,
        true,
    ),
    d(
        "shared_buffers",
        "16384",
        Kind::Int {
            unit: Unit::Blocks,
            min: 16,
            max: INT_MAX / 2,
        },
        Context::Postmaster,
        false,
    ),
    d(
        "standard_conforming_strings",
        "on",
        Kind::Bool,
        Context::User,
        true,
    ),
    // Keel's own: one statement's operators (sorts, hash tables, aggregate states, collected
    // rows) may hold at most work_mem times this in memory; past it the statement fails with
    // 53200. 64 gives 256MB at the default work_mem. PostgreSQL has no such limit because its
    // sorts and hash tables spill to disk past work_mem; keel's do not yet.
    d(
        "statement_mem_multiplier",
        "64",
        Kind::Real {
            min: 1.0,
            max: 1_000_000.0,
        },
        Context::User,
        false,
    ),
    d(
        "statement_timeout",
        "0",
        Kind::Int {
            unit: Unit::Ms,
            min: 0,
            max: INT_MAX,
        },
        Context::User,
        false,
    ),
    d(
        "synchronous_commit",
        "on",
        Kind::Enum(&["local", "remote_write", "remote_apply", "on", "off"]),
        Context::User,
        false,
    ),
    d("TimeZone", "UTC", Kind::Str, Context::User, true),
    d(
        "transaction_isolation",
        "read committed",
        Kind::Enum(&[
            "serializable",
            "repeatable read",
            "read committed",
            "read uncommitted",
        ]),
        Context::User,
        false,
    ),
    d(
        "transaction_deferrable",
        "off",
        Kind::Bool,
        Context::User,
        false,
    ),
    d(
        "transaction_read_only",
        "off",
        Kind::Bool,
        Context::User,
        false,
    ),
    d(
        "work_mem",
        "4096",
        Kind::Int {
            unit: Unit::Kb,
            min: 64,
            max: INT_MAX,
        },
        Context::User,
        false,
    ),
    // Accepted for clients and scripts that set them (EXPLAIN comparisons, pg_dump): keel
    // never compiles expressions and never runs a plan in parallel, whatever their values.
    d("jit", "on", Kind::Bool, Context::User, false),
    d(
        "max_parallel_workers_per_gather",
        "2",
        Kind::Int {
            unit: Unit::None,
            min: 0,
            max: 1024,
        },
        Context::User,
        false,
    ),
    d(
        "auth_method",
        "trust",
        Kind::Enum(&["trust", "scram-sha-256"]),
        Context::Postmaster,
        false,
    ),
    // There is no keel_password setting: the server binary takes that name from keel.conf
    // and -c, keeps only the SCRAM verifier, and no SQL can read it (crates/server).
    // Keel's own: microseconds an idle session shard polls its sockets before it sleeps,
    // when the machine has a core to spare (crates/wire/src/spin.rs); 0 turns it off.
    d(
        "keel_idle_spin_us",
        "200",
        Kind::Int {
            unit: Unit::None,
            min: 0,
            max: 1_000,
        },
        Context::Postmaster,
        false,
    ),
];

const fn d(
    name: &'static str,
    default: &'static str,
    kind: Kind,
    context: Context,
    reported: bool,
) -> Def {
    Def {
        name,
        default,
        kind,
        context,
        reported,
    }
}
