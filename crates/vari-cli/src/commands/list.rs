//! `vari list`: the distributions installed in the target Python environment with the variant
//! each one is. Argument mapping and rendering only: the target Python is `vari-python`'s one
//! answer, the listing is `vari-install`'s.

use std::process::ExitCode;

use owo_colors::Style;
use serde::Serialize;
use vari_install::{list_installed, Installed, InstalledDistribution};
use vari_python::{DiscoveryEnv, PythonRequest, ResolveOptions, TargetPython};

use crate::cli::ListArgs;
use crate::error::CliError;
use crate::output;
use crate::table::count;
use crate::table::{properties_text, Cell, Table};

/// The `--json` document, keys in the order `docs/reference/output.md` gives them.
#[derive(Serialize)]
struct ListJson<'a> {
    packages: Vec<Package<'a>>,
}

/// One entry of the `--json` `packages` list (`docs/reference/output.md`).
#[derive(Serialize)]
struct Package<'a> {
    name: &'a str,
    version: &'a str,
    /// `null` for a plain distribution.
    label: Option<&'a str>,
    /// `ns :: feature :: value` strings; empty for a plain distribution and the null variant.
    properties: Vec<String>,
}

impl<'a> From<&'a InstalledDistribution> for Package<'a> {
    fn from(dist: &'a InstalledDistribution) -> Self {
        Self {
            name: &dist.name,
            version: &dist.version,
            label: dist.variant.as_ref().map(|v| v.label.as_str()),
            properties: dist
                .variant
                .as_ref()
                .map(|v| v.property_list().iter().map(ToString::to_string).collect())
                .unwrap_or_default(),
        }
    }
}

/// Lists the target environment's distributions.
pub(super) fn run(args: &ListArgs) -> Result<ExitCode, CliError> {
    let python = target_python(args)?;
    tracing::debug!("target Python: {python}");
    tracing::debug!(
        "site-packages: {}",
        python
            .site_packages
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let installed = list_installed(&python.site_packages);
    for problem in &installed.problems {
        output::warn(&format!("{problem} (listed without a variant)"));
    }
    if args.json {
        let json = ListJson {
            packages: installed.distributions.iter().map(Package::from).collect(),
        };
        // Serialising strings and lists of strings cannot fail.
        let mut text = serde_json::to_string_pretty(&json).unwrap_or_default();
        text.push('\n');
        output::print_data(&text)?;
    } else {
        output::print(&human(&installed, &python))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The environment `--python` names, else the active one, else the `python3` on PATH. Listing
/// needs a real interpreter: no version is assumed when none is found.
fn target_python(args: &ListArgs) -> Result<TargetPython, CliError> {
    let request = PythonRequest {
        python: args.python.clone(),
        ..PythonRequest::default()
    };
    vari_python::resolve(
        &request,
        &DiscoveryEnv::from_process(),
        &vari_select::host_platform(),
        &ResolveOptions::from_process_env(),
    )
    .map_err(|e| CliError::Other(format!("{e} (see --python)")))
}

fn human(installed: &Installed, python: &TargetPython) -> String {
    let variants = installed
        .distributions
        .iter()
        .filter(|d| d.variant.is_some())
        .count();
    let prefix = python
        .prefix()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let mut text = format!(
        "{}, {} in {prefix} (Python {})\n",
        count(installed.distributions.len(), "distribution"),
        count(variants, "variant"),
        python.version.full()
    );
    if installed.distributions.is_empty() {
        return text;
    }
    text.push('\n');
    let mut table = Table::new(&["name", "version", "label", "properties"]);
    let label_style = Style::new().green().bold();
    for dist in &installed.distributions {
        let (label, properties) = match &dist.variant {
            Some(v) => (
                Cell::new(v.label.as_str()).styled(label_style),
                Cell::new(properties_text(&v.properties)),
            ),
            None => (Cell::new(""), Cell::new("")),
        };
        table.row(vec![
            Cell::new(dist.name.as_str()),
            Cell::new(dist.version.as_str()),
            label,
            properties,
        ]);
    }
    text.push_str(&table.render(output::width()));
    text
}
