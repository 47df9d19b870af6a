//! The mirror against a real upstream on 127.0.0.1 (`vari_test_support::fleet`), with the
//! targets' files given directly (the CLI's tests take them from the lock planner).

use std::collections::BTreeMap;
use std::path::Path;

use vari_client::{ClientSettings, IndexClient};
use vari_core::metadata::{read_json, SourceKind};
use vari_lock::{Artifact, Lock, Package};
use vari_test_support::fleet;
use vari_test_support::index::TestIndex;
use vari_test_support::wheels::sha256_hex;

use super::*;
use crate::{validate, LocalSite};

struct Upstream {
    server: TestIndex,
    _runtime: tokio::runtime::Runtime,
    dir: std::path::PathBuf,
}

fn upstream(dir: &Path) -> Upstream {
    let dir = fleet::upstream(&dir.join("upstream"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(TestIndex::start(&dir));
    Upstream {
        server,
        _runtime: runtime,
        dir,
    }
}

/// The lock entry of `name==version` listing the upstream's wheels starting with `prefix`.
fn entry(up: &Upstream, name: &str, prefix: &str) -> Package {
    let mut wheels = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(&up.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(prefix) && n.ends_with(".whl"))
        .collect();
    names.sort();
    for file in &names {
        let bytes = std::fs::read(up.dir.join(file)).unwrap();
        wheels.push(Artifact {
            name: Some(file.clone()),
            url: Some(format!("{}/files/{file}", up.server.base())),
            path: None,
            size: Some(bytes.len() as u64),
            upload_time: None,
            hashes: BTreeMap::from([("sha256".to_owned(), sha256_hex(&bytes))]),
        });
    }
    let variants_json =
        std::fs::read_to_string(up.dir.join(format!("{prefix}1.0.0-variants.json")))
            .ok()
            .map(|text| read_json(&text, SourceKind::IndexFile).unwrap());
    Package {
        name: name.to_owned(),
        version: Some("1.0.0".parse().unwrap()),
        marker: None,
        requires_python: None,
        dependencies: Vec::new(),
        index: None,
        sdist: None,
        wheels,
        variants_json,
        vari: None,
        other: BTreeMap::new(),
    }
}

fn lock(up: &Upstream) -> Lock {
    Lock {
        lock_version: "1.0".to_owned(),
        environments: Vec::new(),
        requires_python: None,
        extras: Vec::new(),
        dependency_groups: Vec::new(),
        default_groups: Vec::new(),
        created_by: "test".to_owned(),
        packages: vec![
            entry(up, "vari-demo", "vari_demo-"),
            entry(up, "vari-demo-cuda-runtime", "vari_demo_cuda_runtime-"),
        ],
        vari: None,
        other_tools: BTreeMap::new(),
    }
}

fn targets(a100: bool) -> Vec<TargetFiles> {
    let mut targets = vec![TargetFiles {
        name: "cpu".into(),
        class: None,
        files: vec![(0, "vari_demo-1.0.0-py3-none-any-null.whl".into())],
    }];
    if a100 {
        targets.push(TargetFiles {
            name: "a100".into(),
            class: None,
            files: vec![
                (0, "vari_demo-1.0.0-py3-none-any-cu128.whl".into()),
                (1, "vari_demo_cuda_runtime-1.0.0-py3-none-any.whl".into()),
            ],
        });
    }
    targets
}

fn run(
    lock: &Lock,
    targets: &[TargetFiles],
    dest: &Path,
    keep: bool,
) -> Result<MirrorReport, MirrorError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = std::sync::Arc::new(
        IndexClient::new(ClientSettings {
            cache_dir: None,
            retries: 0,
            ..ClientSettings::default()
        })
        .unwrap(),
    );
    let plan = MirrorPlan::new(lock, None, targets)?;
    mirror(
        &client,
        &runtime,
        &plan,
        &MirrorOptions {
            destination: Destination::Directory(dest.to_owned()),
            store: dest.join(store::STORE_DIR),
            keep,
            progress: &NoMirrorProgress,
            slim: None,
        },
    )
}

fn site_files(dest: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dest.join("files"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".whl"))
        .collect();
    names.sort();
    names
}

fn labels(dest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dest.join("files/vari_demo-1.0.0-variants.json")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["variants"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn mirrors_the_chosen_files_with_fallbacks_and_narrowed_metadata_incrementally() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let lock = lock(&up);
    let dest = dir.path().join("site");
    let report = run(&lock, &targets(true), &dest, false).unwrap();
    assert_eq!(
        site_files(&dest),
        [
            "vari_demo-1.0.0-py3-none-any-cu128.whl",
            "vari_demo-1.0.0-py3-none-any-null.whl",
            "vari_demo-1.0.0-py3-none-any.whl",
            "vari_demo_cuda_runtime-1.0.0-py3-none-any.whl",
        ]
    );
    assert_eq!(labels(&dest), ["cu128", "null"]);
    assert_eq!((report.files.0, report.every_variant.0), (4, 8));
    assert_eq!(report.downloaded.0, 4);
    assert!(validate(&LocalSite::new(&dest).unwrap())
        .unwrap()
        .problems
        .is_empty());

    up.server.clear_seen();
    let again = run(&lock, &targets(true), &dest, false).unwrap();
    assert_eq!(again.downloaded, (0, 0));
    assert!(up.server.seen().is_empty(), "{:?}", up.server.seen());

    let kept = run(&lock, &targets(false), &dest, true).unwrap();
    assert_eq!((kept.kept, kept.removed), (2, 0));
    assert_eq!(site_files(&dest).len(), 4);
    assert_eq!(labels(&dest), ["cu128", "null"]);
    let dropped = run(&lock, &targets(false), &dest, false).unwrap();
    assert_eq!(dropped.removed, 2);
    assert_eq!(site_files(&dest).len(), 2);
    assert_eq!(labels(&dest), ["null"]);
    assert!(validate(&LocalSite::new(&dest).unwrap())
        .unwrap()
        .problems
        .is_empty());
}

#[test]
fn a_file_that_does_not_match_the_lock_is_refused_and_nothing_is_published() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let lock = lock(&up);
    let dest = dir.path().join("site");
    run(&lock, &targets(false), &dest, false).unwrap();
    let tampered = "vari_demo-1.0.0-py3-none-any-cu128.whl";
    std::fs::write(up.dir.join(tampered), b"other bytes").unwrap();
    let Err(MirrorError::Files(failures)) = run(&lock, &targets(true), &dest, false) else {
        panic!("the tampered file is refused");
    };
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].filename, tampered);
    assert_eq!(
        failures[0].url,
        format!("{}/files/{tampered}", up.server.base())
    );
    assert!(
        failures[0].problem.starts_with("refused: its sha256 is "),
        "{failures:?}"
    );
    assert_eq!(
        site_files(&dest).len(),
        2,
        "the site is the last complete run's"
    );
    assert!(!dest
        .join(store::STORE_DIR)
        .join("files")
        .join(tampered)
        .exists());
    // The file that did arrive is kept for the next run, unpublished.
    assert!(dest
        .join(store::STORE_DIR)
        .join("files/vari_demo_cuda_runtime-1.0.0-py3-none-any.whl")
        .is_file());
}

#[test]
fn metadata_that_disagrees_with_the_lock_is_a_warning_naming_the_label() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let mut lock = lock(&up);
    let dest = dir.path().join("site");
    assert!(run(&lock, &targets(true), &dest, false)
        .unwrap()
        .warnings
        .is_empty());
    // The lock says cu128 needs CUDA 12.9; the wheels (and so the site) say 12.8.
    let text = r#"{"default-priorities": {"namespace": ["nvidia"]}, "variants": {"null": {},
        "cu128": {"nvidia": {"cuda_version_lower_bound": ["12.9"]}}}}"#;
    lock.packages[0].variants_json = Some(read_json(text, SourceKind::IndexFile).unwrap());
    let report = run(&lock, &targets(true), &dest, false).unwrap();
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert!(
        report.warnings[0]
            .contains("variants cu128 differ from the lock's variants-json for vari-demo==1.0.0"),
        "{:?}",
        report.warnings
    );
}

/// Tells a channel that the run is blocked, and on which lock.
struct Blocked(std::sync::Mutex<std::sync::mpsc::Sender<std::path::PathBuf>>);

impl MirrorProgress for Blocked {
    fn blocked(&self, lock: &Path) {
        let _ = self.0.lock().unwrap().send(lock.to_owned());
    }
}

/// Two runs with different stores on one destination took no turns and published over each
/// other. While another run holds the destination, a run with a store of its own waits for
/// it, says so, and completes once it is released.
#[test]
fn runs_with_different_stores_on_one_destination_take_turns() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let lock = lock(&up);
    let dest = dir.path().join("site");
    std::fs::create_dir_all(&dest).unwrap();
    let lock_file = dest.join(DESTINATION_LOCK_FILE);
    let held = vari_fs::lock::lock_exclusive(&lock_file, || panic!("nobody holds it yet")).unwrap();
    let (send, blocked) = std::sync::mpsc::channel();
    let (done_send, done) = std::sync::mpsc::channel();
    let other_store = dir.path().join("another-store");
    let run_dest = dest.clone();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let client = std::sync::Arc::new(
            IndexClient::new(ClientSettings {
                cache_dir: None,
                retries: 0,
                ..ClientSettings::default()
            })
            .unwrap(),
        );
        let plan = MirrorPlan::new(&lock, None, &targets(false)).unwrap();
        let progress = Blocked(std::sync::Mutex::new(send));
        let result = mirror(
            &client,
            &runtime,
            &plan,
            &MirrorOptions {
                destination: Destination::Directory(run_dest),
                store: other_store,
                keep: false,
                progress: &progress,
                slim: None,
            },
        );
        let _ = done_send.send(result.map(|_| ()).map_err(|e| e.to_string()));
    });
    // A generous guard, not a timing assertion: the run must report that it waits.
    let waited_on = blocked
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the second run waits for the destination");
    assert_eq!(waited_on, lock_file);
    assert!(
        !dest.join("simple").exists(),
        "nothing published while waiting"
    );
    drop(held);
    done.recv_timeout(std::time::Duration::from_secs(300))
        .expect("the run ends once the destination is free")
        .unwrap();
    assert!(!site_files(&dest).is_empty());
}
