//! `guardian eval --label`: labelling imported cases by hand.
//!
//! This module owns the interactive loop: every case whose `expected` is null is shown (intent,
//! the last transcript turns, the action, the notes) and the answer (`a` allow, `d` deny, `s`
//! skip, `q` quit) is written back to its file at once, atomically (a temporary file renamed over
//! the original), so quitting or a crash never loses a label already given nor touches the other
//! lines.

use std::io::{BufRead, Write};
use std::path::Path;

use serde_json::Value;

use super::Error;

/// What a labelling session did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LabelSummary {
    /// Cases labeled allow or deny.
    pub labeled: usize,
    /// Cases skipped.
    pub skipped: usize,
    /// Unlabeled cases left (skipped or not reached).
    pub remaining: usize,
    /// Whether the labeller quit (`q` or the end of the input) before the end of the file.
    pub quit: bool,
}

/// Lines of transcript shown before each case.
const SHOWN_TURNS: usize = 4;

fn short(s: &str, max: usize) -> String {
    let one_line = s.replace('\n', " ⏎ ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        format!("{}…", one_line.chars().take(max).collect::<String>())
    }
}

fn show(case: &Value, n: usize, total: usize, out: &mut impl Write) -> std::io::Result<()> {
    let req = &case["request"];
    writeln!(
        out,
        "\n── case {n}/{total}: {}",
        case["id"].as_str().unwrap_or("?")
    )?;
    if let Some(intent) = req["intent"].as_str() {
        writeln!(out, "intent: {}", short(intent, 300))?;
    }
    if let Some(turns) = req["transcript"].as_array() {
        let start = turns.len().saturating_sub(SHOWN_TURNS);
        for t in &turns[start..] {
            writeln!(
                out,
                "  {}: {}",
                t["role"].as_str().unwrap_or("?"),
                short(t["content"].as_str().unwrap_or(""), 200)
            )?;
        }
    }
    let action = &req["action"];
    let what = match action["kind"].as_str() {
        Some("shell") => format!("shell: {}", action["command"].as_str().unwrap_or("")),
        Some("read") => format!("read: {}", action["path"].as_str().unwrap_or("")),
        Some("write") => format!("write: {}", action["path"].as_str().unwrap_or("")),
        Some("fetch") => format!("fetch: {}", action["url"].as_str().unwrap_or("")),
        Some("mcp") => format!(
            "mcp: {}.{} {}",
            action["server"].as_str().unwrap_or(""),
            action["tool"].as_str().unwrap_or(""),
            action["arguments"]
        ),
        _ => action.to_string(),
    };
    writeln!(out, "ACTION {}", short(&what, 600))?;
    if let Some(cwd) = action["cwd"].as_str() {
        writeln!(out, "  in {cwd}")?;
    }
    if let Some(notes) = case["notes"].as_str().filter(|s| !s.is_empty()) {
        writeln!(out, "notes: {notes}")?;
    }
    write!(out, "[a]llow / [d]eny / [s]kip / [q]uit > ")?;
    out.flush()
}

fn write_atomically(path: &Path, lines: &[String]) -> Result<(), Error> {
    let tmp = path.with_extension("jsonl.tmp");
    let mut text = lines.join("\n");
    text.push('\n');
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|source| Error::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Labels the unlabeled cases of `path`, reading answers from `input` and talking on `out`.
/// The end of `input` is a quit.
pub fn label_file(
    path: &Path,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> Result<LabelSummary, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let bad_line = |i: usize| {
        move |source| Error::Line {
            path: path.to_path_buf(),
            line: i + 1,
            source,
        }
    };
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut todo = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(bad_line(i))?;
        if v.get("expected").is_none_or(Value::is_null) {
            todo.push(i);
        }
    }
    let mut summary = LabelSummary {
        remaining: todo.len(),
        ..LabelSummary::default()
    };
    let total = todo.len();
    let io = Error::Terminal;
    'cases: for (n, &i) in todo.iter().enumerate() {
        let mut case: Value = serde_json::from_str(&lines[i]).map_err(bad_line(i))?;
        show(&case, n + 1, total, out).map_err(io)?;
        loop {
            let mut answer = String::new();
            if input.read_line(&mut answer).map_err(io)? == 0 {
                summary.quit = true;
                break 'cases;
            }
            let label = match answer.trim().to_ascii_lowercase().as_str() {
                "a" | "allow" => "allow",
                "d" | "deny" => "deny",
                "s" | "skip" | "" => {
                    summary.skipped += 1;
                    continue 'cases;
                }
                "q" | "quit" => {
                    summary.quit = true;
                    break 'cases;
                }
                _ => {
                    write!(out, "a, d, s or q > ").map_err(io)?;
                    out.flush().map_err(io)?;
                    continue;
                }
            };
            case["expected"] = Value::String(label.into());
            let note = match case["notes"].as_str() {
                Some(n) if !n.is_empty() => format!("{n}; labeled {label} by hand"),
                _ => format!("labeled {label} by hand"),
            };
            case["notes"] = Value::String(note);
            lines[i] = serde_json::to_string(&case).map_err(Error::Encode)?;
            write_atomically(path, &lines)?;
            summary.labeled += 1;
            summary.remaining -= 1;
            continue 'cases;
        }
    }
    writeln!(
        out,
        "\n{}: {} labeled, {} skipped, {} unlabeled left",
        path.display(),
        summary.labeled,
        summary.skipped,
        summary.remaining
    )
    .map_err(io)?;
    Ok(summary)
}
