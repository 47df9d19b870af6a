//! `limits.md`: the ceilings on what vari reads (sizes, counts, depths) and waits for
//! (time-outs), each with its default as the code defines it and what raises it. The ceilings
//! live beside the code they guard, in many crates; this is the one list of them, reading each
//! value from the constant that defines it.

use std::fmt::Write;
use std::time::Duration;

/// The page's name under `docs/reference/`.
pub(crate) const PAGE: &str = "limits.md";

/// One ceiling.
struct Limit {
    /// What it bounds.
    what: &'static str,
    /// Its default, as the page shows it.
    default: String,
    /// The setting or variable that changes it, if any.
    raised_by: String,
    /// The crate and item that define it.
    defined: &'static str,
}

fn bytes(n: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (size, unit) in UNITS {
        if n >= size && n % size == 0 {
            return format!("{} {unit}", n / size);
        }
    }
    format!("{n} bytes")
}

fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        s if s >= 86_400 && s % 86_400 == 0 => match s / 86_400 {
            1 => format!("1 day ({s} s)"),
            days => format!("{days} days ({s} s)"),
        },
        s if s >= 3_600 && s % 3_600 == 0 => format!("{} h ({s} s)", s / 3_600),
        s => format!("{s} s"),
    }
}

/// `setting` and `VARIABLE`, linked to their pages.
fn raised(key: vari_config::Key) -> String {
    let mut text = format!(
        "[`{}`](settings.md#{})",
        key.name(),
        key.name().replace('.', "")
    );
    if let Some(variable) = key.variable() {
        text.push_str(&format!(
            ", [`{variable}`](environment.md#{})",
            variable.to_ascii_lowercase()
        ));
    }
    text
}

fn variable(name: &str) -> String {
    format!("[`{name}`](environment.md#{})", name.to_ascii_lowercase())
}

const FIXED: &str = "fixed";

fn limits() -> Vec<(&'static str, Vec<Limit>)> {
    use vari_config::Key;
    let client = vari_client::Limits::default();
    vec![
        (
            "Package indexes",
            vec![
                Limit {
                    what: "A simple page (PEP 503 HTML or PEP 691 JSON) or find-links page",
                    default: bytes(client.max_page_bytes),
                    raised_by: raised(Key::MaxPageBytes),
                    defined: "vari_client::Limits",
                },
                Limit {
                    what: "Links on one page",
                    default: count(vari_simple::MAX_PAGE_LINKS),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_simple::MAX_PAGE_LINKS",
                },
                Limit {
                    what: "An index's `*-variants.json`",
                    default: bytes(client.max_variants_json_bytes),
                    raised_by: raised(Key::MaxVariantsJsonBytes),
                    defined: "vari_client::Limits",
                },
                Limit {
                    what: "A PEP 658 `.metadata` file",
                    default: bytes(client.max_metadata_bytes),
                    raised_by: raised(Key::MaxMetadataBytes),
                    defined: "vari_client::Limits",
                },
                Limit {
                    what: "One request read into memory, from sending it to the body's last byte",
                    default: seconds(client.deadline),
                    raised_by: raised(Key::HttpDeadline),
                    defined: "vari_client::Limits",
                },
                Limit {
                    what: "A streamed download: the fewest bytes per low-speed window",
                    default: bytes(client.low_speed_bytes),
                    raised_by: raised(Key::LowSpeedBytes),
                    defined: "vari_client::Limits",
                },
                Limit {
                    what: "The low-speed window",
                    default: seconds(client.low_speed_time),
                    raised_by: raised(Key::LowSpeedSeconds),
                    defined: "vari_client::Limits",
                },
                Limit {
                    what: "A download whose size nothing declares (a lock entry without `size`)",
                    default: bytes(client.max_unsized_file_bytes),
                    raised_by: raised(Key::MaxUnsizedFileBytes),
                    defined: "vari_client::Limits",
                },
            ],
        ),
        (
            "Input files",
            vec![
                Limit {
                    what: "Profiles, configuration files, `rank` inputs, state files",
                    default: bytes(vari_fs::InputKind::Config.default_limit()),
                    raised_by: raised(Key::MaxInputBytes),
                    defined: "vari_fs::InputKind::Config",
                },
                Limit {
                    what: "Metadata files: `*-variants.json`, `variant.json`, property lists",
                    default: bytes(vari_fs::InputKind::Metadata.default_limit()),
                    raised_by: raised(Key::MaxInputBytes),
                    defined: "vari_fs::InputKind::Metadata",
                },
                Limit {
                    what: "Files of `/proc` and `/sys` (or a `--sysroot` copy), such as `cpuinfo`",
                    default: bytes(vari_fs::InputKind::System.default_limit()),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_fs::InputKind::System",
                },
                Limit {
                    what: "Nesting of a JSON or TOML document (profiles, metadata, configs)",
                    default: count(vari_core::MAX_DOCUMENT_DEPTH),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_core::MAX_DOCUMENT_DEPTH",
                },
                Limit {
                    what: "Nesting of an environment marker",
                    default: count(vari_core::markers::MAX_MARKER_DEPTH),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_core::markers::MAX_MARKER_DEPTH",
                },
                Limit {
                    what: "Requirements files included with `-r` inside one another",
                    default: count(vari_install::MAX_REQUIREMENTS_FILE_DEPTH),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_install::MAX_REQUIREMENTS_FILE_DEPTH",
                },
            ],
        ),
        (
            "Wheels",
            vec![
                Limit {
                    what: "How many times its own size a wheel's members may declare in all, \
                           uncompressed",
                    default: format!("{}×", vari_wheel::MAX_INFLATE_RATIO),
                    raised_by: raised(Key::MaxInflateRatio),
                    defined: "vari_wheel::MAX_INFLATE_RATIO",
                },
                Limit {
                    what: "What a small wheel's members may always declare, whatever the ratio",
                    default: bytes(vari_wheel::MIN_INFLATE_CEILING),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_wheel::MIN_INFLATE_CEILING",
                },
                Limit {
                    what: "A wheel's `variant.json`",
                    default: bytes(vari_wheel::MAX_VARIANT_JSON_BYTES),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_wheel::MAX_VARIANT_JSON_BYTES",
                },
                Limit {
                    what: "A wheel's `RECORD`",
                    default: bytes(vari_wheel::MAX_RECORD_BYTES),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_wheel::MAX_RECORD_BYTES",
                },
            ],
        ),
        (
            "Locks (pylock.toml)",
            vec![
                Limit {
                    what: "A lock file",
                    default: bytes(vari_lock::MAX_LOCK_BYTES),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_lock::MAX_LOCK_BYTES",
                },
                Limit {
                    what: "Package entries",
                    default: count(vari_lock::MAX_PACKAGES),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_lock::MAX_PACKAGES",
                },
                Limit {
                    what: "Wheels of one package entry",
                    default: count(vari_lock::MAX_WHEELS_PER_PACKAGE),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_lock::MAX_WHEELS_PER_PACKAGE",
                },
                Limit {
                    what: "Strings in any other array (extras, groups, requirements)",
                    default: count(vari_lock::limits::MAX_ITEMS),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_lock::limits::MAX_ITEMS",
                },
                Limit {
                    what: "Tables in any other array of tables (`dependencies`, `targets`)",
                    default: count(vari_lock::limits::MAX_TABLES),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_lock::limits::MAX_TABLES",
                },
                Limit {
                    what: "One string (a marker may be long; the file's ceiling bounds the total)",
                    default: bytes(vari_lock::limits::MAX_STRING as u64),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_lock::limits::MAX_STRING",
                },
            ],
        ),
        (
            "Build-family catalogs",
            vec![
                Limit {
                    what: "A catalog file",
                    default: bytes(vari_family::MAX_CATALOG_BYTES as u64),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_family::MAX_CATALOG_BYTES",
                },
                Limit {
                    what: "Families in one catalog",
                    default: count(vari_family::MAX_FAMILIES),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_family::MAX_FAMILIES",
                },
                Limit {
                    what: "Builds of one family",
                    default: count(vari_family::MAX_BUILDS),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_family::MAX_BUILDS",
                },
                Limit {
                    what: "Properties one build may require",
                    default: count(vari_family::MAX_REQUIRES),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_family::MAX_REQUIRES",
                },
                Limit {
                    what: "Groups in one catalog",
                    default: count(vari_family::MAX_GROUPS),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_family::MAX_GROUPS",
                },
                Limit {
                    what: "Families one group may list",
                    default: count(vari_family::MAX_GROUP_MEMBERS),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_family::MAX_GROUP_MEMBERS",
                },
                Limit {
                    what: "Entries of a short list (`docs`, `namespaces`)",
                    default: count(vari_family::MAX_SHORT_LIST),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_family::MAX_SHORT_LIST",
                },
                Limit {
                    what: "One string value (URLs included)",
                    default: bytes(vari_family::MAX_TEXT_BYTES as u64),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_family::MAX_TEXT_BYTES",
                },
            ],
        ),
        (
            "Time-outs and ages",
            vec![
                Limit {
                    what: "A GPU driver library's answer (in a child process)",
                    default: seconds(vari_detect::DetectContext::DEFAULT_TIMEOUT),
                    raised_by: variable(vari_detect::child::TIMEOUT_ENV),
                    defined: "vari_detect::DetectContext::DEFAULT_TIMEOUT",
                },
                Limit {
                    what: "How long a cached detection is reused (while nothing it depends on \
                           changed)",
                    default: seconds(vari_detect::cache::TTL),
                    raised_by: "`--no-cache` detects again".to_owned(),
                    defined: "vari_detect::cache::TTL",
                },
                Limit {
                    what: "A Python interpreter's answer to vari's query",
                    default: seconds(vari_python::ResolveOptions::DEFAULT_TIMEOUT),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_python::ResolveOptions::DEFAULT_TIMEOUT",
                },
                Limit {
                    what: "One `uv pip compile` run of `vari lock` or `vari mirror`",
                    default: seconds(vari_lockmaker::DEFAULT_RESOLVE_TIMEOUT),
                    raised_by: variable(vari_lockmaker::RESOLVE_TIMEOUT_ENV),
                    defined: "vari_lockmaker::DEFAULT_RESOLVE_TIMEOUT",
                },
                Limit {
                    what: "What `vari cache prune` keeps (unused for less than this); the \
                           proxy's own eviction age",
                    default: seconds(vari_fs::cache_admin::DEFAULT_MAX_UNUSED),
                    raised_by: "`vari cache prune --older-than DAYS`".to_owned(),
                    defined: "vari_fs::cache_admin::DEFAULT_MAX_UNUSED",
                },
            ],
        ),
        (
            "The proxy",
            vec![
                Limit {
                    what: "Open client connections",
                    default: count(vari_proxy::DEFAULT_MAX_CONNECTIONS),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_proxy::DEFAULT_MAX_CONNECTIONS",
                },
                Limit {
                    what: "A client's request head, and an idle keep-alive connection",
                    default: seconds(vari_proxy::DEFAULT_HEADER_TIMEOUT),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_proxy::DEFAULT_HEADER_TIMEOUT",
                },
                Limit {
                    what: "How long a project page is reused before the upstream is asked again",
                    default: seconds(vari_proxy::DEFAULT_PAGE_TTL),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_proxy::DEFAULT_PAGE_TTL",
                },
                Limit {
                    what: "How long a page that could not be built is answered with the same \
                           error",
                    default: seconds(vari_proxy::DEFAULT_FAILURE_TTL),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_proxy::DEFAULT_FAILURE_TTL",
                },
                Limit {
                    what: "Worker threads / blocking threads",
                    default: format!(
                        "{} / {}",
                        vari_proxy::MAX_WORKER_THREADS,
                        vari_proxy::MAX_BLOCKING_THREADS
                    ),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_proxy::MAX_WORKER_THREADS, MAX_BLOCKING_THREADS",
                },
                Limit {
                    what: "A machine class's name, in characters",
                    default: count(vari_proxy::ClassName::MAX_LEN),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_proxy::ClassName::MAX_LEN",
                },
                Limit {
                    what: "A built page kept on disk across runs (`proxy/pages/`; a larger one is \
                           neither written nor read)",
                    default: bytes(vari_proxy::MAX_KEPT_PAGE_BYTES),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_proxy::MAX_KEPT_PAGE_BYTES",
                },
                Limit {
                    what: "Built pages kept on disk in all (a starting proxy removes the least \
                           recently used beyond it)",
                    default: bytes(vari_proxy::MAX_KEPT_PAGES_BYTES),
                    raised_by: FIXED.to_owned(),
                    defined: "vari_proxy::MAX_KEPT_PAGES_BYTES",
                },
            ],
        ),
    ]
}

/// The page.
pub(crate) fn page() -> String {
    let mut out = String::from(
        "<!-- Generated by `vari generate-reference` from the constants that define each \
         limit (crates/vari-cli/src/reference/limits.rs names them): run `VARI_BLESS=1 cargo \
         test -p vari-cli --test docs reference::` after changing one. -->\n\n# Limits and \
         ceilings\n\nEverything vari reads from an index, a wheel, a lock or a file is \
         treated as hostile until checked, so each is bounded: its size, its counts, its \
         depth, the time it may take. The defaults are far above what real inputs need; \
         where a real input might need more, a setting or variable raises the ceiling \
         (*fixed* ones are not configurable). Going over a ceiling is an error naming the \
         file, URL or key and the ceiling, and leaves nothing half-written.\n\n",
    );
    for (title, limits) in limits() {
        let _ = writeln!(out, "## {title}\n");
        out.push_str("| Limit | Default | Changed by | Defined in |\n|---|---|---|---|\n");
        for limit in limits {
            let _ = writeln!(
                out,
                "| {} | {} | {} | `{}` |",
                limit.what, limit.default, limit.raised_by, limit.defined
            );
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(bytes(64 << 20), "64 MiB");
        assert_eq!(bytes(4 << 30), "4 GiB");
        assert_eq!(bytes(1000), "1000 bytes");
        assert_eq!(count(100_000), "100,000");
        assert_eq!(count(64), "64");
        assert_eq!(seconds(Duration::from_secs(86_400)), "1 day (86400 s)");
        assert_eq!(seconds(Duration::from_secs(1800)), "1800 s");
    }
}
