//! Reading one system file (procfs, sysfs, a snapshot's copy, its manifest): the one guarded
//! reader every provider, the sysroot and the snapshot manifest use; and listing a system
//! directory (`/dev`) for a provider's cache evidence.

use std::io;
use std::path::Path;

/// Reads a system file (procfs, sysfs, or a copy of one) as text: a regular file, opened without
/// blocking, at most [`vari_fs::InputKind::System`]'s ceiling (procfs files report size 0, so the
/// bytes read are counted).
pub(crate) fn read_system_file(path: &Path) -> io::Result<String> {
    let text = vari_fs::read_input_to_string(path, vari_fs::InputKind::System)?;
    Ok(text)
}

/// Reads a system file as bytes, with [`read_system_file`]'s checks and `limit`.
pub(crate) fn read_system_bytes(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    Ok(vari_fs::read_input_limited(path, limit)?)
}

/// Sorted entry names of `dir` (optionally only those starting with `prefix`), comma-joined
/// (`-` when the directory cannot be read).
pub(crate) fn listing(dir: &Path, prefix: Option<&str>) -> String {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return "-".into();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| prefix.is_none_or(|p| n.starts_with(p)))
        .collect();
    names.sort();
    names.join(",")
}
