//! Hand-made hostile wheels and configs: every reader refuses them with an error naming the
//! wheel (or config file and key) and the member at fault, before inflating or writing
//! anything, and nothing is written outside the output directory.

use std::path::{Path, PathBuf};

use vari_wheel::{
    check_listing, inspect, make_variant, repack, replace_metadata, unmake, validate, BuildMatch,
    BuildRule, LabelChoice, RepackConfig, RequiresDistEdit, ValidValues, VariantSpec,
    WheelErrorKind,
};

use crate::support::{demo_entries, plain_wheel, raw_zip, snapshot, write_demo, RawEntry};

/// A workspace: `canary/` (a file that must never change), `in/` (the input), and `out`, the
/// output directory (not created).
struct Site {
    _dir: tempfile::TempDir,
    root: PathBuf,
    input: PathBuf,
    out: PathBuf,
}

impl Site {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_owned();
        std::fs::create_dir(root.join("canary")).unwrap();
        std::fs::write(root.join("canary/keep.txt"), b"canary").unwrap();
        std::fs::create_dir(root.join("in")).unwrap();
        Self {
            input: root.join("in"),
            out: root.join("out"),
            root,
            _dir: dir,
        }
    }

    /// Runs `f` and checks that nothing under the workspace changed and `out` was not created.
    fn writes_nothing(&self, f: impl FnOnce()) {
        let before = snapshot(&self.root);
        f();
        assert_eq!(snapshot(&self.root), before, "files changed");
        assert!(!self.out.exists(), "the output directory was created");
    }
}

/// The spec every writing test uses (no provider needed).
fn spec() -> VariantSpec {
    VariantSpec {
        properties: vec!["x86_64 :: level :: v3".parse().unwrap()],
        skip_validation: true,
        ..VariantSpec::default()
    }
}

/// The problems of `validate`, as messages naming the wheel.
fn messages(wheel: &Path) -> Vec<String> {
    validate(wheel)
        .unwrap()
        .errors()
        .map(|e| e.to_string())
        .collect()
}

/// Checks that `validate`, `inspect` and `make_variant` all refuse `wheel`, each naming it and
/// `member` with `needle`, and that nothing is written.
fn refused_everywhere(site: &Site, wheel: &Path, member: &str, needle: &str) {
    let named = |text: &str| {
        text.contains(&wheel.display().to_string())
            && text.contains(&format!("`{member}`"))
            && text.contains(needle)
    };
    let all = messages(wheel);
    assert!(all.iter().any(|m| named(m)), "{member:?}: {all:#?}");
    let e = inspect(wheel).unwrap_err().to_string();
    assert!(named(&e), "inspect: {e}");
    site.writes_nothing(|| {
        let e = make_variant(wheel, &site.out, &spec(), &ValidValues::default())
            .unwrap_err()
            .to_string();
        assert!(named(&e), "make-variant: {e}");
    });
}

fn hostile_member(site: &Site, entry: RawEntry, contents: &[u8]) -> PathBuf {
    let bytes = raw_zip(&demo_entries(vec![(entry, contents.to_vec())]), &[]);
    write_demo(&site.input, &bytes)
}

#[test]
fn members_that_leave_the_install_directory_are_refused() {
    let cases = [
        ("../evil.py", "`..`"),
        ("demo/../../evil.py", "`..`"),
        ("/tmp/evil.py", "absolute"),
        ("C:/evil.py", "drive letter"),
        ("C:\\evil.py", "backslash"),
        ("demo\\..\\..\\evil.py", "backslash"),
        ("demo//evil.py", "empty or `.`"),
        ("./demo/evil.py", "empty or `.`"),
        ("demo/\nevil.py", "control character"),
    ];
    for (name, needle) in cases {
        let site = Site::new();
        let wheel = hostile_member(&site, RawEntry::stored(name, b"x"), b"x");
        let shown = name.replace('\n', "\\n");
        refused_everywhere(&site, &wheel, &shown, needle);
    }
}

#[test]
fn symbolic_links_and_special_files_are_refused() {
    for (mode, needle) in [
        (0o120_777, "is a symbolic link"),
        (0o010_644, "not a regular file (unix mode 0o10644)"),
        (0o020_644, "not a regular file"),
    ] {
        let site = Site::new();
        let link = RawEntry {
            mode,
            ..RawEntry::stored("demo/link.py", b"/etc/passwd")
        };
        let wheel = hostile_member(&site, link, b"/etc/passwd");
        refused_everywhere(&site, &wheel, "demo/link.py", needle);
    }
}

#[test]
fn duplicate_names_are_refused() {
    let site = Site::new();
    let mut entries = demo_entries(vec![(
        RawEntry::stored("demo/x.py", b"one"),
        b"one".to_vec(),
    )]);
    // A second `demo/x.py` with other contents, which RECORD does not list.
    let record = entries.pop().unwrap();
    entries.push(RawEntry::stored("demo/x.py", b"two"));
    entries.push(record);
    let wheel = write_demo(&site.input, &raw_zip(&entries, &[]));
    refused_everywhere(&site, &wheel, "demo/x.py", "appears 2 times");
}

#[test]
fn names_that_read_differently_elsewhere_are_refused() {
    // The central directory names the member `demo/b.py`, its local header `demo/a.py`: a
    // reader streaming the archive would install `demo/a.py`.
    let site = Site::new();
    let streamed = RawEntry {
        listed_as: Some(b"demo/b.py".to_vec()),
        ..RawEntry::stored("demo/a.py", b"x")
    };
    let wheel = hostile_member(&site, streamed, b"x");
    let needle = "is named `demo/a.py` in its local header";
    assert!(messages(&wheel)
        .iter()
        .any(|m| m.contains("`demo/b.py` ") && m.contains(needle)));
    site.writes_nothing(|| {
        let e = make_variant(&wheel, &site.out, &spec(), &ValidValues::default()).unwrap_err();
        assert!(e.to_string().contains(needle), "{e}");
    });
    // A Unicode Path extra field (which the zip crate honours and Python's zipfile does not)
    // naming it `../evil.py`.
    let site = Site::new();
    let mut extra = vec![0x75, 0x70, 15, 0, 1];
    extra.extend_from_slice(&crc32fast::hash(b"demo/c.py").to_le_bytes());
    extra.extend_from_slice(b"../evil.py");
    let renamed = RawEntry {
        central_extra: extra,
        ..RawEntry::stored("demo/c.py", b"x")
    };
    let wheel = hostile_member(&site, renamed, b"x");
    refused_everywhere(
        &site,
        &wheel,
        "demo/c.py",
        "Unicode Path extra field naming it `../evil.py`",
    );
}

/// The overlapping-files zip bomb (David Fifield, "A better zip bomb"): one member's data holds
/// the next member's local header and data.
#[test]
fn overlapping_members_are_refused_before_inflating() {
    let site = Site::new();
    let a = RawEntry::stored("demo/a.bin", b"aaaa");
    let b = RawEntry::stored("demo/b.bin", b"bbbb");
    let mut entries = demo_entries(vec![(a, b"aaaa".to_vec()), (b, b"bbbb".to_vec())]);
    let a_index = entries.len() - 3;
    // `a` claims to run to the end of `b`'s data.
    entries[a_index].claimed_compressed = Some(4 + 30 + 10 + 4);
    let wheel = write_demo(&site.input, &raw_zip(&entries, &[]));
    let v = validate(&wheel).unwrap();
    assert!(
        v.problems.iter().any(|p| matches!(p,
            WheelErrorKind::OverlappingMembers { member, other }
                if member == "demo/b.bin" && other == "demo/a.bin")),
        "{:#?}",
        v.problems
    );
    assert_eq!(v.inflated, 0, "nothing is inflated");
    refused_everywhere(&site, &wheel, "demo/b.bin", "overlaps that of `demo/a.bin`");
}

/// 2,000 central-directory entries pointing at one deflated member (here 8 MiB of zeros).
#[test]
fn entries_sharing_one_member_are_refused_before_inflating() {
    let site = Site::new();
    let zeros = vec![0u8; 8 << 20];
    let bomb = RawEntry::deflated("demo/zeros.bin", &zeros);
    let entries = demo_entries(vec![(bomb, zeros)]);
    let target = entries.len() - 2;
    let aliases: Vec<(Vec<u8>, usize)> = (0..2000)
        .map(|i| (format!("demo/zeros{i}.bin").into_bytes(), target))
        .collect();
    let wheel = write_demo(&site.input, &raw_zip(&entries, &aliases));
    let v = validate(&wheel).unwrap();
    assert!(!v.is_ok());
    assert_eq!(
        v.inflated,
        0,
        "nothing is inflated: {:#?}",
        &v.problems[..3]
    );
    // inspect, which reads only the central directory's view, sees the overlaps.
    let e = inspect(&wheel).unwrap_err().to_string();
    assert!(e.contains("overlaps that of `demo/zeros"), "{e}");
}

#[test]
fn a_member_stops_inflating_at_its_declared_size() {
    let site = Site::new();
    let zeros = vec![0u8; 1 << 20];
    let liar = RawEntry {
        size: 1000,
        ..RawEntry::deflated("demo/zeros.bin", &zeros)
    };
    let wheel = hostile_member(&site, liar, &zeros);
    let v = validate(&wheel).unwrap();
    let text: Vec<String> = v.problems.iter().map(ToString::to_string).collect();
    assert!(
        text.iter().any(|t| t.contains("`demo/zeros.bin`")
            && t.contains("more than the 1000 bytes its header declares")),
        "{text:#?}"
    );
    assert!(v.inflated < 2000, "inflated {}", v.inflated);
}

#[test]
fn members_declaring_more_than_the_ceiling_are_not_inflated() {
    let site = Site::new();
    let zeros = vec![0u8; 1 << 16];
    let huge = RawEntry {
        size: 3 << 30,
        ..RawEntry::deflated("demo/zeros.bin", &zeros)
    };
    let wheel = hostile_member(&site, huge, &zeros);
    let v = validate(&wheel).unwrap();
    assert!(
        matches!(v.problems[0], WheelErrorKind::InflationCeiling { declared, .. } if declared >= 3 << 30),
        "{:#?}",
        v.problems
    );
    assert_eq!(v.inflated, 0);
    assert!(
        v.problems[0].to_string().contains("200 times"),
        "{}",
        v.problems[0]
    );
}

/// 50,000 members: validation is linear (the former check of each member against the list of
/// verified ones took minutes here), and inflates every member exactly once.
#[test]
fn many_members_validate_inflating_each_once() {
    let site = Site::new();
    let extra: Vec<(RawEntry, Vec<u8>)> = (0..50_000)
        .map(|i| {
            let contents = format!("VALUE = {i}\n").into_bytes();
            (
                RawEntry::stored(&format!("demo/m{i:05}.py"), &contents),
                contents,
            )
        })
        .collect();
    let entries = demo_entries(extra);
    let expected: u64 = entries[..entries.len() - 1].iter().map(|e| e.size).sum();
    let wheel = write_demo(&site.input, &raw_zip(&entries, &[]));
    let v = validate(&wheel).unwrap();
    assert!(v.is_ok(), "{:#?}", &v.problems[..v.problems.len().min(3)]);
    assert_eq!(v.inflated, expected);
    assert_eq!(v.record.unwrap().verified.len(), entries.len() - 1);
}

/// A TOML basic string holding `text`.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

const HOSTILE_NAMES: [&str; 6] = ["/abs/path", "../x", "a/b", "x\ny", "<script>", ".."];

#[test]
fn repack_config_names_are_project_names() {
    let path = Path::new("examples/evil.toml");
    for name in HOSTILE_NAMES {
        let top = format!(
            "name = {}\n[[build]]\nmatch = {{ name = \"demo\" }}\nlabel = \"null\"\n",
            toml_string(name)
        );
        let e = RepackConfig::parse(path, &top).unwrap_err().to_string();
        assert!(e.starts_with("examples/evil.toml: name: `"), "{e}");
        assert!(e.contains("not a valid project name"), "{e}");
        let build = format!(
            "[[build]]\nmatch = {{ name = \"demo\" }}\nlabel = \"null\"\nname = {}\n",
            toml_string(name)
        );
        let e = RepackConfig::parse(path, &build).unwrap_err().to_string();
        assert!(e.starts_with("examples/evil.toml: build[0].name: `"), "{e}");
    }
    for key in ["add = [", "remove = [", "replace = { a = "] {
        let close = if key.ends_with('[') { "]" } else { "}" };
        let text = format!(
            "requires-dist = {{ {key}{}{close} }}\n[[build]]\nmatch = {{ name = \"demo\" }}\nlabel = \"null\"\n",
            toml_string("numpy\nName: evil")
        );
        let e = RepackConfig::parse(path, &text).unwrap_err().to_string();
        assert!(
            e.starts_with("examples/evil.toml: requires-dist: `numpy\\nName: evil`"),
            "{e}"
        );
        assert!(e.contains("control character"), "{e}");
    }
}

/// A config built in code (which skips `RepackConfig::parse`) for the `demo` wheel.
fn config(name: Option<&str>, add: &[&str]) -> RepackConfig {
    RepackConfig {
        path: PathBuf::from("built.toml"),
        name: name.map(str::to_owned),
        strip_local_version: true,
        requires_dist: RequiresDistEdit {
            add: add.iter().map(|s| (*s).to_owned()).collect(),
            ..RequiresDistEdit::default()
        },
        builds: vec![BuildRule {
            matches: BuildMatch {
                name: Some("demo".to_owned()),
                ..BuildMatch::default()
            },
            label: LabelChoice::Default,
            properties: vec!["x86_64 :: level :: v3".parse().unwrap()],
            ..BuildRule::default()
        }],
        skip_validation: true,
        ..RepackConfig::default()
    }
}

#[test]
fn repack_writes_nothing_for_hostile_names_or_metadata() {
    let site = Site::new();
    let wheel = plain_wheel(&site.input, "demo", "1.0", "py3-none-any", &[]);
    for name in HOSTILE_NAMES.iter().copied().chain(["../canary/keep"]) {
        site.writes_nothing(|| {
            let e = repack(
                &config(Some(name), &[]),
                std::slice::from_ref(&wheel),
                &site.out,
                &ValidValues::default(),
                None,
            )
            .unwrap_err()
            .to_string();
            assert!(e.starts_with("built.toml: name: `"), "{e}");
        });
    }
    for injected in ["numpy\nName: evil", "numpy\rName: evil", "numpy\u{2028}x"] {
        site.writes_nothing(|| {
            let e = repack(
                &config(None, &[injected]),
                std::slice::from_ref(&wheel),
                &site.out,
                &ValidValues::default(),
                None,
            )
            .unwrap_err()
            .to_string();
            assert!(e.contains(&wheel.display().to_string()), "{e}");
            assert!(
                e.contains("METADATA") && e.contains("control character"),
                "{e}"
            );
        });
    }
    // A wheel whose own METADATA names it `../evil`, with no name in the config.
    let mut entries = demo_entries(Vec::new());
    entries[1] = RawEntry::stored(
        "demo-1.0.dist-info/METADATA",
        b"Metadata-Version: 2.1\nName: ../evil\nVersion: 1.0\n",
    );
    let evil = write_demo(&site.input, &raw_zip(&entries, &[]));
    site.writes_nothing(|| {
        let e = repack(
            &config(None, &[]),
            std::slice::from_ref(&evil),
            &site.out,
            &ValidValues::default(),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains(&evil.display().to_string())
                && e.contains("demo-1.0.dist-info/METADATA")
                && e.contains("`../evil` is not a valid project name"),
            "{e}"
        );
    });
    // And the good config writes, creating the output directory.
    let written = repack(
        &config(Some("demo"), &["numpy"]),
        &[wheel],
        &site.out,
        &ValidValues::default(),
        None,
    )
    .unwrap();
    assert_eq!(written.wheels[0].path.parent(), Some(site.out.as_path()));
    assert!(validate(&written.wheels[0].path).unwrap().is_ok());
}

#[test]
fn replace_metadata_refuses_line_breaks_in_fields() {
    let site = Site::new();
    let wheel = plain_wheel(&site.input, "demo", "1.0", "py3-none-any", &[]);
    let dest = site.out.join("demo-1.0-py3-none-any.whl");
    for metadata in [
        &b"Metadata-Version: 2.1\nName: demo\nSummary: a\rRequires-Dist: evil\nVersion: 1.0\n"[..],
        b"Metadata-Version: 2.1\nName: demo\x0b\nVersion: 1.0\n",
        b"Metadata-Version: 2.1\nName: \xff\n",
    ] {
        site.writes_nothing(|| {
            let e = replace_metadata(&wheel, &dest, metadata)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("METADATA") && e.contains("the replacement"),
                "{e}"
            );
        });
    }
    // A description may hold anything after the header block.
    std::fs::create_dir(&site.out).unwrap();
    replace_metadata(
        &wheel,
        &dest,
        b"Name: demo\nVersion: 1.0\n\nbody\r with \x1b escapes\n",
    )
    .unwrap();
}

#[test]
fn unmake_creates_its_output_directory() {
    let site = Site::new();
    let wheel = plain_wheel(&site.input, "demo", "1.0", "py3-none-any", &[]);
    let made = make_variant(
        &wheel,
        &site.out.join("a/b"),
        &spec(),
        &ValidValues::default(),
    )
    .unwrap();
    let plain = unmake(&made.path, &site.out.join("c")).unwrap();
    assert_eq!(plain.path, site.out.join("c/demo-1.0-py3-none-any.whl"));
}

/// The central directory of `bytes` (no archive comment, no zip64): its bytes and offset.
fn central_directory(bytes: &[u8]) -> (&[u8], u64) {
    let eocd = &bytes[bytes.len() - 22..];
    let size = u32::from_le_bytes(eocd[12..16].try_into().unwrap()) as usize;
    let offset = u32::from_le_bytes(eocd[16..20].try_into().unwrap()) as usize;
    (&bytes[offset..offset + size], offset as u64)
}

/// One rule for every reader: a wheel has exactly one top-level `.dist-info` directory (as pip
/// and uv require), whatever the other is named or holds; local wheels (`inspect`, `validate`,
/// `make_variant`) and listings read on their own (`check_listing`, what the index client
/// uses for select and the proxy) refuse a second one.
#[test]
fn a_second_dist_info_directory_is_refused_by_every_reader() {
    let filename = vari_core::filename::WheelFilename::parse("demo-1.0-py3-none-any.whl").unwrap();
    for second in [
        "aaa-1.0.dist-info/METADATA",
        "demo-1.0.0.dist-info/METADATA",
        "zzz-2.dist-info/variant.json",
        "Other.DIST-INFO/x",
    ] {
        let site = Site::new();
        let wheel = hostile_member(&site, RawEntry::stored(second, b"x"), b"x");
        let dir = second.split('/').next().unwrap();
        let needle = "more than one `.dist-info` directory";
        let e = inspect(&wheel).unwrap_err().to_string();
        assert!(e.contains(needle) && e.contains(dir), "{second}: {e}");
        assert!(
            messages(&wheel).iter().any(|m| m.contains(needle)),
            "{second}"
        );
        site.writes_nothing(|| {
            let e = make_variant(&wheel, &site.out, &spec(), &ValidValues::default())
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle), "make-variant: {e}");
        });
        let bytes = std::fs::read(&wheel).unwrap();
        let (directory, offset) = central_directory(&bytes);
        let e = check_listing(&filename, directory, offset).unwrap_err();
        assert!(
            matches!(&e, WheelErrorKind::AmbiguousDistInfo { dirs } if dirs.len() == 2),
            "{second}: {e}"
        );
    }
    // The wheel without the second directory passes the same checks.
    let site = Site::new();
    let bytes = raw_zip(&demo_entries(Vec::new()), &[]);
    let wheel = write_demo(&site.input, &bytes);
    inspect(&wheel).unwrap();
    let (directory, offset) = central_directory(&bytes);
    assert_eq!(
        check_listing(&filename, directory, offset).unwrap(),
        "demo-1.0.dist-info"
    );
}

/// `check_listing` applies the layout rules too (names, duplicates), not only the
/// `.dist-info` rule.
#[test]
fn check_listing_applies_the_layout_rules() {
    let filename = vari_core::filename::WheelFilename::parse("demo-1.0-py3-none-any.whl").unwrap();
    let bytes = raw_zip(
        &demo_entries(vec![(RawEntry::stored("../evil.py", b"x"), b"x".to_vec())]),
        &[],
    );
    let (directory, offset) = central_directory(&bytes);
    let e = check_listing(&filename, directory, offset).unwrap_err();
    assert!(
        matches!(&e, WheelErrorKind::UnsafeMember { member, .. } if member == "../evil.py"),
        "{e}"
    );
    let e = check_listing(&filename, &directory[..directory.len() - 1], offset).unwrap_err();
    assert!(matches!(e, WheelErrorKind::Layout { .. }), "{e}");
}
