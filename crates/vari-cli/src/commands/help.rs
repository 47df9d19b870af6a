//! `vari help [COMMAND|TOPIC]`: a command's long help (as `--help` prints it), or a topic's
//! paragraph and the page that explains more (issue 31).

use std::process::ExitCode;

use crate::cli::HelpArgs;
use crate::error::CliError;
use crate::output;
use crate::topics;

/// Prints the help or topic `args` name.
pub(crate) fn run(args: &HelpArgs) -> Result<ExitCode, CliError> {
    let mut root = crate::help::command();
    root.build();
    match args.names.as_slice() {
        [] => output::print(&root.render_long_help().ansi().to_string())?,
        [name] if name == "topics" => output::print(&topic_list())?,
        [name] if root.find_subcommand(name).is_none() && topics::topic(name).is_some() => {
            if let Some(topic) = topics::topic(name) {
                output::print(&topic_text(topic))?;
            }
        }
        path => match crate::help::find(&mut root, path) {
            Some(cmd) => output::print(&cmd.render_long_help().ansi().to_string())?,
            None => {
                let message = format!(
                    "no command or topic `{}` (`vari help topics` lists the topics, `vari --help` \
                     the commands)",
                    path.join(" ")
                );
                crate::help::command()
                    .error(clap::error::ErrorKind::InvalidSubcommand, message)
                    .exit()
            }
        },
    }
    Ok(ExitCode::SUCCESS)
}

/// `vari help topics`: each topic's name and title.
fn topic_list() -> String {
    let width = topics::TOPICS
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(0);
    let mut out = String::from("Topics (`vari help TOPIC`):\n\n");
    for topic in topics::TOPICS {
        out.push_str(&format!("  {:width$}  {}\n", topic.name, topic.title));
    }
    out.push_str(&format!(
        "\nCommands: `vari help COMMAND` (or `vari COMMAND --help`).\nMore: {}\n",
        topics::url("reference/index.md")
    ));
    out
}

/// One topic: its title, its paragraph wrapped, and the page that explains more.
fn topic_text(topic: &topics::Topic) -> String {
    format!(
        "{}\n\n{}\nMore: {}\n",
        topic.title,
        wrap(topic.text, 90),
        topics::url(topic.page)
    )
}

/// `text` in lines of at most `width` characters (a longer word keeps its own line).
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_the_width() {
        assert_eq!(wrap("a bb ccc dddd", 6), "a bb\nccc\ndddd\n");
        assert_eq!(wrap("", 6), "");
    }

    #[test]
    fn every_topic_is_listed_with_its_page() {
        let list = topic_list();
        for topic in topics::TOPICS {
            assert!(list.contains(topic.name), "{}", topic.name);
            assert!(topic_text(topic).ends_with(&format!("More: {}\n", topics::url(topic.page))));
        }
    }
}
