//! `vari install`: pip or uv installs through the proxy, and vari says which variant each
//! package was installed as, and why. Argument mapping and rendering only: the installer and
//! its indexes are `vari-install`'s, serving is `vari-proxy`'s, choosing `vari-select`'s.
//!
//! The proxy reads the sources the command line names (as for `vari select`), else those
//! vari.toml names, else the ones the installer would use on its own (its variables, pip's
//! configuration files, else PyPI); the installer sees the proxy alone. The target and the
//! selection options are `vari select`'s. The exit status is the installer's; when it fails,
//! the upstream failures the proxy met get an `error:` line each (naming the URL and the
//! cause), else each requirement nothing fits gets the explanation `vari select` gives. Only
//! what the installer wrote in this run is reported as installed.

use std::path::Path;
use std::process::ExitCode;

use vari_client::ClientSettings;
use vari_install::{InstallerIndexes, InstallerKind, KeptRequirement, Origin, Plan, PlanError};
use vari_proxy::ProxySettings;
use vari_select::{IndexOptions, ShownBecause};

use crate::cli::InstallArgs;
use crate::error::{error_line, CliError};
use crate::explain::{choice_line, chosen_text, nothing_fits, skipped_text, why, Choice, Choices};
use crate::output;
use crate::settings::{
    client_settings_over, environment_to_change, name_environment, names_sources, parse_requests,
    runtime, server_runtime, Selecting,
};

/// Installs (or with `--dry-run`, shows the choices).
pub(super) fn run(args: &InstallArgs) -> Result<ExitCode, CliError> {
    let selecting = Selecting::resolve(&args.target, &args.selection)?;
    // A dry run only shows the choices (as `vari select` does); anything else changes the
    // environment, which is refused unless the rule allows it, and named once the installer
    // is found.
    let environment = match args.dry_run {
        true => None,
        false => environment_to_change(&selecting.target, args.system)?,
    };
    let plan =
        Plan::find(args.installer.as_ref(), &selecting.target, args.dry_run).map_err(plan_error)?;
    name_environment(environment.as_ref());
    let sources = sources(args, &selecting.config, &plan)?;
    let kind = plan.installer.kind;
    // Dependencies are left to the installer.
    let options = selecting.index_options(args.index.pre, false);
    // Requests on a build family's name become the build the catalog chooses (`cupy` →
    // `cupy-cuda12x==14.2.0`; a build on an index of its own → that wheel by URL).
    let asked = through_families(&args.requirements, &sources, &selecting, &options)?;
    let requirements = all_requirements(&asked.requirements, args)?;
    if args.dry_run {
        // A build by URL was chosen already (its note says which).
        let on_indexes = asked.on_indexes(&requirements);
        return dry_run(args, &on_indexes, sources, &selecting, &options);
    }
    let (request, _hidden) = plan
        .request(
            &selecting.target,
            &selecting.target_settings,
            asked.requirements.clone(),
            args.installer_args.clone(),
            args.index.pre,
        )
        .map_err(plan_error)?;
    let settings = ProxySettings {
        selection: selecting.selection.clone(),
        // uv keeps the proxy's pages as long as it would keep the index's (the constant says
        // why), so a warm `vari install` asks the proxy no more than plain uv asks the index.
        page_ttl: vari_install::install_page_ttl(&sources),
        ..ProxySettings::new(sources.clone(), selecting.target.clone())
    };
    let target = &selecting.target;
    // One writer per environment, as `vari sync` (the lock is released when this returns).
    let _environment = vari_install::sync::lock_environment(
        target.python.prefix(),
        &target.python.site_packages,
        |path| eprintln!("{}", vari_install::sync::waiting_note(path)),
    )?;
    let server = server_runtime()?;
    // The installer's own output (what it resolves, downloads and installs) is its progress:
    // it streams to this terminal, and a bar of vari's drawn over it would garble both.
    let outcome = server.block_on(vari_install::install(
        settings,
        &request,
        &target.python.site_packages,
    ))?;
    // Why each was installed: the proxy's choice, worded as `vari select` words it (the journal
    // holds the reason as data, so nothing is selected again).
    let mut text = String::new();
    for choice in &outcome.installed {
        let why = match &choice.served.because {
            ShownBecause::Variant { because, needs } => chosen_text(because, needs, target),
            _ => choice.served.why.clone(),
        };
        text.push_str(&choice_line(
            "installed",
            &choice.served.project,
            &choice.served.version,
            Some(choice.variant.label.as_str()),
            Some(&choice.variant.properties),
            &why,
        ));
    }
    output::print(&text)?;
    let mut kept: Vec<KeptRequirement> = outcome
        .kept
        .iter()
        .map(|k| KeptRequirement {
            project: k.served.project.clone(),
            version: k.served.version.clone(),
            installed: k.installed.as_ref().map(|v| v.label.to_string()),
            chosen: k.served.label.clone().unwrap_or_default(),
        })
        .collect();
    // After a failure nothing was installed, and what is there was not "kept" by choice.
    if outcome.status.success() {
        let _spinner = crate::progress::Spinner::new(
            "checking the requirements the installer kept against the indexes",
        );
        kept.extend(server.block_on(vari_install::kept_requirements(
            sources.clone(),
            &asked.on_indexes(&requirements),
            target,
            &options,
            &target.python.site_packages,
            &outcome.asked(),
        )));
    }
    for k in &kept {
        output::warn(&kept_text(k, kind));
    }
    for s in &outcome.stale {
        output::warn(&stale_text(s, kind));
    }
    if !outcome.status.success() {
        match outcome.upstream_failures.is_empty() {
            true => {
                let unmet = server.block_on(vari_install::unmet(
                    sources,
                    &asked.on_indexes(&requirements),
                    target,
                    &options,
                ));
                for (request, resolution) in &unmet {
                    error_line(&nothing_fits(request, resolution, target));
                }
            }
            // The installer says only that nothing matched: name what failed. Asking the
            // sources again to explain the choice would meet the same failure.
            false => upstream_failures(&outcome.upstream_failures),
        }
    }
    Ok(ExitCode::from(outcome.exit_code()))
}

/// The requirements on the command line (`given`, after the family catalog), then those of the
/// requirements files the installer's arguments name (`-- -r req.txt`), so that each is judged
/// and explained alike.
fn all_requirements(given: &[String], args: &InstallArgs) -> Result<Vec<String>, CliError> {
    // The installer runs in this directory: its relative paths are this process's.
    let from_files = vari_install::requirements_in_args(&args.installer_args, Path::new(""))?;
    Ok(given.iter().cloned().chain(from_files).collect())
}

/// The command line's requirements after the build-family catalog.
struct Asked {
    /// What the installer is given: each request on a family's name replaced by its build.
    requirements: Vec<String>,
    /// Those that name a wheel by URL (a build on an index of its own): not on the proxy's
    /// sources, so not judged again there.
    by_url: Vec<String>,
}

impl Asked {
    /// `requirements` without those naming a wheel by URL.
    fn on_indexes(&self, requirements: &[String]) -> Vec<String> {
        requirements
            .iter()
            .filter(|r| !self.by_url.contains(r))
            .cloned()
            .collect()
    }
}

/// Each requirement on a build family's name replaced by the build the catalog chooses for the
/// target, with a note saying so (`vari select`'s rules: [`vari_select::choose_families`]): a
/// build published under its own name or extra becomes a requirement on it at the chosen version
/// (`cupy-cuda12x==14.2.0`), served through the proxy like any other; a build on an index of its
/// own becomes its chosen wheel by URL with its hash (`torch @ https://…/whl/cu128/torch-2.9.0%2Bcu128-….whl#sha256=…`),
/// so that the family's index serves that wheel and nothing else (its dependencies come from the
/// proxy's sources). A requirement on a build's own name, one whose family's index the command
/// line names, and every requirement under `--no-families` go to the installer as given.
fn through_families(
    given: &[String],
    sources: &ClientSettings,
    selecting: &Selecting,
    options: &IndexOptions,
) -> Result<Asked, CliError> {
    let unchanged = || Asked {
        requirements: given.to_vec(),
        by_url: Vec::new(),
    };
    let Some(catalog) = selecting.families.catalog()? else {
        return Ok(unchanged());
    };
    let requests = parse_requests(given)?;
    if !requests
        .iter()
        .any(|r| catalog.family(r.name().as_str()).is_some())
    {
        return Ok(unchanged());
    }
    let client = vari_client::IndexClient::new(sources.clone())?;
    let target = &selecting.target;
    let family_options = vari_family::FamilyOptions {
        selection: options.selection.clone(),
        pre: options.pre,
        ..vari_family::FamilyOptions::default()
    };
    let runtime = runtime()?;
    let found = runtime.block_on(vari_select::choose_families(
        &client,
        &catalog,
        &requests,
        target,
        &family_options,
    ))?;
    for note in &found.notes {
        output::note(note);
    }
    let mut asked = unchanged();
    for pick in found.picks {
        let request = &requests[pick.position];
        let original = request.as_str();
        let chosen_request = match vari_select::build_request(&pick.choice, request) {
            Some(Ok(chosen)) => chosen,
            Some(Err(e)) => return Err(e.into()),
            None => {
                return Err(CliError::Other(format!(
                    "{original}: {} (a build asked for by name, or --no-families, installs \
                     without the family catalog)",
                    pick.choice.why_nothing()
                )))
            }
        };
        let Some(chosen) = &pick.choice.chosen else {
            continue;
        };
        // The source's client holds the page the family chose from.
        let requirement = match (&pick.source, &pick.client) {
            (Some(source), Some(own)) => {
                let outcome = runtime
                    .block_on(vari_select::select(own, &chosen_request, target, options))
                    .map_err(|e| CliError::Other(format!("{original}: {e}")))?;
                let file = match &outcome {
                    vari_select::Outcome::Resolved(resolution) => {
                        resolution.chosen.as_ref().map(|c| c.file.clone())
                    }
                    vari_select::Outcome::Skipped { .. } => None,
                };
                let Some(file) = file else {
                    return Err(CliError::Other(format!(
                        "{original}: family {} chose build {} ({} {}), but {} has no wheel of it \
                         for this target",
                        pick.choice.family,
                        chosen.build,
                        chosen.requirement,
                        chosen.version,
                        source.url()
                    )));
                };
                let mut url = file.url.clone();
                if let Some(sha256) = file.hashes.sha256() {
                    url.set_fragment(Some(&format!("sha256={sha256}")));
                }
                let name = chosen_request.name().as_str();
                let extras = match chosen_request.extras() {
                    [] => String::new(),
                    extras => format!("[{}]", extras.join(",")),
                };
                let mut text = format!("{name}{extras} @ {url}");
                if let Some(marker) = chosen_request.marker() {
                    text.push_str(&format!(" ; {marker}"));
                }
                asked.by_url.push(text.clone());
                text
            }
            _ => chosen_request.as_str().to_owned(),
        };
        output::note(&format!(
            "{original}: the family catalog chose build {} ({} {}) for this target: installing \
             {requirement} (ask for a build by name, or give --no-families, to choose otherwise)",
            chosen.build, chosen.requirement, chosen.version
        ));
        asked.requirements[pick.position] = requirement;
    }
    Ok(asked)
}

/// A planning error as the command line words it, with the flags that would help.
fn plan_error(error: PlanError) -> CliError {
    CliError::Other(match error {
        PlanError::NoInterpreter => "no Python environment to install into: the target is \
                                     described (--python-version, --python-platform) without an \
                                     interpreter; give --python PATH, or use --dry-run"
            .to_owned(),
        PlanError::PipTargetsItsInterpreter => "--python-version/--python-platform: pip installs \
                                                only for the Python it runs; use --installer uv, \
                                                or --dry-run to see the choices"
            .to_owned(),
        other => other.to_string(),
    })
}

/// The sources the proxy reads: the command line's and vari.toml's over the installer's own
/// (which count only when the command line names none).
fn sources(
    args: &InstallArgs,
    config: &vari_config::Config,
    plan: &Plan,
) -> Result<ClientSettings, CliError> {
    let named = names_sources(&args.index);
    let base = plan.proxy_sources(named);
    let settings = client_settings_over(base.clone(), &args.index, config)?;
    // Say where the packages come from when it is the installer's own choice.
    if !named && settings.indexes == base.indexes && settings.find_links == base.find_links {
        output::note(&format!(
            "installing from {}",
            origins(&plan.own, plan.installer.kind)
        ));
    }
    Ok(settings)
}

/// The installer's own sources, each with where it was set.
fn origins(own: &InstallerIndexes, kind: InstallerKind) -> String {
    let origins: Vec<String> = own
        .indexes
        .iter()
        .map(|i| format!("{} ({})", i.value, origin_text(&i.origin, kind)))
        .chain(
            own.find_links
                .iter()
                .map(|f| format!("{} ({})", f.value.location(), origin_text(&f.origin, kind))),
        )
        .collect();
    origins.join(", ")
}

fn origin_text(origin: &Origin, kind: InstallerKind) -> String {
    match origin {
        Origin::Default => format!("{kind}'s default"),
        other => other.to_string(),
    }
}

/// The choices `vari select` makes, one line each (a requirement nothing fits gets its `error:`
/// line and makes the command fail); nothing is installed.
fn dry_run(
    args: &InstallArgs,
    requirements: &[String],
    sources: ClientSettings,
    selecting: &Selecting,
    options: &IndexOptions,
) -> Result<ExitCode, CliError> {
    let requests = parse_requests(requirements)?;
    let client = vari_client::IndexClient::new(sources)?;
    let target = &selecting.target;
    let spinner = crate::progress::Spinner::new(format!(
        "choosing for {} from the indexes",
        crate::table::count(requests.len(), "requirement")
    ));
    let outcomes =
        runtime()?.block_on(vari_select::select_all(&client, &requests, target, options));
    drop(spinner);
    let choices = Choices::new(&requests, outcomes, target);
    if args.json {
        let selections: Vec<serde_json::Value> = choices
            .items
            .iter()
            .map(|(request, choice)| choice.json(request, target))
            .collect();
        output::print_data(&output::json_text(
            &serde_json::json!({ "selections": selections }),
        ))?;
        return Ok(choices.status());
    }
    let mut text = String::new();
    for (request, choice) in &choices.items {
        match choice {
            Choice::Skipped { marker } => {
                text.push_str(&format!("{request}: {}\n", skipped_text(marker)));
            }
            Choice::Failed(_) => {}
            Choice::Chosen(resolution) => {
                let Some(chosen) = &resolution.chosen else {
                    continue;
                };
                let label = chosen.label.as_ref().map(|l| l.to_string());
                text.push_str(&choice_line(
                    "would install",
                    resolution.name.as_str(),
                    &chosen.version.to_string(),
                    label.as_deref(),
                    None,
                    &why(resolution, target),
                ));
            }
        }
    }
    output::print(&text)?;
    Ok(choices.status())
}

/// `vari-demo 1.0.0 was already installed as the plain wheel, …; the choice for this target
/// is variant cu128 (…)`.
fn kept_text(kept: &KeptRequirement, kind: InstallerKind) -> String {
    let installed = match &kept.installed {
        Some(label) => format!("variant {label}"),
        None => "the plain wheel (no variant)".to_owned(),
    };
    let flag = match kind {
        InstallerKind::Pip => "--force-reinstall",
        InstallerKind::Uv => "--reinstall",
    };
    format!(
        "{} {} was already installed as {installed}, and the installer kept it; the choice for \
         this target is variant {}: to replace it, give {kind} {flag} (after `--`)",
        kept.project, kept.version, kept.chosen,
    )
}

/// `vari-demo 1.0.0 was installed as variant cu126 from uv's cache, …; the choice for this
/// target is variant cu128: …`.
fn stale_text(stale: &vari_install::KeptDistribution, kind: InstallerKind) -> String {
    let installed = match &stale.installed {
        Some(variant) => format!("variant {}", variant.label),
        None => "the plain wheel (no variant)".to_owned(),
    };
    let refresh = match kind {
        InstallerKind::Uv => format!("--refresh-package {}", stale.served.project),
        InstallerKind::Pip => "--no-cache-dir".to_owned(),
    };
    format!(
        "{} {} was installed as {installed} from {kind}'s cache (kept from an earlier run, when \
         the index offered other files); the choice for this target is now variant {}: to get \
         it, give {kind} {refresh} (after `--`)",
        stale.served.project,
        stale.served.version,
        stale.served.label.as_deref().unwrap_or_default(),
    )
}

/// How many upstream failures get their own `error:` line; the rest are counted.
const SHOWN_FAILURES: usize = 5;

/// One `error:` line per upstream failure the proxy met while the installer asked (it failed
/// and cannot say why), naming the source's URL and what failed.
fn upstream_failures(failures: &[vari_proxy::UpstreamFailure]) {
    for failure in failures.iter().take(SHOWN_FAILURES) {
        let message = failure
            .message
            .strip_prefix("upstream: ")
            .unwrap_or(&failure.message);
        error_line(&printable(&format!(
            "the installer failed: cannot read the package index for {}: {message}",
            failure.what
        )));
    }
    if failures.len() > SHOWN_FAILURES {
        error_line(&format!(
            "and {} more upstream failures (see the log above)",
            failures.len() - SHOWN_FAILURES
        ));
    }
}

/// `text` with control characters escaped (`\u{1b}`): the upstream's words reach the terminal,
/// and an index must not be able to move the cursor or rewrite what was printed.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| match c.is_control() {
            true => c.escape_unicode().to_string(),
            false => c.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_words_cannot_steer_the_terminal() {
        assert_eq!(
            printable("http://x/simple/a/: 500 \u{1b}[2Jgone\r"),
            "http://x/simple/a/: 500 \\u{1b}[2Jgone\\u{d}"
        );
    }
}
