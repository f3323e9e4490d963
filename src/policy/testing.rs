//! Policy tests: tables of actions and the decision a policy must reach (like `opa test`).
//!
//! This module owns the test-file format used by `guardian policy test` and by the bypass
//! corpus in `tests/corpus/`:
//!
//! ```toml
//! [policies.git]                      # optional named policies, same keys as [policy]
//! deny = ["Bash(git push *)"]
//!
//! [[case]]
//! name = "compound: deny in the second command"
//! policy = "git"                      # optional: else the policy under test (--config)
//! command = "git status && git push"  # a shell action; or `action = { kind = "read", … }`
//! cwd = "/workspace"                  # default /workspace; workspace_roots default [cwd]
//! expect = "deny"                     # allow | ask | deny
//! rule = "Bash(git push *)"           # optional: the pattern of the deciding rule
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::{Config, PolicyConfig};
use crate::normalize::{Context, normalize, resolve_path};
use crate::request::Action;
use crate::verdict::Effect;

use super::Policy;
use super::error::TestFileError;

/// A policy test file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestFile {
    /// Named policies cases may use.
    #[serde(default)]
    pub policies: BTreeMap<String, PolicyConfig>,
    /// The cases.
    #[serde(default)]
    pub case: Vec<TestCase>,
}

/// One case.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestCase {
    /// What it tests.
    pub name: String,
    /// A named policy of the file; the policy under test when absent.
    #[serde(default)]
    pub policy: Option<String>,
    /// Shorthand for a shell action.
    #[serde(default)]
    pub command: Option<String>,
    /// Any action.
    #[serde(default)]
    pub action: Option<Action>,
    /// The working directory (default `/workspace`).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Workspace roots (default: the cwd).
    #[serde(default)]
    pub workspace_roots: Option<Vec<String>>,
    /// The home directory (default `/home/user`).
    #[serde(default)]
    pub home: Option<String>,
    /// The effect the policy must reach.
    pub expect: Effect,
    /// The pattern of the rule that must decide.
    #[serde(default)]
    pub rule: Option<String>,
}

/// The outcome of one case.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// The case's name.
    pub name: String,
    /// Whether the policy reached the expected effect (and rule).
    pub passed: bool,
    /// What it reached.
    pub got: Effect,
    /// The deciding rule's pattern, if any.
    pub got_rule: Option<String>,
    /// The policy's reason.
    pub reason: String,
    /// What was expected, as text.
    pub expected: String,
}

impl TestCase {
    /// The action and context this case describes.
    pub fn action_and_context(&self) -> Result<(Action, Context), TestFileError> {
        let cwd = self.cwd.clone().unwrap_or_else(|| "/workspace".into());
        let home = PathBuf::from(self.home.clone().unwrap_or_else(|| "/home/user".into()));
        let root = Path::new("/");
        let roots = self
            .workspace_roots
            .clone()
            .unwrap_or_else(|| vec![cwd.clone()]);
        let action = match (&self.command, &self.action) {
            (Some(c), None) => Action::Shell {
                command: c.clone(),
                cwd: Some(cwd.clone()),
            },
            (None, Some(a)) => a.clone(),
            _ => return Err(TestFileError::NoAction(self.name.clone())),
        };
        let action_cwd = action.cwd().unwrap_or(&cwd);
        let ctx = Context {
            cwd: resolve_path(action_cwd, root, Some(&home)),
            workspace_roots: roots
                .iter()
                .map(|r| resolve_path(r, root, Some(&home)))
                .collect(),
            home: Some(home),
            git_dirs: Vec::new(),
        };
        Ok((action, ctx))
    }

    /// Runs the case against `policy`.
    pub fn run(&self, policy: &Policy) -> Result<CaseResult, TestFileError> {
        let (action, ctx) = self.action_and_context()?;
        let e = policy.evaluate(&normalize(&action, &ctx), &ctx);
        let got_rule = e.rule.as_ref().map(|r| r.pattern.clone());
        let rule_ok = self
            .rule
            .as_ref()
            .is_none_or(|want| got_rule.as_ref() == Some(want));
        Ok(CaseResult {
            name: self.name.clone(),
            passed: e.effect == self.expect && rule_ok,
            got: e.effect,
            got_rule,
            reason: e.reason,
            expected: match &self.rule {
                Some(r) => format!("{} by {r}", self.expect.as_str()),
                None => self.expect.as_str().to_string(),
            },
        })
    }
}

/// Loads a test file and compiles its named policies (rule sources point into the file).
pub fn load(path: &Path) -> Result<(TestFile, BTreeMap<String, Policy>), TestFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| TestFileError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let name = path.display().to_string();
    let file: TestFile = toml::from_str(&text).map_err(|source| TestFileError::Invalid {
        file: name.clone(),
        source,
    })?;
    let mut policies = BTreeMap::new();
    for (key, pc) in &file.policies {
        let cfg = Config::with_policy(pc.clone(), &name, &text);
        let p = Policy::from_config(&cfg, Vec::new()).map_err(|errors| TestFileError::Policy {
            file: name.clone(),
            name: key.clone(),
            errors,
        })?;
        policies.insert(key.clone(), p);
    }
    for c in &file.case {
        if let Some(p) = &c.policy
            && !policies.contains_key(p)
        {
            return Err(TestFileError::UnknownPolicy {
                file: name,
                case: c.name.clone(),
                policy: p.clone(),
            });
        }
    }
    Ok((file, policies))
}

/// Runs every case of a file; `default` is the policy for cases that name none.
pub fn run_file(path: &Path, default: &Policy) -> Result<Vec<CaseResult>, TestFileError> {
    let (file, policies) = load(path)?;
    file.case
        .iter()
        .map(|c| {
            let p = c
                .policy
                .as_ref()
                .and_then(|k| policies.get(k))
                .unwrap_or(default);
            c.run(p)
        })
        .collect()
}
