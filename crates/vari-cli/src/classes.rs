//! Machine classes as the command line and vari.toml name them, the same for every command
//! that takes them (`vari lock --target`, `vari mirror --target`, `vari proxy --target`,
//! `vari detect --class`): `[NAME=]PROFILE` (repeatable; the grammar is
//! [`vari_core::class::ClassArg`]'s: the name defaults to the profile's file stem, and is checked
//! by the class-name rule, [`vari_core::class::ClassName`]), else, for the proxy and
//! `detect --class`, `[proxy.targets]` in vari.toml; the command line's list replaces the
//! configured one. A name given twice is refused. Each PROFILE is a profile or facts file, or a
//! snapshot directory ([`vari_select::ClassSource::of`]), read by
//! [`vari_select::MachineClass::resolve`] for every command alike.

use vari_config::Config;
use vari_core::class::{ClassArg, ClassName};
use vari_select::{ClassSource, MachineClass};

use crate::error::CliError;

/// The classes `given` on the command line (`flag`: its name, for errors), else the ones
/// `[proxy.targets]` configures; an empty list when neither names any.
pub(crate) fn classes(
    given: &[String],
    flag: &str,
    config: &Config,
) -> Result<Vec<MachineClass>, CliError> {
    if !given.is_empty() {
        return given_classes(given, flag);
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
            Ok(MachineClass::named(name, Some(ClassSource::of(profile))))
        })
        .collect()
}

/// The classes `given` on the command line (`flag`: its name, for errors): each
/// `[NAME=]PROFILE` checked, no name twice.
pub(crate) fn given_classes(given: &[String], flag: &str) -> Result<Vec<MachineClass>, CliError> {
    let mut classes: Vec<MachineClass> = Vec::with_capacity(given.len());
    for text in given {
        let arg = ClassArg::parse(text)
            .map_err(|e| CliError::Other(format!("{flag} {}: {e}", quoted(text))))?;
        if classes.iter().any(|c| c.name == arg.name) {
            let name = &arg.name;
            return Err(CliError::Other(format!(
                "{flag} {}: machine class {name} is given twice (another target is already \
                 named `{name}`): each class needs its own name, NAME=PROFILE",
                quoted(text),
            )));
        }
        classes.push(MachineClass::from_arg(arg));
    }
    Ok(classes)
}

/// A command-line value as quoted in an error: bounded, control characters escaped.
fn quoted(text: &str) -> String {
    let short: String = text.chars().take(120).collect();
    format!("{short:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(items: &[&str]) -> Result<Vec<MachineClass>, CliError> {
        let items: Vec<String> = items.iter().map(|s| s.to_string()).collect();
        classes(&items, "--target", &Config::default())
    }

    #[test]
    fn names_are_checked_and_unique() {
        let ok = given(&["cpu=cpu.toml", "gpu-a100=a.toml", "ci/v100.json"]).unwrap();
        assert_eq!(ok[1].name.as_str(), "gpu-a100");
        assert_eq!(ok[1].source, Some(ClassSource::Facts("a.toml".into())));
        // A bare profile is named after its file.
        assert_eq!(ok[2].name.as_str(), "v100");
        assert_eq!(
            ok[2].source,
            Some(ClassSource::Profile("ci/v100.json".into()))
        );
        let long = format!("ci/{}.toml", "g".repeat(41));
        for (bad, fragment) in [
            (&["GPU=a.toml"][..], "is not valid"),
            (&[long.as_str()][..], "name it NAME=PROFILE"),
            (&["gpu="][..], "the profile path is empty"),
            (&["=a.toml"][..], "cannot be empty"),
            (&["a=x.toml", "a=y.toml"][..], "given twice"),
            (
                &["x.toml", "ci/x.json"][..],
                "another target is already named `x`",
            ),
        ] {
            let e = given(bad).unwrap_err().to_string();
            assert!(e.contains(fragment), "{bad:?}: {e}");
            assert!(e.starts_with("--target "), "{e}");
        }
    }
}
