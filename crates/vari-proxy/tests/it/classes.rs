//! Machine classes: one proxy serving a CPU class, a CUDA 12.8 class and a CUDA 13 class of
//! torch 2.10 side by side, each under its own URLs with its own choice, and refusing what
//! names no class.

use vari_proxy::{ClassName, ProxyError, ProxySettings, TargetClass};

use crate::support::*;
use crate::wheels::*;

fn class(name: &str, target: vari_select::Target) -> TargetClass {
    TargetClass {
        name: ClassName::new(name).unwrap(),
        target,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_class_gets_its_own_choice_under_its_own_urls() {
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
    let classes = vec![
        class("cpu", cpu_target(&dirs[0])),
        class("gpu-cu128", cuda_12_8_target(&dirs[1])),
        class("gpu-cu13", cuda_13_target(&dirs[2])),
    ];
    let mut settings =
        ProxySettings::for_classes(client(&[index.index_url()], &[]), classes).unwrap();
    settings.cache_dir = Some(scratch.path().join("cache"));
    let proxy = start(settings).await;
    let addr = proxy.local_addr();
    let served = proxy.classes();
    assert_eq!(
        served.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["cpu", "gpu-cu128", "gpu-cu13"]
    );
    // The proxy's own URL is the list of classes.
    assert_eq!(proxy.index_url().path(), "/");
    let mut shown = Vec::new();
    for class in &served {
        let own = url::Url::parse(&class.index_url).unwrap();
        let alias = url::Url::parse(&class.alias_url).unwrap();
        assert_eq!(
            own.path(),
            format!("/t/{}.{}/simple/", class.name, class.fingerprint)
        );
        assert_eq!(alias.path(), format!("/t/{}/simple/", class.name));
        let page = get_json(addr, &format!("{}torch/", own.path())).await;
        assert_eq!(page.status, 200, "{}", page.text());
        // The alias shows the same page, never cacheable by clients.
        let through_alias = get_json(addr, &format!("{}torch/", alias.path())).await;
        assert_eq!(through_alias.body, page.body);
        assert_eq!(through_alias.header("cache-control"), Some("no-cache"));
        let json = page.json();
        let files: Vec<&str> = json["files"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["url"].as_str())
            .filter(|url| url.ends_with(".whl"))
            .collect();
        assert_eq!(files.len(), 1, "{json}");
        assert!(
            files[0].starts_with(&format!(
                "/t/{}.{}/files/torch/",
                class.name, class.fingerprint
            )),
            "{json}"
        );
        shown.push(page.body);
    }
    assert!(shown[0] != shown[1] && shown[1] != shown[2] && shown[0] != shown[2]);
    // The journal holds each class's choice, in the order of the classes.
    let labels: Vec<Option<String>> = proxy
        .journal()
        .into_iter()
        .filter(|s| s.project == "torch")
        .map(|s| s.label)
        .collect();
    assert_eq!(
        labels,
        [
            Some("null".to_owned()),
            Some("cuda12.8".to_owned()),
            Some("cuda13.0".to_owned())
        ]
    );
    // What names no class: 404 naming the classes; an old fingerprint of a class: its URL now.
    for path in ["/simple/torch/", "/t/gpu-h100/simple/torch/"] {
        let reply = request(addr, "GET", path, &[]).await;
        assert_eq!(reply.status, 404, "{path}");
        assert!(
            reply.text().contains("/t/gpu-cu13."),
            "{path}: {}",
            reply.text()
        );
    }
    let reply = request(addr, "GET", "/t/cpu.0123456789ab/simple/torch/", &[]).await;
    assert_eq!(reply.status, 404);
    let now = format!("use /t/cpu.{}/simple/", served[0].fingerprint);
    assert!(reply.text().contains(&now), "{}", reply.text());
    proxy.shutdown().await;
}

#[test]
fn no_class_and_a_name_given_twice_are_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let none = ProxySettings::for_classes(client(&[], &[]), Vec::new()).unwrap_err();
    assert!(matches!(none, ProxyError::NoClasses), "{none}");
    let twice = vec![
        class("cpu", cpu_target(scratch.path())),
        class("cpu", cpu_target(scratch.path())),
    ];
    let error = ProxySettings::for_classes(client(&[], &[]), twice).unwrap_err();
    assert_eq!(
        error.to_string(),
        "machine class cpu is given twice: each class needs its own name"
    );
}
