//! Machine classes as `vari proxy --target` and `vari detect --class` name them: `NAME=PROFILE`
//! on the command line (repeatable), else `[proxy.targets]` in vari.toml; the command line's list
//! replaces the configured one. Each name is checked against the class-name grammar
//! ([`vari_proxy::ClassName`]) before anything uses it; a name given twice is refused. Each
//! PROFILE is read as everywhere else: a directory is a snapshot (as `--sysroot`), a file a
//! profile or facts file (as `--profile`), resolved by the same target code
//! ([`crate::settings::class_target`]).

use std::path::PathBuf;

use vari_config::Config;
use vari_proxy::ClassName;

use crate::error::CliError;

/// One class, validated: its name and its profile.
#[derive(Debug, Clone)]
pub(crate) struct Class {
    pub(crate) name: ClassName,
    pub(crate) profile: PathBuf,
}

/// The classes `given` on the command line (`flag`: its name, for errors), else the configured
/// ones; an empty list when neither names any.
pub(crate) fn classes(
    given: &[String],
    flag: &str,
    config: &Config,
) -> Result<Vec<Class>, CliError> {
    if !given.is_empty() {
        let mut classes: Vec<Class> = Vec::with_capacity(given.len());
        for text in given {
            let class = from_flag(text, flag)?;
            if classes.iter().any(|c| c.name == class.name) {
                return Err(CliError::Other(format!(
                    "{flag} {}: machine class {} is given twice (each class needs its own name)",
                    quoted(text),
                    class.name
                )));
            }
            classes.push(class);
        }
        return Ok(classes);
    }
    let Some(configured) = &config.settings.proxy_targets else {
        return Ok(Vec::new());
    };
    configured
        .value
        .iter()
        .map(|(name, profile)| {
            let name = ClassName::new(name).map_err(|e| {
                CliError::invalid(
                    &configured.source.path,
                    Some(format!("proxy.targets.{}", name.escape_debug())),
                    e.to_string(),
                )
            })?;
            Ok(Class {
                name,
                profile: profile.clone(),
            })
        })
        .collect()
}

/// `NAME=PROFILE` from the command line.
fn from_flag(text: &str, flag: &str) -> Result<Class, CliError> {
    let Some((name, profile)) = text.split_once('=') else {
        return Err(CliError::Other(format!(
            "{flag} {}: expected NAME=PROFILE (a profile or facts file, or a snapshot directory)",
            quoted(text)
        )));
    };
    let name = ClassName::new(name)
        .map_err(|e| CliError::Other(format!("{flag} {}: {e}", quoted(text))))?;
    if profile.is_empty() {
        return Err(CliError::Other(format!(
            "{flag} {}: the profile path is empty",
            quoted(text)
        )));
    }
    Ok(Class {
        name,
        profile: PathBuf::from(profile),
    })
}

/// A command-line value as quoted in an error: bounded, control characters escaped.
fn quoted(text: &str) -> String {
    let short: String = text.chars().take(120).collect();
    format!("{short:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(items: &[&str]) -> Result<Vec<Class>, CliError> {
        let items: Vec<String> = items.iter().map(|s| s.to_string()).collect();
        classes(&items, "--target", &Config::default())
    }

    #[test]
    fn names_are_checked_and_unique() {
        let ok = given(&["cpu=cpu.toml", "gpu-a100=a.toml"]).unwrap();
        assert_eq!(ok[1].name.as_str(), "gpu-a100");
        assert_eq!(ok[1].profile, PathBuf::from("a.toml"));
        for (bad, fragment) in [
            (&["GPU=a.toml"][..], "is not valid"),
            (&["gpu"][..], "expected NAME=PROFILE"),
            (&["gpu="][..], "the profile path is empty"),
            (&["=a.toml"][..], "cannot be empty"),
            (&["a=x.toml", "a=y.toml"][..], "given twice"),
        ] {
            let e = given(bad).unwrap_err().to_string();
            assert!(e.contains(fragment), "{bad:?}: {e}");
            assert!(e.starts_with("--target "), "{e}");
        }
    }
}
