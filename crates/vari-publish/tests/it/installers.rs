//! PEP 825's promise to existing installers, with the real pip and uv of the test venv: from a
//! site built here and served on 127.0.0.1, plain pip and uv ignore the variant wheels and
//! install the non-variant wheel. Served twice: by Python's static file server (HTML pages, as
//! any static host) and by a small server here that answers JSON requests with `index.json` (as
//! the nginx and Caddy rules in the crate docs do), so both page forms meet real clients.

use std::path::{Path, PathBuf};

use vari_publish::{build, BuildOptions};
use vari_test_support::installers::{install_into_target, Installed, Installer};
use vari_test_support::site::{PythonHttpServer, SiteOptions, StaticSite};

use crate::common::*;

/// A static server that, like the documented nginx and Caddy rules, answers a directory request
/// with `index.json` when the client accepts `application/vnd.pypi.simple.v1+json`, else with
/// `index.html`. Runs until the test process ends; counts the JSON pages it served.
fn negotiating_server(root: PathBuf) -> (String, StaticSite) {
    let site = StaticSite::serve(
        &root,
        SiteOptions {
            negotiate: true,
            ranges: false,
        },
    );
    (site.base.clone(), site)
}

/// An installer run: index URL, requirement.
type Install = fn(&str, &str) -> Installed;

/// `installer` installs `requirement` alone (`--no-deps`) from `index`; it must succeed.
fn install(installer: Installer, index: &str, requirement: &str) -> Installed {
    let installed = install_into_target(
        installer,
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        index,
        &["--no-deps".to_owned(), requirement.to_owned()],
        None,
    );
    installed.assert_success();
    installed
}

fn pip_install(index: &str, requirement: &str) -> Installed {
    install(Installer::NewestPip, index, requirement)
}

fn uv_install(index: &str, requirement: &str) -> Installed {
    install(Installer::Uv, index, requirement)
}

/// The fixture project: the plain wheel is installed, not one of the six variant wheels.
fn assert_plain_fixture_installed(installed: &Installed) {
    let files = installed.dist_info_files("test_package-0.dist-info");
    assert!(
        !files.contains(&"variant.json".to_owned()),
        "{files:?}\n{}",
        installed.output
    );
    let record =
        std::fs::read_to_string(installed.dir.path().join("test_package-0.dist-info/RECORD"))
            .unwrap();
    assert!(!record.contains("variant.json"), "{record}");
}

/// The generated project: `LABEL = ""` is the plain wheel's module.
fn assert_plain_generated_installed(installed: &Installed) {
    let module = installed.dir.path().join("fast_pkg/__init__.py");
    let text = std::fs::read_to_string(&module)
        .unwrap_or_else(|e| panic!("{} ({e}):\n{}", module.display(), installed.output));
    assert_eq!(text, "LABEL = \"\"\n", "{}", installed.output);
}

/// A site from the fixture wheels plus a generated project whose variants sort before its plain
/// wheel by file name.
fn site() -> tempfile::TempDir {
    let input = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture_wheels()).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, input.path().join(path.file_name().unwrap())).unwrap();
    }
    for level in ["v1", "v3", "v4"] {
        WheelSpec::x86_64("fast_pkg", "1.0", level).write(input.path());
    }
    WheelSpec::plain("fast_pkg", "1.0").write(input.path());
    let site = tempfile::tempdir().unwrap();
    build(&BuildOptions::new(input.path(), site.path())).unwrap();
    site
}

#[test]
fn pip_and_uv_install_the_plain_wheel_from_static_html_pages() {
    let site = site();
    let server = PythonHttpServer::start(site.path());
    let index = format!("{}/simple/", server.url);
    assert_plain_fixture_installed(&pip_install(&index, "test-package"));
    assert_plain_generated_installed(&pip_install(&index, "fast-pkg"));
    assert_plain_fixture_installed(&uv_install(&index, "test-package"));
    assert_plain_generated_installed(&uv_install(&index, "fast-pkg"));
}

#[test]
fn pip_and_uv_install_the_plain_wheel_from_json_pages() {
    let site = site();
    let (url, json_pages) = negotiating_server(site.path().to_owned());
    let index = format!("{url}/simple/");
    let installs: [(&str, Install); 2] = [("pip", pip_install), ("uv", uv_install)];
    for (installer, install) in installs {
        let before = json_pages.json_pages();
        assert_plain_fixture_installed(&install(&index, "test-package"));
        assert_plain_generated_installed(&install(&index, "fast-pkg"));
        assert!(
            json_pages.json_pages() > before,
            "{installer} did not ask for the JSON pages"
        );
    }
}
