//! `vari rank --profile … --json` against every case of the reference ordering vectors.

use crate::common::{data_json, vari_run, write_json};

#[test]
fn every_ordering_vector() {
    let vectors = data_json("vectors/ordering.json");
    let cases = vectors["cases"].as_array().unwrap();
    assert!(!cases.is_empty());
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let variants = write_json(dir.path(), "case-1.0-variants.json", &case["variants_json"]);
        let profile = write_json(dir.path(), "profile.json", &case["profile"]);
        let run = vari_run([
            "rank".as_ref(),
            variants.as_os_str(),
            "--profile".as_ref(),
            profile.as_os_str(),
            "--json".as_ref(),
        ])
        .expect_code(0);
        let out = run.json();
        assert_eq!(out["order"], case["expected"], "case {name}");

        // Every variant of the file is reported, compatible exactly when it is in `order`.
        let listed = case["variants_json"]["variants"].as_object().unwrap();
        let reported = out["variants"].as_array().unwrap();
        assert_eq!(reported.len(), listed.len(), "case {name}");
        let order: Vec<&str> = out["order"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        for v in reported {
            let label = v["label"].as_str().unwrap();
            let compatible = v["compatible"].as_bool().unwrap();
            assert_eq!(compatible, order.contains(&label), "case {name}: {v}");
            assert_eq!(v["reason"].is_null(), compatible, "case {name}: {v}");
            let properties = v["properties"].as_array().unwrap();
            assert!(properties
                .iter()
                .all(|p| p.as_str().unwrap().contains(" :: ")));
        }
    }
}

#[test]
fn the_profile_can_come_from_the_environment() {
    let vectors = data_json("vectors/ordering.json");
    let case = &vectors["cases"][0];
    let dir = tempfile::tempdir().unwrap();
    let variants = write_json(dir.path(), "case-1.0-variants.json", &case["variants_json"]);
    let profile = write_json(dir.path(), "profile.json", &case["profile"]);
    let run = crate::common::run(
        crate::common::vari()
            .arg("rank")
            .arg(&variants)
            .arg("--json")
            .env("VARI_PROFILE", &profile),
    )
    .expect_code(0);
    assert_eq!(run.json()["order"], case["expected"]);
}
