//! The README's table of environment variables is the registry's, rendered: adding a variable to
//! a provider without updating the README fails here.

use std::path::Path;

const START: &str = "<!-- env-table:start -->";
const END: &str = "<!-- env-table:end -->";

#[test]
fn the_readme_lists_every_variable_the_providers_read() {
    let readme_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(&readme_path).unwrap();
    let expected = vari_detect::env_table_markdown();
    let (Some(start), Some(end)) = (readme.find(START), readme.find(END)) else {
        panic!("README.md has no {START} … {END} block; add one holding:\n{expected}");
    };
    let block = readme[start + START.len()..end].trim();
    assert_eq!(
        block,
        expected.trim(),
        "README.md's variable table differs from the registry; replace the block with:\n{expected}"
    );
}
