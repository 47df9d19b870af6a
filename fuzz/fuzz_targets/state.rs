//! `index build`'s state file (`SITE/.vari-index-state.json`) on arbitrary bytes: never panic,
//! and whatever it trusts names only paths inside the site, so a rebuild's removals stay there.
#![no_main]

use std::path::{Component, Path};

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(Some(outputs)) = vari_publish::fuzzing::parse_state(data) else {
        return;
    };
    let site = Path::new("/site");
    for output in outputs {
        let joined = vari_fs::join_under(site, &output)
            .unwrap_or_else(|e| panic!("a trusted output is refused by the join: {e}"));
        assert!(joined.starts_with(site), "{output:?} leaves the site");
        assert!(
            joined
                .strip_prefix(site)
                .unwrap()
                .components()
                .all(|c| matches!(c, Component::Normal(_))),
            "{output:?} is not a plain path"
        );
    }
});
