//! `vari detect --class`: which configured machine class this machine matches, for a
//! provisioning script choosing a node's index URL. The rule is vari-select's
//! ([`vari_select::match_class`]); this maps the arguments and words the answer.

use std::process::ExitCode;

use vari_select::{match_class, ClassMatch, ClassProfile, ClassReport, MachineClass, Target};

use crate::classes::classes;
use crate::cli::DetectArgs;
use crate::error::CliError;
use crate::output;
use crate::settings::{class_target, configured_target_settings, load_config, target_error};

/// Compares this machine (or the profile or snapshot given) with the classes and prints the
/// one it matches; an error naming each class's first mismatch when none does.
pub(super) fn run(args: &DetectArgs) -> Result<ExitCode, CliError> {
    let config = load_config()?;
    // A bare `--class` (an empty value) asks for the configured classes.
    let given: Vec<String> = args
        .classes
        .iter()
        .filter(|c| !c.is_empty())
        .cloned()
        .collect();
    let classes = classes(&given, "--class", &config)?;
    if classes.is_empty() {
        return Err(CliError::Other(
            "no machine classes to match: give --class [NAME=]PROFILE, or set [proxy.targets] \
             in vari.toml"
                .to_owned(),
        ));
    }
    let mut settings = configured_target_settings(&args.target, None)?;
    settings.use_cache = !args.no_cache;
    let machine = Target::resolve(&settings).map_err(target_error)?;
    let targets: Vec<Target> = classes
        .iter()
        .map(|class| class_target(class, &args.target))
        .collect::<Result<_, _>>()?;
    let compared: Vec<ClassProfile> = classes
        .iter()
        .zip(&targets)
        .map(|(class, target)| ClassProfile {
            name: class.name.as_str(),
            profile: &target.hardware.profile,
        })
        .collect();
    let report = match_class(&machine.hardware.profile, &compared);
    let url = |name: &str| {
        args.proxy_url
            .as_ref()
            .map(|base| format!("{}/t/{name}/simple/", base.as_str().trim_end_matches('/')))
    };
    let matched = match &report.matched {
        ClassMatch::Matched(name) => Some(name.as_str()),
        _ => None,
    };
    if args.json {
        let document = serde_json::json!({
            "class": matched,
            "index_url": matched.and_then(url),
            "machine": machine.hardware.source.to_string(),
            "classes": report.fits,
        });
        output::print_data(&format!("{document}\n"))?;
    }
    let Some(name) = matched else {
        return Err(CliError::Other(no_match(&report, &classes, &machine)));
    };
    if !args.json {
        output::print_data(&format!(
            "{}\n",
            url(name).unwrap_or_else(|| name.to_owned())
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Why no class matches, on one line: each class's first mismatch.
fn no_match(report: &ClassReport, classes: &[MachineClass], machine: &Target) -> String {
    let source = &machine.hardware.source;
    if let ClassMatch::Ambiguous(names) = &report.matched {
        return format!(
            "{source} fits machine classes {} equally well (their profiles declare as many \
             properties): give the classes distinct profiles",
            names.join(" and ")
        );
    }
    let reasons: Vec<String> = report
        .fits
        .iter()
        .zip(classes)
        .map(|(fit, class)| {
            let first = match (fit.platform.first(), fit.missing.first()) {
                (Some(platform), _) => platform.clone(),
                (None, Some(missing)) => format!("lacks {missing}"),
                (None, None) => String::new(),
            };
            let more = (fit.platform.len() + fit.missing.len()).saturating_sub(1);
            let more = match more {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            let source = class
                .source
                .as_ref()
                .map(|s| s.path().display().to_string())
                .unwrap_or_default();
            format!("{} ({source}): {first}{more}", fit.name)
        })
        .collect();
    format!("{source} matches no machine class: {}", reasons.join("; "))
}
