//! Where the documentation of each command and topic lives: the one table `--help`'s "More:"
//! lines, `vari help TOPIC` and the generated reference pages read (issue 31).
//!
//! Pages are named relative to the documentation directory (`docs/` in the repository, the
//! root of the built site); [`url()`] puts the base address in front.

/// The base address of the documentation: the repository's `docs/` directory, whose Markdown
/// pages are the site's sources and read as they are on the forge.
pub(crate) const DOCS_URL: &str = concat!(env!("CARGO_PKG_REPOSITORY"), "/blob/main/docs/");

/// The full address of `page` (a path under `docs/`, with an optional `#anchor`).
pub(crate) fn url(page: &str) -> String {
    format!("{DOCS_URL}{page}")
}

/// The reference page of every command and flag.
pub(crate) const COMMANDS_PAGE: &str = "reference/commands.md";

/// The anchor of a command's section in [`COMMANDS_PAGE`]: its heading `vari wheel slim` read
/// as Markdown renderers make ids (lower case, spaces as `-`).
pub(crate) fn command_anchor(path: &str) -> String {
    let words: Vec<&str> = std::iter::once("vari")
        .chain(path.split_whitespace())
        .collect();
    words.join("-").to_ascii_lowercase()
}

/// The page that explains more about the command at `path` (`lock`, `wheel slim`): a topic's
/// reference page for the commands that have one, else the command's section of the commands
/// reference.
pub(crate) fn command_page(path: &str) -> String {
    let top = path.split_whitespace().next().unwrap_or("");
    let topical = match top {
        "families" => Some("reference/families.md"),
        "config" => Some("reference/settings.md"),
        "lock" | "sync" | "export" => Some("reference/locks.md"),
        "detect" | "snapshot" => Some("reference/profiles.md"),
        _ => None,
    };
    match topical {
        Some(page) => page.to_owned(),
        None => format!("{COMMANDS_PAGE}#{}", command_anchor(path)),
    }
}

/// A subject `vari help NAME` explains.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Topic {
    /// The name given to `vari help` (never a command's name).
    pub name: &'static str,
    /// One line: what it is about.
    pub title: &'static str,
    /// One paragraph.
    pub text: &'static str,
    /// The page that explains more (under `docs/`).
    pub page: &'static str,
}

/// Every topic, in the order `vari help topics` lists them.
pub(crate) const TOPICS: &[Topic] = &[
    Topic {
        name: "variants",
        title: "Wheel variants (PEP 817, PEP 825)",
        text: "A release may publish several builds of one wheel that differ by the hardware or \
               software they need: CUDA 12 or 13, an x86-64 level, a GPU architecture. Each is a \
               variant wheel: its file name ends with a label, its `variant.json` lists the \
               properties it needs, and the release's `*-variants.json` lists every variant with \
               the providers that can say which properties a machine supports. vari detects \
               what this machine (or a profile) supports, drops the variants it cannot use and \
               orders the rest by the release's priorities and your preferences (`vari rank`, \
               `vari select`).",
        page: "reference/providers.md",
    },
    Topic {
        name: "labels",
        title: "Variant labels",
        text: "A label names one variant of a release; it ends the wheel's file name, after \
               the platform tag (`demo-1.0-cp312-cp312-linux_x86_64-cu128.whl`): lower-case \
               letters, digits, `_` and `.` (PEP 817 allows 16 characters). `vari wheel label -p \
               PROP...` prints the default label of a property set (8 hex digits of its hash); \
               `null` is the null variant's. `--variant LABEL` selects only that variant.",
        page: "reference/commands.md#vari-wheel-label",
    },
    Topic {
        name: "providers",
        title: "Providers, namespaces, features and properties",
        text: "A property is `namespace :: feature :: value` (`nvidia :: sm_arch :: 90_real`). A \
               namespace has one provider that says which of its properties a machine supports; \
               vari has built-in providers for NVIDIA, AMD and Intel GPUs, x86-64 and Arm CPUs, \
               BLAS/LAPACK and OpenMP, and the ABI of installed packages. The reference lists every \
               namespace, feature and value, how each is detected, and the variables that \
               override detection.",
        page: "reference/providers.md",
    },
    Topic {
        name: "null",
        title: "The null variant",
        text: "A variant with no properties (label `null`): it fits every machine and is chosen \
               only when no other variant does, before a plain (non-variant) wheel. A release \
               that ships a CPU build as the null variant installs everywhere. `vari wheel \
               make-variant --null` makes one.",
        page: "reference/commands.md#vari-wheel-make-variant",
    },
    Topic {
        name: "profiles",
        title: "Target profiles and hardware facts",
        text: "A profile describes a machine vari is not running on: `vari detect --json` prints \
               one (`vari-profile/1`), and `--profile FILE` (or `VARI_PROFILE`) makes every \
               selecting command choose for it. A profile may also be written by hand in TOML as \
               hardware facts (`vari-facts/1`: CUDA version, compute capabilities, CPU \
               microarchitecture, ...). `vari snapshot` copies the files detection reads, for \
               `--sysroot`.",
        page: "reference/profiles.md",
    },
    Topic {
        name: "classes",
        title: "Machine classes",
        text: "A fleet's kinds of machine, each named and described by a profile: `[proxy.targets]` \
               in vari.toml, or `--target NAME=PROFILE`. `vari detect --class` says which class \
               this machine is, `vari proxy` serves each class its own index under `/t/NAME/`, \
               and `vari lock` and `vari mirror` cover every class at once.",
        page: "reference/settings.md#proxytargets",
    },
    Topic {
        name: "locks",
        title: "Locks (pylock.toml)",
        text: "`vari lock` writes one PEP 751 lock for several machine classes: every variant \
               wheel the targets can use, with hashes and sizes, the release's `*-variants.json` \
               inlined (PEP 825), and vari's own `[tool.vari]` tables. `vari sync` installs it \
               on any machine (the variant that fits, checked against the lock), `vari export` \
               writes what one class installs, and `vari lock --check` fails when it is stale.",
        page: "reference/locks.md",
    },
    Topic {
        name: "build-families",
        title: "Build families",
        text: "Today's GPU packages are published as separate projects or indexes per build \
               (`cupy-cuda12x`, `-cu12` names, per-CUDA index URLs, `[cuda12]` extras). A build \
               family reads them as the builds of one project, so that `vari select cupy` picks \
               the build this machine can use. vari has a built-in catalog; `--families FILE` \
               adds to it (`vari families` lists them).",
        page: "reference/families.md",
    },
    Topic {
        name: "settings",
        title: "Settings (vari.toml)",
        text: "Lasting preferences live in vari.toml (the user's), in a project's \
               `pyproject.toml` `[tool.vari]`, and in the file `VARI_CONFIG` names, the later \
               winning key by key; the command line wins over all. `vari config show` prints \
               the merged settings and where each came from.",
        page: "reference/settings.md",
    },
    Topic {
        name: "environment",
        title: "Environment variables",
        text: "Every variable vari reads: its own `VARI_*` settings and ceilings, the providers' \
               overrides (`NV_VARIANT_PROVIDER_FORCE_SM_ARCH`, ...), and the pip, uv and Python \
               variables it honours.",
        page: "reference/environment.md",
    },
    Topic {
        name: "limits",
        title: "Limits and ceilings",
        text: "Everything vari reads from an index, a wheel, a lock or a file is bounded: sizes, \
               counts, depths and time-outs, each with a default real inputs never come near \
               and, where one may need more, a setting or variable that raises it.",
        page: "reference/limits.md",
    },
    Topic {
        name: "output",
        title: "Exit codes and output formats",
        text: "Exit status 0 on success, 1 on failure (one `error:` line on stderr naming the \
               file, key or URL at fault), 2 on bad usage. JSON (`--json`) goes to stdout, \
               diagnostics to stderr; what is stable for scripts is listed on the page.",
        page: "reference/output.md",
    },
    Topic {
        name: "json",
        title: "JSON output",
        text: "Every command that prints data has `--json`; the reference lists the shape each \
               prints.",
        page: "reference/json-schemas.md",
    },
];

/// The topic named `name`, if there is one.
pub(crate) fn topic(name: &str) -> Option<&'static Topic> {
    TOPICS.iter().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_are_the_headings_ids() {
        assert_eq!(command_anchor("wheel slim"), "vari-wheel-slim");
        assert_eq!(command_anchor(""), "vari");
        assert_eq!(
            command_page("rank"),
            "reference/commands.md#vari-rank".to_owned()
        );
        assert_eq!(command_page("families show"), "reference/families.md");
    }

    #[test]
    fn topics_are_unique_and_pages_are_reference_pages() {
        let mut names: Vec<&str> = TOPICS.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TOPICS.len());
        for topic in TOPICS {
            assert!(topic.page.starts_with("reference/"), "{}", topic.name);
            assert!(topic.text.ends_with('.'), "{}", topic.name);
            assert!(!topic.text.contains("  "), "{}", topic.name);
        }
    }
}
