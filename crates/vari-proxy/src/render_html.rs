//! PEP 503 HTML pages, with PEP 592 `data-yanked`, `data-requires-python`, and PEP 658/714
//! metadata under both attribute names (older pip reads `data-dist-info-metadata`, newer
//! installers `data-core-metadata`).

use std::fmt::Write as _;

use html_escape::{encode_double_quoted_attribute, encode_text};

use crate::model::{api_version, Listed};

/// The strongest hash for the URL fragment (PEP 503 allows one).
fn fragment(file: &Listed) -> Option<(&str, &str)> {
    ["sha256", "sha512", "sha384", "sha224", "sha1", "md5"]
        .into_iter()
        .find_map(|algorithm| Some((algorithm, file.hashes.get(algorithm)?.as_str())))
        .or_else(|| {
            file.hashes
                .iter()
                .next()
                .map(|(a, d)| (a.as_str(), d.as_str()))
        })
}

/// The project page of `name` listing `files`.
pub(crate) fn project(name: &str, files: &[Listed]) -> Vec<u8> {
    let mut page = String::with_capacity(256 + files.len() * 200);
    let title = encode_text(name);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" \
         content=\"{}\">\n    <title>Links for {title}</title>\n  </head>\n  <body>\n    \
         <h1>Links for {title}</h1>\n",
        api_version(files)
    );
    for file in files {
        let mut href = file.href.clone();
        if let Some((algorithm, digest)) = fragment(file) {
            let _ = write!(href, "#{algorithm}={digest}");
        }
        let _ = write!(
            page,
            "    <a href=\"{}\"",
            encode_double_quoted_attribute(&href)
        );
        if let Some(requires) = &file.requires_python {
            let _ = write!(
                page,
                " data-requires-python=\"{}\"",
                encode_double_quoted_attribute(requires)
            );
        }
        if let Some(hashes) = &file.core_metadata {
            let value = hashes
                .iter()
                .find(|(a, _)| *a == "sha256")
                .or_else(|| hashes.iter().next())
                .map(|(a, d)| format!("{a}={d}"))
                .unwrap_or_else(|| "true".to_owned());
            let value = encode_double_quoted_attribute(&value);
            let _ = write!(
                page,
                " data-dist-info-metadata=\"{value}\" data-core-metadata=\"{value}\""
            );
        }
        if let Some(reason) = &file.yanked {
            let _ = write!(
                page,
                " data-yanked=\"{}\"",
                encode_double_quoted_attribute(reason.as_deref().unwrap_or(""))
            );
        }
        let _ = writeln!(page, ">{}</a><br />", encode_text(&file.filename));
    }
    page.push_str("  </body>\n</html>\n");
    page.into_bytes()
}

/// The root page linking each project's page (`normalised`, `shown as`), relative to the page,
/// so the links stay under the prefix the list was asked for under.
pub(crate) fn root<'a>(projects: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<u8> {
    let mut page = String::from(
        "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" \
         content=\"1.0\">\n    <title>Simple index</title>\n  </head>\n  <body>\n",
    );
    for (normalised, name) in projects {
        let _ = writeln!(
            page,
            "    <a href=\"{}/\">{}</a><br />",
            encode_double_quoted_attribute(normalised),
            encode_text(name)
        );
    }
    page.push_str("  </body>\n</html>\n");
    page.into_bytes()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn anchors_carry_every_attribute_escaped() {
        let files = vec![Listed {
            filename: "a-1.0-py3-none-any.whl".into(),
            href: "/files/a/k1/a-1.0-py3-none-any.whl".into(),
            hashes: [("sha256".to_owned(), "ab".to_owned())].into(),
            requires_python: Some(">=3.9,<4".into()),
            yanked: Some(Some("bad \"build\"".into())),
            size: Some(1),
            upload_time: None,
            core_metadata: Some([("sha256".to_owned(), "cd".to_owned())].into()),
        }];
        let page = String::from_utf8(project("a", &files)).unwrap();
        assert!(page.contains("content=\"1.1\""), "{page}");
        assert!(
            page.contains(
                "<a href=\"/files/a/k1/a-1.0-py3-none-any.whl#sha256=ab\" \
                 data-requires-python=\"&gt;=3.9,&lt;4\" data-dist-info-metadata=\"sha256=cd\" \
                 data-core-metadata=\"sha256=cd\" data-yanked=\"bad &quot;build&quot;\">\
                 a-1.0-py3-none-any.whl</a>"
            ),
            "{page}"
        );
    }

    #[test]
    fn unknown_hashes_and_metadata_without_hash() {
        let files = vec![Listed {
            filename: "a-1.0.tar.gz".into(),
            href: "/files/a/k/a-1.0.tar.gz".into(),
            hashes: BTreeMap::new(),
            requires_python: None,
            yanked: None,
            size: None,
            upload_time: None,
            core_metadata: Some(BTreeMap::new()),
        }];
        let page = String::from_utf8(project("a", &files)).unwrap();
        assert!(
            page.contains("<a href=\"/files/a/k/a-1.0.tar.gz\" data-dist-info-metadata=\"true\""),
            "{page}"
        );
        assert!(page.contains("content=\"1.0\""), "{page}");
    }

    #[test]
    fn root_links() {
        let page = String::from_utf8(root([("foo-bar", "Foo.Bar")].into_iter())).unwrap();
        assert!(page.contains("<a href=\"foo-bar/\">Foo.Bar</a>"), "{page}");
    }
}
