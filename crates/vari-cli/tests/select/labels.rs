//! `vari wheel label` against every case of the reference label vectors.

use crate::common::{data_json, vari_run};

#[test]
fn every_label_vector_via_dash_p() {
    let vectors = data_json("vectors/labels.json");
    let cases = vectors["cases"].as_array().unwrap();
    assert!(!cases.is_empty());
    for case in cases {
        let mut args = vec!["wheel".to_owned(), "label".to_owned()];
        for p in case["properties"].as_array().unwrap() {
            args.push("-p".to_owned());
            args.push(p.as_str().unwrap().to_owned());
        }
        let run = vari_run(&args).expect_code(0);
        assert_eq!(
            run.stdout,
            format!("{}\n", case["label"].as_str().unwrap()),
            "{case}"
        );
    }
}

#[test]
fn positional_properties_count_too() {
    let run = vari_run(["wheel", "label", "d::e::f", "-p", "a :: b :: c"]).expect_code(0);
    assert_eq!(run.stdout, "eb9a66a7\n");
}

#[test]
fn a_malformed_property_is_a_usage_error() {
    for bad in ["a::b", "A::b::c", "a::b::c d", "a::b::c::d"] {
        let run = vari_run(["wheel", "label", "-p", bad]).expect_code(2);
        assert!(run.stderr.contains("error"), "{}", run.stderr);
        assert!(run.stdout.is_empty());
    }
}
