//! Which hardware facts exist: the check every user-given fact goes through (a facts-profile key,
//! a profile-derived value or an override variable), so that `12.999` or `gfxZZZ` is refused
//! with the key or variable named instead of turning into a thousand derived values.
//!
//! The data lives in `data/hardware-ranges.toml` (with its sources); what a driver library
//! reports on a real machine is not checked here (the machine is right by definition).

use std::sync::OnceLock;

use serde::Deserialize;

use crate::gpu::{parse_decimal, parse_major_minor};

const DATA: &str = include_str!("../data/hardware-ranges.toml");

#[derive(Debug, Deserialize)]
struct Ranges {
    cuda: CudaRanges,
    compute_capability: CcRanges,
    gfx: GfxRanges,
    intel: IntelRanges,
}

#[derive(Debug, Deserialize)]
struct CudaRanges {
    released: Vec<String>,
    newest_major: u32,
    max_major: u32,
    max_minor: u32,
}

#[derive(Debug, Deserialize)]
struct CcRanges {
    known: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct GfxRanges {
    min_major: u32,
    max_major: u32,
}

#[derive(Debug, Deserialize)]
struct IntelRanges {
    max_architecture: u32,
    max_release: u32,
    max_revision: u32,
}

struct Parsed {
    ranges: Ranges,
    cuda_released: Vec<(u32, u32)>,
    cc_known: Vec<(u32, u32)>,
}

fn data() -> &'static Parsed {
    static PARSED: OnceLock<Parsed> = OnceLock::new();
    PARSED.get_or_init(|| {
        // The file is part of the build; a unit test parses it.
        let ranges: Ranges = toml::from_str(DATA).expect("data/hardware-ranges.toml is valid");
        let pairs = |list: &[String]| -> Vec<(u32, u32)> {
            list.iter().filter_map(|v| parse_major_minor(v)).collect()
        };
        Parsed {
            cuda_released: pairs(&ranges.cuda.released),
            cc_known: pairs(&ranges.compute_capability.known),
            ranges,
        }
    })
}

/// Checks a CUDA version (the driver's, as given by a user): a released version of a finished
/// major, or a minor up to the reference range's in a current or later major.
pub(crate) fn check_cuda((major, minor): (u32, u32)) -> Result<(), String> {
    let d = data();
    let r = &d.ranges.cuda;
    if major > r.max_major || (major >= r.newest_major && minor > r.max_minor) {
        return Err(format!(
            "CUDA {major}.{minor} is outside the range the nvidia provider describes (up to \
             {}.{})",
            r.max_major, r.max_minor
        ));
    }
    if major < r.newest_major && !d.cuda_released.contains(&(major, minor)) {
        let minors: Vec<String> = d
            .cuda_released
            .iter()
            .filter(|(m, _)| *m == major)
            .map(|(m, n)| format!("{m}.{n}"))
            .collect();
        return Err(if minors.is_empty() {
            format!(
                "CUDA {major}.{minor} does not exist (known versions start at {})",
                r.released.first().map_or("8.0", String::as_str)
            )
        } else {
            format!(
                "CUDA {major}.{minor} does not exist (CUDA {major} has {})",
                minors.join(", ")
            )
        });
    }
    Ok(())
}

/// Checks a compute capability: a known one, or any minor 0–9 of a major newer than the list.
pub(crate) fn check_compute_capability((major, minor): (u32, u32)) -> Result<(), String> {
    let known = &data().cc_known;
    let newest_major = known.iter().map(|(m, _)| *m).max().unwrap_or(0);
    if known.contains(&(major, minor)) || (major > newest_major && minor <= 9) {
        return Ok(());
    }
    let same_major: Vec<String> = known
        .iter()
        .filter(|(m, _)| *m == major)
        .map(|(m, n)| format!("{m}.{n}"))
        .collect();
    Err(if same_major.is_empty() {
        format!("{major}.{minor} is not a compute capability of any NVIDIA GPU")
    } else {
        format!(
            "{major}.{minor} is not a compute capability of any NVIDIA GPU (major {major} has {})",
            same_major.join(", ")
        )
    })
}

/// Checks an AMD GPU target name (lowercase): `gfx` + decimal major + hex minor + hex stepping.
pub(crate) fn check_gfx(name: &str) -> Result<(), String> {
    let r = &data().ranges.gfx;
    let expected = || {
        format!(
            "{name:?} is not a GPU target: expected gfx + major ({}-{}) + one hex digit minor + \
             one hex digit stepping, such as gfx90a or gfx1100",
            r.min_major, r.max_major
        )
    };
    let rest = name.strip_prefix("gfx").ok_or_else(expected)?;
    if rest.len() < 3 || !rest.is_ascii() {
        return Err(expected());
    }
    let (major, tail) = rest.split_at(rest.len() - 2);
    let hex = tail
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let major = parse_decimal(major).filter(|_| !major.starts_with('0'));
    match major {
        Some(m) if hex && (r.min_major..=r.max_major).contains(&m) => Ok(()),
        _ => Err(expected()),
    }
}

/// Checks the fields of an Intel device IP `arch.release.revision` against the GMDID widths.
pub(crate) fn check_intel_ip((arch, release, revision): (u32, u32, u32)) -> Result<(), String> {
    let r = &data().ranges.intel;
    if arch == 0
        || arch > r.max_architecture
        || release > r.max_release
        || revision > r.max_revision
    {
        return Err(format!(
            "{arch}.{release}.{revision} is not a device IP: architecture 1-{}, release 0-{}, \
             revision 0-{}",
            r.max_architecture, r.max_release, r.max_revision
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_file_parses() {
        let d = data();
        assert!(d.cuda_released.contains(&(12, 9)));
        assert_eq!(d.cuda_released.len(), d.ranges.cuda.released.len());
        assert_eq!(d.cc_known.len(), d.ranges.compute_capability.known.len());
    }

    #[test]
    fn cuda_versions() {
        for ok in [
            (12, 8),
            (12, 7),
            (11, 0),
            (10, 2),
            (13, 0),
            (13, 5),
            (15, 20),
        ] {
            assert_eq!(check_cuda(ok), Ok(()), "{ok:?}");
        }
        for bad in [(12, 999), (12, 10), (11, 9), (16, 0), (13, 21), (7, 5)] {
            assert!(check_cuda(bad).is_err(), "{bad:?}");
        }
        assert!(check_cuda((12, 999)).unwrap_err().contains("12.999"));
    }

    #[test]
    fn compute_capabilities() {
        for ok in [(8, 6), (9, 0), (12, 1), (5, 0), (13, 0), (14, 2)] {
            assert_eq!(check_compute_capability(ok), Ok(()), "{ok:?}");
        }
        for bad in [(8, 99), (8, 5), (4, 0), (13, 10), (0, 0)] {
            assert!(check_compute_capability(bad).is_err(), "{bad:?}");
        }
        assert!(check_compute_capability((8, 99))
            .unwrap_err()
            .contains("8.0, 8.6"));
    }

    #[test]
    fn gfx_names() {
        for ok in ["gfx90a", "gfx1100", "gfx942", "gfx1151", "gfx803", "gfx90c"] {
            assert_eq!(check_gfx(ok), Ok(()), "{ok}");
        }
        for bad in [
            "gfxzzz", "gfx", "gfx9", "gfx000", "gfx90g", "gfx0900", "gfx6a0", "vega",
        ] {
            assert!(check_gfx(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn intel_ips() {
        assert_eq!(check_intel_ip((12, 60, 7)), Ok(()));
        assert_eq!(check_intel_ip((1023, 255, 63)), Ok(()));
        for bad in [(0, 1, 0), (1024, 0, 0), (12, 256, 0), (12, 60, 64)] {
            assert!(check_intel_ip(bad).is_err(), "{bad:?}");
        }
    }
}
