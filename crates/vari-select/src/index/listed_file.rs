//! What judging needs of a listed file, whoever lists it: an index page (`vari-client`'s
//! [`IndexFile`]) or a lock entry (`crate::locked`'s wheels of a `pylock.toml` entry). Judging
//! (screening, the release, the choice and its report) reads files only through
//! [`ListedFile`], so a lock's wheels are judged as they are, not dressed as index listings.

use pep440_rs::VersionSpecifiers;
use url::Url;
use vari_client::{FileKind, IndexFile};
use vari_core::filename::WheelFilename;

/// A file of one version, as judging sees it.
pub trait ListedFile {
    /// The file name as listed (upstream names need not be canonical).
    fn filename(&self) -> &str;
    /// Where it is: what tells two listed files apart.
    fn url(&self) -> &Url;
    /// Its parsed wheel name; `None` for a source distribution (never selected).
    fn wheel(&self) -> Option<&WheelFilename>;
    /// The Python versions it declares it supports, when it says.
    fn requires_python(&self) -> Option<&VersionSpecifiers>;
    /// `Some(reason)` when it is yanked (PEP 592), the reason when one is given.
    fn yanked(&self) -> Option<Option<&str>>;
}

impl ListedFile for IndexFile {
    fn filename(&self) -> &str {
        &self.filename
    }

    fn url(&self) -> &Url {
        &self.url
    }

    fn wheel(&self) -> Option<&WheelFilename> {
        match &self.kind {
            FileKind::Wheel(wheel) => Some(wheel),
            _ => None,
        }
    }

    fn requires_python(&self) -> Option<&VersionSpecifiers> {
        self.requires_python.as_ref()
    }

    fn yanked(&self) -> Option<Option<&str>> {
        self.yanked.as_ref().map(|y| y.reason.as_deref())
    }
}

impl<T: ListedFile + ?Sized> ListedFile for &T {
    fn filename(&self) -> &str {
        (**self).filename()
    }

    fn url(&self) -> &Url {
        (**self).url()
    }

    fn wheel(&self) -> Option<&WheelFilename> {
        (**self).wheel()
    }

    fn requires_python(&self) -> Option<&VersionSpecifiers> {
        (**self).requires_python()
    }

    fn yanked(&self) -> Option<Option<&str>> {
        (**self).yanked()
    }
}
