//! The metadata readers on arbitrary text: never panic; whatever reads is written back in its own
//! generation, and the written text reads again and writes to the same text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vari_core::metadata::{
    read_json, read_json_lenient, read_pyproject, write_json, SourceKind, VariantMetadata,
};

/// Writes `meta`, re-reads the text as an index file, and writes again: the texts must agree.
/// `must_write`: JSON documents that read strictly must be writable in their own generation.
fn round_trip(meta: &VariantMetadata, must_write: bool, input: &str) {
    let written = match write_json(meta, meta.generation) {
        Ok(w) => w,
        Err(e) if !must_write => {
            let _ = e.to_string();
            return;
        }
        Err(e) => panic!("read but cannot be written back: {e}\ninput: {input:?}"),
    };
    let reread = read_json(&written.text, SourceKind::IndexFile).unwrap_or_else(|errors| {
        panic!(
            "written text does not read back: {errors:?}\ninput: {input:?}\nwritten:\n{}",
            written.text
        )
    });
    let again = write_json(&reread, reread.generation)
        .unwrap_or_else(|e| panic!("re-read metadata cannot be written: {e}\ninput: {input:?}"));
    assert_eq!(again.text, written.text, "input: {input:?}");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for kind in [SourceKind::IndexFile, SourceKind::WheelFile] {
        match read_json(text, kind) {
            Ok(meta) => round_trip(&meta, true, text),
            Err(errors) => assert!(!errors.is_empty(), "an error result with no error"),
        }
        if let Ok((meta, _warnings)) = read_json_lenient(text, kind) {
            round_trip(&meta, false, text);
        }
    }
    match read_pyproject(text) {
        Ok(meta) => round_trip(&meta, false, text),
        Err(errors) => assert!(!errors.is_empty(), "an error result with no error"),
    }
});
