//! `vari wheel scan`: what the binaries in wheels need (vari-scan), as a table or as JSON.
//!
//! JSON shape (`docs/reference/output.md`): one wheel prints `{"properties": [...], "files": [...]}`; several
//! print `{"wheels": [{"wheel": PATH, "properties": [...], "files": [...]}, ...]}` in argument
//! order, so that each wheel keeps its own properties (they are different builds).

use std::process::ExitCode;

use owo_colors::{OwoColorize, Style};
use serde_json::{json, Value};
use vari_scan::{scan_wheel, FileScan, ScanError, WheelScan};

use crate::cli::ScanArgs;
use crate::error::CliError;
use crate::output;
use crate::output::json_text;
use crate::table::{Cell, Table};

/// Scans every wheel, then prints all results at once (a failure prints nothing but the error).
pub(super) fn run(args: &ScanArgs) -> Result<ExitCode, CliError> {
    let progress = crate::progress::Count::new("scanning wheels", args.wheels.len() as u64);
    let scans = args
        .wheels
        .iter()
        .map(|wheel| {
            progress.set_message(format!("scanning {}", wheel.display()));
            let scan = scan_wheel(wheel).map_err(scan_error);
            progress.inc();
            scan
        })
        .collect::<Result<Vec<_>, _>>();
    progress.finish();
    let scans = scans?;
    if args.json {
        let value = match scans.as_slice() {
            [one] => wheel_json(one),
            several => json!({
                "wheels": several
                    .iter()
                    .map(|scan| {
                        let mut value = wheel_json(scan);
                        value["wheel"] = json!(scan.wheel.display().to_string());
                        value
                    })
                    .collect::<Vec<_>>(),
            }),
        };
        output::print_data(&json_text(&value))?;
    } else {
        let text: Vec<String> = scans.iter().map(human).collect();
        output::print(&text.join("\n"))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `<wheel>: <member>: <problem>`, the member only when one is at fault.
fn scan_error(e: ScanError) -> CliError {
    CliError::invalid(&e.wheel, e.member, e.problem.to_string())
}

fn wheel_json(scan: &WheelScan) -> Value {
    let properties: Vec<String> = scan.properties().iter().map(ToString::to_string).collect();
    let files: Vec<Value> = scan.files.iter().map(file_json).collect();
    json!({ "properties": properties, "files": files })
}

fn file_json(file: &FileScan) -> Value {
    let mut value = json!({
        "path": file.path,
        // `null` when some GPU code cannot be read: the values read are not what it runs on.
        "sm_arch": file.gpu_code_known().then(|| file.sm_arch()),
        "cuda_runtime": file.cuda_runtime,
        "x86_64_level": file.x86_64_level().map(|l| l.as_str()),
        "needs": file.needs(),
    });
    if let Some(why) = &file.unreadable_gpu_code {
        value["unreadable_gpu_code"] = json!(why);
    }
    value
}

/// The x86-64 column: the level the code uses, marked when the file checks the CPU at run time
/// or uses part of the level only.
fn x86_cell(file: &FileScan) -> String {
    match &file.x86_64 {
        None => "-".to_owned(),
        Some(x86) if x86.runtime_dispatch.is_some() => format!("{} (dispatch)", x86.level),
        Some(x86) if x86.partial_level.is_some() => format!("{} (partial)", x86.level),
        Some(x86) => x86.level.to_string(),
    }
}

fn human(scan: &WheelScan) -> String {
    let mut out = format!("{}\n", scan.wheel.display().bold());
    let properties = scan.properties();
    let key = Style::new().bold();
    let mut summary = Table::new(&["", ""]);
    summary.row(vec![
        Cell::new("properties").styled(key),
        Cell::new(if properties.is_empty() {
            "(none the binaries justify)".to_owned()
        } else {
            properties
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        }),
    ]);
    // The summary table's header row is empty: drop it.
    let rendered = summary.render(output::width());
    out.push_str(rendered.split_once('\n').map_or("", |(_, rest)| rest));
    out.push('\n');

    if scan.files.is_empty() {
        out.push_str("no ELF binaries in this wheel\n");
        return out;
    }
    let mut table = Table::new(&["file", "sm_arch", "cuda", "x86-64 (uses)", "needs"]);
    for file in &scan.files {
        let sm_arch: Vec<String> = file
            .sm_arch()
            .chunks(4)
            .map(|chunk| chunk.join(" "))
            .collect();
        table.row(vec![
            Cell::new(file.path.clone()),
            Cell::new(if !file.gpu_code_known() {
                "unknown".to_owned()
            } else if sm_arch.is_empty() {
                "-".to_owned()
            } else {
                sm_arch.join("\n")
            }),
            Cell::new(file.cuda_runtime.map_or("-".to_owned(), |m| m.to_string())),
            Cell::new(x86_cell(file)),
            Cell::new(file.needs().join("\n")),
        ]);
    }
    out.push_str(&table.render(output::width()));
    let marked = |mark: &str| scan.files.iter().any(|f| x86_cell(f).ends_with(mark));
    if marked("(dispatch)") {
        out.push_str(
            "\n(dispatch): the file checks the CPU at run time (cpuid, xgetbv, IFUNC or a CPU \
             feature record such as __cpu_model), so its level may be a fast path rather than a \
             requirement; `x86_64 :: level` counts only the other files.\n",
        );
    }
    if scan.files.iter().any(|f| !f.gpu_code_known()) {
        out.push_str(
            "\nunknown: the file carries GPU code vari cannot read (see needs), so what it runs \
             on is unknown and no `nvidia :: sm_arch` is inferred for the wheel.\n",
        );
    }
    if marked("(partial)") {
        out.push_str(
            "\n(partial): the code uses part of that level only, and a CPU below it runs it (see \
             needs), so no level fits; `x86_64 :: level` is not inferred from it.\n",
        );
    }
    out
}
