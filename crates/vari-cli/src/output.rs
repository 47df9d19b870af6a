//! Where results go: stdout (coloured only on a terminal), stderr warnings, and files written
//! atomically.
//!
//! Every command builds its whole output first and prints it in one write, so a failure half-way
//! never leaves partial output; files are written to a temporary file in the destination
//! directory and renamed over the destination.

use std::io::{self, Write};
use std::path::Path;

use crate::error::CliError;
pub(crate) use crate::error::{note, warn};

/// Prints `text` to stdout in one write. ANSI styles are stripped unless stdout is a terminal that
/// wants colour (`NO_COLOR`, `CLICOLOR`, `CLICOLOR_FORCE` are honoured by `anstream`).
///
/// A closed pipe (`vari … | head`) is not an error: the reader has what it wanted.
pub(crate) fn print(text: &str) -> Result<(), CliError> {
    let stream = anstream::stdout();
    // The text is made ready for the stream here and written once: given the text itself, the
    // colour filter writes each span between styles on its own, and a line-buffered stdout
    // turns that into a write call per line (21,000 calls, two thirds of the time, for a
    // ranking of 1,000 variants printed to a pipe).
    match stream.current_choice() {
        anstream::ColorChoice::Never => {
            let plain = anstream::adapter::strip_str(text).to_string();
            write_stdout(&mut io::stdout().lock(), plain)
        }
        anstream::ColorChoice::AlwaysAnsi => write_stdout(&mut io::stdout().lock(), text),
        // A console that needs its own calls for colour (older Windows): the stream's way.
        _ => write_stdout(&mut stream.lock(), text),
    }
}

/// Prints machine-readable output (JSON, paths, labels) to stdout in one write, unchanged: it
/// holds no styles, so the colour filter's scan of every byte is skipped.
pub(crate) fn print_data(text: &str) -> Result<(), CliError> {
    print_bytes(text.as_bytes())
}

/// [`print_data`] for output already encoded as UTF-8 bytes (as `serde_json` writes it), which
/// spares re-checking a large document's encoding.
pub(crate) fn print_bytes(bytes: &[u8]) -> Result<(), CliError> {
    write_stdout(&mut io::stdout().lock(), bytes)
}

fn write_stdout(out: &mut impl Write, text: impl AsRef<[u8]>) -> Result<(), CliError> {
    stdout_result(out.write_all(text.as_ref()).and_then(|()| out.flush()))
}

/// The outcome of writing to stdout, for output written in parts: a closed pipe is not an
/// error (see [`print()`]).
pub(crate) fn stdout_result(written: io::Result<()>) -> Result<(), CliError> {
    match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(CliError::Other(format!("cannot write to stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// Serialises a JSON value for stdout: pretty, with a trailing newline.
pub(crate) fn json_text(value: &serde_json::Value) -> String {
    // Serialising a `serde_json::Value` cannot fail (all keys are strings).
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// Writes `contents` to `dest` atomically (`vari_fs::write_atomic`: through symbolic links,
/// keeping the mode of a replaced file, writing through devices, never leaving a partial file);
/// `-` is standard output.
pub(crate) fn write_atomically(dest: &Path, contents: &[u8]) -> Result<(), CliError> {
    if dest == Path::new("-") {
        return print_bytes(contents);
    }
    vari_fs::write_atomic(dest, contents).map_err(CliError::from)
}

/// The width to lay tables out in: the terminal's, `COLUMNS`, or 100.
pub(crate) fn width() -> usize {
    if let Some((terminal_size::Width(w), _)) = terminal_size::terminal_size() {
        return usize::from(w).max(40);
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse::<usize>().ok())
        .filter(|&w| w >= 40)
        .unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_destination_not_a_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("missing").join("out.json");
        let err = write_atomically(&dest, b"x").unwrap_err().to_string();
        assert!(err.starts_with(&dest.display().to_string()), "{err}");
        assert!(!err.contains(".vari-"), "{err}");
        assert!(!dest.exists());
    }
}
