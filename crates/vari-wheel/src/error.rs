//! Why a wheel could not be read or failed a check. Every message starts with the wheel's path and
//! names the member or key at fault, so a user with many wheels knows which one to rebuild.

use std::fmt;
use std::path::PathBuf;

use vari_core::filename::FilenameError;
use vari_core::metadata::MetadataError;

/// An error reading or checking one wheel: the wheel's path and what is wrong.
///
/// Displayed as ``wheel `{path}`: {kind}``.
#[derive(Debug)]
pub struct WheelError {
    /// The wheel, as given to [`crate::inspect`].
    pub path: PathBuf,
    /// What is wrong (boxed: some kinds carry several strings, and `Result<_, WheelError>` is
    /// returned on every path).
    pub kind: Box<WheelErrorKind>,
}

impl WheelError {
    pub(crate) fn new(path: &std::path::Path, kind: WheelErrorKind) -> Self {
        Self {
            path: path.to_owned(),
            kind: Box::new(kind),
        }
    }
}

impl fmt::Display for WheelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "wheel `{}`: {}", self.path.display(), self.kind)
    }
}

impl std::error::Error for WheelError {
    // The kind's message is already part of this error's; its cause comes next in a chain.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.kind.source()
    }
}

/// What is wrong with a wheel. Every message names the member or key at fault.
#[derive(Debug, thiserror::Error)]
pub enum WheelErrorKind {
    /// The wheel file could not be opened.
    #[error("cannot open: {source}")]
    Open {
        /// The I/O error.
        source: std::io::Error,
    },
    /// The path has no file name, or its file name is not valid UTF-8.
    #[error("the path has no UTF-8 file name")]
    NoFileName,
    /// The path is a directory, not a wheel file.
    #[error("is a directory, not a wheel file")]
    IsADirectory,
    /// The file name is not a valid (variant) wheel filename.
    #[error("{source}")]
    Filename {
        /// What is wrong with the name.
        source: FilenameError,
    },
    /// The file is not a zip archive, or its central directory is truncated or corrupt.
    #[error("not a valid zip archive (truncated or corrupt?): {source}")]
    NotAZip {
        /// What the zip reader objected to.
        source: zip::result::ZipError,
    },
    /// A member could not be read (corrupt or truncated data, bad checksum, unsupported
    /// compression).
    #[error("cannot read member `{member}`: {message}")]
    Member {
        /// The member's name in the archive.
        member: String,
        /// What went wrong.
        message: String,
    },
    /// A member is larger than vari is willing to read into memory.
    #[error("member `{member}` is too large ({size} bytes, at most {limit} allowed)")]
    MemberTooLarge {
        /// The member's name in the archive.
        member: String,
        /// Its (declared or actual) uncompressed size, in bytes.
        size: u64,
        /// The cap, in bytes.
        limit: u64,
    },
    /// A member that must be text is not UTF-8.
    #[error("member `{member}` is not valid UTF-8")]
    NotUtf8 {
        /// The member's name in the archive.
        member: String,
    },
    /// No top-level `*.dist-info` directory with `WHEEL` or `METADATA` matches the wheel's name
    /// and version.
    #[error(
        "no `{expected}` directory (a top-level `*.dist-info/` with WHEEL or METADATA){}",
        FoundList(found)
    )]
    NoDistInfo {
        /// The directory expected from the filename, `{name}-{version}.dist-info`.
        expected: String,
        /// The `*.dist-info` directories that were found but do not match.
        found: Vec<String>,
    },
    /// More than one top-level `*.dist-info` directory: installers refuse such a wheel, and
    /// readers would disagree on which `METADATA` and `variant.json` are its own.
    #[error(
        "has more than one `.dist-info` directory ({}): a wheel has exactly one",
        dirs.join(", ")
    )]
    AmbiguousDistInfo {
        /// The top-level `.dist-info` directories.
        dirs: Vec<String>,
    },
    /// `variant.json` failed to parse or validate.
    #[error("invalid `{member}`:{}", ErrorList(errors))]
    InvalidVariantJson {
        /// The member's name in the archive.
        member: String,
        /// Every problem found, each naming the key at fault.
        errors: Vec<MetadataError>,
    },
    /// `variant.json` does not have exactly one entry in `variants`.
    #[error(
        "`{member}` must have exactly one entry in `variants`, found {}: [{}]",
        labels.len(),
        labels.join(", ")
    )]
    VariantCount {
        /// The member's name in the archive.
        member: String,
        /// The labels found.
        labels: Vec<String>,
    },
    /// The label in `variant.json` differs from the one in the filename.
    #[error(
        "the filename has label `{filename_label}` but `{member}` has `variants.{json_label}`"
    )]
    LabelMismatch {
        /// The member's name in the archive.
        member: String,
        /// The label in the filename.
        filename_label: String,
        /// The label in `variant.json`.
        json_label: String,
    },
    /// The wheel has a `variant.json` but its filename has no variant label.
    #[error("has `{member}` but its filename has no variant label")]
    VariantJsonWithoutLabel {
        /// The member's name in the archive.
        member: String,
    },
    /// The filename has a variant label but the wheel has no `variant.json`.
    #[error("the filename has variant label `{label}` but there is no `{member}`")]
    LabelWithoutVariantJson {
        /// The label in the filename.
        label: String,
        /// The member that is missing.
        member: String,
    },
    /// The `null` label carries properties, or a variant without properties is not labelled
    /// `null`.
    #[error("`{member}`: variant `{label}` {problem}")]
    NullVariant {
        /// The member's name in the archive.
        member: String,
        /// The label at fault.
        label: String,
        /// What is wrong.
        problem: &'static str,
    },
    /// The wheel has no RECORD.
    #[error("no `{member}` (every wheel must have one)")]
    MissingRecord {
        /// The member that is missing.
        member: String,
    },
    /// RECORD is not well-formed.
    #[error("`{member}` line {line}: {message}")]
    InvalidRecord {
        /// RECORD's name in the archive.
        member: String,
        /// The 1-based line number.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// A member that must be listed in RECORD is not.
    #[error("`{member}` is not listed in `{record}`")]
    NotInRecord {
        /// The member that is not listed.
        member: String,
        /// RECORD's name in the archive.
        record: String,
    },
    /// RECORD lists a hash that does not match the member's contents.
    #[error(
        "hash mismatch for `{member}`: `{record}` says {algorithm}={expected}, the \
         file has {algorithm}={actual}"
    )]
    HashMismatch {
        /// The member whose hash differs.
        member: String,
        /// RECORD's name in the archive.
        record: String,
        /// The hash algorithm (`sha256`, …).
        algorithm: String,
        /// The digest RECORD lists (urlsafe base64, no padding).
        expected: String,
        /// The digest of the member (urlsafe base64, no padding).
        actual: String,
    },
    /// RECORD lists a size that does not match the member's contents.
    #[error(
        "size mismatch for `{member}`: `{record}` says {expected} bytes, the file has {actual}"
    )]
    SizeMismatch {
        /// The member whose size differs.
        member: String,
        /// RECORD's name in the archive.
        record: String,
        /// The size RECORD lists.
        expected: u64,
        /// The member's actual size.
        actual: u64,
    },
    /// RECORD lists a file that the archive does not have.
    #[error("`{record}` lists `{member}`, which is not in the archive")]
    MissingFromArchive {
        /// The listed path.
        member: String,
        /// RECORD's name in the archive.
        record: String,
    },
    /// A RECORD row of a file other than RECORD itself has no hash.
    #[error("`{record}` line {line}: `{member}` has no hash")]
    UnhashedEntry {
        /// The member whose row has no hash.
        member: String,
        /// RECORD's name in the archive.
        record: String,
        /// The 1-based line number.
        line: u64,
    },
    /// The core metadata file (`METADATA`) cannot be read or rewritten.
    #[error("`{member}`: {message}")]
    InvalidCoreMetadata {
        /// The member, `{dist_info}/METADATA`.
        member: String,
        /// What is wrong.
        message: String,
    },
    /// The wheel to turn into a variant wheel already is one.
    #[error("is already a variant wheel (label `{label}`)")]
    AlreadyVariant {
        /// The label in its filename.
        label: String,
    },
    /// The wheel to turn back into a plain wheel is not a variant wheel.
    #[error("is not a variant wheel (its filename has no label)")]
    NotVariant,
    /// The properties of the variant to write are not valid.
    #[error("invalid variant properties{}", LineList(problems))]
    InvalidProperties {
        /// One sentence per problem, each naming the property.
        problems: Vec<String>,
    },
    /// The label and properties of the variant to write do not fit together.
    #[error("{message}")]
    InvalidLabel {
        /// What is wrong.
        message: String,
    },
    /// The variant metadata to write cannot be expressed in the chosen schema, or the given
    /// metadata does not describe the variant's namespaces.
    #[error("cannot write `variant.json`{}", ErrorList(errors))]
    VariantMetadata {
        /// Every problem, each with its key path.
        errors: Vec<MetadataError>,
    },
    /// Properties could not be inferred from the wheel's binaries.
    #[error("cannot infer properties: {message}")]
    Infer {
        /// Why.
        message: String,
    },
    /// The output could not be written.
    #[error("cannot write {}: {message}", output.display())]
    Write {
        /// The output file.
        output: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The archive's layout cannot be read as stored (a malformed or split central directory,
    /// data before the first member, a wrapped entry count): vari refuses what it cannot check.
    #[error("not a valid zip archive: {reason}")]
    Layout {
        /// What is wrong.
        reason: String,
    },
    /// A member an installer would write outside its target directory, or as something other
    /// than a regular file or directory: `../x`, `/x`, `C:\x`, a symbolic link, a device.
    #[error("member `{member}` {problem}")]
    UnsafeMember {
        /// The member's name in the archive (control characters escaped).
        member: String,
        /// What is wrong with it.
        problem: String,
    },
    /// Several central-directory entries have the same name: installers would pick either.
    #[error("member `{member}` appears {count} times (installers would pick either copy)")]
    DuplicateMember {
        /// The member's name.
        member: String,
        /// How many entries have it.
        count: usize,
    },
    /// Two members' stored data overlap: the "overlapping files" zip bomb, where many entries
    /// inflate the same compressed bytes.
    #[error("the data of member `{member}` overlaps that of `{other}` (a zip bomb's layout)")]
    OverlappingMembers {
        /// The member whose data starts inside the other's.
        member: String,
        /// The member whose data it overlaps.
        other: String,
    },
    /// The members declare more uncompressed bytes than the inflation ceiling allows.
    #[error(
        "its members declare {declared} uncompressed bytes, more than the ceiling of {ceiling} \
         ({ratio} times the archive's {archive} bytes, at least {floor}; set `max-inflate-ratio` \
         in vari.toml or {env} to a larger ratio to accept it)",
        floor = crate::limits::MIN_INFLATE_CEILING,
        env = crate::limits::MAX_INFLATE_RATIO_ENV
    )]
    InflationCeiling {
        /// The sum of the members' declared uncompressed sizes.
        declared: u64,
        /// The ceiling for this archive.
        ceiling: u64,
        /// The ratio in force ([`crate::max_inflate_ratio`]).
        ratio: u64,
        /// The archive's size in bytes.
        archive: u64,
    },
}

impl WheelErrorKind {
    /// The archive member the problem is about, when there is one (`…dist-info/RECORD`,
    /// `torch/lib/libtorch.so`).
    pub fn member(&self) -> Option<&str> {
        match self {
            Self::Member { member, .. }
            | Self::MemberTooLarge { member, .. }
            | Self::NotUtf8 { member }
            | Self::InvalidVariantJson { member, .. }
            | Self::VariantCount { member, .. }
            | Self::LabelMismatch { member, .. }
            | Self::VariantJsonWithoutLabel { member }
            | Self::LabelWithoutVariantJson { member, .. }
            | Self::NullVariant { member, .. }
            | Self::MissingRecord { member }
            | Self::InvalidRecord { member, .. }
            | Self::NotInRecord { member, .. }
            | Self::HashMismatch { member, .. }
            | Self::SizeMismatch { member, .. }
            | Self::MissingFromArchive { member, .. }
            | Self::UnhashedEntry { member, .. }
            | Self::InvalidCoreMetadata { member, .. }
            | Self::UnsafeMember { member, .. }
            | Self::DuplicateMember { member, .. }
            | Self::OverlappingMembers { member, .. } => Some(member),
            _ => None,
        }
    }
}

/// Renders `found` as `; found: a, b` (or nothing when empty).
struct FoundList<'a>(&'a [String]);

impl fmt::Display for FoundList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, "; found: {}", self.0.join(", "))
        }
    }
}

/// Renders sentences one per indented line.
struct LineList<'a>(&'a [String]);

impl fmt::Display for LineList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in self.0 {
            write!(f, "\n  {line}")?;
        }
        Ok(())
    }
}

/// Renders metadata errors one per indented line.
struct ErrorList<'a>(&'a [MetadataError]);

impl fmt::Display for ErrorList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for error in self.0 {
            write!(f, "\n  {error}")?;
        }
        Ok(())
    }
}
