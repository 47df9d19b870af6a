//! Pages: what a project page lists for a target (renamed variant wheels, rewritten metadata
//! and copies, pass-through projects, corrupt variant metadata, hidden versions), content
//! negotiation and redirects, the project list, an upstream that is down, and the loopback
//! rule.

use std::net::SocketAddr;
use std::path::Path;

use serde_json::Value;
use vari_proxy::ProxyError;

use crate::support::*;
use crate::wheels::*;

/// Writes `{wheel}.metadata` next to each wheel of `dir` whose name starts with `prefix`, and
/// advertises it (PEP 714 spelling) on the test index.
fn serve_pep_658(dir: &Path, index: &TestIndex, prefix: &str) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.starts_with(prefix) && name.ends_with(".whl") {
            let bytes = std::fs::read(dir.join(&name)).unwrap();
            std::fs::write(dir.join(format!("{name}.metadata")), metadata_of(&bytes)).unwrap();
            index.attrs(
                &name,
                FileAttrs {
                    core_metadata: Some(MetadataSpelling::Core),
                    ..FileAttrs::default()
                },
            );
        }
    }
}

/// The files of a JSON page by shown name.
fn files(page: &Value) -> Vec<&Value> {
    page["files"].as_array().unwrap().iter().collect()
}

fn file<'p>(page: &'p Value, name: &str) -> &'p Value {
    files(page)
        .into_iter()
        .find(|f| f["filename"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {page}"))
}

fn names(page: &Value) -> Vec<String> {
    let mut names: Vec<String> = files(page)
        .iter()
        .map(|f| f["filename"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cuda_target_sees_torch_renamed_with_its_markers_evaluated() {
    let (dir, index) = upstream(&[torch_release]).await;
    serve_pep_658(dir.path(), &index, "torch-");
    let (proxy, _scratch) = proxy_over(&index, cuda_12_8_target).await;
    let addr = proxy.local_addr();

    let page = get_json(addr, "/simple/torch/").await;
    assert_eq!(page.status, 200, "{}", page.text());
    assert_eq!(
        page.header("content-type"),
        Some("application/vnd.pypi.simple.v1+json")
    );
    let json = page.json();
    // One wheel (the tag set's best variant, without its label), the sdist; no variants.json.
    assert_eq!(
        names(&json),
        ["torch-2.10.0-py3-none-any.whl", "torch-2.10.0.tar.gz"]
    );
    let wheel = file(&json, "torch-2.10.0-py3-none-any.whl");
    // The rewritten copy is not built yet: no hash rather than a wrong one.
    assert_eq!(wheel["hashes"], serde_json::json!({}), "{wheel}");
    let advertised = wheel["core-metadata"]["sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(wheel["dist-info-metadata"]["sha256"], advertised.as_str());
    let url = path_of(wheel["url"].as_str().unwrap());

    // PEP 658 metadata, rewritten for the target.
    let metadata = request(addr, "GET", &format!("{url}.metadata"), &[]).await;
    assert_eq!(metadata.status, 200);
    assert_eq!(sha256_hex(&metadata.body), advertised);
    let text = metadata.text();
    assert!(text.contains("Requires-Dist: filelock\n"), "{text}");
    assert!(
        text.contains("Requires-Dist: nvidia-cuda-runtime-cu12==12.8.90\n"),
        "{text}"
    );
    assert!(text.contains("extra == \"opt-einsum\""), "{text}");
    for gone in ["variant_", "nvidia-cuda-runtime==", "triton"] {
        assert!(!text.contains(gone), "{gone} in {text}");
    }

    // The wheel: the cuda12.8 build with exactly that METADATA.
    let downloaded = request(addr, "GET", &url, &[]).await;
    assert_eq!(downloaded.status, 200);
    assert_eq!(metadata_of(&downloaded.body), text);
    let upstream_bytes =
        std::fs::read(dir.path().join("torch-2.10.0-py3-none-any-cuda12.8.whl")).unwrap();
    assert_ne!(downloaded.body, upstream_bytes);

    // Now the page lists the copy's hash and size, in both formats.
    let json = get_json(addr, "/simple/torch/").await.json();
    let wheel = file(&json, "torch-2.10.0-py3-none-any.whl");
    assert_eq!(
        wheel["hashes"]["sha256"],
        sha256_hex(&downloaded.body).as_str()
    );
    assert_eq!(wheel["size"], downloaded.body.len());
    let html = request(addr, "GET", "/simple/torch/", &[]).await;
    assert_eq!(
        html.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let html = html.text();
    assert!(
        html.contains(&format!(
            "{url}#sha256={}\" data-dist-info-metadata=\"sha256={advertised}\" \
             data-core-metadata=\"sha256={advertised}\">torch-2.10.0-py3-none-any.whl</a>",
            sha256_hex(&downloaded.body)
        )),
        "{html}"
    );
    assert!(!html.contains("cuda12.8"), "{html}");

    let journal = proxy.journal();
    let torch = journal
        .iter()
        .find(|s| s.project == "torch")
        .unwrap_or_else(|| panic!("{journal:?}"));
    assert_eq!(torch.label.as_deref(), Some("cuda12.8"));
    assert_eq!(torch.original, "torch-2.10.0-py3-none-any-cuda12.8.whl");
    assert_eq!(torch.shown_as, "torch-2.10.0-py3-none-any.whl");
    assert!(torch.downloaded);
    assert!(
        torch.why.starts_with("best supported variant"),
        "{}",
        torch.why
    );
    assert_logged(
        "torch 2.10.0 py3-none-any: serving label cuda12.8 as torch-2.10.0-py3-none-any.whl \
         (best supported variant for this target, first of 3 that fit; its variant markers \
         evaluated for this target)",
    );
    proxy.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cpu_target_gets_the_null_variant_and_metadata_read_from_the_wheel() {
    // No PEP 658 upstream: the proxy reads METADATA with range requests and serves it itself.
    let (_dir, index) = upstream(&[torch_release]).await;
    let (proxy, scratch) = proxy_over(&index, cpu_target).await;
    let addr = proxy.local_addr();
    let json = get_json(addr, "/simple/torch/").await.json();
    let wheel = file(&json, "torch-2.10.0-py3-none-any.whl");
    let url = path_of(wheel["url"].as_str().unwrap());
    let metadata = request(addr, "GET", &format!("{url}.metadata"), &[]).await;
    assert_eq!(
        sha256_hex(&metadata.body),
        wheel["core-metadata"]["sha256"].as_str().unwrap()
    );
    let text = metadata.text();
    assert!(text.contains("Requires-Dist: filelock\n"), "{text}");
    assert!(
        !text.contains("nvidia") && !text.contains("variant_"),
        "{text}"
    );
    // Reading the metadata started building the copy: the page lists its hash before anyone
    // downloads the wheel.
    let mut listed = None;
    for _ in 0..400 {
        let page = get_json(addr, "/simple/torch/").await.json();
        let hashes = &file(&page, "torch-2.10.0-py3-none-any.whl")["hashes"];
        if let Some(hash) = hashes["sha256"].as_str() {
            listed = Some(hash.to_owned());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    let listed = listed.expect("the copy was never built ahead");
    assert!(proxy.journal().iter().all(|s| !s.downloaded));
    let downloaded = request(addr, "GET", &url, &[]).await;
    assert_eq!(sha256_hex(&downloaded.body), listed);
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(&downloaded.body)).unwrap();
    let mut variant = String::new();
    std::io::Read::read_to_string(
        &mut archive
            .by_name("torch-2.10.0.dist-info/variant.json")
            .unwrap(),
        &mut variant,
    )
    .unwrap();
    assert!(variant.contains("\"null\""), "{variant}");
    let served = proxy.journal();
    assert_eq!(served[0].label.as_deref(), Some("null"), "{served:?}");
    // The fallback says what the other variants need and why this target lacks it.
    let profile = scratch
        .path()
        .join("cpu-profile.json")
        .display()
        .to_string();
    assert!(
        served[0]
            .why
            .starts_with("the null variant: builds for NVIDIA GPUs (")
            && served[0]
                .why
                .contains(&format!("which profile {profile} does not list")),
        "{served:?}"
    );
    assert_logged(
        "serving label null as torch-2.10.0-py3-none-any.whl (the null variant: builds for \
         NVIDIA GPUs (",
    );
    proxy.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_are_negotiated_and_names_redirected() {
    let (_dir, index) = upstream(&[plainpkg_release]).await;
    let (proxy, _scratch) = proxy_over(&index, cpu_target).await;
    let addr = proxy.local_addr();
    let content_type = |reply: &Reply| reply.header("content-type").unwrap_or_default().to_owned();

    let html = request(addr, "GET", "/simple/plainpkg/", &[]).await;
    assert_eq!(content_type(&html), "text/html; charset=utf-8");
    assert_eq!(html.header("vary"), Some("Accept"));
    for (accept, expected) in [
        ("*/*", "text/html; charset=utf-8"),
        (
            "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01",
            "application/vnd.pypi.simple.v1+json",
        ),
        (
            "text/html;q=0.5, application/vnd.pypi.simple.v1+html;q=0.9",
            "application/vnd.pypi.simple.v1+html",
        ),
    ] {
        let reply = request(addr, "GET", "/simple/plainpkg/", &[("Accept", accept)]).await;
        assert_eq!(reply.status, 200);
        assert_eq!(content_type(&reply), expected, "{accept}");
    }
    let refused = request(
        addr,
        "GET",
        "/simple/plainpkg/",
        &[("Accept", "application/xml")],
    )
    .await;
    assert_eq!(refused.status, 406);

    for (path, location) in [
        ("/simple/PlainPkg/", "/simple/plainpkg/"),
        ("/simple/plainpkg", "/simple/plainpkg/"),
        ("/simple/Plain_Pkg/", "/simple/plain-pkg/"),
        ("/simple", "/simple/"),
    ] {
        let reply = request(addr, "GET", path, &[]).await;
        assert_eq!(
            (reply.status, reply.header("location")),
            (301, Some(location)),
            "{path}"
        );
    }

    // HEAD, entity tags, methods, unknown paths and projects.
    let head = request(addr, "HEAD", "/simple/plainpkg/", &[]).await;
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_eq!(
        head.header("content-length").unwrap(),
        html.body.len().to_string()
    );
    let etag = html.header("etag").unwrap().to_owned();
    let again = request(
        addr,
        "GET",
        "/simple/plainpkg/",
        &[("If-None-Match", &etag)],
    )
    .await;
    assert_eq!(again.status, 304);
    assert_eq!(
        request(addr, "POST", "/simple/plainpkg/", &[]).await.status,
        405
    );
    assert_eq!(request(addr, "GET", "/elsewhere", &[]).await.status, 404);
    let missing = request(addr, "GET", "/simple/nothing-here/", &[]).await;
    assert_eq!(missing.status, 404);
    assert!(
        missing.text().contains("nothing-here"),
        "{}",
        missing.text()
    );
    proxy.shutdown().await;
}

/// The `max-age` a page answer carries (`None` when it says `no-cache`).
fn max_age(reply: &Reply) -> Option<u64> {
    let value = reply.header("cache-control").unwrap();
    match value.strip_prefix("max-age=") {
        Some(secs) => Some(secs.parse().unwrap()),
        None => {
            assert_eq!(value, "no-cache");
            None
        }
    }
}

/// Under the target's own URL a page may be kept as long as both the upstream (its
/// `Cache-Control`) and the proxy's page TTL allow, 304s included, so an installer with a
/// warm cache need not ask again; under the `/simple/` alias, which another target's proxy
/// may answer on the same address, it is always revalidated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn target_pages_stay_fresh_as_long_as_upstream_and_proxy_allow() {
    for (upstream_says, longest) in [
        (Some("max-age=30"), Some(30)),
        (
            Some("max-age=86400"),
            Some(vari_proxy::DEFAULT_PAGE_TTL.as_secs()),
        ),
        (Some("no-cache"), None),
        (None, None),
    ] {
        let (_dir, index) = upstream(&[plainpkg_release]).await;
        index.set(|k| k.cache_control = upstream_says.map(str::to_owned));
        let (proxy, _scratch) = proxy_over(&index, cpu_target).await;
        let addr = proxy.local_addr();
        let page = format!("{}plainpkg/", proxy.index_url().path());

        let first = request(addr, "GET", &page, &[]).await;
        assert_eq!(first.status, 200, "{upstream_says:?}");
        let age = max_age(&first);
        match longest {
            Some(longest) => assert!(
                age.is_some_and(|age| (1..=longest).contains(&age)),
                "{upstream_says:?}: {age:?}"
            ),
            None => assert_eq!(age, None, "{upstream_says:?}"),
        }
        let etag = first.header("etag").unwrap().to_owned();
        let again = request(addr, "GET", &page, &[("If-None-Match", &etag)]).await;
        assert_eq!(again.status, 304);
        assert_eq!(
            max_age(&again).is_some(),
            longest.is_some(),
            "{upstream_says:?}"
        );

        let alias = request(addr, "GET", "/simple/plainpkg/", &[]).await;
        assert_eq!(alias.status, 200);
        assert_eq!(max_age(&alias), None, "the alias is revalidated");
        proxy.shutdown().await;
    }
}

/// A new proxy (a new `vari install`) over the same cache builds a page from the upstream's
/// page kept in vari's HTTP cache while the upstream allows, without asking it again; one the
/// upstream said to revalidate is asked for again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_proxy_reads_a_fresh_upstream_page_from_the_http_cache() {
    let (_dir, index) = upstream(&[plainpkg_release]).await;
    let cache = tempfile::tempdir().unwrap();
    let upstream_page = "/simple/plainpkg/";
    for (upstream_says, asked) in [
        ("no-cache", 1),
        ("no-cache", 2),
        ("max-age=300", 3),
        ("max-age=300", 3),
    ] {
        index.set(|k| k.cache_control = Some(upstream_says.to_owned()));
        let mut settings = client(&[index.index_url()], &[]);
        settings.cache_dir = Some(cache.path().join("http"));
        let (proxy, _scratch) = proxy_with(settings, cpu_target).await;
        let reply = get_json(proxy.local_addr(), "/simple/plainpkg/").await;
        assert_eq!(reply.status, 200);
        assert_eq!(
            upstream_requests(&index, upstream_page),
            asked,
            "{upstream_says}"
        );
        proxy.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn projects_without_variants_pass_through() {
    let (dir, index) = upstream(&[plainpkg_release]).await;
    let (proxy, _scratch) = proxy_over(&index, cpu_target).await;
    let addr = proxy.local_addr();
    let json = get_json(addr, "/simple/plainpkg/").await.json();
    assert_eq!(
        names(&json),
        [
            "plainpkg-1.0-py3-none-any.whl",
            "plainpkg-2.0-py3-none-any.whl",
            "plainpkg-2.0.tar.gz"
        ]
    );
    assert_eq!(json["versions"], serde_json::json!(["1.0", "2.0"]));
    assert_eq!(json["meta"]["api-version"], "1.1");
    for name in names(&json) {
        let listed = file(&json, &name);
        let bytes = std::fs::read(dir.path().join(&name)).unwrap();
        assert_eq!(
            listed["hashes"]["sha256"],
            sha256_hex(&bytes).as_str(),
            "{name}"
        );
        assert_eq!(listed["size"], bytes.len());
        // Files of an upstream without credentials: a redirect to the upstream file.
        let url = path_of(listed["url"].as_str().unwrap());
        let reply = request(addr, "GET", &url, &[]).await;
        assert_eq!(reply.status, 302);
        assert_eq!(
            reply.header("location").unwrap(),
            format!("{}/files/{name}", index.base())
        );
    }
    let journal = proxy.journal();
    assert_eq!(journal.len(), 3, "{journal:?}");
    assert!(journal
        .iter()
        .all(|s| s.downloaded && s.label.is_none() && s.why == "the project has no variants"));
    proxy.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_corrupt_variants_json_degrades_that_version_only() {
    let (_dir, index) = upstream(&[corrupt_release, fastpkg_release, torch_release]).await;
    let (proxy, _scratch) = proxy_over(&index, cpu_target).await;
    let addr = proxy.local_addr();
    let json = get_json(addr, "/simple/corrupt/").await.json();
    assert_eq!(
        names(&json),
        [
            "corrupt-1.0-py3-none-any.whl",
            "corrupt-2.0-py3-none-any.whl"
        ]
    );
    let target_of = |name: &str| path_of(file(&json, name)["url"].as_str().unwrap());
    // 1.0: the v3 variant under the plain name (no variant markers: the upstream bytes).
    let one = request(addr, "GET", &target_of("corrupt-1.0-py3-none-any.whl"), &[]).await;
    assert_eq!(one.status, 302);
    assert!(
        one.header("location")
            .unwrap()
            .ends_with("/files/corrupt-1.0-py3-none-any-v3.whl"),
        "{one:?}"
    );
    // 2.0: the non-variant wheel as it is.
    let two = request(addr, "GET", &target_of("corrupt-2.0-py3-none-any.whl"), &[]).await;
    assert!(
        two.header("location")
            .unwrap()
            .ends_with("/files/corrupt-2.0-py3-none-any.whl"),
        "{two:?}"
    );
    let journal = proxy.journal();
    let fallback = journal
        .iter()
        .find(|s| s.project == "corrupt" && s.version == "2.0")
        .unwrap_or_else(|| panic!("{journal:?}"));
    assert_eq!(fallback.label, None);
    assert!(
        fallback.why.contains("unusable variant metadata"),
        "{fallback:?}"
    );
    assert_logged("corrupt 2.0: unusable variant metadata");
    // Other projects are unaffected.
    let fast = get_json(addr, "/simple/fastpkg/").await.json();
    assert_eq!(names(&fast), ["fastpkg-1.0-py3-none-any.whl"]);
    let torch = get_json(addr, "/simple/torch/").await;
    assert_eq!(torch.status, 200);
    proxy.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_without_a_fitting_wheel_are_hidden_with_what_they_need() {
    let (_dir, index) = upstream(&[gpuonly_release]).await;
    let (proxy, scratch) = proxy_over(&index, cpu_target).await;
    let json = get_json(proxy.local_addr(), "/simple/gpuonly/")
        .await
        .json();
    assert!(files(&json).is_empty(), "{json}");
    let hidden = proxy.hidden_versions();
    assert_eq!(hidden.len(), 1, "{hidden:?}");
    assert_eq!(
        (hidden[0].project.as_str(), hidden[0].version.as_str()),
        ("gpuonly", "1.0")
    );
    // What `vari select` says: the hardware the variants are built for, and why the target
    // lacks it.
    let profile = scratch.path().join("cpu-profile.json");
    let why = format!(
        "has no build for profile {0}: builds for NVIDIA GPUs (cuda12.8), which profile {0} \
         does not list",
        profile.display()
    );
    assert_eq!(hidden[0].why, why);
    assert_logged(&format!("gpuonly 1.0 {why}; no wheel of it is shown"));
    proxy.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_is_down_gives_502_with_the_reason() {
    let (proxy, _scratch, port) = proxy_over_a_closed_port(cpu_target).await;
    let reply = get_json(proxy.local_addr(), "/simple/torch/").await;
    assert_eq!(reply.status, 502);
    let text = reply.text();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with(&format!("upstream: http://127.0.0.1:{port}/simple/torch/:")),
        "{text}"
    );
    let logs = logs();
    assert!(
        logs.lines().any(|l| l.contains("WARN")
            && l.contains(&format!(
                "torch: upstream: http://127.0.0.1:{port}/simple/torch/"
            ))),
        "{logs}"
    );
    proxy.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_page_is_answered_again_without_the_upstream_for_a_while() {
    let (_dir, index) = upstream(&[plainpkg_release]).await;
    // Every request fails: the upstream is down (500).
    index.set(|knobs| knobs.fail_next = u32::MAX);
    let scratch = tempfile::tempdir().unwrap();
    let proxy_remembering_failures_for = |failure_ttl: std::time::Duration| {
        let mut settings = settings(
            client(&[index.index_url()], &[]),
            cpu_target(scratch.path()),
            scratch.path(),
        );
        settings.failure_ttl = failure_ttl;
        start(settings)
    };
    let page = "/simple/plainpkg/";
    // Within the window (an hour): the retries an installer makes get the 502 at once.
    let proxy = proxy_remembering_failures_for(std::time::Duration::from_secs(3600)).await;
    let first = get_json(proxy.local_addr(), page).await;
    assert_eq!(first.status, 502);
    assert_eq!(upstream_requests(&index, page), 1);
    for _ in 0..3 {
        let retry = get_json(proxy.local_addr(), page).await;
        assert_eq!((retry.status, retry.text()), (502, first.text()));
    }
    assert_eq!(upstream_requests(&index, page), 1);
    // One attempt, one warning: the retries answered from memory are not new failures.
    let upstream_page = format!("{}plainpkg/", index.index_url());
    let warnings = logs()
        .lines()
        .filter(|l| l.contains("WARN") && l.contains(&upstream_page))
        .count();
    assert_eq!(warnings, 1, "{}", logs());
    proxy.shutdown().await;
    // After the window (20 ms, waited out): the upstream is asked again.
    let proxy = proxy_remembering_failures_for(std::time::Duration::from_millis(20)).await;
    assert_eq!(get_json(proxy.local_addr(), page).await.status, 502);
    assert_eq!(upstream_requests(&index, page), 2);
    tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    index.set(|knobs| knobs.fail_next = 0);
    assert_eq!(get_json(proxy.local_addr(), page).await.status, 200);
    assert_eq!(upstream_requests(&index, page), 3);
    proxy.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_project_list_merges_indexes_and_find_links() {
    // A static index on disk with a root page, and a find-links directory.
    let site = tempfile::tempdir().unwrap();
    let simple = site.path().join("simple");
    std::fs::create_dir_all(&simple).unwrap();
    std::fs::write(
        simple.join("index.html"),
        "<html><body><a href=\"foo-bar/\">Foo.Bar</a><a href=\"torch/\">torch</a></body></html>",
    )
    .unwrap();
    let flat = tempfile::tempdir().unwrap();
    plainpkg_release(flat.path());
    let index = url::Url::from_directory_path(&simple).unwrap().to_string();
    let (proxy, _scratch) = proxy_with(client(&[index], &[flat.path()]), cpu_target).await;
    let addr = proxy.local_addr();
    let json = get_json(addr, "/simple/").await.json();
    let listed: Vec<&str> = json["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["Foo.Bar", "plainpkg", "torch"]);
    let html = request(addr, "GET", "/simple/", &[]).await.text();
    // Relative links: they stay under the prefix the list was asked for under.
    assert!(html.contains("<a href=\"foo-bar/\">Foo.Bar</a>"), "{html}");
    proxy.shutdown().await;
}

#[tokio::test]
async fn other_addresses_than_loopback_need_permission() {
    let scratch = tempfile::tempdir().unwrap();
    let mut refused = settings(client(&[], &[]), cpu_target(scratch.path()), scratch.path());
    refused.bind = SocketAddr::from(([0, 0, 0, 0], 0));
    let error = vari_proxy::start(refused.clone()).await.unwrap_err();
    assert!(matches!(error, ProxyError::RemoteBind { addr } if addr == refused.bind));
    assert!(error.to_string().contains("0.0.0.0:0"), "{error}");

    refused.allow_remote = true;
    let proxy = vari_proxy::start(refused).await.unwrap();
    assert!(proxy.local_addr().ip().is_unspecified());
    assert_eq!(proxy.index_url().host_str(), Some("127.0.0.1"));
    proxy.shutdown().await;

    let mut v6 = settings(client(&[], &[]), cpu_target(scratch.path()), scratch.path());
    v6.bind = "[::1]:0".parse().unwrap();
    // Loopback in IPv6 is fine (where the machine has it).
    match vari_proxy::start(v6).await {
        Ok(proxy) => {
            assert_eq!(proxy.index_url().host_str(), Some("[::1]"));
            proxy.shutdown().await;
        }
        Err(e) => assert!(matches!(e, ProxyError::Bind { .. }), "{e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chosen_wheel_whose_metadata_cannot_be_read_is_listed_without_promises() {
    let (dir, index) = upstream(&[]).await;
    let document = level_variants(&["v1", "v3"]);
    std::fs::write(dir.path().join("broken-1.0-variants.json"), &document).unwrap();
    std::fs::write(
        dir.path().join("broken-1.0-py3-none-any-v3.whl"),
        b"this is not a zip archive",
    )
    .unwrap();
    wheel(
        dir.path(),
        "broken-1.0-py3-none-any-v1.whl",
        Some(&one_variant(&document, "v1")),
        &[],
    );
    let (proxy, _scratch) = proxy_over(&index, cpu_target).await;
    let addr = proxy.local_addr();
    let page = get_json(addr, "/simple/broken/").await.json();
    let listed = file(&page, "broken-1.0-py3-none-any.whl");
    // Neither a hash nor metadata that could turn out wrong.
    assert_eq!(listed["hashes"], serde_json::json!({}), "{listed}");
    assert!(listed.get("core-metadata").is_none(), "{listed}");
    assert_logged("broken-1.0-py3-none-any-v3.whl: cannot read its METADATA");
    // The download reads the wheel itself, and says why it cannot serve it.
    let url = path_of(listed["url"].as_str().unwrap());
    let reply = request(addr, "GET", &url, &[]).await;
    assert_eq!(reply.status, 502);
    let text = reply.text();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with("cannot serve broken-1.0-py3-none-any.whl: "),
        "{text}"
    );
    proxy.shutdown().await;
}

/// A wheel with a second `.dist-info` directory (first in the archive, with its own
/// `variant.json` describing other builds) in a find-links directory: the proxy holds it to
/// vari-wheel's rules, as `rank` and `select` do, and skips it with a warning naming it rather
/// than reading the wrong `variant.json`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wheel_with_two_dist_info_directories_is_skipped() {
    use std::io::Write;
    let flat = tempfile::tempdir().unwrap();
    fastpkg_release(flat.path());
    std::fs::remove_file(flat.path().join("fastpkg-1.0-variants.json")).unwrap();
    let two = flat.path().join("fastpkg-1.0-py3-none-any-v3.whl");
    let good = std::fs::read(&two).unwrap();
    let mut source = zip::ZipArchive::new(std::io::Cursor::new(good)).unwrap();
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&two).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("aaa-1.0.dist-info/METADATA", options)
        .unwrap();
    zip.write_all(b"Metadata-Version: 2.1\nName: aaa\nVersion: 1.0\n")
        .unwrap();
    zip.start_file("aaa-1.0.dist-info/variant.json", options)
        .unwrap();
    zip.write_all(level_variants(&["v1", "v3", "v4"]).as_bytes())
        .unwrap();
    for i in 0..source.len() {
        zip.raw_copy_file(source.by_index_raw(i).unwrap()).unwrap();
    }
    zip.finish().unwrap();

    let (proxy, _scratch) = proxy_with(client(&[], &[flat.path()]), cpu_target).await;
    let page = get_json(proxy.local_addr(), "/simple/fastpkg/")
        .await
        .json();
    assert!(!files(&page).is_empty(), "{page}");
    assert_logged(
        "fastpkg-1.0-py3-none-any-v3.whl: has more than one `.dist-info` directory \
         (aaa-1.0.dist-info, fastpkg-1.0.dist-info)",
    );
    let journal = proxy.journal();
    assert!(
        journal
            .iter()
            .all(|s| s.original != "fastpkg-1.0-py3-none-any-v3.whl"),
        "{journal:?}"
    );
    proxy.shutdown().await;
}

/// Metadata the proxy serves itself (here rewritten for the target) is kept like the page
/// that lists its file: under the target's own URL, as long as the page may be, with an entity
/// tag that a revalidation is answered with 304 for; under the `/simple/` alias's prefix,
/// revalidated every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_metadata_is_kept_as_long_as_its_page() {
    for (upstream_says, longest) in [(Some("max-age=300"), Some(300)), (Some("no-cache"), None)] {
        let (dir, index) = upstream(&[torch_release]).await;
        serve_pep_658(dir.path(), &index, "torch-");
        index.set(|k| k.cache_control = upstream_says.map(str::to_owned));
        let (proxy, _scratch) = proxy_over(&index, cuda_12_8_target).await;
        let addr = proxy.local_addr();
        let page = format!("{}torch/", proxy.index_url().path());
        let json = get_json(addr, &page).await.json();
        let wheel = file(&json, "torch-2.10.0-py3-none-any.whl");
        let url = format!("{}.metadata", path_of(wheel["url"].as_str().unwrap()));
        assert!(url.starts_with(proxy.index_url().path().trim_end_matches("simple/")));

        let first = request(addr, "GET", &url, &[]).await;
        assert_eq!(first.status, 200);
        assert!(first.text().contains("Requires-Dist: filelock\n"));
        let age = max_age(&first);
        match longest {
            Some(longest) => assert!(
                age.is_some_and(|age| (1..=longest).contains(&age)),
                "{upstream_says:?}: {age:?}"
            ),
            None => assert_eq!(age, None, "{upstream_says:?}"),
        }
        let etag = first.header("etag").unwrap().to_owned();
        let again = request(addr, "GET", &url, &[("If-None-Match", &etag)]).await;
        assert_eq!(again.status, 304, "{upstream_says:?}");
        assert!(again.body.is_empty());
        let other = request(addr, "GET", &url, &[("If-None-Match", "\"other\"")]).await;
        assert_eq!(other.status, 200);
        assert_eq!(other.body, first.body);

        // The same file under the alias's prefix: always revalidated.
        let alias = url.replacen(proxy.index_url().path().trim_end_matches("simple/"), "/", 1);
        let reply = request(addr, "GET", &alias, &[]).await;
        assert_eq!(reply.status, 200, "{alias}");
        assert_eq!(max_age(&reply), None, "the alias is revalidated");
        proxy.shutdown().await;
    }
}

/// An index whose PEP 658 `.metadata` does not match the hash it advertises: the proxy lists
/// the chosen wheel without promises and reads its METADATA from the downloaded wheel. That
/// read went through the client's rule for remote files (a `file:` URL of its own scratch
/// copy, refused), so every download of such a wheel was a 502.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wheel_whose_advertised_metadata_lies_is_still_served() {
    let (dir, index) = upstream(&[fastpkg_release]).await;
    serve_pep_658(dir.path(), &index, "fastpkg-");
    for level in ["v1", "v3", "v4"] {
        index.attrs(
            &format!("fastpkg-1.0-py3-none-any-{level}.whl"),
            FileAttrs {
                core_metadata: Some(MetadataSpelling::Core),
                wrong_metadata_sha256: true,
                ..FileAttrs::default()
            },
        );
    }
    let (proxy, _scratch) = proxy_over(&index, cpu_target).await;
    let addr = proxy.local_addr();
    let page = get_json(addr, "/simple/fastpkg/").await.json();
    let listed = file(&page, "fastpkg-1.0-py3-none-any.whl");
    assert!(listed.get("core-metadata").is_none(), "{listed}");
    assert_logged("cannot read its METADATA");
    let url = path_of(listed["url"].as_str().unwrap());
    let reply = request(addr, "GET", &url, &[]).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let upstream: Vec<Vec<u8>> = ["v1", "v3", "v4"]
        .iter()
        .map(|level| {
            std::fs::read(
                dir.path()
                    .join(format!("fastpkg-1.0-py3-none-any-{level}.whl")),
            )
            .unwrap()
        })
        .collect();
    assert!(
        upstream.contains(&reply.body),
        "the served wheel is an upstream build"
    );
    proxy.shutdown().await;
}

/// A non-variant wheel whose dependencies carry variant markers is served as a variant wheel
/// is: its METADATA (PEP 658, with that text's hash) and a rewritten copy have the markers
/// evaluated for a non-variant wheel (an empty label, no property), and the page lists the
/// copy's hash once it is built.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_non_variant_wheel_with_variant_markers_is_served_evaluated() {
    let (dir, index) = upstream(&[markedpkg_release]).await;
    serve_pep_658(dir.path(), &index, "markedpkg-");
    let (proxy, _scratch) = proxy_over(&index, cpu_target).await;
    let addr = proxy.local_addr();
    let page = get_json(addr, "/simple/markedpkg/").await.json();
    assert_eq!(names(&page), ["markedpkg-1.0-py3-none-any.whl"]);
    let listed = file(&page, "markedpkg-1.0-py3-none-any.whl");
    let upstream_bytes = std::fs::read(dir.path().join("markedpkg-1.0-py3-none-any.whl")).unwrap();
    // Not the upstream file's promises: the copy's hash is not known yet.
    assert_ne!(
        listed["hashes"]["sha256"].as_str(),
        Some(sha256_hex(&upstream_bytes).as_str()),
        "{listed}"
    );
    let url = path_of(listed["url"].as_str().unwrap());
    let metadata = request(addr, "GET", &format!("{url}.metadata"), &[]).await;
    assert_eq!(metadata.status, 200);
    assert_eq!(
        sha256_hex(&metadata.body),
        listed["core-metadata"]["sha256"].as_str().unwrap(),
        "{listed}"
    );
    let text = metadata.text();
    assert!(text.contains("Requires-Dist: filelock\n"), "{text}");
    assert!(
        !text.contains("variant_") && !text.contains("nvidia"),
        "{text}"
    );

    let downloaded = request(addr, "GET", &url, &[]).await;
    assert_eq!(downloaded.status, 200, "{}", downloaded.text());
    assert_eq!(metadata_of(&downloaded.body), text);
    let page = get_json(addr, "/simple/markedpkg/").await.json();
    let listed = file(&page, "markedpkg-1.0-py3-none-any.whl");
    assert_eq!(
        listed["hashes"]["sha256"].as_str(),
        Some(sha256_hex(&downloaded.body).as_str())
    );
    proxy.shutdown().await;
}
