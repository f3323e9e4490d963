//! What a whole-file write changes: the unified diff of its new content against the file on
//! disk, when the file is inside a workspace root guardian can read (a write judged by what it
//! changes, not by the whole new file). A write whose old content cannot be known (no such file,
//! outside every workspace, a symlink leaving it, too large, not UTF-8) gets none and is judged
//! as a whole-file write.

use std::path::Path;

use super::Context;
use crate::request::Action;

/// The largest old file read for a diff.
pub const MAX_OLD_BYTES: u64 = 1 << 20;

/// The longest a diff is computed before it settles for a coarser one.
const DIFF_DEADLINE: std::time::Duration = std::time::Duration::from_millis(100);

/// Lines of context around each change.
const CONTEXT_LINES: usize = 3;

/// Whether the action is a whole-file write (`content` without `diff`): the only kind [`fill`]
/// changes, so its context need not be built for any other.
pub fn wanted(action: &Action) -> bool {
    matches!(
        action,
        Action::Write {
            content: Some(_),
            diff: None,
            ..
        }
    )
}

/// Fills `diff` of a whole-file write (`content` without `diff`) from the file on disk; known
/// secrets in it are redacted (its removed lines are the old file's text). Returns whether it
/// did.
pub fn fill(action: &mut Action, ctx: &Context) -> bool {
    let Action::Write {
        path,
        content: Some(new),
        diff: diff @ None,
        ..
    } = action
    else {
        return false;
    };
    let target = ctx.resolve(path);
    let Some(old) = old_content(&target, ctx) else {
        return false;
    };
    if old == *new {
        *diff = Some(String::new());
        return true;
    }
    let text = unified(&old, new, &target.display().to_string());
    let r = crate::redact::Redactor::builtin();
    *diff = Some(r.redact(&text).into_owned());
    true
}

/// The unified diff of `old` to `new` for the file `shown` (an absolute path), with
/// [`CONTEXT_LINES`] of context: the one diff the server and the command hook both compute.
pub fn unified(old: &str, new: &str, shown: &str) -> String {
    // Myers' diff costs (N + M)·D: a rewrite of a large file is cut short at the deadline and
    // comes out coarser (still a correct diff), never slower.
    let deadline = std::time::Instant::now() + DIFF_DEADLINE;
    similar::TextDiff::configure()
        .deadline(deadline)
        .diff_lines(old, new)
        .unified_diff()
        .context_radius(CONTEXT_LINES)
        .header(&format!("a{shown}"), &format!("b{shown}"))
        .to_string()
}

/// The text of a file the caller may read: a regular file of at most [`MAX_OLD_BYTES`], UTF-8.
pub fn readable_text(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_OLD_BYTES {
        return None;
    }
    String::from_utf8(std::fs::read(path).ok()?).ok()
}

/// The file's text, when it is a regular file inside a workspace root (its real path too), at
/// most [`MAX_OLD_BYTES`], and UTF-8; only when the request names its workspace roots.
fn old_content(target: &Path, ctx: &Context) -> Option<String> {
    // Only where the client named its workspace: never the server's own directory by default.
    if ctx.workspace_roots.is_empty() || !ctx.in_workspace(target) {
        return None;
    }
    let real = target.canonicalize().ok()?;
    let inside = ctx
        .roots()
        .iter()
        .filter_map(|r| r.canonicalize().ok())
        .any(|r| real.starts_with(r));
    if !inside {
        return None;
    }
    readable_text(&real)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::ReviewRequest;

    fn write_req(root: &Path, path: &str, content: &str) -> (Action, Context) {
        let body = serde_json::json!({
            "action": {"kind": "write", "path": path, "content": content},
            "session": {"workspace_roots": [root.display().to_string()]}
        });
        let req = ReviewRequest::from_json(body.to_string().as_bytes()).expect("valid");
        let ctx = Context::of(&req, root, None);
        (req.action, ctx)
    }

    fn diff_of(a: &Action) -> Option<&str> {
        match a {
            Action::Write { diff, .. } => diff.as_deref(),
            _ => None,
        }
    }

    #[test]
    fn a_rewrite_of_a_large_file_is_diffed_within_the_deadline() {
        let old = "a\n".repeat(200_000);
        let new: String = (0..200_000).map(|i| format!("{i}\n")).collect();
        // Without the deadline this takes minutes; with it, a coarser diff that is still right.
        let d = unified(&old, &new, "/w/big.txt");
        assert!(d.contains("+199999\n") && d.contains("-a\n"));
    }

    #[test]
    fn a_whole_file_write_in_the_workspace_gets_its_diff_from_disk() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("real");
        std::fs::write(
            root.join("pyproject.toml"),
            "[tool.coverage.report]\nfail_under = 90\n",
        )
        .expect("write");
        let (mut a, ctx) = write_req(
            &root,
            "pyproject.toml",
            "[tool.coverage.report]\nfail_under = 60\n",
        );
        assert!(fill(&mut a, &ctx));
        let d = diff_of(&a).expect("a diff");
        assert!(
            d.contains("-fail_under = 90") && d.contains("+fail_under = 60"),
            "{d}"
        );
        assert!(d.contains(" [tool.coverage.report]"), "context kept: {d}");

        // The agent's own diff is kept; a new file, or one outside the workspace, gets none.
        let (mut a, ctx) = write_req(&root, "new.txt", "x\n");
        assert!(!fill(&mut a, &ctx) && diff_of(&a).is_none());
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::write(outside.path().join("o.txt"), "old\n").expect("write");
        let (mut a, ctx) = write_req(
            &root,
            &outside.path().join("o.txt").display().to_string(),
            "new\n",
        );
        assert!(!fill(&mut a, &ctx));
    }

    #[test]
    fn a_symlink_leaving_the_workspace_is_not_read_and_secrets_are_redacted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("real");
        let outside = tempfile::tempdir().expect("tempdir");
        let secret = outside.path().join("id_rsa");
        std::fs::write(&secret, "PRIVATE\n").expect("write");
        std::os::unix::fs::symlink(&secret, root.join("link")).expect("symlink");
        let (mut a, ctx) = write_req(&root, "link", "x\n");
        assert!(
            !fill(&mut a, &ctx),
            "a link out of the workspace is never read"
        );

        std::fs::write(
            root.join(".env"),
            "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD\n",
        )
        .expect("write");
        let (mut a, ctx) = write_req(&root, ".env", "OPENAI_API_KEY=\n");
        assert!(fill(&mut a, &ctx));
        let d = diff_of(&a).expect("a diff");
        assert!(!d.contains("sk-proj-abcdefghij"), "{d}");

        // Without workspace roots in the request, nothing is read.
        let req = ReviewRequest::from_json(
            format!(
                r#"{{"action":{{"kind":"write","path":"{}","content":"y"}}}}"#,
                root.join(".env").display()
            )
            .as_bytes(),
        )
        .expect("valid");
        let ctx = Context::of(&req, &root, None);
        let mut a = req.action;
        assert!(!fill(&mut a, &ctx));
    }
}
