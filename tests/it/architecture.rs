//! The house keeps its shape: every module of `src/` has a floor, and a module uses only what
//! is on lower floors (request → normalize → signals → reviewer → audit and session → config →
//! policy → decision → pipeline → the adapters: integrations, server, eval). The same holds
//! inside the shell normaliser, whose helpers form a line. This test reads the sources (comments,
//! doc links and test modules aside), names any import that points up or sideways, and fails
//! when a module is missing from the table, so the next one cannot slip in unlayered. It also
//! counts the `Result<_, String>` left in `src/`: errors that cross a module are typed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every module of `src/` (a file or a folder) and its floor; a module may use only modules on
/// lower floors. `main` and `bin` are the binaries, above everything.
const FLOORS: &[(&str, u8)] = &[
    // Ground: plain data and helpers that know nothing of the pipeline.
    ("texts", 0),
    ("flock", 0),
    ("redact", 0),
    ("metrics", 0),
    ("transport", 0),
    ("http_error", 0),
    ("request", 0),
    ("verdict", 1),
    ("labels", 2),
    ("openapi", 2),
    // The pipeline, in order.
    ("normalize", 2),
    ("signals", 3),
    ("reviewer", 4),
    ("audit", 5),
    ("session", 5),
    ("mandate", 5),
    ("audit_report", 6),
    ("config", 6),
    ("policy", 7),
    ("auth", 7),
    ("decision", 8),
    ("pipeline", 9),
    // The adapters.
    ("integrations", 10),
    ("ui", 10),
    ("server", 11),
    ("eval", 11),
    ("lib", 12),
    ("cli", 12),
    ("main", 13),
    ("bin", 13),
];

/// The shell normaliser's modules, in their line.
const SHELL_LINE: &[&str] = &[
    "text", "git", "command", "vars", "words", "options", "wrappers", "effects", "flags", "mod",
];

fn rust_files(p: &Path) -> Vec<PathBuf> {
    if p.is_file() {
        return vec![p.to_path_buf()];
    }
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).expect("read_dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The code of a file without its test module and its comments: (line number, code).
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    text.lines()
        .enumerate()
        .take_while(|(_, l)| l.trim() != "#[cfg(test)]")
        .map(|(n, l)| (n + 1, l.trim_start()))
        .filter(|(_, l)| !l.starts_with("//"))
        .collect()
}

/// The modules `prefix` names in a line of code (`crate::X::`, `crate::X;`, `crate::{X, …}`).
fn named_after(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices(prefix) {
        let rest = &code[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            out.extend(
                inner
                    .split(',')
                    .map(|m| m.trim().split("::").next().unwrap_or("").to_string()),
            );
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out.retain(|m| !m.is_empty() && m != "self");
    out
}

fn floor(module: &str) -> Option<u8> {
    FLOORS.iter().find(|(m, _)| *m == module).map(|(_, f)| *f)
}

/// The top-level module a source file belongs to (`src/policy/rule.rs` → `policy`).
fn module_of(src: &Path, f: &Path) -> String {
    let rel = f.strip_prefix(src).unwrap_or(f);
    let first = rel.components().next().map_or(String::new(), |c| {
        c.as_os_str().to_string_lossy().into_owned()
    });
    first.trim_end_matches(".rs").to_string()
}

#[test]
fn every_module_has_a_floor() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut missing = Vec::new();
    for e in std::fs::read_dir(&src).expect("src").flatten() {
        let name = e
            .file_name()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if floor(&name).is_none() {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "modules with no floor in tests/it/architecture.rs FLOORS (add them where they belong): {missing:?}"
    );
}

#[test]
fn dependencies_point_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for f in rust_files(&src) {
        let module = module_of(&src, &f);
        let Some(own) = floor(&module) else { continue };
        let text = std::fs::read_to_string(&f).expect("read");
        for (line, code) in code_lines(&text) {
            for used in named_after(code, "crate::")
                .into_iter()
                .chain(named_after(code, "guardian::"))
            {
                // `guardian::Config` and its kind are the crate root's re-exports of lower modules.
                if used == module || used.starts_with(|c: char| c.is_ascii_uppercase()) {
                    continue;
                }
                let ok = floor(&used).is_some_and(|f| f < own);
                if !ok {
                    violations.push(format!(
                        "{}:{line}: {module} (floor {own}) uses {used} (floor {:?}): {code}",
                        f.strip_prefix(&src).unwrap_or(&f).display(),
                        floor(&used)
                    ));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports pointing up or sideways:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_shell_normalisers_helpers_form_a_line() {
    let shell = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/normalize/shell");
    let rank = |m: &str| SHELL_LINE.iter().position(|x| *x == m);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut violations = Vec::new();
    for f in rust_files(&shell) {
        let rel = f.strip_prefix(&shell).unwrap_or(&f);
        let comps: Vec<String> = rel
            .components()
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .collect();
        let module = comps[0].clone();
        if module == "tests" {
            continue;
        }
        let Some(own) = rank(&module) else {
            violations.push(format!("{} is not in SHELL_LINE", rel.display()));
            continue;
        };
        *seen.entry(module.clone()).or_default() += 1;
        // `super::` is the shell module from a file directly in it or from a folder's mod.rs;
        // `super::super::` from a file inside a folder.
        let up = if comps.len() == 1 || comps.get(1).is_some_and(|c| c == "mod") {
            "super::"
        } else {
            "super::super::"
        };
        let text = std::fs::read_to_string(&f).expect("read");
        for (line, code) in code_lines(&text) {
            let mut used = named_after(code, "shell::");
            if up == "super::" {
                used.extend(
                    named_after(code, "super::")
                        .into_iter()
                        .filter(|u| u != "super"),
                );
            } else {
                used.extend(named_after(code, up));
            }
            for u in used {
                if u == module {
                    continue;
                }
                // Items of the shell module itself (`super::SimpleCommand`) are the walker's.
                let r = rank(&u).unwrap_or_else(|| rank("mod").unwrap_or(usize::MAX));
                if r >= own {
                    violations.push(format!(
                        "{}:{line}: {module} uses {u}: {code}",
                        rel.display()
                    ));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "the shell normaliser's helpers must form a line ({}):\n{}",
        SHELL_LINE.join(" → "),
        violations.join("\n")
    );
    assert!(seen.len() >= 8, "{seen:?}");
}

/// `Result<_, String>` left in `src/`, at most: errors that cross a module are typed (an enum
/// or struct saying what failed and where); a few private helpers may still say it in text.
const MAX_STRING_ERRORS: usize = 10;

/// The `Result<…, String>` types written in a line of code: each `Result<` whose last top-level
/// argument is `String`.
fn string_results(code: &str) -> usize {
    let mut n = 0;
    for (i, _) in code.match_indices("Result<") {
        if code[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let args = &code[i + "Result<".len()..];
        let (mut depth, mut last) = (0usize, 0usize);
        let mut end = None;
        for (j, c) in args.char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' if depth == 0 => {
                    end = Some(j);
                    break;
                }
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => last = j + 1,
                _ => {}
            }
        }
        if end.is_some_and(|e| last > 0 && args[last..e].trim() == "String") {
            n += 1;
        }
    }
    n
}

#[test]
fn errors_that_cross_modules_are_typed() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    let mut public = Vec::new();
    for f in rust_files(&src) {
        let text = std::fs::read_to_string(&f).expect("read");
        // Inside the signature of a `pub fn` (which may span lines) until its body or `;`.
        let mut in_pub_fn = false;
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            let starts_pub = code.starts_with("pub ") || code.starts_with("pub(");
            in_pub_fn |= starts_pub && code.contains("fn ");
            for _ in 0..string_results(code) {
                let at = format!(
                    "{}:{}: {code}",
                    f.strip_prefix(&src).unwrap_or(&f).display(),
                    n + 1
                );
                if starts_pub || in_pub_fn {
                    public.push(at.clone());
                }
                found.push(at);
            }
            if code.ends_with('{') || code.ends_with(';') {
                in_pub_fn = false;
            }
        }
    }
    assert!(
        public.is_empty(),
        "public items with a `Result<_, String>` (an error crossing modules must be typed):\n{}",
        public.join("\n")
    );
    assert!(
        found.len() <= MAX_STRING_ERRORS,
        "{} `Result<_, String>` in src/ (at most {MAX_STRING_ERRORS}): give these an error type \
         that says what failed and where (see src/policy/error.rs, src/eval/error.rs):\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn the_string_error_count_reads_types_not_text() {
    assert_eq!(
        string_results("fn f() -> Result<(u64, String), String> {"),
        1
    );
    assert_eq!(
        string_results("fn f() -> Result<Vec<Result<u8, String>>, Error> {"),
        1
    );
    assert_eq!(string_results("fn f() -> Result<String, Error> {"), 0);
    assert_eq!(string_results("fn f() -> io::Result<String> {"), 0);
    assert_eq!(string_results("type R = MyResult<u8, String>;"), 0);
}

#[test]
fn the_check_finds_uses_and_skips_comments_and_tests() {
    let text = "use crate::request::Action;\n/// see [`crate::policy::Policy`]\n    let g = crate::policy::protect::gitdir_of(d);\nuse crate::{policy, request::X};\n#[cfg(test)]\nuse crate::pipeline;\n";
    let lines = code_lines(text);
    let found: Vec<(usize, Vec<String>)> = lines
        .iter()
        .map(|(n, c)| (*n, named_after(c, "crate::")))
        .filter(|(_, m)| !m.is_empty())
        .collect();
    assert_eq!(
        found,
        vec![
            (1, vec!["request".to_string()]),
            (3, vec!["policy".to_string()]),
            (4, vec!["policy".to_string(), "request".to_string()]),
        ]
    );
}
