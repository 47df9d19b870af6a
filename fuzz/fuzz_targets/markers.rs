//! Environment markers (`enable-if`, `Requires-Dist` markers with the variant variables) on
//! arbitrary text: parsing never panics, a parsed marker evaluates without panicking and
//! parses again from its text, and `requirement_applies` never panics.
//!
//! Depth: the text is also parsed inside parentheses, as many as its first byte says (up to
//! 95 one by one around the limit, then thousands at a time up to 77,500): beyond
//! `MAX_MARKER_DEPTH` it must be refused as too deep, never overflow the stack (a fuzzer
//! rarely writes that many parentheses itself).
#![no_main]

use libfuzzer_sys::fuzz_target;
use vari_core::markers::{
    requirement_applies, Marker, MarkerError, TargetEnvironment, VariantMarkerContext,
    MAX_MARKER_DEPTH,
};

/// How many parentheses to wrap an input in, from its first byte.
fn wrapping(data: &[u8]) -> usize {
    match data.first().copied().unwrap_or(0) {
        b @ 0..=0x5f => usize::from(b),
        b => usize::from(b - 0x5f) * 2500,
    }
}

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

    let depth = wrapping(data);
    let wrapped = format!("{}{text}{}", "(".repeat(depth), ")".repeat(depth));
    match Marker::parse(&wrapped) {
        Ok(_) => assert!(depth <= MAX_MARKER_DEPTH, "{depth} levels parsed"),
        Err(MarkerError::TooDeep { depth: found, .. }) => assert!(found >= depth),
        Err(_) => assert!(depth <= MAX_MARKER_DEPTH, "{depth} levels: not refused as too deep"),
    }
    let requirement = format!("a>=1; {wrapped}");
    let _ = requirement_applies(&requirement, &env, &contexts[1]);
    let _ = vari_core::metadata::parse_requirement(&requirement);
});
