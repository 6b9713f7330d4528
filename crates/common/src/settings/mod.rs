//! Server settings (GUCs): the names, defaults, units and contexts PostgreSQL users know.
//!
//! A [`Settings`] value is a full set of current values. The server builds one at start-up
//! from defaults, `keel.conf` and `-c` flags; each session clones it and applies `SET`.
//! Values are kept in PostgreSQL's base units (kB for memory, 8 kB pages for shared_buffers,
//! ms for times) and shown with the units `SHOW` prints.

use crate::{PgError, PgResult, sqlstate};
use std::collections::BTreeMap;

mod defs;
pub use defs::DEFS;

/// When a setting may change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    /// Only at server start (postgres's `postmaster` context).
    Postmaster,
    /// From the command line or keel.conf only; `SET` says it "cannot be changed now"
    /// (postgres's `sighup` context; keel reads these at start-up).
    Sighup,
    /// Any session may `SET` it.
    User,
    /// Reported but never changed.
    Internal,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Bool,
    /// An integer in the given base unit.
    Int {
        unit: Unit,
        min: i64,
        max: i64,
    },
    /// A floating-point value within `[min, max]`.
    Real {
        min: f64,
        max: f64,
    },
    Str,
    Enum(&'static [&'static str]),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    None,
    /// Kilobytes.
    Kb,
    /// 8 kB blocks.
    Blocks,
    /// Megabytes.
    Mb,
    Ms,
    S,
}

#[derive(Debug)]
pub struct Def {
    pub name: &'static str,
    pub default: &'static str,
    pub kind: Kind,
    pub context: Context,
    /// Whether a change is reported to the client with ParameterStatus.
    pub reported: bool,
}

pub fn find_def(name: &str) -> Option<&'static Def> {
    DEFS.iter().find(|d| d.name.eq_ignore_ascii_case(name))
}

/// What `set` returns for a custom setting (PostgreSQL's placeholder variables): a user
/// setting of free text, never reported to the client.
pub static PLACEHOLDER: Def = Def {
    name: "",
    default: "",
    kind: Kind::Str,
    context: Context::User,
    reported: false,
};

/// The checks a `plpgsql.extra_warnings` / `plpgsql.extra_errors` value turns on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlChecks {
    pub shadowed_variables: bool,
    pub too_many_rows: bool,
    pub strict_multi_assignment: bool,
}

impl PlChecks {
    /// Parses a value (`none`, `all`, or a comma-separated list of check names), with
    /// PostgreSQL's DETAIL when it is not one.
    pub fn parse(value: &str) -> Result<PlChecks, String> {
        if value.trim().is_empty() {
            return Ok(PlChecks::default());
        }
        let words: Vec<String> = value
            .split(',')
            .map(|w| w.trim().trim_matches('"').to_ascii_lowercase())
            .collect();
        if words.iter().any(|w| w.is_empty()) {
            return Err("List syntax is invalid.".into());
        }
        let mut c = PlChecks::default();
        for w in &words {
            match w.as_str() {
                "all" | "none" if words.len() > 1 => {
                    return Err(format!(
                        "Key word \"{w}\" cannot be combined with other key words."
                    ));
                }
                "all" => {
                    c = PlChecks {
                        shadowed_variables: true,
                        too_many_rows: true,
                        strict_multi_assignment: true,
                    }
                }
                "none" => {}
                "shadowed_variables" => c.shadowed_variables = true,
                "too_many_rows" => c.too_many_rows = true,
                "strict_multi_assignment" => c.strict_multi_assignment = true,
                _ => return Err(format!("Unrecognized key word: \"{w}\".")),
            }
        }
        Ok(c)
    }
}

/// A complete set of setting values, in canonical (base unit) form.
#[derive(Clone, Debug)]
pub struct Settings {
    values: BTreeMap<&'static str, String>,
    /// Custom settings (`SET myapp.tenant = '42'`), by lower-cased name, with the name as
    /// first written: PostgreSQL's placeholder variables, free text keel stores and shows.
    custom: BTreeMap<String, (String, String)>,
    /// Values every transaction or statement reads, kept parsed beside the map: a map lookup
    /// walks a per-session tree, which with hundreds of sessions is a cache miss per node.
    hot: Hot,
}

#[derive(Clone, Copy, Debug, Default)]
struct Hot {
    statement_timeout_ms: i64,
    isolation: crate::Isolation,
    read_only: bool,
    deferrable: bool,
    synchronous_commit: bool,
    max_stack_depth_bytes: u64,
    /// work_mem in bytes.
    work_mem: usize,
    /// statement_mem_multiplier.
    mem_multiplier: f64,
    /// session_replication_role is `replica` (read per written row by triggers and foreign
    /// keys).
    replica: bool,
    /// plpgsql.extra_warnings and plpgsql.extra_errors, parsed (read per PL/pgSQL call).
    pl_checks: [PlChecks; 2],
}

impl Default for Settings {
    fn default() -> Self {
        let mut s = Settings {
            values: BTreeMap::new(),
            custom: BTreeMap::new(),
            hot: Hot::default(),
        };
        for d in DEFS {
            s.store(d.name, d.default.to_string());
        }
        s
    }
}

impl Settings {
    /// Sets `name` from user text (`'64MB'`, `on`, `8`), validating it. `at_startup` allows
    /// postmaster-context settings.
    pub fn set(&mut self, name: &str, value: &str, at_startup: bool) -> PgResult<&'static Def> {
        let Some(def) = find_def(name) else {
            let Some(key) = custom_name(name)? else {
                return Err(unrecognized(name));
            };
            self.custom
                .entry(key)
                .or_insert_with(|| (name.to_string(), String::new()))
                .1 = value.to_string();
            return Ok(&PLACEHOLDER);
        };
        if !at_startup {
            check_changeable(def)?;
        }
        let canonical = canonicalize(def, value)?;
        self.store(def.name, canonical);
        Ok(def)
    }

    pub fn reset(&mut self, name: &str, boot: &Settings) -> PgResult<&'static Def> {
        let Some(def) = find_def(name) else {
            let Some(key) = custom_name(name)? else {
                return Err(unrecognized(name));
            };
            let v = boot.custom.get(&key).map(|(_, v)| v.clone());
            self.custom
                .entry(key)
                .or_insert_with(|| (name.to_string(), String::new()))
                .1 = v.unwrap_or_default();
            return Ok(&PLACEHOLDER);
        };
        check_changeable(def)?;
        let v = boot.raw(def.name).to_string();
        self.store(def.name, v);
        Ok(def)
    }

    fn store(&mut self, name: &'static str, canonical: String) {
        let hot = &mut self.hot;
        match name {
            "statement_timeout" => hot.statement_timeout_ms = canonical.parse().unwrap_or(0),
            "default_transaction_isolation" => {
                hot.isolation = crate::Isolation::from_name(&canonical)
            }
            "default_transaction_deferrable" => hot.deferrable = canonical == "on",
            "default_transaction_read_only" => hot.read_only = canonical == "on",
            "synchronous_commit" => hot.synchronous_commit = canonical != "off",
            "max_stack_depth" => {
                hot.max_stack_depth_bytes = canonical.parse::<u64>().unwrap_or(0) * 1024;
            }
            "work_mem" => {
                hot.work_mem = canonical.parse::<usize>().unwrap_or(0).saturating_mul(1024)
            }
            "statement_mem_multiplier" => hot.mem_multiplier = canonical.parse().unwrap_or(1.0),
            "session_replication_role" => hot.replica = canonical == "replica",
            "plpgsql.extra_warnings" => {
                hot.pl_checks[0] = PlChecks::parse(&canonical).unwrap_or_default()
            }
            "plpgsql.extra_errors" => {
                hot.pl_checks[1] = PlChecks::parse(&canonical).unwrap_or_default()
            }
            _ => {}
        }
        self.values.insert(name, canonical);
    }

    /// `statement_timeout` in milliseconds (0: none), without a map lookup.
    pub fn statement_timeout_ms(&self) -> i64 {
        self.hot.statement_timeout_ms
    }

    /// `work_mem` in bytes, without a map lookup.
    pub fn work_mem_bytes(&self) -> usize {
        self.hot.work_mem
    }

    /// The memory one statement's operators may hold: `work_mem × statement_mem_multiplier`
    /// bytes (keel's own setting; see keel-sql's `exec::mem`).
    pub fn statement_mem_limit(&self) -> usize {
        (self.hot.work_mem as f64 * self.hot.mem_multiplier) as usize
    }

    /// `default_transaction_isolation`, without a map lookup.
    pub fn default_isolation(&self) -> crate::Isolation {
        self.hot.isolation
    }

    /// `default_transaction_deferrable`, without a map lookup.
    pub fn default_deferrable(&self) -> bool {
        self.hot.deferrable
    }

    /// `default_transaction_read_only`, without a map lookup.
    pub fn default_read_only(&self) -> bool {
        self.hot.read_only
    }

    /// Whether commits wait for their WAL flush (`synchronous_commit` is not `off`), without
    /// a map lookup.
    pub fn synchronous_commit(&self) -> bool {
        self.hot.synchronous_commit
    }

    /// `max_stack_depth` in bytes, without a map lookup (read at every statement start).
    pub fn max_stack_depth_bytes(&self) -> u64 {
        self.hot.max_stack_depth_bytes
    }

    /// The canonical stored value (base units, no suffix).
    pub fn raw(&self, name: &str) -> &str {
        // Callers in the server pass canonical names: one map lookup, no scan over the
        // definitions (this runs several times per statement).
        if let Some(v) = self.values.get(name) {
            return v;
        }
        find_def(name)
            .and_then(|d| self.values.get(d.name))
            .map(String::as_str)
            .unwrap_or("")
    }

    /// The PL/pgSQL checks `plpgsql.extra_warnings` (`errors` false) or
    /// `plpgsql.extra_errors` turns on.
    pub fn pl_checks(&self, errors: bool) -> PlChecks {
        self.hot.pl_checks[errors as usize]
    }

    /// `session_replication_role = replica`, without a map lookup.
    pub fn replica(&self) -> bool {
        self.hot.replica
    }

    pub fn int(&self, name: &str) -> i64 {
        self.raw(name).parse().unwrap_or(0)
    }

    pub fn real(&self, name: &str) -> f64 {
        self.raw(name).parse().unwrap_or(0.0)
    }

    pub fn bool(&self, name: &str) -> bool {
        self.raw(name) == "on"
    }

    /// Memory setting in bytes (for kB- and block-unit settings).
    pub fn bytes(&self, name: &str) -> u64 {
        let v = self.int(name).max(0) as u64;
        match find_def(name).map(|d| d.kind) {
            Some(Kind::Int { unit: Unit::Kb, .. }) => v * 1024,
            Some(Kind::Int {
                unit: Unit::Blocks, ..
            }) => v * 8192,
            Some(Kind::Int { unit: Unit::Mb, .. }) => v << 20,
            _ => v,
        }
    }

    /// The value as `SHOW` prints it (`128MB`, `4MB`, `1s`).
    pub fn show(&self, name: &str) -> PgResult<(std::borrow::Cow<'static, str>, String)> {
        let Some(def) = find_def(name) else {
            let lower = name.to_ascii_lowercase();
            return match self.custom.get(&lower) {
                Some((n, v)) => Ok((n.clone().into(), v.clone())),
                None => Err(unrecognized(name)),
            };
        };
        let raw = self.raw(def.name);
        Ok((def.name.into(), display(def, raw)))
    }

    /// After a rollback restored `self`: custom settings the rolled-back transaction
    /// created stay, with an empty value, as PostgreSQL's placeholders do.
    pub fn keep_placeholders(&mut self, rolled_back: &Settings) {
        for (key, (name, _)) in &rolled_back.custom {
            self.custom
                .entry(key.clone())
                .or_insert_with(|| (name.clone(), String::new()));
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static Def, &str)> {
        DEFS.iter().map(move |d| (d, self.raw(d.name)))
    }
}

fn unrecognized(name: &str) -> PgError {
    PgError::new(
        sqlstate::UNDEFINED_OBJECT,
        format!("unrecognized configuration parameter \"{name}\""),
    )
}

/// The stored name of a custom setting: two or more simple identifiers joined by dots
/// (PostgreSQL's `valid_custom_variable_name`); None for a name without a dot, which is
/// simply unknown.
fn custom_name(name: &str) -> PgResult<Option<String>> {
    if !name.contains('.') {
        return Ok(None);
    }
    let simple = |part: &str| {
        let mut chars = part.chars();
        chars
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || !c.is_ascii())
            && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$' || !c.is_ascii())
    };
    if !name.split('.').all(simple) {
        return Err(PgError::new(
            sqlstate::INVALID_NAME,
            format!("invalid configuration parameter name \"{name}\""),
        )
        .with_detail(
            "Custom parameter names must be two or more simple identifiers separated by dots.",
        ));
    }
    let lower = name.to_ascii_lowercase();
    Ok(Some(lower))
}

fn invalid(def: &Def, value: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        format!(
            "invalid value for parameter \"{}\": \"{}\"",
            def.name, value
        ),
    )
}

fn canonicalize(def: &Def, value: &str) -> PgResult<String> {
    let v = value.trim();
    match def.kind {
        Kind::Bool => match v.to_ascii_lowercase().as_str() {
            "on" | "true" | "yes" | "1" | "t" | "y" => Ok("on".into()),
            "off" | "false" | "no" | "0" | "f" | "n" => Ok("off".into()),
            _ => Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("parameter \"{}\" requires a Boolean value", def.name),
            )),
        },
        Kind::Int { unit, min, max } => {
            let n = parse_with_unit(v, unit).ok_or_else(|| invalid(def, value))?;
            if n < min || n > max {
                let shown = match unit_name(unit) {
                    "" => n.to_string(),
                    u => format!("{n} {u}"),
                };
                return Err(out_of_range(def, &shown, min, max));
            }
            Ok(n.to_string())
        }
        Kind::Real { min, max } => {
            let x: f64 = v.parse().map_err(|_| invalid(def, value))?;
            if !(min..=max).contains(&x) {
                return Err(out_of_range(def, &x.to_string(), min, max));
            }
            Ok(x.to_string())
        }
        Kind::Str if def.name.starts_with("plpgsql.extra_") => match PlChecks::parse(v) {
            Ok(_) => Ok(v.to_string()),
            Err(detail) => Err(invalid(def, value).with_detail(detail)),
        },
        Kind::Str => Ok(v.to_string()),
        Kind::Enum(options) => {
            let lower = v.to_ascii_lowercase();
            let lower = if def.name == "synchronous_commit" {
                match lower.as_str() {
                    "true" | "yes" | "1" => "on".to_string(),
                    "false" | "no" | "0" => "off".to_string(),
                    _ => lower,
                }
            } else {
                lower
            };
            if options.contains(&lower.as_str()) {
                Ok(lower)
            } else {
                Err(invalid(def, value)
                    .with_hint(format!("Available values: {}.", options.join(", "))))
            }
        }
    }
}

/// PostgreSQL's range error: the value as given, in the setting's unit (`10 kB is outside the
/// valid range for parameter "work_mem" (64 .. 2147483647)`).
fn out_of_range(
    def: &Def,
    shown: &str,
    min: impl std::fmt::Display,
    max: impl std::fmt::Display,
) -> PgError {
    PgError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        format!(
            "{shown} is outside the valid range for parameter \"{}\" ({min} .. {max})",
            def.name
        ),
    )
}

/// The unit as pg_settings.unit names it.
fn unit_name(unit: Unit) -> &'static str {
    match unit {
        Unit::None => "",
        Unit::Kb => "kB",
        Unit::Blocks => "8kB",
        Unit::Mb => "MB",
        Unit::Ms => "ms",
        Unit::S => "s",
    }
}

/// Whether a session may change `def` now (SET, RESET), with postgres's error when not.
fn check_changeable(def: &Def) -> PgResult<()> {
    let when = match def.context {
        Context::User => return Ok(()),
        Context::Postmaster => " without restarting the server",
        Context::Sighup => " now",
        Context::Internal => "",
    };
    Err(PgError::new(
        sqlstate::CANT_CHANGE_RUNTIME_PARAM,
        format!("parameter \"{}\" cannot be changed{when}", def.name),
    ))
}

/// Parses `64MB`, `8kB`, `1GB`, `100ms`, `5s`, `1min` or a bare number into `unit`.
fn parse_with_unit(v: &str, unit: Unit) -> Option<i64> {
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '-' || c == '+'))
        .unwrap_or(v.len());
    let (num, suffix) = v.split_at(split);
    let n: i64 = num.trim().parse().ok()?;
    let suffix = suffix.trim();
    if suffix.is_empty() {
        return Some(n);
    }
    let in_bytes = |mult: i64| -> Option<i64> {
        let bytes = n.checked_mul(mult)?;
        match unit {
            Unit::Kb => Some(bytes / 1024),
            Unit::Blocks => Some(bytes / 8192),
            Unit::Mb => Some(bytes >> 20),
            _ => None,
        }
    };
    let in_ms = |mult: i64| -> Option<i64> {
        let ms = n.checked_mul(mult)?;
        match unit {
            Unit::Ms => Some(ms),
            Unit::S => Some(ms / 1000),
            _ => None,
        }
    };
    match suffix {
        "B" => in_bytes(1),
        "kB" => in_bytes(1024),
        "MB" => in_bytes(1024 * 1024),
        "GB" => in_bytes(1024 * 1024 * 1024),
        "TB" => in_bytes(1024_i64.pow(4)),
        "us" => in_ms(1).map(|ms| ms / 1000),
        "ms" => in_ms(1),
        "s" => in_ms(1000),
        "min" => in_ms(60_000),
        "h" => in_ms(3_600_000),
        "d" => in_ms(86_400_000),
        _ => None,
    }
}

fn display(def: &Def, raw: &str) -> String {
    match def.kind {
        Kind::Int { unit, .. } => {
            let n: i64 = raw.parse().unwrap_or(0);
            match unit {
                Unit::Kb => show_memory(n * 1024),
                Unit::Blocks => show_memory(n * 8192),
                Unit::Mb => show_memory(n << 20),
                Unit::Ms => show_time_ms(n),
                Unit::S => show_time_ms(n * 1000),
                Unit::None => n.to_string(),
            }
        }
        _ => raw.to_string(),
    }
}

fn show_memory(bytes: i64) -> String {
    const UNITS: [(i64, &str); 4] = [
        (1 << 40, "TB"),
        (1 << 30, "GB"),
        (1 << 20, "MB"),
        (1 << 10, "kB"),
    ];
    for (size, name) in UNITS {
        if bytes != 0 && bytes % size == 0 {
            return format!("{}{}", bytes / size, name);
        }
    }
    format!("{bytes}B")
}

fn show_time_ms(ms: i64) -> String {
    if ms == 0 {
        return "0".into();
    }
    const UNITS: [(i64, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "min"),
        (1000, "s"),
    ];
    for (size, name) in UNITS {
        if ms % size == 0 {
            return format!("{}{}", ms / size, name);
        }
    }
    format!("{ms}ms")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_units_round_trip_as_postgres_shows_them() {
        let mut s = Settings::default();
        assert_eq!(s.show("shared_buffers").unwrap().1, "128MB");
        assert_eq!(s.show("work_mem").unwrap().1, "4MB");
        s.set("work_mem", "64MB", false).unwrap();
        assert_eq!(s.bytes("work_mem"), 64 << 20);
        s.set("shared_buffers", "1GB", true).unwrap();
        assert_eq!(s.int("shared_buffers"), 131072);
        assert!(s.set("shared_buffers", "1GB", false).is_err());
        assert_eq!(s.set("nope", "1", false).unwrap_err().code, "42704");
    }

    #[test]
    fn parsed_values_follow_set_and_reset() {
        let boot = Settings::default();
        let mut s = boot.clone();
        assert!(
            s.synchronous_commit()
                && !s.default_read_only()
                && s.default_isolation() != crate::Isolation::RepeatableRead
        );
        s.set("synchronous_commit", "false", false).unwrap();
        s.set("default_transaction_read_only", "yes", false)
            .unwrap();
        s.set("default_transaction_isolation", "SERIALIZABLE", false)
            .unwrap();
        assert_eq!(s.default_isolation(), crate::Isolation::Serializable);
        s.set("default_transaction_isolation", "Repeatable Read", false)
            .unwrap();
        s.set("statement_timeout", "2s", false).unwrap();
        assert!(
            !s.synchronous_commit()
                && s.default_read_only()
                && s.default_isolation() == crate::Isolation::RepeatableRead
        );
        assert_eq!(s.statement_timeout_ms(), 2000);
        s.set("synchronous_commit", "local", false).unwrap();
        assert!(s.synchronous_commit());
        s.set("default_transaction_isolation", "read uncommitted", false)
            .unwrap();
        assert!(s.default_isolation() != crate::Isolation::RepeatableRead);
        for name in ["default_transaction_read_only", "statement_timeout"] {
            s.reset(name, &boot).unwrap();
        }
        assert!(!s.default_read_only());
        assert_eq!(s.statement_timeout_ms(), 0);
    }

    #[test]
    fn range_errors_name_the_unit_as_postgres_does() {
        let mut s = Settings::default();
        let cases = [
            ("work_mem", "10", "10 kB", "(64 .. 2147483647)"),
            ("checkpoint_flush_after", "3MB", "384 8kB", "(0 .. 256)"),
            ("extra_float_digits", "5", "5", "(-15 .. 3)"),
            ("checkpoint_completion_target", "1.5", "1.5", "(0 .. 1)"),
        ];
        for (name, value, shown, range) in cases {
            assert_eq!(
                s.set(name, value, true).unwrap_err().message,
                format!("{shown} is outside the valid range for parameter \"{name}\" {range}")
            );
        }
        assert_eq!(s.show("checkpoint_completion_target").unwrap().1, "0.9");
        assert_eq!(s.show("checkpoint_flush_after").unwrap().1, "256kB");
        s.set("checkpoint_completion_target", " 0.25 ", true)
            .unwrap();
        assert_eq!(s.real("checkpoint_completion_target"), 0.25);
        assert_eq!(
            s.set("checkpoint_completion_target", "0.5", false)
                .unwrap_err()
                .code,
            "55P02"
        );
    }

    #[test]
    fn synchronous_commit_accepts_booleans() {
        let mut s = Settings::default();
        s.set("synchronous_commit", "false", false).unwrap();
        assert_eq!(s.raw("synchronous_commit"), "off");
        assert!(s.set("synchronous_commit", "maybe", false).is_err());
    }
}
