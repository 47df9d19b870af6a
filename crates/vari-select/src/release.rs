//! A release: the variant and non-variant wheels of one version of one project, and the
//! combined variant metadata that describes their labels.
//!
//! It is read from a directory of wheels (with or without the release's `*-variants.json`), from
//! one wheel, or from a metadata file alone (`*-variants.json`, `variant.json`: labels without
//! files). Index pages give releases too (see the index client); they fill the same type.

use std::io::Read;
use std::path::{Path, PathBuf};

use vari_core::filename::WheelFilename;
use vari_core::metadata::{self, CompactReadError, MetadataError, SourceKind, VariantMetadata};
use vari_core::VariantLabel;
use vari_wheel::{WheelError, WheelErrorKind, WheelInfo};

use crate::error::InputError;

/// What kind of metadata a path holds, decided by its name (and whether it is a directory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// `pyproject.toml` (or any `.toml`): the `[variant]` table.
    Pyproject,
    /// A wheel's `variant.json`.
    VariantJson,
    /// An index file, `*-variants.json` (any other `.json`).
    IndexJson,
    /// A wheel.
    Wheel,
    /// A directory of wheels.
    Directory,
}

impl InputKind {
    /// The kind of `path`.
    ///
    /// ```
    /// use vari_select::InputKind;
    /// assert_eq!(InputKind::of("torch-2.8.0-variants.json".as_ref()), InputKind::IndexJson);
    /// assert_eq!(InputKind::of("a-1-py3-none-any-cu12.whl".as_ref()), InputKind::Wheel);
    /// ```
    pub fn of(path: &Path) -> Self {
        if path.is_dir() {
            return Self::Directory;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if name.ends_with(".whl") {
            Self::Wheel
        } else if name.ends_with(".toml") {
            Self::Pyproject
        } else if name == "variant.json" {
            Self::VariantJson
        } else {
            Self::IndexJson
        }
    }

    /// The source kind the metadata reader validates a JSON file against.
    pub fn source_kind(self) -> SourceKind {
        match self {
            Self::VariantJson => SourceKind::WheelFile,
            _ => SourceKind::IndexFile,
        }
    }
}

/// One wheel file of a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseFile {
    /// The parsed file name.
    pub filename: WheelFilename,
    /// Where the file is: a local path or a URL.
    pub location: String,
}

impl ReleaseFile {
    /// The file name (`torch-2.8.0-cp312-cp312-manylinux_2_28_x86_64-cu128.whl`).
    pub fn name(&self) -> String {
        self.filename.to_string()
    }
}

/// Why the wheels of a label cannot be considered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnusableReason {
    /// The release's metadata has no entry for the label (PEP 825: such wheels are
    /// incompatible).
    NotDescribed,
    /// The wheel carries a label but no `variant.json`.
    NoVariantJson,
    /// The wheel could not be read; the message says why.
    Unreadable(String),
}

impl std::fmt::Display for UnusableReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotDescribed => f.write_str("the release metadata has no entry for this label"),
            Self::NoVariantJson => f.write_str("the wheel has no variant.json"),
            Self::Unreadable(why) => write!(f, "unreadable wheel: {why}"),
        }
    }
}

/// The wheels of one version and the metadata describing their labels.
#[derive(Debug, Clone)]
pub struct Release {
    /// The normalised project name, when known (a metadata file alone does not say).
    pub name: Option<String>,
    /// The combined metadata. From a directory it holds only labels that have a wheel.
    pub metadata: VariantMetadata,
    /// The wheel files (none when the release was read from a metadata file alone).
    pub files: Vec<ReleaseFile>,
    /// Whether [`Release::files`] lists the release's wheels (a directory, a wheel, an index
    /// page) rather than nothing but metadata.
    pub has_files: bool,
    /// Labels whose wheels cannot be considered, with why.
    pub unusable: Vec<(VariantLabel, UnusableReason)>,
    /// Problems that were skipped over (invalid entries dropped, unreadable wheels).
    pub warnings: Vec<InputError>,
}

impl Release {
    /// A release described by metadata only: every label, no files.
    pub fn from_metadata(metadata: VariantMetadata) -> Self {
        Self {
            name: None,
            metadata,
            files: Vec::new(),
            has_files: false,
            unusable: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Reads what `path` holds: a directory of wheels of one release, a wheel, or a
    /// `*-variants.json` / `variant.json` (read leniently: invalid variants are dropped and
    /// returned as warnings).
    pub fn read(path: &Path) -> Result<Self, InputError> {
        let kind = InputKind::of(path);
        match kind {
            InputKind::Directory => read_directory(path),
            InputKind::Wheel => read_one_wheel(path),
            InputKind::Pyproject => Err(InputError::new(
                path,
                "a pyproject.toml lists no variants; give a *-variants.json, a wheel or a \
                 directory of wheels",
            )),
            InputKind::VariantJson | InputKind::IndexJson => read_json_release(path, kind),
        }
    }

    /// A release from the text of a JSON metadata file; `path` names it in messages.
    pub fn from_json_text(path: &Path, text: &str, kind: InputKind) -> Result<Self, InputError> {
        let (metadata, problems) = metadata::read_json_lenient(text, kind.source_kind())
            .map_err(|e| crate::error::from_metadata(path, &e))?;
        Ok(Self::from_read(path, metadata, &problems))
    }

    /// A release from metadata read from `path`, with the problems met reading it.
    fn from_read(path: &Path, metadata: VariantMetadata, problems: &[MetadataError]) -> Self {
        let mut release = Self::from_metadata(metadata);
        release.warnings = located(path, problems);
        let impossible = drop_impossible_variants(path, &mut release.metadata);
        release.warnings.extend(impossible);
        release
    }

    /// The non-variant wheels.
    pub fn plain_files(&self) -> impl Iterator<Item = &ReleaseFile> {
        self.files.iter().filter(|f| f.filename.label.is_none())
    }

    /// The wheels carrying `label`.
    pub fn files_of<'a>(
        &'a self,
        label: &'a VariantLabel,
    ) -> impl Iterator<Item = &'a ReleaseFile> {
        self.files
            .iter()
            .filter(move |f| f.filename.label.as_ref() == Some(label))
    }

    /// Why the wheels of `label` cannot be considered, if they cannot.
    pub fn unusable_reason(&self, label: &VariantLabel) -> Option<&UnusableReason> {
        self.unusable
            .iter()
            .find_map(|(l, why)| (l == label).then_some(why))
    }
}

/// What the built-in providers say about their features' values: may a variant list several
/// values of one? (`None` for a namespace no built-in provider owns.)
pub fn builtin_feature_kinds(
    namespace: &vari_core::Namespace,
    feature: &vari_core::FeatureName,
) -> Option<bool> {
    vari_detect::builtin_feature_kind(namespace.as_str(), feature.as_str()).map(|k| k.multi_value)
}

/// Drops the variants that list several values of a feature its built-in provider says is
/// single-value (PEP 817: such a variant must not exist), as warnings naming `path`.
fn drop_impossible_variants(path: &Path, metadata: &mut VariantMetadata) -> Vec<InputError> {
    let problems = metadata::remove_multi_valued_single_features(metadata, &builtin_feature_kinds);
    located(path, &problems)
}

/// Reads a text file, explaining content that is not text.
pub fn read_text(path: &Path) -> Result<String, InputError> {
    text_of(path, read_bytes(path)?)
}

/// The bytes of a metadata or profile file: a regular file, opened without blocking and read
/// up to a ceiling (vari_fs::input).
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>, InputError> {
    vari_fs::read_input(path, vari_fs::InputKind::Metadata).map_err(|e| input_error(path, e))
}

/// A `vari_fs` input error as this crate's (which names the path itself).
fn input_error(path: &Path, error: vari_fs::InputError) -> InputError {
    match error {
        vari_fs::InputError::Io { source, .. } => InputError::io(path, &source),
        other => InputError::new(path, other.problem()),
    }
}

/// How much of a metadata file is read at a time.
const READ_BLOCK: usize = 64 * 1024;

/// A release from a JSON metadata file, compacted as it is read: an index file is mostly
/// indentation, and holding it whole would cost the reader as much memory again as it has
/// text, all of it fresh pages the kernel must zero.
fn read_json_release(path: &Path, kind: InputKind) -> Result<Release, InputError> {
    let io_error = |e: std::io::Error| InputError::io(path, &e);
    let mut file = vari_fs::open_input(path).map_err(|e| input_error(path, e))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let limit = vari_fs::InputKind::Metadata.limit();
    let too_large = || {
        input_error(
            path,
            vari_fs::InputError::TooLarge {
                path: path.to_owned(),
                limit,
            },
        )
    };
    if size > limit {
        return Err(too_large());
    }
    let mut total: u64 = 0;
    // The compacted text is never longer than the file. Capacity is only reserved (pages never
    // written are never touched), and capped: the size of a special file means nothing.
    const MAX_RESERVED: u64 = 256 << 20;
    let reserved = usize::try_from(size.min(MAX_RESERVED)).unwrap_or(0);
    let mut compact = metadata::CompactJson::with_capacity(reserved);
    let mut block = vec![0; READ_BLOCK];
    loop {
        match file.read(&mut block) {
            Ok(0) => break,
            Ok(n) => {
                total += n as u64;
                if total > limit {
                    return Err(too_large());
                }
                compact.push(&block[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(e)),
        }
    }
    match metadata::read_compact_json_lenient(compact, kind.source_kind()) {
        Ok((metadata, problems)) => Ok(Release::from_read(path, metadata, &problems)),
        Err(CompactReadError::Invalid(errors)) => Err(crate::error::from_metadata(path, &errors)),
        // Not text, or not JSON: the file as written, for an error that points into it.
        Err(CompactReadError::NotJson) => Release::from_json_text(path, &read_text(path)?, kind),
    }
}

/// Bytes as text: a UTF-8 byte-order mark is dropped; a zip archive or other binary content is
/// named for what it is.
pub fn text_of(path: &Path, bytes: Vec<u8>) -> Result<String, InputError> {
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        return Err(InputError::new(
            path,
            "is a zip archive, not a metadata file (a wheel's name ends in .whl)",
        ));
    }
    let mut text = String::from_utf8(bytes)
        .map_err(|_| InputError::new(path, "is not UTF-8 text (expected JSON or TOML)"))?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// `file: key: message` problems as located input errors.
fn located(path: &Path, problems: &[MetadataError]) -> Vec<InputError> {
    problems
        .iter()
        .map(|p| InputError::at(path, p.path.clone(), p.message.clone()))
        .collect()
}

/// A wheel error as a located input error: a `variant.json` problem names the member and key.
pub fn wheel_input_error(wheel: &Path, error: &WheelError) -> InputError {
    if let WheelErrorKind::InvalidVariantJson { member, errors } = error.kind.as_ref() {
        if let Some(first) = errors.first() {
            let key = if first.path.is_empty() {
                member.clone()
            } else {
                format!("{member}: {}", first.path)
            };
            let more = match errors.len() - 1 {
                0 => String::new(),
                1 => " (and 1 more problem)".to_owned(),
                n => format!(" (and {n} more problems)"),
            };
            return InputError::at(wheel, key, format!("{}{more}", first.message));
        }
    }
    InputError::new(wheel, error.kind.to_string())
}

/// Opens and checks one wheel.
pub fn inspect_wheel(path: &Path) -> Result<WheelInfo, InputError> {
    if path.is_dir() {
        return Err(InputError::new(path, "is a directory, not a wheel file"));
    }
    vari_wheel::inspect(path).map_err(|e| wheel_input_error(path, &e))
}

fn read_one_wheel(path: &Path) -> Result<Release, InputError> {
    let info = inspect_wheel(path)?;
    let file = ReleaseFile {
        filename: info.filename.clone(),
        location: path.display().to_string(),
    };
    let mut metadata = match info.metadata {
        Some(meta) => meta,
        // A plain wheel: an empty release whose only file is the non-variant fallback.
        None => empty_metadata(),
    };
    let warnings = drop_impossible_variants(path, &mut metadata);
    Ok(Release {
        name: Some(info.filename.name.clone()),
        metadata,
        files: vec![file],
        has_files: true,
        unusable: Vec::new(),
        warnings,
    })
}

/// Metadata with no variants, for a release that has only non-variant wheels.
pub(crate) fn empty_metadata() -> VariantMetadata {
    VariantMetadata {
        generation: metadata::SchemaGeneration::V0_1,
        schema_url: None,
        priorities: Default::default(),
        providers: Default::default(),
        static_properties: Default::default(),
        variants: Default::default(),
    }
}

/// The wheels and index files of one directory.
struct Listing {
    wheels: Vec<(PathBuf, WheelFilename)>,
    index_files: Vec<PathBuf>,
    /// `*.whl` files whose names are not wheel filenames (skipped).
    warnings: Vec<InputError>,
}

fn list_directory(dir: &Path) -> Result<Listing, InputError> {
    let mut listing = Listing {
        wheels: Vec::new(),
        index_files: Vec::new(),
        warnings: Vec::new(),
    };
    let entries = std::fs::read_dir(dir).map_err(|e| InputError::io(dir, &e))?;
    for entry in entries {
        let path = entry.map_err(|e| InputError::io(dir, &e))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.ends_with(".whl") {
            match WheelFilename::parse(name) {
                Ok(filename) => listing.wheels.push((path, filename)),
                Err(e) => listing
                    .warnings
                    .push(InputError::new(&path, format!("skipped: {e}"))),
            }
        } else if name.ends_with("-variants.json") {
            listing.index_files.push(path);
        }
    }
    // Directory order is arbitrary; sorting makes warnings and errors reproducible.
    listing.wheels.sort_by(|a, b| a.0.cmp(&b.0));
    listing.index_files.sort();
    listing.warnings.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(listing)
}

/// A directory of wheels of one release: the release's `*-variants.json` when the directory has
/// it, else the combination of the wheels' `variant.json` files. Wheels whose label the metadata
/// does not describe are unusable; labels without a wheel are dropped.
fn read_directory(dir: &Path) -> Result<Release, InputError> {
    let mut listing = list_directory(dir)?;
    let mut warnings = std::mem::take(&mut listing.warnings);
    let Some((_, first)) = listing.wheels.first() else {
        return Err(InputError::new(dir, "has no wheels (*.whl)"));
    };
    let release = (first.name.clone(), first.version.clone());
    if let Some((path, other)) = listing
        .wheels
        .iter()
        .find(|(_, f)| (f.name.clone(), f.version.clone()) != release)
    {
        return Err(InputError::new(
            path,
            format!(
                "is {} {}, but the directory also has {} {}: give one release at a time",
                other.name, other.version, release.0, release.1
            ),
        ));
    }
    let mut unusable = Vec::new();
    let index_name = first.variants_json_name();
    let index_file = listing
        .index_files
        .iter()
        .find(|p| p.file_name().is_some_and(|n| n == index_name.as_str()));
    let has_variant_wheels = listing.wheels.iter().any(|(_, f)| f.label.is_some());
    let mut combined = match index_file {
        Some(index) => {
            let text = read_text(index)?;
            let (meta, problems) = metadata::read_json_lenient(&text, SourceKind::IndexFile)
                .map_err(|e| crate::error::from_metadata(index, &e))?;
            warnings.extend(located(index, &problems));
            meta
        }
        None if has_variant_wheels => wheels_metadata(&listing, &mut warnings, &mut unusable),
        None => empty_metadata(),
    };

    let wheel_labels: Vec<&VariantLabel> = listing
        .wheels
        .iter()
        .filter_map(|(_, f)| f.label.as_ref())
        .collect();
    for label in &wheel_labels {
        let already = unusable.iter().any(|(l, _)| l == *label);
        if !combined.variants.contains_key(*label) && !already {
            unusable.push(((*label).clone(), UnusableReason::NotDescribed));
        }
    }
    combined
        .variants
        .retain(|label, _| wheel_labels.contains(&label));
    warnings.extend(drop_impossible_variants(dir, &mut combined));
    let files = listing
        .wheels
        .iter()
        .map(|(path, filename)| ReleaseFile {
            filename: filename.clone(),
            location: path.display().to_string(),
        })
        .collect();
    Ok(Release {
        name: Some(release.0),
        metadata: combined,
        files,
        has_files: true,
        unusable,
        warnings,
    })
}

/// Combines the `variant.json` of every variant wheel in the listing; unreadable wheels are
/// skipped with a warning and reported unusable. Conflicting wheels make every label they
/// carry unusable rather than failing the whole directory.
fn wheels_metadata(
    listing: &Listing,
    warnings: &mut Vec<InputError>,
    unusable: &mut Vec<(VariantLabel, UnusableReason)>,
) -> VariantMetadata {
    let mut read: Vec<(String, VariantMetadata)> = Vec::new();
    for (path, filename) in &listing.wheels {
        let Some(label) = &filename.label else {
            continue;
        };
        match vari_wheel::inspect(path) {
            Ok(WheelInfo {
                metadata: Some(meta),
                ..
            }) => read.push((path.display().to_string(), meta)),
            Ok(_) => unusable.push((label.clone(), UnusableReason::NoVariantJson)),
            Err(e) => {
                let error = wheel_input_error(path, &e);
                unusable.push((label.clone(), UnusableReason::Unreadable(error.to_string())));
                warnings.push(error);
            }
        }
    }
    if read.is_empty() {
        return empty_metadata();
    }
    match metadata::combine(read.iter().map(|(source, meta)| (source.as_str(), meta))) {
        Ok(meta) => meta,
        Err(e) => {
            // The sources disagree: nothing combined can be trusted.
            let dir = listing
                .wheels
                .first()
                .and_then(|(p, _)| p.parent())
                .unwrap_or(Path::new("."));
            warnings.push(InputError::new(dir, e.to_string()));
            for (_, filename) in &listing.wheels {
                if let Some(label) = &filename.label {
                    if !unusable.iter().any(|(l, _)| l == label) {
                        unusable.push((
                            label.clone(),
                            UnusableReason::Unreadable(format!("conflicting metadata: {e}")),
                        ));
                    }
                }
            }
            empty_metadata()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_file_names() {
        assert_eq!(
            InputKind::of(Path::new("x/pyproject.toml")),
            InputKind::Pyproject
        );
        assert_eq!(
            InputKind::of(Path::new("x/variant.json")),
            InputKind::VariantJson
        );
        assert_eq!(
            InputKind::of(Path::new("torch-2.8-variants.json")),
            InputKind::IndexJson
        );
        assert_eq!(
            InputKind::of(Path::new("a-1-py3-none-any.WHL")),
            InputKind::Wheel
        );
        assert_eq!(InputKind::of(Path::new(".")), InputKind::Directory);
    }

    #[test]
    fn text_names_what_it_is_not() {
        let zip = text_of(Path::new("foo.zip"), b"PK\x03\x04rest".to_vec()).unwrap_err();
        assert!(zip.message.contains("zip archive"), "{zip}");
        let binary = text_of(Path::new("b"), vec![0xff, 0xfe, 0]).unwrap_err();
        assert!(binary.message.contains("not UTF-8"), "{binary}");
        let bom = text_of(Path::new("b"), b"\xef\xbb\xbf{}".to_vec()).unwrap();
        assert_eq!(bom, "{}");
    }

    /// What reading `path` gives, as comparable text: the metadata, or the errors, and the
    /// warnings.
    fn outcome(read: Result<Release, InputError>) -> String {
        match read {
            Ok(r) => format!("{:?} {:?}", r.metadata, r.warnings),
            Err(e) => format!("error {e:?}"),
        }
    }

    #[test]
    fn a_file_compacted_as_it_is_read_reads_as_its_text() {
        let dir = tempfile::tempdir().unwrap();
        let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
        let torch = std::fs::read(testdata.join("variants-json/torch-2.10.0-variants.json"));
        let torch = torch.unwrap();
        // Larger than one read block, so that blocks split strings and indentation.
        let mut big = torch.clone();
        let pad = vec![b' '; READ_BLOCK + 7];
        big.splice(1..1, pad);
        let mut bom = b"\xef\xbb\xbf".to_vec();
        bom.extend_from_slice(&torch);
        let invalid_entry =
            String::from_utf8(torch.clone())
                .unwrap()
                .replacen("\"nvidia\"", "\"NVIDIA!\"", 1);
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("torch", torch.clone()),
            ("big", big),
            ("bom", bom),
            ("invalid-entry", invalid_entry.into_bytes()),
            (
                "syntax",
                b"{\n  \"variants\": {\n    \"a\": [1 2]\n  }\n}\n".to_vec(),
            ),
            ("truncated", torch[..torch.len() / 2].to_vec()),
            ("not-utf8", b"{\"a\": \"\xff\"}".to_vec()),
            ("zip", b"PK\x03\x04rest".to_vec()),
            ("empty", Vec::new()),
            (
                "schema",
                br#"{"$schema": "https://variants-schema.wheelnext.dev/v9.0.0.json"}"#.to_vec(),
            ),
        ];
        for (name, bytes) in cases {
            let path = dir.path().join(format!("{name}-1.0-variants.json"));
            std::fs::write(&path, &bytes).unwrap();
            let streamed = outcome(read_json_release(&path, InputKind::IndexJson));
            let whole = outcome(
                text_of(&path, bytes)
                    .and_then(|t| Release::from_json_text(&path, &t, InputKind::IndexJson)),
            );
            assert_eq!(streamed, whole, "{name}");
        }
    }

    #[test]
    fn a_wheel_path_that_is_a_directory_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("a-1-py3-none-any.whl");
        std::fs::create_dir(&fake).unwrap();
        let err = inspect_wheel(&fake).unwrap_err();
        assert_eq!(err.message, "is a directory, not a wheel file");
    }
}
