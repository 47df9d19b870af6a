//! The command-line definition as `vari` parses it and shows it: [`crate::cli`]'s grammar with
//! each command's long help (`--help`) ending in the page that explains more (issue 31).

use clap::CommandFactory;

use crate::cli::Cli;
use crate::topics;

/// The command line: the grammar with every visible command's "More:" line.
pub(crate) fn command() -> clap::Command {
    with_links(Cli::command(), "")
}

/// `cmd` (at `path`, `""` for `vari` itself) and its subcommands, each visible one with its
/// "More:" line after the long help.
fn with_links(cmd: clap::Command, path: &str) -> clap::Command {
    let page = match path.is_empty() {
        true => "index.md".to_owned(),
        false => topics::command_page(path),
    };
    let more = format!("More: {}", topics::url(&page));
    let mut cmd = match cmd.is_hide_set() {
        true => cmd,
        false => cmd.after_long_help(more),
    };
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in names {
        let sub_path = match path.is_empty() {
            true => name.clone(),
            false => format!("{path} {name}"),
        };
        cmd = cmd.mut_subcommand(&name, |sub| with_links(sub, &sub_path));
    }
    cmd
}

/// The command at `path` (`["wheel", "slim"]`) of a built command line, if there is one.
pub(crate) fn find<'a>(
    root: &'a mut clap::Command,
    path: &[String],
) -> Option<&'a mut clap::Command> {
    let mut cmd = root;
    for name in path {
        cmd = cmd.find_subcommand_mut(name)?;
    }
    Some(cmd)
}
