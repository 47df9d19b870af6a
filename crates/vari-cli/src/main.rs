//! `vari`: the command line of the vari wheel-variant toolkit.
//!
//! Exit status: 0 success, 1 failure (one `error:` line on stderr naming the file and key path at
//! fault), 2 bad usage (clap). The machine-readable parts (`--json`, profiles) are the stable
//! contract of `docs/reference/output.md`; human output is tables on stdout, coloured only on a
//! terminal.

mod cache_areas;
mod classes;
mod cli;
mod commands;
mod error;
mod explain;
mod help;
mod load;
mod lock_plan;
mod lock_targets;
mod output;
mod progress;
mod reference;
mod settings;
mod table;
mod topics;
mod version;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{ArgMatches, FromArgMatches};

use crate::cli::{Cli, Command};

// Reading a large `*-variants.json` makes tens of thousands of small allocations; mimalloc
// serves them faster than glibc's allocator. Its v2 line (the `v2` feature in the workspace
// manifest) touches fewer fresh pages than v3, whose zeroing by the kernel cost ~2 ms per run
// (see the README's Performance section). Without transparent huge pages (`no_thp`): mimalloc
// asks for them, and the kernel then zeroes 2 MiB for the first page each thread's heap
// touches, a fifth of `vari lock`'s own CPU time (the proxy's threads); mimalloc turns them off
// for the process (`PR_SET_THP_DISABLE`, which programs vari runs inherit).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // The GPU providers load driver libraries in a child process (a copy of this binary), so a
    // crashing or hanging driver cannot take vari down; that child must branch off before
    // anything else runs.
    vari_detect::child::run_probe_child_if_requested();

    // The grammar with each command's "More:" line (`help::command`), parsed as clap's
    // `Parser::parse` would.
    let matches = help::command().get_matches();
    let cli =
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut help::command()).exit());
    progress::configure(cli.quiet, asks_for_json(&matches));
    if cli.version {
        return version::print(cli.json);
    }
    let Some(command) = cli.command else {
        // What clap says for a missing subcommand (exit 2), now that `--version` alone is valid.
        help::command()
            .error(
                clap::error::ErrorKind::MissingSubcommand,
                "a command is required (see `vari --help`)",
            )
            .exit()
    };
    init_tracing(cli.verbose, quiet_level(&command));
    match commands::run(command, cli.verbose > 0) {
        Ok(code) => code,
        Err(e) => {
            use owo_colors::OwoColorize;
            let mut err = anstream::stderr().lock();
            // Nothing more can be done if stderr itself is gone.
            let _ = writeln!(err, "{} {}", "error:".red().bold(), e.one_line());
            ExitCode::FAILURE
        }
    }
}

/// Whether the command (at any depth: `vari wheel inspect --json`) was given `--json`: its
/// output is for programs, and progress stays off ([`progress::shown`]).
fn asks_for_json(matches: &ArgMatches) -> bool {
    let mut matches = matches;
    loop {
        if let Ok(Some(&true)) = matches.try_get_one::<bool>("json") {
            return true;
        }
        match matches.subcommand() {
            Some((_, sub)) => matches = sub,
            None => return false,
        }
    }
}

/// What a command logs without `-v`: `vari proxy` its choices (`info`), `vari install` the
/// proxy's warnings (an upstream index that fails), the others nothing.
fn quiet_level(command: &Command) -> &'static str {
    match command {
        Command::Proxy(_) => "info",
        Command::Install(_) => "warn",
        _ => "off",
    }
}

/// Diagnostics go to stderr: `RUST_LOG` if set, else the command's `quiet` level, `debug` with
/// `-v`, `trace` with `-vv`.
fn init_tracing(verbose: u8, quiet: &str) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => quiet,
        1 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // Same colour rule as the rest of the output: a terminal, and no NO_COLOR.
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| RedactedStderr(Vec::new()))
        .with_ansi(colour)
        .without_time()
        .init();
}

/// Where each diagnostic goes: collected, then written to stderr as one piece with the user
/// information of every URL hidden (`vari_core::redact`), so no log line shows a password.
struct RedactedStderr(Vec<u8>);

impl std::io::Write for RedactedStderr {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for RedactedStderr {
    fn drop(&mut self) {
        use std::io::Write;
        let text = String::from_utf8_lossy(&self.0);
        // stderr is best effort: there is nowhere left to report a failure to write to it.
        let _ =
            std::io::stderr().write_all(vari_core::redact::redact_credentials(&text).as_bytes());
    }
}
