//! Which index when none is named: the one answer every command (`select`, `download`,
//! `proxy`, `install`'s fallback) and `vari config show` give.
//!
//! The first of the variables pip and uv read for their main index (`UV_DEFAULT_INDEX`,
//! `UV_INDEX_URL`, `PIP_INDEX_URL`) that is set, else PyPI (`https://pypi.org/simple/`), which
//! is what pip and uv use when nothing names an index. vari.toml's `index-url` and the command
//! line's `--index-url` go over it.

use vari_client::IndexUrl;

/// uv's variables for its default index, first set wins (`UV_INDEX_URL` is the older name).
/// `vari-install` reads uv's own sources with the same list.
pub const UV_DEFAULT_INDEX_VARIABLES: [&str; 2] = ["UV_DEFAULT_INDEX", "UV_INDEX_URL"];

/// pip's variable for its index.
pub const PIP_INDEX_VARIABLE: &str = "PIP_INDEX_URL";

/// The variables read for the main index, first set wins: uv's, then pip's.
pub const INDEX_VARIABLES: [&str; 3] = [
    UV_DEFAULT_INDEX_VARIABLES[0],
    UV_DEFAULT_INDEX_VARIABLES[1],
    PIP_INDEX_VARIABLE,
];

/// The index used when neither the command line nor vari.toml names one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultIndex {
    /// The index.
    pub url: IndexUrl,
    /// The variable that named it; `None` for PyPI, the built-in default.
    pub variable: Option<&'static str>,
}

/// A variable of [`INDEX_VARIABLES`] that is not an index URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{variable}: {message}")]
pub struct InvalidIndexVariable {
    /// The variable.
    pub variable: &'static str,
    /// Why its value is not an index URL.
    pub message: String,
}

/// The index when none is named, from the variables `lookup` finds (empty ones count as unset).
pub fn default_index(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<DefaultIndex, InvalidIndexVariable> {
    for variable in INDEX_VARIABLES {
        let Some(value) = lookup(variable).filter(|v| !v.trim().is_empty()) else {
            continue;
        };
        return IndexUrl::parse(value.trim())
            .map(|url| DefaultIndex {
                url,
                variable: Some(variable),
            })
            .map_err(|e| InvalidIndexVariable {
                variable,
                message: e.to_string(),
            });
    }
    Ok(DefaultIndex {
        url: IndexUrl::pypi(),
        variable: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pypi_unless_a_variable_names_an_index() {
        let none = default_index(|_| None).unwrap();
        assert_eq!(none.url.to_string(), "https://pypi.org/simple/");
        assert_eq!(none.variable, None);
        let uv = default_index(|v| match v {
            "UV_INDEX_URL" => Some("http://127.0.0.1:9/uv".to_owned()),
            "PIP_INDEX_URL" => Some("http://127.0.0.1:9/pip".to_owned()),
            "UV_DEFAULT_INDEX" => Some(" ".to_owned()),
            _ => None,
        })
        .unwrap();
        assert_eq!(uv.url.to_string(), "http://127.0.0.1:9/uv/");
        assert_eq!(uv.variable, Some("UV_INDEX_URL"));
        let err =
            default_index(|v| (v == "PIP_INDEX_URL").then(|| "ftp://x/".to_owned())).unwrap_err();
        assert!(err.to_string().starts_with("PIP_INDEX_URL: "), "{err}");
    }
}
