use crate::{read_lock, write_lock, BuildRef, Lock};

const SHA: &str = "2222222222222222222222222222222222222222222222222222222222222222";

fn wheel(file: &str) -> String {
    format!("{{ url = \"https://example.org/f/{file}\", hashes = {{ sha256 = \"{SHA}\" }} }}")
}

/// A family lock as the agreed format writes it: torch from two builds (two entries of one
/// name), a library only the CUDA build brings in, one entry of every build.
fn family_lock() -> String {
    format!(
        r#"lock-version = "1.0"
created-by = "vari"

[[packages]]
name = "filelock"
version = "3.0"
wheels = [
    {filelock},
]

[[packages]]
name = "nvidia-cublas-cu12"
version = "12.8.4"
wheels = [
    {cublas},
]

[packages.tool.vari]
builds = [{{ family = "torch", build = "cu128" }}]

[[packages]]
name = "torch"
version = "2.9.0+cpu"
index = "https://download.example/whl/cpu/"
wheels = [
    {torch_cpu},
]

[packages.tool.vari]
builds = [{{ family = "torch", build = "cpu" }}]

[[packages]]
name = "torch"
version = "2.9.0+cu128"
index = "https://download.example/whl/cu128/"
wheels = [
    {torch_cu},
]

[packages.tool.vari]
builds = [{{ family = "torch", build = "cu128" }}]

[tool.vari]
requirements = ["torch"]
targets = [
    {{ name = "cpu" }},
    {{ name = "a100" }},
]

[[tool.vari.families]]
name = "torch"
group = "pytorch"

[[tool.vari.families.builds]]
name = "cu128"
distribution = "torch"
requires = ["nvidia :: cuda_version_lower_bound :: 12.8"]
classes = ["a100"]

[[tool.vari.families.builds]]
name = "cpu"
distribution = "torch"
null = true
classes = ["cpu"]
"#,
        filelock = wheel("filelock-3.0-py3-none-any.whl"),
        cublas = wheel("nvidia_cublas_cu12-12.8.4-py3-none-manylinux_2_28_x86_64.whl"),
        torch_cpu = wheel("torch-2.9.0%2Bcpu-cp312-cp312-manylinux_2_28_x86_64.whl"),
        torch_cu = wheel("torch-2.9.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl"),
    )
}

fn rejected(text: &str) -> String {
    read_lock(text).unwrap_err().to_string()
}

#[test]
fn a_family_lock_reads_and_is_written_as_the_agreed_format() {
    let text = family_lock();
    let lock = read_lock(&text).unwrap();
    let families = &lock.vari.as_ref().unwrap().families;
    assert_eq!(families.len(), 1);
    let torch = &families[0];
    assert_eq!(torch.group.as_deref(), Some("pytorch"));
    assert_eq!(torch.builds[0].name, "cu128");
    assert_eq!(
        torch.builds[0].requires[0].to_string(),
        "nvidia :: cuda_version_lower_bound :: 12.8"
    );
    assert!(torch.builds[1].null && torch.builds[1].requires.is_empty());
    assert_eq!(torch.builds[1].classes, ["cpu"]);
    let refs = |i: usize| lock.packages[i].vari.as_ref().unwrap().builds.clone();
    assert!(lock.packages[0].vari.is_none());
    assert_eq!(
        refs(3),
        [BuildRef {
            family: "torch".into(),
            build: "cu128".into()
        }]
    );
    assert!(lock.packages[1]
        .vari
        .as_ref()
        .unwrap()
        .brought_by("torch", "cu128"));

    let written = write_lock(&lock).unwrap();
    // Exactly the agreed layout, so that what was read is what is written.
    assert_eq!(written, text);
    assert_eq!(read_lock(&written).unwrap(), lock);
}

#[test]
fn families_are_written_sorted_by_name_and_builds_in_their_order() {
    let mut lock = read_lock(&family_lock()).unwrap();
    let info = lock.vari.as_mut().unwrap();
    let mut cupy = info.families[0].clone();
    cupy.name = "cupy".into();
    cupy.group = None;
    cupy.builds.reverse();
    info.families.push(cupy);
    let written = write_lock(&lock).unwrap();
    let cupy_at = written.find("name = \"cupy\"").unwrap();
    let torch_at = written.find("name = \"torch\"\ngroup").unwrap();
    assert!(cupy_at < torch_at, "{written}");
    let cupy_part = &written[cupy_at..torch_at];
    assert!(
        cupy_part.find("\"cpu\"").unwrap() < cupy_part.find("\"cu128\"").unwrap(),
        "{cupy_part}"
    );
    // Sorting is the writer's: reading and writing again gives the same bytes.
    assert_eq!(write_lock(&read_lock(&written).unwrap()).unwrap(), written);
}

#[test]
fn a_lock_without_families_writes_no_family_key() {
    let text = family_lock();
    let start = text.find("\n[[tool.vari.families]]").unwrap();
    let plain = text[..start]
        .replace(
            "\n[packages.tool.vari]\nbuilds = [{ family = \"torch\", build = \"cu128\" }]\n",
            "",
        )
        .replace(
            "\n[packages.tool.vari]\nbuilds = [{ family = \"torch\", build = \"cpu\" }]\n",
            "",
        )
        .replace("+cpu", "+cpu.1")
        .replace("%2Bcpu-", "%2Bcpu.1-");
    let lock = read_lock(&plain).unwrap();
    assert!(lock.vari.as_ref().unwrap().families.is_empty());
    assert_eq!(write_lock(&lock).unwrap(), plain);
}

#[test]
fn names_are_read_in_any_spelling_and_kept_normal() {
    let text = family_lock()
        .replace(
            "name = \"torch\"\ngroup = \"pytorch\"",
            "name = \"Torch\"\ngroup = \"PyTorch\"",
        )
        .replace(
            "family = \"torch\", build = \"cpu\"",
            "family = \"TORCH\", build = \"cpu\"",
        );
    let lock = read_lock(&text).unwrap();
    let family = &lock.vari.as_ref().unwrap().families[0];
    assert_eq!(
        (family.name.as_str(), family.group.as_deref()),
        ("torch", Some("pytorch"))
    );
    assert_eq!(write_lock(&lock).unwrap(), family_lock());
}

#[test]
fn unknown_keys_in_the_family_tables_are_refused() {
    let text = family_lock().replace("group = \"pytorch\"", "group = \"pytorch\"\nindex = 1");
    assert_eq!(
        rejected(&text),
        "tool.vari.families[0].index: is not a known key"
    );
    let text = family_lock().replace("null = true", "null = true\nfits = \"all\"");
    assert_eq!(
        rejected(&text),
        "tool.vari.families[0].builds[1].fits: is not a known key"
    );
    let text = family_lock().replace(
        "{ family = \"torch\", build = \"cpu\" }",
        "{ family = \"torch\", build = \"cpu\", always = true }",
    );
    assert_eq!(
        rejected(&text),
        "packages[2].tool.vari.builds[0].always: is not a known key"
    );
}

#[test]
fn references_name_recorded_builds() {
    let text = family_lock().replace("build = \"cpu\" }", "build = \"rocm6.4\" }");
    assert_eq!(
        rejected(&text),
        "packages[2].tool.vari.builds[0]: family \"torch\" has no locked build \"rocm6.4\""
    );
    let text = family_lock().replace(
        "family = \"torch\", build = \"cpu\"",
        "family = \"jax\", build = \"cpu\"",
    );
    assert_eq!(
        rejected(&text),
        "packages[2].tool.vari.builds[0]: family \"jax\" is not in tool.vari.families"
    );
    let text = family_lock().replace(
        "builds = [{ family = \"torch\", build = \"cpu\" }]",
        "builds = [{ family = \"torch\", build = \"cpu\" }, { family = \"torch\", build = \"cpu\" }]",
    );
    assert!(
        rejected(&text).contains("packages[2].tool.vari.builds[1]: "),
        "{}",
        rejected(&text)
    );
    assert!(rejected(&text).contains("is listed twice"));
}

#[test]
fn two_entries_of_one_name_need_disjoint_builds() {
    // Both torch entries brought in by cu128: one machine would install both.
    let text = family_lock().replace("build = \"cpu\" }", "build = \"cu128\" }");
    assert_eq!(
        rejected(&text),
        "packages[3].tool.vari.builds: packages[2] and packages[3] are both torch and both come in \
         with build cu128 of torch; entries of one name need disjoint builds"
    );
    // One of them with no builds at all: installed everywhere, beside the other.
    let text = family_lock().replace(
        "\n[packages.tool.vari]\nbuilds = [{ family = \"torch\", build = \"cpu\" }]\n",
        "",
    );
    assert!(
        rejected(&text).starts_with(
            "packages[2].tool.vari.builds: is missing: packages[2] and packages[3] are both torch"
        ),
        "{}",
        rejected(&text)
    );
}

#[test]
fn builds_are_checked_as_the_catalog_checks_them() {
    let cases = [
        (
            family_lock().replace("null = true", "null = true\nrequires = [\"nvidia :: cuda_version_lower_bound :: 12.8\"]"),
            "tool.vari.families[0].builds[1].requires: the null (CPU) build requires nothing",
        ),
        (
            family_lock().replace(
                "requires = [\"nvidia :: cuda_version_lower_bound :: 12.8\"]\n",
                "",
            ),
            "tool.vari.families[0].builds[0].requires: is empty: a build other than the null (CPU) \
             one requires something, or it would fit every machine",
        ),
        (
            family_lock().replace("name = \"cu128\"\ndistribution", "name = \"cpu\"\ndistribution"),
            "tool.vari.families[0].builds[1].name: build \"cpu\" is listed twice",
        ),
        (
            family_lock().replace("12.8\"]", "12.8\"]\nnull = true").replace(
                "requires = [\"nvidia :: cuda_version_lower_bound :: 12.8\"]\nnull = true",
                "null = true",
            ),
            "tool.vari.families[0].builds[1].null: a family has one null build at most (\"cu128\" is one already)",
        ),
        (
            family_lock().replace(":: 12.8\"]", ":: 12.8\", \"nvidia\"]"),
            "tool.vari.families[0].builds[0].requires[1]: \"nvidia\": ",
        ),
        (
            family_lock().replace("name = \"cu128\"", "name = \"CU-128\""),
            "tool.vari.families[0].builds[0].name: \"CU-128\" is not a build name",
        ),
        (
            family_lock().replace("name = \"cu128\"", "name = \"cu128cu128cu128cu128\""),
            "tool.vari.families[0].builds[0].name: \"cu128cu128cu128cu128\" is longer than 16 characters",
        ),
        (
            family_lock().replace("classes = [\"a100\"]", "classes = [\"h100\"]"),
            "tool.vari.families[0].builds[0].classes[0]: \"h100\" is not one of the lock's targets",
        ),
        (
            family_lock().replace("distribution = \"torch\"\nnull", "distribution = \"torch/../x\"\nnull"),
            "tool.vari.families[0].builds[1].distribution: \"torch/../x\" is not a valid name",
        ),
        (
            {
                let text = family_lock();
                let start = text.find("\n[[tool.vari.families.builds]]").unwrap();
                format!("{}builds = []\n", &text[..start])
            },
            "tool.vari.families[0].builds: lists no build",
        ),
    ];
    for (text, expected) in cases {
        let error = rejected(&text);
        assert!(
            error.starts_with(expected),
            "{error}\n(expected {expected})"
        );
    }
}

#[test]
fn counts_are_bounded() {
    let build =
        "[[tool.vari.families.builds]]\nname = \"cpu\"\ndistribution = \"torch\"\nnull = true\n";
    let many = format!(
        "lock-version = \"1.0\"\ncreated-by = \"x\"\npackages = []\n[tool.vari]\n[[tool.vari.families]]\nname = \"torch\"\n{}",
        build.repeat(crate::MAX_BUILDS + 1)
    );
    assert_eq!(
        rejected(&many),
        format!(
            "tool.vari.families[0].builds: has more than {} entries",
            crate::MAX_BUILDS
        )
    );
    let family = "[[tool.vari.families]]\nname = \"torch\"\n[[tool.vari.families.builds]]\nname = \"cpu\"\ndistribution = \"torch\"\nnull = true\n";
    let many = format!(
        "lock-version = \"1.0\"\ncreated-by = \"x\"\npackages = []\n[tool.vari]\n{}",
        family.repeat(crate::MAX_FAMILIES + 1)
    );
    assert_eq!(
        rejected(&many),
        format!(
            "tool.vari.families: has more than {} entries",
            crate::MAX_FAMILIES
        )
    );
    let twice = format!(
        "lock-version = \"1.0\"\ncreated-by = \"x\"\npackages = []\n[tool.vari]\n{}",
        family.repeat(2)
    );
    assert_eq!(
        rejected(&twice),
        "tool.vari.families[1].name: family \"torch\" is listed twice"
    );
}

#[test]
fn the_writer_refuses_what_the_reader_refuses() {
    let base = read_lock(&family_lock()).unwrap();
    let refused = |edit: &dyn Fn(&mut Lock)| {
        let mut lock = base.clone();
        edit(&mut lock);
        write_lock(&lock).unwrap_err().to_string()
    };
    assert_eq!(
        refused(&|lock| lock.vari.as_mut().unwrap().families[0].name = "Torch".into()),
        "tool.vari.families[0].name: \"Torch\" is not in normal form (write \"torch\")"
    );
    assert!(refused(
        &|lock| lock.packages[2].vari.as_mut().unwrap().builds[0].build = "cu128".into()
    )
    .contains("need disjoint builds"));
    assert!(refused(
        &|lock| lock.packages[1].vari.as_mut().unwrap().builds[0].family = "cupy".into()
    )
    .contains("family \"cupy\" is not in tool.vari.families"));
    assert!(refused(
        &|lock| lock.vari.as_mut().unwrap().families[0].builds[1].classes = vec!["a\nb".into()]
    )
    .starts_with("tool.vari.families[0].builds[1].classes[0]: holds the character"));
}
