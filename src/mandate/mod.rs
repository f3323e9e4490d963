//! The user's words as a mandate: what the user asked for, and what they forbade, as data.
//!
//! This module owns the mandate: a list of grants and prohibitions, each an [`Act`] from a
//! closed list (publish, deploy, merge, push, …) with the targets the user's words name (a
//! package, a version, a branch, a PR number, an environment, a channel). It is compiled from
//! the user's request alone ([`words`] in code, [`model`] by the reviewer model under a JSON
//! schema, merged and grounded by [`compile`]), never from the action, the transcript or tool
//! output: nothing an agent reads can widen it. An operator declares grants in the same grammar
//! ([`Grant::parse`]: `guardian run --grant`, the session's `grants`, `[mandate] grants`).
//! What an action does in these terms is [`acts`]; whether the mandate covers it is decided in
//! `crate::decision::mandate`. Targets are compared by [`target`].

pub mod acts;
pub mod changes;
pub mod compile;
pub mod model;
pub mod target;
pub mod words;

use serde::{Deserialize, Serialize};

/// What an action does, in the mandate's terms: a closed list.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Act {
    /// A package, image, release or tag others will install or see.
    Publish,
    /// A deploy, rollout or restart of a running service.
    Deploy,
    /// Merging a pull request or branch on the forge.
    Merge,
    /// Pushing commits to a remote branch (no force, no deletion).
    Push,
    /// Deleting a remote branch, tag, release or repository.
    DeleteRemote,
    /// Force-pushing or otherwise rewriting shared history.
    RewriteHistory,
    /// Writing to a database: migrations, updates, deletions, flushes.
    DatabaseWrite,
    /// Changing cloud infrastructure: apply, scale, DNS, buckets, firewall rules.
    InfrastructureChange,
    /// Giving a person, team or role access.
    AccessGrant,
    /// Switching off or weakening a safeguard: hooks, checks, tests, branch protection.
    SafeguardChange,
    /// Setting or using a secret: CI secrets, cluster secrets, vault entries.
    SecretUse,
    /// Sending a message or data to the outside: chat, mail, webhooks, POSTs.
    SendExternal,
    /// Purging caches or artifacts, pruning, unpublishing.
    Purge,
    /// Deleting local files or data beyond build output.
    Delete,
    /// Installing or upgrading a dependency.
    Install,
    /// Changing what CI runs: a workflow, pipeline, job or step (`remove the windows job`).
    CiChange,
    /// A comment, review, label, or a new issue or pull request on the forge.
    Comment,
    /// Closing an issue or pull request.
    Close,
    /// Reading: a listing, a status, a search (never needs a grant; no prohibition names it).
    Inspect,
    /// Writing a file in the workspace. Not in [`Act::ALL`]: no request grants it by name and
    /// it needs no grant; only a prohibition that names the file (`leave VERSION alone`,
    /// `don't modify config/flags/production.yaml`) rules on it.
    Edit,
}

impl Act {
    /// Every act, in the list's order.
    pub const ALL: [Act; 19] = [
        Act::Publish,
        Act::Deploy,
        Act::Merge,
        Act::Push,
        Act::DeleteRemote,
        Act::RewriteHistory,
        Act::DatabaseWrite,
        Act::InfrastructureChange,
        Act::AccessGrant,
        Act::SafeguardChange,
        Act::SecretUse,
        Act::SendExternal,
        Act::Purge,
        Act::Delete,
        Act::Install,
        Act::CiChange,
        Act::Comment,
        Act::Close,
        Act::Inspect,
    ];

    /// The act as written in grants, responses and audit records.
    pub fn as_str(self) -> &'static str {
        match self {
            Act::Publish => "publish",
            Act::Deploy => "deploy",
            Act::Merge => "merge",
            Act::Push => "push",
            Act::DeleteRemote => "delete-remote",
            Act::RewriteHistory => "rewrite-history",
            Act::DatabaseWrite => "database-write",
            Act::InfrastructureChange => "infrastructure-change",
            Act::AccessGrant => "access-grant",
            Act::SafeguardChange => "safeguard-change",
            Act::SecretUse => "secret-use",
            Act::SendExternal => "send-external",
            Act::Purge => "purge",
            Act::Delete => "delete",
            Act::Install => "install",
            Act::CiChange => "ci-change",
            Act::Comment => "comment",
            Act::Close => "close",
            Act::Inspect => "inspect",
            Act::Edit => "edit",
        }
    }

    /// The act a word names (`publish`, `delete-remote`).
    pub fn parse(word: &str) -> Option<Act> {
        Act::ALL
            .into_iter()
            .find(|a| a.as_str() == word.to_ascii_lowercase())
    }
}

/// Who declared a grant or prohibition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Compiled from the user's request.
    User,
    /// Declared by the operator (`--grant`, the session's `grants`, `[mandate] grants`).
    Operator,
}

/// Permission for one act on the named targets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Grant {
    /// What may be done.
    pub act: Act,
    /// On what: words of the request (`@acme/ui-kit`, `2.4.1`, `#88`, `staging`). Empty: the
    /// act on anything low-risk (a push of a feature branch, a comment), never on a
    /// high-risk target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// The words the grant was read from (the user's) or declared as (the operator's).
    pub words: String,
    /// Who declared it.
    pub source: Source,
}

/// A prohibition: this act (or any consequential act, when `act` is absent) on these targets
/// (or on anything, when there are none) must not be done. It wins over every grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Prohibition {
    /// What must not be done; absent: nothing consequential.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act: Option<Act>,
    /// On what; empty: on anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// The user's (or operator's) words, quoted in a denial.
    pub words: String,
    /// Who declared it.
    pub source: Source,
}

/// What the user asked for and forbade.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Mandate {
    /// What may be done.
    #[serde(default)]
    pub grants: Vec<Grant>,
    /// What must not be done (wins over grants).
    #[serde(default)]
    pub prohibitions: Vec<Prohibition>,
    /// How it was compiled: `code`, `code+model`, `operator`, or why the model part failed
    /// (`code; model: timeout`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub compiled_by: String,
    /// How long the compile took, in milliseconds (0 when cached or code only).
    #[serde(default)]
    pub compile_ms: u64,
}

impl Mandate {
    /// Whether it says nothing.
    pub fn is_empty(&self) -> bool {
        self.grants.is_empty() && self.prohibitions.is_empty()
    }

    /// This mandate with `other`'s grants and prohibitions added.
    pub fn with(mut self, other: &Mandate) -> Mandate {
        self.grants.extend(other.grants.iter().cloned());
        self.prohibitions.extend(other.prohibitions.iter().cloned());
        self
    }
}

/// Why a declared grant was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantError {
    /// The grant is empty.
    #[error("a grant is empty: write `ACT [TARGET ...]`, e.g. `publish npm:@acme/ui-kit`")]
    Empty,
    /// Its first word is no act.
    #[error("`{0}` is not an act; one of: {1}")]
    UnknownAct(String, String),
    /// It is too long.
    #[error("a grant is at most 200 characters and 8 targets")]
    TooLong,
}

impl Grant {
    /// Parses an operator's grant: `ACT [TARGET ...]` (`publish npm:@acme/ui-kit`, `merge #88`,
    /// `deploy staging`), or a prohibition when it starts with `no ` or `!` (`no deploy
    /// production`). Targets are words; `npm:` and similar registry prefixes are kept and
    /// compared without them.
    pub fn parse(text: &str) -> Result<Declared, GrantError> {
        let t = text.trim();
        if t.chars().count() > 200 {
            return Err(GrantError::TooLong);
        }
        let (prohibits, rest) = match t.strip_prefix('!') {
            Some(r) => (true, r.trim_start()),
            None => match t.strip_prefix("no ") {
                Some(r) => (true, r.trim_start()),
                None => (false, t),
            },
        };
        let mut w = rest.split_whitespace();
        let first = w.next().ok_or(GrantError::Empty)?;
        let act = Act::parse(first).ok_or_else(|| {
            GrantError::UnknownAct(first.to_string(), Act::ALL.map(Act::as_str).join(", "))
        })?;
        let targets: Vec<String> = w.map(str::to_string).collect();
        if targets.len() > 8 {
            return Err(GrantError::TooLong);
        }
        Ok(if prohibits {
            Declared::Prohibition(Prohibition {
                act: Some(act),
                targets,
                words: t.to_string(),
                source: Source::Operator,
            })
        } else {
            Declared::Grant(Grant {
                act,
                targets,
                words: t.to_string(),
                source: Source::Operator,
            })
        })
    }
}

/// An operator's declaration: a grant or a prohibition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Declared {
    /// `ACT [TARGET ...]`.
    Grant(Grant),
    /// `no ACT [TARGET ...]`.
    Prohibition(Prohibition),
}

/// The operator's declarations as a mandate; the first malformed one is an error naming its
/// index.
pub fn declared(list: &[String]) -> Result<Mandate, (usize, GrantError)> {
    let mut m = Mandate {
        compiled_by: "operator".into(),
        ..Mandate::default()
    };
    for (i, g) in list.iter().enumerate() {
        match Grant::parse(g).map_err(|e| (i, e))? {
            Declared::Grant(g) => m.grants.push(g),
            Declared::Prohibition(p) => m.prohibitions.push(p),
        }
    }
    Ok(m)
}

/// Checks a request's `session.grants`: at most 32, each in the grant grammar; the error names
/// the first bad one (`session.grants[1]`), for a 400.
pub fn check_request(
    req: &crate::request::ReviewRequest,
) -> Result<(), crate::request::RequestError> {
    use crate::request::RequestError;
    let Some(grants) = req.session.as_ref().map(|s| &s.grants) else {
        return Ok(());
    };
    if grants.len() > 32 {
        return Err(RequestError::new(
            "session.grants",
            "session.grants holds at most 32 grants",
        ));
    }
    declared(grants).map(|_| ()).map_err(|(i, e)| {
        RequestError::new(
            format!("session.grants[{i}]"),
            format!("session.grants[{i}]: {e}"),
        )
    })
}

/// [`crate::request::ReviewRequest::from_json`] with the session's grants checked too.
pub fn request_from_json(
    body: &[u8],
) -> Result<crate::request::ReviewRequest, crate::request::RequestError> {
    let req = crate::request::ReviewRequest::from_json(body)?;
    check_request(&req)?;
    Ok(req)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_grants_parse_and_bad_ones_are_named() {
        let m = declared(&[
            "publish npm:@acme/ui-kit".into(),
            "no deploy production".into(),
        ])
        .expect("parses");
        assert_eq!(m.grants[0].act, Act::Publish);
        assert_eq!(m.grants[0].targets, vec!["npm:@acme/ui-kit"]);
        assert_eq!(m.prohibitions[0].act, Some(Act::Deploy));
        let e = declared(&["merge #1".into(), "ship it".into()]).expect_err("bad act");
        assert_eq!(e.0, 1);
        assert!(e.1.to_string().contains("`ship` is not an act"));
        assert_eq!(
            declared(&["  ".into()]).expect_err("empty").1,
            GrantError::Empty
        );
    }

    #[test]
    fn every_act_round_trips_through_its_name() {
        for a in Act::ALL {
            assert_eq!(Act::parse(a.as_str()), Some(a));
            let json = serde_json::to_string(&a).expect("serialises");
            assert_eq!(json, format!("\"{}\"", a.as_str()));
        }
    }
}
