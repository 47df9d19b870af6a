//! Shared helpers for the end-to-end tests: they run the real `vari` binary.
// Each test binary, and each module in it, uses a different subset of the helpers.
#![allow(dead_code, unused_imports)]

use std::path::{Path, PathBuf};
use std::process::Command;

use vari_test_support::output::Filters;

mod peak;
pub(crate) use peak::measured;

/// The workspace test data directory (`testdata/` at the root).
pub(crate) use vari_test_support::paths::testdata as data;

pub(crate) use vari_test_support::binary::{run, Run};
pub(crate) use vari_test_support::paths::file_names as files_in;

/// A `vari` command with a clean, reproducible environment: no profile from the caller's
/// environment, no colour, no GPU override variables leaking in, a private detection cache.
pub(crate) fn vari() -> Command {
    vari_test_support::binary::clean_command(
        env!("CARGO_BIN_EXE_vari"),
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("vari-cache"),
    )
}

/// The profile under which variantlib's test plugin supports its wheels, as `dir/plugin.json`.
pub(crate) fn test_plugin_profile(dir: &Path) -> PathBuf {
    write_json(
        dir,
        "plugin.json",
        &serde_json::json!({
            "schema": "vari-profile/1",
            "namespaces": [{"namespace": "installable_plugin", "features": [
                {"name": "feat1", "values": ["val1c"]},
                {"name": "feat2", "values": ["val2b"]}
            ]}]
        }),
    )
}

/// A facts profile supporting x86-64 up to v3 on Linux x86_64, as `dir/v3.toml`.
pub(crate) fn v3_profile(dir: &Path) -> PathBuf {
    let path = dir.join("v3.toml");
    std::fs::write(
        &path,
        "[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\n[x86_64]\nlevel = 3\n",
    )
    .unwrap();
    path
}

/// The first line a spawned child (`vari proxy`: its URL line) writes on its piped stdout.
pub(crate) fn first_stdout_line(child: &mut std::process::Child) -> String {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.as_mut().expect("stdout is piped"))
        .read_line(&mut line)
        .expect("the child writes a line");
    line
}

/// The two URLs in `vari proxy`'s first line (`PIP_INDEX_URL=… UV_DEFAULT_INDEX=…`): pip's
/// alias and uv's URL that names the target.
pub(crate) fn proxy_urls(line: &str) -> (String, String) {
    let value = |name: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("no {name} in {line:?}"))
            .to_owned()
    };
    (value("PIP_INDEX_URL"), value("UV_DEFAULT_INDEX"))
}

/// Runs `vari ARGS…`.
pub(crate) fn vari_run<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    run(vari().args(args))
}

/// Reads a JSON file from the test data.
pub(crate) fn data_json(relative: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(data(relative)).expect("test data exists");
    serde_json::from_str(&text).expect("test data is JSON")
}

/// Writes `value` as JSON to `dir/name` and returns the path.
pub(crate) fn write_json(dir: &Path, name: &str, value: &serde_json::Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(value).unwrap()).unwrap();
    path
}

/// The plain fixture wheel with one member changed after RECORD was written: every hash but
/// that member's still matches.
pub(crate) fn tampered_wheel(dir: &Path) -> PathBuf {
    use std::io::{Read, Write};
    let good = data("wheels/test_package-0-py3-none-any.whl");
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&good).unwrap()).unwrap();
    let bad = dir.join("test_package-0-py3-none-any.whl");
    let mut out = zip::ZipWriter::new(std::fs::File::create(&bad).unwrap());
    for i in 0..zip.len() {
        let mut file = zip.by_index(i).unwrap();
        let name = file.name().to_owned();
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).unwrap();
        if name.ends_with(".py") {
            bytes.extend_from_slice(b"# tampered\n");
        }
        out.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        out.write_all(&bytes).unwrap();
    }
    out.finish().unwrap();
    bad
}

/// The Python of the test environment `scripts/test-env` makes (`.venv`, or `VARI_TEST_VENV`).
pub(crate) use vari_test_support::venv::python as test_python;

/// Asserts that a whole human output is `expected`, after the shared filters (ports on
/// 127.0.0.1, durations, vari's version) and `paths`, each replaced by its placeholder (give
/// the longest first). Where the wording matters a test states all of it: a changed, added or
/// dropped line fails.
#[track_caller]
pub(crate) fn assert_output(actual: &str, expected: &str, paths: &[(&Path, &str)]) {
    let filters = paths
        .iter()
        .fold(Filters::new(), |filters, (path, placeholder)| {
            filters.path(path, placeholder)
        });
    vari_test_support::output::assert_output(actual, expected, &filters);
}

/// Asserts a whole run, the default check of a command's human output: its exit status, and its
/// stdout and its stderr each exactly the expected text after the shared filters and `paths`
/// (as [`assert_output`]: temporary paths, ports on 127.0.0.1, durations, digests and vari's
/// version become placeholders). Every line is stated, so a changed, added or dropped one fails.
#[track_caller]
pub(crate) fn assert_run(
    run: &Run,
    code: i32,
    stdout: &str,
    stderr: &str,
    paths: &[(&Path, &str)],
) {
    assert_eq!(
        run.code, code,
        "exit status\n--- stdout\n{}\n--- stderr\n{}",
        run.stdout, run.stderr
    );
    assert_output(&run.stdout, stdout, paths);
    assert_output(&run.stderr, stderr, paths);
}

/// `command` run on a pseudo-terminal (util-linux `script`), its environment and directory
/// kept: what the terminal showed (stdout and stderr together) and the exit status. `None`
/// (with a note) without `script`, outside CI.
pub(crate) fn on_terminal(command: &std::process::Command) -> Option<(String, i32)> {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("script").is_file()));
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "script is missing (util-linux)"
        );
        eprintln!("skipped: no `script` (util-linux) for a pseudo-terminal");
        return None;
    }
    let quote = |s: &std::ffi::OsStr| format!("'{}'", s.to_string_lossy().replace('\'', r"'\''"));
    let mut line = quote(command.get_program());
    for arg in command.get_args() {
        line.push(' ');
        line.push_str(&quote(arg));
    }
    let mut script = std::process::Command::new("script");
    script.args(["-q", "-e", "-c", &line, "/dev/null"]);
    if let Some(dir) = command.get_current_dir() {
        script.current_dir(dir);
    }
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => script.env(key, value),
            None => script.env_remove(key),
        };
    }
    let output = script.stdin(std::process::Stdio::null()).output().unwrap();
    Some((
        String::from_utf8_lossy(&output.stdout).into_owned(),
        output.status.code().unwrap_or(-1),
    ))
}

/// The JSON Schema of a `--json` output: `docs/reference/schemas/NAME.schema.json`.
pub(crate) fn json_schema(name: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/reference/schemas")
        .join(format!("{name}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `json`, what a command printed with `--json`, is valid against the command's schema
/// (`docs/reference/schemas/NAME.schema.json`): no key the schema does not know, no required
/// key missing, every value of the type the schema gives.
pub(crate) fn assert_json_schema(name: &str, json: &serde_json::Value) {
    let schema = json_schema(name);
    let validator = jsonschema::draft202012::new(&schema)
        .unwrap_or_else(|e| panic!("docs/reference/schemas/{name}.schema.json: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(json)
        .map(|e| format!("at {}: {e}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the output does not match docs/reference/schemas/{name}.schema.json: {errors:#?}\n{json:#}"
    );
}
