//! # vari-install
//!
//! Installing the right variant with the tools people already use, and seeing which variant
//! is installed.
//!
//! Today it holds the listing: [`list_installed`] reads the distributions installed in a
//! Python environment's site-packages directories and, for each variant wheel that was
//! installed, its label and properties from `*.dist-info/variant.json`: what `pip list`
//! cannot show. Driving pip and uv through the variant-aware proxy comes next.
//!
//! What it leaves to others: which environment is the target (`vari-python`'s one answer
//! gives the site-packages directories), choosing variants (`vari-select`), and printing (the
//! front-end).
//!
//! ```
//! let site = tempfile::tempdir().unwrap();
//! let dist_info = site.path().join("demo-1.0.dist-info");
//! std::fs::create_dir(&dist_info).unwrap();
//! std::fs::write(dist_info.join("METADATA"), "Name: demo\nVersion: 1.0\n").unwrap();
//! std::fs::write(dist_info.join("variant.json"), r#"{
//!     "$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
//!     "default-priorities": {"namespace": ["x86_64"]},
//!     "variants": {"x8664v3": {"x86_64": {"level": ["v3"]}}}
//! }"#).unwrap();
//! let installed = vari_install::list_installed(&[site.path().to_path_buf()]);
//! assert_eq!(installed.distributions[0].to_string(), "demo 1.0 (x8664v3)");
//! ```

mod list;

pub use list::{
    list_installed, Installed, InstalledDistribution, InstalledVariant, VariantJsonProblem,
    VARIANT_JSON,
};
