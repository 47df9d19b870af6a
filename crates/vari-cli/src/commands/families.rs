//! `vari families`: the build-family catalog (built-in and the user's files), one family's builds
//! and which fits this machine (or a profile), and the check of a catalog file. Rendering only:
//! the catalog, its rules and the ranking are `vari-family`'s.

use std::process::ExitCode;

use serde_json::{json, Value};
use vari_family::{rank_builds, verdict_text, Build, Catalog, Family, FamilyOptions, Verdict};

use crate::cli::{FamiliesArgs, FamiliesCheckArgs, FamiliesShowArgs};
use crate::error::CliError;
use crate::output;
use crate::settings::{load_config, read_catalog_file, FamilySettings, Selecting};
use crate::table::{Cell, Table};

/// `vari families`: every family, built-in and the user's.
pub(super) fn list(args: &FamiliesArgs) -> Result<ExitCode, CliError> {
    let config = load_config()?;
    let settings = FamilySettings::resolve(&args.catalog, &config)?;
    let Some(catalog) = settings.catalog()? else {
        if args.json {
            output::print_data(&output::json_text(
                &json!({ "families": [], "enabled": false }),
            ))?;
        } else {
            output::print("the build-family catalog is off (--no-families, VARI_NO_FAMILIES or no-families = true)\n")?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    if args.json {
        let families: Vec<Value> = catalog
            .families
            .iter()
            .map(|f| family_json(f, &catalog))
            .collect();
        output::print_data(&output::json_text(
            &json!({ "enabled": true, "families": families, "groups": catalog.groups }),
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["family", "layout", "builds", "from"]);
    for family in &catalog.families {
        let layouts: Vec<&str> = family.layouts().iter().map(|l| l.as_str()).collect();
        let builds: Vec<&str> = family.builds.iter().map(|b| b.name.as_str()).collect();
        table.row(vec![
            Cell::new(family.name.clone()),
            Cell::new(layouts.join(", ")),
            Cell::new(builds.join(" ")),
            Cell::new(family.origin.to_string()),
        ]);
    }
    let mut text = table.render(output::width());
    text.push_str(&format!(
        "\n{} families, {} groups; `vari families show NAME` for one family's builds\n",
        catalog.families.len(),
        catalog.groups.len()
    ));
    output::print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `vari families show NAME`: the builds and which fits the target.
pub(super) fn show(args: &FamiliesShowArgs) -> Result<ExitCode, CliError> {
    let selecting = Selecting::resolve(&args.target, &args.selection)?;
    let catalog = selecting.families.catalog()?.ok_or_else(|| {
        CliError::Other(
            "the build-family catalog is off (--no-families, VARI_NO_FAMILIES or no-families = \
             true)"
                .to_owned(),
        )
    })?;
    let family = catalog
        .family(&args.name)
        .or_else(|| catalog.family_of_distribution(&args.name))
        .ok_or_else(|| {
            CliError::Other(format!(
                "{}: no such family (`vari families` lists them)",
                args.name
            ))
        })?;
    let options = FamilyOptions {
        selection: selecting.selection.clone(),
        ..FamilyOptions::default()
    };
    let target = &selecting.target;
    let ranking = rank_builds(family, &target.hardware.profile, &target.markers, &options);
    let source = target.hardware.source.to_string();
    if args.json {
        let builds: Vec<Value> = ranking
            .builds
            .iter()
            .map(|report| {
                let build = family.build(&report.build);
                json!({
                    "build": report.build,
                    "requirement": report.distribution,
                    "fits": matches!(report.verdict, Verdict::Chosen | Verdict::RanksBelow { .. }),
                    "best": report.verdict == Verdict::Chosen,
                    "verdict": report.verdict,
                    "reason": verdict_text(&report.verdict),
                    "requires": report.requires,
                    "source": build.and_then(|b| b.source.as_ref()).map(|s| s.url().as_str()),
                    "local": build.and_then(|b| b.local.as_deref()),
                })
            })
            .collect();
        output::print_data(&output::json_text(&json!({
            "family": family_json(family, &catalog),
            "target": source,
            "best": ranking.chosen.as_ref().map(|c| c.build.as_str()),
            "builds": builds,
        })))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = family.name.clone();
    if let Some(summary) = &family.summary {
        text.push_str(&format!(": {summary}"));
    }
    text.push('\n');
    text.push_str(&format!(
        "  from: {}; `{}` on the default index: {}\n",
        family.origin,
        family.name,
        same_name_text(family)
    ));
    for doc in &family.docs {
        text.push_str(&format!("  layout documented at {doc}\n"));
    }
    let groups: Vec<String> = catalog
        .groups_of(&family.name)
        .map(|g| format!("{} ({})", g.name, g.families.join(", ")))
        .collect();
    if !groups.is_empty() {
        text.push_str(&format!("  takes one line with: {}\n", groups.join("; ")));
    }
    text.push_str(&format!("\nbuilds for {source}, best first:\n"));
    let mut table = Table::new(&["", "build", "install as", "from", "why"]);
    for report in &ranking.builds {
        let mark = match report.verdict {
            Verdict::Chosen => "✓",
            Verdict::RanksBelow { .. } => "·",
            _ => "✗",
        };
        let why = match &report.verdict {
            Verdict::Chosen => "best fit".to_owned(),
            Verdict::RanksBelow { rank } => format!("fits (rank {rank})"),
            other => verdict_text(other),
        };
        let from = family
            .build(&report.build)
            .map(source_text)
            .unwrap_or_default();
        table.row(vec![
            Cell::new(mark),
            Cell::new(report.build.clone()),
            Cell::new(report.distribution.clone()),
            Cell::new(from),
            Cell::new(why),
        ]);
    }
    text.push_str(&table.render(output::width()));
    if ranking.chosen.is_none() {
        text.push_str(&format!("\n{}\n", ranking.why_nothing()));
    }
    output::print(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `vari families check FILE`: reads the file and puts it over the built-in catalog.
pub(super) fn check(args: &FamiliesCheckArgs) -> Result<ExitCode, CliError> {
    let result = read_catalog_file(&args.file).and_then(|catalog| {
        let counts = (catalog.families.len(), catalog.groups.len());
        vari_family::layered(vari_family::builtin().clone(), vec![catalog])
            .map_err(|d| CliError::invalid(&args.file, Some(d.path), d.message))?;
        Ok(counts)
    });
    let file = args.file.display().to_string();
    match (result, args.json) {
        (Ok((families, groups)), true) => {
            output::print_data(&output::json_text(&json!({
                "file": file, "valid": true, "families": families, "groups": groups,
            })))?;
            Ok(ExitCode::SUCCESS)
        }
        (Ok((families, groups)), false) => {
            output::print(&format!(
                "{file}: valid: {families} families, {groups} groups\n"
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        (Err(CliError::Invalid(e)), true) => {
            output::print_data(&output::json_text(&json!({
                "file": file, "valid": false,
                "error": { "key": e.key, "message": e.message_with_line() },
            })))?;
            Ok(ExitCode::FAILURE)
        }
        (Err(e), _) => Err(e),
    }
}

fn same_name_text(family: &Family) -> &'static str {
    match family.same_name {
        vari_family::SameName::Build => "one of the builds",
        vari_family::SameName::SdistOnly => "source distributions only",
        vari_family::SameName::Unrelated => "an unrelated project",
        vari_family::SameName::Absent => "no such project",
    }
}

fn source_text(build: &Build) -> String {
    let mut text = match &build.source {
        Some(source) => source.url().to_string(),
        None => "default index".to_owned(),
    };
    if let Some(tag) = &build.local {
        text.push_str(&format!(" (+{tag})"));
    }
    text
}

fn family_json(family: &Family, catalog: &Catalog) -> Value {
    let layouts: Vec<&str> = family.layouts().iter().map(|l| l.as_str()).collect();
    let groups: Vec<&str> = catalog
        .groups_of(&family.name)
        .map(|g| g.name.as_str())
        .collect();
    let builds: Vec<Value> = family
        .builds
        .iter()
        .map(|b| {
            json!({
                "name": b.name,
                "layout": b.layout().as_str(),
                "requirement": b.requirement(),
                "distribution": b.distribution,
                "source": b.source.as_ref().map(|s| s.url().as_str()),
                "find_links": matches!(b.source, Some(vari_family::BuildSource::FindLinks(_))),
                "local": b.local,
                "extra": b.extra,
                "requires": b.requires.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "null": b.null,
                "line_from_requirements": b.line_from_requirements,
            })
        })
        .collect();
    json!({
        "name": family.name,
        "summary": family.summary,
        "origin": family.origin.to_string(),
        "same_name": family.same_name.as_str(),
        "docs": family.docs,
        "layouts": layouts,
        "groups": groups,
        "builds": builds,
    })
}
