//! `vari rank`: the variants of a release in the order an installer would prefer them, and the
//! file it would install. Argument mapping and rendering only: the rules are in `vari-select`.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use owo_colors::Style;
use tracing::debug;
use vari_core::metadata::{property_refs, VariantProperties};
use vari_core::ordering::SelectionOptions;
use vari_core::VariantLabel;
use vari_select::{
    choose, unused_options, Choice, FileFate, InputKind, Release, Target, UnusedOption,
    VariantVerdict,
};

use crate::cli::RankArgs;
use crate::error::CliError;
use crate::explain::reason;
use crate::output;
use crate::settings::Selecting;
use crate::table::{count, properties_text, Cell, Table};

/// One entry of the `--json` `variants` list (`docs/reference/output.md`), borrowing from the choice so that
/// large releases are written without copying every property.
struct Row<'a> {
    label: &'a VariantLabel,
    compatible: bool,
    properties: &'a VariantProperties,
    reason: Option<String>,
    /// The variant's wheel files (only when the release was given with its wheels).
    files: Option<Vec<String>>,
}

/// Ranks FILE's variants for the target and prints the order.
pub(super) fn run(args: &RankArgs) -> Result<ExitCode, CliError> {
    let started = Instant::now();
    let release = read_release(&args.file)?;
    for warning in &release.warnings {
        output::warn(&warning.to_string());
    }
    debug!(elapsed = ?started.elapsed(), variants = release.metadata.variants.len(), "read");
    // The command line's lists replace the configured ones.
    let Selecting {
        target,
        selection: options,
        ..
    } = Selecting::resolve(&args.target, &args.selection)?;
    debug!(elapsed = ?started.elapsed(), target = %target.hardware.source, "target");
    let choice = choose(&release, &target, &options);
    debug!(elapsed = ?started.elapsed(), compatible = choice.order.len(), "ranked");
    warn_unmatched(&choice, &release, &target, &options, &args.file);
    let rows = rows(&choice, &release, &target);
    if args.json {
        // Streamed in chunks rather than built whole (see `Chunks`): everything in it is
        // decided already, so only a failing stdout can cut it short.
        let written = rank_json(&choice, &release, &rows, std::io::stdout().lock()).map(drop);
        output::stdout_result(written)?;
    } else {
        output::print(&human(&rows, &choice, &release, &target))?;
    }
    debug!(elapsed = ?started.elapsed(), "printed");
    drop(rows);
    // The process ends right after: handing a large release's thousands of small allocations
    // back to the allocator one by one would add ~15% to the run for nothing.
    std::mem::forget(choice);
    std::mem::forget(release);
    Ok(ExitCode::SUCCESS)
}

/// The release at FILE, or on standard input for `-`.
fn read_release(file: &Path) -> Result<Release, CliError> {
    let from = CliError::Invalid;
    if file == Path::new("-") {
        let bytes = crate::load::read_stdin()?;
        let name = Path::new("<stdin>");
        let text = vari_select::text_of(name, bytes).map_err(from)?;
        return Release::from_json_text(name, &text, InputKind::IndexJson).map_err(from);
    }
    Release::read(file).map_err(from)
}

/// Warns about options that match nothing: a typo would otherwise pass silently.
fn warn_unmatched(
    choice: &Choice,
    release: &Release,
    target: &Target,
    options: &SelectionOptions,
    file: &Path,
) {
    if let Some(label) = &choice.unmatched_variant {
        output::warn(&format!(
            "--variant {label}: {} has no variant with this label, so none is selectable",
            file.display()
        ));
    }
    for unused in unused_options(release, target, options) {
        output::warn(&match unused {
            UnusedOption::Prefer(p) => {
                format!("--prefer {p}: matches no property of the release or the target")
            }
            UnusedOption::Forbid(p) => {
                format!("--forbid {p}: matches no property of the release or the target")
            }
            UnusedOption::EnableOptional(ns) => {
                format!("--enable-optional {ns}: the release has no provider for this namespace")
            }
        });
    }
}

/// File names, without their directory.
fn file_names<'a>(files: impl Iterator<Item = &'a vari_select::ReleaseFile>) -> Vec<String> {
    files.map(vari_select::ReleaseFile::name).collect()
}

fn rows<'a>(choice: &'a Choice, release: &'a Release, target: &Target) -> Vec<Row<'a>> {
    choice
        .variants
        .iter()
        .map(|v: &VariantVerdict| Row {
            label: v.label,
            compatible: v.is_selectable(),
            properties: v.properties,
            reason: v.rejection.as_ref().map(|r| reason(r, target)),
            files: release
                .has_files
                .then(|| file_names(release.files_of(v.label))),
        })
        .collect()
}

/// Writes the `--json` document to `out`, pretty-printed (two-space indentation, as
/// `serde_json` writes it), as UTF-8.
///
/// Written by hand: a large release has tens of thousands of property strings, and names can
/// never need escaping (their grammar is `[a-z0-9_.]`), so each is copied straight into the
/// buffer; only free text (reasons, file names) goes through `serde_json`'s escaping. The unit
/// tests check the bytes equal `serde_json::to_writer_pretty`'s.
fn rank_json<W: Write>(
    choice: &Choice,
    release: &Release,
    rows: &[Row],
    out: W,
) -> std::io::Result<W> {
    let files = release.has_files.then(|| {
        (
            choice.chosen().map(vari_select::ReleaseFile::name),
            file_names(release.plain_files()),
        )
    });
    document(&choice.order, rows, files, out)
}

/// The document: `order`, `variants`, and with a release's files `chosen` and `non_variant`.
/// Everything it says is computed before it is called; only writing to `out` can fail.
fn document<W: Write>(
    order: &[VariantLabel],
    rows: &[Row],
    files: Option<(Option<String>, Vec<String>)>,
    out: W,
) -> std::io::Result<W> {
    let mut out = Chunks::new(out);
    out.bytes(b"{\n  \"order\": ");
    string_list(&mut out, order.iter().map(VariantLabel::as_str), 2)?;
    out.bytes(b",\n  \"variants\": ");
    if rows.is_empty() {
        out.bytes(b"[]");
    } else {
        out.bytes(b"[");
        for (i, row) in rows.iter().enumerate() {
            out.bytes(if i == 0 { b"\n    {" } else { b",\n    {" });
            out.bytes(b"\n      \"label\": ");
            json_string(&mut out, row.label.as_str());
            out.bytes(b",\n      \"compatible\": ");
            out.bytes(if row.compatible { b"true" } else { b"false" });
            out.bytes(b",\n      \"properties\": ");
            property_list(&mut out, row.properties);
            out.bytes(b",\n      \"reason\": ");
            match &row.reason {
                Some(reason) => json_string(&mut out, reason),
                None => out.bytes(b"null"),
            }
            if let Some(files) = &row.files {
                out.bytes(b",\n      \"files\": ");
                string_list(&mut out, files.iter().map(String::as_str), 6)?;
            }
            out.bytes(b"\n    }");
            out.pass_on()?;
        }
        out.bytes(b"\n  ]");
    }
    if let Some((chosen, plain)) = files {
        out.bytes(b",\n  \"chosen\": ");
        match chosen {
            Some(name) => json_string(&mut out, &name),
            None => out.bytes(b"null"),
        }
        out.bytes(b",\n  \"non_variant\": ");
        string_list(&mut out, plain.iter().map(String::as_str), 2)?;
    }
    out.bytes(b"\n}\n");
    out.finish()
}

/// The document on its way out: bytes gather in a buffer of [`Chunks::SIZE`], handed to the
/// writer each time it fills. The whole document is never held (0.8 MB at 1,000 variants, all
/// of it memory the process had to fault in), and the buffer stays in the CPU's cache.
struct Chunks<W> {
    buffer: Vec<u8>,
    out: W,
}

impl<W: Write> Chunks<W> {
    const SIZE: usize = 64 * 1024;

    fn new(out: W) -> Self {
        Self {
            // Room for a chunk and the row that overflows it.
            buffer: Vec::with_capacity(2 * Self::SIZE),
            out,
        }
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    fn byte(&mut self, byte: u8) {
        self.buffer.push(byte);
    }

    fn spaces(&mut self, n: usize) {
        self.buffer.resize(self.buffer.len() + n, b' ');
    }

    /// Hands the buffer on once it holds a chunk, through its last line end: standard output
    /// is line-buffered, and a chunk ending mid-line would cost a second `write` for the tail.
    fn pass_on(&mut self) -> std::io::Result<()> {
        if self.buffer.len() >= Self::SIZE {
            let end = self
                .buffer
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(self.buffer.len(), |i| i + 1);
            self.out.write_all(&self.buffer[..end])?;
            self.buffer.drain(..end);
        }
        Ok(())
    }

    fn finish(mut self) -> std::io::Result<W> {
        self.out.write_all(&self.buffer)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// For `serde_json`'s escaping of free text.
impl<W> Write for Chunks<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A JSON string: copied as it is when nothing needs escaping (always, for names).
fn json_string<W: Write>(out: &mut Chunks<W>, text: &str) {
    if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.byte(b'"');
        out.bytes(text.as_bytes());
        out.byte(b'"');
    } else if serde_json::to_writer(&mut *out, text).is_err() {
        // Writing a `str` into the buffer cannot fail; keep the document valid regardless.
        out.bytes(b"null");
    }
}

/// A JSON list of strings, its items indented `indent + 2` spaces, `[]` when empty.
fn string_list<'a, W: Write>(
    out: &mut Chunks<W>,
    items: impl Iterator<Item = &'a str>,
    indent: usize,
) -> std::io::Result<()> {
    let mut empty = true;
    for item in items {
        out.bytes(if empty { b"[" } else { b"," });
        out.byte(b'\n');
        out.spaces(indent + 2);
        json_string(out, item);
        out.pass_on()?;
        empty = false;
    }
    if empty {
        out.bytes(b"[]");
    } else {
        out.byte(b'\n');
        out.spaces(indent);
        out.byte(b']');
    }
    Ok(())
}

/// The properties as a list of `ns :: f :: v` strings (names never need escaping).
fn property_list<W: Write>(out: &mut Chunks<W>, properties: &VariantProperties) {
    let mut empty = true;
    for (ns, f, v) in property_refs(properties) {
        out.bytes(if empty {
            b"[\n        \""
        } else {
            b",\n        \""
        });
        for part in [ns.as_str(), " :: ", f.as_str(), " :: ", v.as_str()] {
            out.bytes(part.as_bytes());
        }
        out.byte(b'"');
        empty = false;
    }
    out.bytes(if empty { b"[]" } else { b"\n      ]" });
}

fn human(rows: &[Row], choice: &Choice, release: &Release, target: &Target) -> String {
    let compatible = choice.order.len();
    let mut text = String::new();
    if !rows.is_empty() {
        text.push_str(&format!(
            "{}, {compatible} selectable for {}\n\n",
            count(rows.len(), "variant"),
            target.hardware.source
        ));
        let mut table = Table::new(&["#", "label", "properties"]);
        let best = Style::new().green().bold();
        let rejected = Style::new().dimmed();
        // `rows` lists the selectable variants first, in `order`, then the rest.
        for (position, row) in rows.iter().enumerate() {
            if row.compatible {
                let style = if position == 0 {
                    best
                } else {
                    Style::new().bold()
                };
                table.row(vec![
                    Cell::new((position + 1).to_string()),
                    Cell::new(row.label.as_str()).styled(style),
                    Cell::new(properties_text(row.properties)),
                ]);
            } else {
                let reason = row.reason.as_deref().unwrap_or("not selectable");
                table.row(vec![
                    Cell::new("-").styled(rejected),
                    Cell::new(row.label.as_str()).styled(rejected),
                    Cell::new(format!("{}\n✗ {reason}", properties_text(row.properties)))
                        .styled(rejected),
                ]);
            }
        }
        text.push_str(&table.render(output::width()));
    }
    let plain = file_names(release.plain_files());
    if !plain.is_empty() && !rows.is_empty() {
        text.push_str(&format!(
            "\nnon-variant fallback (after every variant): {}\n",
            plain.join(", ")
        ));
    }
    if release.has_files {
        text.push('\n');
        text.push_str(&install_line(choice, release));
        text.push('\n');
    } else if compatible == 0 {
        text.push_str("\nno variant fits this target\n");
    }
    text
}

/// `install: FILE (variant LABEL)`, or why nothing can be installed.
fn install_line(choice: &Choice, release: &Release) -> String {
    let Some(chosen) = choice.chosen() else {
        let wrong_tags = choice
            .files
            .iter()
            .filter(|f| f.fate == FileFate::WrongTags)
            .count();
        return if wrong_tags == release.files.len() && wrong_tags > 0 {
            "nothing to install: no wheel is for this target's Python and platform".to_owned()
        } else {
            "nothing to install: no variant fits this target and there is no non-variant wheel"
                .to_owned()
        };
    };
    match &chosen.filename.label {
        Some(label) => format!("install: {} (variant {label})", chosen.name()),
        None if choice.order.is_empty() && !release.metadata.variants.is_empty() => format!(
            "install: {} (the non-variant wheel: no variant fits)",
            chosen.name()
        ),
        None => format!("install: {} (the non-variant wheel)", chosen.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_are_grouped_per_feature() {
        let mut props = VariantProperties::new();
        for p in ["b::f::1", "a::f::2", "a::g::x", "a::f::1"] {
            let p: vari_core::Property = p.parse().unwrap();
            props
                .get_or_insert_with(p.namespace, Default::default)
                .get_or_insert_with(p.feature, Default::default)
                .insert(p.value);
        }
        assert_eq!(
            properties_text(&props),
            "a :: f :: 1 2\na :: g :: x\nb :: f :: 1"
        );
        assert_eq!(
            properties_text(&VariantProperties::new()),
            "(no properties)"
        );
    }

    #[test]
    fn hand_written_json_is_what_serde_json_writes() {
        let mut props = VariantProperties::new();
        for p in [
            "nvidia::sm_arch::90_real",
            "nvidia::sm_arch::86_real",
            "x86_64::level::v3",
        ] {
            let p: vari_core::Property = p.parse().unwrap();
            props
                .get_or_insert_with(p.namespace, Default::default)
                .get_or_insert_with(p.feature, Default::default)
                .insert(p.value);
        }
        let empty = VariantProperties::new();
        let labels: Vec<VariantLabel> = ["cu128", "null"]
            .iter()
            .map(|l| l.parse().unwrap())
            .collect();
        let rows = vec![
            Row {
                label: &labels[0],
                compatible: false,
                properties: &props,
                reason: Some("needs \"sm_arch\"\tand a \\ back\u{1}slash — ✗".to_owned()),
                files: Some(vec!["a-1-py3-none-any-cu128.whl".to_owned()]),
            },
            Row {
                label: &labels[1],
                compatible: true,
                properties: &empty,
                reason: None,
                files: Some(vec![]),
            },
        ];
        // The same document through serde_json, fields in the contract's order.
        #[derive(serde::Serialize)]
        struct SerdeRow {
            label: String,
            compatible: bool,
            properties: Vec<String>,
            reason: Option<String>,
            #[serde(skip_serializing_if = "Option::is_none")]
            files: Option<Vec<String>>,
        }
        #[derive(serde::Serialize)]
        struct SerdeDoc {
            order: Vec<String>,
            variants: Vec<SerdeRow>,
            #[serde(skip_serializing_if = "Option::is_none")]
            chosen: Option<Option<String>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            non_variant: Option<Vec<String>>,
        }
        let variants: Vec<SerdeRow> = rows
            .iter()
            .map(|r| SerdeRow {
                label: r.label.to_string(),
                compatible: r.compatible,
                properties: property_refs(r.properties)
                    .map(|(n, f, v)| format!("{n} :: {f} :: {v}"))
                    .collect(),
                reason: r.reason.clone(),
                files: r.files.clone(),
            })
            .collect();
        let expected = |chosen, non_variant| {
            let doc = SerdeDoc {
                order: vec!["cu128".into(), "null".into()],
                variants,
                chosen,
                non_variant,
            };
            format!("{}\n", serde_json::to_string_pretty(&doc).unwrap())
        };
        let with_files = document(
            &labels,
            &rows,
            Some((Some("a-1-py3-none-any-cu128.whl".to_owned()), vec![])),
            Vec::new(),
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(with_files).unwrap(),
            expected(
                Some(Some("a-1-py3-none-any-cu128.whl".to_owned())),
                Some(vec![])
            )
        );
        let no_rows = document(&[], &[], None, Vec::new()).unwrap();
        assert_eq!(
            String::from_utf8(no_rows).unwrap(),
            "{\n  \"order\": [],\n  \"variants\": []\n}\n"
        );
    }
}
