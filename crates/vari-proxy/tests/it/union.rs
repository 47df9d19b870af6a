//! A union of targets served as one index (for `vari lock`'s one resolution): one wheel per
//! version and tag set, metadata stating what each target's own variant asks for, the
//! upstream's files, and what each target was shown.

use serde_json::Value;
use vari_proxy::{ProxySettings, UnionShown};

use crate::support::*;
use crate::wheels::*;

fn file<'p>(page: &'p Value, name: &str) -> &'p Value {
    page["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["filename"] == name)
        .unwrap_or_else(|| panic!("{name} is not on the page: {page}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_page_states_every_target_s_dependencies() {
    let (_dir, index) = upstream(&[torch_release]).await;
    let scratch = tempfile::tempdir().unwrap();
    let dirs: Vec<_> = ["cpu", "cu128", "cu13"]
        .iter()
        .map(|name| {
            let dir = scratch.path().join(name);
            std::fs::create_dir_all(&dir).unwrap();
            dir
        })
        .collect();
    let targets = vec![
        cpu_target(&dirs[0]),
        cuda_12_8_target(&dirs[1]),
        cuda_13_target(&dirs[2]),
    ];
    let single = ProxySettings::new(client(&[index.index_url()], &[]), targets[0].clone());
    let mut settings =
        ProxySettings::for_union(client(&[index.index_url()], &[]), targets).unwrap();
    settings.cache_dir = Some(scratch.path().join("cache"));
    // Its pages are no single target's: its URLs are its own.
    assert_ne!(
        vari_proxy::fingerprint_of(&settings),
        vari_proxy::fingerprint_of(&single)
    );
    let proxy = start(settings).await;
    let addr = proxy.local_addr();
    assert!(proxy
        .index_url()
        .path()
        .ends_with(&format!("{}/simple/", proxy.fingerprint())));
    let page = get_json(addr, &format!("{}torch/", proxy.index_url().path()))
        .await
        .json();
    let wheels: Vec<&str> = page["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["filename"].as_str())
        .filter(|name| name.ends_with(".whl"))
        .collect();
    assert_eq!(wheels, ["torch-2.10.0-py3-none-any.whl"]);
    let wheel = file(&page, "torch-2.10.0-py3-none-any.whl");
    let url = path_of(wheel["url"].as_str().unwrap());
    let metadata = request(addr, "GET", &format!("{url}.metadata"), &[]).await;
    assert_eq!(
        sha256_hex(&metadata.body),
        wheel["core-metadata"]["sha256"].as_str().unwrap()
    );
    let text = metadata.text();
    // The CPU build's, the CUDA 12.8 build's and the CUDA 13 build's, each once; no other
    // build's, no variant marker left.
    for line in [
        "Requires-Dist: filelock\n",
        "Requires-Dist: nvidia-cuda-runtime-cu12==12.8.90\n",
        "Requires-Dist: nvidia-cuda-runtime==13.0.96\n",
    ] {
        assert_eq!(text.matches(line).count(), 1, "{line}: {text}");
    }
    assert!(
        !text.contains("triton") && !text.contains("variant_"),
        "{text}"
    );
    // The file is the upstream's, not a rewritten copy: its listed hash is the upstream's.
    assert!(wheel["hashes"]["sha256"].is_string(), "{wheel}");
    let view = proxy.union_view("torch").await.unwrap();
    assert_eq!(view.len(), 1);
    assert_eq!(view[0].version, "2.10.0");
    let requires = |at: usize| match &view[0].shown[at] {
        UnionShown::Requires(entries) => entries.clone(),
        other => panic!("{other:?}"),
    };
    assert!(!requires(0).iter().any(|r| r.contains("nvidia")));
    assert!(requires(1)
        .iter()
        .any(|r| r.starts_with("nvidia-cuda-runtime-cu12")));
    assert!(requires(2)
        .iter()
        .any(|r| r.starts_with("nvidia-cuda-runtime==")));
    // A project without variants: every target sees the upstream's page; nothing to record.
    assert!(proxy.union_view("filelock").await.unwrap().is_empty());
    proxy.shutdown().await;
}

/// The METADATA of `markedpkg`'s wheel on the union page of `targets`, and the union's view.
async fn markedpkg_union(
    index: &vari_test_support::index::TestIndex,
    targets: Vec<vari_select::Target>,
    scratch: &std::path::Path,
) -> (String, Vec<UnionShown>) {
    let mut settings =
        ProxySettings::for_union(client(&[index.index_url()], &[]), targets).unwrap();
    settings.cache_dir = Some(scratch.join("cache"));
    let proxy = start(settings).await;
    let addr = proxy.local_addr();
    let page = get_json(addr, &format!("{}markedpkg/", proxy.index_url().path()))
        .await
        .json();
    let wheel = file(&page, "markedpkg-1.0-py3-none-any.whl");
    let url = path_of(wheel["url"].as_str().unwrap());
    let metadata = request(addr, "GET", &format!("{url}.metadata"), &[]).await;
    assert_eq!(
        sha256_hex(&metadata.body),
        wheel["core-metadata"]["sha256"].as_str().unwrap(),
        "{wheel}"
    );
    let view = proxy.union_view("markedpkg").await.unwrap();
    proxy.shutdown().await;
    (metadata.text(), view[0].shown.clone())
}

/// A non-variant wheel's variant markers are evaluated on a union page too (for a non-variant
/// wheel), beside another target's variant or alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_variant_wheel_s_variant_markers_are_evaluated_for_the_union() {
    let (_dir, index) = upstream(&[torch_release, markedpkg_release]).await;
    let scratch = tempfile::tempdir().unwrap();
    let dir = |name: &str| {
        let dir = scratch.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    };
    let targets = vec![cpu_target(&dir("cpu")), cuda_12_8_target(&dir("cu128"))];
    let (text, shown) = markedpkg_union(&index, targets, &dir("mixed")).await;
    for line in [
        "Requires-Dist: filelock\n",
        "Requires-Dist: nvidia-cuda-runtime-cu12==12.8.90\n",
    ] {
        assert_eq!(text.matches(line).count(), 1, "{line}: {text}");
    }
    assert!(!text.contains("variant_"), "{text}");
    assert_eq!(shown[0], UnionShown::Requires(vec!["filelock".into()]));

    // Two CPU targets: only non-variant wheels shown.
    let targets = vec![cpu_target(&dir("cpu-a")), cpu_target(&dir("cpu-b"))];
    let (text, shown) = markedpkg_union(&index, targets, &dir("plain")).await;
    assert!(text.contains("Requires-Dist: filelock\n"), "{text}");
    assert!(
        !text.contains("variant_") && !text.contains("nvidia"),
        "{text}"
    );
    assert_eq!(
        shown,
        [
            UnionShown::Requires(vec!["filelock".into()]),
            UnionShown::Requires(vec!["filelock".into()])
        ]
    );
}
