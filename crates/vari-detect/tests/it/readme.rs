//! The documentation's table of environment variables is the registry's, rendered: adding a
//! variable to a provider without updating the table fails here. The table is a marked block
//! in `README.md` or a page of the site under `docs/`; every copy is checked, and there must be
//! at least one.

use std::path::{Path, PathBuf};

const START: &str = "<!-- env-table:start -->";
const END: &str = "<!-- env-table:end -->";

/// `README.md` and every `*.md` file under `docs/`.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files
}

/// The text between each START and END marker of `text`.
fn blocks(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(START) {
        let after = &rest[start + START.len()..];
        let end = after
            .find(END)
            .unwrap_or_else(|| panic!("{START} without {END}"));
        found.push(after[..end].trim());
        rest = &after[end + END.len()..];
    }
    found
}

#[test]
fn the_readme_lists_every_variable_the_providers_read() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let expected = vari_detect::env_table_markdown();
    let mut copies = 0;
    for file in markdown_files(&root) {
        let text = std::fs::read_to_string(&file).unwrap();
        for block in blocks(&text) {
            copies += 1;
            assert_eq!(
                block,
                expected.trim(),
                "{}'s variable table differs from the registry; replace the block with:\n{expected}",
                file.display()
            );
        }
    }
    assert!(
        copies > 0,
        "neither README.md nor docs/ has a {START} … {END} block; add one holding:\n{expected}"
    );
}

#[test]
fn blocks_are_found_between_their_markers() {
    let text = format!("a\n{START}\n| x |\n{END}\nb\n{START}\n| y |\n{END}\n");
    assert_eq!(blocks(&text), vec!["| x |", "| y |"]);
    assert!(blocks("no table").is_empty());
}
