//! Command line and `keel.conf`: builds the boot [`Settings`] as postgres does — defaults, then
//! the configuration file in the data directory, then command-line flags (which win).

use clap::Parser;
use keel_common::Settings;
use keel_wire::scram::Verifier;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Parser, Debug, Clone)]
#[command(
    name = "keel",
    version,
    about = "Keel, a PostgreSQL-compatible database server"
)]
pub struct Cli {
    /// Data directory (created if missing).
    #[arg(short = 'D', long = "data-dir", default_value = "keel-data")]
    pub data_dir: PathBuf,
    /// TCP port to listen on.
    #[arg(short = 'p', long = "port")]
    pub port: Option<u16>,
    /// Comma-separated addresses to listen on (`*` for all, `localhost`).
    #[arg(long = "listen", alias = "listen-addresses")]
    pub listen: Option<String>,
    /// Set a run-time parameter, as `postgres -c name=value` (repeatable).
    #[arg(short = 'c', value_name = "NAME=VALUE")]
    pub settings: Vec<String>,
}

pub const CONF_FILE: &str = "keel.conf";

/// Parses postgresql.conf syntax: `name = value` or `name value`, value optionally single-quoted
/// (`''` and backslash escapes inside quotes), `#` starts a comment outside quotes.
/// Returns (line number, name, value) triples.
pub fn parse_conf(text: &str) -> Result<Vec<(usize, String, String)>, String> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name_end = line
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-'))
            .unwrap_or(line.len());
        if name_end == 0 {
            return Err(format!(
                "syntax error in file \"{CONF_FILE}\" line {lineno}, near token \"{}\"",
                line.trim()
            ));
        }
        let name = &line[..name_end];
        let mut rest = line[name_end..].trim_start();
        if let Some(r) = rest.strip_prefix('=') {
            rest = r.trim_start();
        }
        let value = if let Some(q) = rest.strip_prefix('\'') {
            let mut v = String::new();
            let mut chars = q.chars();
            let mut closed = false;
            let mut after = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '\'' => {
                        let tail: String = chars.clone().collect();
                        if tail.starts_with('\'') {
                            v.push('\'');
                            chars.next();
                        } else {
                            closed = true;
                            after = tail;
                            break;
                        }
                    }
                    '\\' => match chars.next() {
                        Some('n') => v.push('\n'),
                        Some('t') => v.push('\t'),
                        Some(o) => v.push(o),
                        None => break,
                    },
                    o => v.push(o),
                }
            }
            if !closed {
                return Err(format!(
                    "unterminated quoted string in file \"{CONF_FILE}\" line {lineno}"
                ));
            }
            let after = after.trim();
            if !(after.is_empty() || after.starts_with('#')) {
                return Err(format!(
                    "syntax error in file \"{CONF_FILE}\" line {lineno}, near token \"{after}\""
                ));
            }
            v
        } else {
            let v = rest.split('#').next().unwrap_or("").trim();
            if v.is_empty() {
                return Err(format!(
                    "syntax error in file \"{CONF_FILE}\" line {lineno}, near end of line"
                ));
            }
            if v.contains(char::is_whitespace) {
                return Err(format!(
                    "syntax error in file \"{CONF_FILE}\" line {lineno}, near token \"{v}\""
                ));
            }
            v.to_string()
        };
        if name.eq_ignore_ascii_case("include") || name.starts_with("include_") {
            return Err(format!(
                "\"{name}\" directives in \"{CONF_FILE}\" are not supported (line {lineno})"
            ));
        }
        out.push((lineno, name.to_string(), value));
    }
    Ok(out)
}

/// The name under which keel.conf and `-c` give the server's password (or its SCRAM verifier).
/// It is not a setting: SQL cannot see it (see [`Boot::verifier`]).
pub const PASSWORD_NAME: &str = "keel_password";

/// What start-up reads from keel.conf and the command line.
#[derive(Debug)]
pub struct Boot {
    pub settings: Settings,
    /// The SCRAM verifier of `keel_password`, derived here; the password itself is dropped.
    /// Only authentication sees it: it is in no `Settings`, so SHOW, `current_setting` and
    /// SHOW ALL answer as for any unknown name (42704).
    pub verifier: Option<Arc<Verifier>>,
}

fn is_password(name: &str) -> bool {
    name.eq_ignore_ascii_case(PASSWORD_NAME)
}

/// Defaults, then `keel.conf` in `data_dir` (if present), then the command line.
pub fn build_settings(cli: &Cli, data_dir: &Path) -> Result<Boot, String> {
    let mut settings = Settings::default();
    let mut secret: Option<String> = None;
    let conf = data_dir.join(CONF_FILE);
    match std::fs::read_to_string(&conf) {
        Ok(text) => {
            for (lineno, name, value) in parse_conf(&text)? {
                if is_password(&name) {
                    secret = Some(value);
                    continue;
                }
                settings.set(&name, &value, true).map_err(|e| {
                    format!("{} in file \"{}\" line {lineno}", e.message, conf.display())
                })?;
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(format!(
                "could not open configuration file \"{}\": {e}",
                conf.display()
            ));
        }
    }
    for kv in &cli.settings {
        let (name, value) = kv
            .split_once('=')
            .ok_or_else(|| format!("-c {kv} requires a value"))?;
        // postgres accepts dashes for underscores in -c names.
        let name = name.trim().replace('-', "_");
        if is_password(&name) {
            secret = Some(value.to_string());
            continue;
        }
        settings
            .set(&name, value, true)
            .map_err(|e| e.into_report().message)?;
    }
    if let Some(port) = cli.port {
        settings
            .set("port", &port.to_string(), true)
            .map_err(|e| e.into_report().message)?;
    }
    if let Some(listen) = &cli.listen {
        settings
            .set("listen_addresses", listen, true)
            .map_err(|e| e.into_report().message)?;
    }
    let secret = secret.filter(|s| !s.is_empty());
    if settings.raw("auth_method") == "scram-sha-256" && secret.is_none() {
        return Err("auth_method = scram-sha-256 requires keel_password to be set".into());
    }
    Ok(Boot {
        settings,
        verifier: secret.map(|s| Arc::new(Verifier::from_secret(&s))),
    })
}

/// `listen_addresses` as host names to bind: `*` means every IPv4 and IPv6 address.
pub fn listen_hosts(listen_addresses: &str) -> Vec<String> {
    listen_addresses
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .flat_map(|h| match h {
            "*" => vec!["0.0.0.0".to_string(), "::".to_string()],
            other => vec![other.to_string()],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cli(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("keel").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn defaults() {
        let c = cli(&[]);
        assert_eq!(c.data_dir, PathBuf::from("keel-data"));
        let s = build_settings(&c, Path::new("/nonexistent-keel-dir"))
            .unwrap()
            .settings;
        assert_eq!(s.raw("port"), "5433");
        assert_eq!(s.raw("listen_addresses"), "127.0.0.1");
    }

    #[test]
    fn flags_and_dash_c() {
        let c = cli(&[
            "-D",
            "/tmp/x",
            "-p",
            "6000",
            "-c",
            "max_connections=300",
            "-c",
            "work_mem=64MB",
            "--listen",
            "*",
        ]);
        assert_eq!(c.data_dir, PathBuf::from("/tmp/x"));
        let s = build_settings(&c, Path::new("/nonexistent-keel-dir"))
            .unwrap()
            .settings;
        assert_eq!(s.int("port"), 6000);
        assert_eq!(s.int("max_connections"), 300);
        assert_eq!(s.bytes("work_mem"), 64 << 20);
        assert_eq!(
            listen_hosts(s.raw("listen_addresses")),
            vec!["0.0.0.0", "::"]
        );
        let c = cli(&["--data-dir", "d", "--port", "7"]);
        assert_eq!(c.data_dir, PathBuf::from("d"));
        assert_eq!(c.port, Some(7));
    }

    #[test]
    fn unknown_setting_is_an_error() {
        let e = build_settings(
            &cli(&["-c", "nonsense=1"]),
            Path::new("/nonexistent-keel-dir"),
        )
        .unwrap_err();
        assert_eq!(e, "unrecognized configuration parameter \"nonsense\"");
        assert!(build_settings(&cli(&["-c", "port"]), Path::new("/nonexistent-keel-dir")).is_err());
        assert!(
            build_settings(
                &cli(&["-c", "port=abc"]),
                Path::new("/nonexistent-keel-dir")
            )
            .is_err()
        );
    }

    #[test]
    fn conf_syntax() {
        let text = "# comment\n\nport = 6001   # trailing\nlisten_addresses='localhost, 127.0.0.1'\nwork_mem 8MB\nkeel_password = 'it''s \\'x\\''\n";
        let v = parse_conf(text).unwrap();
        assert_eq!(v[0], (3, "port".into(), "6001".into()));
        assert_eq!(
            v[1],
            (4, "listen_addresses".into(), "localhost, 127.0.0.1".into())
        );
        assert_eq!(v[2], (5, "work_mem".into(), "8MB".into()));
        assert_eq!(v[3], (6, "keel_password".into(), "it's 'x'".into()));
        assert!(parse_conf("port = 'open").is_err());
        assert!(parse_conf("port =").is_err());
        assert!(parse_conf("= 5").is_err());
        assert!(parse_conf("port = 5 6").is_err());
    }

    #[test]
    fn conf_then_flags() {
        let dir = std::env::temp_dir().join(format!("keel-conf-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(CONF_FILE), "port = 6001\nmax_connections = 50\n").unwrap();
        let s = build_settings(&cli(&[]), &dir).unwrap().settings;
        assert_eq!(s.int("port"), 6001);
        assert_eq!(s.int("max_connections"), 50);
        let s = build_settings(&cli(&["-p", "6002", "-c", "max_connections=60"]), &dir)
            .unwrap()
            .settings;
        assert_eq!(s.int("port"), 6002);
        assert_eq!(s.int("max_connections"), 60);
        std::fs::write(dir.join(CONF_FILE), "bogus = 1\n").unwrap();
        let Err(e) = build_settings(&cli(&[]), &dir) else {
            panic!("bogus setting accepted")
        };
        assert!(
            e.contains("unrecognized configuration parameter \"bogus\"") && e.contains("line 1"),
            "{e}"
        );
        std::fs::write(dir.join(CONF_FILE), "auth_method = 'scram-sha-256'\n").unwrap();
        assert!(build_settings(&cli(&[]), &dir).is_err());
        let b = build_settings(&cli(&["-c", "keel_password=pw"]), &dir).unwrap();
        assert_eq!(b.settings.raw("auth_method"), "scram-sha-256");
        assert!(b.verifier.is_some());
        // The password is in no setting.
        assert!(b.settings.show("keel_password").is_err());
        std::fs::write(
            dir.join(CONF_FILE),
            "auth_method = 'scram-sha-256'\nKEEL_PASSWORD = 'pw'\n",
        )
        .unwrap();
        assert!(build_settings(&cli(&[]), &dir).unwrap().verifier.is_some());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
