//! `vari export`: what one machine class installs from a lock, for pip, uv and Docker builds
//! without variant support: a requirements file of pinned files with `--hash`, or a
//! pylock.toml with only that class's files. Opening and planning the lock and fetching its
//! files are `vari_install::sync`'s (what `vari sync` does), writing `vari_lock::export`'s.
//!
//! Released pip and uv refuse a variant wheel's file name and the variant markers in its
//! METADATA: with `--wheelhouse DIR` each file is fetched, checked against the lock, and put
//! in DIR as `vari sync` hands it to the installer (under its name without the label, its
//! variant markers evaluated for the class), and the output names it there by a path relative
//! to the output file's directory (pip and uv run from there). Without it, files are named by
//! their URLs and the lock's hashes; a requirements file that would name a variant wheel so is
//! refused before anything is written unless `--variant-urls` asks for it (for installers that
//! read variant wheels).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use vari_install::sync::{sha256_file, LockedFile, LockedPlan};
use vari_lock::export::{narrow, requirements_txt, ExportedFile, Kept};

use crate::cli::{ExportArgs, ExportFormat};
use crate::error::CliError;
use crate::explain::plan_error_text;
use crate::lock_plan::{lock_choice, plan_failure};
use crate::settings::Selecting;
use crate::{output, progress};

/// Writes the export.
pub(super) fn run(args: &ExportArgs) -> Result<ExitCode, CliError> {
    let selecting = Selecting::resolve(&args.target, &args.selection)?;
    let target = &selecting.target;
    let choice = lock_choice(&args.lock_choice);
    let planned = LockedPlan::open(&args.lock, &choice, target, &selecting.selection)
        .map_err(|failure| plan_failure(failure, target, plan_error_text))?;
    let files: Vec<&LockedFile> = planned.entries.iter().map(|e| &e.file).collect();
    let out_dir = match &args.output {
        Some(path) => match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        },
        None => PathBuf::from("."),
    };
    let placed = match &args.wheelhouse {
        Some(dir) => Some(fill_wheelhouse(args, &selecting, &files, dir, &out_dir)?),
        None => None,
    };
    let text = match args.format {
        ExportFormat::RequirementsTxt => {
            let files: Vec<ExportedFile> = match &placed {
                Some(placed) => placed
                    .iter()
                    .zip(&files)
                    .map(|(p, f)| ExportedFile {
                        name: f.project.clone(),
                        location: p.relative.clone(),
                        sha256: p.sha256.clone(),
                    })
                    .collect(),
                None => {
                    refuse_variant_names(args, &files)?;
                    files
                        .iter()
                        .map(|f| ExportedFile {
                            name: f.project.clone(),
                            location: match (&f.url, &f.path) {
                                (Some(url), _) => url.to_string(),
                                (None, Some(path)) => path.display().to_string(),
                                (None, None) => f.filename.clone(),
                            },
                            sha256: f.sha256.clone(),
                        })
                        .collect()
                }
            };
            requirements_txt(&header(args, &selecting, &planned), &files).map_err(|e| {
                CliError::Other(format!("{}: cannot export {e}", args.lock.display()))
            })?
        }
        ExportFormat::Pylock => {
            let kept: Vec<Kept<'_>> = planned.entries.iter().map(|e| e.planned.kept()).collect();
            let mut lock = narrow(planned.lock.lock(), &kept);
            if let Some(placed) = &placed {
                for ((package, place), file) in lock.packages.iter_mut().zip(placed).zip(&files) {
                    let artifact = vari_lock::Artifact {
                        name: Some(place.name.clone()),
                        url: None,
                        path: Some(place.relative.clone()),
                        size: Some(place.size),
                        upload_time: None,
                        hashes: [("sha256".to_owned(), place.sha256.clone())].into(),
                    };
                    match file.filename.ends_with(".whl") {
                        true => package.wheels = vec![artifact],
                        false => package.sdist = Some(artifact),
                    }
                    // The wheel is no longer a variant wheel by name: its label is not listed.
                    package.variants_json = None;
                    if let Some(info) = &mut package.vari {
                        info.variant_dependencies.clear();
                    }
                }
            }
            vari_lock::write_lock(&lock).map_err(|e| CliError::Other(e.to_string()))?
        }
    };
    match &args.output {
        Some(path) => vari_fs::write_atomic(path, text.as_bytes())?,
        None => output::print_data(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// A requirements file naming variant wheels by URL is one plain pip and uv refuse (the label
/// in the file name, the variant markers in its METADATA): refused before anything is written,
/// naming the wheels and the ways out, unless `--variant-urls` asks for exactly that.
fn refuse_variant_names(args: &ExportArgs, files: &[&LockedFile]) -> Result<(), CliError> {
    let variants: Vec<String> = files
        .iter()
        .filter(|f| f.label.is_some())
        .map(|f| f.filename.clone())
        .collect();
    if variants.is_empty() || args.variant_urls {
        return Ok(());
    }
    let shown: Vec<&str> = variants.iter().take(3).map(String::as_str).collect();
    let more = match variants.len() > shown.len() {
        true => format!(" and {} more", variants.len() - shown.len()),
        false => String::new(),
    };
    Err(CliError::Other(format!(
        "{}: {} variant wheel(s) ({}{more}) cannot be named for pip or uv without variant \
         support (they refuse the label in the name); give --wheelhouse DIR (the checked files \
         under names they install), or --variant-urls to name them by URL for installers that \
         read variant wheels",
        args.lock.display(),
        variants.len(),
        shown.join(", ")
    )))
}

/// `vari export of LOCK for TARGET`: what the file is, in its first comment lines, with the
/// build each family took.
fn header(args: &ExportArgs, selecting: &Selecting, planned: &LockedPlan) -> String {
    let target = &selecting.target;
    let mut text = format!(
        "vari export of {} for {} (Python {}, {})\ninstall with `pip install -r FILE` or `uv \
         pip install -r FILE`, run from this file's directory",
        args.lock.display(),
        target.hardware.source,
        target.python.version.short(),
        target.python.platform
    );
    for taken in &planned.builds {
        text.push_str(&format!(
            "\n{}: build {}, {}",
            taken.family,
            taken.build,
            taken.reason()
        ));
    }
    text
}

/// A file put in the wheelhouse.
struct Placed {
    name: String,
    relative: String,
    sha256: String,
    size: u64,
}

/// Fetches and checks every planned file, and copies what the installer must see into `dir`.
fn fill_wheelhouse(
    args: &ExportArgs,
    selecting: &Selecting,
    files: &[&LockedFile],
    dir: &Path,
    out_dir: &Path,
) -> Result<Vec<Placed>, CliError> {
    let settings = selecting.lock_files(args.files.wheelhouses.clone(), args.files.offline);
    // The store stays until the copies are made (a temporary one goes when dropped).
    let (staged, _store) =
        vari_install::sync::fetch(files, &settings, &progress::LockFiles::new(None))
            .map_err(|e| CliError::Other(e.to_string()))?;
    std::fs::create_dir_all(dir).map_err(|e| CliError::io(dir, e))?;
    let relative_dir = relative_to(dir, out_dir)?;
    let mut placed = Vec::with_capacity(staged.len());
    for (file, staged) in files.iter().zip(staged) {
        let name = file.installer_name();
        let dest = vari_fs::join_under(dir, &name)?;
        // Copied file to file (a CUDA wheel can be gigabytes): never whole in memory.
        let mut source =
            std::fs::File::open(&staged.path).map_err(|e| CliError::io(&staged.path, e))?;
        let copy = vari_fs::AtomicFile::create(&dest)?;
        let size =
            std::io::copy(&mut source, &mut copy.as_file()).map_err(|e| CliError::io(&dest, e))?;
        copy.commit()?;
        let sha256 = sha256_file(&dest).map_err(|e| CliError::io(&dest, e))?;
        placed.push(Placed {
            relative: format!("{relative_dir}{name}"),
            name,
            sha256,
            size,
        });
    }
    Ok(placed)
}

/// `dir` as a path prefix relative to `base` (`wheels/`), or absolute when it is elsewhere.
fn relative_to(dir: &Path, base: &Path) -> Result<String, CliError> {
    let dir = std::fs::canonicalize(dir).map_err(|e| CliError::io(dir, e))?;
    let base = std::fs::canonicalize(base).map_err(|e| CliError::io(base, e))?;
    let text = match dir.strip_prefix(&base) {
        Ok(rel) if rel.as_os_str().is_empty() => "./".to_owned(),
        Ok(rel) => format!("./{}/", rel.display()),
        Err(_) => format!("{}/", dir.display()),
    };
    Ok(text)
}
