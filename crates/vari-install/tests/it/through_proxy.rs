//! Installing the demo release (`examples/demo`) through the proxy with the real uv and pip of
//! the test venv, into fresh environments, for targets described by hardware facts.

use std::path::{Path, PathBuf};

use vari_client::{ClientSettings, FindLinks};
use vari_install::{
    install, installer_indexes, list_installed, HideOwn, InstallRequest, Installer, InstallerEnv,
    InstallerKind, Program,
};
use vari_proxy::ProxySettings;
use vari_python::PythonRequest;
use vari_select::{Target, TargetSettings};

use crate::common::{bare_venv, clean_env, demo, ok, site_packages, test_venv};

/// The target: `facts` (a hardware facts TOML) and the environment `python`.
fn target(python: &Path, facts: &str, scratch: &Path) -> Target {
    let profile = scratch.join("facts.toml");
    std::fs::write(&profile, facts).unwrap();
    let mut env: Vec<(String, String)> = clean_env();
    env.push((
        "VARI_CACHE_DIR".into(),
        scratch.join("cache").display().to_string(),
    ));
    Target::resolve(&TargetSettings {
        profile: Some(profile),
        sysroot: None,
        python: PythonRequest {
            python: Some(python.to_path_buf()),
            ..PythonRequest::default()
        },
        env: env.into_iter().collect(),
        use_cache: false,
    })
    .unwrap()
}

/// The proxy in front of the demo directory alone, its caches in `scratch`.
fn proxy_settings(target: Target, scratch: &Path) -> ProxySettings {
    let client = ClientSettings {
        indexes: Vec::new(),
        find_links: vec![FindLinks::Directory(demo())],
        cache_dir: Some(scratch.join("http")),
        ..ClientSettings::default()
    };
    ProxySettings {
        cache_dir: Some(scratch.join("proxy")),
        ..ProxySettings::new(client, target)
    }
}

fn request(installer: Installer, python: &Path) -> InstallRequest {
    InstallRequest {
        installer,
        python: python.to_path_buf(),
        requirements: vec!["vari-demo".into()],
        args: Vec::new(),
        pre: false,
        uv_target: Vec::new(),
        hide: HideOwn::default(),
    }
}

/// name → label (`None` for a plain distribution) of what `venv` holds.
fn installed(venv: &Path) -> Vec<(String, Option<String>)> {
    list_installed(&[site_packages(venv)])
        .distributions
        .into_iter()
        .map(|d| (d.name, d.variant.map(|v| v.label.to_string())))
        .collect()
}

const GPU_NODE: &str = "[nvidia]\ncuda_version = \"12.8\"\ncompute_capability = \"8.6\"\n";
const CPU_NODE: &str = "schema = \"vari-facts/1\"\n";

#[tokio::test(flavor = "multi_thread")]
async fn uv_installs_the_chosen_variant_and_the_dependency_its_marker_names() {
    let dir = tempfile::tempdir().unwrap();
    for (facts, label, runtime) in [(GPU_NODE, "cu128", true), (CPU_NODE, "null", false)] {
        let scratch = dir.path().join(label);
        let venv = scratch.join("venv");
        let python = bare_venv(&venv);
        let target = target(&python, facts, &scratch);
        let uv = Installer {
            kind: InstallerKind::Uv,
            program: Program::Uv(test_venv().join("bin/uv")),
        };
        // One uv cache for both targets, as a user's: the proxy's URL names the target, so
        // the second install does not reuse the first one's wheel.
        let mut request = request(uv, &python);
        request.args = vec!["--cache-dir".into(), dir.path().join("uv-cache").into()];
        let outcome = install(
            proxy_settings(target.clone(), &scratch),
            &request,
            &target.python.site_packages,
        )
        .await
        .unwrap();
        assert!(outcome.status.success());
        assert_eq!(outcome.installed.len(), 1, "{:?}", outcome.journal);
        let choice = &outcome.installed[0];
        assert_eq!(
            (
                choice.served.project.as_str(),
                choice.served.version.as_str()
            ),
            ("vari-demo", "1.0.0")
        );
        assert_eq!(choice.variant.label.as_str(), label);
        assert!(choice.served.downloaded);
        let mut expected = vec![("vari-demo".to_owned(), Some(label.to_owned()))];
        if runtime {
            expected.push(("vari-demo-cuda-runtime".to_owned(), None));
        }
        assert_eq!(installed(&venv), expected);
        // The bytes are the chosen build's, not only its metadata.
        let module =
            std::fs::read_to_string(site_packages(&venv).join("vari_demo/__init__.py")).unwrap();
        assert!(module.contains(&format!("LABEL = '{label}'")), "{module}");
    }
}

/// Runs the installer `command` (which must succeed), stops `proxy`, and gives the label of the
/// vari-demo now in `venv` (`None`: the plain wheel; panics when none is installed) with the
/// installer's output.
async fn demo_installed(
    mut command: std::process::Command,
    proxy: vari_proxy::RunningProxy,
    venv: &Path,
) -> (Option<String>, std::process::Output) {
    let output = tokio::task::spawn_blocking(move || ok(&mut command))
        .await
        .unwrap();
    proxy.shutdown().await;
    let label = installed(venv)
        .into_iter()
        .find(|(name, _)| name == "vari-demo")
        .unwrap_or_else(|| panic!("vari-demo is not installed"))
        .1;
    (label, output)
}

/// A plain wheel with a build tag (pip prefers it to the proxy's wheel of the same version
/// when it sees both) where pip's own settings would find it.
fn plain_with_build_tag(scratch: &Path) -> (PathBuf, String) {
    let links = scratch.join("links");
    std::fs::create_dir_all(&links).unwrap();
    let name = "vari_demo-1.0.0-1-py3-none-any.whl";
    std::fs::copy(
        demo().join("vari_demo-1.0.0-py3-none-any.whl"),
        links.join(name),
    )
    .unwrap();
    // The same file as a PEP 503 page: pip reads `index.html` of a `file:` index directory.
    let page = scratch.join("site/simple/vari-demo");
    std::fs::create_dir_all(&page).unwrap();
    let href = url::Url::from_file_path(links.join(name)).unwrap();
    std::fs::write(
        page.join("index.html"),
        format!("<html><body><a href=\"{href}\">{name}</a></body></html>\n"),
    )
    .unwrap();
    let site = url::Url::from_directory_path(scratch.join("site/simple")).unwrap();
    (links, site.to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn pip_sees_the_proxy_alone_whatever_its_configuration_says() {
    let dir = tempfile::tempdir().unwrap();
    let (links, site) = plain_with_build_tag(dir.path());
    let pip = Installer {
        kind: InstallerKind::Pip,
        program: Program::Pip(test_venv().join("bin/pip")),
    };
    // (pip.conf, what vari overrides, the label pip installs).
    let cases = [
        (
            format!("[global]\nfind-links = {}\n", links.display()),
            HideOwn::default(),
            None,
        ),
        (
            format!("[install]\nextra-index-url = {site}\n"),
            HideOwn::default(),
            None,
        ),
        (
            format!(
                "[global]\nfind-links = {}\nno-index = true\n[install]\nextra-index-url = {site}\n",
                links.display()
            ),
            HideOwn {
                extra_indexes: true,
                no_index: true,
                find_links: Some(dir.path().join("empty")),
                uv_config: None,
            },
            Some("cu128"),
        ),
    ];
    std::fs::create_dir_all(dir.path().join("empty")).unwrap();
    for (i, (conf, hide, label)) in cases.into_iter().enumerate() {
        let scratch = dir.path().join(format!("case{i}"));
        let venv = scratch.join("venv");
        let python = bare_venv(&venv);
        std::fs::write(scratch.join("pip.conf"), &conf).unwrap();
        let target = target(&python, GPU_NODE, &scratch);
        let proxy = vari_proxy::start(proxy_settings(target, &scratch))
            .await
            .unwrap();
        let mut request = request(pip.clone(), &python);
        request.hide = hide;
        let mut command = request.command(&proxy.index_url());
        // A clean environment under the variables the driver sets (which `env_clear` drops).
        let set: Vec<_> = command
            .get_envs()
            .map(|(k, v)| (k.to_owned(), v.map(ToOwned::to_owned)))
            .collect();
        command.env_clear().envs(clean_env());
        for (key, value) in set {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        command
            .env("HOME", &scratch)
            .env("PIP_CONFIG_FILE", scratch.join("pip.conf"))
            .env("PIP_CACHE_DIR", scratch.join("pip-cache"))
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
        let (got, output) = demo_installed(command, proxy, &venv).await;
        assert_eq!(
            got.as_deref(),
            label,
            "{conf}\n{}",
            String::from_utf8_lossy(&output.stdout)
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn uv_sees_the_proxy_alone_whatever_its_configuration_files_say() {
    let dir = tempfile::tempdir().unwrap();
    let (links, site) = plain_with_build_tag(dir.path());
    let uv = Installer {
        kind: InstallerKind::Uv,
        program: Program::Uv(test_venv().join("bin/uv")),
    };
    let project_files = [
        format!(
            "find-links = [{:?}]\nno-index = true\n",
            links.display().to_string()
        ),
        format!("[pip]\nextra-index-url = [{site:?}]\n"),
        format!("[[index]]\nurl = {site:?}\n"),
    ];
    for (i, uv_toml) in project_files.iter().enumerate() {
        // Without the copy of its settings, uv reads the plain wheel's source itself; with it,
        // uv sees the proxy alone and installs the target's variant.
        for (with_copy, label) in [(false, None), (true, Some("cu128"))] {
            let scratch = dir.path().join(format!("case{i}-{with_copy}"));
            let project = scratch.join("project");
            std::fs::create_dir_all(&project).unwrap();
            std::fs::write(project.join("uv.toml"), uv_toml).unwrap();
            let env = InstallerEnv::new(clean_env(), None).with_cwd(&project);
            let own = installer_indexes(InstallerKind::Uv, &env).unwrap();
            assert_eq!(own.files, [project.join("uv.toml")], "{uv_toml}");
            let copy = scratch.join("uv-settings.toml");
            std::fs::write(&copy, own.uv_config.as_deref().unwrap()).unwrap();

            let venv = scratch.join("venv");
            let python = bare_venv(&venv);
            let target = target(&python, GPU_NODE, &scratch);
            let proxy = vari_proxy::start(proxy_settings(target, &scratch))
                .await
                .unwrap();
            let mut request = request(uv.clone(), &python);
            request.hide.uv_config = with_copy.then_some(copy);
            let mut command = request.command(&proxy.index_url());
            command
                .current_dir(&project)
                .env("HOME", &scratch)
                .env("XDG_CONFIG_HOME", scratch.join("config"))
                .env("UV_CACHE_DIR", scratch.join("uv-cache"));
            for variable in ["UV_NO_CONFIG", "UV_CONFIG_FILE", "UV_INDEX_STRATEGY"] {
                command.env_remove(variable);
            }
            let (got, output) = demo_installed(command, proxy, &venv).await;
            assert_eq!(
                got.as_deref(),
                label,
                "{uv_toml} (copy given: {with_copy})\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
}

#[test]
fn a_missing_installer_is_an_error_naming_it() {
    let e = Installer::find(
        Some(&"/nonexistent/pip".parse().unwrap()),
        None,
        Path::new("python"),
        &[],
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "/nonexistent/pip: no such installer");
}
