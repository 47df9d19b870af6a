//! PEP 503 HTML pages, with the PEP 658 / 714 and PEP 629 attributes.

use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};

use crate::site::{ProjectPage, API_VERSION};

fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" content=\"{API_VERSION}\">\n    <title>{}</title>\n  </head>\n  <body>\n",
        text(title)
    )
}

const TAIL: &str = "  </body>\n</html>\n";

/// The project list: one link per project, to `{project}/`.
pub(crate) fn root_html(projects: &[&str]) -> String {
    let mut out = head("Simple index");
    for name in projects {
        out.push_str(&format!(
            "    <a href=\"{}/\">{}</a><br>\n",
            attr(name),
            text(name)
        ));
    }
    out.push_str(TAIL);
    out
}

/// A project page: one link per file, the hash in the URL fragment.
pub(crate) fn project_html(page: &ProjectPage) -> String {
    let title = format!("Links for {}", page.name);
    let mut out = head(&title);
    out.push_str(&format!("    <h1>{}</h1>\n", text(&title)));
    for file in &page.files {
        let href = format!("{}#sha256={}", file.url, file.sha256);
        out.push_str(&format!("    <a href=\"{}\"", attr(&href)));
        if let Some(requires) = &file.requires_python {
            out.push_str(&format!(" data-requires-python=\"{}\"", attr(requires)));
        }
        if let Some(hash) = &file.core_metadata_sha256 {
            // PEP 714 renamed the attribute; the old name is kept for pip < 23.2.
            out.push_str(&format!(
                " data-dist-info-metadata=\"sha256={hash}\" data-core-metadata=\"sha256={hash}\""
            ));
        }
        out.push_str(&format!(">{}</a><br>\n", text(&file.filename)));
    }
    out.push_str(TAIL);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::FileLink;

    #[test]
    fn attributes_and_text_are_escaped() {
        let page = ProjectPage {
            name: "a".to_owned(),
            versions: vec!["1".to_owned()],
            files: vec![FileLink {
                filename: "a<b>.whl".to_owned(),
                url: "../../files/a\".whl".to_owned(),
                sha256: "00".to_owned(),
                size: 1,
                requires_python: Some(">=3.10,<4".to_owned()),
                core_metadata_sha256: Some("11".to_owned()),
            }],
        };
        let html = project_html(&page);
        assert!(
            html.contains("href=\"../../files/a&quot;.whl#sha256=00\""),
            "{html}"
        );
        assert!(
            html.contains("data-requires-python=\"&gt;=3.10,&lt;4\""),
            "{html}"
        );
        assert!(html.contains("data-core-metadata=\"sha256=11\""), "{html}");
        assert!(html.contains(">a&lt;b&gt;.whl</a>"), "{html}");
    }
}
