//! The proxy's phrasing of the selector's data, for its log and its journal: why a file is
//! presented, and why a version has no wheel for the target.

use vari_select::{
    CandidateFate, ChosenBecause, HiddenBecause, NamespaceNeed, ShownBecause, Target,
    VariantRejection, VersionReport,
};

/// Why a file is shown, for the log and the journal's [`crate::Served::why`].
pub(crate) fn shown(shown: &ShownBecause, target: &Target) -> String {
    match shown {
        ShownBecause::ProjectHasNoVariants => "the project has no variants".to_owned(),
        ShownBecause::NoVariantsForTags => "no variant wheels for these tags".to_owned(),
        ShownBecause::NotAWheel => "a source distribution, served as it is".to_owned(),
        ShownBecause::Variant { because, needs: n } => self::because(because, &needs(n, target)),
        ShownBecause::Fallback { needs: n, .. } if !n.is_empty() => {
            format!("the non-variant wheel: {}", needs(n, target))
        }
        ShownBecause::Fallback { first_fate, .. } => fate(first_fate),
    }
}

/// Why a shown variant wheel (or the non-variant wheel kept in place of variants) was chosen;
/// `needs`: for a fallback, what the version's variants need that the target lacks, in words
/// ([`needs`]), empty when hardware would change nothing.
pub(crate) fn because(because: &ChosenBecause, needs: &str) -> String {
    match because {
        ChosenBecause::BestVariant { selectable } => match selectable {
            1 => "the only supported variant for this target".to_owned(),
            n => format!("best supported variant for this target, first of {n} that fit"),
        },
        ChosenBecause::NullVariant if !needs.is_empty() => format!("the null variant: {needs}"),
        ChosenBecause::NullVariant => {
            "the null variant: no variant with properties fits this target".to_owned()
        }
        ChosenBecause::NoVariantFits { .. } if !needs.is_empty() => {
            format!("the non-variant wheel: {needs}")
        }
        ChosenBecause::NoVariantFits { variants } => {
            format!("no variant fits this target ({variants} described)")
        }
        ChosenBecause::NoVariants => "no variant wheels for these tags".to_owned(),
        ChosenBecause::VariantsDisabled => "variant wheels are disabled".to_owned(),
    }
}

/// What the variants need and why the target lacks it, one clause per namespace, as
/// `vari select` says it: "builds for NVIDIA GPUs (cu126, cu128), and this machine has no
/// NVIDIA driver (…)".
pub(crate) fn needs(needs: &[NamespaceNeed], target: &Target) -> String {
    needs
        .iter()
        .map(|need| need.describe(target).to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

fn rejection(rejection: &VariantRejection) -> String {
    match rejection {
        VariantRejection::Ranking(r) => r.to_string(),
        VariantRejection::NoFittingWheel { tags } => {
            format!(
                "no wheel with tags this target installs ({})",
                tags.join(", ")
            )
        }
        VariantRejection::Unusable(reason) => reason.to_string(),
    }
}

/// Why no wheel of `report`'s version fits the target, to follow "{project} {version}": what
/// its variants need when hardware would change that ("has no build for this machine: builds
/// for NVIDIA GPUs (…), and this machine has no NVIDIA driver (…)", as `vari select` says),
/// else the files' fates counted.
pub(crate) fn hidden_version(report: &VersionReport, target: &Target) -> String {
    if !report.needs.is_empty() {
        return format!(
            "has no build for {}: {}",
            target.hardware.source,
            needs(&report.needs, target)
        );
    }
    fates(report)
}

/// Why no wheel of `report`'s version fits, from its files' fates.
fn fates(report: &VersionReport) -> String {
    let mut reasons: Vec<String> = Vec::new();
    let count = |matches: &dyn Fn(&CandidateFate) -> bool| report.count(matches);
    let wrong_tags = count(&|f| matches!(f, CandidateFate::WrongTags));
    if wrong_tags > 0 {
        reasons.push(format!(
            "{wrong_tags} for other Python versions or platforms"
        ));
    }
    let python = report.files.iter().find_map(|f| match &f.fate {
        CandidateFate::RequiresPython { requires } => Some(requires.as_str()),
        _ => None,
    });
    if let Some(requires) = python {
        reasons.push(format!("requires-python {requires}"));
    }
    let first_rejection = report.files.iter().find_map(|f| match &f.fate {
        CandidateFate::VariantRejected(r) => Some(rejection(r)),
        CandidateFate::LabelNotDescribed => {
            Some("labels the variant metadata does not describe".to_owned())
        }
        CandidateFate::UnusableMetadata { why } => {
            Some(format!("unusable variant metadata: {why}"))
        }
        CandidateFate::Unusable(reason) => Some(reason.to_string()),
        _ => None,
    });
    if let Some(first) = first_rejection {
        reasons.push(format!("variants unusable ({first})"));
    }
    if reasons.is_empty() {
        return "has no wheel for this target".to_owned();
    }
    format!("has no wheel for this target: {}", reasons.join("; "))
}

/// Why a file is kept from the installer.
pub(crate) fn hidden_file(why: &HiddenBecause) -> String {
    match why {
        HiddenBecause::AnotherVariantChosen { chosen } => {
            format!("{chosen} is the better variant for this target")
        }
        HiddenBecause::ReplacedByVariant { chosen } => format!("{chosen} takes its place"),
        HiddenBecause::Unusable(fate) => self::fate(fate),
    }
}

/// Why a variant wheel cannot be used on the target (or another file was not chosen).
pub(crate) fn fate(fate: &CandidateFate) -> String {
    match fate {
        CandidateFate::UnusableMetadata { why } => format!("unusable variant metadata: {why}"),
        CandidateFate::LabelNotDescribed => {
            "the variant metadata does not describe its label".to_owned()
        }
        CandidateFate::Unusable(reason) => reason.to_string(),
        CandidateFate::VariantRejected(r) => {
            format!("no variant fits this target: {}", rejection(r))
        }
        CandidateFate::WrongTags => "not for this target's Python or platform".to_owned(),
        CandidateFate::RequiresPython { requires } => format!("requires-python {requires}"),
        CandidateFate::Yanked { .. } => "yanked".to_owned(),
        CandidateFate::SdistNotConsidered => "a source distribution".to_owned(),
        CandidateFate::Malformed { why } => why.clone(),
        CandidateFate::Chosen | CandidateFate::Candidate { .. } => "usable".to_owned(),
    }
}

/// The tag triple of a wheel name (`cp312-cp312-manylinux_2_28_x86_64`), for log lines.
pub(crate) fn tags(wheel: &vari_core::filename::WheelFilename) -> String {
    wheel.tag_triple().to_string()
}

#[cfg(test)]
mod tests {
    use vari_select::CandidateFile;

    use super::*;

    fn file(name: &str, fate: CandidateFate) -> CandidateFile {
        CandidateFile {
            filename: name.to_owned(),
            url: url::Url::parse(&format!("https://example.com/{name}")).unwrap(),
            label: None,
            fate,
        }
    }

    #[test]
    fn choices_in_a_few_words() {
        assert_eq!(
            because(&ChosenBecause::BestVariant { selectable: 3 }, ""),
            "best supported variant for this target, first of 3 that fit"
        );
        assert_eq!(
            because(&ChosenBecause::BestVariant { selectable: 1 }, ""),
            "the only supported variant for this target"
        );
        assert_eq!(
            because(&ChosenBecause::NullVariant, ""),
            "the null variant: no variant with properties fits this target"
        );
        let needs = "builds for NVIDIA GPUs (cu128), not detected on this machine";
        assert_eq!(
            because(&ChosenBecause::NullVariant, needs),
            format!("the null variant: {needs}")
        );
        assert_eq!(
            because(&ChosenBecause::NoVariantFits { variants: 2 }, needs),
            format!("the non-variant wheel: {needs}")
        );
    }

    #[test]
    fn hidden_versions_without_needs_count_the_fates() {
        let report = VersionReport {
            version: "1.0".parse().unwrap(),
            files: vec![
                file("a-1.0-cp27-none-win32.whl", CandidateFate::WrongTags),
                file("a-1.0-cp27-none-win_amd64.whl", CandidateFate::WrongTags),
                file(
                    "a-1.0-py3-none-any.whl",
                    CandidateFate::RequiresPython {
                        requires: ">=3.14".into(),
                    },
                ),
                file("a-1.0.tar.gz", CandidateFate::SdistNotConsidered),
            ],
            variants: Vec::new(),
            needs: Vec::new(),
            metadata_from: None,
        };
        assert_eq!(
            fates(&report),
            "has no wheel for this target: 2 for other Python versions or platforms; \
             requires-python >=3.14"
        );
    }
}
