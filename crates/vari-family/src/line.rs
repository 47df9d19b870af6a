//! A build's CUDA line read from its own requirements, for builds whose name does not say it.
//!
//! `onnxruntime-gpu` 1.28 and later require `nvidia-cuda-runtime~=13.0` (behind its `cuda`
//! extra; 1.27 `nvidia-cuda-runtime-cu13`) where 1.26 and earlier were CUDA 12 builds requiring
//! `nvidia-*-cu12`: the same distribution name over two lines. Like conda-forge, which derives
//! a build's CUDA line from the libraries it links, the line is read from the NVIDIA libraries
//! a version requires:
//! - a `-cuNN` suffix says the major line (`nvidia-cublas-cu12` → 12);
//! - for CUDA 13 and later NVIDIA publishes the libraries without a suffix; for those whose
//!   version follows the toolkit's (`nvidia-cuda-runtime`, `nvidia-cuda-nvrtc`,
//!   `nvidia-cuda-cupti`, `nvidia-cublas`, `nvidia-nvjitlink`, `nvidia-cuda-nvcc`) the major
//!   of the version the specifier starts from says the line (`~=13.0`, `>=13.0.48`, `==13.0.96`).
//!
//! Other libraries (cuDNN 9.x, NCCL 2.x, cuFFT 11.x/12.x) version on their own and say
//! nothing here. A version that names two lines is reported as conflicting, not guessed.

use std::collections::BTreeSet;

use pep440_rs::{Operator, VersionSpecifiers};
use vari_core::Property;

/// The NVIDIA libraries without a line suffix whose versions follow the CUDA toolkit's.
pub const TOOLKIT_VERSIONED: [&str; 6] = [
    "nvidia-cuda-runtime",
    "nvidia-cuda-nvrtc",
    "nvidia-cuda-cupti",
    "nvidia-cublas",
    "nvidia-nvjitlink",
    "nvidia-cuda-nvcc",
];

/// What a version's requirements say about its CUDA line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CudaLine {
    /// No NVIDIA library that names a line.
    Unknown,
    /// One major line, with the requirement that says it.
    Major {
        /// The major CUDA version (12, 13).
        major: u32,
        /// The requirement it was read from.
        evidence: String,
    },
    /// Requirements that name different lines (each line with one requirement naming it).
    Conflicting(Vec<(u32, String)>),
}

impl CudaLine {
    /// The property a build of this line requires: `nvidia :: cuda_version_lower_bound ::
    /// MAJOR.0` (CUDA minor-version compatibility: a build of the X line runs on any driver
    /// of the X line or newer).
    pub fn property(&self) -> Option<Property> {
        match self {
            CudaLine::Major { major, .. } => {
                format!("nvidia :: cuda_version_lower_bound :: {major}.0")
                    .parse()
                    .ok()
            }
            _ => None,
        }
    }
}

/// Reads the CUDA line from `requirements` (PEP 508 strings, as in `Requires-Dist`; markers
/// such as `extra == "cuda"` are kept, since the extra is how the build asks for its line).
///
/// ```
/// use vari_family::{cuda_line, CudaLine};
/// let line = cuda_line(["numpy>=1.21", "nvidia-cuda-runtime~=13.0; extra == \"cuda\""]);
/// assert!(matches!(line, CudaLine::Major { major: 13, .. }));
/// assert!(matches!(cuda_line(["nvidia-cublas-cu12"]), CudaLine::Major { major: 12, .. }));
/// assert_eq!(cuda_line(["nvidia-cudnn-cu9x"]), CudaLine::Unknown);
/// ```
pub fn cuda_line<'a>(requirements: impl IntoIterator<Item = &'a str>) -> CudaLine {
    let mut found: Vec<(u32, String)> = Vec::new();
    for requirement in requirements {
        if let Some(major) = line_of(requirement) {
            if !found.iter().any(|(m, _)| *m == major) {
                found.push((major, requirement.trim().to_owned()));
            }
        }
    }
    match found.len() {
        0 => CudaLine::Unknown,
        1 => {
            let (major, evidence) = found.remove(0);
            CudaLine::Major { major, evidence }
        }
        _ => {
            found.sort();
            CudaLine::Conflicting(found)
        }
    }
}

/// The line one requirement names, if any.
fn line_of(requirement: &str) -> Option<u32> {
    let requirement = requirement.split(';').next()?.trim();
    let end = requirement
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(requirement.len());
    let name = vari_core::project::normalize(&requirement[..end]);
    if !name.starts_with("nvidia-") {
        return None;
    }
    let mut rest = requirement[end..].trim();
    // An extra named for a line (`nvidia-cutlass-dsl[cu13]`) says it; other extras say nothing.
    if rest.starts_with('[') {
        let close = rest.find(']');
        let extras = close.map_or("", |i| &rest[1..i]);
        if let Some(major) = extras.split(',').find_map(|e| suffix_major(e.trim())) {
            return Some(major);
        }
        rest = close.map_or("", |i| &rest[i + 1..]).trim();
    }
    if let Some(major) = name.rsplit('-').next().and_then(suffix_major) {
        return Some(major);
    }
    if !TOOLKIT_VERSIONED.contains(&name.as_str()) {
        return None;
    }
    let rest = rest.trim_start_matches('(').trim_end_matches(')').trim();
    let specifiers: VersionSpecifiers = rest.parse().ok()?;
    let majors: BTreeSet<u32> = specifiers
        .iter()
        .filter(|s| {
            matches!(
                s.operator(),
                Operator::Equal
                    | Operator::EqualStar
                    | Operator::ExactEqual
                    | Operator::TildeEqual
                    | Operator::GreaterThanEqual
            )
        })
        .filter_map(|s| s.version().release().first().copied())
        .filter_map(|m| u32::try_from(m).ok())
        .collect();
    // One lower bound or pin; a range naming two majors (`>=12,<14` has one) says nothing.
    match majors.len() {
        1 => majors.into_iter().next().filter(|m| *m >= 9),
        _ => None,
    }
}

/// The major line a `cuNN` (or `cuNNN`, major and minor) suffix names.
fn suffix_major(suffix: &str) -> Option<u32> {
    let digits = suffix.strip_prefix("cu")?;
    if digits.is_empty() || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let major: u32 = match digits.len() {
        3 => digits[..2].parse().ok()?,
        _ => digits.parse().ok()?,
    };
    (major >= 9).then_some(major)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_and_toolkit_versions_name_the_line() {
        for (req, major) in [
            (
                "nvidia-cuda-runtime-cu12==12.8.90; platform_system == 'Linux'",
                12,
            ),
            ("nvidia_cublas_cu11", 11),
            ("nvidia-cuda-runtime~=13.0; extra == \"cuda\"", 13),
            ("nvidia-cublas>=13.0.0.19", 13),
            ("nvidia-nvjitlink==13.0.88", 13),
            ("nvidia-cuda-nvrtc (==12.9.86)", 12),
            ("nvidia-cutlass-dsl[cu13]==4.8.0", 13),
        ] {
            assert_eq!(line_of(req), Some(major), "{req}");
        }
        for req in [
            "numpy",
            "nvidia-cudnn>=9.0",
            "nvidia-nccl-cu",
            "nvidia-cufft>=12.0",
            "nvidia-cuda-runtime",
            "nvidia-cuda-runtime<14",
        ] {
            assert_eq!(line_of(req), None, "{req}");
        }
    }

    #[test]
    fn two_lines_conflict_and_none_is_unknown() {
        let line = cuda_line(["nvidia-cublas-cu12", "nvidia-cuda-runtime~=13.0"]);
        assert!(
            matches!(line, CudaLine::Conflicting(ref l) if l.len() == 2),
            "{line:?}"
        );
        assert_eq!(line.property(), None);
        assert_eq!(cuda_line(["numpy"]), CudaLine::Unknown);
        let line = cuda_line(["nvidia-cublas-cu12", "nvidia-cudnn-cu12==9.1"]);
        assert_eq!(
            line.property().unwrap().to_string(),
            "nvidia :: cuda_version_lower_bound :: 12.0"
        );
    }
}
