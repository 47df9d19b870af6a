//! `validate` over HTTP ([`HttpSite`]): a built site served on 127.0.0.1 by a small static
//! server that honours range requests (as object stores and CDNs do), with and without
//! content negotiation of the JSON pages.

use std::path::PathBuf;

use vari_test_support::raw::unused_port;
use vari_test_support::site::{SiteOptions, StaticSite};

use vari_publish::{validate, HttpSite, Severity};

use crate::validate::{replace_variants_json, site_with_variants};

/// Serves `root` on 127.0.0.1 until the test process ends, honouring ranges. With `negotiate`,
/// a directory request that accepts PEP 691 JSON gets `index.json` (the crate docs' nginx and
/// Caddy rules); without, every directory gets `index.html` (a plain static host).
fn serve_site(root: PathBuf, negotiate: bool) -> (String, StaticSite) {
    let site = StaticSite::serve(
        &root,
        SiteOptions {
            negotiate,
            ranges: true,
        },
    );
    (format!("{}/", site.base), site)
}

#[test]
fn an_intact_site_validates_over_http_from_a_plain_static_host() {
    let (_input, site) = site_with_variants();
    let (url, counts) = serve_site(site.path().to_owned(), false);
    let report = validate(&HttpSite::new(&url).unwrap()).unwrap();
    assert_eq!((report.projects, report.files), (1, 5), "{report:?}");
    assert_eq!(report.problems, [], "{report:?}");
    // Without negotiation the pages came from index.json; each variant wheel's variant.json
    // was read with range requests.
    assert_eq!(counts.json_pages(), 0);
    assert!(counts.ranges() >= 3);
}

#[test]
fn a_variants_json_disagreeing_with_a_wheel_fails_over_http() {
    let (_input, site) = site_with_variants();
    let full = std::fs::read_to_string(site.path().join("files/pkg-1.0-variants.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&full).unwrap();
    doc["variants"]["v3"] = serde_json::json!({"x86_64": {"level": ["v1"]}});
    // The page's hash is fixed, so only the content disagrees with the wheel.
    replace_variants_json(site.path(), &serde_json::to_string_pretty(&doc).unwrap());
    let (url, counts) = serve_site(site.path().to_owned(), true);

    let report = validate(&HttpSite::new(&format!("{url}simple/")).unwrap()).unwrap();
    assert!(report.has_errors(), "{report:?}");
    let errors: Vec<_> = report
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .collect();
    assert_eq!(errors.len(), 1, "{report:?}");
    assert_eq!(errors[0].file, "pkg-1.0-py3-none-any-v3.whl");
    assert!(errors[0].message.contains("variants.v3"), "{errors:?}");
    assert!(counts.json_pages() >= 2);
    assert!(counts.ranges() >= 3);
}

#[test]
fn a_missing_wheel_and_an_unreachable_server_are_reported_over_http() {
    let (_input, site) = site_with_variants();
    std::fs::remove_file(site.path().join("files/pkg-1.0-py3-none-any-v2.whl")).unwrap();
    let (url, _counts) = serve_site(site.path().to_owned(), true);
    let report = validate(&HttpSite::new(&url).unwrap()).unwrap();
    let missing = report
        .problems
        .iter()
        .find(|p| p.file == "pkg-1.0-py3-none-any-v2.whl")
        .unwrap_or_else(|| panic!("{report:?}"));
    assert_eq!(missing.severity, Severity::Error);
    assert!(missing.message.contains("missing"), "{missing:?}");

    // A port nobody listens on: the project list cannot be fetched at all.
    let address = format!("127.0.0.1:{}", unused_port());
    let e = validate(&HttpSite::new(&format!("http://{address}/")).unwrap()).unwrap_err();
    assert!(e.to_string().contains(&address.to_string()), "{e}");
}
