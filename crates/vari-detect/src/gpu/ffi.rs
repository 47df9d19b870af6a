//! Shared helpers for the driver-library probes: loading the first library that exists and looking
//! up functions with a clear error.

use std::os::raw::c_char;

use libloading::{Library, Symbol};

use serde::{Deserialize, Serialize};

/// A library that is missing or refused to answer (reported by the probe itself).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case")]
pub enum ProbeFailure {
    /// None of the candidate files could be loaded.
    #[error("{} not found ({message})", tried.join(", "))]
    LibraryNotFound {
        /// The names or paths tried.
        tried: Vec<String>,
        /// The loader's message for the last candidate.
        message: String,
    },
    /// The library lacks a function the probe needs.
    #[error("{library}: missing function {function}")]
    MissingFunction {
        /// The library loaded.
        library: String,
        /// The function name.
        function: String,
    },
    /// A required call returned an error code.
    #[error("{library}: {call} failed with {meaning} ({code})")]
    Call {
        /// The library loaded.
        library: String,
        /// The function called.
        call: String,
        /// The raw return code.
        code: i64,
        /// The code's name (`NVML_ERROR_DRIVER_NOT_LOADED`, …).
        meaning: String,
    },
}

/// A loaded driver library and the name it was loaded by.
pub(crate) struct Loaded {
    /// The library.
    pub library: Library,
    /// The name or path that loaded.
    pub name: String,
}

/// Loads the first candidate that the dynamic loader accepts.
pub(crate) fn load_first(candidates: &[String]) -> Result<Loaded, ProbeFailure> {
    let mut message = String::from("no candidates");
    for name in candidates {
        // SAFETY: loading a driver library runs its initialisers; that is the point of the probe,
        // and it happens in a child process so a misbehaving library cannot harm the caller.
        match unsafe { Library::new(name) } {
            Ok(library) => {
                return Ok(Loaded {
                    library,
                    name: name.clone(),
                })
            }
            Err(e) => message = e.to_string(),
        }
    }
    Err(ProbeFailure::LibraryNotFound {
        tried: candidates.to_vec(),
        message,
    })
}

impl Loaded {
    /// A required function.
    ///
    /// # Safety
    /// `T` must be the function's true signature.
    pub(crate) unsafe fn require<T>(&self, name: &str) -> Result<Symbol<'_, T>, ProbeFailure> {
        self.optional(name)
            .ok_or_else(|| ProbeFailure::MissingFunction {
                library: self.name.clone(),
                function: name.to_owned(),
            })
    }

    /// A function that may be absent (older library versions).
    ///
    /// # Safety
    /// `T` must be the function's true signature.
    pub(crate) unsafe fn optional<T>(&self, name: &str) -> Option<Symbol<'_, T>> {
        let mut symbol = name.as_bytes().to_vec();
        symbol.push(0);
        self.library.get::<T>(&symbol).ok()
    }

    /// A failed call as a [`ProbeFailure`].
    pub(crate) fn call_failed(&self, call: &str, code: i64, meaning: &str) -> ProbeFailure {
        ProbeFailure::Call {
            library: self.name.clone(),
            call: call.to_owned(),
            code,
            meaning: meaning.to_owned(),
        }
    }
}

/// Reads a NUL-terminated string written by a library into `buffer`.
pub(crate) fn c_buffer_to_string(buffer: &[c_char]) -> String {
    let bytes: Vec<u8> = buffer
        .iter()
        .take_while(|&&c| c != 0)
        // c_char is i8 or u8 depending on the target; the bit pattern is what matters.
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_libraries_name_every_candidate() {
        let Err(failure) =
            load_first(&["/nonexistent/libx.so.1".into(), "libnope-vari.so.7".into()])
        else {
            panic!("should not load")
        };
        let text = failure.to_string();
        assert!(text.contains("/nonexistent/libx.so.1") && text.contains("libnope-vari.so.7"));
        assert!(text.contains("not found"), "{text}");
    }

    #[test]
    fn c_strings_stop_at_nul() {
        let buffer: Vec<c_char> = b"570.86.15\0garbage".iter().map(|&b| b as c_char).collect();
        assert_eq!(c_buffer_to_string(&buffer), "570.86.15");
    }
}
