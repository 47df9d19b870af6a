//! The documentation's examples are the files in `examples/` and their output is what vari
//! prints, in `README.md` and in every Markdown page of the site under `docs/`: a
//! `<!-- example: PATH -->` marker says the next code block is that file, word for word; an
//! `<!-- example-run: DIR -->` marker says the next console block's `$ vari …` command, run in
//! DIR (relative to the repository's root), prints the lines below it.

use std::path::{Path, PathBuf};

use crate::common::vari;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `README.md`, then every `*.md` file under `docs/` (sorted), relative to the root.
fn markdown_files() -> Vec<PathBuf> {
    let mut pages = Vec::new();
    let mut dirs = vec![PathBuf::from("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(root().join(&dir)).unwrap() {
            let entry = entry.unwrap();
            let path = dir.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    std::iter::once(PathBuf::from("README.md"))
        .chain(pages)
        .collect()
}

/// One marked code block: the file it is in, the marker's argument, the block's text.
struct Block {
    file: String,
    arg: String,
    body: String,
}

/// The code blocks that follow each `<!-- {marker}: ARG -->` in `text`, with ARG; the block's
/// own indentation (a block inside a list item) is removed.
fn marked_blocks_in(text: &str, marker: &str, file: &str) -> Vec<Block> {
    let open = format!("<!-- {marker}: ");
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(arg) = line.trim().strip_prefix(&open) else {
            continue;
        };
        let arg = arg.trim_end_matches("-->").trim().to_owned();
        let fence = lines.next().expect("a code block follows the marker");
        let indent = fence.len() - fence.trim_start().len();
        assert!(
            fence.trim_start().starts_with("```"),
            "{file}: {marker} {arg}: no code block"
        );
        let mut body = String::new();
        for line in lines.by_ref() {
            if line.trim_start().starts_with("```") {
                break;
            }
            body.push_str(line.get(indent..).unwrap_or(""));
            body.push('\n');
        }
        blocks.push(Block {
            file: file.to_owned(),
            arg,
            body,
        });
    }
    blocks
}

/// Every `{marker}` block of the README and the site's pages.
fn marked_blocks(marker: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(root().join(&file)).unwrap();
        blocks.extend(marked_blocks_in(&text, marker, &file.display().to_string()));
    }
    assert!(
        !blocks.is_empty(),
        "neither README.md nor docs/ has {marker} blocks"
    );
    blocks
}

#[test]
fn the_documentation_files_include_the_site_pages() {
    let files = markdown_files();
    assert_eq!(files[0], Path::new("README.md"));
    assert!(files.contains(&PathBuf::from("docs/index.md")));
    assert!(
        files.iter().any(|f| f.starts_with("docs/guides")),
        "pages in subdirectories of docs/ are read too: {files:?}"
    );
}

#[test]
fn marked_blocks_are_found_inside_list_items() {
    let text = "- item:\n\n  <!-- example: a/b.toml -->\n  ```toml\n  x = 1\n  ```\n";
    let blocks = marked_blocks_in(text, "example", "t.md");
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].arg, "a/b.toml");
    assert_eq!(blocks[0].body, "x = 1\n");
}

#[test]
fn example_files_are_the_readmes_blocks() {
    for Block { file, arg, body } in marked_blocks("example") {
        let content = std::fs::read_to_string(root().join(&arg)).unwrap();
        assert_eq!(
            body, content,
            "{file}'s block for {arg} differs from the file"
        );
    }
}

#[test]
fn example_commands_print_what_the_readme_shows() {
    for Block { file, arg, body } in marked_blocks("example-run") {
        let mut lines = body.lines();
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
                .current_dir(root().join(&arg))
                .env("COLUMNS", "100"),
        )
        .expect_code(0);
        let trimmed: String = run
            .stdout
            .lines()
            .map(|l| format!("{}\n", l.trim_end()))
            .collect();
        assert_eq!(trimmed, expected, "{file}: `{command}` in {arg}");
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
