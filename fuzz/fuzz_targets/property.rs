//! Property / FeatureRef / VariantLabel parsing and `default_label` on arbitrary text, one item
//! per line: never panics; Display round-trips; the default label ignores order and duplicates.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vari_core::label::default_label;
use vari_core::{FeatureRef, Property, VariantLabel};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut properties = Vec::new();
    for line in text.lines() {
        if let Ok(p) = line.parse::<Property>() {
            let back: Property = p.to_string().parse().expect("Display of a property parses");
            assert_eq!(back, p);
            properties.push(p);
        }
        if let Ok(f) = line.parse::<FeatureRef>() {
            let back: FeatureRef = f.to_string().parse().expect("Display of a feature parses");
            assert_eq!(back, f);
        }
        let _ = VariantLabel::new(line);
    }
    let label = default_label(&properties);
    assert_eq!(label.is_null(), properties.is_empty());
    let mut shuffled = properties.clone();
    shuffled.reverse();
    shuffled.extend(properties.iter().cloned());
    assert_eq!(default_label(&shuffled), label);
});
