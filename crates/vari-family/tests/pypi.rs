//! The built-in catalog against PyPI itself: a few of its by-name builds and what the family's
//! own name is there (`same-name`), read with vari's own index client. Metadata only (one simple
//! page per name, about fifteen in all); skipped with a message when PyPI cannot be reached.

use vari_client::{ClientError, ClientSettings, IndexClient, IndexUrl};
use vari_family::{builtin, SameName};

/// The names checked: builds published under their own names, and family names whose status on
/// PyPI the catalog states.
const BUILDS: [(&str, &str); 11] = [
    ("cupy", "cupy-cuda13x"),
    ("cupy", "cupy-cuda12x"),
    ("cupy", "cupy-cuda11x"),
    ("faiss", "faiss-gpu-cu12"),
    ("faiss", "faiss-cpu"),
    ("onnxruntime", "onnxruntime-gpu"),
    ("cudf", "cudf-cu13"),
    ("tensorrt", "tensorrt-cu13"),
    ("jax-cuda-plugin", "jax-cuda13-plugin"),
    ("nvidia-dali", "nvidia-dali-cuda130"),
    ("spconv", "spconv-cu126"),
];

const SAME_NAMES: [&str; 4] = ["cupy", "faiss", "cudf", "jax-cuda-plugin"];

enum Page {
    Files { wheels: usize, sdists: usize },
    Missing,
}

async fn page(client: &IndexClient, name: &str) -> Result<Page, ClientError> {
    match client.project(&name.parse().unwrap()).await {
        Ok(project) => {
            let wheels = project
                .files
                .iter()
                .filter(|f| f.filename.ends_with(".whl"))
                .count();
            Ok(Page::Files {
                wheels,
                sdists: project.files.len() - wheels,
            })
        }
        Err(ClientError::ProjectNotFound { .. }) => Ok(Page::Missing),
        Err(e) => Err(e),
    }
}

#[test]
fn builtin_names_are_what_pypi_has() {
    let cache = tempfile_dir();
    let settings = ClientSettings {
        indexes: vec![IndexUrl::parse("https://pypi.org/simple/").unwrap()],
        cache_dir: Some(cache.clone()),
        ..ClientSettings::default()
    };
    let client = IndexClient::new(settings).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // The first look-up decides whether PyPI can be reached at all.
        let first = match page(&client, BUILDS[0].1).await {
            Ok(page) => page,
            Err(e) => {
                eprintln!("skipped: PyPI cannot be reached ({e})");
                return;
            }
        };
        let mut pages = vec![first];
        for (_, name) in &BUILDS[1..] {
            pages.push(page(&client, name).await.unwrap());
        }
        for ((family, name), page) in BUILDS.iter().zip(&pages) {
            let f = builtin().family(family).unwrap();
            assert!(
                f.builds.iter().any(|b| b.distribution == *name),
                "{family} has no build {name}"
            );
            match page {
                Page::Files { wheels, .. } => {
                    // tensorrt-cu13 is published as sdists that fetch the libraries.
                    assert!(
                        *wheels > 0 || *name == "tensorrt-cu13",
                        "{name}: no wheels on PyPI"
                    )
                }
                Page::Missing => panic!("{name} is not on PyPI"),
            }
        }
        for family in SAME_NAMES {
            let expected = builtin().family(family).unwrap().same_name;
            let found = page(&client, family).await.unwrap();
            match (expected, found) {
                (SameName::SdistOnly, Page::Files { wheels: 0, sdists }) => assert!(sdists > 0),
                (SameName::Absent, Page::Missing) => {}
                // faiss 1.5.3: wheels of an unrelated upload.
                (SameName::Unrelated, Page::Files { .. }) => {}
                (expected, Page::Files { wheels, sdists }) => panic!(
                    "{family}: the catalog says {:?}, PyPI has {wheels} wheels and {sdists} sdists",
                    expected.as_str()
                ),
                (expected, Page::Missing) => panic!(
                    "{family}: the catalog says {:?}, PyPI has no such project",
                    expected.as_str()
                ),
            }
        }
    });
    let _ = std::fs::remove_dir_all(cache);
}

/// A private HTTP cache directory for this test run.
fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("vari-family-pypi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
