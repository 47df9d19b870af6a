//! `vari config show`, and the one place the CLI loads the lasting preferences (`vari.toml`,
//! `pyproject.toml` `[tool.vari]`, `VARI_CONFIG`) for the selecting commands.
//!
//! How a selecting command applies them (`vari rank` today; `select`, `proxy` and `install`
//! the same way): [`load`] once; the target's profile is the command line's `--profile` (or
//! `VARI_PROFILE`), else `--sysroot`, else [`vari_config::Config::profile`]; the selection
//! options are `config.selection(options from the command line)`, in which a list given on the
//! command line replaces the configured one; index options go through
//! [`vari_config::Config::client_settings`] before the command line's are applied.

use std::process::ExitCode;

use serde_json::{json, Map, Value};
use vari_config::{Config, ConfigError, Entry, Shown};

use crate::cli::ConfigShowArgs;
use crate::error::CliError;
use crate::output;
use crate::table::{Cell, Table};

/// The merged configuration of this process's environment and current directory; files that
/// were skipped are reported as warnings.
pub(crate) fn load() -> Result<Config, CliError> {
    let config = Config::from_process_env().map_err(config_error)?;
    for skipped in &config.warnings {
        output::warn(&format!("{skipped} (skipped)"));
    }
    Ok(config)
}

/// A configuration error as the CLI reports it: `FILE: KEY: MESSAGE (line N)`.
fn config_error(e: ConfigError) -> CliError {
    CliError::Invalid {
        message: e.message_with_line(),
        path: e.path,
        key: e.key,
    }
}

/// Prints the merged settings and where each came from.
pub(super) fn show(args: &ConfigShowArgs) -> Result<ExitCode, CliError> {
    let config = load()?;
    let entries = config.entries();
    if args.json {
        output::print_data(&super::json_text(&show_json(&config, &entries)))?;
    } else {
        output::print(&human(&config, &entries))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `{"settings": {KEY: {"value", "layer", "path"}}, "files": [{"layer", "path", "found"}]}`;
/// a key no file sets has `"layer": "default"` and `"path": null`.
fn show_json(config: &Config, entries: &[Entry]) -> Value {
    let mut settings = Map::new();
    for entry in entries {
        let (layer, path) = match entry.source {
            Some(source) => (
                json!(source.layer),
                json!(source.path.display().to_string()),
            ),
            None => (json!("default"), Value::Null),
        };
        settings.insert(
            entry.key.name().to_owned(),
            json!({ "value": entry.value, "layer": layer, "path": path }),
        );
    }
    let files: Vec<Value> = config
        .files
        .iter()
        .map(
            |f| json!({ "layer": f.layer, "path": f.path.display().to_string(), "found": f.found }),
        )
        .collect();
    json!({ "settings": settings, "files": files })
}

fn human(config: &Config, entries: &[Entry]) -> String {
    let mut table = Table::new(&["key", "value", "from"]);
    let default = owo_colors::Style::new().dimmed();
    for entry in entries {
        let value = match &entry.value {
            None => "(none: this machine)".to_owned(),
            Some(Shown::List(items)) if items.is_empty() => "(none)".to_owned(),
            Some(Shown::List(items)) => items.join("\n"),
            Some(other) => other.to_string(),
        };
        let row = match entry.source {
            Some(source) => vec![
                Cell::new(entry.key.name()),
                Cell::new(value),
                Cell::new(source.to_string()),
            ],
            None => vec![
                Cell::new(entry.key.name()).styled(default),
                Cell::new(value).styled(default),
                Cell::new("default").styled(default),
            ],
        };
        table.row(row);
    }
    let mut text = table.render(output::width());
    text.push('\n');
    if config.files.is_empty() {
        text.push_str("files: none looked for\n");
    } else {
        text.push_str("files, weakest first:\n");
        for file in &config.files {
            let state = if file.found { "" } else { " (not found)" };
            text.push_str(&format!(
                "  {:<12}{}{state}\n",
                file.layer.to_string(),
                file.path.display()
            ));
        }
    }
    text
}
