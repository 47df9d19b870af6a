//! `vari-profile/1` documents on arbitrary text: never panic, every error names where it is,
//! and whatever reads writes back to a document that reads to the same profile.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vari_core::Profile;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Profile::read_json(text) {
        Ok(profile) => {
            let written = profile.to_json();
            let again = Profile::read_json(&written)
                .unwrap_or_else(|e| panic!("written profile does not read back: {e}\n{written}"));
            assert_eq!(again, profile, "input: {text:?}");
        }
        Err(e) => assert!(!e.message.is_empty(), "an error without a message"),
    }
    // The older entry point agrees with the new one.
    assert_eq!(Profile::from_json(text).is_ok(), Profile::read_json(text).is_ok());
});
