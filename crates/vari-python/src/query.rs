//! Asking an interpreter about itself: one run of an embedded script (`query.py`) with a time
//! limit, its JSON answer cached on disk under the real interpreter's path, modification time
//! and size.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::env::Source;
use crate::error::PythonError;

/// The interpreter answers' directory in vari's cache directory.
pub(crate) const CACHE_AREA_DIR: &str = "python";
/// The bytes of the SHA-256 of an answer's key its file is named by.
pub(crate) const CACHE_HASH_BYTES: usize = 16;
/// How an answer's file name ends.
pub(crate) const CACHE_FILE_SUFFIX: &str = ".json";

/// The script every interpreter is asked to run.
const SCRIPT: &str = include_str!("query.py");

/// What an interpreter says about itself (the JSON `query.py` prints).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Facts {
    pub(crate) executable: String,
    pub(crate) prefix: String,
    pub(crate) base_prefix: String,
    /// `sys.version_info`: major, minor, micro, release level, serial.
    pub(crate) version: (u8, u8, u16, String, u16),
    pub(crate) implementation_name: String,
    pub(crate) py_version_nodot: String,
    pub(crate) abis: Vec<String>,
    #[serde(default)]
    pub(crate) gil_disabled: bool,
    pub(crate) purelib: Option<String>,
    pub(crate) platlib: Option<String>,
    #[serde(default)]
    pub(crate) site_dirs: Vec<String>,
    pub(crate) sysconfig_platform: String,
    pub(crate) pointer_bits: u32,
    pub(crate) glibc: Option<String>,
    pub(crate) musl: Option<(u16, u16)>,
    pub(crate) elf: Option<ElfHeader>,
    pub(crate) mac_version: Option<String>,
    pub(crate) mac_machine: Option<String>,
    /// The standard PEP 508 marker values, by name.
    pub(crate) markers: std::collections::BTreeMap<String, String>,
}

/// The parts of the interpreter's ELF header manylinux compatibility depends on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ElfHeader {
    pub(crate) class: u8,
    pub(crate) machine: u16,
    pub(crate) flags: u32,
    pub(crate) interpreter: Option<String>,
}

/// What identifies one interpreter's answer in the cache. Any change to the real interpreter
/// file (an upgrade in place), to the content of the environment's `pyvenv.cfg`, or to the
/// script itself makes a different key.
///
/// `pyvenv.cfg` counts by its content, not its time: what the interpreter answers depends on
/// the program's path, the interpreter it runs and the settings in that file (`home`,
/// `include-system-site-packages`, the version), so an environment made again in the same
/// place with the same settings (`python -m venv --clear`, `uv venv`, tox and CI recreating
/// theirs before each run) is the same answer, and asking again would cost a Python start-up
/// (tens of milliseconds; most of what `vari install` adds to uv when uv's own interpreter
/// cache answers at once).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct CacheKey {
    /// The program as run (a venv's `bin/python` differs from its base interpreter).
    program: PathBuf,
    /// The file its links end at.
    real: PathBuf,
    real_modified_ns: u128,
    real_size: u64,
    /// `pyvenv.cfg` beside or above the program, with the SHA-256 of its content (hex).
    pyvenv_cfg: Option<(PathBuf, String)>,
    script_sha256: String,
}

#[derive(Serialize, Deserialize)]
struct CacheEntry {
    key: CacheKey,
    facts: Facts,
}

/// Runs interpreters and caches their answers.
#[derive(Debug, Clone)]
pub(crate) struct Querier {
    pub(crate) cache_dir: Option<PathBuf>,
    pub(crate) timeout: Duration,
}

/// The modification time of a file in nanoseconds since the epoch (0 when unknown).
fn modified_ns(meta: &std::fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

impl Querier {
    /// The facts of `program`, from the cache when `cacheable` and the key matches, else by
    /// running it (and then caching the answer under the interpreter it reports).
    ///
    /// A script that is not a known shim is not `cacheable`: the interpreter it runs can change
    /// without the script changing, so it is run every time and only the real interpreter's
    /// answer is cached.
    pub(crate) fn facts(
        &self,
        program: &Path,
        cacheable: bool,
        from: &Source,
        given: &Path,
    ) -> Result<Facts, PythonError> {
        let key = if cacheable { cache_key(program) } else { None };
        if let Some(facts) = key.as_ref().and_then(|key| self.read_cache(key)) {
            return Ok(facts);
        }
        let facts = self.run(program, from, given)?;
        // Cache under the program run, or for a script under the interpreter it ran.
        let key = key.or_else(|| cache_key(Path::new(&facts.executable)));
        if let Some(key) = key {
            self.write_cache(key, &facts);
        }
        Ok(facts)
    }

    fn run(&self, program: &Path, from: &Source, given: &Path) -> Result<Facts, PythonError> {
        let not_python = |reason: String| PythonError::NotPython {
            from: from.clone(),
            path: given.to_owned(),
            reason,
        };
        let mut command = Command::new(program);
        // -E: ignore PYTHON* variables, -s: no user site directory; the script comes on stdin.
        command.args(["-E", "-s", "-"]);
        let output = vari_fs::run_with_timeout(command, Some(SCRIPT.as_bytes()), self.timeout)
            .map_err(|e| not_python(e.to_string()))?;
        if !output.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
            let status = match (output.code, output.signal) {
                (Some(code), _) => format!("exit status {code}"),
                (None, Some(signal)) => format!("killed by signal {signal}"),
                (None, None) => "failed".to_owned(),
            };
            return Err(not_python(format!(
                "running {} with the interpreter query ended with {status}{}",
                program.display(),
                last.map(|l| format!(": {}", l.trim())).unwrap_or_default()
            )));
        }
        serde_json::from_slice(&output.stdout).map_err(|e| {
            not_python(format!(
                "{} did not answer the interpreter query with JSON: {e}",
                program.display()
            ))
        })
    }

    fn cache_file(&self, key: &CacheKey) -> Option<PathBuf> {
        let dir = self.cache_dir.as_ref()?;
        let bytes = serde_json::to_vec(key).ok()?;
        let digest = Sha256::digest(&bytes);
        let name = hex::encode(&digest[..CACHE_HASH_BYTES]);
        Some(
            dir.join(CACHE_AREA_DIR)
                .join(format!("{name}{CACHE_FILE_SUFFIX}")),
        )
    }

    fn read_cache(&self, key: &CacheKey) -> Option<Facts> {
        let bytes = vari_fs::read_cache_file(&self.cache_file(key)?, 16 << 20)?;
        let entry: CacheEntry = serde_json::from_slice(&bytes).ok()?;
        (entry.key == *key).then_some(entry.facts)
    }

    /// Best effort: a cache that cannot be written costs a query next time, nothing else.
    fn write_cache(&self, key: CacheKey, facts: &Facts) {
        let Some(file) = self.cache_file(&key) else {
            return;
        };
        let entry = CacheEntry {
            key,
            facts: facts.clone(),
        };
        let Ok(bytes) = serde_json::to_vec(&entry) else {
            return;
        };
        if let Some(root) = self.cache_dir.as_deref() {
            // Never written through a link planted in the cache (vari_fs::cache_write).
            let _ = vari_fs::write_cache_file(root, &file, &bytes);
        }
    }
}

/// The most of a `pyvenv.cfg` read for a cache key (real ones are a few hundred bytes); a
/// larger one makes the answer uncached.
const PYVENV_CFG_LIMIT: u64 = 64 * 1024;

/// The cache key of `program`, `None` when it (or its environment's `pyvenv.cfg`) cannot be
/// read.
fn cache_key(program: &Path) -> Option<CacheKey> {
    let program = std::path::absolute(program).ok()?;
    let real = std::fs::canonicalize(&program).ok()?;
    let meta = std::fs::metadata(&real).ok()?;
    let pyvenv_cfg = match [program.parent(), program.parent().and_then(Path::parent)]
        .into_iter()
        .flatten()
        .map(|dir| dir.join("pyvenv.cfg"))
        .find(|cfg| cfg.exists())
    {
        Some(cfg) => {
            let text = vari_fs::read_input_limited(&cfg, PYVENV_CFG_LIMIT).ok()?;
            Some((cfg, hex::encode(Sha256::digest(&text))))
        }
        None => None,
    };
    Some(CacheKey {
        program,
        real,
        real_modified_ns: modified_ns(&meta),
        real_size: meta.len(),
        pyvenv_cfg,
        script_sha256: hex::encode(Sha256::digest(SCRIPT.as_bytes())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answers_file_is_one_entry_of_the_python_area() {
        use vari_fs::cache_admin::AreaLayout;
        let root = tempfile::tempdir().unwrap();
        let program = root.path().join("python3");
        std::fs::write(&program, b"one").unwrap();
        let querier = Querier {
            cache_dir: Some(root.path().to_owned()),
            timeout: Duration::from_secs(1),
        };
        let file = querier.cache_file(&cache_key(&program).unwrap()).unwrap();
        vari_fs::write_cache_file(root.path(), &file, b"{}").unwrap();
        let listed = crate::PythonCacheLayout.entries(root.path()).unwrap();
        let paths: Vec<_> = listed.iter().map(|e| e.path().to_owned()).collect();
        assert_eq!(paths, [file]);
    }

    #[test]
    fn keys_follow_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("python3");
        std::fs::write(&file, b"one").unwrap();
        let first = cache_key(&file).unwrap();
        std::fs::write(&file, b"three").unwrap();
        let second = cache_key(&file).unwrap();
        assert_ne!(first, second, "a size change must change the key");
        assert!(cache_key(&dir.path().join("missing")).is_none());
        std::fs::write(dir.path().join("pyvenv.cfg"), b"home = /x\n").unwrap();
        assert!(cache_key(&file).unwrap().pyvenv_cfg.is_some());
    }

    #[test]
    fn an_environment_made_again_alike_keeps_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let program = bin.join("python3");
        std::fs::write(&program, b"interpreter").unwrap();
        let cfg = dir.path().join("pyvenv.cfg");
        std::fs::write(
            &cfg,
            b"home = /usr/bin\ninclude-system-site-packages = false\n",
        )
        .unwrap();
        let first = cache_key(&program).unwrap();
        // Written again with the same settings an hour later: the same answer.
        std::fs::remove_file(&cfg).unwrap();
        std::fs::write(
            &cfg,
            b"home = /usr/bin\ninclude-system-site-packages = false\n",
        )
        .unwrap();
        let an_hour_later = std::time::SystemTime::now() + Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&cfg)
            .unwrap()
            .set_modified(an_hour_later)
            .unwrap();
        assert_eq!(cache_key(&program).unwrap(), first);
        // Other settings (the system's site-packages now visible): another answer.
        std::fs::write(
            &cfg,
            b"home = /usr/bin\ninclude-system-site-packages = true\n",
        )
        .unwrap();
        assert_ne!(cache_key(&program).unwrap(), first);
        // Unreadable as a file: no key, so the interpreter is asked rather than a guess cached.
        std::fs::remove_file(&cfg).unwrap();
        std::fs::create_dir(&cfg).unwrap();
        assert!(cache_key(&program).is_none());
    }
}
