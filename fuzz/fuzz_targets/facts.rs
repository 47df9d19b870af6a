//! Hardware facts (`vari-facts/1` TOML) on arbitrary text: never panic, and whatever reads
//! gives a profile that writes and reads back unchanged.
//!
//! Inputs naming `cpuinfo` are skipped: that key reads the file it names, and a fuzzer that
//! found `/dev/zero` would only measure the machine's memory.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use vari_core::Profile;
use vari_detect::facts::profile_from_facts;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.contains("cpuinfo") {
        return;
    }
    // No host profile: `inherit = "host"` must be a clean error, not a detection run.
    if let Ok(facts) = profile_from_facts(text, Path::new("/nonexistent-fuzz-base"), None) {
        let profile: &Profile = &facts.profile;
        let written = profile.to_json();
        let again = Profile::read_json(&written)
            .unwrap_or_else(|e| panic!("facts profile does not read back: {e}\n{written}"));
        assert_eq!(&again, profile, "input: {text:?}");
    }
});
