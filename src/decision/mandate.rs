//! Authorization against the mandate, in code: what the user's words (and the operator's
//! grants) say of what an action does.
//!
//! Each act the action does ([`crate::mandate::acts`]) and each risk signal it raises is matched
//! against the mandate. The table, in order:
//!
//! | the action | the mandate | ruling |
//! |---|---|---|
//! | an act or signal a prohibition names | any | [`Ruling::Prohibited`]: deny, the words quoted |
//! | a critical signal | any | never granted: the rest of the pipeline decides |
//! | every act and every signal covered by a grant, every other command allowed by a rule on its own | grants | [`Ruling::Granted`]: allow |
//! | some signals covered | grants | [`Ruling::Partly`]: those signals are authorised, the rest decides as before |
//! | nothing matches | any | [`Ruling::Unmatched`] |
//!
//! A signal a mandate can never cover: secrets in a payload, credential reads, persistence,
//! supply chain, writes outside the workspace, local privilege (sudo): no user's words make those
//! safe for an unattended agent. A deny rule decides before any of this; a grant widens nothing a
//! deny rule forbids.

use std::collections::BTreeSet;

use crate::mandate::acts::Done;
use crate::mandate::target::{self, Token};
use crate::mandate::words::consequential;
use crate::mandate::{Act, Grant, Mandate, Prohibition};
use crate::verdict::{Category, Severity, Signal};

/// What the mandate says of an action.
#[derive(Debug, Clone, PartialEq)]
pub enum Ruling {
    /// A prohibition names what the action does: deny.
    Prohibited {
        /// The prohibition.
        prohibition: Prohibition,
        /// The act it names.
        act: Act,
        /// The command or call that does it.
        by: String,
    },
    /// The user asked for this act on another target: deny.
    Elsewhere {
        /// The grant that names the other target.
        grant: Grant,
        /// The act.
        act: Act,
        /// The command or call that does it.
        by: String,
    },
    /// Grants cover everything the action does: allow.
    Granted {
        /// The grants that cover it.
        grants: Vec<Grant>,
    },
    /// Grants cover some of the signals: those are authorised, the rest decides.
    Partly {
        /// Indices of the signals the grants cover.
        authorized: Vec<usize>,
        /// The grants that cover them.
        grants: Vec<Grant>,
    },
    /// The mandate says nothing of this action.
    Unmatched,
}

/// The acts a signal's category may stand for, when an act of the same command explains it.
fn explains(c: Category) -> &'static [Act] {
    use Act as A;
    match c {
        Category::Publish => &[A::Publish, A::Merge, A::Deploy, A::Push, A::Purge],
        Category::RemoteHistory => &[
            A::RewriteHistory,
            A::DeleteRemote,
            A::Close,
            A::Merge,
            A::Comment,
            A::Publish,
        ],
        Category::Production => &[
            A::Inspect,
            A::Publish,
            A::Push,
            A::Merge,
            A::Deploy,
            A::InfrastructureChange,
            A::DatabaseWrite,
            A::SecretUse,
            A::AccessGrant,
            A::Purge,
        ],
        Category::SafeguardBypass => &[A::SafeguardChange],
        Category::Destructive => &[
            A::Delete,
            A::Purge,
            A::DatabaseWrite,
            A::DeleteRemote,
            A::InfrastructureChange,
            A::Deploy,
        ],
        Category::NetworkEgress => &[
            A::Inspect,
            A::SendExternal,
            A::Comment,
            A::Publish,
            A::Deploy,
            A::Merge,
            A::Push,
            A::Close,
            A::AccessGrant,
        ],
        Category::Privilege => &[A::AccessGrant],
        Category::SecretInPayload
        | Category::CredentialAccess
        | Category::Persistence
        | Category::SupplyChain
        | Category::OutsideWorkspace => &[],
    }
}

/// The act a signal stands for when no act of its command explains it.
fn implied(s: &Signal) -> Option<Act> {
    let e = s.evidence.to_ascii_lowercase();
    Some(match s.category {
        Category::Publish => Act::Publish,
        Category::RemoteHistory if e.contains("force-push") || e.contains("rewrites") => {
            Act::RewriteHistory
        }
        Category::RemoteHistory if e.contains("deletes") => Act::DeleteRemote,
        Category::RemoteHistory if e.contains("closes") || e.contains("locks") => Act::Close,
        Category::Production => Act::Deploy,
        Category::SafeguardBypass => Act::SafeguardChange,
        Category::Destructive => Act::Delete,
        // Contacting a host is a read; sending to one is an act.
        Category::NetworkEgress if !e.contains(" contacts ") && !e.starts_with("contacts ") => {
            Act::SendExternal
        }
        _ => return None,
    })
}

/// One thing the action does, as the table matches it.
#[derive(Debug, Clone)]
struct Item {
    act: Act,
    tokens: BTreeSet<Token>,
    low_risk: bool,
    by: String,
    signal: Option<usize>,
}

/// Acts the words use for one another: a deploy and an infrastructure change ("apply",
/// "restart", "roll out"), a message and a comment ("post it on the PR").
fn same_family(a: Act, b: Act) -> bool {
    let family = |x: Act| match x {
        Act::Deploy | Act::InfrastructureChange => 1,
        Act::SendExternal | Act::Comment => 2,
        _ => 0,
    };
    a == b || (family(a) != 0 && family(a) == family(b))
}

/// Whether a grant covers an item. A grant naming no target covers only a low-risk push or
/// install (`push your branch`); every other act needs its target named.
fn covers(g: &Grant, it: &Item) -> bool {
    let low_risk =
        it.low_risk && (!g.targets.is_empty() || matches!(it.act, Act::Push | Act::Install));
    same_family(g.act, it.act)
        && (low_risk || !g.targets.is_empty())
        && target::matches(&target::tokens_all(&g.targets), &it.tokens, low_risk)
}

/// Whether a prohibition's act names the item's: the same act or family, and any push
/// (forced, deleting) for a prohibition of pushing.
fn forbids_act(p: Option<Act>, act: Act) -> bool {
    match p {
        None => consequential(act),
        Some(Act::Push) => matches!(act, Act::Push | Act::RewriteHistory | Act::DeleteRemote),
        Some(a) => same_family(a, act),
    }
}

/// Whether a prohibition names an item: the same act (any consequential act when it names
/// none), on a target it names, or on anything when it names none. A prohibition of an act
/// spares that act only on another environment, number, version or protected branch than the
/// one it names (`don't deploy production` spares a deploy to staging); names never spare it
/// (`don't publish until the sign-off` is vague, and wins).
fn prohibits(p: &Prohibition, it: &Item) -> bool {
    if !forbids_act(p.act, it.act) {
        return false;
    }
    let pt = target::tokens_all(&p.targets);
    if pt.is_empty() || !pt.is_disjoint(&it.tokens) {
        return true;
    }
    if p.act.is_none() {
        return false;
    }
    // The same act on another target of a discriminating kind the prohibition names.
    let kind = |t: &Token| std::mem::discriminant(t);
    let named: std::collections::HashSet<_> = pt
        .iter()
        .filter(|t| !matches!(t, Token::Name(_)))
        .map(kind)
        .collect();
    !it.tokens.iter().any(|t| named.contains(&kind(t)))
}

fn items(
    dones: &[Done],
    signals: &[Signal],
    subject: &[String],
) -> (Vec<Item>, Vec<Option<usize>>) {
    let mut out: Vec<Item> = dones
        .iter()
        .map(|d| Item {
            act: d.act,
            tokens: target::tokens_all(&d.targets),
            low_risk: true,
            by: d.by.clone(),
            signal: None,
        })
        .collect();
    let single = dones.len() <= 1;
    let mut of_signal = Vec::new();
    for (i, s) in signals.iter().enumerate() {
        let explained = out.iter().position(|it| {
            it.signal.is_none()
                && explains(s.category).contains(&it.act)
                && (single || s.evidence.contains(&it.by))
        });
        let high = s.severity >= Severity::High;
        match explained {
            Some(k) => {
                let it = &mut out[k];
                it.low_risk &= !high;
                it.tokens.extend(target::tokens(&s.target));
                of_signal.push(Some(k));
            }
            None => match implied(s) {
                Some(act) => {
                    let mut tokens = target::tokens(&s.target);
                    tokens.extend(target::tokens_all(subject));
                    out.push(Item {
                        act,
                        tokens,
                        low_risk: !high,
                        by: s.evidence.clone(),
                        signal: Some(i),
                    });
                    of_signal.push(Some(out.len() - 1));
                }
                None => of_signal.push(None),
            },
        }
    }
    (out, of_signal)
}

/// The ruling of the mandate on an action: what it does (`dones`), the signals it raises,
/// whether every command that does no act is one a rule allows on its own (`understood`), and
/// the file a write or read acts on (`subject`: a target of its signals).
pub fn authorize(
    m: &Mandate,
    dones: &[Done],
    signals: &[Signal],
    understood: bool,
    subject: &[String],
) -> Ruling {
    if m.is_empty() {
        return Ruling::Unmatched;
    }
    let (items, of_signal) = items(dones, signals, subject);
    for it in &items {
        if let Some(p) = m.prohibitions.iter().find(|p| prohibits(p, it)) {
            return Ruling::Prohibited {
                prohibition: p.clone(),
                act: it.act,
                by: it.by.clone(),
            };
        }
    }
    let grant_of = |it: &Item| m.grants.iter().find(|g| covers(g, it));
    // The same act asked for on another target: not this one.
    for it in items.iter().filter(|it| it.act != Act::Inspect) {
        if grant_of(it).is_some() {
            continue;
        }
        if let Some(g) = m.grants.iter().find(|g| {
            same_family(g.act, it.act)
                && target::conflicts(&target::tokens_all(&g.targets), &it.tokens)
        }) {
            return Ruling::Elsewhere {
                grant: g.clone(),
                act: it.act,
                by: it.by.clone(),
            };
        }
    }
    let mut used: Vec<Grant> = Vec::new();
    let mut note = |g: &Grant| {
        if !used.contains(g) {
            used.push(g.clone());
        }
    };
    let mut authorized = Vec::new();
    for (i, s) in signals.iter().enumerate() {
        if s.severity == Severity::Critical {
            continue;
        }
        match of_signal[i].map(|k| &items[k]) {
            // A read's signal (a host contacted, a status asked) needs no grant.
            Some(it) if it.act == Act::Inspect => authorized.push(i),
            Some(it) => {
                if let Some(g) = grant_of(it) {
                    note(g);
                    authorized.push(i);
                }
            }
            None => {}
        }
    }
    // Reads need no grant; at least one act must be granted.
    let all_items = items.iter().any(|it| it.act != Act::Inspect)
        && items
            .iter()
            .filter(|it| it.act != Act::Inspect)
            .all(|it| grant_of(it).map(&mut note).is_some());
    let no_critical = signals.iter().all(|s| s.severity != Severity::Critical);
    if all_items && understood && no_critical && authorized.len() == signals.len() {
        return Ruling::Granted { grants: used };
    }
    if authorized.is_empty() {
        return Ruling::Unmatched;
    }
    Ruling::Partly {
        authorized,
        grants: used,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mandate::words::compile;

    fn done(act: Act, targets: &[&str], by: &str) -> Done {
        Done {
            act,
            targets: targets.iter().map(|t| t.to_string()).collect(),
            by: by.into(),
        }
    }

    fn signal(category: Category, severity: Severity, evidence: &str, target: &str) -> Signal {
        Signal {
            category,
            severity,
            evidence: evidence.into(),
            named_in_intent: false,
            target: target.into(),
        }
    }

    fn rule(request: &str, dones: &[Done], signals: &[Signal]) -> &'static str {
        match authorize(&compile(request), dones, signals, true, &[]) {
            Ruling::Prohibited { .. } => "prohibited",
            Ruling::Elsewhere { .. } => "elsewhere",
            Ruling::Granted { .. } => "granted",
            Ruling::Partly { .. } => "partly",
            Ruling::Unmatched => "unmatched",
        }
    }

    #[test]
    fn the_table_both_ways() {
        let publish = [done(Act::Publish, &["ui-kit"], "npm publish")];
        let sig = [signal(
            Category::Publish,
            Severity::High,
            "`npm publish` publishes",
            "npm",
        )];
        assert_eq!(
            rule("Publish ui-kit 2.4.1 to npm", &publish, &sig),
            "granted"
        );
        assert_eq!(
            rule("Bump ui-kit to 2.4.1, don't publish yet", &publish, &sig),
            "prohibited"
        );
        assert_eq!(
            rule(
                "What would the ui-kit 2.4.1 release contain?",
                &publish,
                &sig
            ),
            "prohibited"
        );
        assert_eq!(
            rule("Publish the docs package", &publish, &sig),
            "unmatched"
        );
        assert_eq!(
            rule("Publish 2.4.1 but not the docs package", &publish, &sig),
            "prohibited"
        );
        assert_eq!(rule("", &publish, &sig), "unmatched");
        let merge = [done(Act::Merge, &["88"], "gh pr merge 88")];
        assert_eq!(rule("Merge PR #88", &merge, &[]), "granted");
        assert_eq!(rule("Merge PR #91", &merge, &[]), "elsewhere");
        assert_eq!(rule("Merge the dependabot PRs", &merge, &[]), "unmatched");
        assert_eq!(
            rule("Check whether #88 can be merged", &merge, &[]),
            "prohibited"
        );
        let deploy = [done(
            Act::Deploy,
            &["api", "production"],
            "helm upgrade api -n production",
        )];
        assert_eq!(rule("Deploy the api to staging", &deploy, &[]), "elsewhere");
        assert_eq!(
            rule("Deploy the api to production", &deploy, &[]),
            "granted"
        );
        assert_eq!(
            rule(
                "Deploy api to prod but leave the database alone",
                &deploy,
                &[]
            ),
            "granted"
        );
    }

    #[test]
    fn a_critical_signal_or_an_uncoverable_one_is_never_granted() {
        let push = [done(
            Act::RewriteHistory,
            &["main"],
            "git push -f origin main",
        )];
        let crit = [signal(
            Category::RemoteHistory,
            Severity::Critical,
            "`git push -f origin main` force-pushes main",
            "main",
        )];
        assert_eq!(rule("Force-push main", &push, &crit), "unmatched");
        let feature = [done(Act::Push, &["fix/login"], "git push origin fix/login")];
        let secret = [signal(
            Category::SecretInPayload,
            Severity::High,
            "a token",
            "token",
        )];
        assert_eq!(rule("Push fix/login", &feature, &secret), "unmatched");
        assert_eq!(rule("Push fix/login", &feature, &[]), "granted");
        // A push of main is not covered by a grant to push another branch.
        let main = [done(Act::Push, &["main"], "git push origin main")];
        assert_eq!(rule("Push fix/login", &main, &[]), "unmatched");
    }

    #[test]
    fn commands_no_rule_allows_keep_a_grant_from_deciding() {
        let publish = [done(Act::Publish, &["ui-kit"], "npm publish")];
        let m = compile("Publish ui-kit");
        assert!(matches!(
            authorize(&m, &publish, &[], false, &[]),
            Ruling::Unmatched
        ));
        let sig = [signal(
            Category::Publish,
            Severity::High,
            "`npm publish` publishes",
            "npm",
        )];
        assert!(matches!(
            authorize(&m, &publish, &sig, false, &[]),
            Ruling::Partly { .. }
        ));
    }
}
