//! The properties of the `lock` and `requirements` fuzz targets (`fuzz/fuzz_targets/`), run on
//! stable Rust in the normal suite: 20,000 inputs each, made by a seeded generator from the
//! fuzz seeds (mutated with the characters that matter to a TOML reader and a requirements
//! file: line breaks of every kind, `#`, quotes, `\`, `$`, whitespace, invisible characters),
//! so every run checks the same inputs. The fuzz targets explore further where cargo-fuzz is
//! installed.

#[path = "../../../fuzz/fuzz_targets/lock_check.rs"]
mod lock_check;
#[path = "../../../fuzz/fuzz_targets/requirements_check.rs"]
mod requirements_check;

use std::path::{Path, PathBuf};

/// Inputs per property.
const CASES: usize = 20_000;

/// A xorshift generator: the same sequence on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// What the mutations insert: what a TOML reader and a requirements file treat specially.
const SPECIAL: &[&str] = &[
    "\n",
    "\r",
    "\r\n",
    "\u{b}",
    "\u{c}",
    "\u{1c}",
    "\u{1e}",
    "\u{85}",
    "\u{2028}",
    "\u{2029}",
    "\u{200b}",
    "\u{feff}",
    "\t",
    " ",
    "#",
    " #",
    "\"",
    "'",
    "\\",
    "\\\n",
    "$",
    "${HOME}",
    "=",
    "[",
    "]",
    "{",
    "}",
    ",",
    "-",
    "--",
    "--index-url=https://evil.example/",
    "/",
    "..",
    ".",
    "%20",
    "@",
    ":",
    "a",
    "Z",
    "0",
    "9",
    "é",
    "sha256",
    "https://",
    "file:///",
    "~",
];

fn seeds(kind: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds")
        .join(kind);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// `seed` changed in one to four places: an insertion of special text, a deletion, a copy of
/// a span elsewhere.
fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut data = seed.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(data.len() + 1);
        match rng.below(4) {
            0 | 1 => {
                let text = rng.pick(SPECIAL).as_bytes().to_vec();
                data.splice(at..at, text);
            }
            2 if !data.is_empty() => {
                let end = (at + 1 + rng.below(16)).min(data.len());
                data.drain(at.min(end)..end);
            }
            _ if !data.is_empty() => {
                let from = rng.below(data.len());
                let end = (from + 1 + rng.below(32)).min(data.len());
                let span = data[from..end].to_vec();
                let at = at.min(data.len());
                data.splice(at..at, span);
            }
            _ => {}
        }
    }
    data
}

#[test]
fn whatever_lock_is_read_is_written_and_read_back_the_same() {
    let seeds = seeds("lock");
    let mut rng = Rng(0x005e_ed1a_b50f_10c4);
    for seed in &seeds {
        lock_check::check(seed);
    }
    for _ in 0..CASES {
        let seed = rng.pick(&seeds).clone();
        lock_check::check(&mutate(&mut rng, &seed));
    }
}

/// A field of a requirements record: special text and ordinary letters.
fn field(rng: &mut Rng, start: &[&str]) -> String {
    let mut text = rng.pick(start).to_string();
    for _ in 0..rng.below(6) {
        let part = match rng.below(3) {
            0 => *rng.pick(SPECIAL),
            _ => *rng.pick(&["numlike", "2.3.4", "-py3-none-any.whl", "x", "_", "+cpu"]),
        };
        text.push_str(part);
    }
    text
}

#[test]
fn whatever_requirements_file_is_written_reads_back_as_meant() {
    let seeds = seeds("requirements");
    let mut rng = Rng(0x0dd_ba11_ca5e);
    for seed in &seeds {
        requirements_check::check(seed);
    }
    let hex = b"0123456789abcdef";
    for case in 0..CASES {
        // Every fourth input a seed mutated, the others records made field by field.
        if case % 4 == 0 {
            let seed = rng.pick(&seeds).clone();
            requirements_check::check(&mutate(&mut rng, &seed));
            continue;
        }
        let mut data = field(&mut rng, &["for a100", "", "lock"]);
        for _ in 0..=rng.below(3) {
            let name = field(&mut rng, &["numlike", "a", "Numlike_Pkg", ""]);
            let location = field(
                &mut rng,
                &[
                    "https://files.example/",
                    "/srv/wheels/",
                    "wheels/",
                    "/home/u/My Projects/",
                    "",
                ],
            );
            let sha256: String = match rng.below(4) {
                0 => field(&mut rng, &["ab"]),
                _ => (0..64).map(|_| char::from(hex[rng.below(16)])).collect(),
            };
            data.push('\u{1e}');
            data.push_str(&[name, location, sha256].join("\u{1f}"));
        }
        requirements_check::check(data.as_bytes());
    }
}
