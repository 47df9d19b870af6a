use super::*;
use crate::write_lock;

const SHA: &str = "1111111111111111111111111111111111111111111111111111111111111111";

fn torch_like() -> String {
    format!(
        r#"lock-version = "1.0"
requires-python = ">=3.10"
extras = ["cuda"]
created-by = "vari"

[[packages]]
name = "torch_like"
version = "2.9.0"
index = "https://example.org/simple/"
wheels = [
    {{ url = "https://example.org/f/torch_like-2.9.0-cp312-cp312-manylinux_2_28_x86_64-cu128.whl", size = 10, hashes = {{ sha256 = "{SHA}" }} }},
    {{ url = "https://example.org/f/torch_like-2.9.0-cp312-cp312-manylinux_2_28_x86_64-null.whl", size = 5, hashes = {{ sha256 = "{SHA}" }} }},
    {{ name = "torch_like-2.9.0-cp312-cp312-manylinux_2_28_x86_64.whl", path = "wheels/plain.whl", hashes = {{ sha256 = "{SHA}" }} }},
]

[packages.variants-json]
"$schema" = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json"

[packages.variants-json.default-priorities]
namespace = ["nvidia"]

[packages.variants-json.variants]
null = {{}}
cu128 = {{ nvidia = {{ cuda_version_lower_bound = ["12.8"] }} }}

[packages.tool.vari]
variant-dependencies = ["cuda-runtime-like>=12 ; 'nvidia' in variant_namespaces"]
targets = ["a100", "cpu"]

[packages.tool.other]
kept = {{ a = 1 }}

[[packages]]
name = "cuda-runtime-like"
version = "12.8.1"
wheels = [{{ url = "https://example.org/f/cuda_runtime_like-12.8.1-py3-none-manylinux_2_28_x86_64.whl", hashes = {{ sha256 = "{SHA}" }} }}]

[packages.tool.vari]
through-variants = true

[tool.vari]
inputs-hash = "sha256:{SHA}"
requirements = ["torch-like"]
targets = [{{ name = "a100", profile = "a100.toml", python-version = "3.12" }}, {{ name = "cpu" }}]

[tool.someone-else]
x = [1, 2]
"#
    )
}

#[test]
fn a_lock_with_variants_reads_and_writes_back_the_same() {
    let lock = read_lock(&torch_like()).unwrap();
    assert_eq!(lock.packages.len(), 2);
    let torch = &lock.packages[0];
    assert_eq!(torch.name, "torch-like");
    assert_eq!(torch.wheels.len(), 3);
    assert_eq!(torch.variants_json.as_ref().unwrap().variants.len(), 2);
    assert_eq!(torch.vari.as_ref().unwrap().variant_dependencies.len(), 1);
    assert!(lock.packages[1].vari.as_ref().unwrap().through_variants);
    assert_eq!(lock.vari.as_ref().unwrap().targets[0].name, "a100");
    assert!(lock.other_tools.contains_key("someone-else"));
    assert!(torch.other.contains_key("tool"));

    let written = write_lock(&lock).unwrap();
    let again = read_lock(&written).unwrap();
    assert_eq!(again, lock);
    assert_eq!(
        write_lock(&again).unwrap(),
        written,
        "same lock, same bytes"
    );
    // The layout PEP 751 and PEP 825 show: wheels one per line, labels inline.
    assert!(written.contains("wheels = [\n    { url = "), "{written}");
    assert!(
        written.contains("[packages.tool.other]\nkept = { a = 1 }"),
        "{written}"
    );
    assert!(
        written.contains("[tool.someone-else]\nx = [1, 2]"),
        "{written}"
    );
    assert!(
        written.contains("[packages.variants-json.variants]\ncu128 = { nvidia = "),
        "{written}"
    );
}

fn rejected(text: &str) -> String {
    read_lock(text).unwrap_err().to_string()
}

fn with_wheel(wheel: &str) -> String {
    format!(
        "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"1.0\"\nwheels = [{wheel}]\n"
    )
}

#[test]
fn paths_that_leave_the_lock_directory_are_refused() {
    for path in [
        "/etc/passwd",
        "../a-1.0-py3-none-any.whl",
        "w/../../a-1.0-py3-none-any.whl",
        "C:/a-1.0-py3-none-any.whl",
        "w\\\\a-1.0-py3-none-any.whl",
    ] {
        let text = with_wheel(&format!(
            "{{ path = \"{path}\", hashes = {{ sha256 = \"{SHA}\" }} }}"
        ));
        let err = rejected(&text);
        assert!(
            err.starts_with("packages[0].wheels[0].path: "),
            "{path}: {err}"
        );
    }
}

#[test]
fn only_http_urls_without_credentials_are_accepted() {
    let file = with_wheel(&format!(
        "{{ url = \"file:///etc/a-1.0-py3-none-any.whl\", hashes = {{ sha256 = \"{SHA}\" }} }}"
    ));
    assert!(rejected(&file).contains("only http and https"));
    let creds = with_wheel(&format!("{{ url = \"https://u:secret@x.org/a-1.0-py3-none-any.whl\", hashes = {{ sha256 = \"{SHA}\" }} }}"));
    let err = rejected(&creds);
    assert!(
        err.contains("credentials") && !err.contains("secret"),
        "{err}"
    );
}

#[test]
fn hashes_must_be_present_and_well_formed() {
    let none = with_wheel("{ url = \"https://x.org/a-1.0-py3-none-any.whl\", hashes = {} }");
    assert!(rejected(&none).contains("lists no hash"));
    let short = with_wheel(
        "{ url = \"https://x.org/a-1.0-py3-none-any.whl\", hashes = { sha256 = \"abc\" } }",
    );
    assert_eq!(
        rejected(&short),
        "packages[0].wheels[0].hashes.sha256: \"abc\" is not a sha256 digest in hex"
    );
}

#[test]
fn wheels_must_belong_to_their_entry() {
    let other = with_wheel(&format!(
        "{{ url = \"https://x.org/b-1.0-py3-none-any.whl\", hashes = {{ sha256 = \"{SHA}\" }} }}"
    ));
    assert!(rejected(&other).contains("is not a wheel of a"));
    let version = with_wheel(&format!(
        "{{ url = \"https://x.org/a-2.0-py3-none-any.whl\", hashes = {{ sha256 = \"{SHA}\" }} }}"
    ));
    assert!(rejected(&version).contains("is version 2.0"));
    let label = with_wheel(&format!("{{ url = \"https://x.org/a-1.0-py3-none-any-cu128.whl\", hashes = {{ sha256 = \"{SHA}\" }} }}"));
    assert_eq!(
        rejected(&label),
        "packages[0].wheels[0]: variant label cu128 is not defined in packages[0].variants-json"
    );
}

#[test]
fn structure_errors_name_the_key() {
    assert_eq!(
        rejected("created-by = \"x\"\npackages = []\n"),
        "lock-version: is missing"
    );
    assert_eq!(
        rejected("lock-version = \"1.0\"\ncreated-by = \"x\"\n"),
        "packages: is missing (PEP 751 requires it, even if empty)"
    );
    assert!(
        rejected("lock-version = \"1.0\"\ncreated-by = \"x\"\npackages = [1]\n")
            .starts_with("packages[0]: must be a table")
    );
    assert!(rejected("lock-version = 1\n").starts_with("lock-version: must be a string"));
    assert!(rejected("lock-version = \"1.0\"\nx = [\n").starts_with("line "));
    let deep = format!(
        "lock-version = \"1.0\"\nx = {}1{}\n",
        "[".repeat(200),
        "]".repeat(200)
    );
    assert!(rejected(&deep).contains("nests deeper"));
    let bad_dep = "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\n[packages.tool.vari]\nvariant-dependencies = [\"b ; 'nvidia' in\"]\n";
    assert!(rejected(bad_dep).starts_with("packages[0].tool.vari.variant-dependencies[0]: "));
}

#[test]
fn a_newer_minor_version_is_read() {
    let lock =
        read_lock("lock-version = \"1.3\"\ncreated-by = \"x\"\npackages = []\nfuture-key = 1\n")
            .unwrap();
    assert_eq!(lock.lock_version, "1.3");
}

/// A TOML basic string holding `text` (every character outside printable ASCII escaped).
fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            _ => out.push_str(&format!("\\U{:08X}", c as u32)),
        }
    }
    out.push('"');
    out
}

#[test]
fn line_breaks_controls_whitespace_and_comments_in_file_names_are_refused() {
    // Each would add a line (an option, an unhashed requirement) or a comment to an exported
    // requirements file: pip splits lines as Python's str.splitlines() does.
    let hostile = [
        "\n--index-url=https://evil.example/simple/",
        "\r--index-url=https://evil.example/simple/",
        "\u{2028}--index-url=https://evil.example/simple/",
        "\u{2029}x",
        "\u{85}x",
        "\u{b}x",
        "\u{c}x",
        "\u{1e}x",
        "\u{0}x",
        "\t#",
        " #",
        " --hash=sha256:00",
        "\u{a0}x",
        "\u{3000}x",
        "\u{202e}x",
        "#x",
    ];
    for tail in hostile {
        let path = format!("wheels/a-1.0-py3-none-any.whl{tail}");
        let text = with_wheel(&format!(
            "{{ name = \"a-1.0-py3-none-any.whl\", path = {}, hashes = {{ sha256 = \"{SHA}\" }} }}",
            toml_string(&path)
        ));
        let err = rejected(&text);
        assert!(
            err.starts_with("packages[0].wheels[0].path: "),
            "{tail:?}: {err}"
        );
        let name = format!("a-1.0-py3-none-any.whl{tail}");
        let text = with_wheel(&format!(
            "{{ name = {}, path = \"w/a.whl\", hashes = {{ sha256 = \"{SHA}\" }} }}",
            toml_string(&name)
        ));
        let err = rejected(&text);
        assert!(
            err.starts_with("packages[0].wheels[0].name: "),
            "{tail:?}: {err}"
        );
        let url = format!("https://x.org/a-1.0-py3-none-any.whl{tail}");
        let text = with_wheel(&format!(
            "{{ url = {}, hashes = {{ sha256 = \"{SHA}\" }} }}",
            toml_string(&url)
        ));
        if !tail.starts_with('#') {
            let err = rejected(&text);
            assert!(
                err.starts_with("packages[0].wheels[0].url: "),
                "{tail:?}: {err}"
            );
        }
    }
    // Every other string: no line breaks or controls (whitespace is fine).
    let marker = "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nmarker = \"python_version >= '3'\\u2028x\"\n";
    assert!(rejected(marker).starts_with("packages[0].marker: holds the character"));
    let created =
        "lock-version = \"1.0\"\ncreated-by = \"vari\\r\\n--index-url x\"\npackages = []\n";
    assert!(rejected(created).starts_with("created-by: holds the character"));
    let requirement = "lock-version = \"1.0\"\ncreated-by = \"x\"\npackages = []\n[tool.vari]\nrequirements = [\"a\\nb\"]\n";
    assert!(rejected(requirement).starts_with("tool.vari.requirements[0]: holds the character"));
    let time = with_wheel(&format!(
        "{{ url = \"https://x.org/a-1.0-py3-none-any.whl\", upload-time = \"now\\n-i x\", hashes = {{ sha256 = \"{SHA}\" }} }}"
    ));
    assert!(rejected(&time).starts_with("packages[0].wheels[0].upload-time: holds the character"));
    // Legal names stay legal.
    let fine = with_wheel(&format!(
        "{{ name = \"a-1.0-py3-none-any.whl\", path = \"wheels/sub+dir~/ä.whl\", hashes = {{ sha256 = \"{SHA}\" }} }}"
    ));
    assert!(read_lock(&fine).is_ok());
}

/// A variant dependency whose marker names many properties: legal, and far above the 8 KiB a
/// string was once limited to.
fn long_marker_lock(properties: usize) -> String {
    let alternatives: Vec<String> = (0..properties)
        .map(|i| format!("'nvidia :: sm_arch :: {i}_real' in variant_properties"))
        .collect();
    format!(
        "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"1.0\"\n\
         [packages.tool.vari]\nvariant-dependencies = [\"b ; {}\"]\n",
        alternatives.join(" or ")
    )
}

#[test]
fn what_the_writer_writes_the_reader_reads_and_the_limits_are_one() {
    // 118 KB of marker: read, written, read back.
    let text = long_marker_lock(2_400);
    assert!(text.len() > 118_000, "{}", text.len());
    let lock = read_lock(&text).expect("a long legal marker is read");
    let written = write_lock(&lock).expect("and written");
    assert_eq!(read_lock(&written).unwrap(), lock);
    // Past the one limit, both sides refuse, naming the key.
    let mut over = lock.clone();
    let info = over.packages[0].vari.as_mut().unwrap();
    info.variant_dependencies[0].push_str(&" ".repeat(crate::limits::MAX_STRING));
    let err = write_lock(&over).unwrap_err().to_string();
    assert!(
        err.starts_with("packages[0].tool.vari.variant-dependencies[0]: is longer than"),
        "{err}"
    );
    let long = format!(
        "lock-version = \"1.0\"\ncreated-by = \"{}\"\npackages = []\n",
        "x".repeat(crate::limits::MAX_STRING + 1)
    );
    assert!(rejected(&long).starts_with("created-by: is longer than"));
    // A character the reader refuses is not written either.
    let mut hostile = lock.clone();
    hostile.packages[0].wheels.push(crate::Artifact {
        name: Some("a-1.0-py3-none-any.whl".into()),
        url: None,
        path: Some("w/a.whl\n--index-url=https://evil.example/".into()),
        size: None,
        upload_time: None,
        hashes: [("sha256".to_owned(), SHA.to_owned())].into(),
    });
    let err = write_lock(&hostile).unwrap_err().to_string();
    assert!(err.starts_with("packages[0].wheels[0].path: "), "{err}");
    // Too many entries: refused by both.
    let mut many = lock;
    many.packages = vec![many.packages[0].clone(); crate::MAX_PACKAGES + 1];
    assert!(write_lock(&many)
        .unwrap_err()
        .to_string()
        .starts_with("packages: has more than"));
}

#[test]
fn find_links_and_pre_are_recorded_and_read_back() {
    let base = "lock-version = \"1.0\"\ncreated-by = \"x\"\npackages = []\n[tool.vari]\n";
    // An old lock without them reads as before.
    let old = read_lock(&format!("{base}requirements = [\"a\"]\n")).unwrap();
    let info = old.vari.unwrap();
    assert!(info.find_links.is_empty());
    assert!(!info.pre);
    let text = format!(
        "{base}find-links = [\"wheels\", \"/srv/wheelhouse\", \"https://example.org/links.html\"]\npre = true\n"
    );
    let lock = read_lock(&text).unwrap();
    let info = lock.vari.as_ref().unwrap();
    assert_eq!(
        info.find_links,
        [
            "wheels",
            "/srv/wheelhouse",
            "https://example.org/links.html"
        ]
    );
    assert!(info.pre);
    let written = write_lock(&lock).unwrap();
    assert!(written.contains("pre = true"), "{written}");
    assert_eq!(read_lock(&written).unwrap(), lock);
    // Not pre: nothing written.
    let mut plain = lock.clone();
    plain.vari.as_mut().unwrap().pre = false;
    assert!(!write_lock(&plain).unwrap().contains("pre ="));
    // Hostile entries are refused, naming the key.
    for bad in [
        "\"\"",
        "\"file:///etc\"",
        "\"ftp://example.org/x\"",
        "\"https://u:p@example.org/x\"",
        "\"a\\nb\"",
    ] {
        let message = rejected(&format!("{base}find-links = [{bad}]\n"));
        assert!(message.starts_with("tool.vari.find-links[0]"), "{message}");
    }
    let message = rejected(&format!("{base}pre = \"yes\"\n"));
    assert!(message.starts_with("tool.vari.pre"), "{message}");
}

/// A `variants-json` whose `$schema` is not the URL the writer writes for its generation (a
/// later patch release, or text around it) is read as that URL: what is read is written and
/// read back the same (found by the stable round-trip test of the `lock` fuzz target).
#[test]
fn a_schema_url_is_read_as_the_writer_writes_it() {
    for schema in [
        "https://variants-schema.wheelnext.dev/peps/825/v0.1.7.json",
        "httu128 = { nvidips://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
    ] {
        let text = torch_like().replace(
            "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
            schema,
        );
        let lock = read_lock(&text).unwrap();
        let meta = lock.packages[0].variants_json.as_ref().unwrap();
        assert_eq!(
            meta.schema_url.as_deref(),
            Some("https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json")
        );
        let again = read_lock(&write_lock(&lock).unwrap()).unwrap();
        assert_eq!(again, lock, "{schema}");
    }
}
