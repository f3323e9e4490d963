//! Policy: the deterministic rules, and how they decide.
//!
//! This module owns evaluation order and its guarantees: deny rules first, then ask, then allow;
//! nothing matched means ask (the reviewer decides). A deny can never be overridden. Shell
//! commands are judged through [`crate::normalize::ShellCommand`]: a deny or ask rule that matches
//! any part of a command applies, and an allow rule applies only to a command with nothing opaque
//! in it. Rule grammar lives in [`rule`].

pub mod rule;

use serde::Serialize;

use crate::config::RuleSpec;
use crate::normalize::{Context, NormalizedAction};
use crate::verdict::{Effect, RuleRef};

pub use rule::{Matcher, RuleError};

/// One compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// What it does.
    pub effect: Effect,
    /// The rule as written.
    pub pattern: String,
    /// `file:line` it came from.
    pub source: String,
    /// The compiled matcher.
    pub matcher: Matcher,
}

impl Rule {
    /// The rule as shown to clients.
    pub fn to_ref(&self) -> RuleRef {
        RuleRef {
            effect: self.effect,
            pattern: self.pattern.clone(),
            source: self.source.clone(),
        }
    }
}

/// A rule that could not be loaded, with where it was written.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{source_loc}: {error}")]
pub struct PolicyError {
    /// `file:line`.
    pub source_loc: String,
    /// What is wrong.
    pub error: RuleError,
}

/// The result of evaluating the rules on one action.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Deny, ask (the reviewer decides) or allow.
    pub effect: Effect,
    /// The rule that decided, or `None` when nothing matched.
    pub rule: Option<RuleRef>,
    /// Why, in one sentence.
    pub reason: String,
}

/// The compiled rules of a policy.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    rules: Vec<Rule>,
}

/// A rule as listed by `GET /v1/policy` and `guardian policy`.
#[derive(Debug, Clone, Serialize)]
pub struct RuleListing {
    /// deny, ask or allow.
    pub effect: Effect,
    /// The rule as written.
    pub pattern: String,
    /// `file:line`.
    pub source: String,
}

impl Policy {
    /// Compiles rules; every bad rule is reported with its source.
    pub fn compile(specs: &[RuleSpec]) -> Result<Policy, Vec<PolicyError>> {
        let mut rules = Vec::with_capacity(specs.len());
        let mut errors = Vec::new();
        for spec in specs {
            match rule::parse(&spec.pattern) {
                Ok(matcher) => rules.push(Rule {
                    effect: spec.effect,
                    pattern: spec.pattern.clone(),
                    source: spec.source.clone(),
                    matcher,
                }),
                Err(error) => errors.push(PolicyError {
                    source_loc: spec.source.clone(),
                    error,
                }),
            }
        }
        if errors.is_empty() {
            // Stable order: deny, ask, allow; within each, as written.
            rules.sort_by_key(|r| r.effect);
            Ok(Policy { rules })
        } else {
            Err(errors)
        }
    }

    /// The rules in evaluation order.
    pub fn listing(&self) -> Vec<RuleListing> {
        self.rules
            .iter()
            .map(|r| RuleListing {
                effect: r.effect,
                pattern: r.pattern.clone(),
                source: r.source.clone(),
            })
            .collect()
    }

    /// Decides deny, ask or allow for one action.
    pub fn evaluate(&self, action: &NormalizedAction, ctx: &Context) -> Evaluation {
        for effect in [Effect::Deny, Effect::Ask] {
            if let Some(rule) = self.first_match(effect, action, ctx) {
                let reason = match effect {
                    Effect::Deny => format!("denied by policy: {}", rule.pattern),
                    _ => format!("the rule {} asks for review", rule.pattern),
                };
                return Evaluation {
                    effect,
                    rule: Some(rule.to_ref()),
                    reason,
                };
            }
        }
        if let NormalizedAction::Shell(cmd) = action
            && let Some(why) = &cmd.opaque
        {
            return Evaluation {
                effect: Effect::Ask,
                rule: None,
                reason: why.clone(),
            };
        }
        if let Some(rule) = self.first_match(Effect::Allow, action, ctx) {
            return Evaluation {
                effect: Effect::Allow,
                rule: Some(rule.to_ref()),
                reason: format!("allowed by policy: {}", rule.pattern),
            };
        }
        Evaluation {
            effect: Effect::Ask,
            rule: None,
            reason: "no rule matches this action".to_string(),
        }
    }

    fn first_match(
        &self,
        effect: Effect,
        action: &NormalizedAction,
        ctx: &Context,
    ) -> Option<&Rule> {
        let broad = effect != Effect::Allow;
        let candidates: Vec<String> = match action {
            NormalizedAction::Shell(cmd) if broad => cmd.deny_candidates(),
            NormalizedAction::Shell(cmd) => cmd.allow_candidate().into_iter().collect(),
            _ => Vec::new(),
        };
        self.rules
            .iter()
            .filter(|r| r.effect == effect)
            .find(|r| match action {
                NormalizedAction::Shell(_) => {
                    candidates.iter().any(|c| r.matcher.matches_command_text(c))
                }
                _ => r.matcher.matches_action(action, ctx, broad),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::shell;
    use std::path::PathBuf;

    fn policy(deny: &[&str], ask: &[&str], allow: &[&str]) -> Policy {
        let mut specs = Vec::new();
        for (effect, list) in [
            (Effect::Deny, deny),
            (Effect::Ask, ask),
            (Effect::Allow, allow),
        ] {
            for (i, p) in list.iter().enumerate() {
                specs.push(RuleSpec {
                    effect,
                    pattern: p.to_string(),
                    source: format!("test:{i}"),
                });
            }
        }
        Policy::compile(&specs).expect("compiles")
    }

    fn ctx() -> Context {
        Context {
            cwd: PathBuf::from("/work/repo"),
            workspace_roots: vec![PathBuf::from("/work/repo")],
            home: Some(PathBuf::from("/home/u")),
        }
    }

    fn shell_effect(p: &Policy, cmd: &str) -> Effect {
        p.evaluate(&NormalizedAction::Shell(shell::analyze(cmd)), &ctx())
            .effect
    }

    #[test]
    fn deny_beats_allow_in_any_part() {
        let p = policy(
            &["Bash(git push *)"],
            &["Bash(git commit *)"],
            &["Bash(git *)", "Bash(git status)"],
        );
        assert_eq!(shell_effect(&p, "git status"), Effect::Allow);
        assert_eq!(shell_effect(&p, "git push origin main"), Effect::Deny);
        assert_eq!(
            shell_effect(&p, "git status && git push origin main"),
            Effect::Deny
        );
        assert_eq!(shell_effect(&p, "git status; git push"), Effect::Deny);
        assert_eq!(shell_effect(&p, "echo hi | git push"), Effect::Deny);
        assert_eq!(shell_effect(&p, "g'i't push"), Effect::Deny);
        assert_eq!(shell_effect(&p, "git  push   origin"), Effect::Deny);
        assert_eq!(shell_effect(&p, "git commit -m x"), Effect::Ask);
    }

    #[test]
    fn operators_never_allowed_by_rule() {
        let p = policy(&[], &[], &["Bash(*)", "Bash(git status *)"]);
        for cmd in [
            "git status && rm -rf /",
            "git status > /etc/x",
            "git status $(id)",
            "git status `id`",
        ] {
            let e = p.evaluate(&NormalizedAction::Shell(shell::analyze(cmd)), &ctx());
            assert_eq!(e.effect, Effect::Ask, "{cmd}");
            assert!(e.rule.is_none());
        }
        assert_eq!(shell_effect(&p, "git status --short"), Effect::Allow);
    }

    #[test]
    fn nothing_matched_is_ask_and_rule_is_reported() {
        let p = policy(&["Read(./.env)"], &[], &["Read(./src/**)"]);
        let c = ctx();
        let e = p.evaluate(&NormalizedAction::Read(c.resolve(".env")), &c);
        assert_eq!(e.effect, Effect::Deny);
        assert_eq!(
            e.rule.as_ref().map(|r| r.pattern.as_str()),
            Some("Read(./.env)")
        );
        let e = p.evaluate(&NormalizedAction::Read(c.resolve("src/lib.rs")), &c);
        assert_eq!(e.effect, Effect::Allow);
        let e = p.evaluate(&NormalizedAction::Read(c.resolve("README.md")), &c);
        assert_eq!(e.effect, Effect::Ask);
        assert!(e.rule.is_none());
        // A read rule does not cover writes.
        let e = p.evaluate(&NormalizedAction::Write(c.resolve("src/lib.rs")), &c);
        assert_eq!(e.effect, Effect::Ask);
    }

    #[test]
    fn bad_rules_are_reported_with_source() {
        let specs = vec![RuleSpec {
            effect: Effect::Deny,
            pattern: "Bahs(x)".into(),
            source: "g.toml:3".into(),
        }];
        let errs = Policy::compile(&specs).unwrap_err();
        assert_eq!(errs.len(), 1);
        assert!(errs[0].to_string().starts_with("g.toml:3"));
    }
}
