//! `build`: a directory of distributions → a static simple index (see [`crate::site`] for the
//! layout).
//!
//! Three phases, so that bad input never leaves a half-updated site:
//! 1. **Read**: list the inputs, take unchanged ones from the build state, read the others in
//!    parallel (hash, `METADATA`, `variant.json`).
//! 2. **Combine**: per release with variant wheels, combine the wheels' `variant.json` into
//!    `{name}-{version}-variants.json` (a conflict fails here, naming both wheels).
//! 3. **Publish**: the site as a [`SitePlan`], written by [`crate::publish()`] to the destination
//!    (a directory or an object store): files first, then project pages, then the project list,
//!    each only when its content changed; then the removal of what an earlier build wrote and
//!    this one did not; then the state. A client that reads during an update never sees a link
//!    to a file not yet there.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pep440_rs::Version;
use rayon::prelude::*;
use vari_core::filename::variants_json_filename;
use vari_core::metadata::{
    combine, metadata_differences, missing_fallback_warning, read_json, write_json, SourceKind,
    VariantMetadata,
};

use crate::dist::{self, DistFacts, ReadDist};
use crate::error::BuildError;
use crate::inputs::{discover, Discovered, Input, InputKind, Skipped};
use crate::place::FilePlacement;
use crate::publish::{publish, Body, Destination, SiteFile, SitePlan, SiteStore, StampJournal};
use crate::site::{
    class_file_url, external_file_url, files_path, relative_file_url, ProjectPage, CLASSES_DIR,
    SIMPLE_DIR, STYLE,
};
use crate::state::{InputState, State};
use vari_fs::{ClockProbe, Seal};
use vari_simple::{CoreMetadata, Hashes, PageFile};

/// Reports the progress of reading inputs (the slow phase). The CLI draws a bar with it.
pub trait Progress: Sync {
    /// Reading starts; `total` files will be read.
    fn start(&self, total: u64) {
        let _ = total;
    }
    /// One more file was read.
    fn advance(&self) {}
    /// Reading is over.
    fn finish(&self) {}
}

/// A [`Progress`] that reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// What to build.
pub struct BuildOptions<'a> {
    /// The directory of wheels and source distributions (not searched recursively).
    pub input: PathBuf,
    /// Where the site goes: a directory (created when missing) or an object store prefix.
    pub destination: Destination,
    /// How distribution files reach the site (for an object store, [`FilePlacement::HardLink`]
    /// and [`FilePlacement::Copy`] both upload them).
    pub placement: FilePlacement,
    /// Told about reading progress.
    pub progress: &'a dyn Progress,
}

impl std::fmt::Debug for BuildOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuildOptions")
            .field("input", &self.input)
            .field("destination", &self.destination)
            .field("placement", &self.placement)
            .finish_non_exhaustive()
    }
}

impl BuildOptions<'static> {
    /// Hard-linked files, no progress reports.
    pub fn new(input: impl Into<PathBuf>, destination: impl Into<Destination>) -> Self {
        Self {
            input: input.into(),
            destination: destination.into(),
            placement: FilePlacement::default(),
            progress: &NoProgress,
        }
    }
}

/// What a build did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildStats {
    /// Projects in the index.
    pub projects: usize,
    /// Distribution files linked.
    pub files: usize,
    /// The `{name}-{version}-variants.json` files published, sorted.
    pub variants_json: Vec<String>,
    /// Inputs opened and read (new or changed since the last build).
    pub read: usize,
    /// Inputs taken from the build state without opening them.
    pub reused: usize,
    /// Site files written because their content changed.
    pub written: usize,
    /// Site files removed because no input publishes them any more.
    pub removed: usize,
    /// Files of the input directory that are not distributions.
    pub skipped: Vec<Skipped>,
    /// What needs the publisher's attention, one sentence each: what a `*-variants.json`'s
    /// schema generation could not express, a release without a fallback, a `*-variants.json`
    /// in the input that does not match the wheels.
    pub warnings: Vec<String>,
}

/// One distribution, read now or remembered.
struct Dist {
    input: Input,
    facts: DistFacts,
    variant: Option<VariantMetadata>,
    /// `METADATA` to publish, when read in this build.
    core_metadata: Option<Vec<u8>>,
}

/// Builds (or updates) the index at `options.destination` from `options.input`.
///
/// ```
/// let input = tempfile::tempdir()?;
/// let site = tempfile::tempdir()?;
/// let stats = vari_publish::build(&vari_publish::BuildOptions::new(input.path(), site.path()))?;
/// assert_eq!((stats.projects, stats.files), (0, 0));
/// assert!(site.path().join("simple/index.json").is_file());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn build(options: &BuildOptions<'_>) -> Result<BuildStats, BuildError> {
    let discovered = discover(&options.input)?;
    let store = options.destination.open(&options.placement)?;
    build_into(
        options,
        discovered,
        store.as_ref(),
        &KnownHashes::new(),
        &[],
    )
    .map(|built| built.stats)
}

/// A mirror's per-class index: `t/{name}/simple/`, pages listing only `files` (file names of
/// the inputs) and linking them in the site's one `files/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClassView {
    /// The class's name (a valid `vari_core::class::ClassName`: a plain URL segment).
    pub(crate) name: String,
    /// The distribution files the class's pages list.
    pub(crate) files: std::collections::BTreeSet<String>,
}

/// Inputs whose SHA-256 the caller verified itself (a mirror hashed each file while it
/// downloaded it): file name → the file's seal then, and its SHA-256. An input the seal
/// vouches for (its stamp unchanged, and settled: [`vari_fs::stamp`]) is not hashed again.
pub(crate) type KnownHashes = BTreeMap<String, (vari_fs::Seal, String)>;

/// What [`build_into`] did, with the `*-variants.json` it published (file name → text).
#[derive(Debug)]
pub(crate) struct Built {
    pub(crate) stats: BuildStats,
    pub(crate) variants_json: BTreeMap<String, String>,
    /// The inputs (by file name) this build hard-linked into the site, which set their change
    /// time (a caller that keeps its own seals of them moves them: [`vari_fs::Seal::after_link`]).
    pub(crate) linked: BTreeSet<String>,
}

/// An input read by this build: what was read, and its seal (`None` without a stamp).
type ReadInput = (Input, ReadDist, Option<Seal>);

/// [`build`] into an open `store`, from the inputs `discover` found, trusting `known` hashes,
/// with a per-class index for each of `views`.
pub(crate) fn build_into(
    options: &BuildOptions<'_>,
    discovered: Discovered,
    store: &dyn SiteStore,
    known: &KnownHashes,
    views: &[ClassView],
) -> Result<Built, BuildError> {
    let Discovered {
        inputs,
        variants_json: found_variants_json,
        skipped,
    } = discovered;
    let state = State::load(store)?;

    // Phase 1: read.
    let (remembered, to_read) = split_unchanged(inputs, &state, store);
    let reused = remembered.len();
    // Before the first byte is read: what is read from an input whose last change came
    // before this moment is what it still holds while its stamp is the same.
    let began = clock_probe(options);
    options.progress.start(to_read.len() as u64);
    let results: Vec<Result<ReadInput, BuildError>> = to_read
        .into_par_iter()
        .map(|input| {
            let sha256 = known
                .get(&input.filename)
                .filter(|(seal, _)| seal.vouches_for(input.stamp))
                .map(|(_, sha256)| sha256.clone());
            let read = dist::read(&input, sha256);
            // Stamped after the reading.
            let seal = stamp_of(&input.path).map(|stamp| Seal::new(stamp, began));
            options.progress.advance();
            read.map(|read| (input, read, seal))
        })
        .collect();
    options.progress.finish();
    let read = results.len();
    let mut next_state = State::default();
    let mut dists = remembered;
    for result in results {
        // The inputs are in file-name order, so the error reported is always the same one.
        let (input, read, seal) = result?;
        // An input without a stamp (no longer a regular file, or a platform without stamps)
        // is not remembered: it is read again by the next build.
        if let Some(seal) = seal {
            next_state.inputs.insert(
                input.filename.clone(),
                InputState {
                    seal,
                    facts: read.facts.clone(),
                },
            );
        }
        dists.push(Dist {
            input,
            facts: read.facts,
            variant: read.variant,
            core_metadata: read.core_metadata,
        });
    }
    for dist in &dists {
        if dist.core_metadata.is_none() {
            if let Some(remembered) = state.inputs.get(&dist.input.filename) {
                next_state
                    .inputs
                    .insert(dist.input.filename.clone(), remembered.clone());
            }
        }
    }

    // Phase 2: combine.
    let projects = group(dists);
    let mut stats = BuildStats {
        read,
        reused,
        skipped,
        ..BuildStats::default()
    };
    let mut variants_files = Vec::new();
    for releases in projects.values() {
        for release in releases.values() {
            if let Some(file) = combine_release(release, &mut stats.warnings)? {
                variants_files.push(file);
            }
        }
    }
    for (path, filename) in &found_variants_json {
        check_found_variants_json(path, filename, &variants_files, &mut stats);
    }

    // Phase 3: publish.
    let mut plan = site_plan(&projects, &variants_files, &options.placement);
    for view in views {
        add_class_view(&mut plan, view, &projects)?;
    }
    let outputs: BTreeSet<String> = plan.all().map(|file| file.path.clone()).collect();
    let stale: Vec<&str> = state
        .outputs
        .difference(&outputs)
        .map(String::as_str)
        .collect();
    // What a publish to this destination that did not complete wrote (its journal), on top
    // of what the last complete one did.
    let journal = vari_fs::cache_dir().and_then(|cache| {
        let path = options.destination.journal(&cache)?;
        StampJournal::open(&cache, &path)
    });
    let mut previous = state.stamps.clone();
    if let Some((_, resumed)) = &journal {
        previous.extend(resumed.clone());
    }
    let published = publish(
        store,
        &plan,
        &previous,
        &stale,
        journal.as_ref().map(|(journal, _)| journal),
    )?;
    stats.files = projects
        .values()
        .flat_map(BTreeMap::values)
        .map(Vec::len)
        .sum();
    stats.removed = published.removed;
    stats.written = published.written;
    stats.projects = projects.len();
    stats.variants_json = variants_files.iter().map(|f| f.filename.clone()).collect();
    next_state.outputs = outputs;
    next_state.stamps = published.stamps;
    let linked: BTreeSet<String> = match links_inputs(options) {
        true => dists_of(&projects)
            .map(|dist| dist.input.filename.clone())
            .filter(|filename| published.written_paths.contains(&files_path(filename)))
            .collect(),
        false => BTreeSet::new(),
    };
    follow_links(&mut next_state, &options.input, &linked);
    next_state.save(store)?;
    if let Some((journal, _)) = journal {
        journal.finish();
    }
    Ok(Built {
        stats,
        variants_json: variants_files
            .into_iter()
            .map(|f| (f.filename, f.text))
            .collect(),
        linked,
    })
}

/// Every distribution of `projects`.
fn dists_of(projects: &Projects) -> impl Iterator<Item = &Dist> {
    projects.values().flat_map(BTreeMap::values).flatten()
}

/// The whole site: distributions and their `.metadata`, the `*-variants.json` files, one page
/// pair per project, the project list.
fn site_plan(
    projects: &Projects,
    variants_files: &[VariantsFile],
    placement: &FilePlacement,
) -> SitePlan {
    let mut plan = SitePlan::default();
    for dist in projects.values().flat_map(BTreeMap::values).flatten() {
        if !matches!(placement, FilePlacement::External { .. }) {
            plan.files.push(SiteFile {
                path: files_path(&dist.input.filename),
                body: Body::File(dist.input.path.clone()),
                sha256: dist.facts.sha256.clone(),
                size: dist.facts.size,
            });
        }
        let metadata = metadata_path(&dist.input.filename);
        match (&dist.core_metadata, &dist.facts.core_metadata_sha256) {
            (Some(bytes), _) => plan.files.push(SiteFile::bytes(metadata, bytes.clone())),
            // Remembered from an earlier build, which wrote it (checked when it was remembered).
            (None, Some(sha256)) => plan.files.push(SiteFile {
                path: metadata,
                body: Body::Kept,
                sha256: sha256.clone(),
                size: 0,
            }),
            (None, None) => {}
        }
    }
    for file in variants_files {
        plan.files.push(SiteFile::bytes(
            files_path(&file.filename),
            file.text.clone().into_bytes(),
        ));
    }
    let mut names = Vec::with_capacity(projects.len());
    for (name, releases) in projects {
        let url = |filename: &str| match placement {
            FilePlacement::External { base_url } => external_file_url(base_url, filename),
            _ => relative_file_url(filename),
        };
        let page = project_page(name, releases, variants_files, &url, relative_file_url);
        let dir = format!("{SIMPLE_DIR}/{name}");
        plan.pages.push(SiteFile::bytes(
            format!("{dir}/index.html"),
            vari_simple::render_project_html(page.view(), &STYLE),
        ));
        plan.pages.push(SiteFile::bytes(
            format!("{dir}/index.json"),
            vari_simple::render_project_json(page.view(), &STYLE),
        ));
        names.push(name.as_str());
    }
    plan.root.push(SiteFile::bytes(
        format!("{SIMPLE_DIR}/index.html"),
        vari_simple::render_root_html(names.iter().map(|name| (*name, *name)), &STYLE),
    ));
    plan.root.push(SiteFile::bytes(
        format!("{SIMPLE_DIR}/index.json"),
        vari_simple::render_root_json(names.iter().copied(), &STYLE),
    ));
    plan
}

/// Adds `view`'s index to `plan`: a page pair per project with a file in the view, listing
/// only those files, linked in the site's `files/`, and each release's `*-variants.json`
/// combined from the view's wheels alone (`t/{class}/files/`, so a variant-aware installer sees
/// only the labels the class carries, as on the proxy's `/t/NAME/`); the class's project list
/// goes with the root pages, published last.
fn add_class_view(
    plan: &mut SitePlan,
    view: &ClassView,
    projects: &Projects,
) -> Result<(), BuildError> {
    let root = format!("{CLASSES_DIR}/{}/{SIMPLE_DIR}", view.name);
    let mut variants_files = Vec::new();
    let mut names = Vec::new();
    for (name, releases) in projects {
        let releases: BTreeMap<Version, Vec<&Dist>> = releases
            .iter()
            .filter_map(|(version, dists)| {
                let kept: Vec<&Dist> = dists
                    .iter()
                    .filter(|d| view.files.contains(&d.input.filename))
                    .collect();
                (!kept.is_empty()).then(|| (version.clone(), kept))
            })
            .collect();
        if releases.is_empty() {
            continue;
        }
        for release in releases.values() {
            // The site's combine already warned about the whole release; a class holding one
            // variant without the fallback is what it is meant to hold, not a mistake to report.
            if let Some(file) = combine_release(release, &mut Vec::new())? {
                plan.files.push(SiteFile::bytes(
                    format!("{CLASSES_DIR}/{}/{}", view.name, files_path(&file.filename)),
                    file.text.clone().into_bytes(),
                ));
                variants_files.push(file);
            }
        }
        // `t/{class}/simple/{project}/` + `../../files/` is the class's own `t/{class}/files/`.
        let page = project_page(
            name,
            &releases,
            &variants_files,
            &class_file_url,
            relative_file_url,
        );
        plan.pages.push(SiteFile::bytes(
            format!("{root}/{name}/index.html"),
            vari_simple::render_project_html(page.view(), &STYLE),
        ));
        plan.pages.push(SiteFile::bytes(
            format!("{root}/{name}/index.json"),
            vari_simple::render_project_json(page.view(), &STYLE),
        ));
        names.push(name.as_str());
    }
    plan.root.push(SiteFile::bytes(
        format!("{root}/index.html"),
        vari_simple::render_root_html(names.iter().map(|name| (*name, *name)), &STYLE),
    ));
    plan.root.push(SiteFile::bytes(
        format!("{root}/index.json"),
        vari_simple::render_root_json(names.iter().copied(), &STYLE),
    ));
    Ok(())
}

/// A moment on the clock of the inputs' file system, taken where the state is written when that
/// is a local directory (writable, unlike an input folder may be), else in the input folder or
/// vari's cache directory; `None` when none of them can be written, and then nothing read now
/// is trusted by the next build.
fn clock_probe(options: &BuildOptions<'_>) -> Option<ClockProbe> {
    let input = options.input.as_path();
    match &options.destination {
        // A site not made yet is made by the publish, on the file system of its nearest
        // existing ancestor: probed there, so that a build that fails leaves nothing.
        Destination::Directory(site) => site
            .ancestors()
            // A relative path's last ancestor is the empty path: the working directory.
            .map(|dir| match dir.as_os_str().is_empty() {
                true => Path::new("."),
                false => dir,
            })
            .find(|dir| dir.is_dir())
            .and_then(|dir| ClockProbe::take_for(dir, input)),
        Destination::ObjectStore(_) => ClockProbe::take_for(input, input).or_else(|| {
            let cache = vari_fs::cache_dir()?;
            std::fs::create_dir_all(&cache).ok()?;
            ClockProbe::take_for(&cache, input)
        }),
    }
}

/// The stamp of the input at `path`, following a link as the listing does.
fn stamp_of(path: &Path) -> Option<vari_fs::Stamp> {
    std::fs::metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .and_then(|meta| vari_fs::Stamp::of(&meta))
}

/// Whether the publish gives the inputs another name (a hard link in the site directory),
/// which sets their change time.
fn links_inputs(options: &BuildOptions<'_>) -> bool {
    matches!(options.destination, Destination::Directory(_))
        && matches!(options.placement, FilePlacement::HardLink)
}

/// Moves the seal of each input this publish linked into the site (`linked`, by file name)
/// over the change time the link set, so that the next build does not read it again for that
/// alone. Anything else changed since its seal, and the seal stays, to vouch for nothing
/// ([`vari_fs::Seal::after_link`]); an input not linked now keeps its seal as it is.
fn follow_links(state: &mut State, input_dir: &Path, linked: &BTreeSet<String>) {
    for (filename, known) in &mut state.inputs {
        if !linked.contains(filename) {
            continue;
        }
        if let Some(moved) = known.seal.after_link(stamp_of(&input_dir.join(filename))) {
            known.seal = moved;
        }
    }
}

/// Splits the inputs into those the state remembers unchanged (with their facts and parsed
/// `variant.json`) and those to read.
fn split_unchanged(
    inputs: Vec<Input>,
    state: &State,
    store: &dyn SiteStore,
) -> (Vec<Dist>, Vec<Input>) {
    let mut remembered = Vec::new();
    let mut to_read = Vec::new();
    for input in inputs {
        let known = state
            .inputs
            .get(&input.filename)
            .filter(|known| known.seal.vouches_for(input.stamp))
            // The `.metadata` file can only be rewritten from the wheel itself.
            .filter(|known| {
                known.facts.core_metadata_sha256.is_none()
                    || store.contains(&metadata_path(&input.filename))
            })
            .and_then(|known| {
                let variant = match &known.facts.variant_json {
                    None => None,
                    Some(text) => Some(read_json(text, SourceKind::WheelFile).ok()?),
                };
                Some((known.facts.clone(), variant))
            });
        match known {
            Some((facts, variant)) => remembered.push(Dist {
                input,
                facts,
                variant,
                core_metadata: None,
            }),
            None => to_read.push(input),
        }
    }
    (remembered, to_read)
}

/// Project → version → distributions (sorted by file name).
type Projects = BTreeMap<String, BTreeMap<Version, Vec<Dist>>>;

fn group(dists: Vec<Dist>) -> Projects {
    let mut projects = Projects::new();
    for dist in dists {
        projects
            .entry(dist.input.project.clone())
            .or_default()
            .entry(dist.input.version.clone())
            .or_default()
            .push(dist);
    }
    for dist in projects.values_mut().flat_map(BTreeMap::values_mut) {
        dist.sort_by(|a, b| a.input.filename.cmp(&b.input.filename));
    }
    projects
}

/// A generated `{name}-{version}-variants.json`.
struct VariantsFile {
    project: String,
    version: Version,
    filename: String,
    text: String,
    sha256: String,
}

/// Combines the variant wheels of one release; `None` when it has none.
fn combine_release<D: std::borrow::Borrow<Dist>>(
    release: &[D],
    warnings: &mut Vec<String>,
) -> Result<Option<VariantsFile>, BuildError> {
    let sources: Vec<(&str, &VariantMetadata)> = release
        .iter()
        .map(std::borrow::Borrow::borrow)
        .filter_map(|d: &Dist| Some((d.input.filename.as_str(), d.variant.as_ref()?)))
        .collect();
    let Some(first) = release
        .iter()
        .map(std::borrow::Borrow::borrow)
        .find(|d: &&Dist| d.variant.is_some())
    else {
        return Ok(None);
    };
    let InputKind::Wheel(wheel) = &first.input.kind else {
        return Ok(None);
    };
    let filename = variants_json_filename(&wheel.name, &wheel.version);
    let combined = combine(sources).map_err(|source| BuildError::Combine {
        file: filename.clone(),
        source,
    })?;
    let written = write_json(&combined, combined.generation).map_err(|source| {
        BuildError::WriteVariantsJson {
            file: filename.clone(),
            source,
        }
    })?;
    warnings.extend(
        written
            .warnings
            .into_iter()
            .map(|w| format!("{filename}: {w}")),
    );
    if let Some(warning) = no_fallback(release, &combined) {
        warnings.push(warning);
    }
    let sha256 = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
        written.text.as_bytes(),
    ));
    Ok(Some(VariantsFile {
        project: first.input.project.clone(),
        version: first.input.version.clone(),
        filename,
        text: written.text,
        sha256,
    }))
}

/// The warning for a variant release with neither a plain wheel nor a null variant (see
/// [`missing_fallback_warning`]).
fn no_fallback<D: std::borrow::Borrow<Dist>>(
    release: &[D],
    combined: &VariantMetadata,
) -> Option<String> {
    let plain = release
        .iter()
        .map(std::borrow::Borrow::borrow)
        .any(|d: &Dist| matches!(&d.input.kind, InputKind::Wheel(w) if w.label.is_none()));
    let first: &Dist = release.first()?.borrow();
    let name = format!("{} {}", first.input.project, first.input.version);
    missing_fallback_warning(&name, plain, combined)
}

/// The most a `*-variants.json` found in the input directory may hold to be compared (real
/// ones are a few KiB; one of thousands of variants a few MiB).
const MAX_FOUND_VARIANTS_JSON_BYTES: u64 = 16 * 1024 * 1024;

/// Checks a `*-variants.json` found among the inputs (`wheel repack` writes one beside its
/// wheels) against the one this build combined from the wheels, which is the one published.
/// One that matches is accepted silently; one that differs is a warning saying how; one for a
/// release without variant wheels in the input is reported as not published.
fn check_found_variants_json(
    path: &Path,
    filename: &str,
    combined: &[VariantsFile],
    stats: &mut BuildStats,
) {
    let Some(published) = combined.iter().find(|f| f.filename == filename) else {
        stats.skipped.push(Skipped {
            path: path.to_owned(),
            reason: "no variant wheel of this release is in the directory (a `*-variants.json` \
                     is published only as combined from the wheels)"
                .to_owned(),
        });
        stats.skipped.sort_by(|a, b| a.path.cmp(&b.path));
        return;
    };
    let found = match read_bounded(path, MAX_FOUND_VARIANTS_JSON_BYTES) {
        Ok(text) => read_json(&text, SourceKind::IndexFile).map_err(|errors| {
            let first = errors.first().map(ToString::to_string).unwrap_or_default();
            format!("it is not valid variant metadata: {first}")
        }),
        Err(reason) => Err(reason),
    };
    let expected = read_json(&published.text, SourceKind::IndexFile);
    let differences = match (found, expected) {
        (Ok(found), Ok(expected)) => metadata_differences(&expected, &found).join("; "),
        (Err(reason), _) => reason,
        // What this build wrote always reads back; should it not, say so rather than guess.
        (Ok(_), Err(_)) => "it could not be compared".to_owned(),
    };
    if !differences.is_empty() {
        stats.warnings.push(format!(
            "{}: does not match the wheels beside it ({differences}); the index publishes the \
             one combined from the wheels",
            path.display()
        ));
    }
}

/// The UTF-8 text of `path`, or why it could not be read (at most `limit` bytes), read as every
/// input file is (`vari_fs::read_input_limited`: a regular file, opened without blocking).
fn read_bounded(path: &Path, limit: u64) -> Result<String, String> {
    let bytes = vari_fs::read_input_limited(path, limit).map_err(|e| e.problem())?;
    String::from_utf8(bytes).map_err(|_| "it is not UTF-8".to_owned())
}

fn metadata_path(filename: &str) -> String {
    files_path(&format!("{filename}.metadata"))
}

/// The page of one project: its distributions, each linked at `url(file name)`, and each
/// release's `*-variants.json` (with its hash, and without `requires-python` or core metadata,
/// which PEP 825 calls meaningless for it and which a client could misapply), linked at
/// `site_url(file name)`: always the site's own, even when the distributions are hosted
/// elsewhere.
fn project_page<D: std::borrow::Borrow<Dist>>(
    name: &str,
    releases: &BTreeMap<Version, Vec<D>>,
    variants_files: &[VariantsFile],
    url: &dyn Fn(&str) -> String,
    site_url: fn(&str) -> String,
) -> ProjectPage {
    let mut files = Vec::new();
    for (version, dists) in releases {
        let mut links: Vec<PageFile> = dists
            .iter()
            .map(|d| {
                let d: &Dist = d.borrow();
                let url = url(&d.input.filename);
                let mut link = link(&d.input.filename, url, &d.facts.sha256, d.facts.size);
                link.requires_python = d.facts.requires_python.clone();
                if let Some(sha256) = &d.facts.core_metadata_sha256 {
                    link.core_metadata = CoreMetadata::Available(Hashes::sha256_of(sha256));
                }
                link
            })
            .collect();
        if let Some(file) = variants_files
            .iter()
            .find(|f| f.project == name && &f.version == version)
        {
            let url = site_url(&file.filename);
            links.push(link(
                &file.filename,
                url,
                &file.sha256,
                file.text.len() as u64,
            ));
        }
        links.sort_by(|a, b| a.filename.cmp(&b.filename));
        files.extend(links);
    }
    ProjectPage {
        name: name.to_owned(),
        versions: releases.keys().map(ToString::to_string).collect(),
        files,
    }
}

/// A link to a file of the site with its SHA-256 and size (every file's page entry has both).
fn link(filename: &str, url: String, sha256: &str, size: u64) -> PageFile {
    let mut link = PageFile::new(filename, url);
    link.hashes = Hashes::sha256_of(sha256);
    link.size = Some(size);
    link
}
