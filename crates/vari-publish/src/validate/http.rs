//! An index served over HTTP(S), read with the index client (`vari-client`).
//!
//! The client is async and [`SiteReader`] is not: [`validate`](crate::validate) fans the
//! projects out over rayon threads, and each blocks on its own request. The reader owns a small
//! multi-thread tokio runtime, whose `block_on` may be called from many threads at once, so the
//! checks stay plain synchronous code and the requests of several projects still overlap.
//! Making the checks async instead would split `validate` into two versions for one transport.

use url::Url;
use vari_client::{ClientError, ClientSettings, IndexClient, IndexUrl};
use vari_core::metadata::{read_json, SourceKind, VariantMetadata};

use super::reader::{FetchError, HtmlPage, SiteReader};
use super::ValidateError;

/// The PEP 691 JSON form, asked for by content negotiation.
const ACCEPT_JSON: &str = "application/vnd.pypi.simple.v1+json";

/// Reads an index over HTTP(S): the PEP 691 JSON pages by content negotiation (or, from a
/// static host that always answers with HTML, the `index.json` that [`crate::build`] writes
/// beside each `index.html`), file hashes computed while streaming, and each wheel's
/// `variant.json` with range requests.
///
/// Its methods block: use it outside an async runtime.
#[derive(Debug)]
pub struct HttpSite {
    /// The simple index root, ending in `/`.
    simple: Url,
    client: IndexClient,
    runtime: tokio::runtime::Runtime,
}

impl HttpSite {
    /// The index at `url`: either the simple index itself (a URL whose last path segment is
    /// `simple`) or the site holding it (`https://host/` for `https://host/simple/`).
    /// Credentials in the URL are sent to its host only.
    pub fn new(url: &str) -> Result<Self, ValidateError> {
        let http_error = |message: String| ValidateError::Http {
            url: url.to_owned(),
            message,
        };
        let mut parsed = Url::parse(url).map_err(|e| http_error(e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(http_error("not an http(s) URL".to_owned()));
        }
        let is_simple = parsed
            .path_segments()
            .and_then(|mut segments| segments.rfind(|s| !s.is_empty()))
            == Some("simple");
        if !parsed.path().ends_with('/') {
            let path = format!("{}/", parsed.path());
            parsed.set_path(&path);
        }
        if !is_simple {
            parsed = parsed
                .join("simple/")
                .map_err(|e| http_error(e.to_string()))?;
        }
        // Parsed as an index URL so that credentials move into the client's store.
        let index = IndexUrl::parse(parsed.as_str()).map_err(|e| http_error(e.to_string()))?;
        let simple = index.url().clone();
        let client = IndexClient::new(ClientSettings {
            indexes: vec![index],
            // A validator must see what the server serves now, not an earlier answer.
            cache_dir: None,
            ..ClientSettings::default()
        })
        .map_err(|e| http_error(e.to_string()))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| http_error(format!("cannot start the network runtime: {e}")))?;
        Ok(Self {
            simple,
            client,
            runtime,
        })
    }

    /// The simple index root this reader checks.
    pub fn simple_url(&self) -> &Url {
        &self.simple
    }

    /// A page's JSON and the URL its links resolve against: by negotiation, else the
    /// directory's `index.json`.
    fn page(&self, relative: &str) -> Result<Option<(Url, Vec<u8>)>, FetchError> {
        let directory = join(&self.simple, relative)?;
        let negotiated = self
            .runtime
            .block_on(self.client.fetch(&directory, ACCEPT_JSON))
            .map_err(failed(&directory))?;
        match negotiated {
            None => return Ok(None),
            Some(page) if is_json(page.content_type.as_deref()) => {
                return Ok(Some((page.url, page.body)))
            }
            Some(_) => {}
        }
        let file = join(&directory, "index.json")?;
        let fetched = self
            .runtime
            .block_on(self.client.fetch(&file, ACCEPT_JSON))
            .map_err(failed(&file))?;
        Ok(fetched.map(|page| (directory, page.body)))
    }
}

impl HttpSite {
    /// A page's HTML, as a client asking for HTML gets it: by negotiation, else the
    /// directory's `index.html`; not checked when the server answers with something else.
    fn html(&self, relative: &str) -> Result<HtmlPage, FetchError> {
        let directory = join(&self.simple, relative)?;
        let fetched = self
            .runtime
            .block_on(self.client.fetch(&directory, ACCEPT_HTML))
            .map_err(failed(&directory))?;
        Ok(match fetched {
            None => HtmlPage::Missing,
            Some(page) if is_html(page.content_type.as_deref()) => {
                HtmlPage::Found(page.url, page.body)
            }
            Some(_) => HtmlPage::NotChecked,
        })
    }
}

/// The PEP 503 HTML form.
const ACCEPT_HTML: &str = "text/html";

fn is_html(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|t| {
        let essence = t.split(';').next().unwrap_or_default().trim();
        essence.eq_ignore_ascii_case("text/html")
            || essence.eq_ignore_ascii_case("application/vnd.pypi.simple.v1+html")
    })
}

fn join(base: &Url, relative: &str) -> Result<Url, FetchError> {
    base.join(relative).map_err(|e| FetchError::Failed {
        url: base.to_string(),
        message: format!("{base}: cannot join `{relative}`: {e}"),
    })
}

fn is_json(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|t| {
        let essence = t.split(';').next().unwrap_or_default().trim();
        essence.eq_ignore_ascii_case(ACCEPT_JSON)
            || essence.eq_ignore_ascii_case("application/json")
    })
}

/// The client's message names the URL already.
fn failed(url: &Url) -> impl Fn(ClientError) -> FetchError + '_ {
    move |e| FetchError::Failed {
        url: url.to_string(),
        message: e.to_string(),
    }
}

/// A wheel's `variant.json` describes exactly one variant, the one its filename names.
fn check_label(filename: &str, member: &str, metadata: &VariantMetadata) -> Result<(), FetchError> {
    let label = vari_core::filename::WheelFilename::parse(filename)
        .ok()
        .and_then(|parsed| parsed.label);
    let labels: Vec<String> = metadata.variants.keys().map(ToString::to_string).collect();
    match (label, labels.as_slice()) {
        (Some(label), [only]) if label.as_str() == only => Ok(()),
        (label, _) => Err(FetchError::Failed {
            url: filename.to_owned(),
            message: format!(
                "{filename}: {member} describes [{}], but the filename names `{}`",
                labels.join(", "),
                label.map(|l| l.to_string()).unwrap_or_default()
            ),
        }),
    }
}

impl SiteReader for HttpSite {
    fn root_page(&self) -> Result<Option<Vec<u8>>, FetchError> {
        Ok(self.page("")?.map(|(_, body)| body))
    }

    fn project_page(&self, project: &str) -> Result<Option<(Url, Vec<u8>)>, FetchError> {
        self.page(&format!("{project}/"))
    }

    fn html_page(&self, project: Option<&str>) -> Result<HtmlPage, FetchError> {
        self.html(&project.map_or(String::new(), |p| format!("{p}/")))
    }

    fn fetch(&self, url: &Url) -> Result<Option<Vec<u8>>, FetchError> {
        let fetched = self
            .runtime
            .block_on(self.client.fetch(url, "*/*"))
            .map_err(failed(url))?;
        Ok(fetched.map(|f| f.body))
    }

    fn file_sha256(&self, url: &Url) -> Result<Option<String>, FetchError> {
        self.runtime
            .block_on(self.client.sha256(url))
            .map_err(failed(url))
    }

    fn wheel_variant(
        &self,
        url: &Url,
        filename: &str,
    ) -> Result<Option<VariantMetadata>, FetchError> {
        let wheel = vari_core::filename::WheelFilename::parse(filename).map_err(|e| {
            FetchError::Failed {
                url: url.to_string(),
                message: format!("{filename}: {e}"),
            }
        })?;
        let member =
            match self
                .runtime
                .block_on(self.client.wheel_member(url, &wheel, "variant.json"))
            {
                Ok(member) => member,
                Err(ClientError::Status {
                    status: 404 | 410, ..
                }) => return Ok(None),
                Err(e) => return Err(failed(url)(e)),
            };
        let Some((member, bytes)) = member else {
            return Err(FetchError::Failed {
                url: url.to_string(),
                message: format!("{filename}: no *.dist-info/variant.json in the wheel"),
            });
        };
        let text = String::from_utf8(bytes).map_err(|_| FetchError::Failed {
            url: url.to_string(),
            message: format!("{filename}: {member} is not UTF-8"),
        })?;
        let metadata = read_json(&text, SourceKind::WheelFile).map_err(|errors| {
            let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
            FetchError::Failed {
                url: url.to_string(),
                message: format!("{filename}: {member}: {}", listed.join("; ")),
            }
        })?;
        check_label(filename, &member, &metadata)?;
        Ok(Some(metadata))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simple_root_is_found_from_the_site_or_given_directly() {
        for (given, simple) in [
            ("http://127.0.0.1:1/", "http://127.0.0.1:1/simple/"),
            ("http://127.0.0.1:1/site", "http://127.0.0.1:1/site/simple/"),
            ("http://127.0.0.1:1/simple", "http://127.0.0.1:1/simple/"),
            (
                "http://127.0.0.1:1/a/simple/",
                "http://127.0.0.1:1/a/simple/",
            ),
        ] {
            let site = HttpSite::new(given).unwrap();
            assert_eq!(site.simple_url().as_str(), simple, "{given}");
        }
    }

    #[test]
    fn only_http_urls_are_sites() {
        let e = HttpSite::new("ftp://127.0.0.1/simple/").unwrap_err();
        assert!(e.to_string().contains("not an http(s) URL"), "{e}");
    }

    #[test]
    fn json_content_types() {
        assert!(is_json(Some("application/vnd.pypi.simple.v1+json")));
        assert!(is_json(Some("application/json; charset=utf-8")));
        assert!(!is_json(Some("text/html")));
        assert!(!is_json(None));
    }
}
