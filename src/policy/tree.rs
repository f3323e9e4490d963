//! Recursive reads: a read of a directory is a read of everything under it.
//!
//! This module owns the question "may this recursive reader (`grep -r`, `rg`, `git grep`,
//! `find -exec`, an archiver or a recursive copy, Claude Code's Grep and Glob) read something a
//! deny or ask read rule or a built-in protection covers?". First a static overlap test between
//! the directory and each pattern ([`PathPattern::may_match_under`]); only when a pattern may
//! match and the directory exists on this machine, a bounded walk (no symlinks followed) finds
//! the files it actually matches, which are then judged as reads like any other. What cannot be
//! settled (the directory is not here, or holds too many entries to check) is never allowed by a
//! rule.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::Policy;
use super::rule::{Matcher, PathPattern};
use crate::normalize::Context;
use crate::verdict::Effect;

/// Entries a walk looks at, at most.
const MAX_ENTRIES: usize = 20_000;
/// How long a walk may take, at most.
const MAX_WALK: Duration = Duration::from_millis(200);
/// Matching files reported, at most.
const MAX_FOUND: usize = 16;

/// What a recursive read of one directory may touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeScan {
    /// Nothing a deny or ask read rule or a protection covers can be under it.
    Clear,
    /// The files under it that such a pattern matches (judged as reads).
    Files(Vec<PathBuf>),
    /// It cannot be settled: why, naming the patterns that may match.
    Unsure(String),
}

impl Policy {
    /// The read patterns that may match something under `dir`: deny and ask `Read` rules, then
    /// the built-in read protections (labels for messages).
    fn overlapping<'a>(
        &'a self,
        dir: &Path,
        skips_hidden: bool,
        ctx: &Context,
    ) -> Vec<(String, &'a PathPattern)> {
        let mut out: Vec<(String, &PathPattern)> = self
            .rules
            .iter()
            .filter(|r| r.effect != Effect::Allow)
            .filter_map(|r| match &r.matcher {
                Matcher::ReadPath(p) => Some((r.pattern.clone(), p)),
                _ => None,
            })
            .filter(|(_, p)| p.may_match_under(dir, ctx, skips_hidden))
            .collect();
        out.extend(
            self.settings
                .protections
                .read_patterns()
                .filter(|(_, p)| p.may_match_under(dir, ctx, skips_hidden))
                .map(|(l, p)| (format!("protected {l}"), p)),
        );
        out
    }

    /// What a recursive read of `dir` may touch (see the module header).
    pub fn scan_tree(&self, dir: &Path, skips_hidden: bool, ctx: &Context) -> TreeScan {
        let patterns = self.overlapping(dir, skips_hidden, ctx);
        if patterns.is_empty() {
            return TreeScan::Clear;
        }
        let names = || {
            let mut n: Vec<&str> = patterns.iter().map(|(l, _)| l.as_str()).collect();
            n.dedup();
            n.truncate(6);
            n.join(", ")
        };
        let is_dir = match std::fs::symlink_metadata(dir) {
            Ok(m) => m.is_dir(),
            // Not there, inside a workspace root that is: guardian sees this workspace, and the
            // search reads nothing.
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    && ctx.roots().iter().any(|r| dir.starts_with(r) && r.is_dir()) =>
            {
                return TreeScan::Clear;
            }
            Err(_) => false,
        };
        if !is_dir {
            return TreeScan::Unsure(format!(
                "it reads everything under {}, which guardian cannot list here, and that may include paths covered by {}",
                dir.display(),
                names()
            ));
        }
        let matches = |path: &Path| {
            let protected = self.settings.protections.read(path, ctx).is_some();
            protected
                || patterns
                    .iter()
                    .filter(|(l, _)| !l.starts_with("protected "))
                    .any(|(_, p)| p.matches(path, ctx, true))
        };
        match walk(dir, skips_hidden, matches) {
            Some(found) if found.is_empty() => TreeScan::Clear,
            Some(found) => TreeScan::Files(found),
            None => TreeScan::Unsure(format!(
                "it reads everything under {}, which holds too many entries to check, and that may include paths covered by {}",
                dir.display(),
                names()
            )),
        }
    }
}

/// Walks `dir` (not following symlinks, skipping hidden names when asked), returning the paths
/// `matches` accepts (at most [`MAX_FOUND`]), or `None` when the walk had to stop early.
fn walk(dir: &Path, skips_hidden: bool, matches: impl Fn(&Path) -> bool) -> Option<Vec<PathBuf>> {
    let started = Instant::now();
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).ok()?;
        for entry in entries {
            let entry = entry.ok()?;
            seen += 1;
            if seen > MAX_ENTRIES || started.elapsed() > MAX_WALK {
                return None;
            }
            let name = entry.file_name();
            if skips_hidden && name.to_string_lossy().starts_with('.') {
                continue;
            }
            let path = entry.path();
            if matches(&path) {
                found.push(path.clone());
                if found.len() >= MAX_FOUND {
                    return Some(found);
                }
            }
            let Ok(kind) = entry.file_type() else {
                return None;
            };
            if kind.is_dir() {
                stack.push(path);
            }
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(deny: &[&str]) -> Policy {
        let text = format!(
            "[policy]\ndeny = [{}]\n",
            deny.iter()
                .map(|d| format!("{d:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let cfg = crate::Config::parse(&text, "t.toml").expect("parses");
        Policy::from_config(&cfg, Vec::new()).expect("compiles")
    }

    fn ctx(cwd: &Path) -> Context {
        Context {
            cwd: cwd.to_path_buf(),
            workspace_roots: vec![cwd.to_path_buf()],
            home: Some(PathBuf::from("/home/u")),
            git_dirs: Vec::new(),
        }
    }

    #[test]
    fn static_overlap_needs_no_file_system() {
        let p = policy(&["Read(./secrets/**)"]);
        let c = ctx(Path::new("/nowhere/repo"));
        // ripgrep skips hidden paths: .env and ~/.ssh cannot be under src; secrets/ can be
        // under the root but not under src.
        assert_eq!(
            p.scan_tree(Path::new("/nowhere/repo/src"), true, &c),
            TreeScan::Clear
        );
        assert!(matches!(
            p.scan_tree(Path::new("/nowhere/repo"), true, &c),
            TreeScan::Unsure(_)
        ));
        // grep -r reads hidden files: .env may be anywhere.
        assert!(matches!(
            p.scan_tree(Path::new("/nowhere/repo/src"), false, &c),
            TreeScan::Unsure(_)
        ));
    }

    #[test]
    fn a_local_directory_is_walked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/nested")).expect("mkdir");
        std::fs::write(root.join("src/nested/lib.rs"), "// TODO").expect("write");
        let p = policy(&["Read(./secrets/**)"]);
        let c = ctx(root);
        assert_eq!(p.scan_tree(&root.join("src"), false, &c), TreeScan::Clear);
        std::fs::write(root.join("src/nested/.env"), "KEY=1").expect("write");
        assert_eq!(
            p.scan_tree(&root.join("src"), false, &c),
            TreeScan::Files(vec![root.join("src/nested/.env")])
        );
        // Templates are not secrets.
        std::fs::remove_file(root.join("src/nested/.env")).expect("rm");
        std::fs::write(root.join("src/.env.example"), "KEY=").expect("write");
        assert_eq!(p.scan_tree(&root.join("src"), false, &c), TreeScan::Clear);
        std::fs::create_dir_all(root.join("secrets")).expect("mkdir");
        std::fs::write(root.join("secrets/db"), "pw").expect("write");
        match p.scan_tree(root, true, &c) {
            TreeScan::Files(mut found) => {
                found.sort();
                assert_eq!(found, vec![root.join("secrets"), root.join("secrets/db")]);
            }
            other => panic!("{other:?}"),
        }
    }
}
