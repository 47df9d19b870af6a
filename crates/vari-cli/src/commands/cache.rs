//! `vari cache dir|info|clean|prune`: where vari's cache is, what it holds, emptying it and
//! trimming what has not been used for a while, as `pip cache` and `uv cache` do for theirs.
//! Argument mapping and rendering only: what an entry is is said by each area's writer
//! ([`crate::cache_areas`] lists them), and how it is removed safely while a proxy runs is
//! `vari_fs::cache_admin`'s.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use serde::Serialize;
use vari_fs::cache_admin::{self, CacheArea, Removed, Usage};

use crate::cache_areas::LAYOUTS;
use crate::cli::{CacheAreaArg, CacheCleanArgs, CacheInfoArgs, CachePruneArgs};
use crate::error::CliError;
use crate::output;
use crate::table::{count, Cell, Table};

/// Prints the cache directory.
pub(super) fn dir() -> Result<ExitCode, CliError> {
    let dir = cache_dir()?;
    output::print_data(&format!("{}\n", dir.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// Prints each area's entries and size.
pub(super) fn info(args: &CacheInfoArgs) -> Result<ExitCode, CliError> {
    let dir = cache_dir()?;
    let areas = cache_admin::usage(&dir, &LAYOUTS).map_err(|e| CliError::io(&e.path, e.source))?;
    if args.json {
        let total = Usage::total(areas.iter().map(|(_, usage)| usage));
        output::print_data(&json(&InfoJson {
            cache_dir: dir.display().to_string(),
            areas: area_json(&areas),
            total: total.into(),
        }))?;
    } else {
        let mut text = format!("{}\n\n", dir.display());
        text.push_str(&table(&areas));
        output::print(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Empties the areas named (all without names).
pub(super) fn clean(args: &CacheCleanArgs) -> Result<ExitCode, CliError> {
    let dir = cache_dir()?;
    let areas: Vec<CacheArea> = if args.areas.is_empty() {
        CacheArea::ALL.to_vec()
    } else {
        args.areas.iter().copied().map(area).collect()
    };
    // Safe while a proxy runs: see `vari_fs::cache_admin` (a download under way keeps reading
    // its open file, a later request rebuilds the copy).
    let removed = cache_admin::clean(&dir, &LAYOUTS, &areas);
    report(&dir, &removed, None, args.json)
}

/// Removes the HTTP responses, rewritten wheels and locked files unused for `--older-than`
/// days.
pub(super) fn prune(args: &CachePruneArgs) -> Result<ExitCode, CliError> {
    let dir = cache_dir()?;
    let max_unused = Duration::from_secs(u64::from(args.older_than) * 24 * 60 * 60);
    let removed = cache_admin::prune(&dir, &LAYOUTS, max_unused, SystemTime::now());
    report(&dir, &removed, Some(args.older_than), args.json)
}

fn cache_dir() -> Result<PathBuf, CliError> {
    vari_fs::cache_dir().ok_or_else(|| {
        CliError::Other(
            "no cache directory: set VARI_CACHE_DIR (or HOME, or XDG_CACHE_HOME)".to_owned(),
        )
    })
}

fn area(arg: CacheAreaArg) -> CacheArea {
    match arg {
        CacheAreaArg::Http => CacheArea::Http,
        CacheAreaArg::Python => CacheArea::Python,
        CacheAreaArg::Detect => CacheArea::Detect,
        CacheAreaArg::Proxy => CacheArea::Proxy,
        CacheAreaArg::Locked => CacheArea::Locked,
        CacheAreaArg::Mirror => CacheArea::Mirror,
        CacheAreaArg::Profiles => CacheArea::Profiles,
    }
}

/// Prints what `clean` or `prune` removed; the entries that could not be removed are warnings,
/// and make the run fail once the rest is reported.
fn report(
    dir: &Path,
    removed: &Removed,
    older_than_days: Option<u32>,
    json_output: bool,
) -> Result<ExitCode, CliError> {
    if json_output {
        output::print_data(&json(&RemovedJson {
            cache_dir: dir.display().to_string(),
            older_than_days,
            removed: area_json(&removed.areas),
            total: removed.total().into(),
        }))?;
    } else {
        output::print(&removal_text(dir, removed, older_than_days))?;
    }
    for failure in &removed.failures {
        output::warn(&format!("cannot remove {failure}"));
    }
    match removed.failures.len() {
        0 => Ok(ExitCode::SUCCESS),
        n => Err(CliError::Other(format!(
            "{} of the cache could not be removed (see the warnings)",
            entries(n as u64)
        ))),
    }
}

fn removal_text(dir: &Path, removed: &Removed, older_than_days: Option<u32>) -> String {
    let total = removed.total();
    let unused = older_than_days
        .map(|days| format!(" unused for {} or more", count(days as usize, "day")))
        .unwrap_or_default();
    if total.entries == 0 {
        return format!("nothing{unused} to remove in {}\n", dir.display());
    }
    let mut text = format!(
        "removed {}{unused} ({}) from {}\n\n",
        entries(total.entries),
        vari_fs::human_bytes(total.bytes),
        dir.display()
    );
    text.push_str(&table(&removed.areas));
    text
}

/// The per-area table with a total row, numbers right-aligned.
fn table(areas: &[(CacheArea, Usage)]) -> String {
    let total = Usage::total(areas.iter().map(|(_, usage)| usage));
    let rows: Vec<[String; 3]> = areas
        .iter()
        .map(|(area, usage)| (area.name(), *usage))
        .chain([("total", total)])
        .map(|(name, usage)| {
            [
                name.to_owned(),
                usage.entries.to_string(),
                vari_fs::human_bytes(usage.bytes),
            ]
        })
        .collect();
    let headers = ["area", "entries", "size"];
    let width = |column: usize| {
        rows.iter()
            .map(|row| row[column].len())
            .chain([headers[column].len()])
            .max()
            .unwrap_or(0)
    };
    let (entries_width, size_width) = (width(1), width(2));
    let entries_header = format!("{:>entries_width$}", headers[1]);
    let size_header = format!("{:>size_width$}", headers[2]);
    let mut table = Table::new(&[headers[0], &entries_header, &size_header]);
    for [name, entries, size] in &rows {
        table.row(vec![
            Cell::new(name.as_str()),
            Cell::new(format!("{entries:>entries_width$}")),
            Cell::new(format!("{size:>size_width$}")),
        ]);
    }
    table.render(output::width())
}

fn entries(n: u64) -> String {
    match n {
        1 => "1 entry".to_owned(),
        n => format!("{n} entries"),
    }
}

/// `vari cache info --json`.
#[derive(Serialize)]
struct InfoJson {
    cache_dir: String,
    areas: Vec<AreaJson>,
    total: UsageJson,
}

/// `vari cache clean --json` and `vari cache prune --json`.
#[derive(Serialize)]
struct RemovedJson {
    cache_dir: String,
    /// `prune` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    older_than_days: Option<u32>,
    removed: Vec<AreaJson>,
    total: UsageJson,
}

/// One area's line: its name, how many entries, how many bytes.
#[derive(Serialize)]
struct AreaJson {
    area: &'static str,
    entries: u64,
    bytes: u64,
}

/// A count of entries and their size.
#[derive(Serialize)]
struct UsageJson {
    entries: u64,
    bytes: u64,
}

impl From<Usage> for UsageJson {
    fn from(usage: Usage) -> Self {
        Self {
            entries: usage.entries,
            bytes: usage.bytes,
        }
    }
}

fn area_json(areas: &[(CacheArea, Usage)]) -> Vec<AreaJson> {
    areas
        .iter()
        .map(|(area, usage)| AreaJson {
            area: area.name(),
            entries: usage.entries,
            bytes: usage.bytes,
        })
        .collect()
}

/// Pretty JSON with a trailing newline; serialising strings and numbers cannot fail.
fn json(value: &impl Serialize) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}
