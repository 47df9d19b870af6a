//! The one place the mirror turns its store into the site: `vari index build`'s builder, so a
//! mirror has exactly the pages of a built index (PEP 503, PEP 691, PEP 658, `*-variants.json`)
//! and its order of publishing, whatever the destination: files first, then project pages, the
//! project list last, and the files no longer published removed after that. A client that
//! reads during a run never sees a page pointing at a file not yet there, and a run killed at
//! any point leaves a site that links only files it has.
//!
//! A directory site hard-links the store's files; an object store gets them uploaded (only
//! those whose content it does not hold yet). The builder trusts the SHA-256 the store recorded
//! while downloading, so a file is hashed once, not again to be published.

use crate::build::{build_into, BuildOptions, Built, ClassView, NoProgress};
use crate::error::BuildError;
use crate::inputs::discover;
use crate::place::FilePlacement;
use crate::publish::{Destination, SiteStore};

use super::store::Store;

/// How the store's files reach a directory site.
const PLACEMENT: FilePlacement = FilePlacement::HardLink;

/// Opens `destination` for publishing (an object store is connected to and listed now).
pub(crate) fn open(destination: &Destination) -> Result<Box<dyn SiteStore>, BuildError> {
    destination.open(&PLACEMENT)
}

/// Publishes the distributions of `store` (and their `*-variants.json`) as the site in `site`,
/// opened from `destination` by [`open`], with each of `classes` (class name → its files) as
/// its own index `t/{class}/simple/`.
pub(crate) fn publish(
    store: &Store,
    site: &dyn SiteStore,
    destination: &Destination,
    classes: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Result<Built, BuildError> {
    let views: Vec<ClassView> = classes
        .iter()
        .map(|(name, files)| ClassView {
            name: name.clone(),
            files: files.clone(),
        })
        .collect();
    let options = BuildOptions {
        input: store.files_dir().to_owned(),
        destination: destination.clone(),
        placement: PLACEMENT,
        progress: &NoProgress,
    };
    build_into(
        &options,
        discover(store.files_dir())?,
        site,
        &store.known_hashes(),
        &views,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use vari_test_support::wheels::TestWheel;

    /// The SHA-256 the site's JSON page gives the one wheel of project `a`.
    fn published_sha256(site: &std::path::Path) -> String {
        let page: serde_json::Value =
            serde_json::from_slice(&std::fs::read(site.join("simple/a/index.json")).unwrap())
                .unwrap();
        page["files"][0]["hashes"]["sha256"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn the_hash_recorded_at_download_is_trusted_while_the_file_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("store");
        let mut store = Store::open(&root).unwrap();
        let name = "a-1.0-py3-none-any.whl";
        let bytes = std::fs::read(TestWheel::new(name).write(store.files_dir())).unwrap();
        let actual = vari_test_support::wheels::sha256_hex(&bytes);
        // A download's last write is in the past on any clock tick when it is recorded (a
        // file changed in the tick of its record is hashed again, see `vari_fs::stamp`).
        std::thread::sleep(std::time::Duration::from_millis(50));
        // What the download recorded stands for the file (here a made-up digest, to see that
        // it is what the site publishes: the file is not hashed again).
        let recorded = "ab".repeat(32);
        store.record(name, recorded.clone()).unwrap();
        let site_dir = dir.path().join("site");
        let destination = Destination::Directory(site_dir.clone());
        let site = open(&destination).unwrap();
        publish(&store, site.as_ref(), &destination, &Default::default()).unwrap();
        assert_eq!(published_sha256(&site_dir), recorded);

        // Rewritten since: its fingerprint no longer matches, so it is hashed.
        std::fs::remove_file(store.path(name)).unwrap();
        std::fs::write(store.path(name), &bytes).unwrap();
        // (A time no download gives a file, whatever the clock's granularity.)
        std::fs::File::options()
            .write(true)
            .open(store.path(name))
            .unwrap()
            .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1))
            .unwrap();
        let other_site = dir.path().join("other");
        let destination = Destination::Directory(other_site.clone());
        let site = open(&destination).unwrap();
        publish(&store, site.as_ref(), &destination, &Default::default()).unwrap();
        assert_eq!(published_sha256(&other_site), actual);
    }

    #[test]
    fn a_class_s_index_lists_only_its_files_linked_in_the_one_files_directory() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("store")).unwrap();
        for name in ["a-1.0-py3-none-any.whl", "a-2.0-py3-none-any.whl"] {
            TestWheel::new(name).write(store.files_dir());
            store.record(name, "cd".repeat(32)).unwrap();
        }
        TestWheel::new("b-1.0-py3-none-any.whl").write(store.files_dir());
        let site_dir = dir.path().join("site");
        let destination = Destination::Directory(site_dir.clone());
        let site = open(&destination).unwrap();
        let classes = std::collections::BTreeMap::from([(
            "cpu".to_owned(),
            std::collections::BTreeSet::from(["a-1.0-py3-none-any.whl".to_owned()]),
        )]);
        publish(&store, site.as_ref(), &destination, &classes).unwrap();
        let read = |path: &str| std::fs::read_to_string(site_dir.join(path)).unwrap();
        let page = read("t/cpu/simple/a/index.html");
        assert!(
            page.contains("href=\"../../../../files/a-1.0-py3-none-any.whl#sha256="),
            "{page}"
        );
        assert!(!page.contains("a-2.0"), "{page}");
        // The class's project list names only what it installs; the site's names everything.
        let root: serde_json::Value =
            serde_json::from_str(&read("t/cpu/simple/index.json")).unwrap();
        let names: Vec<&str> = root["projects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a"]);
        assert!(!site_dir.join("t/cpu/simple/b").exists());
        assert!(read("simple/a/index.html").contains("a-2.0"));
        // No distribution is stored twice: the class's pages link the site's `files/` (a
        // release without variants has no `*-variants.json` of its own either).
        assert!(!site_dir.join("t/cpu/files").exists());

        // A class no longer mirrored loses its index.
        let site = open(&destination).unwrap();
        publish(&store, site.as_ref(), &destination, &Default::default()).unwrap();
        assert!(!site_dir.join("t/cpu/simple/index.html").exists());
        assert!(site_dir.join("simple/index.html").exists());
    }

    #[test]
    fn the_sites_own_hard_link_leaves_the_recorded_hash_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("store")).unwrap();
        let name = "a-1.0-py3-none-any.whl";
        TestWheel::new(name).write(store.files_dir());
        std::thread::sleep(std::time::Duration::from_millis(50));
        // A made-up digest: `has` agrees with it only while the record vouches for the file.
        let recorded = "ab".repeat(32);
        store.record(name, recorded.clone()).unwrap();
        let destination = Destination::Directory(dir.path().join("site"));
        let site = open(&destination).unwrap();
        let built = publish(&store, site.as_ref(), &destination, &Default::default()).unwrap();
        assert_eq!(built.linked.iter().collect::<Vec<_>>(), [name]);
        store.follow_links(&built.linked);
        assert!(store.has(name, &recorded).unwrap(), "not hashed again");

        // Published again into the same site: already linked, nothing to follow.
        let again = publish(&store, site.as_ref(), &destination, &Default::default()).unwrap();
        assert!(again.linked.is_empty());
    }

    #[test]
    fn a_class_s_variants_json_lists_only_the_labels_its_wheels_carry() {
        use vari_test_support::wheels::level_variants;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("store")).unwrap();
        for label in ["v2", "v3"] {
            let json = level_variants(&[label]);
            TestWheel::new(&format!("a-1.0-py3-none-any-{label}.whl"))
                .variant_json(Some(&json))
                .write(store.files_dir());
        }
        TestWheel::new("a-1.0-py3-none-any.whl").write(store.files_dir());
        let site_dir = dir.path().join("site");
        let destination = Destination::Directory(site_dir.clone());
        let site = open(&destination).unwrap();
        let classes = std::collections::BTreeMap::from([(
            "old".to_owned(),
            std::collections::BTreeSet::from(["a-1.0-py3-none-any-v2.whl".to_owned()]),
        )]);
        publish(&store, site.as_ref(), &destination, &classes).unwrap();
        let read = |path: &str| std::fs::read_to_string(site_dir.join(path)).unwrap();
        let labels = |text: &str| -> Vec<String> {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            value["variants"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect()
        };
        assert_eq!(labels(&read("files/a-1.0-variants.json")), ["v2", "v3"]);
        let own = read("t/old/files/a-1.0-variants.json");
        assert_eq!(labels(&own), ["v2"]);
        // The class's page links its own, with that file's hash.
        let page: serde_json::Value =
            serde_json::from_str(&read("t/old/simple/a/index.json")).unwrap();
        let entry = page["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["filename"] == "a-1.0-variants.json")
            .unwrap();
        assert_eq!(entry["url"], "../../files/a-1.0-variants.json");
        assert_eq!(
            entry["hashes"]["sha256"],
            vari_test_support::wheels::sha256_hex(own.as_bytes())
        );

        // `vari index validate` checks the class's index like the root, naming the class.
        let local = crate::LocalSite::new(&site_dir).unwrap();
        assert_eq!(local.classes(), ["old"]);
        let options = crate::ValidateOptions::default();
        let clean = crate::validate_site(&local, &options).unwrap();
        assert!(!clean.has_errors(), "{:?}", clean.problems);
        std::fs::write(site_dir.join("t/old/files/a-1.0-variants.json"), b"{}").unwrap();
        let errors = |report: crate::ValidationReport| -> Vec<String> {
            report
                .problems
                .iter()
                .filter(|p| p.severity == crate::Severity::Error)
                .map(|p| format!("{}: {}", p.file, p.message))
                .collect()
        };
        let found = errors(crate::validate_site(&local, &options).unwrap());
        // The site's own pages and files are untouched, so nothing is said of them.
        assert!(
            !found.is_empty()
                && found.iter().all(|e| e.starts_with("a-1.0-variants.json: ")
                    && e.ends_with(" (linked by class old's index)")),
            "{found:?}"
        );
        std::fs::write(site_dir.join("t/old/simple/a/index.json"), b"not json").unwrap();
        let found = errors(crate::validate_site(&local, &options).unwrap());
        assert!(
            found
                .iter()
                .any(|e| e.starts_with("t/old/simple/a/index.json: ")),
            "{found:?}"
        );

        // A class no longer mirrored loses its `*-variants.json` with its pages.
        let site = open(&destination).unwrap();
        publish(&store, site.as_ref(), &destination, &Default::default()).unwrap();
        assert!(!site_dir.join("t/old").exists());
        assert!(local.classes().is_empty());
    }
}
