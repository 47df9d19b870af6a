//! The README's examples are the files in `examples/` and their output is what vari prints:
//! a `<!-- example: PATH -->` marker says the next code block is that file, word for word; an
//! `<!-- example-run: DIR -->` marker says the next console block's `$ vari …` command, run in
//! DIR, prints the lines below it.

use std::path::{Path, PathBuf};

use crate::common::vari;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The code blocks that follow each `<!-- {marker}: ARG -->`, with ARG; the block's own
/// indentation (a block inside a list item) is removed.
fn marked_blocks(marker: &str) -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let open = format!("<!-- {marker}: ");
    let mut blocks = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let Some(arg) = line.trim().strip_prefix(&open) else {
            continue;
        };
        let arg = arg.trim_end_matches("-->").trim().to_owned();
        let fence = lines.next().expect("a code block follows the marker");
        let indent = fence.len() - fence.trim_start().len();
        assert!(
            fence.trim_start().starts_with("```"),
            "{marker} {arg}: no code block"
        );
        let mut body = String::new();
        for line in lines.by_ref() {
            if line.trim_start().starts_with("```") {
                break;
            }
            body.push_str(line.get(indent..).unwrap_or(""));
            body.push('\n');
        }
        blocks.push((arg, body));
    }
    assert!(!blocks.is_empty(), "README.md has no {marker} blocks");
    blocks
}

#[test]
fn example_files_are_the_readmes_blocks() {
    for (path, block) in marked_blocks("example") {
        let file = std::fs::read_to_string(root().join(&path)).unwrap();
        assert_eq!(
            block, file,
            "README's block for {path} differs from the file"
        );
    }
}

#[test]
fn example_commands_print_what_the_readme_shows() {
    for (dir, block) in marked_blocks("example-run") {
        let mut lines = block.lines();
        let command = lines.next().unwrap();
        let args: Vec<&str> = command
            .strip_prefix("$ vari ")
            .expect("an example-run block starts with `$ vari …`")
            .split_whitespace()
            .collect();
        let expected: String = lines.map(|l| format!("{l}\n")).collect();
        let run = crate::common::run(
            vari()
                .args(&args)
                .current_dir(root().join(&dir))
                .env("COLUMNS", "100"),
        )
        .expect_code(0);
        let trimmed: String = run
            .stdout
            .lines()
            .map(|l| format!("{}\n", l.trim_end()))
            .collect();
        assert_eq!(trimmed, expected, "`{command}` in {dir}");
    }
}

#[test]
fn every_example_profile_is_valid() {
    for entry in std::fs::read_dir(root().join("examples/profiles")).unwrap() {
        let path = entry.unwrap().path();
        crate::common::run(
            vari()
                .arg("detect")
                .arg("--json")
                .arg("--profile")
                .arg(&path),
        )
        .expect_code(0);
    }
}
