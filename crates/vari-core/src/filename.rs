//! Wheel filenames with an optional variant label (`spec/format.md` §2, PEP 825 "Variant label",
//! PEP 817 "Extended wheel filename").
//!
//! ```text
//! {name}-{version}(-{build})?-{python}-{abi}-{platform}(-{label})?.whl
//! ```
//!
//! Five to seven dash-separated parts. With six parts the third decides: a build tag starts with a
//! digit and a Python tag never does, so `foo-1.0-1-py3-none-any.whl` has a build tag and
//! `foo-1.0-py3-none-any-cu128.whl` a label. Seven parts carry both.

use std::fmt;
use std::str::FromStr;

use pep440_rs::Version;

use crate::names::{NameError, VariantLabel};

/// Why a wheel filename was rejected. Every variant names the filename and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilenameError {
    /// The filename does not end in `.whl`.
    #[error("`{filename}` is not a wheel filename: it does not end in `.whl`")]
    NotAWheel {
        /// The filename as given.
        filename: String,
    },
    /// The stem does not split into 5 to 7 dash-separated parts.
    #[error(
        "invalid wheel filename `{filename}`: found {count} dash-separated part(s), expected 5 to 7 \
         (`name-version[-build]-python-abi-platform[-label].whl`)"
    )]
    PartCount {
        /// The filename as given.
        filename: String,
        /// How many parts were found.
        count: usize,
    },
    /// One of the parts (or one tag of a compressed tag set) is empty.
    #[error("invalid wheel filename `{filename}`: the {part} is empty")]
    EmptyPart {
        /// The filename as given.
        filename: String,
        /// Which part is empty (`name`, `Python tag`, …).
        part: &'static str,
    },
    /// The distribution name has characters a wheel name cannot have.
    #[error(
        "invalid wheel filename `{filename}`: invalid distribution name `{name}` (only ASCII \
         letters, digits, `_` and `.` are allowed, starting and ending with a letter or digit)"
    )]
    InvalidName {
        /// The filename as given.
        filename: String,
        /// The name part as found.
        name: String,
    },
    /// The version is not a PEP 440 version.
    #[error("invalid wheel filename `{filename}`: invalid version `{version}`: {message}")]
    InvalidVersion {
        /// The filename as given.
        filename: String,
        /// The version part as found.
        version: String,
        /// What the PEP 440 parser objected to.
        message: String,
    },
    /// The build tag does not start with a digit, has a number too large, or bad characters.
    #[error("invalid wheel filename `{filename}`: invalid build tag `{build}`: {reason}")]
    InvalidBuildTag {
        /// The filename as given.
        filename: String,
        /// The build tag as found.
        build: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A Python, ABI or platform tag has characters a tag cannot have.
    #[error(
        "invalid wheel filename `{filename}`: invalid {kind} tag `{tag}` (only ASCII letters, \
         digits and `_` are allowed; `.` separates the tags of a compressed set)"
    )]
    InvalidTag {
        /// The filename as given.
        filename: String,
        /// `Python`, `ABI` or `platform`.
        kind: &'static str,
        /// The offending tag.
        tag: String,
    },
    /// A Python tag starts with a digit, which PEP 825 forbids (it would read as a build tag).
    #[error(
        "invalid wheel filename `{filename}`: Python tag `{tag}` starts with a digit (only a \
         build tag may)"
    )]
    PythonTagStartsWithDigit {
        /// The filename as given.
        filename: String,
        /// The offending tag.
        tag: String,
    },
    /// The variant label has characters outside `[0-9a-z._]`.
    #[error("invalid wheel filename `{filename}`: {source}")]
    InvalidLabel {
        /// The filename as given.
        filename: String,
        /// The label validation error (it names the label).
        source: NameError,
    },
}

/// A PEP 427 build tag: leading digits, then an optional suffix.
///
/// Ordered as PEP 427 says: by the number, then by the suffix as a string. `Option<BuildTag>`
/// orders a missing tag first, as the spec's empty tuple does. Leading zeros of the number are not
/// kept, so the canonical form of `01` is `1`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BuildTag {
    /// The leading digits as a number.
    pub number: u64,
    /// The rest of the tag after the digits (often empty).
    pub suffix: String,
}

impl fmt::Display for BuildTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.number, self.suffix)
    }
}

/// A parsed wheel filename, variant or not.
///
/// ```
/// use vari_core::filename::WheelFilename;
///
/// let wheel = WheelFilename::parse("torch-2.8.0-cp312-cp312-manylinux_2_28_x86_64-cu128.whl").unwrap();
/// assert_eq!(wheel.name, "torch");
/// assert_eq!(wheel.label.as_ref().unwrap().as_str(), "cu128");
/// assert!(wheel.is_variant() && !wheel.is_null_variant());
/// assert_eq!(wheel.variants_json_name(), "torch-2.8.0-variants.json");
/// assert_eq!(wheel.to_string(), "torch-2.8.0-cp312-cp312-manylinux_2_28_x86_64-cu128.whl");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WheelFilename {
    /// The distribution name, normalised as in wheel filenames: lowercase, each run of `-`, `_`
    /// and `.` replaced by `_`.
    pub name: String,
    /// The PEP 440 version.
    pub version: Version,
    /// The optional build tag.
    pub build: Option<BuildTag>,
    /// The Python tags (a compressed set such as `py2.py3` is split on `.`).
    pub python_tags: Vec<String>,
    /// The ABI tags.
    pub abi_tags: Vec<String>,
    /// The platform tags.
    pub platform_tags: Vec<String>,
    /// The variant label; `None` for a non-variant wheel.
    pub label: Option<VariantLabel>,
}

impl WheelFilename {
    /// Parses a wheel filename (the file name only, no directory).
    pub fn parse(filename: &str) -> Result<Self, FilenameError> {
        let Some(stem) = filename.strip_suffix(".whl") else {
            return Err(FilenameError::NotAWheel {
                filename: filename.to_owned(),
            });
        };
        let parts: Vec<&str> = stem.split('-').collect();
        let parse = Parser { filename };

        // Which parts are the build tag and label, by count (and, for 6, by the third part).
        let (build, tags, label) = match parts.as_slice() {
            [_, _, py, abi, plat] => (None, [*py, *abi, *plat], None),
            [_, _, third, py, abi, plat] if starts_with_digit(third) => {
                (Some(*third), [*py, *abi, *plat], None)
            }
            [_, _, py, abi, plat, label] => (None, [*py, *abi, *plat], Some(*label)),
            [_, _, build, py, abi, plat, label] => (Some(*build), [*py, *abi, *plat], Some(*label)),
            _ => {
                return Err(FilenameError::PartCount {
                    filename: filename.to_owned(),
                    count: parts.len(),
                })
            }
        };

        let name = parse.name(parts[0])?;
        let version = parse.version(parts[1])?;
        let build = build.map(|b| parse.build_tag(b)).transpose()?;
        let python_tags = parse.tag_set(tags[0], "Python")?;
        if let Some(tag) = python_tags.iter().find(|t| starts_with_digit(t)) {
            return Err(FilenameError::PythonTagStartsWithDigit {
                filename: filename.to_owned(),
                tag: tag.clone(),
            });
        }
        let abi_tags = parse.tag_set(tags[1], "ABI")?;
        let platform_tags = parse.tag_set(tags[2], "platform")?;
        let label = label.map(|l| parse.label(l)).transpose()?;

        Ok(Self {
            name,
            version,
            build,
            python_tags,
            abi_tags,
            platform_tags,
            label,
        })
    }

    /// Whether the filename carries a variant label (the null variant included).
    pub fn is_variant(&self) -> bool {
        self.label.is_some()
    }

    /// Whether this is the null variant (label `null`).
    pub fn is_null_variant(&self) -> bool {
        self.label.as_ref().is_some_and(VariantLabel::is_null)
    }

    /// The name of the index-level metadata file of this wheel's version,
    /// `{name}-{version}-variants.json`.
    pub fn variants_json_name(&self) -> String {
        variants_json_filename(&self.name, &self.version)
    }

    /// The tag triple as the name writes it, compressed sets joined by `.`
    /// (`cp312-cp312-manylinux_2_28_x86_64`, `py2.py3-none-any`): the one writer of it, for the
    /// file name itself and for every report that shows which tags a wheel has.
    ///
    /// ```
    /// use vari_core::filename::WheelFilename;
    /// let wheel = WheelFilename::parse("a-1.0-py2.py3-none-any-cu12.whl").unwrap();
    /// assert_eq!(wheel.tag_triple().to_string(), "py2.py3-none-any");
    /// ```
    pub fn tag_triple(&self) -> TagTriple<'_> {
        TagTriple(self)
    }
}

/// A wheel name's tag triple, written by [`WheelFilename::tag_triple`].
#[derive(Debug, Clone, Copy)]
pub struct TagTriple<'a>(&'a WheelFilename);

impl fmt::Display for TagTriple<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let wheel = self.0;
        write!(
            f,
            "{}-{}-{}",
            wheel.python_tags.join("."),
            wheel.abi_tags.join("."),
            wheel.platform_tags.join(".")
        )
    }
}

impl FromStr for WheelFilename {
    type Err = FilenameError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for WheelFilename {
    /// Writes the canonical filename: normalised name and version, tag sets joined by `.`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.name, self.version)?;
        if let Some(build) = &self.build {
            write!(f, "-{build}")?;
        }
        write!(f, "-{}", self.tag_triple())?;
        if let Some(label) = &self.label {
            write!(f, "-{label}")?;
        }
        f.write_str(".whl")
    }
}

/// The index-level metadata filename of a package version, `{name}-{version}-variants.json`,
/// with the name and version normalised as in wheel filenames.
///
/// ```
/// use vari_core::filename::variants_json_filename;
/// let version = "1.0.0-RC1".parse().unwrap();
/// assert_eq!(variants_json_filename("Foo.Bar", &version), "foo_bar-1.0.0rc1-variants.json");
/// ```
pub fn variants_json_filename(name: &str, version: &Version) -> String {
    format!("{}-{}{VARIANTS_JSON_SUFFIX}", normalize_name(name), version)
}

/// How a release's index-level metadata file name ends: `{name}-{version}-variants.json`.
pub const VARIANTS_JSON_SUFFIX: &str = "-variants.json";

/// What a `{name}-{version}-variants.json` file name says: the project (as written, not
/// normalised) and the version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantsJsonName {
    /// The project's name as the file name writes it (`my_pkg`); compare it normalised.
    pub name: String,
    /// The version.
    pub version: Version,
}

/// A name that ends like a `variants.json` whose version is not a version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{filename}: invalid version `{version}` in a variants.json name: {message}")]
pub struct VariantsJsonNameError {
    /// The file name (bounded).
    pub filename: String,
    /// The project's name as the file name writes it.
    pub name: String,
    /// The text where the version should be.
    pub version: String,
    /// Why it is not one.
    pub message: String,
}

/// Parses a release's index-level metadata file name, `{name}-{version}-variants.json` (the
/// name may hold `-`: the version is the text after the last one). `None` for a name that is
/// not one (another suffix, no `-` before the version, an empty name); an error for one that
/// is, with a version that is not a version.
///
/// ```
/// use vari_core::filename::parse_variants_json_filename;
/// let parsed = parse_variants_json_filename("my-pkg-2.0-variants.json").unwrap().unwrap();
/// assert_eq!((parsed.name.as_str(), parsed.version.to_string().as_str()), ("my-pkg", "2.0"));
/// assert!(parse_variants_json_filename("my_pkg-2.0.tar.gz").is_none());
/// assert!(parse_variants_json_filename("my_pkg-x.y-variants.json").unwrap().is_err());
/// ```
pub fn parse_variants_json_filename(
    filename: &str,
) -> Option<Result<VariantsJsonName, VariantsJsonNameError>> {
    let stem = filename.strip_suffix(VARIANTS_JSON_SUFFIX)?;
    let (name, version) = stem.rsplit_once('-')?;
    if name.is_empty() {
        return None;
    }
    Some(match Version::from_str(version) {
        Ok(parsed) => Ok(VariantsJsonName {
            name: name.to_owned(),
            version: parsed,
        }),
        // Bounded: a hostile page's link text is quoted in a warning.
        Err(e) => Err(VariantsJsonNameError {
            filename: filename.chars().take(200).collect(),
            name: name.to_owned(),
            version: version.chars().take(100).collect(),
            message: e.to_string(),
        }),
    })
}

/// Normalises a distribution name as wheel filenames do: the PEP 503 normal form
/// ([`crate::project::normalize`]) with `_` in place of `-`, so the name stays one
/// dash-separated part.
///
/// ```
/// use vari_core::filename::normalize_name;
/// assert_eq!(normalize_name("Foo.-_Bar"), "foo_bar");
/// ```
pub fn normalize_name(name: &str) -> String {
    crate::project::normalize_with(name, '_')
}

fn starts_with_digit(s: &str) -> bool {
    s.bytes().next().is_some_and(|b| b.is_ascii_digit())
}

/// Parses the parts of one filename, so every error can name it.
struct Parser<'a> {
    filename: &'a str,
}

impl Parser<'_> {
    fn empty(&self, part: &'static str) -> FilenameError {
        FilenameError::EmptyPart {
            filename: self.filename.to_owned(),
            part,
        }
    }

    /// A name part: a valid project name ([`crate::project::is_valid`]). It holds no `-`, since
    /// the filename was split on it.
    fn name(&self, name: &str) -> Result<String, FilenameError> {
        if name.is_empty() {
            return Err(self.empty("distribution name"));
        }
        if !crate::project::is_valid(name) {
            return Err(FilenameError::InvalidName {
                filename: self.filename.to_owned(),
                name: name.to_owned(),
            });
        }
        Ok(normalize_name(name))
    }

    fn version(&self, version: &str) -> Result<Version, FilenameError> {
        if version.is_empty() {
            return Err(self.empty("version"));
        }
        Version::from_str(version).map_err(|e| FilenameError::InvalidVersion {
            filename: self.filename.to_owned(),
            version: version.to_owned(),
            message: e.to_string(),
        })
    }

    fn build_tag(&self, build: &str) -> Result<BuildTag, FilenameError> {
        if build.is_empty() {
            return Err(self.empty("build tag"));
        }
        let bad = |reason| FilenameError::InvalidBuildTag {
            filename: self.filename.to_owned(),
            build: build.to_owned(),
            reason,
        };
        let digits = build.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(bad("it must start with a digit"));
        }
        let (number, suffix) = build.split_at(digits);
        if !suffix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'))
        {
            return Err(bad(
                "only ASCII letters, digits, `_` and `.` may follow the number",
            ));
        }
        let number = number
            .parse()
            .map_err(|_| bad("its number does not fit in 64 bits"))?;
        Ok(BuildTag {
            number,
            suffix: suffix.to_owned(),
        })
    }

    /// A compressed tag set such as `py2.py3`, split on `.`.
    fn tag_set(&self, set: &str, kind: &'static str) -> Result<Vec<String>, FilenameError> {
        let part = match kind {
            "Python" => "Python tag",
            "ABI" => "ABI tag",
            _ => "platform tag",
        };
        if set.is_empty() {
            return Err(self.empty(part));
        }
        set.split('.')
            .map(|tag| {
                if tag.is_empty() {
                    Err(self.empty(part))
                } else if tag.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                    Ok(tag.to_owned())
                } else {
                    Err(FilenameError::InvalidTag {
                        filename: self.filename.to_owned(),
                        kind,
                        tag: tag.to_owned(),
                    })
                }
            })
            .collect()
    }

    fn label(&self, label: &str) -> Result<VariantLabel, FilenameError> {
        if label.is_empty() {
            return Err(self.empty("variant label"));
        }
        VariantLabel::new(label).map_err(|source| FilenameError::InvalidLabel {
            filename: self.filename.to_owned(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> WheelFilename {
        WheelFilename::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn err(s: &str) -> FilenameError {
        match WheelFilename::parse(s) {
            Ok(w) => panic!("{s} should fail, parsed as {w:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn variant_wheel_without_build_tag() {
        let w = parse("torch-2.8.0-cp312-cp312-manylinux_2_28_x86_64-cu128.whl");
        assert_eq!(w.name, "torch");
        assert_eq!(w.version, Version::from_str("2.8.0").unwrap());
        assert_eq!(w.build, None);
        assert_eq!(w.python_tags, ["cp312"]);
        assert_eq!(w.abi_tags, ["cp312"]);
        assert_eq!(w.platform_tags, ["manylinux_2_28_x86_64"]);
        assert_eq!(w.label.as_ref().map(VariantLabel::as_str), Some("cu128"));
        assert!(w.is_variant());
        assert!(!w.is_null_variant());
    }

    #[test]
    fn hashed_label() {
        let w = parse("test_package-0-py3-none-any-5d8be4b9.whl");
        assert_eq!(w.name, "test_package");
        assert_eq!(w.version.to_string(), "0");
        assert_eq!(w.label.unwrap().as_str(), "5d8be4b9");
        assert_eq!(w.build, None);
    }

    #[test]
    fn six_parts_with_build_tag_is_not_a_variant() {
        let w = parse("foo-1.0-1-py3-none-any.whl");
        assert_eq!(
            w.build,
            Some(BuildTag {
                number: 1,
                suffix: String::new()
            })
        );
        assert_eq!(w.python_tags, ["py3"]);
        assert_eq!(w.label, None);
        assert!(!w.is_variant());
        assert!(!w.is_null_variant());
    }

    #[test]
    fn seven_parts_is_build_and_label() {
        let w = parse("foo-1.0-1-py3-none-any-null.whl");
        assert_eq!(w.build.as_ref().unwrap().number, 1);
        assert!(w.is_variant());
        assert!(w.is_null_variant());
        let w = parse("numpy-2.3.2-1-cp313-cp313t-musllinux_1_2_x86_64-x86_64_v3.whl");
        assert_eq!(w.label.unwrap().as_str(), "x86_64_v3");
        assert_eq!(w.abi_tags, ["cp313t"]);
    }

    #[test]
    fn plain_wheel_has_no_label() {
        let w = parse("test_package-0-py3-none-any.whl");
        assert!(!w.is_variant());
        assert!(!w.is_null_variant());
        assert_eq!(w.to_string(), "test_package-0-py3-none-any.whl");
    }

    #[test]
    fn compressed_tag_sets_and_name_normalisation() {
        let w = parse("Foo.Bar-1.0-py2.py3-none-any.whl");
        assert_eq!(w.name, "foo_bar");
        assert_eq!(w.python_tags, ["py2", "py3"]);
        assert_eq!(w.to_string(), "foo_bar-1.0-py2.py3-none-any.whl");
        let w = parse(
            "numpy-2.0.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64-x86_64_v3.whl",
        );
        assert_eq!(
            w.platform_tags,
            ["manylinux_2_17_x86_64", "manylinux2014_x86_64"]
        );
        assert_eq!(w.label.unwrap().as_str(), "x86_64_v3");
    }

    #[test]
    fn name_runs_collapse_to_one_underscore() {
        assert_eq!(parse("A__b._.C-1-py3-none-any.whl").name, "a_b_c");
        assert_eq!(normalize_name("Foo-Bar"), "foo_bar");
        assert_eq!(normalize_name("foo---bar"), "foo_bar");
    }

    #[test]
    fn display_is_canonical() {
        let cases = [
            (
                "Foo-1.0.0RC1-py3-none-any.whl",
                "foo-1.0.0rc1-py3-none-any.whl",
            ),
            (
                "foo-01.0-007x-py3-none-any-cu.whl",
                "foo-1.0-7x-py3-none-any-cu.whl",
            ),
            (
                "torch-2.8.0+cu128-cp312-cp312-win_amd64-cu128.whl",
                "torch-2.8.0+cu128-cp312-cp312-win_amd64-cu128.whl",
            ),
            (
                "foo-1!2.0.post1.dev3-py3-none-any.whl",
                "foo-1!2.0.post1.dev3-py3-none-any.whl",
            ),
        ];
        for (input, canonical) in cases {
            assert_eq!(parse(input).to_string(), canonical, "{input}");
            // The canonical form is a fixed point.
            assert_eq!(parse(canonical).to_string(), canonical);
        }
    }

    #[test]
    fn variants_json_names() {
        assert_eq!(
            parse("test_package-0-py3-none-any-5d8be4b9.whl").variants_json_name(),
            "test_package-0-variants.json"
        );
        assert_eq!(
            parse("Foo.Bar-1.0-1-py3-none-any-null.whl").variants_json_name(),
            "foo_bar-1.0-variants.json"
        );
        let v = Version::from_str("2.0-alpha.1").unwrap();
        assert_eq!(
            variants_json_filename("My-Pkg", &v),
            "my_pkg-2.0a1-variants.json"
        );
    }

    #[test]
    fn variants_json_names_parse_back() {
        let v = Version::from_str("2.0-alpha.1").unwrap();
        let written = variants_json_filename("My-Pkg", &v);
        let parsed = parse_variants_json_filename(&written).unwrap().unwrap();
        assert_eq!((parsed.name.as_str(), parsed.version), ("my_pkg", v));
        // The version is after the last `-`; the name keeps its own.
        let parsed = parse_variants_json_filename("a-b-1.0-variants.json")
            .unwrap()
            .unwrap();
        assert_eq!(parsed.name, "a-b");
        for not_one in [
            "1.0-variants.json",
            "-1.0-variants.json",
            "a-1.0.json",
            "variants.json",
        ] {
            assert!(parse_variants_json_filename(not_one).is_none(), "{not_one}");
        }
        let e = parse_variants_json_filename("a-x.y-variants.json")
            .unwrap()
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("a-x.y-variants.json: invalid version `x.y`"),
            "{e}"
        );
    }

    #[test]
    fn build_tags_order_as_pep_427() {
        let tag = |b: &str| {
            parse(&format!("foo-1.0-{b}-py3-none-any.whl"))
                .build
                .unwrap()
        };
        assert_eq!(
            tag("12abc"),
            BuildTag {
                number: 12,
                suffix: "abc".into()
            }
        );
        // Numerically, not as strings: 2 < 10.
        assert!(tag("2") < tag("10"));
        // Same number: the suffix decides; an empty suffix comes first.
        assert!(tag("1") < tag("1a"));
        assert!(tag("1a") < tag("1b"));
        // No build tag sorts before any build tag.
        assert!(None < Some(tag("0")));
    }

    #[test]
    fn wrong_part_counts() {
        for (name, count) in [
            ("foo-1.0-py3-none.whl", 4),
            ("foo.whl", 1),
            ("foo-1.0-1-py3-none-any-cu-x.whl", 8),
        ] {
            let e = err(name);
            assert_eq!(
                e,
                FilenameError::PartCount {
                    filename: name.into(),
                    count
                }
            );
            let msg = e.to_string();
            assert!(
                msg.contains(name) && msg.contains(&count.to_string()),
                "{msg}"
            );
        }
    }

    #[test]
    fn must_end_in_whl() {
        for name in [
            "foo-1.0-py3-none-any.zip",
            "foo-1.0-py3-none-any.WHL",
            "",
            ".whl.tar",
        ] {
            assert!(
                matches!(err(name), FilenameError::NotAWheel { .. }),
                "{name}"
            );
        }
        assert!(err("foo-1.0-py3-none-any.zip")
            .to_string()
            .contains("`.whl`"));
    }

    #[test]
    fn bad_versions() {
        let e = err("foo-one-py3-none-any.whl");
        assert!(matches!(&e, FilenameError::InvalidVersion { version, .. } if version == "one"));
        let msg = e.to_string();
        assert!(
            msg.contains("foo-one-py3-none-any.whl") && msg.contains("`one`"),
            "{msg}"
        );
    }

    #[test]
    fn bad_labels() {
        for name in [
            "foo-1.0-py3-none-any-CU128.whl",
            "foo-1.0-1-py3-none-any-cu+128.whl",
            "foo-1.0-py3-none-any-cü.whl",
        ] {
            let e = err(name);
            assert!(
                matches!(e, FilenameError::InvalidLabel { .. }),
                "{name}: {e:?}"
            );
            assert!(e.to_string().contains(name));
            assert!(e.to_string().contains("variant label"), "{e}");
        }
        // A long label is accepted when reading (PEP 825 dropped the 16-character cap).
        assert!(parse("foo-1.0-py3-none-any-a_label_longer_than_sixteen.whl").is_variant());
    }

    #[test]
    fn empty_parts() {
        let cases = [
            ("-1.0-py3-none-any.whl", "distribution name"),
            ("foo--py3-none-any.whl", "version"),
            ("foo-1.0--none-any.whl", "Python tag"),
            ("foo-1.0-py3--any.whl", "ABI tag"),
            ("foo-1.0-py3-none-.whl", "platform tag"),
            ("foo-1.0-py3-none-any-.whl", "variant label"),
            ("foo-1.0-py2..py3-none-any.whl", "Python tag"),
            ("foo-1.0-py3-none-any.-x.whl", "platform tag"),
        ];
        for (name, part) in cases {
            let e = err(name);
            assert_eq!(
                e,
                FilenameError::EmptyPart {
                    filename: name.into(),
                    part
                },
                "{name}"
            );
            assert!(e.to_string().contains(part));
        }
    }

    #[test]
    fn six_parts_with_empty_third_is_read_as_python_tag() {
        // An empty third part does not start with a digit, so it is the (empty) Python tag.
        assert!(matches!(
            err("foo-1.0--none-any-x.whl"),
            FilenameError::EmptyPart {
                part: "Python tag",
                ..
            }
        ));
    }

    #[test]
    fn bad_names() {
        for name in [
            "foo bar-1.0-py3-none-any.whl",
            "_foo-1.0-py3-none-any.whl",
            "foo.-1.0-py3-none-any.whl",
            "dir/foo-1.0-py3-none-any.whl",
            "föö-1.0-py3-none-any.whl",
        ] {
            let e = err(name);
            assert!(
                matches!(e, FilenameError::InvalidName { .. }),
                "{name}: {e:?}"
            );
            assert!(e.to_string().contains("distribution name"));
        }
    }

    #[test]
    fn bad_tags() {
        let e = err("foo-1.0-py3-no+ne-any.whl");
        assert_eq!(
            e,
            FilenameError::InvalidTag {
                filename: "foo-1.0-py3-no+ne-any.whl".into(),
                kind: "ABI",
                tag: "no+ne".into()
            }
        );
        assert!(e.to_string().contains("ABI tag `no+ne`"));
    }

    #[test]
    fn python_tag_must_not_start_with_a_digit() {
        // Five parts: there is no build tag position, so the digit is an error.
        let e = err("foo-1.0-3py-none-any.whl");
        assert!(
            matches!(e, FilenameError::PythonTagStartsWithDigit { ref tag, .. } if tag == "3py")
        );
        // In a compressed set too.
        assert!(matches!(
            err("foo-1.0-py2.3-none-any-x.whl"),
            FilenameError::PythonTagStartsWithDigit { .. }
        ));
        // Seven parts: the fourth part is the Python tag.
        assert!(matches!(
            err("foo-1.0-1-3py-none-any-x.whl"),
            FilenameError::PythonTagStartsWithDigit { .. }
        ));
    }

    #[test]
    fn bad_build_tags() {
        let e = err("foo-1.0-x1-py3-none-any-cu.whl");
        assert!(
            matches!(e, FilenameError::InvalidBuildTag { reason, .. } if reason.contains("digit"))
        );
        assert!(matches!(
            err("foo-1.0-99999999999999999999999-py3-none-any.whl"),
            FilenameError::InvalidBuildTag { reason, .. } if reason.contains("64 bits")
        ));
        assert!(matches!(
            err("foo-1.0-1+x-py3-none-any.whl"),
            FilenameError::InvalidBuildTag { .. }
        ));
    }
}
