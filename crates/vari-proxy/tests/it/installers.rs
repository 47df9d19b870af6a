//! Real installers through the proxy: the pip this machine's Python bundles, the newest pip,
//! and uv install the variant chosen for the target (read back from the installed
//! `variant.json`) with the dependencies its variant markers give that target.

use crate::support::*;
use crate::wheels::*;

/// Every release of the tests on one upstream.
async fn everything() -> (tempfile::TempDir, TestIndex) {
    upstream(&[
        torch_release,
        fastpkg_release,
        plainpkg_release,
        corrupt_release,
    ])
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cpu_target_installs_the_null_variant_and_passes_the_rest_through() {
    let (_dir, index) = everything().await;
    let (proxy, _scratch) = proxy_over(&index, cpu_target).await;
    let url = proxy.index_url().to_string();
    for installer in INSTALLERS {
        let installed = install(
            installer,
            &url,
            &["torch", "fastpkg", "plainpkg", "corrupt==1.0"],
        )
        .await;
        installed.assert_installed(&[
            "corrupt-1.0",
            "fastpkg-1.0",
            "filelock-3.20.0",
            "plainpkg-2.0",
            "torch-2.10.0",
        ]);
        // torch: the null variant, rewritten, its CUDA/ROCm/XPU dependencies gone.
        assert_eq!(
            installed.label("torch-2.10.0.dist-info").as_deref(),
            Some("null")
        );
        let metadata =
            std::fs::read_to_string(installed.dir.path().join("torch-2.10.0.dist-info/METADATA"))
                .unwrap();
        assert!(
            !metadata.contains("variant_") && !metadata.contains("nvidia"),
            "{metadata}"
        );
        // fastpkg: no variant markers, the v3 build's own bytes (through a redirect).
        assert_eq!(
            installed.label("fastpkg-1.0.dist-info").as_deref(),
            Some("v3")
        );
        assert_eq!(
            installed.label("corrupt-1.0.dist-info").as_deref(),
            Some("v3")
        );
        assert_eq!(installed.label("plainpkg-2.0.dist-info"), None);

        // A corrupt variants.json: that version's non-variant wheel.
        let corrupt = install(installer, &url, &["corrupt"]).await;
        corrupt.assert_installed(&["corrupt-2.0"]);
        assert_eq!(corrupt.label("corrupt-2.0.dist-info"), None);
    }
    // fastpkg's chosen wheel has no variant markers: each installer followed the proxy's
    // redirect to the upstream file, named it after the link, and installed it.
    let redirected = index
        .seen()
        .iter()
        .filter(|s| s.path == "/files/fastpkg-1.0-py3-none-any-v3.whl" && s.range.is_none())
        .count();
    assert_eq!(redirected, INSTALLERS.len());
    let journal = proxy.journal();
    for (project, label) in [
        ("torch", Some("null")),
        ("fastpkg", Some("v3")),
        ("plainpkg", None),
    ] {
        let served = journal
            .iter()
            .find(|s| s.project == project && s.downloaded)
            .unwrap_or_else(|| panic!("{project} not downloaded: {journal:#?}"));
        assert_eq!(served.label.as_deref(), label, "{served:?}");
    }
    proxy.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cuda_target_from_override_variables_gets_cuda_12_8_and_its_runtime() {
    let (_dir, index) = everything().await;
    let (proxy, _scratch) = proxy_over(&index, cuda_12_8_target).await;
    let url = proxy.index_url().to_string();
    for installer in INSTALLERS {
        let installed = install(installer, &url, &["torch"]).await;
        installed.assert_installed(&[
            "filelock-3.20.0",
            "nvidia_cuda_runtime_cu12-12.8.90",
            "torch-2.10.0",
        ]);
        assert_eq!(
            installed.label("torch-2.10.0.dist-info").as_deref(),
            Some("cuda12.8")
        );
        let module =
            std::fs::read_to_string(installed.dir.path().join("torch/__init__.py")).unwrap();
        assert_eq!(module, "LABEL = \"cuda12.8\"\n");
    }
    proxy.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cuda_13_target_from_a_facts_profile_gets_cuda_13_and_its_runtime() {
    let (_dir, index) = everything().await;
    let (proxy, _scratch) = proxy_over(&index, cuda_13_target).await;
    let url = proxy.index_url().to_string();
    for installer in [Installer::MachinePip, Installer::Uv] {
        let installed = install(installer, &url, &["torch[opt-einsum]"]).await;
        installed.assert_installed(&[
            "filelock-3.20.0",
            "nvidia_cuda_runtime-13.0.96",
            "opt_einsum-3.4.0",
            "torch-2.10.0",
        ]);
        assert_eq!(
            installed.label("torch-2.10.0.dist-info").as_deref(),
            Some("cuda13.0")
        );
    }
    proxy.shutdown().await;
}

/// A non-variant wheel whose dependencies carry variant markers: the installers get its
/// markers evaluated for a non-variant wheel (`filelock`, no CUDA runtime) on a CPU, and the
/// CUDA build with its runtime on a CUDA machine.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_non_variant_wheel_with_variant_markers_installs_with_its_dependencies() {
    let (_dir, index) = upstream(&[torch_release, markedpkg_release]).await;
    let (proxy, _scratch) = proxy_over(&index, cpu_target).await;
    let url = proxy.index_url().to_string();
    for installer in INSTALLERS {
        let installed = install(installer, &url, &["markedpkg"]).await;
        installed.assert_installed(&["filelock-3.20.0", "markedpkg-1.0"]);
        assert_eq!(installed.label("markedpkg-1.0.dist-info"), None);
    }
    proxy.shutdown().await;
    let (proxy, _scratch) = proxy_over(&index, cuda_12_8_target).await;
    let url = proxy.index_url().to_string();
    let installed = install(Installer::Uv, &url, &["markedpkg"]).await;
    installed.assert_installed(&["markedpkg-1.0", "nvidia_cuda_runtime_cu12-12.8.90"]);
    assert_eq!(
        installed.label("markedpkg-1.0.dist-info").as_deref(),
        Some("cuda12.8")
    );
    proxy.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn installers_fail_when_the_upstream_is_down() {
    let (proxy, _scratch, _port) = proxy_over_a_closed_port(cpu_target).await;
    let url = proxy.index_url().to_string();
    // pip tells why a page could not be fetched only at its debug level; neither installer
    // needs to retry a 502 here.
    for (installer, extra) in [
        (Installer::NewestPip, &["-vv", "--retries", "0"][..]),
        (Installer::Uv, &[][..]),
    ] {
        let installed = install_with(installer, &url, &["plainpkg"], extra).await;
        assert!(!installed.success, "{}", installed.output);
        assert!(installed.output.contains("502"), "{}", installed.output);
    }
    proxy.shutdown().await;
}
