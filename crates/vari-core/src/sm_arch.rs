//! The `nvidia :: sm_arch` values (`spec/providers.md`): how they are spelled, which exist, and
//! which a GPU supports. Detection derives a GPU's list from them and the wheel scanner names the
//! code it finds with them, so both speak of the same values.
//!
//! An architecture number is `10 × major + minor` (`86` for compute capability 8.6). SASS built
//! for it is `NN_real`, PTX is `NN_virtual`. The provider has values for compute capabilities
//! 5.0 to 12.9 ([`MIN_MAJOR`] to [`MAX_MAJOR`], every minor 0 to 9).

use std::fmt;

/// The lowest compute capability major with `sm_arch` values.
pub const MIN_MAJOR: u32 = 5;

/// The highest compute capability major with `sm_arch` values.
pub const MAX_MAJOR: u32 = 12;

/// The feature's name in the `nvidia` namespace.
pub const FEATURE: &str = "sm_arch";

/// What an `sm_arch` value stands for: machine code for exactly one architecture, or PTX that
/// the driver compiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SmKind {
    /// SASS: `NN_real`.
    Real,
    /// PTX: `NN_virtual`.
    Virtual,
}

impl SmKind {
    fn suffix(self) -> &'static str {
        match self {
            Self::Real => "real",
            Self::Virtual => "virtual",
        }
    }
}

/// One `sm_arch` value: an architecture number and a kind.
///
/// ```
/// use vari_core::sm_arch::{SmArch, SmKind};
/// let v: SmArch = "86_real".parse().unwrap();
/// assert_eq!((v.arch, v.kind), (86, SmKind::Real));
/// assert_eq!(SmArch { arch: 120, kind: SmKind::Virtual }.to_string(), "120_virtual");
/// assert!("sm_86".parse::<SmArch>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SmArch {
    /// The architecture number, `10 × major + minor`.
    pub arch: u32,
    /// SASS or PTX.
    pub kind: SmKind,
}

impl SmArch {
    /// Whether the provider has this value at all (compute capability 5.0 to 12.9).
    pub fn is_provider_value(self) -> bool {
        (MIN_MAJOR * 10..=MAX_MAJOR * 10 + 9).contains(&self.arch)
    }
}

impl fmt::Display for SmArch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.arch, self.kind.suffix())
    }
}

/// Text that is not `NN_real` or `NN_virtual`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid sm_arch value {0:?}: expected NN_real or NN_virtual (NN = 10 × major + minor)")]
pub struct InvalidSmArch(pub String);

impl std::str::FromStr for SmArch {
    type Err = InvalidSmArch;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let (number, kind) = if let Some(number) = value.strip_suffix("_real") {
            (number, SmKind::Real)
        } else if let Some(number) = value.strip_suffix("_virtual") {
            (number, SmKind::Virtual)
        } else {
            return Err(InvalidSmArch(value.to_owned()));
        };
        let arch = number
            .parse()
            .map_err(|_| InvalidSmArch(value.to_owned()))?;
        Ok(Self { arch, kind })
    }
}

/// The values a GPU of compute capability `major.minor` supports, most preferred first:
/// `{major}{minor}_real` down to `{major}0_real`, then `{major}0_virtual` (SASS runs on later
/// minors of its major; the provider lists the major's PTX last). Empty below [`MIN_MAJOR`].
///
/// ```
/// use vari_core::sm_arch::supported;
/// let values: Vec<String> = supported(8, 6).iter().map(ToString::to_string).collect();
/// assert_eq!(values[..2], ["86_real", "85_real"]);
/// assert_eq!(values[6..], ["80_real", "80_virtual"]);
/// assert!(supported(3, 7).is_empty());
/// ```
pub fn supported(major: u32, minor: u32) -> Vec<SmArch> {
    if major < MIN_MAJOR {
        return Vec::new();
    }
    let real = (0..=minor).rev().map(|m| SmArch {
        arch: major * 10 + m,
        kind: SmKind::Real,
    });
    real.chain([SmArch {
        arch: major * 10,
        kind: SmKind::Virtual,
    }])
    .collect()
}

/// Every value the provider has, in its order: all `_real` values from `129_real` down to
/// `50_real`, then all `_virtual` values likewise.
pub fn all() -> Vec<SmArch> {
    let mut values = Vec::new();
    for kind in [SmKind::Real, SmKind::Virtual] {
        for major in (MIN_MAJOR..=MAX_MAJOR).rev() {
            values.extend((0..=9).rev().map(|minor| SmArch {
                arch: major * 10 + minor,
                kind,
            }));
        }
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelling_round_trips_and_the_range_is_5_0_to_12_9() {
        for value in all() {
            assert_eq!(value.to_string().parse::<SmArch>(), Ok(value));
            assert!(value.is_provider_value(), "{value}");
        }
        assert_eq!(all().len(), 2 * 8 * 10);
        assert_eq!(all()[0].to_string(), "129_real");
        assert_eq!(all()[80].to_string(), "129_virtual");
        assert_eq!(all().last().unwrap().to_string(), "50_virtual");
        for outside in [49, 130, 0] {
            let v = SmArch {
                arch: outside,
                kind: SmKind::Real,
            };
            assert!(!v.is_provider_value(), "{v}");
        }
        for bad in ["86", "86_reall", "x_real", "-1_real", ""] {
            assert!(bad.parse::<SmArch>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_gpu_supports_its_major_at_or_below_its_minor_then_the_major_ptx() {
        let strings = |v: Vec<SmArch>| v.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(strings(supported(12, 0)), ["120_real", "120_virtual"]);
        assert_eq!(strings(supported(5, 0)), ["50_real", "50_virtual"]);
        assert!(supported(4, 9).is_empty());
    }
}
