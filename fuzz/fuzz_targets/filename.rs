//! `WheelFilename::parse` on arbitrary text: never panics, and a parsed name's canonical form
//! parses back to the same value and the same text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vari_core::filename::WheelFilename;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(parsed) = WheelFilename::parse(text) else {
        return;
    };
    let canonical = parsed.to_string();
    let reparsed = WheelFilename::parse(&canonical)
        .unwrap_or_else(|e| panic!("canonical form {canonical:?} of {text:?} does not parse: {e}"));
    assert_eq!(reparsed, parsed, "{text:?} -> {canonical:?}");
    assert_eq!(reparsed.to_string(), canonical);
    assert_eq!(parsed.is_variant(), parsed.label.is_some());
    let _ = parsed.variants_json_name();
});
