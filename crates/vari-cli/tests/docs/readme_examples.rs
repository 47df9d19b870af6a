//! The documentation's examples are the files in `examples/` and their output is what vari
//! prints, in `README.md` and in every Markdown page of the site under `docs/`: a
//! `<!-- example: PATH -->` marker says the next code block is that file, word for word; an
//! `<!-- example-run: DIR -->` marker says the next console block's `$ vari …` command, run in
//! DIR (relative to the repository's root), prints the lines below it. An
//! `<!-- example-pypi: DIR -->` marker says the same of a `vari select … --explain` run against
//! PyPI, whose versions move: the run must make the block's choices (each family's build and why
//! each other build lost, each selected distribution), whatever versions PyPI has by then; a line
//! of its own `…` stands for lines left out (the per-file lines of `--explain`).

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

/// The choices a `vari select --explain` output makes, without the versions PyPI moves: each
/// family's `NAME: family F chooses build B (DIST`, each other build's `  - B (DIST): VERDICT` up
/// to the verdict's first `: ` or `; ` outside backticks (where versions start), and each
/// selection's distribution name.
fn choices(output: &str) -> Vec<String> {
    output
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            if let Some(rest) = line.strip_prefix("  - ") {
                return format!("  - {}", verdict_head(rest));
            }
            if let Some((head, _)) = line.split_once(" chooses build ") {
                let build = line[head.len() + " chooses build ".len()..]
                    .split(' ')
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ");
                return format!("{head} chooses build {build}");
            }
            line.split_whitespace().next().unwrap_or("").to_owned()
        })
        .collect()
}

/// `B (DIST): VERDICT…` up to the second `: ` or the first `; ` that is not inside backticks
/// (the first `: ` ends the build's name).
fn verdict_head(entry: &str) -> &str {
    let mut ticks = 0;
    let mut colons = 0;
    for (at, c) in entry.char_indices() {
        match c {
            '`' => ticks += 1,
            ':' | ';' if ticks % 2 == 0 && entry[at + 1..].starts_with(' ') => {
                if c == ';' || colons == 1 {
                    return &entry[..at];
                }
                colons += 1;
            }
            _ => {}
        }
    }
    entry
}

/// Whether `shown` is `actual` with some runs of entries left out where `shown` has `…`.
fn same_choices(actual: &[String], shown: &[String]) -> bool {
    let mut actual = actual.iter();
    let mut skipping = false;
    for entry in shown {
        if entry == "…" {
            skipping = true;
            continue;
        }
        let found = match skipping {
            true => actual.any(|a| a == entry),
            false => actual.next() == Some(entry),
        };
        if !found {
            return false;
        }
        skipping = false;
    }
    skipping || actual.next().is_none()
}

#[test]
fn left_out_lines_match_any_run_of_lines() {
    let list = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let actual = list(&["a", "x", "y", "b", "z"]);
    assert!(same_choices(&actual, &list(&["a", "…", "b", "…"])));
    assert!(same_choices(&actual, &actual));
    assert!(!same_choices(&actual, &list(&["a", "…", "b"])));
    assert!(!same_choices(&actual, &list(&["a", "b", "…"])));
    assert!(!same_choices(&actual, &list(&["a", "…", "c", "…"])));
}

#[test]
fn choices_leave_out_what_pypi_moves() {
    let output = "cupy: family cupy chooses build cu12 (cupy-cuda12x 14.2.0): the best of 2 builds that fit
  - cu13 (cupy-cuda13x): no supported value for `nvidia :: cuda_version_lower_bound`: the wheel has 13.0; …
  - cpu (faiss-cpu): fits, but ranks 3 for this target; it would have given 1.15.1, newer than faiss-gpu-cu12 1.14.1.post1

cupy-cuda12x 14.2.0  cupy_cuda12x-14.2.0-cp312-cp312-manylinux2014_x86_64.whl  -  the non-variant wheel (…)
";
    assert_eq!(
        choices(output),
        [
            "cupy: family cupy chooses build cu12 (cupy-cuda12x",
            "  - cu13 (cupy-cuda13x): no supported value for `nvidia :: cuda_version_lower_bound`",
            "  - cpu (faiss-cpu): fits, but ranks 3 for this target",
            "cupy-cuda12x",
        ]
    );
}

/// Whether PyPI answers (one simple page, with vari's own index client), or why not.
fn pypi_reachable() -> Result<(), String> {
    use vari_client::{ClientSettings, IndexClient, IndexUrl};
    let cache = tempfile::tempdir().map_err(|e| e.to_string())?;
    let settings = ClientSettings {
        indexes: vec![IndexUrl::parse("https://pypi.org/simple/").map_err(|e| e.to_string())?],
        cache_dir: Some(cache.path().to_owned()),
        ..ClientSettings::default()
    };
    let client = IndexClient::new(settings).map_err(|e| e.to_string())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime
        .block_on(client.project(&"cupy-cuda12x".parse().unwrap()))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The README's run against PyPI makes the choices it shows (skipped with a message when PyPI
/// cannot be reached). A command may go on over lines ending in ` \`.
#[test]
fn pypi_examples_make_the_choices_the_readme_shows() {
    let blocks = marked_blocks("example-pypi");
    if let Err(e) = pypi_reachable() {
        eprintln!("skipped: PyPI cannot be reached ({e})");
        return;
    }
    for Block { file, arg, body } in blocks {
        let mut lines = body.lines();
        let mut command = String::new();
        for line in lines.by_ref() {
            match line.strip_suffix('\\') {
                Some(more) => command.push_str(more),
                None => {
                    command.push_str(line);
                    break;
                }
            }
        }
        let args: Vec<&str> = command
            .strip_prefix("$ vari ")
            .expect("an example-pypi block starts with `$ vari …`")
            .split_whitespace()
            .collect();
        let shown: String = lines.map(|l| format!("{l}\n")).collect();
        let run = crate::common::run(
            vari()
                .args(&args)
                .current_dir(root().join(&arg))
                .env("COLUMNS", "100"),
        )
        .expect_code(0);
        let (actual, shown) = (choices(&run.stdout), choices(&shown));
        assert!(
            same_choices(&actual, &shown),
            "{file}: `{command}` in {arg} no longer makes the choices shown (PyPI changed?); \
             paste the run again:\n{}\nchoices made: {actual:#?}\nshown: {shown:#?}",
            run.stdout
        );
    }
}
