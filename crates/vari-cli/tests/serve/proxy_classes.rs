//! One `vari proxy` for a heterogeneous cluster (`--target NAME=PROFILE`, `[proxy.targets]`):
//! three machine classes (CPU only, an A100 with a CUDA 12.8 driver, a V100 with CUDA 12.6)
//! served by one process from the demo release, each class's URLs giving the real uv and pip
//! its own variant; and `vari detect --class` telling a node (simulated with the override
//! variables) which class it is.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use vari_test_support::installers::{install_into_target, Installer};
use vari_test_support::paths::demo;
use vari_test_support::venv::test_venv;

use crate::common::{run, vari};

/// Stops the proxy when the test ends, however it ends.
struct Proxy(Child);

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A class as the proxy announced it: name, pip's URL (the alias), uv's URL.
#[derive(Debug)]
struct Announced {
    name: String,
    alias: String,
    url: String,
}

/// The three classes' facts files in `dir`: (name, path).
fn class_facts(dir: &Path) -> Vec<(&'static str, PathBuf)> {
    let platform = "[platform]\nsystem = \"Linux\"\nmachine = \"x86_64\"\n";
    [
        ("cpu", String::new()),
        (
            "gpu-a100",
            "[nvidia]\ncuda_version = \"12.8\"\ncompute_capability = \"8.0\"\n".to_owned(),
        ),
        (
            "gpu-v100",
            "[nvidia]\ncuda_version = \"12.6\"\ncompute_capability = \"7.0\"\n".to_owned(),
        ),
    ]
    .into_iter()
    .map(|(name, gpu)| {
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(&path, format!("{platform}{gpu}")).unwrap();
        (name, path)
    })
    .collect()
}

/// `--target NAME=PATH` for each class.
fn target_args(classes: &[(&str, PathBuf)]) -> Vec<String> {
    classes
        .iter()
        .flat_map(|(name, path)| ["--target".to_owned(), format!("{name}={}", path.display())])
        .collect()
}

/// `vari proxy` over the demo release on a free port with `args`; its stdout, to read.
fn spawn_proxy(
    args: &[String],
    config: Option<&Path>,
) -> (Proxy, BufReader<std::process::ChildStdout>) {
    let mut command = vari();
    command
        .args(["proxy", "--bind", "127.0.0.1:0", "--find-links"])
        .arg(demo())
        .arg("--python")
        .arg(test_venv())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(config) = config {
        command.env("VARI_CONFIG", config);
    }
    let mut child = command.spawn().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    (Proxy(child), stdout)
}

fn line(stdout: &mut impl BufRead) -> String {
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    line
}

/// `GET path` on `addr` (`127.0.0.1:PORT`): the status and the body.
fn get(addr: &str, path: &str, accept: &str) -> (u16, String) {
    let answer = get_raw(addr, path, accept);
    let status = answer[9..12].parse().unwrap();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// The whole answer to `GET path`, head and body.
fn get_raw(addr: &str, path: &str, accept: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

/// `http://ADDR/PATH` → (`ADDR`, `/PATH`).
fn split_url(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_once('/').unwrap();
    (addr.to_owned(), format!("/{path}"))
}

/// The label installed (`vari_demo`'s `variant.json`) and whether the CUDA runtime came too.
fn installed(installer: Installer, index: &str) -> (Option<String>, bool) {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let run = install_into_target(installer, tmp, index, &["vari-demo".to_owned()], None);
    run.assert_success();
    let runtime = run
        .distributions()
        .iter()
        .any(|d| d.starts_with("vari_demo_cuda_runtime"));
    (run.label("vari_demo-1.0.0.dist-info"), runtime)
}

#[test]
fn one_proxy_serves_three_classes_each_its_own_variant_to_uv_and_pip() {
    let dir = tempfile::tempdir().unwrap();
    let classes = class_facts(dir.path());
    let (_proxy, mut stdout) = spawn_proxy(&target_args(&classes), None);
    let announced: Vec<Announced> = classes
        .iter()
        .map(|_| {
            let text = line(&mut stdout);
            let words: Vec<&str> = text.split_whitespace().collect();
            let value = |name: &str| {
                words
                    .iter()
                    .find_map(|w| w.strip_prefix(name))
                    .unwrap_or_else(|| panic!("no {name} in {text:?}"))
                    .to_owned()
            };
            Announced {
                name: words[0].to_owned(),
                alias: value("PIP_INDEX_URL="),
                url: value("UV_DEFAULT_INDEX="),
            }
        })
        .collect();
    let (addr, _) = split_url(&announced[0].url);
    for ((name, _), class) in classes.iter().zip(&announced) {
        assert_eq!(class.name, *name);
        // pip's URL is the stable `/t/NAME/simple/`; uv's names the class's facts too.
        assert_eq!(class.alias, format!("http://{addr}/t/{name}/simple/"));
        let fingerprint = class
            .url
            .strip_prefix(&format!("http://{addr}/t/{name}."))
            .and_then(|rest| rest.strip_suffix("/simple/"))
            .unwrap_or_else(|| panic!("{} is not …/t/{name}.FINGERPRINT/simple/", class.url));
        assert!(
            fingerprint.len() == 12 && fingerprint.bytes().all(|b| b.is_ascii_hexdigit()),
            "{}",
            class.url
        );
    }
    // Each class's page lists one wheel under the plain name, linked under the class's own
    // prefix, whichever of its URLs was asked; the three pages differ.
    let mut pages = Vec::new();
    for class in &announced {
        let (_, own) = split_url(&class.url);
        let (_, alias) = split_url(&class.alias);
        let (status, page) = get(&addr, &format!("{own}vari-demo/"), "text/html");
        assert_eq!(status, 200, "{page}");
        let links: Vec<&str> = page
            .split("href=\"")
            .skip(1)
            // Without the hash fragment (there once the rewritten copy exists).
            .map(|rest| rest.split(['"', '#']).next().unwrap())
            .collect();
        assert_eq!(links.len(), 1, "{page}");
        let prefix = own.strip_suffix("simple/").unwrap();
        assert!(
            links[0].starts_with(&format!("{prefix}files/vari-demo/")),
            "{page}"
        );
        assert!(
            links[0].ends_with("/vari_demo-1.0.0-py3-none-any.whl"),
            "{page}"
        );
        assert_eq!(
            get(&addr, &format!("{alias}vari-demo/"), "text/html").1,
            page
        );
        pages.push(page);
    }
    assert!(pages[0] != pages[1] && pages[1] != pages[2] && pages[0] != pages[2]);
    // The real installers get each class's own variant: uv through the URL naming the class's
    // facts, pip through the stable alias.
    let expected = [("null", false), ("cu128", true), ("cu126", true)];
    for (class, (label, runtime)) in announced.iter().zip(expected) {
        let wanted = (Some(label.to_owned()), runtime);
        assert_eq!(
            installed(Installer::Uv, &class.url),
            wanted,
            "uv, {}",
            class.name
        );
        assert_eq!(
            installed(Installer::NewestPip, &class.alias),
            wanted,
            "pip, {}",
            class.name
        );
    }
    // The root lists the classes; other names, the plain `/simple/` and an old fingerprint of
    // a class are 404, with the classes served named.
    let (status, root) = get(&addr, "/", "*/*");
    assert_eq!(status, 200);
    for class in &announced {
        let (_, own) = split_url(&class.url);
        assert!(
            root.contains(&format!("{} {own} /t/{}/simple/", class.name, class.name)),
            "{root}"
        );
    }
    let (status, json) = get(&addr, "/", "application/json");
    assert_eq!(status, 200);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["classes"][1]["name"], "gpu-a100");
    assert_eq!(json["classes"][1]["alias_path"], "/t/gpu-a100/simple/");
    for path in [
        "/t/gpu-h100/simple/vari-demo/",
        "/simple/vari-demo/",
        "/t/GPU/simple/",
    ] {
        let (status, body) = get(&addr, path, "text/html");
        assert_eq!(status, 404, "{path}: {body}");
        assert!(
            body.contains("cpu (/t/cpu.") && body.contains("gpu-v100 (/t/gpu-v100."),
            "{path}: {body}"
        );
    }
    let (status, body) = get(
        &addr,
        "/t/gpu-a100.000000000000/simple/vari-demo/",
        "text/html",
    );
    assert_eq!(status, 404);
    let (_, own) = split_url(&announced[1].url);
    assert!(body.contains(&format!("use {own}")), "{body}");
}

#[test]
fn bad_and_duplicate_class_names_are_refused_with_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let classes = class_facts(dir.path());
    let cpu = classes[0].1.display().to_string();
    let proxy = |targets: &[String]| {
        let mut command = vari();
        command
            .args(["proxy", "--bind", "127.0.0.1:0", "--find-links"])
            .arg(demo());
        for target in targets {
            command.arg("--target").arg(target);
        }
        run(&mut command)
    };
    proxy(&[format!("GPU={cpu}")]).expect_one_error(&["--target \"GPU=", "\"GPU\" is not valid"]);
    proxy(&[format!("gpu/../x={cpu}")]).expect_one_error(&["is not valid"]);
    proxy(&[format!("{}={cpu}", "a".repeat(41))]).expect_one_error(&["too long"]);
    // A bare profile is a class named after its file (`[NAME=]PROFILE`, as for every command
    // taking classes), its file name brought to the grammar; one that makes no class name
    // (too long to be one) is refused.
    let long = dir.path().join(format!("{}.toml", "c".repeat(41)));
    std::fs::copy(&classes[0].1, &long).unwrap();
    proxy(&[long.display().to_string()]).expect_one_error(&[
        "--target \"",
        "is too long",
        "name it NAME=PROFILE",
    ]);
    proxy(&[format!("cpu={cpu}"), format!("cpu={cpu}")])
        .expect_one_error(&["machine class cpu is given twice"]);
    // In vari.toml: the file and the key path are named.
    let config = dir.path().join("vari.toml");
    std::fs::write(&config, format!("[proxy.targets]\nCPU = {cpu:?}\n")).unwrap();
    let mut command = vari();
    command
        .args(["proxy", "--bind", "127.0.0.1:0", "--find-links"])
        .arg(demo())
        .env("VARI_CONFIG", &config);
    run(&mut command).expect_one_error(&[
        &format!("{}: proxy.targets.CPU: ", config.display()),
        "is not valid",
    ]);
    run(vari().args(["detect", "--class", &format!("a.b={cpu}")]))
        .expect_one_error(&["--class \"a.b=", "is not valid"]);
}

/// `[proxy.targets]` in vari.toml names the classes; `--target` replaces them.
#[test]
fn classes_come_from_vari_toml_unless_the_command_line_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let classes = class_facts(dir.path());
    let config = dir.path().join("vari.toml");
    // Relative to the file's directory.
    std::fs::write(
        &config,
        "[proxy.targets]\ncpu = \"cpu.toml\"\ngpu-a100 = \"gpu-a100.toml\"\n",
    )
    .unwrap();
    let names = |args: &[String]| -> Vec<String> {
        let (proxy, mut stdout) = spawn_proxy(args, Some(&config));
        let json: serde_json::Value = serde_json::from_str(&line(&mut stdout)).unwrap();
        drop(proxy);
        crate::common::assert_json_schema("proxy", &json);
        json["classes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|class| {
                let name = class["name"].as_str().unwrap().to_owned();
                let source = class["source"].as_str().unwrap();
                assert!(source.ends_with(&format!("{name}.toml")), "{class}");
                name
            })
            .collect()
    };
    assert_eq!(names(&["--json".to_owned()]), ["cpu", "gpu-a100"]);
    // `vari config show` names them with the file that set them.
    let shown = run(vari()
        .args(["config", "show", "--json"])
        .env("VARI_CONFIG", &config))
    .expect_code(0)
    .json();
    crate::common::assert_json_schema("config-show", &shown);
    let entry = &shown["settings"]["proxy.targets"];
    assert_eq!(
        entry["value"],
        serde_json::json!([
            format!("cpu={}", classes[0].1.display()),
            format!("gpu-a100={}", classes[1].1.display())
        ])
    );
    assert_eq!(entry["layer"], "VARI_CONFIG");
    let mut flag = target_args(&classes[2..]);
    flag.push("--json".to_owned());
    assert_eq!(names(&flag), ["gpu-v100"]);
}

#[test]
fn detect_class_names_the_class_each_simulated_node_matches() {
    let dir = tempfile::tempdir().unwrap();
    let classes = class_facts(dir.path());
    let args = {
        let mut args = vec!["detect".to_owned()];
        for (name, path) in &classes {
            args.push("--class".to_owned());
            args.push(format!("{name}={}", path.display()));
        }
        args
    };
    let driver = "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION";
    let sm = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH";
    let cases: [(&[(&str, &str)], &str); 6] = [
        (&[], "cpu"),
        (&[(driver, "12.8"), (sm, "8.0")], "gpu-a100"),
        // A newer driver than the class's facts still runs what the class chooses.
        (&[(driver, "12.9"), (sm, "8.0")], "gpu-a100"),
        (&[(driver, "12.8"), (sm, "7.0")], "gpu-v100"),
        (&[(driver, "12.6"), (sm, "7.0")], "gpu-v100"),
        // Too old a driver for either GPU class: the CPU one.
        (&[(driver, "12.4"), (sm, "8.0")], "cpu"),
    ];
    for (overrides, expected) in cases {
        let done = run(vari().args(&args).envs(overrides.iter().copied())).expect_code(0);
        assert_eq!(
            done.stdout,
            format!("{expected}\n"),
            "{overrides:?}\n{}",
            done.stderr
        );
    }
    // The URL on a proxy serving the classes, and the reasons as JSON.
    let done = run(vari()
        .args(&args)
        .args(["--proxy-url", "http://proxy.cluster:3141/", "--json"])
        .envs([(driver, "12.8"), (sm, "7.0")]))
    .expect_code(0);
    let json = done.json();
    crate::common::assert_json_schema("detect-class", &json);
    assert_eq!(json["class"], "gpu-v100");
    assert_eq!(
        json["index_url"],
        "http://proxy.cluster:3141/t/gpu-v100/simple/"
    );
    assert_eq!(json["classes"][1]["fits"], false);
    assert_eq!(
        json["classes"][1]["missing"][0],
        "nvidia :: sm_arch :: 80_real"
    );
    let done = run(vari()
        .args(&args)
        .args(["--proxy-url", "http://proxy.cluster:3141"]))
    .expect_code(0);
    assert_eq!(done.stdout, "http://proxy.cluster:3141/t/cpu/simple/\n");
    // GPU classes only, on a node without a GPU: no class, one line saying what each lacks.
    let gpu_only: Vec<String> = args[..1]
        .iter()
        .cloned()
        .chain(args[3..].iter().cloned())
        .collect();
    run(vari().args(&gpu_only)).expect_one_error(&[
        "this machine matches no machine class: gpu-a100 (",
        "lacks nvidia :: cuda_version_lower_bound :: 12.8",
        "gpu-v100 (",
    ]);
    // A bare `--class`: the classes of vari.toml.
    let config = dir.path().join("vari.toml");
    std::fs::write(
        &config,
        "[proxy.targets]\ncpu = \"cpu.toml\"\ngpu-a100 = \"gpu-a100.toml\"\n",
    )
    .unwrap();
    let done = run(vari()
        .args(["detect", "--class"])
        .env("VARI_CONFIG", &config)
        .envs([(driver, "13.0"), (sm, "8.0")]))
    .expect_code(0);
    assert_eq!(done.stdout, "gpu-a100\n");
    run(vari().args(["detect", "--class"])).expect_one_error(&["no machine classes to match"]);
}

/// Without classes, `--json` gives the single target's URLs.
#[test]
fn without_classes_json_gives_the_single_targets_urls() {
    let dir = tempfile::tempdir().unwrap();
    let classes = class_facts(dir.path());
    let profile = classes[1].1.display().to_string();
    let (proxy, mut stdout) = spawn_proxy(
        &["--json".to_owned(), "--profile".to_owned(), profile],
        None,
    );
    let json: serde_json::Value = serde_json::from_str(&line(&mut stdout)).unwrap();
    drop(proxy);
    crate::common::assert_json_schema("proxy", &json);
    let fingerprint = json["fingerprint"].as_str().unwrap();
    assert_eq!(fingerprint.len(), 12, "{json}");
    let url = json["index_url"].as_str().unwrap();
    assert!(
        url.ends_with(&format!("/t/{fingerprint}/simple/")),
        "{json}"
    );
    assert!(
        json["alias_url"].as_str().unwrap().ends_with("/simple/"),
        "{json}"
    );
    assert!(json.get("classes").is_none(), "{json}");
}
