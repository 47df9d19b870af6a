//! Build families through the proxy (issue 35): plain pip and uv asking for `cupy` get the build
//! chosen for the target, `cupy-cuda12x`, with their own command line unchanged.
//!
//! The mechanism: a **selector wheel**. For a family whose builds are published under their own
//! names (`cupy-cuda13x`, `cupy-cuda12x`, …) and whose own name is not itself one of the builds
//! (`same-name` is `sdist-only`, `unrelated` or `absent`: `cupy`, `faiss`, `cudf`), the page of
//! the family's name lists one file: `cupy-{V}-py3-none-any.whl`, holding only its
//! `.dist-info`, whose METADATA requires the chosen build at its chosen version
//! (`Requires-Dist: cupy-cuda12x==14.2.0`). The installer installs the selector and, as its
//! dependency, the build, which is served as any other project. So:
//! - the environment holds exactly one copy of the package's files (the build's; the selector
//!   has none), and a package that depends on the build by its own name (`cudf-cu12` requires
//!   `cupy-cuda12x`) is satisfied by that same build;
//! - the choice is `vari_family::choose`'s, the same as `vari select cupy` makes;
//! - the selector is deterministic (fixed member order and timestamps, stored, not deflated):
//!   the same choice gives the same bytes and the same hash every time, so a lock can pin it.
//!
//! Why not list the build's own files under the family's name: installers check that a wheel's
//! name is the project's and would refuse `cupy_cuda12x-….whl` on `cupy`'s page. Why not only
//! rewrite the requirement: the installer, not vari, reads the user's command line and the
//! dependencies of other packages. A family whose name is itself a build (`onnxruntime`, the CPU
//! build) is served as listed: a selector would replace a real project. Families whose builds
//! live on indexes of their own need no selector (the build has the family's name: its page is
//! served from the chosen build's index, `pages::family_index_page`); nor do families by extra
//! (`jax` is itself the project: its own wheels are served with the chosen extra's requirements
//! made plain ones, [`crate::family_extra`]).

use std::io::Write;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use bytes::Bytes;
use sha2::{Digest, Sha256};
use vari_family::{Family, FamilyChoice, Layout, SameName};

/// Whether the proxy answers `family`'s page with a selector: every build published under its
/// own name on the proxy's sources, and the family's name not itself one of them.
pub fn serves_selector(family: &Family) -> bool {
    family.same_name != SameName::Build
        && family.builds.iter().all(|b| b.layout() == Layout::Name)
        && !family.builds.iter().any(|b| b.distribution == family.name)
}

/// A synthesized selector wheel.
#[derive(Debug, Clone)]
pub(crate) struct Selector {
    /// `cupy-14.2.0-py3-none-any.whl`.
    pub(crate) filename: String,
    /// The version (the chosen build's).
    pub(crate) version: String,
    /// The wheel's bytes.
    pub(crate) bytes: Bytes,
    /// Its METADATA text (served as PEP 658 metadata too).
    pub(crate) metadata: Bytes,
    /// The requirement it carries (`cupy-cuda12x==14.2.0`).
    pub(crate) requirement: String,
}

/// The selector of `choice` (a family's choice with a chosen build), or `None` when nothing was
/// chosen or the zip cannot be written.
pub(crate) fn selector(family: &Family, choice: &FamilyChoice) -> Option<Selector> {
    let chosen = choice.chosen.as_ref()?;
    let version = chosen.version.clone();
    let stem = family.name.replace('-', "_");
    let filename = format!("{stem}-{version}-py3-none-any.whl");
    let dist_info = format!("{stem}-{version}.dist-info");
    let requirement = format!("{}=={version}", chosen.requirement);
    let metadata = format!(
        "Metadata-Version: 2.1\nName: {}\nVersion: {version}\nSummary: Selects build {} of \
         {} ({}), chosen for this machine by vari's build-family catalog\nRequires-Dist: \
         {requirement}\n",
        family.name, chosen.build, family.name, chosen.requirement
    );
    let wheel = "Wheel-Version: 1.0\nGenerator: vari\nRoot-Is-Purelib: true\nTag: py3-none-any\n";
    let mut members: Vec<(String, Vec<u8>)> = vec![
        (
            format!("{dist_info}/METADATA"),
            metadata.clone().into_bytes(),
        ),
        (format!("{dist_info}/WHEEL"), wheel.as_bytes().to_vec()),
    ];
    let mut record: String = members
        .iter()
        .map(|(path, bytes)| {
            format!(
                "{path},sha256={},{}\n",
                URL_SAFE_NO_PAD.encode(Sha256::digest(bytes)),
                bytes.len()
            )
        })
        .collect();
    record.push_str(&format!("{dist_info}/RECORD,,\n"));
    members.push((format!("{dist_info}/RECORD"), record.into_bytes()));
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .last_modified_time(zip::DateTime::default())
        .unix_permissions(0o644);
    for (path, bytes) in &members {
        zip.start_file(path.as_str(), options).ok()?;
        zip.write_all(bytes).ok()?;
    }
    let bytes = zip.finish().ok()?.into_inner();
    Some(Selector {
        filename,
        version,
        bytes: Bytes::from(bytes),
        metadata: Bytes::from(metadata),
        requirement,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use vari_family::{builtin, Chosen};

    fn cupy_choice() -> FamilyChoice {
        FamilyChoice {
            family: "cupy".into(),
            chosen: Some(Chosen {
                build: "cu12".into(),
                requirement: "cupy-cuda12x".into(),
                distribution: "cupy-cuda12x".into(),
                version: "14.2.0".into(),
                null: false,
            }),
            builds: Vec::new(),
        }
    }

    #[test]
    fn the_selector_is_deterministic_and_requires_the_build() {
        let cupy = builtin().family("cupy").unwrap();
        let a = selector(cupy, &cupy_choice()).unwrap();
        let b = selector(cupy, &cupy_choice()).unwrap();
        assert_eq!(a.bytes, b.bytes, "the same choice gives the same bytes");
        assert_eq!(a.filename, "cupy-14.2.0-py3-none-any.whl");
        assert_eq!(a.requirement, "cupy-cuda12x==14.2.0");
        let text = String::from_utf8(a.metadata.to_vec()).unwrap();
        assert!(
            text.contains("Requires-Dist: cupy-cuda12x==14.2.0\n"),
            "{text}"
        );
        // A valid wheel: its RECORD matches its members.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(&a.filename);
        std::fs::write(&path, &a.bytes).unwrap();
        let names: Vec<String> = {
            let mut archive = zip::ZipArchive::new(std::fs::File::open(&path).unwrap()).unwrap();
            (0..archive.len())
                .map(|i| archive.by_index(i).unwrap().name().to_owned())
                .collect()
        };
        assert_eq!(
            names,
            [
                "cupy-14.2.0.dist-info/METADATA",
                "cupy-14.2.0.dist-info/WHEEL",
                "cupy-14.2.0.dist-info/RECORD"
            ]
        );
    }

    #[test]
    fn only_by_name_families_whose_name_is_no_build_get_a_selector() {
        let catalog = builtin();
        assert!(serves_selector(catalog.family("cupy").unwrap()));
        assert!(serves_selector(catalog.family("faiss").unwrap()));
        // onnxruntime is itself the CPU build; torch's builds live on their own indexes; jax's
        // differ by extra.
        for name in ["onnxruntime", "torch", "jax"] {
            assert!(!serves_selector(catalog.family(name).unwrap()), "{name}");
        }
    }
}
