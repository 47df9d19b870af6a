//! The simple page parsers (PEP 503 HTML and PEP 691 JSON) on arbitrary text, as a remote
//! index would serve it: never panic, and whatever parses keeps the link rule (a remote page
//! yields http and https files only) and carries no credentials in its URLs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use url::Url;
use vari_client::{FileSource, Project, ProjectName};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(page) = Url::parse("https://example.com/simple/demo/") else {
        return;
    };
    let Ok(name) = ProjectName::new("demo") else {
        return;
    };
    for content_type in [
        "text/html",
        "application/vnd.pypi.simple.v1+json",
        "application/octet-stream",
    ] {
        let source = FileSource::Index(page.clone());
        let Ok(project) = Project::from_page(&name, &page, Some(content_type), text, source)
        else {
            continue;
        };
        let files = project
            .files
            .iter()
            .chain(project.variants_json.values().flatten());
        for file in files {
            assert!(
                matches!(file.url.scheme(), "http" | "https"),
                "a remote page led to {}",
                file.url
            );
            assert!(file.url.username().is_empty() && file.url.password().is_none());
        }
    }
});
