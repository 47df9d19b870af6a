//! Parsing a synthetic project page of 5,000 files (the size of PyTorch's pages), in both
//! flavours, into a classified `Project`.

// criterion's `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use vari_client::{FileSource, Project, ProjectName};

const FILES: usize = 5_000;

/// (filename, sha256) for 5,000 variant wheels over 50 versions × 10 platforms × 10 labels.
fn files() -> Vec<(String, String)> {
    let platforms = [
        "manylinux_2_28_x86_64",
        "manylinux_2_28_aarch64",
        "win_amd64",
        "macosx_11_0_arm64",
        "musllinux_1_2_x86_64",
    ];
    let labels = [
        "cu126",
        "cu128",
        "cu129",
        "cu130",
        "cpu",
        "rocm6_4",
        "xpu",
        "null",
        "x86_64_v3",
        "x86_64_v4",
    ];
    (0..FILES)
        .map(|i| {
            let version = format!("2.{}.{}", i / 500, (i / 100) % 5);
            let python = 310 + (i / 50) % 2;
            let platform = platforms[(i / 10) % platforms.len()];
            let label = labels[i % labels.len()];
            let name = format!("torch-{version}-cp{python}-cp{python}-{platform}-{label}.whl");
            let hash = format!("{:064x}", (i as u128) * 0x9e37_79b9_7f4a_7c15);
            (name, hash)
        })
        .collect()
}

fn html(files: &[(String, String)]) -> String {
    let mut page = String::from("<!DOCTYPE html><html><body><h1>Links for torch</h1>\n");
    for (name, hash) in files {
        page.push_str(&format!(
            "<a href=\"https://download.example.org/whl/{name}#sha256={hash}\" \
             data-requires-python=\"&gt;=3.10\" data-dist-info-metadata=\"sha256={hash}\" \
             data-core-metadata=\"sha256={hash}\">{name}</a><br/>\n"
        ));
    }
    page.push_str("</body></html>\n");
    page
}

fn json(files: &[(String, String)]) -> String {
    let entries: Vec<String> = files
        .iter()
        .map(|(name, hash)| {
            format!(
                "{{\"filename\": \"{name}\", \"url\": \"https://download.example.org/whl/{name}\", \
                 \"hashes\": {{\"sha256\": \"{hash}\"}}, \"requires-python\": \">=3.10\", \
                 \"core-metadata\": {{\"sha256\": \"{hash}\"}}, \"size\": 123456789, \
                 \"upload-time\": \"2025-10-01T00:00:00.000000Z\", \"yanked\": false}}"
            )
        })
        .collect();
    format!(
        "{{\"meta\": {{\"api-version\": \"1.1\"}}, \"name\": \"torch\", \"files\": [{}]}}",
        entries.join(",\n")
    )
}

fn bench(c: &mut Criterion) {
    let files = files();
    let url = url::Url::parse("https://download.example.org/whl/torch/").unwrap();
    let name = ProjectName::new("torch").unwrap();
    let source = FileSource::Index(url.clone());
    let mut group = c.benchmark_group("parse 5,000-file page");
    for (flavour, content_type, body) in [
        ("html", "text/html", html(&files)),
        ("json", "application/vnd.pypi.simple.v1+json", json(&files)),
    ] {
        let project =
            Project::from_page(&name, &url, Some(content_type), &body, source.clone()).unwrap();
        assert_eq!(project.files.len(), FILES, "{flavour}");
        group.bench_function(flavour, |b| {
            b.iter(|| {
                Project::from_page(&name, &url, Some(content_type), &body, source.clone()).unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
