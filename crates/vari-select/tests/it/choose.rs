//! The file chosen from a directory of wheels, and why the others were not.

use vari_core::ordering::SelectionOptions;
use vari_select::{choose, FileFate, Release, UnusableReason, VariantRejection};

use crate::support::{wheel, x86_v3_target, x86_variant_json};

/// A release for Linux x86_64 CPython 3.12: v3 and v2 variants, a null variant, a plain wheel,
/// and a v3 wheel for Windows only under another label.
fn release(dir: &std::path::Path) {
    let v3 = x86_variant_json("v3", Some("v3"), None);
    let v2 = x86_variant_json("v2", Some("v2"), None);
    let null = x86_variant_json("null", None, None);
    let win = x86_variant_json("winv3", Some("v3"), None);
    wheel(dir, "demo-1.0-py3-none-any-v3.whl", Some(&v3));
    wheel(
        dir,
        "demo-1.0-cp312-cp312-manylinux_2_17_x86_64-v3.whl",
        Some(&v3),
    );
    wheel(dir, "demo-1.0-py3-none-any-v2.whl", Some(&v2));
    wheel(dir, "demo-1.0-py3-none-any-null.whl", Some(&null));
    wheel(dir, "demo-1.0-py3-none-any.whl", None);
    wheel(dir, "demo-1.0-cp27-cp27m-win32-winv3.whl", Some(&win));
}

#[test]
fn the_best_label_then_the_best_tag_is_chosen() {
    let dir = tempfile::tempdir().unwrap();
    release(dir.path());
    let release = Release::read(dir.path()).unwrap();
    let target = x86_v3_target("x86_64-manylinux_2_28");
    let choice = choose(&release, &target, &SelectionOptions::default());
    let order: Vec<&str> = choice.order.iter().map(|l| l.as_str()).collect();
    assert_eq!(order, ["v3", "v2", "null"]);
    // The cp312 manylinux wheel is a better tag than py3-none-any.
    assert_eq!(
        choice.chosen().unwrap().name(),
        "demo-1.0-cp312-cp312-manylinux_2_17_x86_64-v3.whl"
    );
    let fates: Vec<(String, FileFate)> = choice
        .files
        .iter()
        .map(|f| (f.file.name(), f.fate.clone()))
        .collect();
    assert_eq!(
        fates,
        [
            (
                "demo-1.0-cp312-cp312-manylinux_2_17_x86_64-v3.whl".to_owned(),
                FileFate::Chosen
            ),
            (
                "demo-1.0-py3-none-any-v3.whl".to_owned(),
                FileFate::Candidate { rank: 1 }
            ),
            (
                "demo-1.0-py3-none-any-v2.whl".to_owned(),
                FileFate::Candidate { rank: 2 }
            ),
            (
                "demo-1.0-py3-none-any-null.whl".to_owned(),
                FileFate::Candidate { rank: 3 }
            ),
            (
                "demo-1.0-py3-none-any.whl".to_owned(),
                FileFate::Candidate { rank: 4 }
            ),
            (
                "demo-1.0-cp27-cp27m-win32-winv3.whl".to_owned(),
                FileFate::WrongTags
            ),
        ]
    );
    // A label whose only wheel is for another interpreter does not exist for this target.
    assert_eq!(
        choice.variant("winv3").unwrap().rejection,
        Some(VariantRejection::NoFittingWheel {
            tags: vec!["cp27-cp27m-win32".to_owned()]
        })
    );
}

#[test]
fn the_same_release_for_windows_chooses_the_windows_wheel() {
    let dir = tempfile::tempdir().unwrap();
    release(dir.path());
    wheel(
        dir.path(),
        "demo-1.0-cp312-cp312-win_amd64-winv3.whl",
        Some(&x86_variant_json("winv3", Some("v3"), None)),
    );
    let release = Release::read(dir.path()).unwrap();
    let target = x86_v3_target("x86_64-pc-windows-msvc");
    let choice = choose(&release, &target, &SelectionOptions::default());
    // winv3 and v3 have the same properties and rank equal; both are selectable, and the
    // Windows wheel has the better tag only under its own label.
    assert!(choice.variant("winv3").unwrap().is_selectable());
    assert!(choice.files.iter().any(|f| f.file.name()
        == "demo-1.0-cp312-cp312-manylinux_2_17_x86_64-v3.whl"
        && f.fate == FileFate::WrongTags));
    assert!(choice.chosen().unwrap().filename.label.is_some());
}

#[test]
fn without_a_fitting_variant_the_plain_wheel_is_chosen() {
    let dir = tempfile::tempdir().unwrap();
    wheel(
        dir.path(),
        "demo-1.0-py3-none-any-v4.whl",
        Some(&x86_variant_json("v4", Some("v4"), None)),
    );
    wheel(dir.path(), "demo-1.0-py3-none-any.whl", None);
    let release = Release::read(dir.path()).unwrap();
    let target = x86_v3_target("x86_64-manylinux_2_28");
    let choice = choose(&release, &target, &SelectionOptions::default());
    assert!(choice.order.is_empty());
    assert_eq!(choice.chosen().unwrap().name(), "demo-1.0-py3-none-any.whl");
    assert!(matches!(
        choice.variant("v4").unwrap().rejection,
        Some(VariantRejection::Ranking(_))
    ));
    // --no-variants: the plain wheel even when a variant fits.
    let options = SelectionOptions {
        no_variants: true,
        ..SelectionOptions::default()
    };
    let choice = choose(&release, &target, &options);
    assert_eq!(choice.chosen().unwrap().name(), "demo-1.0-py3-none-any.whl");
}

#[test]
fn a_label_the_metadata_does_not_describe_is_unusable() {
    let dir = tempfile::tempdir().unwrap();
    wheel(
        dir.path(),
        "demo-1.0-py3-none-any-v2.whl",
        Some(&x86_variant_json("v2", Some("v2"), None)),
    );
    wheel(
        dir.path(),
        "demo-1.0-py3-none-any-v3.whl",
        Some(&x86_variant_json("v3", Some("v3"), None)),
    );
    // The release's index file describes only v2.
    std::fs::write(
        dir.path().join("demo-1.0-variants.json"),
        x86_variant_json("v2", Some("v2"), None),
    )
    .unwrap();
    let release = Release::read(dir.path()).unwrap();
    let target = x86_v3_target("x86_64-manylinux_2_28");
    let choice = choose(&release, &target, &SelectionOptions::default());
    assert_eq!(
        choice.chosen().unwrap().name(),
        "demo-1.0-py3-none-any-v2.whl"
    );
    assert_eq!(
        choice.variant("v3").unwrap().rejection,
        Some(VariantRejection::Unusable(UnusableReason::NotDescribed))
    );
    let v3 = choice
        .files
        .iter()
        .find(|f| f.file.name() == "demo-1.0-py3-none-any-v3.whl")
        .unwrap();
    assert_eq!(v3.fate, FileFate::Unusable(UnusableReason::NotDescribed));
}

#[test]
fn a_plain_wheel_alone_is_the_choice() {
    let dir = tempfile::tempdir().unwrap();
    let plain = wheel(dir.path(), "demo-1.0-py3-none-any.whl", None);
    let target = x86_v3_target("x86_64-manylinux_2_28");
    for release in [
        Release::read(dir.path()).unwrap(),
        Release::read(&plain).unwrap(),
    ] {
        let choice = choose(&release, &target, &SelectionOptions::default());
        assert!(choice.variants.is_empty());
        assert_eq!(choice.chosen().unwrap().name(), "demo-1.0-py3-none-any.whl");
    }
}

#[test]
fn higher_build_numbers_win_among_equal_tags() {
    let dir = tempfile::tempdir().unwrap();
    let v3 = x86_variant_json("v3", Some("v3"), None);
    wheel(dir.path(), "demo-1.0-1-py3-none-any-v3.whl", Some(&v3));
    wheel(dir.path(), "demo-1.0-2-py3-none-any-v3.whl", Some(&v3));
    wheel(dir.path(), "demo-1.0-py3-none-any-v3.whl", Some(&v3));
    let release = Release::read(dir.path()).unwrap();
    let target = x86_v3_target("x86_64-manylinux_2_28");
    let choice = choose(&release, &target, &SelectionOptions::default());
    assert_eq!(
        choice.chosen().unwrap().name(),
        "demo-1.0-2-py3-none-any-v3.whl"
    );
}
