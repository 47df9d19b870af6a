//! Variant wheel archives: reading, checking and writing them without extracting.
//!
//! - [`inspect`]: the filename, the `.dist-info` directory, RECORD's format, and `variant.json`
//!   against the label and its RECORD hash. Reads only the central directory, RECORD and
//!   `variant.json`, so it is as fast as listing the archive.
//! - [`validate`] / [`check`]: the same, plus every member's hash and size against RECORD,
//!   with every problem returned as data ([`Validation`]) rather than the first one as an
//!   error.
//! - [`make_variant`] / [`unmake`]: a plain wheel → a variant wheel and back. Members are
//!   copied raw (no decompression or recompression), in order, with their timestamps and
//!   permissions; only `variant.json`, RECORD and the filename change; the output appears
//!   atomically through `vari_fs`.
//! - [`derive_variant`]: a variant wheel made of another wheel with some members rewritten
//!   (their RECORD rows updated, `variant.json` added or replaced, the label changed); the
//!   rest copied raw.
//! - [`replace_metadata`]: a copy with other core metadata (`METADATA`, e.g. with its
//!   variant markers decided for the selected wheel); only METADATA and RECORD change, the
//!   rest is copied raw, and the result carries the output's size and SHA-256.
//! - [`repack`]: existing builds (`torch-2.10.0+cu128`, `cupy-cuda12x`) → one variant release,
//!   driven by a [`RepackConfig`]: labels and properties per build, the local version
//!   stripped, the distribution renamed, `Requires-Dist` rewritten, and the release's combined
//!   `*-variants.json`.
//!
//! Format rules (names, labels, metadata of every schema generation, combining) come from
//! `vari-core`. What this crate leaves to its caller: the valid values of each provider's
//! properties ([`ValidValues`], filled from the provider registry) and reading what a wheel's
//! binaries need ([`InferProperties`], implemented over `vari-scan`), so that it depends on
//! neither hardware detection nor binary analysis.
//!
//! ```no_run
//! let info = vari_wheel::inspect("torch-2.8.0-cp312-cp312-manylinux_2_28_x86_64-cu128.whl".as_ref())?;
//! if let Some(metadata) = &info.metadata {
//!     println!("{} has {} variant(s)", info.filename, metadata.variants.len());
//! }
//! # Ok::<(), vari_wheel::WheelError>(())
//! ```

mod archive;
mod central;
mod check;
mod core_metadata;
mod derive;
mod error;
mod glob;
mod layout;
mod limits;
mod make;
mod reader;
mod record;
mod record_edit;
mod repack;
mod replace_metadata;
mod rewrite;
mod sink;
mod valid_values;
mod variant;
mod verbatim;

use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

use vari_core::filename::WheelFilename;
use vari_core::metadata::VariantMetadata;

pub use crate::check::{check, check_reader, validate, Depth, Validation};
pub use crate::derive::{derive_variant, derive_variant_from_files};
pub use crate::error::{WheelError, WheelErrorKind};
pub use crate::limits::{
    max_inflate_ratio, parse_inflate_ratio, set_max_inflate_ratio, MAX_INFLATE_RATIO,
    MAX_INFLATE_RATIO_ENV, MAX_RECORD_BYTES, MAX_VARIANT_JSON_BYTES, MIN_INFLATE_CEILING,
};
pub use crate::make::{make_variant, unmake, WrittenWheel};
pub use crate::record::RecordCheck;
pub use crate::repack::{
    repack, repack_with, BuildMatch, BuildRule, ConfigError, InferProperties, RepackConfig,
    RepackError, RepackOutput, RequiresDistEdit, SplitBuild, SPLIT_FAT_SUFFIX, SPLIT_FEATURE,
};
pub use crate::replace_metadata::{read_core_metadata, replace_metadata};
pub use crate::valid_values::ValidValues;
pub use crate::variant::{LabelChoice, VariantSpec};

/// What [`inspect`] learned about a wheel.
#[derive(Debug, Clone)]
pub struct WheelInfo {
    /// The wheel's path, as given.
    pub path: PathBuf,
    /// The parsed file name.
    pub filename: WheelFilename,
    /// The wheel's `variant.json`, with exactly one variant whose label is the filename's;
    /// `None` for a plain (non-variant) wheel.
    pub metadata: Option<VariantMetadata>,
    /// The `.dist-info` directory's name in the archive (`test_package-0.dist-info`).
    pub dist_info: String,
    /// What was verified of RECORD.
    pub record: RecordCheck,
}

/// Opens and checks the wheel at `path` (see the crate docs for what is checked); the first
/// problem found is the error.
pub fn inspect(path: &Path) -> Result<WheelInfo, WheelError> {
    first_problem(check(path, Depth::Metadata)?)
}

/// Like [`inspect`], for a wheel already open or in memory. `path` supplies the file name (which
/// carries the label) and names the wheel in errors; it is not opened.
pub fn inspect_reader<R: Read + Seek>(path: &Path, reader: R) -> Result<WheelInfo, WheelError> {
    first_problem(check_reader(path, reader, Depth::Metadata)?)
}

/// The checks [`inspect`] makes of a wheel's listing, for a central directory read on its own
/// (a remote wheel's, fetched with range requests, as the index client does for select, the
/// proxy and `index validate`): every member's name and type, duplicate names, data that
/// overlaps, and the one-`.dist-info` rule. `directory` is the central directory as stored,
/// `offset` where it starts in the archive. Returns the wheel's `.dist-info` directory, the
/// only place its `METADATA` and `variant.json` may be read from; else the first problem.
pub fn check_listing(
    filename: &WheelFilename,
    directory: &[u8],
    offset: u64,
) -> Result<String, WheelErrorKind> {
    let cd = central::CentralDirectory::from_bytes(directory.to_vec(), offset).map_err(|why| {
        WheelErrorKind::Layout {
            reason: why.0.to_owned(),
        }
    })?;
    if let Some(first) = layout::listing_problems(&cd).into_iter().next() {
        return Err(first);
    }
    // Every name is UTF-8 here: the layout check refuses any other.
    let names = cd
        .entries
        .iter()
        .map(|e| std::str::from_utf8(cd.name(e)).unwrap_or_default());
    archive::dist_info_of(filename, names)
}

/// A [`Validation`] without problems as [`WheelInfo`]; else its first problem.
fn first_problem(v: Validation) -> Result<WheelInfo, WheelError> {
    match (v.problems.is_empty(), v.dist_info, v.record) {
        (true, Some(dist_info), Some(record)) => Ok(WheelInfo {
            path: v.path,
            filename: v.filename,
            metadata: v.metadata,
            dist_info,
            record,
        }),
        (_, dist_info, record) => {
            let path = v.path.clone();
            let first = v.problems.into_iter().next();
            // A missing dist-info or RECORD always comes with its problem; the fallback only
            // keeps this total.
            let kind = first.unwrap_or_else(|| WheelErrorKind::MissingRecord {
                member: format!("{}/RECORD", dist_info.unwrap_or_default()),
            });
            drop(record);
            Err(WheelError::new(&path, kind))
        }
    }
}

/// The rules every member of the wheel at `path` must follow as stored (`layout.rs`, as
/// [`validate`] checks them): names that stay inside the install directory, regular files and
/// directories only, each name once, no overlapping data, the declared total under the
/// inflation ceiling. Reads the central directory and each local header, inflates nothing.
/// For readers outside this crate (`vari-scan`) that read members their own way: the first
/// problem is the error.
pub fn check_members(path: &Path) -> Result<(), WheelError> {
    let file = check::open(path)?;
    let mut reader = reader::SeekBufReader::with_capacity(reader::INSPECT_BUFFER, file);
    layout::check(path, &mut reader, layout::Reach::EveryMember)?
        .first_problem(path)
        .map(drop)
}
