//! The catalog as typed data: families, their builds, and groups of families that take one line.
//!
//! Every value here has been validated by the reader ([`crate::read`]): names are PEP 503
//! normal forms, URLs are parsed and of an allowed scheme, properties are parsed, and each
//! family's rules (one null build at most, unique build names, a layout per build) hold.

use serde::Serialize;
use url::Url;
use vari_core::{Namespace, Property};

/// Where a catalog came from: the one shipped with vari, or a file the user named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// The built-in catalog ([`crate::builtin`]).
    BuiltIn,
    /// A user's catalog file (its path as given).
    File(String),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::BuiltIn => f.write_str("built-in"),
            Origin::File(path) => f.write_str(path),
        }
    }
}

/// What the family's user-facing name is on the default index (PyPI), apart from the family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SameName {
    /// The name is itself one of the builds (`onnxruntime`, `tensorflow`, `jax`: the CPU build;
    /// `torch`: PyPI's default build).
    Build,
    /// The name has source distributions only (`cupy`, `llama-cpp-python`).
    SdistOnly,
    /// The name belongs to an unrelated or abandoned upload (`faiss` 1.5.3).
    Unrelated,
    /// No project has the name.
    Absent,
}

impl SameName {
    /// The value as a catalog writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            SameName::Build => "build",
            SameName::SdistOnly => "sdist-only",
            SameName::Unrelated => "unrelated",
            SameName::Absent => "absent",
        }
    }

    /// Every value, in the order the schema documents them.
    pub const ALL: [SameName; 4] = [
        SameName::Build,
        SameName::SdistOnly,
        SameName::Unrelated,
        SameName::Absent,
    ];
}

/// Where a build's files are listed when not on the default index.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BuildSource {
    /// A simple index (PEP 503/691) that serves this build's distribution.
    Index(Url),
    /// A page of links (pip's `--find-links`) that lists this build's files.
    FindLinks(Url),
}

impl BuildSource {
    /// The URL.
    pub fn url(&self) -> &Url {
        match self {
            BuildSource::Index(url) | BuildSource::FindLinks(url) => url,
        }
    }
}

/// How a build is told apart from the family's other builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// Its own index or links page (same name, often a local version tag like `+cu128`).
    Index,
    /// Its own distribution name (`cupy-cuda12x`).
    Name,
    /// An extra of the family's project (`jax[cuda12]`).
    Extra,
}

impl Layout {
    /// The layout as the schema and the listings name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Index => "index",
            Layout::Name => "name",
            Layout::Extra => "extra",
        }
    }
}

/// One build of a family.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Build {
    /// The build's name within its family (`cu128`, `cpu`, `rocm6.4`): the variant label it is
    /// shown as, and the line group members agree on.
    pub name: String,
    /// The distribution it is published as (PEP 503 normal form).
    pub distribution: String,
    /// Its index or links page, when not the default index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<BuildSource>,
    /// The local version tag its versions carry (`cu128` for `2.9.1+cu128`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local: Option<String>,
    /// The extra that selects it (`cuda12` for `jax[cuda12]`), normalised.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<String>,
    /// The properties the target must support, in vari's vocabulary. For each feature, one of
    /// the listed values suffices (a build for several GPU architectures lists each).
    pub requires: Vec<Property>,
    /// Whether this is the family's CPU (null) build.
    pub null: bool,
    /// Whether the build's CUDA line is read from its own requirements (`nvidia-*-cu12`,
    /// `nvidia-*~=13.0`) rather than from `requires` alone, because the name does not say it.
    pub line_from_requirements: bool,
}

impl Build {
    /// How the build is told apart: its own source first, then its extra, else its name.
    pub fn layout(&self) -> Layout {
        if self.source.is_some() {
            Layout::Index
        } else if self.extra.is_some() {
            Layout::Extra
        } else {
            Layout::Name
        }
    }

    /// The requirement a user would write for this build alone (`jax[cuda12]`,
    /// `cupy-cuda12x`), without a version.
    pub fn requirement(&self) -> String {
        match &self.extra {
            Some(extra) => format!("{}[{extra}]", self.distribution),
            None => self.distribution.clone(),
        }
    }
}

/// One family: the name users ask for and its builds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Family {
    /// The user-facing name (PEP 503 normal form).
    pub name: String,
    /// One line on what it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Where the layout is documented (the catalog entry's citation).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub docs: Vec<String>,
    /// What the user-facing name is on the default index.
    pub same_name: SameName,
    /// Namespaces in preference order for ranking the builds (default: the order the builds
    /// first use them).
    pub namespaces: Vec<Namespace>,
    /// The builds, in the catalog's order.
    pub builds: Vec<Build>,
    /// Which catalog it came from.
    pub origin: Origin,
}

impl Family {
    /// The build named `name`, if the family has one.
    pub fn build(&self, name: &str) -> Option<&Build> {
        self.builds.iter().find(|b| b.name == name)
    }

    /// The CPU (null) build, if the family has one.
    pub fn null_build(&self) -> Option<&Build> {
        self.builds.iter().find(|b| b.null)
    }

    /// The distribution names of the builds, each once, in the builds' order.
    pub fn distributions(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for build in &self.builds {
            if !names.contains(&build.distribution.as_str()) {
                names.push(&build.distribution);
            }
        }
        names
    }

    /// The layouts its builds use, each once (`index`, `name`, `extra`).
    pub fn layouts(&self) -> Vec<Layout> {
        let mut layouts = Vec::new();
        for build in &self.builds {
            if !layouts.contains(&build.layout()) {
                layouts.push(build.layout());
            }
        }
        layouts
    }
}

/// Families whose builds link against each other and so must take the same line (the same
/// build name): torch, torchvision, torchaudio and xformers; vllm with torch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Group {
    /// The group's name.
    pub name: String,
    /// Its member families (normalised names).
    pub families: Vec<String>,
    /// Which catalog it came from.
    pub origin: Origin,
}

/// A catalog: families and groups, validated.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Catalog {
    /// The families, in the catalog's order.
    pub families: Vec<Family>,
    /// The groups.
    pub groups: Vec<Group>,
}

impl Catalog {
    /// The family named `name` (any spelling of it).
    pub fn family(&self, name: &str) -> Option<&Family> {
        let name = vari_core::project::normalize(name);
        self.families.iter().find(|f| f.name == name)
    }

    /// The family one of whose builds is published as `distribution` (any spelling), with
    /// that build's position.
    pub fn family_of_distribution(&self, distribution: &str) -> Option<&Family> {
        let name = vari_core::project::normalize(distribution);
        self.families
            .iter()
            .find(|f| f.builds.iter().any(|b| b.distribution == name))
    }

    /// The groups `family` belongs to.
    pub fn groups_of(&self, family: &str) -> impl Iterator<Item = &Group> {
        let name = vari_core::project::normalize(family);
        self.groups
            .iter()
            .filter(move |g| g.families.contains(&name))
    }
}
