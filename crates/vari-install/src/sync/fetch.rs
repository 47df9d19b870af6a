//! Fetching a lock's files into the store, checked against the lock on the way in and again
//! each time they are used.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use futures_util::stream::{self, StreamExt};
use sha2::{Digest, Sha256};
use vari_client::{ClientSettings, IndexClient};

use super::record::{self, Probe};
use super::{LockedFile, SyncError};

/// The default ceiling of a file the lock gives no size for (a lock with sizes bounds each
/// file by its own): the client's `max-unsized-file-bytes` setting, which
/// `VARI_MAX_UNSIZED_FILE_BYTES` overrides.
pub const MAX_FILE_BYTES: u64 = vari_client::UNSIZED_FILE_DEFAULT;

/// How many files are fetched at once.
const PARALLEL: usize = 8;

/// Where files come from.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// The client for URLs (its limits, credentials, retries and time limits).
    pub client: ClientSettings,
    /// Wheelhouses: directories where a file is looked up by its name, before its URL.
    pub wheelhouses: Vec<PathBuf>,
    /// Never use the network: a file neither in the store nor in a wheelhouse nor at its
    /// `path` is an error.
    pub offline: bool,
    /// The store: `{store}/{sha256}/{installer name}`.
    pub store: PathBuf,
}

/// A file ready for the installer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Staged {
    /// The verified copy, named as the installer must see it.
    pub path: PathBuf,
    /// Where its bytes came from this time (`store` when they were there already).
    pub from: String,
}

/// Fetches every file (a few at a time) into the store and checks each; the first failure
/// is the error, and then no file may be installed.
pub async fn fetch_locked(
    files: &[LockedFile],
    options: &FetchOptions,
) -> Result<Vec<Staged>, SyncError> {
    fetch_locked_reporting(files, options, &|_| {}).await
}

/// [`fetch_locked`], calling `on_bytes` with each piece of a file's bytes as it arrives
/// (from a URL, a wheelhouse or a `path`) and with a file's whole size when the store had it
/// already, so that the sum is the bytes ready of the lock's sizes (for progress).
pub async fn fetch_locked_reporting(
    files: &[LockedFile],
    options: &FetchOptions,
    on_bytes: &(dyn Fn(u64) + Sync),
) -> Result<Vec<Staged>, SyncError> {
    let needs_network = !options.offline && files.iter().any(|f| f.url.is_some());
    // A file without a size in the lock is bounded by the setting (the variable wins, as the
    // client applies it), so one unsized entry cannot fill the store's volume.
    let unsized_ceiling = options
        .client
        .limits
        .with_env(|name| std::env::var(name).ok())
        .map_err(|e| SyncError::Unavailable {
            filename: String::new(),
            message: e.to_string(),
        })?
        .max_unsized_file_bytes;
    let client =
        match needs_network {
            true => Some(IndexClient::new(options.client.clone()).map_err(|e| {
                SyncError::Unavailable {
                    filename: String::new(),
                    message: e.to_string(),
                }
            })?),
            false => None,
        };
    let results: Vec<Result<Staged, SyncError>> = stream::iter(files)
        .map(|file| fetch_one(file, options, client.as_ref(), unsized_ceiling, on_bytes))
        .buffered(PARALLEL)
        .collect()
        .await;
    results.into_iter().collect()
}

async fn fetch_one(
    file: &LockedFile,
    options: &FetchOptions,
    client: Option<&IndexClient>,
    unsized_ceiling: u64,
    on_bytes: &(dyn Fn(u64) + Sync),
) -> Result<Staged, SyncError> {
    let file = &Bounded {
        file,
        unsized_ceiling,
        on_bytes,
    };
    let name = file.installer_name();
    vari_fs::check_name(&name).map_err(|e| SyncError::Unavailable {
        filename: file.filename.clone(),
        message: e.to_string(),
    })?;
    vari_fs::check_name(&file.sha256).map_err(|e| SyncError::Unavailable {
        filename: file.filename.clone(),
        message: e.to_string(),
    })?;
    let dest = options.store.join(&file.sha256).join(&name);
    // The fast path: a record vouches for the store's copy (see `record`), read no further.
    let vouched = record::read(&dest)
        .filter(|r| r.sha256 == file.sha256 && r.vouches_for(&dest))
        .map(|r| {
            r.mark_used(&dest);
            r.variant_markers
        });
    let (from, probe, variant_markers) = match vouched {
        Some(variant_markers) => ("store".to_owned(), None, variant_markers),
        None => {
            let (from, probe) = fetch_original(file, options, client, &dest).await?;
            (from, probe, None)
        }
    };
    if from == "store" {
        let size = file
            .size
            .or_else(|| std::fs::metadata(&dest).ok().map(|m| m.len()));
        on_bytes(size.unwrap_or(0));
    }
    check_variant(file, &dest)?;
    let (path, variant_markers) = installable(file, &dest, &options.store, variant_markers)?;
    if let Some(probe) = probe {
        probe.finish(&dest, &file.sha256, variant_markers);
    }
    Ok(Staged { path, from })
}

/// Brings the file as the lock lists it to `dest` in the store, hashed and checked; says
/// where from, with the record to write for it (started before its bytes were hashed).
async fn fetch_original(
    file: &Bounded<'_>,
    options: &FetchOptions,
    client: Option<&IndexClient>,
    dest: &Path,
) -> Result<(String, Option<Probe>), SyncError> {
    // Why the store's copy cannot be used, when there is one.
    let mut stale = None;
    if let Some(file_in_store) = vari_fs::open_cache_file(dest) {
        let probe = Probe::start(&options.store, dest);
        // A copy that no longer matches (changed behind vari's back) is fetched again.
        match check(file, file_in_store, &dest.display().to_string()) {
            Ok(()) => return Ok(("store".to_owned(), probe)),
            Err(SyncError::Mismatch { what, .. }) => stale = Some(what),
            Err(e) => stale = Some(e.to_string()),
        }
    }
    for wheelhouse in &options.wheelhouses {
        let candidate = wheelhouse.join(&file.filename);
        if candidate.is_file() {
            let input = open_local(file, &candidate)?;
            let origin = candidate.display().to_string();
            let probe = copy_into(file, input, &options.store, dest, &origin)?;
            return Ok((origin, probe));
        }
    }
    if let Some(path) = &file.path {
        let input = open_local(file, path)?;
        let origin = path.display().to_string();
        let probe = copy_into(file, input, &options.store, dest, &origin)?;
        return Ok((origin, probe));
    }
    let Some(url) = &file.url else {
        return Err(SyncError::Unavailable {
            filename: file.filename.clone(),
            message: "the lock gives neither a url nor a path".to_owned(),
        });
    };
    let Some(client) = client.filter(|_| !options.offline) else {
        let store = match &stale {
            Some(what) => format!(
                "the store's copy {} does not match the lock ({what}), it is not in a \
                 wheelhouse",
                dest.display()
            ),
            None => "not in the store or a wheelhouse".to_owned(),
        };
        return Err(SyncError::Unavailable {
            filename: file.filename.clone(),
            message: format!("{store}, and offline: it would be fetched from {url}"),
        });
    };
    let unavailable = |message: String| SyncError::Unavailable {
        filename: file.filename.clone(),
        message,
    };
    let mut stream = client
        .open_file(url)
        .await
        .map_err(|e| unavailable(e.to_string()))?;
    let mut sink = Sink::new(file, &options.store, dest, url.as_str())?;
    while let Some(chunk) = stream
        .chunk()
        .await
        .map_err(|e| unavailable(e.to_string()))?
    {
        sink.write(&chunk)?;
    }
    let probe = sink.finish()?;
    Ok((url.to_string(), probe))
}

/// For a variant wheel: that its own `variant.json` gives its label the properties the lock
/// does. The wheel at `wheel` was checked against the lock's hash, so what it says is what
/// its publisher said; the lock's `variants-json` is what chose it for this machine, and a
/// lock that relabels a CUDA build as a CPU one must not get it installed on a CPU machine.
fn check_variant(file: &LockedFile, wheel: &Path) -> Result<(), SyncError> {
    let Some(label) = &file.label else {
        return Ok(());
    };
    let describe = |properties: Option<&vari_core::metadata::VariantProperties>| match properties {
        None => "no such variant".to_owned(),
        Some(properties) => {
            let listed: Vec<String> = vari_core::metadata::properties_of(properties)
                .map(|p| p.to_string())
                .collect();
            match listed.is_empty() {
                true => "no properties".to_owned(),
                false => listed.join(", "),
            }
        }
    };
    // Read through the file's name in the lock, which carries the label.
    let named = wheel.with_file_name(&file.filename);
    let input = std::fs::File::open(wheel).map_err(|e| SyncError::Store {
        path: wheel.to_path_buf(),
        message: e.to_string(),
    })?;
    let info = vari_wheel::inspect_reader(&named, std::io::BufReader::new(input)).map_err(|e| {
        SyncError::Rewrite {
            filename: file.filename.clone(),
            message: format!("its variant.json cannot be read: {e}"),
        }
    })?;
    let found = info
        .metadata
        .as_ref()
        .and_then(|meta| meta.variants.iter().find(|(l, _)| l.as_str() == label))
        .map(|(_, properties)| properties);
    if found.is_some() && found == file.locked_variant.as_ref() {
        return Ok(());
    }
    Err(SyncError::VariantMismatch {
        filename: file.filename.clone(),
        label: label.clone(),
        lock: describe(file.locked_variant.as_ref()),
        wheel: describe(found),
    })
}

/// The copy the installer gets: the checked file itself, or for a variant wheel whose
/// METADATA names variant variables, a copy with them evaluated for the target, kept at
/// `{store}/{sha256}/{context key}/{name}` (made from the checked file, so reused as long as
/// its record vouches for it). `variant_markers` is what the original's record says of its
/// METADATA, when it says; returned with what is known now, for the record.
fn installable(
    file: &LockedFile,
    original: &Path,
    store: &Path,
    variant_markers: Option<bool>,
) -> Result<(PathBuf, Option<bool>), SyncError> {
    let unchanged = |variant_markers| Ok((original.to_path_buf(), variant_markers));
    let Some(context) = &file.markers else {
        return unchanged(variant_markers);
    };
    // Checked against the lock's hash when the record was written: no variant markers, so
    // the original is what the installer gets, without opening it.
    if variant_markers == Some(false) {
        return unchanged(variant_markers);
    }
    let rewrite_error = |message: String| SyncError::Rewrite {
        filename: file.filename.clone(),
        message,
    };
    let Some(name) = original.file_name() else {
        return unchanged(variant_markers);
    };
    let dest = original.with_file_name(context_key(context)).join(name);
    if rewritten_copy_holds(&dest, store) {
        return Ok((dest, Some(true)));
    }
    let text =
        vari_wheel::read_core_metadata(original).map_err(|e| rewrite_error(e.to_string()))?;
    let rewritten = vari_core::metadata::resolve_variant_markers(&text, context)
        .map_err(|e| rewrite_error(format!("its METADATA: {e}")))?;
    let Some(rewritten) = rewritten else {
        return unchanged(Some(false));
    };
    let store_error = |path: &Path, message: String| SyncError::Store {
        path: path.to_path_buf(),
        message,
    };
    if let Some(dir) = dest.parent() {
        vari_fs::ensure_cache_dir(store, dir).map_err(|e| store_error(dir, e.to_string()))?;
    }
    let probe = Probe::start(store, &dest);
    vari_wheel::replace_metadata(original, &dest, rewritten.as_bytes())
        .map_err(|e| rewrite_error(e.to_string()))?;
    let sha256 = sha256_file(&dest).map_err(|e| store_error(&dest, e.to_string()))?;
    if let Some(probe) = probe {
        probe.finish(&dest, &sha256, None);
    }
    Ok((dest, Some(true)))
}

/// Whether the rewritten copy at `dest` is the one vari made: its record vouches for it, or it
/// still has the SHA-256 its record says vari wrote (then the record is written again, to
/// vouch next time). Without a record it is made again.
fn rewritten_copy_holds(dest: &Path, store: &Path) -> bool {
    let Some(record) = record::read(dest) else {
        return false;
    };
    if record.vouches_for(dest) {
        return true;
    }
    let Some(input) = vari_fs::open_cache_file(dest) else {
        return false;
    };
    let probe = Probe::start(store, dest);
    match sha256_of(input) {
        Ok(sha256) if sha256 == record.sha256 => {
            if let Some(probe) = probe {
                probe.finish(dest, &sha256, None);
            }
            true
        }
        _ => false,
    }
}

/// Names what variant markers see: the label and the properties, digested.
fn context_key(context: &vari_core::markers::VariantMarkerContext) -> String {
    let mut hasher = Sha256::new();
    hasher.update(context.label.as_ref().map_or("", |l| l.as_str()));
    for property in &context.properties {
        hasher.update(b"\n");
        hasher.update(property.to_string());
    }
    format!("m-{}", &hex::encode(hasher.finalize())[..16])
}

/// Opens a local copy (a wheelhouse's, or the lock's `path`) through the input rule: a regular
/// file, opened without blocking, so a FIFO or a device there (or a committed link to one) is
/// refused at once instead of hanging `sync`. `copy_into` bounds what is read by the lock's size.
fn open_local(file: &LockedFile, path: &Path) -> Result<std::fs::File, SyncError> {
    vari_fs::open_input(path).map_err(|e| SyncError::Unavailable {
        filename: file.filename.clone(),
        message: e.to_string(),
    })
}

/// Copies a local file into the store through the same checks as a download.
fn copy_into(
    file: &Bounded<'_>,
    mut input: std::fs::File,
    store: &Path,
    dest: &Path,
    origin: &str,
) -> Result<Option<Probe>, SyncError> {
    let mut sink = Sink::new(file, store, dest, origin)?;
    let mut buffer = vec![0; 256 * 1024];
    loop {
        let n = input
            .read(&mut buffer)
            .map_err(|e| SyncError::Unavailable {
                filename: file.filename.clone(),
                message: format!("{origin}: {e}"),
            })?;
        if n == 0 {
            break;
        }
        sink.write(&buffer[..n])?;
    }
    sink.finish()
}

/// Checks a file already in the store.
fn check(file: &Bounded<'_>, mut input: std::fs::File, origin: &str) -> Result<(), SyncError> {
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    let mut buffer = vec![0; 256 * 1024];
    loop {
        let n = input.read(&mut buffer).map_err(|e| SyncError::Store {
            path: PathBuf::from(origin),
            message: e.to_string(),
        })?;
        if n == 0 {
            break;
        }
        size += n as u64;
        if size > limit(file) {
            return Err(too_big(file, origin));
        }
        hasher.update(&buffer[..n]);
    }
    verdict(file, origin, size, &hex::encode(hasher.finalize()))
}

/// The store's temporary file, hashed and counted as it is written, bounded by the lock's
/// size; committed only when both match.
struct Sink<'a> {
    file: &'a Bounded<'a>,
    out: vari_fs::AtomicFile,
    /// The record of the file, started before its first byte.
    probe: Option<Probe>,
    hasher: Sha256,
    written: u64,
    origin: String,
    dest: PathBuf,
}

impl<'a> Sink<'a> {
    fn new(
        file: &'a Bounded<'a>,
        store: &Path,
        dest: &Path,
        origin: &str,
    ) -> Result<Self, SyncError> {
        let out =
            vari_fs::AtomicFile::create_in_cache(store, dest).map_err(|e| SyncError::Store {
                path: dest.to_path_buf(),
                message: e.to_string(),
            })?;
        Ok(Self {
            file,
            out,
            probe: Probe::start(store, dest),
            hasher: Sha256::new(),
            written: 0,
            origin: origin.to_owned(),
            dest: dest.to_path_buf(),
        })
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), SyncError> {
        self.written += bytes.len() as u64;
        if self.written > limit(self.file) {
            return Err(too_big(self.file, &self.origin));
        }
        self.hasher.update(bytes);
        (self.file.on_bytes)(bytes.len() as u64);
        self.out.write_all(bytes).map_err(|e| SyncError::Store {
            path: self.dest.clone(),
            message: e.to_string(),
        })
    }

    /// Commits the file when it matches the lock; gives its record to write.
    fn finish(self) -> Result<Option<Probe>, SyncError> {
        let digest = hex::encode(self.hasher.finalize());
        // Dropping `out` on a mismatch removes the temporary file.
        verdict(self.file, &self.origin, self.written, &digest)?;
        check_wheel(&self.out, self.file, &self.origin)?;
        self.out.commit().map_err(|e| SyncError::Store {
            path: self.dest,
            message: e.to_string(),
        })?;
        Ok(self.probe)
    }
}

/// A wheel is read as every command reads one ([`vari_wheel::inspect_reader`]: one
/// `.dist-info` directory, safe member names, a RECORD, its `variant.json` for its label)
/// before it enters the store: pip and uv refuse such a wheel at install, and a store
/// copy, once its record vouches for it, is not read again. The hash matching the lock
/// says only that it is the file the lock names, not that it is a wheel.
fn check_wheel(
    out: &vari_fs::AtomicFile,
    file: &LockedFile,
    origin: &str,
) -> Result<(), SyncError> {
    let named = Path::new(&file.filename);
    if !named
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("whl"))
    {
        return Ok(());
    }
    let reader = std::io::BufReader::new(out.as_file());
    vari_wheel::inspect_reader(named, reader)
        .map(drop)
        .map_err(|e| SyncError::Mismatch {
            filename: file.filename.clone(),
            origin: origin.to_owned(),
            what: e.kind.to_string(),
        })
}

/// A locked file with the ceiling that bounds it when the lock gives no size.
struct Bounded<'a> {
    file: &'a LockedFile,
    /// `max-unsized-file-bytes` (or `VARI_MAX_UNSIZED_FILE_BYTES`).
    unsized_ceiling: u64,
    /// Told of each piece of the file's bytes written to the store.
    on_bytes: &'a (dyn Fn(u64) + Sync),
}

impl std::ops::Deref for Bounded<'_> {
    type Target = LockedFile;

    fn deref(&self) -> &LockedFile {
        self.file
    }
}

fn limit(file: &Bounded<'_>) -> u64 {
    file.size.unwrap_or(file.unsized_ceiling)
}

fn too_big(file: &Bounded<'_>, origin: &str) -> SyncError {
    SyncError::Mismatch {
        filename: file.filename.clone(),
        origin: origin.to_owned(),
        what: match file.size {
            Some(size) => format!("larger than the {size} bytes the lock says"),
            None => format!(
                "larger than {} bytes, the most a file the lock gives no size for may hold \
                 (max-unsized-file-bytes in vari.toml or VARI_MAX_UNSIZED_FILE_BYTES raises it)",
                file.unsized_ceiling
            ),
        },
    }
}

/// The lock's size and SHA-256 against what arrived.
fn verdict(file: &LockedFile, origin: &str, size: u64, digest: &str) -> Result<(), SyncError> {
    let mismatch = |what: String| SyncError::Mismatch {
        filename: file.filename.clone(),
        origin: origin.to_owned(),
        what,
    };
    if let Some(expected) = file.size {
        if expected != size {
            return Err(mismatch(format!("{size} bytes, the lock says {expected}")));
        }
    }
    if digest != file.sha256 {
        return Err(mismatch(format!(
            "sha256 is {digest}, the lock says {}",
            file.sha256
        )));
    }
    Ok(())
}

/// The SHA-256 (lowercase hex) of the file at `path`, read in chunks.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    sha256_of(std::fs::File::open(path)?)
}

fn sha256_of(mut input: std::fs::File) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0; 256 * 1024];
    loop {
        let n = input.read(&mut buffer)?;
        if n == 0 {
            return Ok(hex::encode(hasher.finalize()));
        }
        hasher.update(&buffer[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locked(name: &str, bytes: &[u8]) -> LockedFile {
        LockedFile {
            project: "demo".to_owned(),
            version: Some("1.0".to_owned()),
            label: None,
            locked_variant: None,
            filename: name.to_owned(),
            url: Some(url::Url::parse(&format!("http://127.0.0.1:9/{name}")).unwrap()),
            path: None,
            sha256: hex::encode(Sha256::digest(bytes)),
            size: Some(bytes.len() as u64),
            markers: None,
        }
    }

    fn options(store: &Path, wheelhouse: &Path) -> FetchOptions {
        FetchOptions {
            client: ClientSettings::default(),
            wheelhouses: vec![wheelhouse.to_path_buf()],
            offline: true,
            store: store.to_path_buf(),
        }
    }

    fn fetch(files: &[LockedFile], options: &FetchOptions) -> Result<Vec<Staged>, SyncError> {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(fetch_locked(files, options))
    }

    #[test]
    fn a_wheelhouse_file_is_checked_copied_and_then_taken_from_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let (store, wheelhouse) = (dir.path().join("store"), dir.path().join("wheels"));
        std::fs::create_dir_all(&wheelhouse).unwrap();
        // Bytes that are not a wheel: an sdist's name (a wheel is also read as one).
        let name = "demo-1.0.tar.gz";
        std::fs::write(wheelhouse.join(name), b"the right bytes").unwrap();
        let file = locked(name, b"the right bytes");
        let staged = fetch(std::slice::from_ref(&file), &options(&store, &wheelhouse)).unwrap();
        assert_eq!(staged[0].path, store.join(&file.sha256).join(name));
        assert_eq!(std::fs::read(&staged[0].path).unwrap(), b"the right bytes");
        assert!(staged[0].from.ends_with(name), "{}", staged[0].from);
        // Gone from the wheelhouse: the store answers, offline.
        std::fs::remove_file(wheelhouse.join(name)).unwrap();
        let again = fetch(std::slice::from_ref(&file), &options(&store, &wheelhouse)).unwrap();
        assert_eq!(again[0].from, "store");
        // A store copy changed behind vari's back is not used.
        std::fs::write(&again[0].path, b"the wrong bytes").unwrap();
        let error = fetch(&[file], &options(&store, &wheelhouse)).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("offline: it would be fetched from http://127.0.0.1:9/"),
            "{error}"
        );
    }

    #[test]
    fn a_file_without_a_size_is_bounded_by_the_setting_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (store, wheelhouse) = (dir.path().join("store"), dir.path().join("wheels"));
        std::fs::create_dir_all(&wheelhouse).unwrap();
        // Bytes that are not a wheel: an sdist's name (a wheel is also read as one).
        let name = "demo-1.0.tar.gz";
        let bytes = vec![b'x'; 4096];
        std::fs::write(wheelhouse.join(name), &bytes).unwrap();
        let mut file = locked(name, &bytes);
        file.size = None;
        let mut options = options(&store, &wheelhouse);
        options.client.limits.max_unsized_file_bytes = 1000;
        let error = fetch(std::slice::from_ref(&file), &options).unwrap_err();
        let text = error.to_string();
        assert!(text.starts_with(&format!("{name} (")), "{text}");
        assert!(text.contains("larger than 1000 bytes"), "{text}");
        assert!(text.contains("max-unsized-file-bytes"), "{text}");
        assert!(text.contains("VARI_MAX_UNSIZED_FILE_BYTES"), "{text}");
        assert!(!store.join(&file.sha256).join(name).exists());
        // Under the ceiling, the same entry is fetched.
        options.client.limits.max_unsized_file_bytes = 4096;
        fetch(&[file], &options).unwrap();
    }

    /// Issue 33, item 11: the lock's hash matching says only which file it is; a wheel with
    /// two `.dist-info` directories is refused as every reader refuses it, and the store keeps
    /// nothing of it (a store copy is not read again once its record vouches for it).
    #[test]
    fn a_wheel_every_reader_refuses_does_not_enter_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let (store, wheelhouse) = (dir.path().join("store"), dir.path().join("wheels"));
        std::fs::create_dir_all(&wheelhouse).unwrap();
        let name = "demo-1.0-py3-none-any.whl";
        let path = vari_test_support::wheels::TestWheel::new(name).write(&wheelhouse);
        let good = locked(name, &std::fs::read(&path).unwrap());
        fetch(std::slice::from_ref(&good), &options(&store, &wheelhouse)).unwrap();
        vari_test_support::wheels::add_second_dist_info(&path, None);
        let bad = locked(name, &std::fs::read(&path).unwrap());
        let text = fetch(std::slice::from_ref(&bad), &options(&store, &wheelhouse))
            .unwrap_err()
            .to_string();
        assert!(text.starts_with(&format!("{name} (")), "{text}");
        assert!(
            text.contains("has more than one `.dist-info` directory"),
            "{text}"
        );
        assert!(!store.join(&bad.sha256).join(name).exists());
    }

    #[test]
    fn wrong_bytes_are_refused_and_leave_nothing_in_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let (store, wheelhouse) = (dir.path().join("store"), dir.path().join("wheels"));
        std::fs::create_dir_all(&wheelhouse).unwrap();
        let name = "demo-1.0-py3-none-any.whl";
        std::fs::write(wheelhouse.join(name), b"other bytes, same len").unwrap();
        let file = locked(name, b"the locked bytes here");
        let error = fetch(std::slice::from_ref(&file), &options(&store, &wheelhouse)).unwrap_err();
        let text = error.to_string();
        assert!(text.starts_with(&format!("{name} (")), "{text}");
        assert!(
            text.contains(&format!(", the lock says {}", file.sha256)),
            "{text}"
        );
        assert!(!store.join(&file.sha256).join(name).exists());
        std::fs::write(wheelhouse.join(name), b"the locked bytes here, and more").unwrap();
        let error = fetch(&[file], &options(&store, &wheelhouse)).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("larger than the 21 bytes the lock says"),
            "{error}"
        );
    }

    /// A lock `path` naming a FIFO (directly or through a link, as a repository can commit)
    /// or a device is refused at once. Before the input rule the FIFO's open waited for a
    /// writer forever: the fetch runs in a thread, and if it has not answered after a
    /// generous while the guard opens the FIFO for writing so the test fails instead of hanging.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_or_a_device_at_a_lock_path_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        let fifo = dir.path().join("demo-1.0-py3-none-any.whl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let link = dir.path().join("linked.whl");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let cases = [
            (fifo.clone(), "is a FIFO, not a regular file"),
            (link, "is a FIFO, not a regular file"),
            (
                PathBuf::from("/dev/zero"),
                "is a character device, not a regular file",
            ),
        ];
        for (path, expected) in cases {
            let mut file = locked("demo-1.0-py3-none-any.whl", b"the locked bytes");
            file.url = None;
            file.path = Some(path.clone());
            let options = options(&store, &dir.path().join("no-wheelhouse"));
            let (send, receive) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let _ = send.send(fetch(&[file], &options).map(|_| ()));
            });
            let outcome = match receive.recv_timeout(std::time::Duration::from_secs(120)) {
                Ok(outcome) => outcome,
                Err(_) => {
                    // Release the blocked open, then fail.
                    drop(std::fs::OpenOptions::new().write(true).open(&fifo));
                    panic!("{}: the fetch blocked", path.display());
                }
            };
            let error = outcome.unwrap_err().to_string();
            assert!(error.contains(expected), "{}: {error}", path.display());
            assert!(
                error.contains(&path.display().to_string()),
                "names the path: {error}"
            );
        }
        assert!(!store.exists() || std::fs::read_dir(&store).unwrap().next().is_none());
    }

    #[test]
    fn the_installer_sees_variant_wheels_without_their_label() {
        let mut file = locked("vari_demo-1.0.0-py3-none-any-cu128.whl", b"");
        assert_eq!(file.installer_name(), "vari_demo-1.0.0-py3-none-any.whl");
        file.filename = "demo-1.0.tar.gz".to_owned();
        assert_eq!(file.installer_name(), "demo-1.0.tar.gz");
    }
}
