//! `vari_wheel::inspect_reader` on arbitrary bytes as a wheel archive: never panics, never reads
//! past the size caps.
#![no_main]

use std::io::Cursor;
use std::path::Path;

use libfuzzer_sys::fuzz_target;

const NAMES: [&str; 3] = [
    "test_package-0-py3-none-any-foo.whl",
    "test_package-0-py3-none-any-null.whl",
    "test_package-0-py3-none-any.whl",
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, archive)) = data.split_first() else {
        return;
    };
    let name = NAMES[usize::from(selector) % NAMES.len()];
    if let Err(e) = vari_wheel::inspect_reader(Path::new(name), Cursor::new(archive)) {
        let _ = e.to_string();
    }
});
