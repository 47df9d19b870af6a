//! The reference pages under `docs/reference/` (issue 31): the generated ones equal what the
//! code generates (`vari generate-reference`), the hand-written ones say what the code does,
//! every `VARI_*` variable the code reads is documented, the man pages name every command, and
//! `--help` and `vari help TOPIC` point to pages that exist.
//!
//! `VARI_BLESS=1 cargo test -p vari-cli --test docs reference::` rewrites the generated pages.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::common::{vari, vari_run};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

fn reference_dir() -> PathBuf {
    root().join("docs/reference")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const BLESS: &str = "VARI_BLESS=1 cargo test -p vari-cli --test docs reference::";

/// The pages `vari generate-reference` writes, by name.
fn generated() -> Vec<(String, String)> {
    let dir = tempfile::tempdir().unwrap();
    vari_run([Path::new("generate-reference"), dir.path()]).expect_code(0);
    let mut pages: Vec<(String, String)> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            (
                entry.file_name().to_string_lossy().into_owned(),
                read(&entry.path()),
            )
        })
        .collect();
    pages.sort();
    pages
}

/// Each generated page is committed as the code generates it; with `VARI_BLESS` set, the
/// committed pages are rewritten instead.
#[test]
fn generated_pages_match_the_code() {
    let pages = generated();
    let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "commands.md",
            "environment.md",
            "json-schemas.md",
            "limits.md",
            "profiles.md",
            "providers.md",
            "settings.md"
        ]
    );
    let bless = std::env::var_os("VARI_BLESS").is_some_and(|v| !v.is_empty());
    let mut stale = Vec::new();
    for (name, text) in &pages {
        let path = reference_dir().join(name);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed == *text {
            continue;
        }
        if bless {
            std::fs::write(&path, text).unwrap();
            continue;
        }
        let line = committed
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(text.lines().count()));
        stale.push(format!(
            "docs/reference/{name} (first difference at line {}: {:?})",
            line + 1,
            text.lines().nth(line).unwrap_or("<end of file>")
        ));
    }
    assert!(
        stale.is_empty(),
        "these reference pages differ from what the code generates: {stale:#?}\nrun `{BLESS}` \
         and commit the result"
    );
}

/// The generated pages link only to pages of the reference that exist, and to headings that
/// exist on them (the site is built with `--strict`).
#[test]
fn reference_links_resolve() {
    let dir = reference_dir();
    let mut broken = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("md") {
            continue;
        }
        let text = read(&path);
        for link in links(&text) {
            if link.starts_with("http://") || link.starts_with("https://") {
                continue;
            }
            let (file, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = match file.is_empty() {
                true => path.clone(),
                false => dir.join(file),
            };
            let Ok(target_text) = std::fs::read_to_string(&target) else {
                broken.push(format!("{}: {link}", path.display()));
                continue;
            };
            if !anchor.is_empty() && !heading_ids(&target_text).contains(anchor) {
                broken.push(format!("{}: {link} (no such heading)", path.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links: {broken:#?}");
}

/// The targets of the Markdown links `[text](target)` in `text`.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("](") {
        rest = &rest[start + 2..];
        if let Some(end) = rest.find(')') {
            found.push(rest[..end].to_owned());
        }
    }
    found
}

/// The ids Markdown renderers give the headings of `text`: lower case, spaces as `-`, other
/// punctuation but `-` and `_` dropped.
fn heading_ids(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|l| {
            l.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// Every `"VARI_…"` name in the crates' sources (not their tests, not the test support crate)
/// is a variable vari reads or sets: each must be on the environment page.
#[test]
fn every_variable_the_code_names_is_documented() {
    let page = read(&reference_dir().join("environment.md"));
    let mut names = BTreeSet::new();
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let crate_dir = entry.unwrap().path();
        if crate_dir.ends_with("vari-test-support") {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&crate_dir.join("src"), &mut files);
        files.push(crate_dir.join("build.rs"));
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            // Test modules name made-up variables; the code before them is what runs.
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for piece in code.split("\"VARI_").skip(1) {
                let name: String = piece
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                if !name.is_empty() && piece[name.len()..].starts_with('"') {
                    names.insert(format!("VARI_{name}"));
                }
            }
        }
    }
    assert!(names.contains("VARI_CACHE_DIR"), "{names:?}");
    let headings: Vec<&str> = page.lines().filter(|l| l.starts_with("### ")).collect();
    let unique: BTreeSet<&&str> = headings.iter().collect();
    assert_eq!(unique.len(), headings.len(), "a variable is listed twice");
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| !page.contains(&format!("### `{n}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "variables the code reads that docs/reference/environment.md does not document: \
         {missing:?} (add them to a list in the code: crates/vari-cli/src/reference/\
         environment.rs, then run `{BLESS}`)"
    );
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().and_then(|e| e.to_str()) == Some("rs") {
            out.push(path);
        }
    }
}

/// Every command the reference lists (`## vari wheel slim` headings of commands.md, itself
/// checked against the code above).
fn command_paths() -> Vec<String> {
    read(&reference_dir().join("commands.md"))
        .lines()
        .filter(|l| l.starts_with('#'))
        .filter_map(|l| l.trim_start_matches('#').trim().strip_prefix("vari "))
        .map(str::to_owned)
        .collect()
}

/// The man pages: `vari.1` names every top-level command, and each command has its own page.
#[test]
fn man_pages_cover_every_command() {
    let dir = tempfile::tempdir().unwrap();
    vari_run([Path::new("generate-man"), dir.path()]).expect_code(0);
    let main = read(&dir.path().join("vari.1"));
    assert!(
        main.starts_with(".ie") || main.contains(".TH vari 1"),
        "{main}"
    );
    let paths = command_paths();
    assert!(paths.len() > 30, "{paths:?}");
    for path in &paths {
        let page = dir
            .path()
            .join(format!("vari-{}.1", path.replace(' ', "-")));
        assert!(page.is_file(), "no man page for `vari {path}`");
        if !path.contains(' ') {
            assert!(
                main.contains(path.as_str()),
                "vari.1 does not name `{path}`"
            );
        }
    }
    assert!(!dir.path().join("vari-generate-man.1").exists());
    assert!(!main.contains("generate-reference"));
}

/// The repository path a "More:" URL names, and its anchor.
fn page_of(url: &str) -> (PathBuf, String) {
    let (_, page) = url
        .split_once("/blob/main/docs/")
        .unwrap_or_else(|| panic!("{url} is not a docs URL"));
    let (file, anchor) = page.split_once('#').unwrap_or((page, ""));
    (root().join("docs").join(file), anchor.to_owned())
}

fn more_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// Each command's `--help` ends with the page that explains more, and the page (and heading)
/// exists; `-h` (the short help) stays as it was; `vari help COMMAND` prints the same as
/// `vari COMMAND --help`.
#[test]
fn every_long_help_ends_with_its_page() {
    for path in command_paths() {
        let args: Vec<&str> = path.split(' ').collect();
        let help = vari_run(args.iter().copied().chain(["--help"]))
            .expect_code(0)
            .stdout;
        let last = more_line(&help);
        let url = last
            .strip_prefix("More: ")
            .unwrap_or_else(|| panic!("`vari {path} --help` ends with {last:?}"));
        let (file, anchor) = page_of(url);
        if file.starts_with(reference_dir()) {
            let text = read(&file);
            assert!(
                anchor.is_empty() || heading_ids(&text).contains(&anchor),
                "`vari {path} --help`: {url}: no such heading"
            );
        }
        let short = vari_run(args.iter().copied().chain(["-h"]))
            .expect_code(0)
            .stdout;
        assert!(!short.contains("More: "), "`vari {path} -h`: {short}");
        let via_help = vari_run(["help"].into_iter().chain(args.iter().copied()))
            .expect_code(0)
            .stdout;
        assert_eq!(via_help, help, "`vari help {path}`");
    }
    let lock = vari_run(["lock", "--help"]).expect_code(0).stdout;
    assert!(
        more_line(&lock).ends_with("/docs/reference/locks.md"),
        "{lock}"
    );
    let rank = vari_run(["rank", "--help"]).expect_code(0).stdout;
    assert!(
        more_line(&rank).ends_with("/docs/reference/commands.md#vari-rank"),
        "{rank}"
    );
}

/// `vari help topics` lists the topics; each topic prints a paragraph and a page of the
/// reference that exists; an unknown name is a usage error (exit 2) pointing at the list.
#[test]
fn help_topics_point_to_their_pages() {
    let list = vari_run(["help", "topics"]).expect_code(0).stdout;
    let topics: Vec<String> = list
        .lines()
        .filter(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    for expected in [
        "variants",
        "labels",
        "profiles",
        "locks",
        "build-families",
        "limits",
    ] {
        assert!(topics.iter().any(|t| t == expected), "{list}");
    }
    for topic in &topics {
        let text = vari_run(["help", topic]).expect_code(0).stdout;
        let last = more_line(&text);
        let url = last
            .strip_prefix("More: ")
            .unwrap_or_else(|| panic!("`vari help {topic}` ends with {last:?}"));
        let (file, anchor) = page_of(url);
        let page = read(&file);
        assert!(
            anchor.is_empty() || heading_ids(&page).contains(&anchor),
            "`vari help {topic}`: {url}: no such heading"
        );
        assert!(text.lines().count() >= 4, "`vari help {topic}`: {text}");
    }
    let top = vari_run(["help"]).expect_code(0).stdout;
    assert_eq!(top, vari_run(["--help"]).expect_code(0).stdout);
    let unknown = vari_run(["help", "no-such-thing"]).expect_code(2);
    assert!(
        unknown.stderr.contains("`vari help topics`"),
        "{}",
        unknown.stderr
    );
}

/// The exit codes output.md promises: 0 success, 1 failure with one `error:` line naming the
/// file, 2 bad usage.
#[test]
fn exit_codes_are_as_the_output_page_says() {
    let page = read(&reference_dir().join("output.md"));
    for row in ["| 0 | success |", "| 1 | failure:", "| 2 | bad usage:"] {
        assert!(page.contains(row), "output.md lacks {row:?}");
    }
    vari_run(["--version"]).expect_code(0);
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing-variants.json");
    let failure = run_code(vari().arg("rank").arg(&missing), 1);
    let errors: Vec<&str> = failure
        .stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", failure.stderr);
    assert!(
        errors[0].contains("missing-variants.json"),
        "{}",
        failure.stderr
    );
    run_code(vari().arg("rank").arg("--no-such-option"), 2);
}

fn run_code(command: &mut std::process::Command, code: i32) -> vari_test_support::binary::Run {
    vari_test_support::binary::run(command).expect_code(code)
}

/// locks.md names every key the lock reader reads (the reader's own calls, read from its
/// source: `fields.string("requires-python")`, …).
#[test]
fn the_locks_page_names_every_key_the_reader_reads() {
    let page = read(&reference_dir().join("locks.md"));
    // The reader and its part for build families.
    let reader = [
        "crates/vari-lock/src/read.rs",
        "crates/vari-lock/src/read/families.rs",
    ]
    .map(|file| read(&root().join(file)));
    let code: String = reader
        .iter()
        .map(|text| text.split("#[cfg(test)]").next().unwrap_or_default())
        .collect();
    let mut keys = BTreeSet::new();
    for call in [
        ".string(\"",
        ".required_string(\"",
        ".strings(\"",
        ".tables(\"",
        ".table(\"",
        ".take(\"",
    ] {
        for piece in code.split(call).skip(1) {
            if let Some(end) = piece.find('"') {
                keys.insert(piece[..end].to_owned());
            }
        }
    }
    for key in [
        "lock-version",
        "variants-json",
        "through-variants",
        "profile-hash",
        "families",
        "classes",
    ] {
        assert!(keys.contains(key), "{keys:?}");
    }
    let missing: Vec<&String> = keys
        .iter()
        .filter(|k| k.as_str() != "tool" && !page.contains(&format!("`{k}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "keys the lock reader reads that docs/reference/locks.md does not name: {missing:?}"
    );
}

/// What the binary prints with `--json` is valid against the command's schema
/// (`docs/reference/schemas/`), for the commands that run offline from the fixtures; the
/// commands that need an index, a proxy or a Python check their outputs against their schemas
/// in their own tests (`crate::common::assert_json_schema`).
#[test]
fn json_outputs_match_their_schemas() {
    use crate::common::assert_json_schema;
    let dir = tempfile::tempdir().unwrap();
    let profile = crate::common::v3_profile(dir.path());
    let profile = profile.to_str().unwrap();
    let variants = crate::common::data("variants-json/torch-2.8.0-variants.json");
    let variants = variants.to_str().unwrap();
    let wheel = crate::common::data("wheels/test_package-0-py3-none-any.whl");
    let wheel = wheel.to_str().unwrap();
    let cache = dir.path().join("cache");
    let cases: Vec<(&str, Vec<&str>, i32)> = vec![
        ("version", vec!["--version", "--json"], 0),
        ("detect", vec!["detect", "--json", "--profile", profile], 0),
        ("cache-info", vec!["cache", "info", "--json"], 0),
        ("cache-clean", vec!["cache", "clean", "--json"], 0),
        ("cache-prune", vec!["cache", "prune", "--json"], 0),
        ("config-show", vec!["config", "show", "--json"], 0),
        ("families", vec!["families", "--json"], 0),
        ("families", vec!["families", "--json", "--no-families"], 0),
        (
            "families-show",
            vec!["families", "show", "cupy", "--json", "--profile", profile],
            0,
        ),
        (
            "families-show",
            vec!["families", "show", "torch", "--json", "--profile", profile],
            0,
        ),
        (
            "rank",
            vec!["rank", variants, "--json", "--profile", profile],
            0,
        ),
        (
            "wheel-inspect",
            vec!["wheel", "inspect", wheel, "--json"],
            0,
        ),
        (
            "wheel-validate",
            vec!["wheel", "validate", wheel, "--json"],
            0,
        ),
        ("wheel-scan", vec!["wheel", "scan", wheel, "--json"], 0),
        (
            "wheel-scan",
            vec!["wheel", "scan", wheel, wheel, "--json"],
            0,
        ),
        (
            "metadata-validate",
            vec!["metadata", "validate", variants, "--json"],
            0,
        ),
        (
            "metadata-validate",
            vec!["metadata", "validate", variants, "--json", "--for", "uv"],
            1,
        ),
    ];
    // `vari detect --json` prints a profile: profiles.md names each of its keys.
    let profiles = read(&reference_dir().join("profiles.md"));
    let out = run_code(vari().args(["detect", "--json", "--profile", profile]), 0).stdout;
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    for key in json.as_object().unwrap().keys() {
        assert!(
            profiles.contains(&format!("- `{key}`")),
            "profiles.md lacks {key:?}"
        );
    }
    for (schema, args, code) in cases {
        let out = run_code(
            vari()
                .current_dir(dir.path())
                .env("VARI_CACHE_DIR", &cache)
                .args(&args),
            code,
        )
        .stdout;
        let json: serde_json::Value = serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("vari {}: {e}: {out}", args.join(" ")));
        assert_json_schema(schema, &json);
    }
}

/// Every schema under `docs/reference/schemas/` is a valid draft 2020-12 schema (against the
/// meta-schema), says what it describes, and is one the generated page links (so the binary
/// knows it: a `--json` option without a schema fails the unit test
/// `reference::json::tests::every_json_option_has_a_schema`).
#[test]
fn json_schemas_are_valid_and_listed() {
    let page = read(&reference_dir().join("json-schemas.md"));
    let mut names = Vec::new();
    for entry in std::fs::read_dir(reference_dir().join("schemas")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let stem = name
            .strip_suffix(".schema.json")
            .unwrap_or_else(|| panic!("docs/reference/schemas/{name}: not NAME.schema.json"));
        let schema = crate::common::json_schema(stem);
        if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
            panic!("docs/reference/schemas/{name} is not a valid schema: {e}");
        }
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        assert!(
            schema["description"].is_string(),
            "{name} has no description"
        );
        jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            page.contains(&format!("(schemas/{name})")),
            "json-schemas.md does not link schemas/{name}"
        );
        names.push(name);
    }
    assert!(names.len() >= 25, "{names:?}");
    // Each schema is checked against a real output somewhere in these tests (a case of
    // `json_outputs_match_their_schemas`, or an `assert_json_schema` call in the test of a
    // command that needs an index, a proxy or a Python); the sources are read without spaces.
    let mut tests = String::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    for binary in std::fs::read_dir(&dir).unwrap() {
        let binary = binary.unwrap().path();
        if !binary.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&binary).unwrap() {
            tests.extend(
                read(&entry.unwrap().path())
                    .chars()
                    .filter(|c| !c.is_whitespace()),
            );
        }
    }
    for name in &names {
        let stem = name.trim_end_matches(".schema.json");
        assert!(
            tests.contains(&format!("assert_json_schema(\"{stem}\"",))
                || tests.contains(&format!("(\"{stem}\",vec![")),
            "no test checks a real output against schemas/{name}"
        );
    }
}

/// A schema refuses a key it does not know and a missing required key (what makes the checks
/// above catch an output that drifts from its schema).
#[test]
fn json_schemas_refuse_unknown_and_missing_keys() {
    let schema = crate::common::json_schema("cache-info");
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let good = serde_json::json!({
        "cache_dir": "/c", "areas": [{"area": "http", "entries": 1, "bytes": 2}],
        "total": {"entries": 1, "bytes": 2},
    });
    assert!(validator.is_valid(&good));
    let mut extra = good.clone();
    extra["areas"][0]["new"] = serde_json::json!(1);
    assert!(!validator.is_valid(&extra));
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("total");
    assert!(!validator.is_valid(&missing));
}
