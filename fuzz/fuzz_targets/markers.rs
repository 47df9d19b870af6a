//! Environment markers (`enable-if`, `Requires-Dist` markers with the variant variables) on
//! arbitrary text: parsing never panics, a parsed marker evaluates without panicking and
//! parses again from its text, and `requirement_applies` never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vari_core::markers::{requirement_applies, Marker, TargetEnvironment, VariantMarkerContext};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(env) = TargetEnvironment::from_platform(None, "3.12") else {
        return;
    };
    let contexts = [
        VariantMarkerContext::non_variant(),
        VariantMarkerContext {
            label: "cu128".parse().ok(),
            properties: ["nvidia :: sm_arch :: 90_real", "x86_64 :: level :: v3"]
                .iter()
                .filter_map(|p| p.parse().ok())
                .collect(),
        },
    ];
    if let Ok(marker) = Marker::parse(text) {
        for ctx in &contexts {
            let value = marker.evaluate(&env, ctx);
            let again = Marker::parse(marker.as_str())
                .unwrap_or_else(|e| panic!("{text:?} parsed, its text does not: {e}"));
            assert_eq!(again.evaluate(&env, ctx), value, "{text:?}");
            let _ = marker.evaluate_with_extras(&env, ctx, &["gpu", "Not An Extra"]);
        }
    }
    for ctx in &contexts {
        let _ = requirement_applies(text, &env, ctx);
    }
});
