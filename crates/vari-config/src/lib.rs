//! # vari-config
//!
//! Preferences that last: the environment-level choices a user makes once ("NVIDIA first,
//! never ROCm", "this index, offline") instead of per package and per command.
//!
//! Three file layers, weakest first, each replacing the weaker ones' values key by key:
//!
//! 1. the user's `vari.toml` ([`user_config_file`]: `$XDG_CONFIG_HOME/vari/vari.toml`, else
//!    `~/.config/vari/vari.toml`; the platform's directory on macOS and Windows);
//! 2. the project's `pyproject.toml` `[tool.vari]` table, the nearest one found from the
//!    current directory up to the repository root (`.git`) or the filesystem root;
//! 3. the file named by `VARI_CONFIG`.
//!
//! Command-line options win over all three: [`Config::selection`] puts them on top (a list
//! given on the command line replaces the configured list).
//!
//! ```toml
//! prefer = ["nvidia", "x86_64"]          # patterns: NS, NS::FEATURE, NS::FEATURE::VALUE
//! forbid = ["amd"]
//! enable-optional = ["nvidia"]           # namespaces
//! profile = "profiles/gpu-node.toml"     # relative to this file
//! no-variants = false
//! index-url = "https://pypi.org/simple/"
//! extra-index-url = ["https://download.example.com/whl/"]
//! find-links = ["wheels"]                # URLs, or paths relative to this file
//! index-strategy = "first-index"         # or "unsafe-best-match"
//! offline = false
//! families = ["families.toml"]           # build-family catalogs over the built-in one
//! no-families = false
//!
//! [proxy.targets]                        # machine classes: `vari proxy`, `vari detect --class`
//! cpu = "profiles/cpu.toml"              # NAME = PROFILE, relative to this file
//! gpu-a100 = "profiles/a100.toml"
//! ```
//!
//! Every value is parsed when read (patterns and namespaces with `vari-core`, URLs and
//! find-links with `vari-client`); an unknown key or a bad value is a [`ConfigError`] naming the
//! file, the key path and the line. The merged [`Settings`] record, per key, the [`Source`] it
//! came from, for `vari config show`.
//!
//! What it leaves to others: applying the settings. [`Config::selection`] gives selection
//! options for `vari-select`, [`Config::client_settings`] index settings for `vari-client`,
//! [`Config::profile`] a profile path for the front-end's target; rendering is the CLI's.

mod config;
mod default_index;
mod error;
mod key;
mod locate;
mod read;
mod settings;

pub use config::{default_value, Config, ConfigFile, Entry, FileLimits};
pub use default_index::{
    default_index, DefaultIndex, InvalidIndexVariable, INDEX_VARIABLES, PIP_INDEX_VARIABLE,
    UV_DEFAULT_INDEX_VARIABLES,
};
pub use error::ConfigError;
pub use key::Key;
pub use locate::{user_config_file, ConfigEnv, CONFIG_ENV, NO_CONFIG_ENV};
pub use settings::{strategy_name, Layer, Settings, Shown, Source, Sourced};
