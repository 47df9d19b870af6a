//! The interpreter half of wheel tags: the implementation, its interpreter tag (`cp312`,
//! `pp310`) and the ABI tags its extension modules use (`cp312`, `cp313t`, `pypy310_pp73`).

use std::fmt;

use crate::version::PythonVersion;

/// A Python implementation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Implementation {
    /// CPython (`cpython`).
    CPython,
    /// PyPy (`pypy`).
    PyPy,
    /// GraalPy (`graalpy`).
    GraalPy,
    /// Another implementation, by its `sys.implementation.name`.
    Other(String),
}

impl Implementation {
    /// From `sys.implementation.name`.
    pub fn from_name(name: &str) -> Self {
        match name {
            "cpython" => Self::CPython,
            "pypy" => Self::PyPy,
            "graalpy" => Self::GraalPy,
            other => Self::Other(other.to_owned()),
        }
    }

    /// `sys.implementation.name` (the `implementation_name` marker).
    pub fn name(&self) -> &str {
        match self {
            Self::CPython => "cpython",
            Self::PyPy => "pypy",
            Self::GraalPy => "graalpy",
            Self::Other(name) => name,
        }
    }

    /// The interpreter-tag prefix: `cp`, `pp`, or the name itself (`graalpy`), as
    /// `packaging.tags.interpreter_name()` gives it.
    pub fn tag_prefix(&self) -> &str {
        match self.name() {
            "cpython" => "cp",
            "pypy" => "pp",
            "ironpython" => "ip",
            "jython" => "jy",
            "python" => "py",
            other => other,
        }
    }
}

impl fmt::Display for Implementation {
    /// `CPython`, `PyPy`, `GraalPy`, or the name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::CPython => "CPython",
            Self::PyPy => "PyPy",
            Self::GraalPy => "GraalPy",
            Self::Other(name) => name,
        })
    }
}

/// What wheel tags need to know about the interpreter.
///
/// ```
/// use vari_python::{Abi, PythonVersion};
/// let abi = Abi::cpython(&"3.13t".parse::<PythonVersion>().unwrap());
/// assert_eq!(abi.interpreter, "cp313");
/// assert_eq!(abi.abis, ["cp313t"]);
/// assert!(abi.is_free_threaded());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Abi {
    /// The implementation.
    pub implementation: Implementation,
    /// The Python language version (`(3, 12)`).
    pub language_version: (u8, u8),
    /// The interpreter tag: `cp312`, `pp310`, `graalpy311`.
    pub interpreter: String,
    /// The ABI tags of the interpreter's own extension modules, most specific first
    /// (`cp312`; `cp313t`; `cp312d`, `cp312` for a debug build; `pypy310_pp73`). Neither the
    /// stable ABI (`abi3`) nor `none` is listed: tag generation adds them where they apply.
    pub abis: Vec<String>,
}

impl Abi {
    /// A CPython of `version` built the usual way: `cpXY` (3.8 on), `cpXYm` (3.3–3.7, with
    /// pymalloc), `cp27mu`, and `cpXYt` for a free-threaded version.
    pub fn cpython(version: &PythonVersion) -> Self {
        let nodot = version.nodot();
        let key = (version.major, version.minor);
        let flags = if version.free_threaded {
            "t"
        } else if key < (3, 3) {
            "mu"
        } else if key < (3, 8) {
            "m"
        } else {
            ""
        };
        Self {
            implementation: Implementation::CPython,
            language_version: key,
            interpreter: format!("cp{nodot}"),
            abis: vec![format!("cp{nodot}{flags}")],
        }
    }

    /// Whether the first ABI is a free-threaded CPython one (`cp313t`), as packaging decides.
    pub fn is_free_threaded(&self) -> bool {
        let Some(first) = self.abis.first() else {
            return false;
        };
        let Some(rest) = first.strip_prefix("cp") else {
            return false;
        };
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && rest[digits..].contains('t')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpython(version: &str) -> Abi {
        Abi::cpython(&version.parse().unwrap())
    }

    #[test]
    fn cpython_abis_by_version() {
        assert_eq!(cpython("3.12").abis, ["cp312"]);
        assert_eq!(cpython("3.7").abis, ["cp37m"]);
        assert_eq!(cpython("2.7").abis, ["cp27mu"]);
        assert_eq!(cpython("3.14t").abis, ["cp314t"]);
        assert!(!cpython("3.13").is_free_threaded());
        assert!(cpython("3.13t").is_free_threaded());
    }

    #[test]
    fn implementation_names() {
        for name in ["cpython", "pypy", "graalpy", "rustpython"] {
            assert_eq!(Implementation::from_name(name).name(), name);
        }
        assert_eq!(Implementation::PyPy.tag_prefix(), "pp");
        assert_eq!(Implementation::GraalPy.tag_prefix(), "graalpy");
        assert_eq!(Implementation::CPython.to_string(), "CPython");
    }
}
