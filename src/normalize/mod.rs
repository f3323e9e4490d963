//! Normalisation: turns a request's action into what the policy matches on.
//!
//! This module owns resolving paths (cwd, `~`, `.`/`..`) and taking shell command lines apart
//! ([`shell`]). It never decides anything: it only states facts about the action, and it states
//! them conservatively (what it cannot understand is marked as such, never guessed).

pub mod disk_diff;
pub mod shell;
pub mod shell_text;

use std::path::{Component, Path, PathBuf};

use crate::request::{Action, ReviewRequest};

pub use shell::{ShellAnalysis, SimpleCommand};

/// Where an action runs: the facts paths are resolved against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Context {
    /// The action's working directory, absolute and normalised.
    pub cwd: PathBuf,
    /// The session's workspace roots, absolute and normalised (may be empty).
    pub workspace_roots: Vec<PathBuf>,
    /// The home directory `~` expands to, if known.
    pub home: Option<PathBuf>,
    /// Git directories that `.git` files (worktrees, submodules) of the roots point to.
    pub git_dirs: Vec<PathBuf>,
}

/// An action as the policy sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum NormalizedAction {
    /// A shell command line, taken apart.
    Shell(ShellAnalysis),
    /// A file read, at an absolute normalised path.
    Read(PathBuf),
    /// A search of a directory tree (everything under the path is read).
    ReadTree(PathBuf),
    /// A file write, at an absolute normalised path.
    Write(PathBuf),
    /// A URL fetch.
    Fetch {
        /// The URL as given.
        url: String,
        /// Its host, lower-cased.
        host: String,
    },
    /// An MCP tool call.
    Mcp {
        /// The server's name.
        server: String,
        /// The tool's name.
        tool: String,
    },
}

impl Context {
    /// The context of a request: its cwd (or the first workspace root, or `server_cwd`).
    /// `home` is the service's; the request's `session.home`, when given, replaces it.
    pub fn of(req: &ReviewRequest, server_cwd: &Path, home: Option<&Path>) -> Context {
        let home = req
            .session
            .as_ref()
            .and_then(|s| s.home.as_deref())
            .map(Path::new)
            .filter(|h| h.is_absolute())
            .or(home);
        let roots: Vec<PathBuf> = req
            .session
            .as_ref()
            .map(|s| {
                s.workspace_roots
                    .iter()
                    .map(|r| resolve_path(r, server_cwd, home))
                    .collect()
            })
            .unwrap_or_default();
        let cwd = match req.action.cwd() {
            Some(c) if !c.is_empty() => {
                resolve_path(c, roots.first().map_or(server_cwd, |r| r), home)
            }
            _ => roots
                .first()
                .cloned()
                .unwrap_or_else(|| normalize_lexically(server_cwd)),
        };
        let mut git_dirs: Vec<PathBuf> = roots
            .iter()
            .chain(std::iter::once(&cwd))
            .filter_map(|d| cached_gitdir_of(d))
            .collect();
        git_dirs.dedup();
        Context {
            cwd,
            workspace_roots: roots,
            home: home.map(normalize_lexically),
            git_dirs,
        }
    }

    /// The roots paths must stay under: the workspace roots, or the cwd when none are given.
    pub fn roots(&self) -> &[PathBuf] {
        if self.workspace_roots.is_empty() {
            std::slice::from_ref(&self.cwd)
        } else {
            &self.workspace_roots
        }
    }

    /// Whether a path (absolute, normalised) is inside a workspace root.
    pub fn in_workspace(&self, path: &Path) -> bool {
        self.roots().iter().any(|r| path.starts_with(r))
    }

    /// Resolves a path the agent gave against this context.
    pub fn resolve(&self, path: &str) -> PathBuf {
        resolve_path(path, &self.cwd, self.home.as_deref())
    }
}

/// Normalises an action against its context. Shell commands are parsed here, synchronously;
/// the pipeline uses [`normalize_guarded`] to bound the parser's time.
pub fn normalize(action: &Action, ctx: &Context) -> NormalizedAction {
    match action {
        Action::Shell { command, .. } => NormalizedAction::Shell(shell::analyze(command)),
        other => normalize_non_shell(other, ctx),
    }
}

/// Where a `.git` *file* (worktree, submodule) points, if `dir/.git` is one.
pub fn gitdir_of(dir: &Path) -> Option<PathBuf> {
    let dotgit = dir.join(".git");
    if !dotgit.is_file() {
        return None;
    }
    let text = std::fs::read_to_string(&dotgit).ok()?;
    let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let p = Path::new(target);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    };
    Some(normalize_lexically(&abs))
}

/// How long a `.git` file lookup is reused: the request path then does no file system call for
/// a workspace it saw in the last seconds.
const GITDIR_TTL: std::time::Duration = std::time::Duration::from_secs(2);

type GitdirCache = dashmap::DashMap<PathBuf, (std::time::Instant, Option<PathBuf>)>;

/// [`gitdir_of`], remembered for [`GITDIR_TTL`] per directory (a sharded
/// map: no global lock).
fn cached_gitdir_of(dir: &Path) -> Option<PathBuf> {
    static CACHE: std::sync::OnceLock<GitdirCache> = std::sync::OnceLock::new();
    let cache = CACHE.get_or_init(GitdirCache::new);
    let now = std::time::Instant::now();
    if let Some(hit) = cache.get(dir)
        && now.duration_since(hit.0) < GITDIR_TTL
    {
        return hit.1.clone();
    }
    let found = gitdir_of(dir);
    if cache.len() > 4096 {
        cache.clear();
    }
    cache.insert(dir.to_path_buf(), (now, found.clone()));
    found
}

/// Shell lines up to this length are parsed on the calling task; longer ones on the blocking
/// pool under a deadline.
pub const INLINE_PARSE_BYTES: usize = 512;

/// Normalises an action, parsing shell commands on the blocking pool under `permits`, with a
/// deadline. A parse that times out is reported as a parse error (never allowed by a rule).
pub async fn normalize_guarded(
    action: &Action,
    ctx: &Context,
    permits: &std::sync::Arc<tokio::sync::Semaphore>,
    deadline: std::time::Duration,
) -> NormalizedAction {
    let Action::Shell { command, .. } = action else {
        return normalize_non_shell(action, ctx);
    };
    let failed = |why: String| {
        NormalizedAction::Shell(ShellAnalysis {
            raw: command.clone(),
            commands: Vec::new(),
            unknowns: vec![format!("the command could not be parsed: {why}")],
            parse_error: Some(why),
            unparsed: vec![command.clone()],
            text_only: Vec::new(),
            remote_code: Vec::new(),
        })
    };
    // Short lines (nearly all real traffic) are parsed in place: a few tens of microseconds,
    // bounded by the length and the opener limit, cheaper than a hand-off to another thread.
    if command.len() <= INLINE_PARSE_BYTES {
        return NormalizedAction::Shell(shell::analyze(command));
    }
    let work = async {
        let permit = std::sync::Arc::clone(permits)
            .acquire_owned()
            .await
            .map_err(|_| "the parser pool is closed".to_string())?;
        let text = command.clone();
        tokio::task::spawn_blocking(move || {
            // The permit is held until the parse really ends, even past the deadline.
            let _permit = permit;
            shell::analyze(&text)
        })
        .await
        .map_err(|e| format!("the parser failed: {e}"))
    };
    match tokio::time::timeout(deadline, work).await {
        Ok(Ok(a)) => NormalizedAction::Shell(a),
        Ok(Err(why)) => failed(why),
        Err(_) => failed(format!(
            "parsing took longer than {} ms",
            deadline.as_millis()
        )),
    }
}

fn normalize_non_shell(action: &Action, ctx: &Context) -> NormalizedAction {
    match action {
        Action::Shell { command, .. } => NormalizedAction::Shell(shell::analyze(command)),
        Action::Read {
            path,
            recursive: true,
            ..
        } => NormalizedAction::ReadTree(ctx.resolve(path)),
        Action::Read { path, .. } => NormalizedAction::Read(ctx.resolve(path)),
        Action::Write { path, .. } => NormalizedAction::Write(ctx.resolve(path)),
        Action::Fetch { url, .. } => {
            let host = url::Url::parse(url)
                .ok()
                .and_then(|u| {
                    u.host_str()
                        .map(|h| h.trim_end_matches('.').to_ascii_lowercase())
                })
                .unwrap_or_default();
            NormalizedAction::Fetch {
                url: url.clone(),
                host,
            }
        }
        Action::Mcp { server, tool, .. } => NormalizedAction::Mcp {
            server: server.clone(),
            tool: tool.clone(),
        },
    }
}

/// `p` made absolute against the process's working directory, `.`/`..` removed lexically (for
/// guardian's own files: configs, audit logs, imports, settings files).
pub fn absolute(p: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    normalize_lexically(&abs)
}

/// Resolves `path` against `base`: expands a leading `~`, joins relative paths, and removes
/// `.` and `..` lexically (symlinks are not followed; `..` above `/` stays at `/`).
pub fn resolve_path(path: &str, base: &Path, home: Option<&Path>) -> PathBuf {
    let expanded: PathBuf = match (path.strip_prefix('~'), home) {
        (Some(""), Some(h)) => h.to_path_buf(),
        (Some(rest), Some(h)) if rest.starts_with('/') => h.join(rest.trim_start_matches('/')),
        _ => PathBuf::from(path),
    };
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        base.join(expanded)
    };
    normalize_lexically(&joined)
}

/// Removes `.` and `..` components without touching the filesystem.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    // Relative path going above its start: keep the `..` (callers join first).
                    out.push("..");
                }
                if out.as_os_str().is_empty() {
                    out.push("/");
                }
            }
            Component::Normal(s) => out.push(s),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_lexically() {
        let home = Path::new("/home/u");
        let base = Path::new("/work/repo");
        assert_eq!(
            resolve_path("src/../.env", base, Some(home)),
            PathBuf::from("/work/repo/.env")
        );
        assert_eq!(
            resolve_path("~/.ssh/id_rsa", base, Some(home)),
            PathBuf::from("/home/u/.ssh/id_rsa")
        );
        assert_eq!(
            resolve_path("~", base, Some(home)),
            PathBuf::from("/home/u")
        );
        assert_eq!(
            resolve_path("../../../../etc/passwd", base, Some(home)),
            PathBuf::from("/etc/passwd")
        );
        assert_eq!(
            resolve_path("/a/./b//c/..", base, None),
            PathBuf::from("/a/b")
        );
        // `~user` is not expanded: it stays a relative name.
        assert_eq!(
            resolve_path("~x/y", base, Some(home)),
            PathBuf::from("/work/repo/~x/y")
        );
    }

    #[test]
    fn cwd_defaults_to_first_root_then_server_cwd() {
        let req = ReviewRequest::from_json(
            br#"{"action":{"kind":"read","path":"a"},"session":{"workspace_roots":["/w/r","/w/s"]}}"#,
        )
        .expect("valid");
        let ctx = Context::of(&req, Path::new("/srv"), None);
        assert_eq!(ctx.cwd, PathBuf::from("/w/r"));
        let req =
            ReviewRequest::from_json(br#"{"action":{"kind":"read","path":"a"}}"#).expect("valid");
        let ctx = Context::of(&req, Path::new("/srv"), None);
        assert_eq!(ctx.cwd, PathBuf::from("/srv"));
        assert_eq!(ctx.resolve("a"), PathBuf::from("/srv/a"));
    }
}

#[cfg(test)]
mod gitdir_cache_tests {
    use super::*;

    #[test]
    fn gitdir_lookups_are_reused_for_a_short_while() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join(".git"),
            "gitdir: ../main/.git/worktrees/w\n",
        )
        .expect("write");
        let first = cached_gitdir_of(dir.path()).expect("a gitdir file");
        assert!(first.ends_with("main/.git/worktrees/w"), "{first:?}");
        // Within the TTL the answer comes from the cache, without touching the file system.
        std::fs::remove_file(dir.path().join(".git")).expect("remove");
        assert_eq!(cached_gitdir_of(dir.path()), Some(first));
        // A directory never seen is looked up.
        let other = tempfile::tempdir().expect("tempdir");
        assert_eq!(cached_gitdir_of(other.path()), None);
    }
}
