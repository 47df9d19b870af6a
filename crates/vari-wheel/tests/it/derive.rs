//! `derive_variant`: a variant wheel of another wheel with some members rewritten.

use std::collections::BTreeMap;

use vari_core::{FeatureSupport, Namespace, Property};
use vari_wheel::{derive_variant, validate, ValidValues, VariantSpec, WheelErrorKind};

use crate::support::{member, members, plain_wheel};

fn valid() -> ValidValues {
    let mut v = ValidValues::default();
    v.insert(
        Namespace::new("x86_64").unwrap(),
        vec![FeatureSupport {
            name: "level".parse().unwrap(),
            values: ["v4", "v3", "v2", "v1"]
                .iter()
                .map(|s| s.parse().unwrap())
                .collect(),
            multi_value: false,
        }],
    );
    v
}

fn spec(property: &str) -> VariantSpec {
    VariantSpec {
        properties: vec![property.parse::<Property>().unwrap()],
        ..VariantSpec::default()
    }
}

#[test]
fn replaced_members_get_new_rows_and_the_rest_is_copied_raw() {
    let dir = tempfile::tempdir().unwrap();
    let input = plain_wheel(dir.path(), "demo", "1.0", "py3-none-any", &[]);
    let replaced = BTreeMap::from([("demo/_native.so".to_owned(), b"slim".to_vec())]);
    let out = dir.path().join("out");
    let made = derive_variant(
        &input,
        &out,
        replaced,
        &spec("x86_64 :: level :: v3"),
        &valid(),
    )
    .unwrap();
    let v = validate(&made.path).unwrap();
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    let (before, after) = (members(&input), members(&made.path));
    assert_eq!(member(&after, "demo/_native.so").contents, b"slim");
    for name in [
        "demo/__init__.py",
        "demo-1.0.data/scripts/tool",
        "demo-1.0.dist-info/WHEEL",
    ] {
        assert_eq!(member(&after, name), member(&before, name), "{name}");
    }
    assert!(after
        .iter()
        .any(|m| m.name == "demo-1.0.dist-info/variant.json"));

    // From the variant wheel: its variant.json and label are replaced, not added.
    let again = dir.path().join("again");
    let replaced = BTreeMap::from([("demo/_native.so".to_owned(), b"slimmer".to_vec())]);
    let remade = derive_variant(
        &made.path,
        &again,
        replaced,
        &spec("x86_64 :: level :: v2"),
        &valid(),
    )
    .unwrap();
    let label = remade.label.clone().unwrap();
    assert_ne!(Some(&label), made.label.as_ref());
    assert_eq!(
        remade.path.file_name().unwrap().to_str().unwrap(),
        format!("demo-1.0-py3-none-any-{label}.whl")
    );
    let v = validate(&remade.path).unwrap();
    assert!(v.problems.is_empty(), "{:?}", v.problems);
    let variant_json = members(&remade.path)
        .into_iter()
        .filter(|m| m.name.ends_with("/variant.json"))
        .count();
    assert_eq!(variant_json, 1);
}

#[test]
fn only_existing_members_other_than_record_can_be_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let input = plain_wheel(dir.path(), "demo", "1.0", "py3-none-any", &[]);
    let out = dir.path().join("out");
    for (name, why) in [
        ("demo/missing.so", "not a member of the wheel"),
        ("demo-1.0.dist-info/RECORD", "written by vari itself"),
    ] {
        let replaced = BTreeMap::from([(name.to_owned(), b"x".to_vec())]);
        let e = derive_variant(
            &input,
            &out,
            replaced,
            &spec("x86_64 :: level :: v3"),
            &valid(),
        )
        .unwrap_err();
        match &*e.kind {
            WheelErrorKind::Member { member, message } => {
                assert_eq!(member, name);
                assert!(message.contains(why), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(!out.exists() || std::fs::read_dir(&out).unwrap().next().is_none());
    }
}
