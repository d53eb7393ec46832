//! The optional configuration file, `--config leadtrack.toml` (or `LEADTRACK_CONFIG`).
//!
//! Its keys are the long names of the server's settings, the global ones and those of
//! `serve` and `worker` (`addr = "0.0.0.0:8080"`, `log-format = "json"`,
//! `trust-forwarded-for = true`, `rate-limit-ip = "off"`, ...): whatever a flag or an
//! environment variable sets. A value from the file takes the place of the setting's
//! default, so the order is: flags, then environment variables, then the file, then the
//! defaults. A key that names no setting is an error that names it.
//!
//! Kept by hand rather than layered with figment or config: the file's values become clap's
//! defaults, so one parser keeps the order above, validates a file's value with the flag's
//! own parser and error message, and `config check` reads where each value came from off
//! clap's `ValueSource`. A layering crate would need a second, serde-typed copy of every
//! option, and its own errors.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, CommandFactory, FromArgMatches};

use crate::Failure;
use crate::cli::Cli;

/// The flag, and the environment variable, that name the file.
const FLAG: &str = "--config";
const ENV: &str = "LEADTRACK_CONFIG";

/// The subcommands whose options the file may set, besides the global ones.
const SCOPES: [&str; 2] = ["serve", "worker"];

/// Settings never worth a file entry: how the process is asked, not how it runs.
const NOT_SETTINGS: [&str; 3] = ["config", "help", "version"];

/// The command line as parsed, with the file's values in place of the defaults.
pub(crate) struct Parsed {
    /// The settings.
    pub(crate) cli: Cli,
    /// Where each came from, for `config check`.
    pub(crate) matches: ArgMatches,
    /// The file read, and the keys it set.
    pub(crate) file: Option<(PathBuf, Vec<String>)>,
}

/// Parses `argv` (the process's arguments) with the configuration file it names, if any.
/// clap's own errors (usage, `--help`) exit the process as clap does; a bad file is a
/// [`Failure`].
pub(crate) fn parse(argv: Vec<OsString>) -> Result<Parsed, Failure> {
    let mut command = Cli::command();
    let file = match config_path(&argv) {
        Some(path) => {
            let table = read(&path)?;
            let mut keys = Vec::new();
            for (key, value) in &table {
                let value = value_text(&path, key, value)?;
                command = set_default(command, &path, key, value)?;
                keys.push(key.clone());
            }
            Some((path, keys))
        }
        None => None,
    };
    let matches = command.get_matches_from(argv);
    let cli = Cli::from_arg_matches(&matches).map_err(|err| Failure(err.to_string()))?;
    Ok(Parsed { cli, matches, file })
}

/// The file `--config PATH`, `--config=PATH` or `LEADTRACK_CONFIG` names (the flag wins).
fn config_path(argv: &[OsString]) -> Option<PathBuf> {
    let mut args = argv.iter().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--" {
            break;
        }
        if arg == FLAG {
            return args.next().map(PathBuf::from);
        }
        if let Some(value) = arg.to_str().and_then(|arg| arg.strip_prefix("--config=")) {
            return Some(PathBuf::from(value));
        }
    }
    std::env::var_os(ENV)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
}

/// The file's table.
fn read(path: &Path) -> Result<toml::Table, Failure> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|err| Failure(format!("cannot read the configuration file {shown}: {err}")))?;
    text.parse::<toml::Table>()
        .map_err(|err| Failure(format!("{shown} is not valid TOML: {}", err.message())))
}

/// A value as a command line would give it: text as it is, numbers and booleans written
/// out, a list joined by commas (`connections = [1, 16]`).
fn value_text(path: &Path, key: &str, value: &toml::Value) -> Result<String, Failure> {
    Ok(match value {
        toml::Value::String(text) => text.clone(),
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::Float(x) => x.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Array(items) => items
            .iter()
            .map(|item| value_text(path, key, item))
            .collect::<Result<Vec<_>, _>>()?
            .join(","),
        toml::Value::Datetime(_) | toml::Value::Table(_) => {
            return Err(Failure(format!(
                "{}: `{key}` takes a string, a number or true/false",
                path.display()
            )));
        }
    })
}

/// `command` with the setting `key` defaulting to `value`, wherever the setting is (the
/// global options, `serve`, `worker`). Errors: no setting is called `key`.
fn set_default(
    command: clap::Command,
    path: &Path,
    key: &str,
    value: String,
) -> Result<clap::Command, Failure> {
    let id_in = |command: &clap::Command| {
        command
            .get_arguments()
            .find(|arg| arg.get_long() == Some(key))
            .map(|arg| arg.get_id().to_string())
    };
    check_value(&command, path, key, &value)?;
    let mut found = false;
    let mut command = command;
    if let Some(id) = id_in(&command).filter(|id| !NOT_SETTINGS.contains(&id.as_str())) {
        let value = value.clone();
        command = command.mut_arg(id, |arg| arg.default_value(value));
        found = true;
    }
    for scope in SCOPES {
        let id = command.find_subcommand(scope).and_then(id_in);
        if let Some(id) = id {
            let value = value.clone();
            command = command
                .mut_subcommand(scope, |sub| sub.mut_arg(id, |arg| arg.default_value(value)));
            found = true;
        }
    }
    if found {
        Ok(command)
    } else {
        Err(Failure(format!(
            "{}: unknown key `{key}`; the keys are the long names of the settings (`server \
             serve --help` lists them, e.g. `addr`, `log-format`)",
            path.display()
        )))
    }
}

/// Checks `value` as the setting `key` would parse it, so that a bad value is reported
/// with the file and the key rather than as a flag's.
fn check_value(
    command: &clap::Command,
    path: &Path,
    key: &str,
    value: &str,
) -> Result<(), Failure> {
    let Some(arg) = command
        .get_arguments()
        .find(|arg| arg.get_long() == Some(key))
    else {
        return Ok(());
    };
    let bad = |reason: &str| Err(Failure(format!("{}: `{key}`: {reason}", path.display())));
    if matches!(arg.get_action(), ArgAction::SetTrue) {
        return if value == "true" || value == "false" {
            Ok(())
        } else {
            bad("takes true or false")
        };
    }
    let probe = command
        .clone()
        .try_get_matches_from(["server", &format!("--{key}"), value]);
    match probe {
        Err(err)
            if matches!(
                err.kind(),
                ErrorKind::InvalidValue | ErrorKind::ValueValidation
            ) =>
        {
            let message = err.to_string();
            let first = message.lines().next().unwrap_or_default();
            bad(first.strip_prefix("error: ").unwrap_or(first))
        }
        _ => Ok(()),
    }
}

/// Whether a setting's value must not be shown: a secret, or a URL with a password.
fn masked(id: &str, value: &str) -> String {
    let secret = ["secret", "password", "token", "key"]
        .iter()
        .any(|word| id.contains(word) && !id.starts_with("rate_limit"));
    if secret {
        return "********".to_owned();
    }
    // scheme://user:password@host/...: the password goes.
    if let Some((scheme, rest)) = value.split_once("://")
        && let Some((userinfo, host)) = rest.split_once('@')
        && let Some((user, _)) = userinfo.split_once(':')
    {
        return format!("{scheme}://{user}:********@{host}");
    }
    value.to_owned()
}

/// `server config check`: the effective settings of `serve` (and the global ones), each
/// with where it came from, as TOML a file could hold; secrets masked.
pub(crate) fn check(parsed: &Parsed) {
    let from_file = |id: &str| {
        parsed
            .file
            .as_ref()
            .is_some_and(|(_, keys)| keys.iter().any(|key| key.replace('-', "_") == id))
    };
    if let Some((path, keys)) = &parsed.file {
        say!("# {}: {} settings, valid", path.display(), keys.len());
    } else {
        say!("# no configuration file (--config FILE or LEADTRACK_CONFIG)");
    }
    let command = Cli::command();
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        let Some(long) = arg.get_long() else { continue };
        if NOT_SETTINGS.contains(&id) {
            continue;
        }
        let Some(raw) = parsed.matches.get_raw(id) else {
            say!("# {long}: not set");
            continue;
        };
        let value = raw
            .map(|value| value.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(",");
        let masked = masked(id, &value);
        // Numbers and true/false as TOML writes them, the rest as strings.
        let shown = match masked.parse::<i64>() {
            Ok(n) => n.to_string(),
            Err(_) if masked == "true" || masked == "false" => masked,
            Err(_) => toml::Value::String(masked).to_string(),
        };
        let source = match parsed.matches.value_source(id) {
            Some(ValueSource::CommandLine) => "flag",
            Some(ValueSource::EnvVariable) => "environment",
            Some(ValueSource::DefaultValue) if from_file(id) => "file",
            _ => "default",
        };
        say!("{long} = {shown}  # {source}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_and_url_passwords_are_masked() {
        assert_eq!(masked("webhook_secret", "whsec_1"), "********");
        assert_eq!(
            masked("db", "postgres://lt:hunter2@db.internal/leadtrack"),
            "postgres://lt:********@db.internal/leadtrack"
        );
        assert_eq!(
            masked("db", "/var/lib/leadtrack.db"),
            "/var/lib/leadtrack.db"
        );
        assert_eq!(masked("rate_limit_key", "600:100"), "600:100");
    }

    #[test]
    fn the_config_flag_wins_over_the_environment_and_ends_at_a_double_dash() {
        let argv = |args: &[&str]| args.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            config_path(&argv(&["server", "--config", "a.toml", "serve"])),
            Some(PathBuf::from("a.toml"))
        );
        assert_eq!(
            config_path(&argv(&["server", "serve", "--config=b.toml"])),
            Some(PathBuf::from("b.toml"))
        );
    }
}
