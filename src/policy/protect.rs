//! Built-in protections: paths no rule can allow touching.
//!
//! This module owns the list of files that stay out of reach of allow rules, as Codex and Claude
//! Code keep them: writes to git hooks and git config (also where a `.git` file's `gitdir:`
//! points), writes to guardian's own config, policy and audit files, and reads of secrets (`.env`
//! files, SSH, cloud and container credentials). A protected action is never allowed by a rule:
//! it goes to the reviewer, and a deny rule still denies it. Config can add patterns
//! (`[policy] protect_read`, `protect_write`), never remove the built-in ones.

use std::path::{Path, PathBuf};

use super::error::ProtectError;
use super::rule::{PathPattern, path_pattern};
use crate::normalize::Context;

/// Reads that are never rule-allowed (path patterns in rule syntax).
///
/// Credential stores are matched under any directory (`//**/.ssh/**`), not only under guardian's
/// own `~`: the agent's home is usually another account's, or another machine's.
pub const BUILTIN_READ: &[&str] = &[
    ".env",
    ".env.*",
    "//**/.ssh/**",
    "//**/.aws/**",
    "//**/.config/gcloud/**",
    "//**/.azure/**",
    "//**/.netrc",
    "//**/.docker/config.json",
    "//**/.kube/config",
    "//**/.gnupg/**",
    "//**/.git-credentials",
    "//**/.config/gh/hosts.yml",
    "~/.npmrc",
    "~/.pypirc",
    "//home/*/.npmrc",
    "//home/*/.pypirc",
    "//Users/*/.npmrc",
    "//Users/*/.pypirc",
    "//root/.npmrc",
    "//root/.pypirc",
    "//etc/shadow",
    "//etc/sudoers",
];

/// `.env.*` files that are templates, not secrets.
const ENV_TEMPLATES: &[&str] = &[
    ".env.example",
    ".env.sample",
    ".env.template",
    ".env.dist",
    ".env.defaults",
];

/// Writes that are never rule-allowed.
pub const BUILTIN_WRITE: &[&str] = &[
    "//**/.git/hooks/**",
    "//**/.git/config",
    "//**/.git/modules/**/hooks/**",
    "//**/.git/modules/**/config",
    "//**/.git/worktrees/*/config",
    "//**/.husky/**",
    "~/.gitconfig",
    "~/.config/git/**",
];

/// The compiled protections.
#[derive(Debug, Clone)]
pub struct Protections {
    reads: Vec<(String, PathPattern)>,
    writes: Vec<(String, PathPattern)>,
    own_files: Vec<PathBuf>,
    own_globs: globset::GlobSet,
    own_glob_list: Vec<String>,
}

impl Protections {
    /// Compiles the built-in lists plus `extra_read` and `extra_write`; `own_files` are
    /// guardian's config, policy and audit files (absolute).
    pub fn new(
        extra_read: &[String],
        extra_write: &[String],
        own_files: Vec<PathBuf>,
    ) -> Result<Protections, ProtectError> {
        let compile = |list: &mut dyn Iterator<Item = &str>| {
            list.map(|p| {
                path_pattern(p)
                    .map(|pat| (p.to_string(), pat))
                    .map_err(|source| ProtectError::Pattern {
                        pattern: p.to_string(),
                        source,
                    })
            })
            .collect::<Result<Vec<_>, _>>()
        };
        let reads = compile(
            &mut BUILTIN_READ
                .iter()
                .copied()
                .chain(extra_read.iter().map(String::as_str)),
        )?;
        let writes = compile(
            &mut BUILTIN_WRITE
                .iter()
                .copied()
                .chain(extra_write.iter().map(String::as_str)),
        )?;
        Ok(Protections {
            reads,
            writes,
            own_files,
            own_globs: globset::GlobSet::empty(),
            own_glob_list: Vec::new(),
        })
    }

    /// Also protects, as guardian's own files, the absolute paths these globs match (`*` does
    /// not cross `/`): the audit log's segments and lock ([`crate::audit::segment::own_globs`]).
    pub fn with_own_globs(mut self, globs: &[String]) -> Result<Protections, ProtectError> {
        let mut b = globset::GlobSetBuilder::new();
        for g in self.own_glob_list.iter().chain(globs) {
            b.add(
                globset::GlobBuilder::new(g)
                    .literal_separator(true)
                    .build()
                    .map_err(|source| ProtectError::OwnGlob {
                        glob: g.clone(),
                        source,
                    })?,
            );
        }
        self.own_globs = b.build().map_err(ProtectError::OwnGlobs)?;
        self.own_glob_list.extend(globs.iter().cloned());
        Ok(self)
    }

    /// The protected patterns as written (reads, then writes), without guardian's own files:
    /// what a policy fingerprint reads, the same on every replica of a fleet whatever the
    /// paths of its config and audit files.
    pub fn patterns(&self) -> (Vec<&str>, Vec<&str>) {
        (
            self.reads.iter().map(|(p, _)| p.as_str()).collect(),
            self.writes.iter().map(|(p, _)| p.as_str()).collect(),
        )
    }

    /// The protected read pattern `path` matches, if any.
    pub fn read(&self, path: &Path, ctx: &Context) -> Option<String> {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if ENV_TEMPLATES.contains(&name) {
            return None;
        }
        self.reads
            .iter()
            .find(|(_, p)| p.matches(path, ctx, true))
            .map(|(l, _)| l.clone())
    }

    /// The protected write pattern `path` matches, if any.
    pub fn write(&self, path: &Path, ctx: &Context) -> Option<String> {
        if let Some(own) = self.own_files.iter().find(|f| f.as_path() == path) {
            return Some(format!("guardian's own file {}", own.display()));
        }
        if let Some(i) = self.own_globs.matches(path).first() {
            return Some(format!(
                "guardian's own file {} ({})",
                path.display(),
                self.own_glob_list[*i]
            ));
        }
        for gitdir in &ctx.git_dirs {
            if path.starts_with(gitdir.join("hooks")) || path == gitdir.join("config") {
                return Some(format!(
                    "the git directory {} (from a .git file)",
                    gitdir.display()
                ));
            }
        }
        self.writes
            .iter()
            .find(|(_, p)| p.matches(path, ctx, true))
            .map(|(l, _)| l.clone())
    }

    /// Why deleting or emptying `dir` with everything under it touches something protected, if
    /// it does: a workspace root or the home directory inside it (or it itself), a git
    /// directory (hooks and config are under it), or guardian's own files.
    pub fn tree_write(&self, dir: &Path, ctx: &Context) -> Option<String> {
        if let Some(r) = ctx.roots().iter().find(|r| r.starts_with(dir)) {
            return Some(format!("the workspace root {}", r.display()));
        }
        if let Some(h) = ctx.home.as_deref().filter(|h| h.starts_with(dir)) {
            return Some(format!("the home directory {}", h.display()));
        }
        if let Some(g) = ctx.git_dirs.iter().find(|g| g.starts_with(dir)) {
            return Some(format!("the git directory {}", g.display()));
        }
        if dir.components().any(|c| c.as_os_str() == ".git") {
            return Some(format!("the git directory around {}", dir.display()));
        }
        for name in [".git", ".husky"] {
            let inner = dir.join(name);
            if std::fs::symlink_metadata(&inner).is_ok() {
                return Some(format!(
                    "the git hooks and config under {}",
                    inner.display()
                ));
            }
        }
        if let Some(own) = self.own_files.iter().find(|f| f.starts_with(dir)) {
            return Some(format!("guardian's own file {}", own.display()));
        }
        None
    }

    /// The read protection patterns with their labels (for the recursive-read overlap test).
    pub fn read_patterns(&self) -> impl Iterator<Item = (&str, &PathPattern)> {
        self.reads.iter().map(|(l, p)| (l.as_str(), p))
    }

    /// The patterns, for listings.
    pub fn listing(&self) -> (Vec<String>, Vec<String>) {
        let mut w: Vec<String> = self.writes.iter().map(|(l, _)| l.clone()).collect();
        w.extend(self.own_files.iter().map(|f| f.display().to_string()));
        w.extend(self.own_glob_list.iter().cloned());
        (self.reads.iter().map(|(l, _)| l.clone()).collect(), w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Context {
        Context {
            cwd: PathBuf::from("/w/r"),
            workspace_roots: vec![PathBuf::from("/w/r")],
            home: Some(PathBuf::from("/home/u")),
            git_dirs: vec![PathBuf::from("/w/main/.git/worktrees/r")],
        }
    }

    #[test]
    fn builtin_protections() {
        let p = Protections::new(&[], &[], vec![PathBuf::from("/etc/guardian.toml")])
            .expect("compiles");
        let c = ctx();
        assert!(p.read(Path::new("/w/r/.env"), &c).is_some());
        assert!(p.read(Path::new("/w/r/app/.env.production"), &c).is_some());
        assert!(p.read(Path::new("/w/r/.env.example"), &c).is_none());
        assert!(p.read(Path::new("/home/u/.ssh/id_rsa"), &c).is_some());
        assert!(p.read(Path::new("/home/u/.aws/credentials"), &c).is_some());
        assert!(p.read(Path::new("/w/r/src/main.rs"), &c).is_none());
        assert!(
            p.write(Path::new("/w/r/.git/hooks/pre-commit"), &c)
                .is_some()
        );
        assert!(p.write(Path::new("/w/r/.git/config"), &c).is_some());
        assert!(p.write(Path::new("/w/r/.git/HEAD"), &c).is_none());
        assert!(
            p.write(Path::new("/w/main/.git/worktrees/r/hooks/x"), &c)
                .is_some()
        );
        assert!(p.write(Path::new("/etc/guardian.toml"), &c).is_some());
        assert!(p.write(Path::new("/w/r/src/main.rs"), &c).is_none());
        let p = Protections::new(&["~/.config/gh/**".into()], &[], vec![]).expect("compiles");
        assert!(
            p.read(Path::new("/home/u/.config/gh/config.yml"), &c)
                .is_some()
        );
    }
}
