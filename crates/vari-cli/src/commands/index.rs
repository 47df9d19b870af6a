//! `vari index build` and `vari index validate`: thin front-ends over `vari-publish`.

use std::process::ExitCode;

use serde_json::json;
use vari_publish::{
    BuildOptions, BuildStats, Destination, FilePlacement, HttpSite, LocalSite, Progress, Severity,
    ValidationReport,
};

use crate::cli::{IndexBuildArgs, IndexValidateArgs};
use crate::error::CliError;
use crate::output;
use crate::output::json_text;

/// A progress bar on stderr while wheels are read; drawn only when stderr is a terminal, so logs
/// and pipes stay clean.
struct Bar(crate::progress::Count);

impl Bar {
    fn new() -> Self {
        Self(crate::progress::Count::hidden())
    }
}

impl Progress for Bar {
    fn start(&self, total: u64) {
        self.0.start("reading files", total);
    }

    fn advance(&self) {
        self.0.inc();
    }

    fn finish(&self) {
        self.0.finish();
    }
}

/// Builds or updates a static index.
pub(super) fn build(args: &IndexBuildArgs) -> Result<ExitCode, CliError> {
    let placement = match (&args.base_url, args.copy) {
        (Some(url), _) => FilePlacement::External {
            base_url: url.to_string(),
        },
        (None, true) => FilePlacement::Copy,
        (None, false) => FilePlacement::HardLink,
    };
    let destination = Destination::parse(args.output.as_os_str())?;
    let bar = Bar::new();
    let options = BuildOptions {
        input: args.dir.clone(),
        destination: destination.clone(),
        placement,
        progress: &bar,
    };
    let stats = vari_publish::build(&options)?;
    for skipped in &stats.skipped {
        output::warn(&format!(
            "{}: not published: {}",
            skipped.path.display(),
            skipped.reason
        ));
    }
    for warning in &stats.warnings {
        output::warn(warning);
    }
    if args.json {
        output::print_data(&json_text(&summary_json(&stats)))?;
    } else {
        output::print(&summary_text(&stats, &destination))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn summary_json(stats: &BuildStats) -> serde_json::Value {
    let skipped: Vec<serde_json::Value> = stats
        .skipped
        .iter()
        .map(|s| json!({"path": s.path.display().to_string(), "reason": s.reason}))
        .collect();
    json!({
        "projects": stats.projects,
        "files": stats.files,
        "variants_json": stats.variants_json,
        "read": stats.read,
        "reused": stats.reused,
        "written": stats.written,
        "removed": stats.removed,
        "skipped": skipped,
    })
}

fn summary_text(stats: &BuildStats, site: &Destination) -> String {
    format!(
        "built {}: {} project(s), {} file(s), {} variants.json\n  read {} file(s), reused {} unchanged; wrote {} site file(s), removed {}\n",
        site,
        stats.projects,
        stats.files,
        stats.variants_json.len(),
        stats.read,
        stats.reused,
        stats.written,
        stats.removed,
    )
}

/// Checks a site; exit 1 when any problem is an error.
pub(super) fn validate(args: &IndexValidateArgs) -> Result<ExitCode, CliError> {
    let options = vari_publish::ValidateOptions {
        for_uv: args.for_installer == Some(crate::cli::Installer::Uv),
    };
    let report = match http_url(&args.site) {
        Some(url) => {
            HttpSite::new(url).and_then(|site| vari_publish::validate_with(&site, &options))
        }
        None => {
            LocalSite::new(&args.site).and_then(|site| vari_publish::validate_site(&site, &options))
        }
    }?;
    for problem in &report.problems {
        let location = match &problem.key {
            Some(key) => format!("{}: {key}", problem.file),
            None => problem.file.clone(),
        };
        let line = format!("{location}: {}", problem.message);
        match problem.severity {
            Severity::Error => error_line(&line),
            Severity::Warning => output::warn(&line),
        }
    }
    if args.json {
        output::print_data(&json_text(&report_json(&report)))?;
    } else {
        let errors = count(&report, Severity::Error);
        let verdict = if errors == 0 { "ok" } else { "invalid" };
        output::print(&format!(
            "{verdict} {}: {} project(s), {} file(s), {errors} error(s), {} warning(s)\n",
            args.site.display(),
            report.projects,
            report.files,
            count(&report, Severity::Warning),
        ))?;
    }
    Ok(if report.has_errors() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The argument as a URL when it is one (`http://` or `https://`); a directory otherwise.
fn http_url(site: &std::path::Path) -> Option<&str> {
    let text = site.to_str()?;
    let scheme = text.split_once("://")?.0;
    (scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")).then_some(text)
}

/// `error: <line>` on stderr, for a problem that does not stop the command (the others are
/// printed by `main` from the returned error).
fn error_line(message: &str) {
    use owo_colors::OwoColorize;
    use std::io::Write as _;
    // stderr is best effort: there is nowhere left to report a failure to write to it.
    let _ = writeln!(
        anstream::stderr().lock(),
        "{} {}",
        "error:".red().bold(),
        crate::error::one_line(message)
    );
}

fn count(report: &ValidationReport, severity: Severity) -> usize {
    report
        .problems
        .iter()
        .filter(|p| p.severity == severity)
        .count()
}

fn report_json(report: &ValidationReport) -> serde_json::Value {
    let problems: Vec<serde_json::Value> = report
        .problems
        .iter()
        .map(|p| {
            json!({
                "severity": match p.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                },
                "file": p.file,
                "key": p.key,
                "message": p.message,
            })
        })
        .collect();
    json!({
        "ok": !report.has_errors(),
        "projects": report.projects,
        "files": report.files,
        "problems": problems,
    })
}
