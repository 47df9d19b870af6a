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

use std::path::{Path, PathBuf};
use std::process::{ExitCode, ExitStatus};

use vari_client::ClientSettings;
use vari_core::metadata::VariantProperties;
use vari_install::{
    installer_indexes, HideOwn, InstallRequest, InstalledChoice, Installer, InstallerEnv,
    InstallerIndexes, InstallerKind, Origin,
};
use vari_proxy::ProxySettings;
use vari_select::{Outcome, Request, SelectError, Target};

use super::config;
use super::index_source::{
    client_settings_over, parse_requests, resolve_target, runtime, selection_options, session,
    Session,
};
use super::proxy::server_runtime;
use super::select::{nothing_fits, why};
use crate::cli::InstallArgs;
use crate::error::CliError;
use crate::output;
use crate::table::properties_text;

/// Installs (or with `--dry-run`, shows the choices).
pub(super) fn run(args: &InstallArgs) -> Result<ExitCode, CliError> {
    let config = config::load()?;
    let target = resolve_target(&args.target, &config)?;
    let python = target
        .python
        .interpreter
        .as_ref()
        .map(|i| i.executable.clone());
    let installer = Installer::find(
        args.installer.as_ref(),
        std::env::var_os("PATH").as_deref(),
        python.as_deref().unwrap_or(Path::new("python")),
        match args.dry_run {
            true => &[],
            false => &target.python.site_packages,
        },
    )
    .map_err(|e| CliError::Other(e.to_string()))?;
    let own = installer_indexes(
        installer.kind,
        &InstallerEnv::from_process(target.python.prefix().map(Path::to_path_buf)),
    )
    .map_err(|e| CliError::Other(e.to_string()))?;
    if !own.files.is_empty() {
        let files: Vec<String> = own.files.iter().map(|f| f.display().to_string()).collect();
        tracing::debug!(
            "{}'s configuration files: {}",
            installer.kind,
            files.join(", ")
        );
    }
    let client = sources(args, &config, &own, installer.kind)?;

    if args.dry_run {
        return dry_run(args, &config, client, target);
    }
    let Some(python) = python else {
        return Err(CliError::Other(
            "no Python environment to install into: the target is described (--python-version, \
             --python-platform) without an interpreter; give --python PATH, or use --dry-run"
                .to_owned(),
        ));
    };
    let uv_target = uv_target(args, installer.kind)?;
    // What stands in for the installer's own sources while it runs: the proxy reads those.
    let hidden = HiddenSources::new(installer.kind, &own)?;
    let request = InstallRequest {
        installer,
        python,
        requirements: args.requirements.clone(),
        args: args.installer_args.clone(),
        pre: args.index.pre,
        uv_target,
        hide: HideOwn {
            extra_indexes: own.extra_indexes,
            no_index: own.no_index,
            find_links: hidden.empty_find_links.clone(),
            uv_config: hidden.uv_config.clone(),
        },
    };
    let settings = ProxySettings {
        selection: selection_options(&config, &args.selection),
        ..ProxySettings::new(client.clone(), target.clone())
    };
    let outcome = server_runtime()?
        .block_on(vari_install::install(
            settings,
            &request,
            &target.python.site_packages,
        ))
        .map_err(|e| CliError::Other(e.to_string()))?;
    let reasons = reasons(
        &outcome.installed,
        args,
        &config,
        client.clone(),
        target.clone(),
    );
    let mut text = String::new();
    for (choice, why) in outcome.installed.iter().zip(reasons) {
        text.push_str(&choice_line(
            "installed",
            &choice.served.project,
            &choice.served.version,
            Some(choice.variant.label.as_str()),
            Some(&choice.variant.properties),
            why.as_deref().unwrap_or(&choice.served.why),
        ));
    }
    output::print(&text)?;
    let mut kept: Vec<Kept> = outcome
        .kept
        .iter()
        .map(|k| Kept {
            project: k.served.project.clone(),
            version: k.served.version.clone(),
            installed: k.installed.as_ref().map(|v| v.label.to_string()),
            chosen: k.served.label.clone().unwrap_or_default(),
        })
        .collect();
    // Installed in this run (a variant or not) or already named: not "kept".
    let reported: Vec<&str> = outcome
        .installed
        .iter()
        .map(|c| c.served.project.as_str())
        .chain(kept.iter().map(|k| k.project.as_str()))
        .chain(outcome.written.iter().map(String::as_str))
        .collect();
    // After a failure nothing was installed, and what is there was not "kept" by choice.
    if outcome.status.success() {
        let more = kept_requirements(args, &config, client.clone(), target.clone(), &reported);
        kept.extend(more);
    }
    for k in &kept {
        output::warn(&kept_text(k, request.installer.kind));
    }
    for s in &outcome.stale {
        output::warn(&stale_text(s, request.installer.kind));
    }
    if !outcome.status.success() {
        match outcome.upstream_failures.is_empty() {
            true => explain_failure(args, &config, client, target),
            // The installer says only that nothing matched: name what failed. Asking the
            // sources again to explain the choice would meet the same failure.
            false => upstream_failures(&outcome.upstream_failures),
        }
    }
    Ok(exit_code(outcome.status))
}

/// Files that stand in for the installer's own sources while it runs, in a temporary directory
/// removed afterwards: for pip, an empty find-links directory; for uv, its settings without
/// the sources its configuration files name.
struct HiddenSources {
    _dir: Option<tempfile::TempDir>,
    /// Removes the directory if vari is interrupted (it then exits without dropping `_dir`).
    _interrupt: Option<vari_fs::interrupt::Registration>,
    empty_find_links: Option<PathBuf>,
    uv_config: Option<PathBuf>,
}

impl HiddenSources {
    fn new(kind: InstallerKind, own: &InstallerIndexes) -> Result<Self, CliError> {
        let pip_links = kind == InstallerKind::Pip && !own.find_links.is_empty();
        let uv_config = own
            .uv_config
            .as_deref()
            .filter(|_| kind == InstallerKind::Uv);
        if !pip_links && uv_config.is_none() {
            return Ok(Self {
                _dir: None,
                _interrupt: None,
                empty_find_links: None,
                uv_config: None,
            });
        }
        let failed =
            |e: std::io::Error| CliError::Other(format!("cannot make a temporary directory: {e}"));
        let dir = tempfile::Builder::new()
            .prefix(vari_install::TEMPORARY_PREFIX)
            .tempdir()
            .map_err(failed)?;
        let interrupt = vari_fs::interrupt::remove_on_interrupt(dir.path().to_path_buf());
        let empty_find_links = match pip_links {
            true => {
                let empty = dir.path().join("empty-find-links");
                std::fs::create_dir(&empty).map_err(failed)?;
                Some(empty)
            }
            false => None,
        };
        let uv_config = match uv_config {
            Some(text) => {
                let path = dir.path().join("uv.toml");
                vari_fs::write_atomic(&path, text.as_bytes()).map_err(|e| {
                    CliError::Other(format!("{}: cannot write: {e}", path.display()))
                })?;
                Some(path)
            }
            None => None,
        };
        Ok(Self {
            _dir: Some(dir),
            _interrupt: Some(interrupt),
            empty_find_links,
            uv_config,
        })
    }
}

/// The sources the proxy reads: the command line's and vari.toml's over the installer's own
/// (which count only when the command line names none).
fn sources(
    args: &InstallArgs,
    config: &vari_config::Config,
    own: &InstallerIndexes,
    kind: InstallerKind,
) -> Result<ClientSettings, CliError> {
    let index = &args.index;
    let named = !index.index_url.is_empty()
        || !index.extra_index_url.is_empty()
        || !index.find_links.is_empty();
    let base = match named {
        true => ClientSettings {
            indexes: Vec::new(),
            ..ClientSettings::default()
        },
        false => own.client_settings(ClientSettings::default()),
    };
    let settings = client_settings_over(base.clone(), index, config)?;
    // Say where the packages come from when it is the installer's own choice.
    if !named && settings.indexes == base.indexes && settings.find_links == base.find_links {
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
        output::note(&format!("installing from {}", origins.join(", ")));
    }
    Ok(settings)
}

fn origin_text(origin: &Origin, kind: InstallerKind) -> String {
    match origin {
        Origin::Default => format!("{kind}'s default"),
        other => other.to_string(),
    }
}

/// `--python-version` and `--python-platform` for uv, which installs for a described target;
/// pip installs only for the interpreter it runs.
fn uv_target(args: &InstallArgs, kind: InstallerKind) -> Result<Vec<std::ffi::OsString>, CliError> {
    let mut given = Vec::new();
    if let Some(version) = &args.target.python_version {
        given.push("--python-version".into());
        given.push(version.into());
    }
    if let Some(platform) = &args.target.python_platform {
        given.push("--python-platform".into());
        given.push(platform.into());
    }
    if kind == InstallerKind::Pip && !given.is_empty() {
        return Err(CliError::Other(
            "--python-version/--python-platform: pip installs only for the Python it runs; use \
             --installer uv, or --dry-run to see the choices"
                .to_owned(),
        ));
    }
    Ok(given)
}

/// What `vari select` chooses for `requests` from the install's sources, for its target and
/// with its selection options; dependencies are left to the installer.
fn select(
    args: &InstallArgs,
    config: &vari_config::Config,
    client: ClientSettings,
    target: Target,
    requests: Vec<Request>,
    pre: bool,
) -> Result<(Session, Vec<Result<Outcome, SelectError>>), CliError> {
    let session = session(
        client,
        target,
        requests,
        config,
        &args.selection,
        pre,
        false,
    )?;
    let outcomes = session.select_all(&runtime()?);
    Ok((session, outcomes))
}

/// The choices `vari select` makes, one line each; nothing is installed.
fn dry_run(
    args: &InstallArgs,
    config: &vari_config::Config,
    client: ClientSettings,
    target: Target,
) -> Result<ExitCode, CliError> {
    let requests = parse_requests(&args.requirements)?;
    let (session, outcomes) = select(args, config, client, target, requests, args.index.pre)?;
    let mut text = String::new();
    for (request, outcome) in session.requests.iter().zip(outcomes) {
        match outcome.map_err(|e| CliError::Other(e.to_string()))? {
            Outcome::Skipped { marker } => {
                text.push_str(&format!(
                    "{request}: skipped (`{marker}` is false for the target)\n"
                ));
            }
            Outcome::Resolved(resolution) => {
                for warning in &resolution.warnings {
                    output::warn(warning);
                }
                let Some(chosen) = &resolution.chosen else {
                    output::print(&text)?;
                    return Err(CliError::Other(nothing_fits(
                        request,
                        &resolution,
                        &session.target,
                    )));
                };
                let label = chosen.label.as_ref().map(|l| l.to_string());
                text.push_str(&choice_line(
                    "would install",
                    resolution.name.as_str(),
                    &chosen.version.to_string(),
                    label.as_deref(),
                    None,
                    &why(&resolution, &session.target),
                ));
            }
        }
    }
    output::print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// A version left installed as another variant than the target's choice.
struct Kept {
    project: String,
    version: String,
    /// Its label, `None` for a plain wheel.
    installed: Option<String>,
    /// The label chosen for the target.
    chosen: String,
}

/// `vari-demo 1.0.0 was already installed as the plain wheel, …; the choice for this target
/// is variant cu128 (…)`.
fn kept_text(kept: &Kept, kind: InstallerKind) -> String {
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

/// The requirements whose distribution is installed, was not installed now and did not show in
/// the proxy's journal (the installer saw it satisfied and asked nothing), but is another
/// variant of the version `vari select` chooses for the target.
fn kept_requirements(
    args: &InstallArgs,
    config: &vari_config::Config,
    client: ClientSettings,
    target: Target,
    reported: &[&str],
) -> Vec<Kept> {
    let listing = vari_install::list_installed(&target.python.site_packages);
    let installed = |name: &str| {
        listing
            .distributions
            .iter()
            .find(|d| d.normalized_name() == name)
    };
    let requests: Vec<Request> = args
        .requirements
        .iter()
        .filter_map(|r| Request::parse(r).ok())
        .filter(|r| {
            let name = r.name().as_str();
            !reported.contains(&name) && installed(name).is_some()
        })
        .collect();
    if requests.is_empty() {
        return Vec::new();
    }
    let Ok((_, outcomes)) = select(args, config, client, target, requests, args.index.pre) else {
        return Vec::new();
    };
    let mut kept = Vec::new();
    for outcome in outcomes {
        let Ok(Outcome::Resolved(resolution)) = outcome else {
            continue;
        };
        let Some(chosen) = &resolution.chosen else {
            continue;
        };
        let Some(label) = &chosen.label else {
            continue;
        };
        let Some(dist) = installed(resolution.name.as_str()) else {
            continue;
        };
        let installed_label = dist.variant.as_ref().map(|v| v.label.to_string());
        if dist.version == chosen.version.to_string()
            && installed_label.as_deref() != Some(label.as_str())
        {
            kept.push(Kept {
                project: resolution.name.to_string(),
                version: dist.version.clone(),
                installed: installed_label,
                chosen: label.to_string(),
            });
        }
    }
    kept
}

/// `vari select`'s reason for each installed choice (`name==version`, from the same sources,
/// mostly from the HTTP cache by now), so that `install`, `install --dry-run` and `select` say
/// the same; `None` where it cannot be had or chose otherwise (the proxy's reason is used).
fn reasons(
    installed: &[InstalledChoice],
    args: &InstallArgs,
    config: &vari_config::Config,
    client: ClientSettings,
    target: Target,
) -> Vec<Option<String>> {
    let none = || vec![None; installed.len()];
    let requests: Option<Vec<Request>> = installed
        .iter()
        .map(|c| Request::parse(&format!("{}=={}", c.served.project, c.served.version)).ok())
        .collect();
    let Some(requests) = requests.filter(|r| !r.is_empty()) else {
        return none();
    };
    let Ok((session, outcomes)) = select(args, config, client, target, requests, true) else {
        return none();
    };
    installed
        .iter()
        .zip(outcomes)
        .map(|(choice, outcome)| match outcome {
            Ok(Outcome::Resolved(resolution))
                if resolution
                    .chosen
                    .as_ref()
                    .and_then(|c| c.label.as_ref())
                    .map(|l| l.as_str())
                    == Some(choice.variant.label.as_str()) =>
            {
                Some(why(&resolution, &session.target))
            }
            _ => None,
        })
        .collect()
}

/// `installed torch 2.10.0 variant cu128 (nvidia :: cuda_version_lower_bound :: 12.8): why`.
fn choice_line(
    verb: &str,
    name: &str,
    version: &str,
    label: Option<&str>,
    properties: Option<&VariantProperties>,
    why: &str,
) -> String {
    let variant = match label {
        Some(label) => format!(" variant {label}"),
        None => " (no variant)".to_owned(),
    };
    let properties = match properties {
        Some(p) if p.is_empty() => " (no properties)".to_owned(),
        Some(p) => format!(" ({})", properties_text(p).replace('\n', ", ")),
        None => String::new(),
    };
    format!("{verb} {name} {version}{variant}{properties}: {why}\n")
}

/// After the installer failed: for every requirement nothing fits, what would (the line
/// `vari select` prints), rather than only the installer's "no matching distribution".
fn explain_failure(
    args: &InstallArgs,
    config: &vari_config::Config,
    client: ClientSettings,
    target: Target,
) {
    // Requirements the installer takes but vari cannot parse (paths, URLs) are left out.
    let requests: Vec<Request> = args
        .requirements
        .iter()
        .filter_map(|r| Request::parse(r).ok())
        .collect();
    if requests.is_empty() {
        return;
    }
    let explained = (|| {
        let (session, outcomes) = select(args, config, client, target, requests, args.index.pre)?;
        for (request, outcome) in session.requests.iter().zip(outcomes) {
            if let Ok(Outcome::Resolved(resolution)) = outcome {
                if resolution.chosen.is_none() {
                    error_line(&nothing_fits(request, &resolution, &session.target));
                }
            }
        }
        Ok::<(), CliError>(())
    })();
    if let Err(e) = explained {
        tracing::debug!("could not explain the failure: {e}");
    }
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

/// `error: <message>` on stderr, as the command line's own errors are printed.
fn error_line(message: &str) {
    use owo_colors::OwoColorize;
    use std::io::Write;
    let mut err = anstream::stderr().lock();
    let _ = writeln!(
        err,
        "{} {}",
        "error:".red().bold(),
        crate::error::one_line(message)
    );
}

/// The installer's exit status as vari's (a signal as the shell reports it: 128 + N).
fn exit_code(status: ExitStatus) -> ExitCode {
    if let Some(code) = status.code() {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return ExitCode::from(u8::try_from(128 + signal).unwrap_or(1));
        }
    }
    ExitCode::FAILURE
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
