//! `vari config show`: the merged lasting preferences (`vari.toml`, `pyproject.toml`
//! `[tool.vari]`, `VARI_CONFIG`) and where each came from. Loading them, and how the selecting
//! commands apply them, is [`crate::settings`]'s.

use std::process::ExitCode;

use serde_json::{json, Map, Value};
use vari_config::{Config, Entry, Shown};

use crate::cli::ConfigShowArgs;
use crate::error::CliError;
use crate::output;
use crate::settings::load_config;
use crate::table::{Cell, Table};

/// Prints the merged settings and where each came from.
pub(super) fn show(args: &ConfigShowArgs) -> Result<ExitCode, CliError> {
    let config = load_config()?;
    let entries = config.entries();
    if args.json {
        output::print_data(&crate::output::json_text(&show_json(&config, &entries)))?;
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
