//! What every command that selects from indexes for a list of requirements (`select`,
//! `download`, `install --dry-run`) says about each: its choice, the marker that skips it, or
//! its own error, in the order given. One requirement failing does not hide the others: each
//! failure gets its `error:` line (with the explanation of what would fit), the others their
//! choice, and the command exits non-zero when any failed ([`Choices::status`]).
//!
//! The JSON shape of one requirement ([`Choice::json`]) is shared, so that `select --json`,
//! `download --json` and `install --dry-run --json` can be read by the same code.

use std::process::ExitCode;

use serde_json::{json, Value};
use vari_select::{Outcome, Request, Resolution, SelectError, Target};

use crate::error::error_line;
use crate::explain::{nothing_fits, unfit_text, why};
use crate::output;

/// What became of one requirement.
pub(crate) enum Choice {
    /// A wheel was chosen (`resolution.chosen` is set).
    Chosen(Box<Resolution>),
    /// Its marker is false for the target.
    Skipped {
        /// The marker.
        marker: String,
    },
    /// Nothing fits, or the sources could not be read: the `error:` line's text.
    Failed(String),
}

/// Every requirement with what became of it, in the order given.
pub(crate) struct Choices<'a> {
    pub(crate) items: Vec<(&'a Request, Choice)>,
}

impl<'a> Choices<'a> {
    /// Sorts each outcome into a [`Choice`], printing the selector's warnings as they come.
    pub(crate) fn new(
        requests: &'a [Request],
        outcomes: Vec<Result<Outcome, SelectError>>,
        target: &Target,
    ) -> Self {
        let items = requests
            .iter()
            .zip(outcomes)
            .map(|(request, outcome)| (request, Choice::new(request, outcome, target)))
            .collect();
        Self { items }
    }

    /// The chosen resolutions, with their requests.
    pub(crate) fn chosen(&self) -> impl Iterator<Item = (&'a Request, &Resolution)> {
        self.items
            .iter()
            .filter_map(|(request, choice)| match choice {
                Choice::Chosen(resolution) => Some((*request, resolution.as_ref())),
                _ => None,
            })
    }

    /// Prints one `error:` line per failed requirement, and says how the command ends: failure
    /// when any requirement failed.
    pub(crate) fn status(&self) -> ExitCode {
        let mut failed = false;
        for (_, choice) in &self.items {
            if let Choice::Failed(message) = choice {
                error_line(message);
                failed = true;
            }
        }
        match failed {
            true => ExitCode::FAILURE,
            false => ExitCode::SUCCESS,
        }
    }
}

impl Choice {
    fn new(request: &Request, outcome: Result<Outcome, SelectError>, target: &Target) -> Self {
        match outcome {
            Err(e) => Choice::Failed(e.to_string()),
            Ok(Outcome::Skipped { marker }) => Choice::Skipped { marker },
            Ok(Outcome::Resolved(resolution)) => {
                for warning in &resolution.warnings {
                    output::warn(warning);
                }
                match resolution.chosen {
                    Some(_) => Choice::Chosen(resolution),
                    None => Choice::Failed(nothing_fits(request, &resolution, target)),
                }
            }
        }
    }

    /// `{"requirement", "name", "version", "filename", "url", "label", "sha256", "reason",
    /// "dependencies", "passed_over"}`; a skipped requirement has nulls and its reason, a
    /// failed one nulls and `"error"`.
    pub(crate) fn json(&self, request: &Request, target: &Target) -> Value {
        let resolution = match self {
            Choice::Skipped { marker } => {
                return json!({
                    "requirement": request.as_str(), "name": request.name().as_str(),
                    "version": null, "filename": null, "url": null, "label": null, "sha256": null,
                    "reason": format!("skipped: the marker `{marker}` is false for the target"),
                })
            }
            Choice::Failed(message) => {
                return json!({
                    "requirement": request.as_str(), "name": request.name().as_str(),
                    "version": null, "filename": null, "url": null, "label": null, "sha256": null,
                    "reason": null, "error": message,
                })
            }
            Choice::Chosen(resolution) => resolution,
        };
        let chosen = resolution.chosen.as_ref();
        json!({
            "requirement": request.as_str(),
            "name": resolution.name.as_str(),
            "version": chosen.map(|c| c.version.to_string()),
            "filename": chosen.map(|c| c.file.filename.clone()),
            "url": chosen.map(|c| c.file.url.to_string()),
            "label": chosen.and_then(|c| c.label.as_ref().map(|l| l.to_string())),
            "sha256": chosen.and_then(|c| c.file.hashes.sha256().map(str::to_owned)),
            "reason": why(resolution, target),
            "dependencies": chosen.and_then(|c| c.dependencies.as_ref()).map(|deps| {
                deps.iter()
                    .map(|d| match &d.marker {
                        Some(m) => format!("{}; {m}", d.requirement),
                        None => d.requirement.clone(),
                    })
                    .collect::<Vec<_>>()
            }),
            "passed_over": resolution.passed_over().iter().map(|r| json!({
                "version": r.version.to_string(),
                "reason": unfit_text(r, target),
            })).collect::<Vec<_>>(),
        })
    }
}
