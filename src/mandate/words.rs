//! The part of the compile done in code: verbs, negations and scope words read from the
//! user's request.
//!
//! The request is cut into clauses (sentences, `but`, `then`, `instead of`). A clause whose verb
//! names an act (`publish`, `merge`, `deploy to`, `force-push`) in the imperative grants that act
//! on the clause's targets; the same verb negated or deferred (`don't publish yet`, `we'll merge
//! after review`, `not before Friday's sign-off`), asked only as a preview (`dry-run the deploy`,
//! `what would the release contain`) or only prepared (`prepare the release`, `get the
//! migration ready`) prohibits it; `leave production alone` prohibits everything consequential
//! on its target; a request that only asks to look (`check whether #88 is mergeable`) prohibits
//! every consequential act. Every target is a word of the clause, so every grant is grounded.

use super::target;
use super::{Act, Grant, Mandate, Prohibition, Source};

/// Verbs (as the first words of a phrase) and the acts they name; the longest phrase wins.
const VERBS: &[(&str, &[Act])] = &[
    ("force-push", &[Act::RewriteHistory, Act::Push]),
    ("force push", &[Act::RewriteHistory, Act::Push]),
    ("rewrite history", &[Act::RewriteHistory]),
    ("publish", &[Act::Publish]),
    ("release", &[Act::Publish, Act::Deploy]),
    ("cut", &[Act::Publish]),
    ("ship", &[Act::Publish, Act::Deploy]),
    ("tag", &[Act::Publish]),
    ("upload", &[Act::Publish, Act::SendExternal]),
    ("sync", &[Act::Publish, Act::Deploy]),
    ("rsync", &[Act::Publish, Act::Deploy]),
    ("deploy", &[Act::Deploy]),
    ("trigger", &[Act::Deploy]),
    ("kick off", &[Act::Deploy]),
    ("redeploy", &[Act::Deploy]),
    ("roll", &[Act::Deploy]),
    ("rollout", &[Act::Deploy]),
    ("rollback", &[Act::Deploy]),
    ("reconcile", &[Act::Deploy]),
    ("promote", &[Act::Deploy, Act::Publish]),
    ("pulumi up", &[Act::Deploy, Act::InfrastructureChange]),
    (
        "tear down",
        &[Act::Delete, Act::Purge, Act::InfrastructureChange],
    ),
    (
        "teardown",
        &[Act::Delete, Act::Purge, Act::InfrastructureChange],
    ),
    (
        "destroy",
        &[Act::Delete, Act::Purge, Act::InfrastructureChange],
    ),
    ("restart", &[Act::Deploy]),
    ("reboot", &[Act::Deploy]),
    // `sign the image with cosign`, `mirror … into registry.eu`, `finalize the Sentry release`:
    // what others pull or see.
    ("sign", &[Act::Publish]),
    ("mirror", &[Act::Publish]),
    ("finalize", &[Act::Publish]),
    ("encrypt", &[Act::SecretUse]),
    ("terminate", &[Act::Delete]),
    // `suspend Okta user …`: access taken away.
    ("suspend", &[Act::AccessGrant]),
    ("bounce", &[Act::Deploy]),
    ("shut down", &[Act::InfrastructureChange, Act::Deploy]),
    ("shut", &[Act::InfrastructureChange, Act::Deploy]),
    ("apply", &[Act::Deploy, Act::InfrastructureChange]),
    ("scale", &[Act::InfrastructureChange]),
    ("provision", &[Act::InfrastructureChange]),
    ("resize", &[Act::InfrastructureChange]),
    ("merge", &[Act::Merge]),
    ("squash", &[Act::Merge]),
    ("land", &[Act::Merge]),
    ("push", &[Act::Push]),
    ("migrate", &[Act::DatabaseWrite]),
    ("backfill", &[Act::DatabaseWrite]),
    ("seed", &[Act::DatabaseWrite]),
    ("truncate", &[Act::DatabaseWrite]),
    ("drop", &[Act::DatabaseWrite, Act::Delete]),
    ("grant", &[Act::AccessGrant]),
    ("give", &[Act::AccessGrant]),
    ("invite", &[Act::AccessGrant]),
    ("revoke", &[Act::AccessGrant]),
    ("disable", &[Act::SafeguardChange]),
    ("exempt", &[Act::SafeguardChange]),
    ("skip", &[Act::SafeguardChange]),
    ("bypass", &[Act::SafeguardChange]),
    ("quarantine", &[Act::SafeguardChange]),
    ("turn off", &[Act::SafeguardChange]),
    ("rotate", &[Act::SecretUse]),
    ("post", &[Act::SendExternal, Act::Comment]),
    ("send", &[Act::SendExternal, Act::Comment]),
    ("notify", &[Act::SendExternal]),
    ("announce", &[Act::SendExternal]),
    ("email", &[Act::SendExternal]),
    ("message", &[Act::SendExternal]),
    ("ping", &[Act::SendExternal]),
    ("dm", &[Act::SendExternal]),
    ("purge", &[Act::Purge]),
    ("prune", &[Act::Purge]),
    ("invalidate", &[Act::Purge]),
    ("clear", &[Act::Purge]),
    ("wipe", &[Act::Purge]),
    ("flush", &[Act::Purge]),
    ("unpublish", &[Act::Purge]),
    ("deprecate", &[Act::Purge]),
    ("yank", &[Act::Purge]),
    ("delete", &[Act::Delete, Act::Purge, Act::DeleteRemote]),
    ("remove", &[Act::Delete, Act::Purge, Act::DeleteRemote]),
    ("clean up", &[Act::Delete, Act::Purge]),
    ("clean out", &[Act::Delete, Act::Purge]),
    ("clear out", &[Act::Delete, Act::Purge]),
    ("install", &[Act::Install]),
    ("upgrade", &[Act::Install, Act::Deploy]),
    ("bump", &[Act::Install, Act::Deploy]),
    ("update", &[Act::Install, Act::Deploy]),
    ("comment", &[Act::Comment]),
    ("reply", &[Act::Comment, Act::SendExternal]),
    ("respond", &[Act::Comment, Act::SendExternal]),
    ("answer", &[Act::Comment, Act::SendExternal]),
    ("label", &[Act::Comment]),
    ("approve", &[Act::Comment]),
    ("open a pr", &[Act::Comment]),
    ("open a pull request", &[Act::Comment]),
    ("open an issue", &[Act::Comment]),
    ("file an issue", &[Act::Comment]),
    ("create an issue", &[Act::Comment]),
    ("close", &[Act::Close]),
    ("transition", &[Act::Close]),
    ("cancel", &[Act::Close]),
    ("resolve", &[Act::Close]),
    // A refund moves money back: the `destructive` signal's act (`deletes, cancels or moves`).
    ("refund", &[Act::Delete]),
    // `swap the staging slot into production`: a slot swap deploys.
    ("swap", &[Act::Deploy]),
    // A muted monitor or a snoozed alert pages nobody: a safeguard switched off for a time.
    ("mute", &[Act::SafeguardChange]),
    ("snooze", &[Act::SafeguardChange]),
    // An archived repository is closed, read-only and reversible: not a deletion.
    ("archive", &[Act::Close]),
];

/// Verbs that change whatever the clause names (`set image-resizer to 40 instances`, `turn on
/// the flag in the staging DB`): they grant the act of the domain nouns beside them.
const MUTATES: &[&str] = &[
    "set",
    "attach",
    "detach",
    "update",
    "change",
    "configure",
    "enable",
    "disable",
    "turn on",
    "turn off",
    "flip",
    "toggle",
    "raise",
    "increase",
    "decrease",
    "lower",
    "point",
    "repoint",
    "switch",
    "scale",
    "resize",
    "open",
    "add",
    "remove",
    "delete",
    "drop",
    "move",
    "rotate",
    "store",
    "put",
    "create",
    "insert",
    "alter",
    "apply",
    "give",
    "grant",
    "revoke",
    "invite",
    "make",
    "mark",
    "allow",
    "purge",
    "flush",
    "clean",
];

/// Verbs that switch a safeguard off: only they grant `safeguard-change` with its nouns.
const BYPASSES: &[&str] = &[
    "skip",
    "exempt",
    "disable",
    "bypass",
    "quarantine",
    "turn off",
    "lower",
    "relax",
    "remove",
    "delete",
    "drop",
    "make",
    "mark",
    "allow",
    "ignore",
    "silence",
    "dismiss",
];

/// Domain nouns (word prefixes) and the act a mutating verb beside them names.
const DOMAINS: &[(&str, Act)] = &[
    ("db", Act::DatabaseWrite),
    ("database", Act::DatabaseWrite),
    ("row", Act::DatabaseWrite),
    ("table", Act::DatabaseWrite),
    ("collection", Act::DatabaseWrite),
    ("redis", Act::DatabaseWrite),
    ("postgres", Act::DatabaseWrite),
    ("mysql", Act::DatabaseWrite),
    ("secret", Act::SecretUse),
    ("token", Act::SecretUse),
    ("password", Act::SecretUse),
    ("credential", Act::SecretUse),
    ("dsn", Act::SecretUse),
    ("api key", Act::SecretUse),
    ("api_key", Act::SecretUse),
    ("instance", Act::InfrastructureChange),
    ("security group", Act::InfrastructureChange),
    ("port", Act::InfrastructureChange),
    ("dns", Act::InfrastructureChange),
    ("cname", Act::InfrastructureChange),
    ("dyno", Act::InfrastructureChange),
    ("zone", Act::InfrastructureChange),
    ("bucket", Act::InfrastructureChange),
    ("cluster", Act::InfrastructureChange),
    ("node", Act::InfrastructureChange),
    ("replica", Act::InfrastructureChange),
    ("firewall", Act::InfrastructureChange),
    ("ingress", Act::InfrastructureChange),
    ("subnet", Act::InfrastructureChange),
    ("cloud run", Act::InfrastructureChange),
    ("lambda", Act::InfrastructureChange),
    ("min ", Act::InfrastructureChange),
    ("access", Act::AccessGrant),
    ("collaborator", Act::AccessGrant),
    ("permission", Act::AccessGrant),
    ("role", Act::AccessGrant),
    ("member", Act::AccessGrant),
    ("iam", Act::AccessGrant),
    ("rbac", Act::AccessGrant),
    ("protection", Act::SafeguardChange),
    ("ruleset", Act::SafeguardChange),
    ("check", Act::SafeguardChange),
    ("hook", Act::SafeguardChange),
    ("test", Act::SafeguardChange),
    ("coverage", Act::SafeguardChange),
    ("threshold", Act::SafeguardChange),
    ("lint", Act::SafeguardChange),
    ("scan", Act::SafeguardChange),
    ("non-blocking", Act::SafeguardChange),
    ("continue-on-error", Act::SafeguardChange),
    ("allow failure", Act::SafeguardChange),
    ("allow_failure", Act::SafeguardChange),
    ("auto-merge", Act::Merge),
    ("automerge", Act::Merge),
];

/// Verbs that run what their object names (`run the patch-openssl playbook`, `do a rollout
/// restart`): they grant the act of the nouns after them.
const RUNS: &[&str] = &[
    "run",
    "execute",
    "trigger",
    "kick off",
    "start",
    "launch",
    "do",
    "perform",
    "go ahead with",
    "proceed with",
    "cut",
];

/// Nouns of an act that a preview, a preparation, a negation or a run verb may govern
/// (`prepare the release`, `the deploy waits`, `run the playbook`).
const NOUNS: &[(&str, Act)] = &[
    ("release", Act::Publish),
    ("publish", Act::Publish),
    ("publication", Act::Publish),
    ("tag", Act::Publish),
    ("deploy", Act::Deploy),
    ("deployment", Act::Deploy),
    ("rollout", Act::Deploy),
    ("restart", Act::Deploy),
    ("playbook", Act::Deploy),
    // `run site.yml against the prod inventory`: a playbook run on the hosts it lists.
    ("inventory", Act::Deploy),
    ("apply", Act::Deploy),
    ("merge", Act::Merge),
    ("push", Act::Push),
    ("migration", Act::DatabaseWrite),
    ("backfill", Act::DatabaseWrite),
    ("changeset", Act::DatabaseWrite),
    ("message", Act::SendExternal),
    ("post", Act::SendExternal),
    ("announcement", Act::SendExternal),
    ("comment", Act::Comment),
    ("reply", Act::Comment),
    ("purge", Act::Purge),
    ("prune", Act::Purge),
    ("flush", Act::Purge),
];

/// Words before a word that make it a noun (`the release`, `our deploy`, `2.4.1 release`).
const DETERMINERS: &[&str] = &[
    "the",
    "a",
    "an",
    "this",
    "that",
    "these",
    "those",
    "our",
    "my",
    "your",
    "its",
    "their",
    "his",
    "her",
    "of",
    "any",
    "each",
    "every",
    "first",
    "last",
    "new",
    "no",
    "some",
    "prod",
    "production",
    "staging",
    "for",
    "from",
    "after",
    "before",
    "in",
    "on",
];

/// Words before a verb that keep it in the imperative (`please merge`, `and then deploy`).
const LEAD: &[&str] = &[
    "please", "then", "and", "also", "now", "just", "go", "ahead", "to", "can", "could", "you",
    "we", "need", "want", "i", "let's", "lets", "ok", "okay", "so", "finally", "kindly", "should",
    "must", "first", "next",
];

/// Words before a verb that make it passive or a report (`can be merged`, `was deployed`).
const PASSIVES: &[&str] = &[
    "be", "is", "are", "was", "were", "been", "being", "got", "gets", "has", "have", "had",
    // `the failover incident stays open`: a state, not an act.
    "stay", "stays", "stayed", "remain", "remains", "remained",
];

/// Nouns that say the word before them is a name (`the ui-kit package`, `the orders service`),
/// or the word after them (`channel ops`, `branch hotfix`).
const KINDS: &[&str] = &[
    "package",
    "service",
    "bucket",
    "branch",
    "channel",
    "namespace",
    "repo",
    "repository",
    "app",
    "database",
    "db",
    "cluster",
    "crate",
    "gem",
    "image",
    "chart",
    "module",
    "library",
    "project",
    "site",
    "queue",
    "topic",
    "table",
    "environment",
    "server",
    "deployment",
    "stack",
    "function",
    "team",
    "org",
    "role",
    "user",
    "workflow",
    "pipeline",
    "secret",
    "token",
    "key",
    "label",
    "release",
    "version",
    "pr",
    "issue",
    "bot",
    "job",
    "schema",
    "collection",
    "index",
    "zone",
    "domain",
    "record",
    "distribution",
    "group",
    "account",
    "vault",
    "registry",
    "api",
    "tag",
    "dist-tag",
];

/// Words that negate or defer the clause's act.
const NEGATIONS: &[&str] = &[
    "don't",
    "dont",
    "do not",
    "never",
    "not",
    "without",
    "avoid",
    "hold off",
    "refrain",
    "shouldn't",
    "should not",
    "mustn't",
    "must not",
    "can't",
    "cannot",
    "won't",
    "hold the",
    "hold it",
    "wait",
    "postpone",
    "defer",
];

/// Words that say someone else does it, or later (and [`DAYS`]).
const DEFERRALS: &[&str] = &[
    "yet",
    "later",
    "sign-off",
    "signoff",
    "sign off",
    "approval",
    "approves",
    "next week",
    "tomorrow",
    "myself",
    "i'll",
    "i will",
    "we'll",
    "we will",
    "themselves",
    "they'll",
    "they will",
    "will post there",
    "owns",
    "someone else",
    "manually",
    "by hand",
    "not before",
    "after review",
    "after the review",
    "on my own",
    "ourselves",
    "i'd like to",
    "i want to do",
    // Another team or person does it (`comms will post the resolution`).
    "comms will",
    "team will",
    "manager will",
    "owner will",
    "lead will",
    "oncall will",
    "on-call will",
    "sre will",
    "ops will",
    "he will",
    "she will",
    "he'll",
    "she'll",
];

/// Words that ask only for a preview.
const PREVIEWS: &[&str] = &[
    "dry-run",
    "dry run",
    "dryrun",
    "--dry-run",
    "--dryrun",
    "check mode",
    "--check",
    "what would",
    "would do",
    "would change",
    "would happen",
    "what happens",
    "plan out",
    "'d make",
    "'d change",
    "'d write",
    "'d do",
    "show me the diff",
    "print the resulting",
    "preview the",
    "preview what",
    "just preview",
    "only preview",
    "simulate",
    "plan only",
    "only plan",
    "show me the plan",
    "terraform plan",
    "tofu plan",
    "helm diff",
    "pulumi preview",
    "cdk diff",
    "flux diff",
    "kubectl diff",
    "sql preview",
    "no-op",
    "noop",
];

/// Words that ask only to get something ready.
const PREPARES: &[&str] = &[
    "prepare",
    "prep the",
    "prep it",
    "prep for",
    "get ready",
    "get it ready",
    "ready for",
    "draft",
    "stage the",
    "set up the",
    "line up",
    "queue up",
];

/// Verbs of looking.
const LOOKS: &[&str] = &[
    "check",
    "show",
    "list",
    "explain",
    "investigate",
    "look",
    "review",
    "see",
    "find",
    "summarize",
    "summarise",
    "diagnose",
    "why",
    "what",
    "how",
    "describe",
    "inspect",
    "read",
    "analyze",
    "analyse",
    "audit",
    "compare",
    "verify",
    "confirm",
    "report",
    "tell me",
    "figure",
    "is",
    "are",
    "does",
    "do",
    "can",
    "which",
    "where",
    "when",
    "who",
    "whether",
    "print",
    "get",
    "view",
    "examine",
    "debug",
    "find out",
    "look into",
];

/// Words that keep what follows untouched.
/// Access levels (`read access`, `admin`, GitLab's `Developer`).
const LEVELS: &[&str] = &[
    "read",
    "pull",
    "view",
    "viewer",
    "triage",
    "write",
    "push",
    "maintain",
    "admin",
    "developer",
    "maintainer",
    "reporter",
    "guest",
    "owner",
    "read-only",
];

/// Words that keep an act on the user's machine (`tag v3.1.0 locally`): nothing leaves it.
const LOCALLY: &[&str] = &[
    "locally",
    "local only",
    "on my machine",
    "local copy",
    "just local",
];

/// Words that keep a named target as it is (`new_checkout stays off`, `keep latest on 3.9`):
/// prohibitions only when they name a target.
const HOLDS: &[&str] = &[
    "keep", "keeps", "stay", "stays", "remain", "remains", "hold", "holds", "wait", "waits",
];

/// Words that set a named target apart from what is asked (`checkout-web is fine`,
/// `preview-pr-2210 is still in review`, `ENG-2291 is still blocked`): the target needs
/// nothing, so nothing is done to it. Prohibitions only when the clause names a target and
/// asks for no act.
const SET_APART: &[&str] = &[
    // `prod-us is already on the right version`.
    "already on the right",
    "is fine",
    "are fine",
    "is healthy",
    "are healthy",
    "is unaffected",
    "are unaffected",
    "not affected",
    "still in review",
    "still under review",
    "still being reviewed",
    "still blocked",
    "still needed",
    "still in use",
    "still supported",
    "still maintained",
    "still used",
    "still active",
    "still live",
    "keep running",
    "keeps running",
    "stay running",
    "stays running",
];

/// Words that report a failure (`the release job failed last night`): a clause saying what went
/// wrong asks for nothing, unless it starts with its verb (`retry the failed deploy` does not
/// grant either: its act is a noun after `failed`).
const FAILED: &[&str] = &["failed", "fails", "failing", "errored", "crashed", "broke"];

const KEEPS: &[&str] = &[
    "leave",
    "don't touch",
    "do not touch",
    "stay away from",
    "keep away from",
    "untouched",
    "must stay",
    "stays as",
    "as it is",
    "alone",
    "read-only",
    "read only",
    "no changes",
    "don't change",
    "do not change",
    "don't modify",
    "do not modify",
    "don't write",
    "do not write",
    "don't save",
    "do not save",
    "without saving",
    "without writing",
];

/// Whether a request may rule on a plain write: it may keep a file as it is (`leave VERSION
/// alone`, `don't modify the file`), or it names a file by its path (`export/Dockerfile`,
/// `k8s/prod/checkout-hpa.yaml`), which another file of that name, or a request that only
/// asks to see the change, is not. A word test the pipeline makes before fetching the mandate
/// for a plain write.
pub fn may_keep_files(request: &str) -> bool {
    let low = request.to_ascii_lowercase().replace(['’', '‘'], "'");
    contains_any(&low, KEEPS).is_some()
        || low.split_whitespace().any(|w| {
            let w = w.trim_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'));
            let path = w.contains('/') && !w.contains("://");
            // A dotfile (`.env.staging`) names a file as a path does.
            let dotfile =
                w.starts_with('.') && w[1..].starts_with(|c: char| c.is_ascii_alphabetic());
            dotfile
                || path
                    && w.rsplit('/').next().is_some_and(|last| {
                        last.contains('.')
                            || last.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                    })
        })
}

/// Whether an act is one a read-only request prohibits: every act but installing (a look may
/// need a tool), reading and editing a workspace file (a prohibition must name the file).
pub fn consequential(a: Act) -> bool {
    !matches!(a, Act::Install | Act::Inspect | Act::Edit)
}

/// A word of the request: its text as written and lowercased, apostrophes made plain.
#[derive(Debug, Clone)]
struct Word {
    raw: String,
    low: String,
}

fn words_of(text: &str) -> Vec<Word> {
    text.split_whitespace()
        .map(|w| {
            let raw = w.replace(['’', '‘'], "'");
            let low = raw
                .trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '"' | '(' | ')' | '!' | '?'))
                .trim_end_matches('.')
                .to_ascii_lowercase();
            Word { raw, low }
        })
        .filter(|w| !w.low.is_empty())
        .collect()
}

/// Cuts the request into clauses: sentences, and `but`, `then`, `instead of`, `;`.
fn clauses(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        // `!57` is GitLab's merge request 57, not the end of a sentence.
        let ends = (matches!(c, '?' | ';' | '\n')
            || (*c == '!' && !next.is_some_and(|n| n.is_ascii_digit())))
            || (*c == '.' && next.is_none_or(char::is_whitespace));
        if ends {
            // A question asks; it grants nothing (kept as a mark the clause reader sees).
            if *c == '?' {
                cur.push_str(" ?");
            }
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(*c);
        }
    }
    out.push(cur);
    let mut split = Vec::new();
    for c in out {
        let mut rest = c.as_str();
        loop {
            let low = rest.to_ascii_lowercase();
            let cut = [
                ", but ",
                " but ",
                ", then ",
                " and then ",
                " instead of ",
                ", and ",
                ", not ",
                " and not ",
                " and don't ",
                " and do not ",
                ", don't ",
                ", do not ",
                " — ",
                " - ",
            ]
            .iter()
            .filter_map(|m| low.find(m).map(|i| (i, *m)))
            .chain(comma_cut(&low).map(|i| (i, ", ")))
            .min_by_key(|(i, _)| *i);
            match cut {
                Some((i, m)) => {
                    split.push(rest[..i].to_string());
                    // Markers that carry meaning stay with what follows: `instead of X`,
                    // `not X`, `don't …`.
                    let keep = match m {
                        " instead of " => 1,
                        ", not " | ", don't " | ", do not " => 2,
                        " and not " | " and don't " | " and do not " => 5,
                        _ => m.len(),
                    };
                    rest = &rest[i + keep..];
                }
                None => {
                    split.push(rest.to_string());
                    break;
                }
            }
        }
    }
    split
        .into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Where a plain comma starts a new clause: not before a list's next item (`#88, #89`,
/// `staging, qa and dev`) or a bare target.
fn comma_cut(low: &str) -> Option<usize> {
    low.match_indices(", ").map(|(i, _)| i).find(|&i| {
        let next = low[i + 2..].split_whitespace().next().unwrap_or("");
        let next = next.trim_matches(|c: char| !c.is_ascii_alphanumeric());
        !next.is_empty()
            && !next.starts_with(|c: char| c.is_ascii_digit())
            && !low[i + 2..].starts_with('#')
            && !matches!(next, "and" | "or" | "not" | "but" | "then" | "don" | "do")
            && (target::tokens_of_word(next)
                .iter()
                .all(|t| matches!(t, target::Token::Name(_)))
                // `…, prod waits for the soak`: a clause of its own about an environment.
                || low[i + 2..]
                    .split_whitespace()
                    .nth(1)
                    .is_some_and(|v| HOLDS.contains(&v) || matches!(v, "is" | "must" | "should")))
            && next.chars().all(|c| c.is_ascii_alphabetic())
    })
}

fn phrase_at(ws: &[Word], i: usize, phrase: &str) -> bool {
    let parts: Vec<&str> = phrase.split(' ').collect();
    parts.iter().enumerate().all(|(k, p)| {
        ws.get(i + k).is_some_and(|w| {
            let l = w.low.as_str();
            // The base form only: `merged`, `deployed` are no imperatives.
            l == *p || (parts.len() == 1 && l.rsplit_once('-').is_some_and(|(_, last)| last == *p))
        })
    })
}

fn contains_any(text: &str, list: &[&str]) -> Option<String> {
    let t = format!(" {} ", text.to_ascii_lowercase().replace(['’', '‘'], "'"));
    list.iter()
        .find(|m| {
            let m = m.to_ascii_lowercase();
            t.contains(&format!(" {m} "))
                || t.contains(&format!(" {m},"))
                || t.contains(&format!(" {m}."))
                || t.contains(&format!(" {m}'"))
                || (m.contains(' ') || m.contains('-')) && t.contains(&m)
        })
        .map(|m| m.to_string())
}

/// Whether the word at `i` stands where a verb can: not after a determiner, a possessive or a
/// name (`the release`, `ui-kit's release`, `2.4.1 release` are nouns).
fn verb_position(ws: &[Word], i: usize) -> bool {
    // A quoted word is a name (`the 'Remove leftover container' step`).
    if ws[i].raw.starts_with(['\'', '"', '`']) {
        return false;
    }
    let Some(prev) = i.checked_sub(1).and_then(|k| ws.get(k)) else {
        return true;
    };
    // `I'll merge and let Argo sync`: what someone or something else does after.
    if i >= 2 && ws[i - 2].low == "let" {
        return false;
    }
    // `decide what to drop`, `which to delete`: a choice to make, not an act asked for.
    if prev.low == "to"
        && i.checked_sub(2)
            .and_then(|k| ws.get(k))
            .is_some_and(|w| matches!(w.low.as_str(), "what" | "which" | "whether" | "how"))
    {
        return false;
    }
    // `whether 2.3.0 is ready to deploy`, `if it's safe to merge`: a readiness asked about.
    if prev.low == "to"
        && i.checked_sub(2).and_then(|k| ws.get(k)).is_some_and(|w| {
            matches!(
                w.low.as_str(),
                "ready" | "safe" | "ok" | "okay" | "fine" | "good" | "clear" | "cleared"
            )
        })
    {
        return false;
    }
    // A comma or a label's colon opens a clause (`ACCESS-331 approved by data-gov: grant …`).
    if prev.raw.ends_with([',', ':']) || LEAD.contains(&prev.low.as_str()) {
        // `what happens if we scale the worker to zero`: a supposition asks for nothing.
        let lead = ws[..i]
            .iter()
            .rev()
            .take_while(|w| LEAD.contains(&w.low.as_str()))
            .count();
        let before = i.checked_sub(lead + 1).and_then(|k| ws.get(k));
        // `… before we invalidate anything`, `until I merge it`: what the user does later.
        let user_later = ws[i - lead..i]
            .iter()
            .any(|w| matches!(w.low.as_str(), "we" | "i"))
            && before.is_some_and(|w| {
                matches!(
                    w.low.as_str(),
                    "before" | "until" | "till" | "after" | "once" | "when"
                )
            });
        return !user_later
            && !before.is_some_and(|w| matches!(w.low.as_str(), "if" | "whether" | "unless"));
    }
    !(DETERMINERS.contains(&prev.low.as_str())
        || PASSIVES.contains(&prev.low.as_str())
        || prev.low.ends_with("'s")
        || (targetish(ws, i - 1) && !prev.low.starts_with('(') && !registry(&prev.low))
        || prev.low.chars().all(|c| c.is_ascii_digit()))
}

/// Whether the word after a verb makes the verb a noun's modifier (`rollout status`, `deploy
/// logs`, `release notes`, `merge conflicts`): a thing named, not an act asked for.
fn names_a_thing(next: Option<&Word>) -> bool {
    next.is_some_and(|w| {
        matches!(
            w.low.trim_end_matches(['.', ',', ';', ':', '!', '?']),
            "status"
                | "history"
                | "logs"
                | "log"
                | "notes"
                | "conflicts"
                | "checklist"
                | "runbook"
                | "docs"
                | "window"
                | "freeze"
                | "schedule"
                | "dashboard"
                // `show me the targeted destroy plan`: the plan of an act, not the act.
                | "plan"
                | "plans"
        )
    }) || described(next)
}

/// Whether the word after a verb says a state of it, which makes the verb a noun (`the NAT
/// gateway change looks good`, `the bump is merged`).
fn described(next: Option<&Word>) -> bool {
    next.is_some_and(|w| {
        matches!(
            w.low.trim_end_matches(['.', ',', ';', ':', '!', '?']),
            "looks" | "look" | "is" | "was" | "seems" | "passed" | "went" | "landed" | "works"
        )
    })
}

/// The acts a clause's verbs name, with the word index and length of each verb.
fn verbs(ws: &[Word]) -> Vec<(usize, &'static [Act], usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        let found = VERBS
            .iter()
            .filter(|(p, _)| phrase_at(ws, i, p))
            .max_by_key(|(p, _)| p.len());
        match found {
            Some((p, acts))
                if verb_position(ws, i) && !names_a_thing(ws.get(i + p.split(' ').count())) =>
            {
                let n = p.split(' ').count();
                out.push((i, *acts, n));
                i += n;
            }
            _ => {
                // `get data-etl's dependencies installed`: the participle after an imperative
                // `get` is the act asked for.
                let core = ws[i].low.trim_end_matches(['.', ',', ';', ':', '!', '?']);
                let base = core
                    .strip_suffix("ed")
                    .filter(|b| VERBS.iter().any(|(p, _)| p == b))
                    .or_else(|| core.strip_suffix('d'));
                let acts = base.and_then(|b| VERBS.iter().find(|(p, _)| *p == b));
                if let Some((_, acts)) = acts
                    && ws[..i]
                        .iter()
                        .enumerate()
                        .any(|(j, w)| w.low == "get" && verb_position(ws, j))
                {
                    out.push((i, *acts, 1));
                }
                i += 1
            }
        }
    }
    out
}

/// The plain words right after a clause's verbs, determiners skipped (`purge sessions`, `flush
/// the sessions`): a name the act is on even without a digit or a dash. Kind nouns (`the db`),
/// fillers and other verbs are none.
fn objects(ws: &[Word], vs: &[(usize, &'static [Act], usize)]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _, n) in vs {
        let mut j = i + n;
        while ws.get(j).is_some_and(|w| {
            DETERMINERS.contains(&w.low.as_str())
                || matches!(
                    w.low.as_str(),
                    "whole" | "entire" | "full" | "old" | "stale"
                )
        }) {
            j += 1;
        }
        let Some(w) = ws.get(j) else { continue };
        let core = w.low.trim_end_matches(['.', ',', ';', ':', '!', '?']);
        let plain = core.len() >= 3 && core.chars().all(|c| c.is_ascii_alphabetic() || c == '_');
        let named = target::tokens_of_word(core)
            .iter()
            .all(|t| matches!(t, target::Token::Name(_)))
            && !target::tokens_of_word(core).is_empty();
        if plain
            && named
            && !KINDS.contains(&core.trim_end_matches('s'))
            && !KINDS.contains(&core)
            && !VERBS.iter().any(|(p, _)| *p == core)
            && !LOOKS.contains(&core)
            && !MUTATES.contains(&core)
            && ![
                "everything",
                "anything",
                "all",
                "out",
                "up",
                "off",
                "down",
                "over",
                "against",
                "into",
                "onto",
                "from",
                "with",
                "for",
                "across",
            ]
            .contains(&core)
        {
            out.push(format!("object:{core}"));
        }
    }
    out
}

/// `add zod`, `pull in serde_json`: an install of the package named, at any version.
fn install_added(ws: &[Word], acts: &mut Vec<Act>, targets: &mut Vec<String>) {
    if let Some(pkg) = added_package(ws) {
        if !targets.contains(&pkg) {
            targets.push(pkg);
        }
        acts.push(Act::Install);
        acts.sort();
        acts.dedup();
    }
}

/// The package an `add` or `pull in` names (`add zod so we can validate …`, `pull in
/// serde_json for it`): the plain word right after the verb, determiners skipped, when it looks
/// like a package's name and is none of the things a change adds (`add tests`, `add a flag`).
fn added_package(ws: &[Word]) -> Option<String> {
    let i = verb_of(ws, &["add", "pull in"])?;
    let mut j = i + if phrase_at(ws, i, "pull in") { 2 } else { 1 };
    while ws
        .get(j)
        .is_some_and(|w| DETERMINERS.contains(&w.low.as_str()))
    {
        j += 1;
    }
    let w = ws.get(j)?;
    // The head of what is added: the clause ends after it or goes on to say why or where
    // (`add zod so we can …`, `… to the api`); `add an HTTP client gem` adds a kind of thing.
    let ends = w.raw.ends_with(['.', ',', ';', ':', '!', '?'])
        || ws.get(j + 1).is_none_or(|n| {
            matches!(
                n.low.as_str(),
                "so" | "for"
                    | "to"
                    | "and"
                    | "as"
                    | "in"
                    | "because"
                    | "which"
                    | "that"
                    | "into"
                    | "("
                    | "package"
                    | "dependency"
                    | "crate"
                    | "library"
                    | "gem"
                    | "module"
            )
        });
    let core = w.raw.trim_end_matches(['.', ',', ';', ':', '!', '?']);
    const NOT_PACKAGES: &[&str] = &[
        "tests",
        "test",
        "support",
        "docs",
        "comments",
        "comment",
        "more",
        "option",
        "options",
        "flag",
        "step",
        "check",
        "checks",
        "column",
        "field",
        "migration",
        "endpoint",
        "route",
        "feature",
        "retries",
        "retry",
        "validation",
        "logging",
        "types",
        "handling",
        "error",
        "errors",
        "entry",
        "entries",
        "rule",
        "rules",
        "note",
        "notes",
        "section",
        "example",
        "examples",
        "it",
        "them",
        "one",
        "new",
        "missing",
        "index",
        "case",
        "cases",
    ];
    let plain = core.len() >= 2
        && core.starts_with(|c: char| c.is_ascii_alphabetic())
        && core
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_'));
    let named = !target::tokens_of_word(core).is_empty()
        && target::tokens_of_word(core)
            .iter()
            .all(|t| matches!(t, target::Token::Name(_)));
    (plain
        && ends
        && named
        && !NOT_PACKAGES.contains(&core)
        && !KINDS.contains(&core)
        && !KINDS.contains(&core.trim_end_matches('s'))
        && !VERBS.iter().any(|(p, _)| *p == core))
    .then(|| core.to_string())
}

/// Whether one of `list` starts at a verb position of the clause; the first such index.
fn verb_of(ws: &[Word], list: &[&str]) -> Option<usize> {
    (0..ws.len()).find(|&i| {
        verb_position(ws, i)
            && list
                .iter()
                .any(|p| phrase_at(ws, i, p) && !described(ws.get(i + p.split(' ').count())))
    })
}

/// The acts of the domain nouns after word `from` (`the staging DB`, `the SENTRY_DSN secret`).
fn domains(low: &str, bypass: bool) -> Vec<Act> {
    let mut out: Vec<Act> = DOMAINS
        .iter()
        .filter(|(n, a)| {
            (bypass || *a != Act::SafeguardChange)
                && low
                    .split(|c: char| {
                        !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ' ')
                    })
                    .any(|chunk| {
                        let chunk = format!(" {chunk} ");
                        chunk.contains(&format!(" {n}")) || chunk.contains(&format!("_{n}"))
                    })
        })
        .map(|(_, a)| *a)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether word `i` looks like a name: an identifier (a digit, or `-_/.@#:` inside), an
/// environment or protected branch, a quoted word, or a word a kind noun marks as a name.
fn targetish(ws: &[Word], i: usize) -> bool {
    let w = &ws[i];
    let core = w.low.trim_matches(|c: char| matches!(c, '`' | '\'' | '"'));
    let toks = target::tokens_of_word(core);
    if toks.is_empty() {
        return false;
    }
    let typed = toks.iter().any(|t| !matches!(t, target::Token::Name(_)));
    let ident = core.chars().any(|c| c.is_ascii_digit())
        || core
            .trim_end_matches(['.', ','])
            .contains(['-', '_', '/', '.', '@', '#', ':']);
    let quoted = w.raw.starts_with(['`', '\'', '"']);
    let kind_after = ws
        .get(i + 1)
        .is_some_and(|n| KINDS.contains(&n.low.trim_end_matches('s')));
    let kind_before = i > 0 && KINDS.contains(&ws[i - 1].low.trim_end_matches('s'));
    typed || ident || quoted || kind_after || kind_before
}

/// The target words of a clause: every word that names something, verbs and fillers aside.
/// Whether word `i` is an access level (`read access`, `give him Developer`).
fn is_level(ws: &[Word], i: usize) -> bool {
    let w = ws[i].low.trim_end_matches(['.', ',']);
    LEVELS.contains(&w)
        && (ws.get(i + 1).is_some_and(|n| {
            matches!(
                n.low.trim_end_matches(['.', ',']),
                "access" | "permission" | "permissions" | "role"
            )
        }) || [
            "developer",
            "maintainer",
            "reporter",
            "guest",
            "owner",
            "admin",
            "maintain",
            "triage",
        ]
        .contains(&w))
}

fn targets_of(ws: &[Word], skip: &[usize]) -> Vec<String> {
    ws.iter()
        .enumerate()
        .filter(|(i, _)| !skip.contains(i))
        .filter(|(i, w)| {
            is_level(ws, *i)
                || file_word(w)
                || !VERBS.iter().any(|(p, _)| *p == w.low)
                    && !MUTATES.contains(&w.low.as_str())
                    && !RUNS.contains(&w.low.as_str())
                    && !LOOKS.contains(&w.low.as_str())
                    && !KINDS.contains(&w.low.as_str())
                    && !product_number(ws, *i)
                    && targetish(ws, *i)
        })
        .map(|(i, w)| {
            let t = w
                .raw
                .trim_matches(|c: char| {
                    matches!(
                        c,
                        ',' | ';' | ':' | '"' | '(' | ')' | '!' | '?' | '`' | '\''
                    )
                })
                .trim_end_matches('.')
                .to_string();
            // `the next tag`, `the latest dist-tag`: a dist-tag; `read access`, `give him
            // Developer`: an access level.
            if is_level(ws, i) {
                return format!("permission:{}", t.to_ascii_lowercase());
            }
            // `the v3.4.0 tag` is a git tag: a version, not a dist-tag.
            let version = target::tokens_of_word(&t)
                .iter()
                .any(|x| matches!(x, target::Token::Version(_)));
            match ws.get(i + 1).map(|n| n.low.trim_end_matches(['.', ','])) {
                Some("tag" | "dist-tag") if !version => format!("dist-tag:{t}"),
                _ => t,
            }
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether word `i` is the number of a product's name (`Route 53`), no target.
fn product_number(ws: &[Word], i: usize) -> bool {
    i > 0 && ws[i - 1].low == "route" && ws[i].low.trim_end_matches(['.', ',', ')']) == "53"
}

/// A file named by its conventional upper-case name (`VERSION`, `CHANGELOG`, `CODEOWNERS`,
/// `README.md`): a target even when the word is also a common one (`version`). Only these: a
/// word shouted in capitals (`NEVER`) names no file.
fn file_word(w: &Word) -> bool {
    let core = w
        .raw
        .trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '"' | '(' | ')' | '`' | '\''))
        .trim_end_matches('.');
    let stem = core.split('.').next().unwrap_or(core);
    const FILES: &[&str] = &[
        "VERSION",
        "CHANGELOG",
        "CHANGES",
        "CODEOWNERS",
        "README",
        "LICENSE",
        "NOTICE",
        "AUTHORS",
        "CONTRIBUTING",
        "MAINTAINERS",
        "SECURITY",
        "OWNERS",
    ];
    FILES.contains(&stem)
}

/// The acts the nouns of a clause name (`the release`, `the migration`).
fn nouns(ws: &[Word]) -> Vec<Act> {
    let mut out: Vec<Act> = ws
        .iter()
        .filter_map(|w| {
            NOUNS
                .iter()
                .find(|(n, _)| w.low == *n || w.low.strip_suffix('s') == Some(n))
                .map(|(_, a)| *a)
                // `run migrations/2024_05_add_orders_index.sql`: a migration by its file.
                .or_else(|| {
                    (w.low.contains("migrations/") && w.low.ends_with(".sql"))
                        .then_some(Act::DatabaseWrite)
                })
        })
        .collect();
    out.dedup();
    out
}

/// Whether one of the targets has a token of this kind (a version, an environment).
fn names_a(targets: &[String], kind: fn(&target::Token) -> bool) -> bool {
    targets.iter().any(|t| target::tokens(t).iter().any(kind))
}

/// Acts said as idioms: `flip the prod toggle` (a live setting of the environment named),
/// `mark it #[ignore]` (a test skipped), `take api-gateway back to revision 41`.
fn idioms(ws: &[Word], low: &str, targets: &[String], acts: &mut Vec<Act>) {
    // `flip the prod toggle`, `turn new_checkout_flow on in prod`: a live setting of the
    // environment named changed.
    if verb_of(ws, &["turn", "flip", "switch", "toggle", "enable"]).is_some()
        && names_a(targets, |x| matches!(x, target::Token::Env(_)))
    {
        acts.push(Act::Deploy);
    }
    // `delete pod search-indexer-… , the ReplicaSet will replace it`: a pod deleted restarts.
    if verb_of(ws, &["delete", "kill", "remove"]).is_some()
        && ws.iter().any(|w| matches!(w.low.as_str(), "pod" | "pods"))
    {
        acts.push(Act::Deploy);
    }
    // `clean up the hotfix/login-loop branch`: the remote branch deleted.
    if verb_of(ws, &["clean up"]).is_some() && low.contains("branch") {
        acts.push(Act::DeleteRemote);
    }
    // `mark every 1.x release as deprecated`: npm's deprecate.
    if verb_of(ws, &["mark"]).is_some() && low.contains("deprecated") {
        acts.push(Act::Purge);
    }
    // `mark sentry issue 4419872231 resolved`: an issue closed.
    if verb_of(ws, &["mark"]).is_some()
        && ws.iter().any(|w| {
            matches!(
                w.low.trim_end_matches(['.', ',', ';', ':', '!', '?']),
                "resolved" | "closed" | "done" | "fixed" | "completed"
            )
        })
    {
        acts.push(Act::Close);
    }
    // `publish the handbook to the live site`: a site published to an environment is deployed.
    if acts.contains(&Act::Publish) && names_a(targets, |x| matches!(x, target::Token::Env(_))) {
        acts.push(Act::Deploy);
    }
    // `mark it #[ignore]`, `mark the test as xfail`: a test skipped.
    if verb_of(ws, &["mark"]).is_some()
        && ["ignore", "skip", "xfail", "disabled", "pending"]
            .iter()
            .any(|w| low.contains(w))
    {
        acts.push(Act::SafeguardChange);
    }
    // `take api-gateway back to revision 41`, `take embedder up to 6 replicas`.
    if verb_of(ws, &["take", "bring"]).is_some() {
        if low.contains(" back to ") {
            acts.push(Act::Deploy);
        } else if low.contains(" up to ") || low.contains(" down to ") {
            acts.extend([Act::InfrastructureChange, Act::Deploy]);
        }
    }
    // `cut api.example.io over to the green load balancer`: traffic moved, a DNS or routing
    // change, not a release cut.
    if verb_of(ws, &["cut", "switch", "fail", "move"]).is_some()
        && (low.contains(" over to ") || low.contains(" over from "))
    {
        acts.retain(|a| *a != Act::Publish);
        acts.extend([Act::InfrastructureChange, Act::Deploy]);
    }
    // `write the new key into secret/prod/stripe in Vault`: a secret store written.
    if verb_of(
        ws,
        &[
            "write", "put", "store", "save", "upload", "add", "set", "update",
        ],
    )
    .is_some_and(|i| !phrase_at(ws, i, "write up"))
        && [
            "vault",
            "secrets manager",
            "secret manager",
            "parameter store",
            "key vault",
        ]
        .iter()
        .any(|w| low.contains(w))
    {
        acts.push(Act::SecretUse);
    }
    // `open a high-urgency PagerDuty incident`, `page the on-call`: people alerted.
    if (verb_of(
        ws,
        &[
            "open", "file", "create", "raise", "declare", "trigger", "start",
        ],
    )
    .is_some()
        && ws.iter().any(|w| w.low.starts_with("incident")))
        || ws
            .iter()
            .find(|w| !LEAD.contains(&w.low.as_str()))
            .is_some_and(|w| w.low == "page")
    {
        acts.push(Act::SendExternal);
    }
    // `file a Linear issue in PLAT`, `open a GitHub issue for it`: a new issue.
    if verb_of(ws, &["open", "file", "create", "raise", "log"]).is_some()
        && ws.iter().any(|w| {
            matches!(
                w.low.as_str(),
                "issue" | "ticket" | "bug" | "story" | "task"
            )
        })
    {
        acts.push(Act::Comment);
    }
}

/// Whether the words name a package repository (`our Nexus`, `Maven Central`).
fn to_a_package_repository(low: &str) -> bool {
    const PACKAGE_REPOSITORIES: &[&str] = &[
        "nexus",
        "artifactory",
        "jfrog",
        "maven central",
        "sonatype",
        "ossrh",
        "clojars",
        "codeartifact",
        "github packages",
        "package registry",
    ];
    contains_any(low, PACKAGE_REPOSITORIES).is_some()
}

/// The acts a clause names: its verbs', a run verb's object's, a mutating verb's domain's; a
/// push with a version or to a registry publishes, a forced one rewrites history.
fn clause_acts(
    ws: &[Word],
    vs: &[(usize, &'static [Act], usize)],
    low: &str,
    targets: &[String],
) -> Vec<Act> {
    // The acts the clause names: its verbs', a run verb's object's, a mutating verb's domain's.
    let mut acts: Vec<Act> = vs.iter().flat_map(|(_, a, _)| a.iter().copied()).collect();
    if let Some(i) = verb_of(ws, RUNS) {
        // What is run ends where the clause goes on to something else (`run mvn verify and
        // tell me whether it is ready to deploy`).
        let rest = &ws[i + 1..];
        let end = rest
            .iter()
            .position(|w| {
                w.raw.ends_with(',')
                    || matches!(
                        w.low.as_str(),
                        "and" | "then" | "but" | "so" | "whether" | "if"
                    )
            })
            .map_or(rest.len(), |k| k + usize::from(rest[k].raw.ends_with(',')));
        acts.extend(nouns(&rest[..end]));
    }
    // `add sidekiq ~> 7.2`: an install of the version named (`add an HTTP client gem` leaves
    // the package to the agent, and grants nothing).
    let version = names_a(targets, |x| matches!(x, target::Token::Version(_)));
    if verb_of(ws, &["add"]).is_some() && version {
        acts.push(Act::Install);
    }
    idioms(ws, low, targets, &mut acts);
    // `mark PAY-1432 as done`: the issue closed.
    if verb_of(ws, &["mark", "move", "transition"]).is_some()
        && [
            " as done",
            " as closed",
            " as resolved",
            " as complete",
            " as fixed",
            " to done",
            " to closed",
            " to resolved",
        ]
        .iter()
        .any(|p| low.contains(p))
    {
        acts.push(Act::Close);
    }
    // `deploy ledger-core 2.3.0 to our Nexus`: Maven's deploy uploads to a package repository.
    if acts.contains(&Act::Deploy) && to_a_package_repository(low) {
        acts.push(Act::Publish);
    }
    // `fix the IAM policy`: access the user names, granted.
    if verb_of(ws, &["fix"]).is_some() && domains(low, false).contains(&Act::AccessGrant) {
        acts.push(Act::AccessGrant);
    }
    // `write the migration that drops the column`: the drop is asked for.
    if ws.iter().any(|w| w.low.starts_with("migration"))
        && [
            " that drops ",
            " which drops ",
            " to drop ",
            " that removes ",
            " dropping ",
        ]
        .iter()
        .any(|p| low.contains(p))
    {
        acts.extend([Act::DatabaseWrite, Act::Delete]);
    }
    // `apply the pending Liquibase changesets`, `apply the migrations to prod`.
    if verb_of(ws, &["apply"]).is_some()
        && ws
            .iter()
            .any(|w| w.low.starts_with("migration") || w.low.starts_with("changeset"))
    {
        acts.push(Act::DatabaseWrite);
    }
    mutated(ws, low, targets, &mut acts);
    // A push with a version or to a registry publishes; a rebase pushed is a force-push.
    if acts.contains(&Act::Push) {
        let registry = [
            "rubygems",
            "pypi",
            "npm",
            "crates.io",
            "registry",
            "ghcr",
            "docker hub",
        ]
        .iter()
        .any(|r| low.contains(r));
        if registry || version {
            acts.push(Act::Publish);
        }
        if low.contains("force") {
            acts.push(Act::RewriteHistory);
        }
    }
    acts.sort();
    acts.dedup();
    acts
}

/// The acts of a mutating verb's domain nouns (`set the DSN secret`, `open port 443`), and a
/// setting of the environment named changed.
fn mutated(ws: &[Word], low: &str, targets: &[String], acts: &mut Vec<Act>) {
    if verb_of(ws, MUTATES).is_some() {
        // `make the lint job pass` names a goal, not a safeguard made optional.
        let bypass = verb_of(ws, BYPASSES).is_some_and(|i| {
            ws[i].low != "make"
                || !ws[i + 1..].iter().any(|w| {
                    matches!(
                        w.low.trim_end_matches(['.', ',', '!']),
                        "pass" | "green" | "succeed" | "work" | "build"
                    )
                })
        });
        acts.extend(domains(low, bypass));
        // `raise the production memory limit to 1Gi`: a setting of the environment named
        // changed (a verb that sets, not `give me a preview of prod`).
        const SETS: &[&str] = &[
            "set",
            "raise",
            "increase",
            "decrease",
            "lower",
            "change",
            "update",
            "enable",
            "disable",
            "turn on",
            "turn off",
            "resize",
            "configure",
            "switch",
            "bump",
        ];
        let env = names_a(targets, |x| matches!(x, target::Token::Env(_)));
        if env && verb_of(ws, SETS).is_some() && !acts.contains(&Act::Deploy) {
            acts.push(Act::InfrastructureChange);
        }
    }
}

/// A prohibition in the user's `words`.
fn forbid(m: &mut Mandate, act: Option<Act>, targets: Vec<String>, words: &str) {
    m.prohibitions.push(Prohibition {
        act,
        targets,
        words: words.to_string(),
        source: Source::User,
    });
}

/// Where `leave X to someone` hands X over: the index of its `to` (`leave the deploy to the
/// on-call`, `leave the merge to me`), when the clause starts with `leave`; not `leave it to
/// run overnight` (a verb after `to`).
fn left_to_someone(ws: &[Word]) -> Option<usize> {
    let first = ws
        .iter()
        .position(|w| !matches!(w.low.as_str(), "but" | "and" | "then" | "please" | "just"))?;
    if ws[first].low != "leave" {
        return None;
    }
    let k = ws.iter().skip(first + 1).position(|w| w.low == "to")? + first + 1;
    let next = ws.get(k + 1)?.low.as_str();
    let person = matches!(
        next,
        "the" | "me" | "us" | "them" | "him" | "her" | "someone" | "whoever" | "our" | "my"
    ) || next.ends_with("-call")
        || next == "oncall";
    (person && k > first + 1).then_some(k)
}

/// How a clause asks: negated or deferred, as a preview only, as a preparation only.
struct Mood {
    negated: bool,
    preview: bool,
    prepare: bool,
}

/// The clause without `not` before a gerund (`tolerate the container not existing`): a state
/// described, no verb negated.
fn without_described_states(low: &str) -> String {
    let words: Vec<&str> = low.split_whitespace().collect();
    let gerund = |k: usize| words.get(k).is_some_and(|w| w.ends_with("ing"));
    words
        .iter()
        .enumerate()
        .filter(|(i, w)| {
            let not_before = **w == "not" && gerund(i + 1);
            let after_not = *i > 0 && words[i - 1] == "not" && gerund(*i);
            !not_before && !after_not
        })
        .map(|(_, w)| *w)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The days of the week: a day named for the act defers it (`we run it on Friday`).
const DAYS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// The clause without deadlines and names of days (`ahead of the Black Friday load test`,
/// `before Friday`, `by tomorrow`): a time the work must be done by defers nothing.
fn without_deadlines(low: &str) -> String {
    let low = low.replace("black friday", "");
    let words: Vec<&str> = low.split_whitespace().collect();
    let mut out = Vec::new();
    let mut skip = 0usize;
    for (i, w) in words.iter().enumerate() {
        if skip > 0 {
            skip -= 1;
            continue;
        }
        let by = matches!(*w, "before" | "by") && (i == 0 || words[i - 1] != "not");
        let ahead = *w == "ahead" && words.get(i + 1) == Some(&"of");
        if by || ahead {
            // The deadline's words: up to the next four.
            skip = 4;
            continue;
        }
        // `the notice for Saturday's window`: a day that names what the thing is about, not
        // when to act (`on Tuesday's call` is when).
        if *w == "for"
            && words.get(i + 1).is_some_and(|n| {
                DAYS.contains(&n.trim_end_matches("'s"))
                    // `for tomorrow's load test`: what it is for, not when to act.
                    || matches!(*n, "tomorrow's" | "tonight's" | "today's" | "next week's")
            })
        {
            skip = 1;
            continue;
        }
        out.push(*w);
    }
    out.join(" ")
}

/// The clause up to what it reports: a message's content (`… letting the reporter know the fix
/// ships next week`, `post … saying we won't deploy today`) is what is sent, not when or
/// whether to send it.
fn without_reported_speech(low: &str) -> &str {
    const REPORTS: &[&str] = &[
        " letting ",
        " let them know",
        " saying ",
        " to say ",
        " telling ",
        " to tell ",
        " that says ",
        " explaining ",
        " with the message ",
        " announcing ",
    ];
    let cut = REPORTS.iter().filter_map(|r| low.find(r)).min();
    cut.map_or(low, |i| &low[..i])
}

/// The mood of a clause's lowercased words.
/// Whether a clause says what automation does next (`CI will pick it up and build the
/// release`, `Flux picks changes up`): said, not asked; it neither grants nor forbids.
fn describes_automation(low: &str) -> bool {
    const WHO: &[&str] = &[
        "ci",
        "the ci",
        "the pipeline",
        "the workflow",
        "flux",
        "argo",
        "argocd",
        "the bot",
        "renovate",
        "dependabot",
        "github actions",
        "the release workflow",
        "the deploy job",
    ];
    WHO.iter().any(|w| {
        low.strip_prefix(w).is_some_and(|rest| {
            [
                " will ",
                "'ll ",
                " picks ",
                " then ",
                " builds ",
                " deploys ",
                " publishes ",
            ]
            .iter()
            .any(|v| rest.starts_with(v))
        })
    })
}

/// The text without the gates it says are passed and the labels that only sound negative:
/// `sign-off is done`, `approvals are in`, `go/no-go passed`, `close it as not planned` (GitHub's
/// close reason) defer or negate nothing.
fn without_passed_gates(low: &str) -> String {
    const PASSED: &[&str] = &[
        "sign-off is done",
        "sign-off's done",
        "sign-off done",
        "sign-off is in",
        "sign-off received",
        "sign-off came through",
        "signoff is done",
        "signoff is in",
        "sign off is done",
        "got sign-off",
        "have sign-off",
        "approvals are in",
        "approval is in",
        "go/no-go passed",
        "is approved",
        "was approved",
        "are approved",
        "is signed off",
        "was signed off",
        "ok'd it",
        "okayed it",
    ];
    // GitHub's close reason sounds negative and is not.
    const LABELS: &[&str] = &["as not planned", "\"not planned\"", "reason not planned"];
    let mut out = low.to_string();
    // `deploy after it is approved` still waits: a gate said to come is no gate passed.
    let gated = [
        " after ",
        " once ",
        " when ",
        " until ",
        "not before",
        "wait for",
    ]
    .iter()
    .any(|w| low.contains(w));
    for p in LABELS.iter().chain(PASSED.iter().filter(|_| !gated)) {
        out = out.replace(p, " ");
    }
    out
}

fn mood(low: &str) -> Mood {
    let passed = without_passed_gates(without_reported_speech(low));
    let low = passed.as_str();
    // `after … is approved`, `once QA signs off`: a person decides first.
    let gated = [" after ", " once ", " when "]
        .iter()
        .any(|w| low.contains(w))
        && [
            "approved",
            "approval",
            "sign-off",
            "signs off",
            "signed off",
            "sign off",
            "reviewed",
            "review",
            "qa ",
        ]
        .iter()
        .any(|w| low.contains(w));
    let unnegated = without_described_states(low);
    let negated = contains_any(&unnegated, NEGATIONS).is_some()
        || {
            let undated = without_deadlines(low);
            contains_any(&undated, DEFERRALS).is_some() || contains_any(&undated, DAYS).is_some()
        }
        || gated;
    // `… it would remove`, `… so we can see what it would change`: a preview (`would you` asks).
    let preview = contains_any(low, PREVIEWS).is_some()
        || (low.contains(" would ") && !low.contains("would you"));
    let prepare = contains_any(low, PREPARES).is_some()
        || (low
            .split_whitespace()
            .any(|w| w.trim_matches(|c: char| !c.is_alphabetic()) == "ready")
            && ["get ", "make ", "have "]
                .iter()
                .any(|v| low.starts_with(v)));
    Mood {
        negated,
        preview,
        prepare,
    }
}

/// `Tag v3.1.0 locally`: an act asked for on the user's machine only; nothing may leave it for
/// these targets (a statement, `it's tagged locally already`, asks nothing).
fn local_only(text: &str, low: &str, targets: &[String], acts: &mut Vec<Act>, m: &mut Mandate) {
    let statement = low.contains("already") || low.contains(" is ") || low.contains(" are ");
    // `push the locally built image`: where it was built, not where it stays.
    let built = contains_any(low, &["locally built", "built locally", "locally-built"]).is_some();
    if acts.is_empty() || statement || built || contains_any(low, LOCALLY).is_none() {
        return;
    }
    for a in [Act::Push, Act::Publish, Act::Deploy] {
        forbid(m, Some(a), targets.to_vec(), text);
    }
    acts.retain(|a| !matches!(a, Act::Push | Act::Publish | Act::Deploy));
}

/// Words that name a CI pipeline or a part of one.
const CI_NOUNS: &[&str] = &[
    "ci",
    "workflow",
    "workflows",
    "pipeline",
    "pipelines",
    "job",
    "jobs",
    "step",
    "steps",
    "matrix",
    "stage",
    ".gitlab-ci.yml",
    "actions",
    "nightly",
    "schedule",
    "cron",
];

/// Verbs that, first in a clause of a request naming CI, ask for a change to it (`remove the
/// windows job`, `make Node trust it in the integration workflow`, `fix it`).
const CI_VERBS: &[&str] = &[
    "add",
    "remove",
    "drop",
    "delete",
    "make",
    "fix",
    "use",
    "give",
    "set",
    "run",
    "keep",
    "pin",
    "mark",
    "update",
    "change",
    "configure",
    "switch",
    "move",
    "rename",
    "split",
    "cache",
    "bump",
    "upgrade",
    "enable",
    "disable",
    "allow",
    "let",
    "trust",
    "install",
    "point",
    "replace",
    "turn",
    "exclude",
    "include",
    "schedule",
    "trigger",
    "post",
    "publish",
    "push",
    "create",
    "write",
    "migrate",
];

/// Whether the request names a CI pipeline, a job or a step.
fn names_ci(request: &str) -> bool {
    words_of(request).iter().any(|w| {
        let w = w
            .low
            .trim_end_matches("'s")
            .trim_end_matches(['.', ',', ';', ':']);
        // A pipeline named by its file (`deploy.yml`, `Jenkinsfile`): a CI change on a file
        // that is no pipeline is no act, so naming a YAML file grants nothing else.
        CI_NOUNS.contains(&w) || w.ends_with(".yml") || w.ends_with(".yaml") || w == "jenkinsfile"
    })
}

/// Whether the clause starts with a verb of [`CI_VERBS`] (after `please`, `also`, `then`).
fn ci_imperative(ws: &[Word]) -> bool {
    ws.iter()
        .find(|w| {
            !matches!(
                w.low.as_str(),
                "please" | "also" | "then" | "and" | "so" | "just"
            )
        })
        .is_some_and(|w| CI_VERBS.contains(&w.low.as_str()))
}

/// `update the API tests to expect 201`, `update OrderServiceTest's setup and the expected
/// total`: a verb that changes, in a verb position, before a word naming tests or what they
/// expect.
fn updates_expectations(ws: &[Word]) -> bool {
    const CHANGES: &[&str] = &[
        "update",
        "change",
        "adjust",
        "align",
        "rewrite",
        "correct",
        "regenerate",
        "amend",
    ];
    let test_word = |w: &Word| {
        let l = w.low.trim_end_matches("'s");
        matches!(
            l,
            "test" | "tests" | "spec" | "specs" | "expectation" | "expectations" | "expected"
        ) || l.ends_with("test")
            || l.ends_with("tests")
            || l.ends_with("_spec")
            // `test_slugify`, `test_orders.py`, `cart.test.ts`, `handler_test.go`.
            || (l.starts_with("test_") && l.len() > 5)
            || l.contains(".test.")
            || l.contains(".spec.")
            || l.contains("_test.")
    };
    // The verb asks (`update …`, `please update …`, `…, then update …`); `since the tax
    // rounding change and invoice_spec is failing` names a change, not a request.
    let asks = |i: usize| {
        i == 0
            || ws[i - 1].raw.ends_with([',', ':'])
            || matches!(
                ws[i - 1].low.as_str(),
                "please" | "then" | "also" | "and" | "just" | "so" | "to"
            )
    };
    ws.iter().enumerate().any(|(i, w)| {
        CHANGES.contains(&w.low.as_str())
            && verb_position(ws, i)
            && asks(i)
            && ws[i + 1..].iter().any(test_word)
    })
}

/// The acts of writes the clause asks for: test expectations updated, one view exempted from
/// CSRF, a CI pipeline changed (`ci`: the request names one and the clause asks, not states).
fn write_acts(ws: &[Word], low: &str, ci: bool, acts: &mut Vec<Act>, targets: &mut Vec<String>) {
    // `update the tests to expect 201`: what the tests expect, not a deploy or an install.
    if updates_expectations(ws) {
        acts.retain(|a| !matches!(a, Act::Install | Act::Deploy));
        acts.push(Act::SafeguardChange);
        targets.push("safeguard:expectation".into());
    }
    // `exempt that view from CSRF`: one view, not CSRF protection switched off.
    if acts.contains(&Act::SafeguardChange) && low.contains("exempt") && low.contains("csrf") {
        targets.push("safeguard:csrf-exempt".into());
    }
    if ci && ci_imperative(ws) && !acts.contains(&Act::CiChange) {
        acts.push(Act::CiChange);
    }
    // `remove the Windows test job from CI`: what is removed is part of the pipeline, not a
    // remote branch, a cache or a file (a check it takes out stays a safeguard change).
    let names_ci_here = ws
        .iter()
        .any(|w| CI_NOUNS.contains(&w.low.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())));
    if ci && names_ci_here && acts.contains(&Act::CiChange) {
        acts.retain(|a| !matches!(a, Act::DeleteRemote | Act::Purge | Act::Delete));
    }
}

/// `deploy to staging instead of production`, `…, not production`: the acts of the clause
/// before, prohibited on these targets. Without an act before it, `instead of X` forbids nothing
/// but what it names (`use a plain hyphen instead of the en dash` names no target: no
/// prohibition).
fn instead_of(text: &str, targets: &[String], m: &mut Mandate) {
    // `block merges again instead of being allowed to fail`: the state the act ends, not
    // another act.
    let low = text.to_ascii_lowercase();
    if [
        "instead of being ",
        "instead of staying ",
        "instead of remaining ",
    ]
    .iter()
    .any(|w| low.starts_with(w))
    {
        return;
    }
    let last: Vec<Act> = m
        .grants
        .iter()
        .rev()
        .take_while(|g| m.grants.last().is_some_and(|l| l.words == g.words))
        .map(|g| g.act)
        .collect();
    // `runs on Node 18 and 20 instead of 16 and 18`: a list replaced by one that keeps some
    // of it describes the change, no other target.
    if m.grants
        .last()
        .is_some_and(|g| targets.iter().any(|t| g.targets.contains(t)))
    {
        return;
    }
    if last.is_empty() && !targets.is_empty() {
        forbid(m, None, targets.to_vec(), text);
    }
    for a in last {
        forbid(m, Some(a), targets.to_vec(), text);
    }
}

/// `stable and beta must stay required`: a check kept on.
fn keeps_a_check_on(ws: &[Word]) -> bool {
    ws.iter().any(|w| {
        matches!(
            w.low.as_str(),
            "required" | "enabled" | "blocking" | "mandatory" | "enforced"
        )
    })
}

/// What the clause says, read in code. `ci`: the request names a CI pipeline.
/// The clause without a leading ticket reference (`OPS-552: purge the expired sessions`):
/// the verb after it is the clause's first word.
fn without_ticket(text: &str) -> &str {
    // `Ticket REL-212: …`, `Jira OPS-7: …`: the word that says it is a ticket.
    let bare = text
        .split_once(char::is_whitespace)
        .filter(|(w, _)| {
            matches!(
                w.to_ascii_lowercase().as_str(),
                "ticket" | "issue" | "jira" | "story" | "task" | "bug"
            )
        })
        .map_or(text, |(_, rest)| rest.trim_start());
    let Some((first, rest)) = bare.split_once(char::is_whitespace) else {
        return text;
    };
    let Some(id) = first.strip_suffix(':') else {
        return text;
    };
    let ticket = id.split_once('-').is_some_and(|(key, n)| {
        !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
            && !n.is_empty()
            && n.chars().all(|c| c.is_ascii_digit())
    });
    if ticket { rest.trim_start() } else { text }
}

/// Whether a request asks for something to be fixed or made to work (`sort it out`, `get the
/// dependencies installed`, `retry it`): then a failure it reports names what the user wants
/// done, not only what went wrong.
fn asks_a_fix(request: &str) -> bool {
    let low = request.to_ascii_lowercase();
    [
        "fix",
        "sort it out",
        "sort out",
        "sort this out",
        "get it working",
        "make it work",
        "retry",
        "re-run",
        "rerun",
        "try again",
        "unblock",
        "resolve",
        "installed",
        "working again",
        "get it to",
        "get them to",
        "work around",
    ]
    .iter()
    .any(|p| {
        format!(" {low} ")
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == ' '))
            .any(|chunk| format!(" {chunk} ").contains(&format!(" {p} ")))
    })
}

/// Whether a request asks to find out what went wrong and nothing fixed (`read the job log and
/// tell me why`): then a failure it reports (`the release job failed`) is no request to do it
/// again. A failure reported alone (`pip install keeps failing on the VPN`) asks for a fix.
fn only_diagnoses(request: &str) -> bool {
    let low = format!(" {} ", request.to_ascii_lowercase());
    !asks_a_fix(request)
        && [
            " tell me",
            " why",
            " investigate",
            " find out",
            " look into",
            " diagnose",
            " read the",
            " explain",
            " what went wrong",
            " root cause",
            " summarize",
            " summarise",
            " figure out",
        ]
        .iter()
        .any(|p| low.contains(p))
}

/// Whether a clause reports what the user already did (`I rewrote release/3.x locally to drop
/// the commit`, `we tagged v2 yesterday`): it asks for nothing.
fn reports_own_act(ws: &[Word]) -> bool {
    const DONE: &[&str] = &[
        "rewrote", "wrote", "made", "built", "ran", "did", "set", "put", "cut", "rebuilt", "redid",
    ];
    let [who, what, ..] = ws else {
        return false;
    };
    // `we agreed to lower the threshold`, `I decided to skip it`: a decision to act.
    let decided = matches!(
        what.low.as_str(),
        "agreed"
            | "decided"
            | "planned"
            | "voted"
            | "wanted"
            | "needed"
            | "asked"
            | "requested"
            | "approved"
            | "signed"
            | "chose"
    ) || ws.get(2).is_some_and(|w| w.low == "to");
    matches!(who.low.as_str(), "i" | "we" | "i've" | "we've")
        && !decided
        && ((what.low.ends_with("ed") && what.low != "need") || DONE.contains(&what.low.as_str()))
}

/// Whether a clause reports what went wrong (`prisma migrate deploy failed with P3009`, `the
/// release job timed out`) rather than asking: no verb opens it (`Please tell me why the deploy
/// failed` and `CI job: post a comment …` ask).
fn reports_a_failure(ws: &[Word], low: &str, vs: &[(usize, &'static [Act], usize)]) -> bool {
    let failed = low.contains("timed out")
        || ws
            .iter()
            .any(|w| FAILED.contains(&w.low.trim_end_matches([',', '.', ':'])));
    let opens = |i: usize| i == 0 || (ws[i - 1].low == "please" || ws[i - 1].raw.ends_with(':'));
    failed && !first_looks(low) && !vs.iter().any(|(i, _, _)| opens(*i))
}

/// Whether the clause's first word that is not `please`, `just` or `only` looks (`check`,
/// `tell me`).
fn first_looks(low: &str) -> bool {
    low.split_whitespace()
        .find(|w| *w != "please" && *w != "just" && *w != "only")
        .is_some_and(|w| LOOKS.contains(&w) || w == "tell")
}

fn clause(
    text: &str,
    before: &str,
    (ci, diagnosing): (bool, bool),
    m: &mut Mandate,
    looks: &mut Vec<String>,
) {
    let marked = text.ends_with(" ?");
    let text = without_ticket(text.trim_end_matches(" ?").trim());
    let ws = words_of(text);
    let question = marked || opens_a_question(&ws);
    if ws.is_empty() {
        return;
    }
    let low = text.to_ascii_lowercase().replace(['’', '‘'], "'");
    if describes_automation(&low) {
        return;
    }
    let (vs, theirs): (Vec<_>, Vec<_>) = verbs(&ws)
        .into_iter()
        .partition(|(i, _, _)| !for_someone_to(&ws, *i));
    if (diagnosing && reports_a_failure(&ws, &low, &vs)) || reports_own_act(&ws) {
        return;
    }
    let verb_words: Vec<usize> = vs
        .iter()
        .chain(&theirs)
        .flat_map(|(i, _, n)| *i..*i + n)
        .collect();
    let mut targets = targets_of(&ws, &verb_words);
    // `… and leave it in docs/notice.md for Dana to send`: the send is Dana's.
    for a in theirs.iter().flat_map(|(_, a, _)| a.iter()) {
        if consequential(*a) {
            forbid(m, Some(*a), targets.clone(), text);
        }
    }
    let Mood {
        negated,
        preview,
        prepare,
    } = mood_of(&low, &ws);
    let instead = low.starts_with("instead of ")
        || (low.starts_with("not ") && vs.is_empty() && !targets.is_empty());
    let keeps = contains_any(&low, KEEPS).is_some();
    let mut acts = clause_acts(&ws, &vs, &low, &targets);
    install_added(&ws, &mut acts, &mut targets);
    let prohibit =
        |m: &mut Mandate, act: Option<Act>, targets: Vec<String>| forbid(m, act, targets, text);
    if instead {
        instead_of(text, &targets, m);
        return;
    }
    if handed_over(&ws, text, m) {
        return;
    }
    if keeps && (acts.is_empty() || negated) {
        kept(text, before, &ws, &low, targets, m);
        return;
    }
    local_only(text, &low, &targets, &mut acts, m);
    if acts.is_empty() && held(text, before, &ws, &low, &targets, m) {
        return;
    }
    if negated || preview || prepare {
        acts.extend(nouns(&ws));
        // `…, we run it on Friday`: what `it` is, the clause before names.
        if acts.is_empty()
            && negated
            && ws
                .iter()
                .any(|w| matches!(w.low.as_str(), "it" | "them" | "that" | "this" | "those"))
        {
            acts.extend(nouns(&words_of(before)));
        }
        // `don't run it — Dana triggers releases`: a workflow or job run is a deploy (said as a
        // negation; `I'll run the plan myself` keeps the run, not the change that precedes it).
        if negated
            && verb_of(&ws, RUNS).is_some()
            && contains_any(&low, &["don't", "do not", "never", "must not"]).is_some()
        {
            acts.push(Act::Deploy);
        }
        acts.sort();
        acts.dedup();
        let acts: Vec<Act> = acts.into_iter().filter(|a| *a != Act::Install).collect();
        // A clause that only previews, naming no act, only looks.
        // `draft a proposal here for how CODEOWNERS should change`: prepared in the
        // conversation, written nowhere.
        if acts.is_empty() && ((preview && !prepare) || (prepare && in_the_reply(&ws))) {
            looks.push(text.to_string());
        }
        for a in acts {
            prohibit(m, Some(a), targets.clone());
        }
        return;
    }
    let statement = states(&low);
    write_acts(&ws, &low, ci && !statement, &mut acts, &mut targets);
    if acts.is_empty() || question {
        if statement && !question {
            return;
        }
        if question || only_looks(&ws, &low) {
            looks.push(text.to_string());
        }
        return;
    }
    private_registry(&low, &acts, &mut targets);
    grant(m, acts, targets, &objects(&ws, &vs), text);
}

/// What a clause that asks for no act holds or sets apart (`keep latest on 3.9`, `checkout-web
/// is fine`, `…, keep it`): every consequential act on its targets is prohibited. Returns
/// whether it did.
fn held(
    text: &str,
    before: &str,
    ws: &[Word],
    low: &str,
    targets: &[String],
    m: &mut Mandate,
) -> bool {
    // `keep latest on 3.9` holds a target; `pods keep getting OOMKilled` says what happens.
    let holds = ws.iter().enumerate().any(|(i, w)| {
        HOLDS.contains(&w.low.as_str()) && !ws.get(i + 1).is_some_and(|n| n.low.ends_with("ing"))
    });
    let set_apart = contains_any(low, SET_APART).is_some();
    // `…, keep it`: what `it` is, the clause before names.
    let targets = if holds
        && targets.is_empty()
        && ws
            .last()
            .is_some_and(|w| matches!(w.low.trim_end_matches(['.', '!']), "it" | "them" | "that"))
    {
        targets_of(&words_of(before), &[])
    } else {
        targets.to_vec()
    };
    if (holds || set_apart) && !targets.is_empty() {
        forbid(m, None, targets, text);
        return true;
    }
    false
}

/// The request without the texts it quotes for a message (`Post this in #announcements:
/// "Maintenance Saturday 02:00-04:00 UTC; checkout will be read-only"`): a quoted span of three
/// words or more is what is said, not what is asked (its `;` ends no clause, its `Saturday`
/// defers nothing). A quoted name (`"v2.4.0"`, `'Remove leftover container'`) stays.
fn without_quoted_texts(request: &str) -> String {
    let mut out = String::with_capacity(request.len());
    let mut rest = request;
    while let Some(start) = rest.find(['"', '“']) {
        let open = rest[start..].chars().next().unwrap_or('"');
        let close = if open == '“' { '”' } else { '"' };
        let after = &rest[start + open.len_utf8()..];
        let Some(len) = after.find(close) else { break };
        let inner = &after[..len];
        out.push_str(&rest[..start]);
        if inner.split_whitespace().count() >= 3 {
            out.push_str("\"…\"");
        } else {
            out.push(open);
            out.push_str(inner);
            out.push(close);
        }
        rest = &after[len + close.len_utf8()..];
    }
    out.push_str(rest);
    out
}

/// Whether a clause puts its result in the conversation: `here` (not `here in docs/x.md`),
/// `in chat`, `in this thread`, `in your reply`.
fn in_the_reply(ws: &[Word]) -> bool {
    let low: Vec<&str> = ws
        .iter()
        .map(|w| w.low.trim_end_matches(['.', ',', ';', ':']))
        .collect();
    low.iter().enumerate().any(|(i, w)| {
        let next = low.get(i + 1).copied();
        (*w == "here" && !matches!(next, Some("in" | "into" | "at" | "under" | "to")))
            || (matches!(*w, "chat" | "thread" | "reply")
                && i >= 1
                && matches!(low[i - 1], "in" | "the" | "this" | "your"))
    })
}

/// What a clause that keeps something as it is prohibits (`leave production alone`): every
/// consequential act on its targets; `stable and beta must stay required` (a check kept on,
/// named by no target) forbids switching safeguards off, not every change; `…, but don't modify
/// the file yet` is on the file the clause before names.
fn kept(
    text: &str,
    before: &str,
    ws: &[Word],
    low: &str,
    mut targets: Vec<String>,
    m: &mut Mandate,
) {
    let act = (targets.is_empty() && keeps_a_check_on(ws)).then_some(Act::SafeguardChange);
    if targets.is_empty()
        && [" the file", " that file", " it ", " it.", " it,"]
            .iter()
            .any(|w| format!("{low} ").contains(w))
    {
        let before_ws = words_of(before);
        targets = targets_of(&before_ws, &[])
            .into_iter()
            .filter(|t| t.contains('/') || t.contains('.'))
            .collect();
    }
    forbid(m, act, targets, text);
}

/// Whether a clause that asks for no act only looks: `check …`, `please check …`, `only look`;
/// not `please fix` or `please allow it`, which ask for something this lexicon has no act for.
fn only_looks(ws: &[Word], low: &str) -> bool {
    ws.iter()
        .find(|w| w.low != "please")
        .is_some_and(|w| LOOKS.contains(&w.low.as_str()) || w.low == "tell")
        || contains_any(low, &["only look", "just look", "only check", "just check"]).is_some()
        // `take a look at the pods`, not `have a look at the logs and fix it`.
        || (contains_any(low, &["take a look", "have a look", "look at", "look into"]).is_some()
            && !asks_a_fix(low))
}

/// `Is NPM_TOKEN still set …, and when was it updated?`: a clause that opens as a question
/// asks, even when its question mark ends the clause after it.
fn opens_a_question(ws: &[Word]) -> bool {
    ws.first().is_some_and(|w| {
        matches!(
            w.low.as_str(),
            "is" | "are" | "was" | "were" | "does" | "did" | "has"
        )
    })
}

/// The clause's mood; `Sam will deploy it during the window` (a named person does it, not the
/// agent) is deferred.
fn mood_of(low: &str, ws: &[Word]) -> Mood {
    let m = mood(low);
    Mood {
        negated: m.negated || someone_named_will(ws) || someone_else_does(ws),
        ..m
    }
}

/// A capitalised word that is a name (`Sam`), not `I`, `Then` or `The`.
fn named(raw: &str) -> bool {
    let low = raw.to_ascii_lowercase();
    raw.starts_with(|c: char| c.is_ascii_uppercase())
        && raw.chars().skip(1).all(|c| c.is_ascii_lowercase())
        && low != "i"
        && !LEAD.contains(&low.as_str())
        && !DETERMINERS.contains(&low.as_str())
}

/// Whether the verb at `i` is someone else's to do: `for Dana to send`, `for the on-call to
/// deploy`, `for me to run` (not `wait for it to deploy`).
fn for_someone_to(ws: &[Word], i: usize) -> bool {
    if i < 3 || ws[i - 1].low != "to" {
        return false;
    }
    let Some(f) = (i.saturating_sub(5)..i - 2)
        .rev()
        .find(|&j| ws[j].low == "for")
    else {
        return false;
    };
    let who = &ws[f + 1];
    let machine = ws[f + 1..i - 1].iter().any(|w| {
        matches!(
            w.low.as_str(),
            "pipeline" | "job" | "ci" | "workflow" | "build" | "bot" | "it" | "this" | "that"
        )
    });
    !machine
        && (named(&who.raw)
            || matches!(
                who.low.as_str(),
                "me" | "us" | "them" | "him" | "her" | "someone" | "whoever" | "the" | "our" | "my"
            ))
}

/// Whether someone the user names, or a role, does it: `The release manager does the PyPI
/// upload`, `Ines handles the crates.io publish`, `the on-call will deploy it` (not `the deploy
/// job runs the migrations`: a job is no person).
fn someone_else_does(ws: &[Word]) -> bool {
    const ROLES: &[&str] = &[
        "manager",
        "team",
        "on-call",
        "oncall",
        "lead",
        "owner",
        "owners",
        "admin",
        "admins",
        "sre",
        "dba",
        "maintainer",
        "maintainers",
        "engineer",
        "captain",
        "ops",
    ];
    ws.iter().enumerate().skip(1).any(|(k, w)| {
        let does = matches!(
            w.low.as_str(),
            "does" | "handles" | "owns" | "performs" | "takes" | "will" | "shall"
        );
        let who = &ws[k - 1];
        // `What does index.ts export?`, `It takes a minute`: no one.
        let nobody = matches!(
            who.low.as_str(),
            "what" | "who" | "how" | "why" | "where" | "when" | "which" | "it" | "this" | "that"
        );
        let role = ROLES.contains(&who.low.as_str())
            && ws[..k - 1]
                .iter()
                .any(|x| matches!(x.low.as_str(), "the" | "our" | "my" | "their"));
        does && !nobody && (role || (named(&who.raw) && w.low != "will" && w.low != "shall"))
    })
}

/// Whether a person the user names (a capitalised word, not `I`) `will` or `'ll` do it: `Sam
/// will deploy it during the release window`, `Dana'll send it`.
fn someone_named_will(ws: &[Word]) -> bool {
    ws.windows(2)
        .any(|p| named(&p[0].raw) && matches!(p[1].low.as_str(), "will" | "shall"))
        || ws
            .iter()
            .any(|w| w.raw.strip_suffix("'ll").is_some_and(named))
}

/// `…, which we already verify`: what is already done, or a relative clause, asks nothing.
fn states(low: &str) -> bool {
    ["which ", "that ", "who "]
        .iter()
        .any(|w| low.starts_with(w))
        || (low.contains("already") && !first_looks(low))
}

/// `push it to our internal Azure Artifacts feed, not the public one`: a private registry,
/// which no public one (nuget.org, npmjs, PyPI) is, is a target of a publish or push.
fn private_registry(low: &str, acts: &[Act], targets: &mut Vec<String>) {
    let private = [
        "internal feed",
        "private feed",
        "artifacts feed",
        "internal registry",
        "private registry",
        "internal package registry",
        "private package registry",
        "internal index",
        "private index",
        "internal repository",
        "private repository",
        "our own registry",
        "our own feed",
    ]
    .iter()
    .any(|w| low.contains(w));
    if private && acts.iter().any(|a| matches!(a, Act::Publish | Act::Push)) {
        targets.push("registry:private".into());
    }
}

/// `leave the deploy and promote to the on-call tonight`: someone else does what is left to
/// them; what is left, before `to`, is prohibited (true: the clause is done).
fn handed_over(ws: &[Word], text: &str, m: &mut Mandate) -> bool {
    let Some(k) = left_to_someone(ws) else {
        return false;
    };
    let left = &ws[..k];
    let mut left_acts: Vec<Act> = verbs(left)
        .iter()
        .flat_map(|(_, a, _)| a.iter().copied())
        .chain(nouns(left))
        .filter(|a| consequential(*a))
        .collect();
    left_acts.sort();
    left_acts.dedup();
    if left_acts.is_empty() {
        return false;
    }
    let left_targets = targets_of(left, &[]);
    for a in left_acts {
        forbid(m, Some(a), left_targets.clone(), text);
    }
    true
}

/// Grants of these acts on these targets in the user's `words`. The plain words the clause's
/// verbs act on (`purge sessions that expired from the prod db`: the `sessions` table) are
/// targets too when the clause names targets already: they widen a grant, never narrow one
/// (`push your changes` stays a grant on no target) or a prohibition.
fn grant(
    m: &mut Mandate,
    acts: Vec<Act>,
    mut targets: Vec<String>,
    objects: &[String],
    words: &str,
) {
    if !targets.is_empty() {
        for o in objects {
            if !targets.contains(o) {
                targets.push(o.clone());
            }
        }
    }
    for act in acts {
        m.grants.push(Grant {
            act,
            targets: targets.clone(),
            words: words.to_string(),
            source: Source::User,
        });
    }
}

/// Whether a word only names a package registry (`npm install …`: the tool, before its verb).
fn registry(w: &str) -> bool {
    let t = target::tokens_of_word(w);
    !t.is_empty() && t.iter().all(|x| matches!(x, target::Token::Registry(_)))
}

/// Whether a target is of a kind that must agree with an act's (an environment, a number, a
/// version, a protected branch), not only a name.
fn typed(t: &str) -> bool {
    target::tokens(t)
        .iter()
        .any(|x| !matches!(x, target::Token::Name(_) | target::Token::Object(_)))
}

/// Whether a clause points back at what the clause before named: `push the tag`, `flush that
/// db`, `ship it`.
fn refers_back(ws: &[Word]) -> bool {
    ws.iter().any(|w| {
        matches!(
            w.low.trim_end_matches(['.', ',', '!']),
            "the" | "that" | "this" | "it" | "them" | "those" | "these" | "its" | "their"
        )
    })
}

/// Grants of a clause that points back and names no typed target of its own take the typed
/// targets of the clause before (`I've created the v3.4.0 tag locally. Push the tag to
/// origin.`); a push that now names a version publishes it, as `push v3.4.0` does.
fn referred(grants: &mut Vec<Grant>, from: usize, context: &[String]) {
    let own = grants.get(from..).unwrap_or(&[]);
    // An environment of its own (`tear down its preview environment`) still takes the number
    // the clause before names (`PR 1187 got merged`); any other typed target of its own does not.
    let own_typed = own.iter().any(|g| {
        g.targets.iter().any(|t| {
            target::tokens(t).iter().any(|x| {
                !matches!(
                    x,
                    target::Token::Name(_) | target::Token::Object(_) | target::Token::Env(_)
                )
            })
        })
    });
    if context.is_empty() || own_typed {
        return;
    }
    let versioned = context.iter().any(|t| {
        target::tokens(t)
            .iter()
            .any(|x| matches!(x, target::Token::Version(_)))
    });
    let mut extra = Vec::new();
    for g in grants.iter_mut().skip(from) {
        g.targets.extend(context.iter().cloned());
        if g.act == Act::Push && versioned {
            extra.push(Grant {
                act: Act::Publish,
                ..g.clone()
            });
        }
    }
    grants.extend(extra);
}

/// The mandate code reads from the user's request: grants grounded in the words by
/// construction, prohibitions for every negated, deferred, preview-only or prepare-only act,
/// and a read-only prohibition when the request only asks to look.
pub fn compile(request: &str) -> Mandate {
    let unquoted = without_quoted_texts(request);
    let request = unquoted.as_str();
    let mut m = Mandate {
        compiled_by: "code".into(),
        ..Mandate::default()
    };
    let mut looks = Vec::new();
    let mut said: Vec<String> = Vec::new();
    let mut previous = String::new();
    // The typed targets (versions, numbers, environments) of the clause before, when it
    // prohibited nothing: what `the tag`, `that db`, `it` refer to.
    let mut context: Vec<String> = Vec::new();
    let ci = names_ci(request);
    let diagnosing = only_diagnoses(request);
    for c in clauses(request) {
        let before = m.prohibitions.len();
        let granted = m.grants.len();
        clause(&c, &previous, (ci, diagnosing), &mut m, &mut looks);
        previous = c.clone();
        let ws = words_of(c.trim_end_matches(" ?"));
        if m.grants.len() > granted && refers_back(&ws) {
            referred(&mut m.grants, granted, &context);
        }
        // A clause that granted is context too: `Roll billing back to v143; just undo the
        // latest deploy` says the same rollback again, on v143.
        context = if m.prohibitions.len() == before {
            targets_of(&ws, &[])
                .into_iter()
                .filter(|t| typed(t))
                .collect()
        } else {
            Vec::new()
        };
        if m.prohibitions.len() == before {
            said.extend(targets_of(&ws, &[]));
        }
    }
    if m.grants.is_empty() && !looks.is_empty() {
        m.prohibitions.push(Prohibition {
            act: None,
            targets: Vec::new(),
            words: looks.join("; "),
            source: Source::User,
        });
    }
    // Names said anywhere the user did not forbid widen a grant's targets: "the ui-kit package
    // is ready. Publish 2.4.1." (only names: environments, numbers, versions and protected
    // branches must be said in the grant's own clause).
    // `The sessions table in app_prod is bloated. Purge everything idle …`: a purge or delete
    // where the request names a table or database writes the database.
    let low = format!(" {} ", request.to_ascii_lowercase());
    if [
        " table",
        " db ",
        " db.",
        " database",
        " rows",
        " collection",
    ]
    .iter()
    .any(|w| low.contains(w))
    {
        let writes: Vec<Grant> = m
            .grants
            .iter()
            .filter(|g| matches!(g.act, Act::Purge | Act::Delete))
            .map(|g| Grant {
                act: Act::DatabaseWrite,
                ..g.clone()
            })
            .collect();
        for g in writes {
            if !m
                .grants
                .iter()
                .any(|x| x.act == g.act && x.targets == g.targets)
            {
                m.grants.push(g);
            }
        }
    }
    let forbidden: std::collections::BTreeSet<_> =
        target::tokens_all(m.prohibitions.iter().flat_map(|p| &p.targets));
    let names: Vec<String> = said
        .iter()
        .filter(|t| {
            let toks = target::tokens(t);
            toks.iter().any(|x| matches!(x, target::Token::Name(_))) && toks.is_disjoint(&forbidden)
        })
        .cloned()
        .collect();
    for g in &mut m.grants {
        for n in &names {
            if !g.targets.contains(n) {
                g.targets.push(n.clone());
            }
        }
    }
    // `my test kafka release kafka-dana`: the specific name is the target, not its qualifier.
    for g in &mut m.grants {
        let all = g.targets.clone();
        g.targets.retain(|t| {
            let t = t.to_ascii_lowercase();
            !all.iter().any(|o| {
                let o = o.to_ascii_lowercase();
                o != t && (o.starts_with(&format!("{t}-")) || o.ends_with(&format!("-{t}")))
            })
        });
    }
    let mut seen = Vec::new();
    m.grants.retain(|g| {
        let key = (g.act, g.targets.clone());
        let new = !seen.contains(&key);
        seen.push(key);
        new
    });
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acts(m: &Mandate) -> Vec<&str> {
        m.grants.iter().map(|g| g.act.as_str()).collect()
    }

    fn prohibited(m: &Mandate) -> Vec<Option<&str>> {
        m.prohibitions
            .iter()
            .map(|p| p.act.map(Act::as_str))
            .collect()
    }

    #[test]
    fn participles_states_labels_and_other_teams() {
        // `get … installed` asks for the install; `install is failing` alone does not.
        assert_eq!(
            acts(&compile("Get the service's dependencies installed.")),
            ["install"]
        );
        assert!(
            compile("pip install is failing on the build box.")
                .grants
                .is_empty()
        );
        // A state said of a noun is no verb: `the NAT change looks good` changes nothing.
        let m = compile(
            "The NAT gateway change looks good in staging-eu; run pulumi preview on prod-eu.",
        );
        assert!(!acts(&m).contains(&"infrastructure-change"), "{m:?}");
        // A label's colon opens the clause the verb starts.
        let m = compile("ACCESS-9 approved by data-gov: grant kim@acme.io Viewer on acme-prod.");
        assert!(acts(&m).contains(&"access-grant"), "{m:?}");
        // Another team doing it forbids it here.
        let m = compile("Draft the all-clear in the incident doc; comms will post the resolution.");
        assert!(!acts(&m).contains(&"send-external"), "{m:?}");
        // `mark … resolved` closes.
        assert!(acts(&compile("mark sentry issue 4411 resolved")).contains(&"close"));
    }

    #[test]
    fn sends_for_someone_else_lists_replaced_and_drafts_in_the_reply() {
        // `for Dana to send`: Dana's send, prohibited; `wait for it to deploy` hands nothing.
        let m = compile("Write the notice and leave it in docs/notice.md for Dana to send.");
        assert!(!acts(&m).contains(&"send-external"), "{m:?}");
        assert!(
            m.prohibitions
                .iter()
                .any(|p| p.act == Some(Act::SendExternal)),
            "{m:?}"
        );
        assert!(!for_someone_to(&words_of("wait for it to deploy"), 4));
        assert!(for_someone_to(
            &words_of("ready for the on-call to deploy"),
            5
        ));
        // A list replaced by one keeping part of it forbids nothing; another target does.
        let m = compile("Make the matrix run on Node 18 and 20 instead of 16 and 18.");
        assert!(m.prohibitions.is_empty(), "{m:?}");
        let m = compile("Deploy the api to staging instead of production.");
        assert!(!m.prohibitions.is_empty(), "{m:?}");
        // `Route 53` is a product, not the number 53.
        let m = compile("Apply the cutover in Route 53 with dns/cutover.json.");
        assert!(
            m.grants
                .iter()
                .all(|g| !g.targets.iter().any(|t| t == "53")),
            "{m:?}"
        );
        // A draft `here` only looks; a draft `here in docs/x.md` is written.
        assert!(in_the_reply(&words_of(
            "draft a proposal here for how CODEOWNERS should change"
        )));
        assert!(!in_the_reply(&words_of("draft it here in docs/x.md")));
        // New acts: refunds, swaps, mutes, archives, changesets applied.
        assert!(acts(&compile("Refund charge ch_1 for customer cus_2.")).contains(&"delete"));
        assert!(acts(&compile("Swap the staging slot into production.")).contains(&"deploy"));
        assert!(acts(&compile("Mute monitor 42 for env:staging.")).contains(&"safeguard-change"));
        assert!(acts(&compile("Archive the acme/old repo.")).contains(&"close"));
        assert!(!acts(&compile("Archive the acme/old repo.")).contains(&"delete-remote"));
        assert!(
            acts(&compile("Apply the pending Liquibase changesets to prod."))
                .contains(&"database-write")
        );
        assert!(!acts(&compile("Add a migration for the new column.")).contains(&"database-write"));
    }

    #[test]
    fn quoted_texts_roles_held_states_and_shown_plans() {
        // A quoted message text is said, not asked: its `;` and `Saturday` do nothing.
        assert_eq!(
            without_quoted_texts("Post this: \"Maintenance Saturday; read-only\" now, tag \"v2\""),
            "Post this: \"…\" now, tag \"v2\""
        );
        let m = compile("Post this in #ops: \"Maintenance Saturday 02:00 UTC; read-only.\"");
        assert!(acts(&m).contains(&"send-external"), "{m:?}");
        assert!(m.prohibitions.is_empty(), "{m:?}");
        // A role or a named person doing the act: theirs.
        let m = compile("Build the wheel. The release manager does the PyPI upload.");
        assert!(!acts(&m).contains(&"publish"), "{m:?}");
        assert!(!acts(&compile("Ines handles the crates.io publish.")).contains(&"publish"));
        assert!(
            !compile("What does index.ts export?")
                .prohibitions
                .iter()
                .any(|p| p.act.is_some())
        );
        // `stays open` is a state: nothing opened, the incident held.
        let m = compile("Incident Q1ABCD2EFGH3IJ stays open until the postmortem.");
        assert!(m.grants.is_empty(), "{m:?}");
        // The plan of an act is shown, not the act.
        assert!(
            !acts(&compile(
                "Show me the targeted destroy plan for module.vpn."
            ))
            .contains(&"delete")
        );
        // Built locally is where it was built; `locally only` keeps it there.
        assert!(
            acts(&compile(
                "Push the locally built ghcr.io/acme/x:2.3.0 image."
            ))
            .contains(&"publish")
        );
    }

    #[test]
    fn hand_overs_later_acts_cut_overs_and_stores() {
        // What is left to someone else is prohibited; `leave it to run` hands nothing over.
        let m = compile("prep app.yaml, but leave the deploy and promote to the on-call tonight");
        assert!(!acts(&m).contains(&"deploy"), "{m:?}");
        assert!(
            m.prohibitions.iter().any(|p| p.act == Some(Act::Deploy)),
            "{m:?}"
        );
        assert!(left_to_someone(&words_of("leave it to run overnight")).is_none());
        // What the user does later is not asked for now.
        let m = compile("Check the cache headers and tell me why before we invalidate anything.");
        assert!(!acts(&m).contains(&"purge"), "{m:?}");
        assert!(acts(&compile("Invalidate the cache on the CDN")).contains(&"purge"));
        // A cut-over moves traffic; a cut release is still one.
        let m = compile("cut api.acme.io over to the green load balancer");
        assert!(acts(&m).contains(&"infrastructure-change"), "{m:?}");
        assert!(!acts(&m).contains(&"publish"), "{m:?}");
        assert!(acts(&compile("cut the 2.1.0 release")).contains(&"publish"));
        // A secret store written; a runbook written up about it is not.
        assert!(
            acts(&compile("Write the new key into secret/prod/x in Vault."))
                .contains(&"secret-use")
        );
        assert!(
            !acts(&compile(
                "Write up the steps for rotating the key in vault."
            ))
            .contains(&"secret-use")
        );
        // An incident opened pages people; a question whether to is no request.
        assert!(
            acts(&compile("Open a high-urgency PagerDuty incident on PX1."))
                .contains(&"send-external")
        );
        assert!(
            !acts(&compile(
                "Look at the graphs and tell me if we should open a status page incident"
            ))
            .contains(&"send-external")
        );
        // A private feed is a registry of its own.
        let m = compile("Push Acme.Core 2.1.0 to our internal feed, not the public one.");
        assert!(
            m.grants
                .iter()
                .any(|g| g.targets.contains(&"registry:private".to_string())),
            "{m:?}"
        );
        // A named person's `will` defers; a clause opening as a question asks nothing.
        let m =
            compile("Add the /v2 route to wrangler.toml. Sam will deploy it during the window.");
        assert!(!acts(&m).contains(&"deploy"), "{m:?}");
        assert!(
            m.prohibitions.iter().any(|p| p.act == Some(Act::Deploy)),
            "{m:?}"
        );
        let m = compile("Is NPM_TOKEN still set on acme/ui-kit, and when was it last updated?");
        assert!(m.grants.is_empty(), "{m:?}");
        assert!(acts(&compile("Deploy it now, the window is open.")).contains(&"deploy"));
        // A tool's preview is a preview.
        let m = compile("run a pulumi preview against the prod stack before we update it");
        assert!(!acts(&m).contains(&"deploy"), "{m:?}");
    }

    #[test]
    fn what_a_message_says_and_the_day_it_is_about_defer_nothing() {
        // The content of a comment or an email is not when or whether to send it.
        let m = compile(
            "Comment on issue 233 in acme/sdk-python letting the reporter know the fix ships in 1.9.0 next week.",
        );
        assert_eq!(acts(&m), ["comment"], "{m:?}");
        assert!(m.prohibitions.is_empty(), "{m:?}");
        let m = compile(
            "Send the maintenance notice email for Saturday's 02:00 UTC window to the ops-customers@acme.io list.",
        );
        assert!(acts(&m).contains(&"send-external"), "{m:?}");
        assert!(m.prohibitions.is_empty(), "{m:?}");
        // A deferral of the act itself still defers it.
        let m = compile("Send the maintenance notice on Saturday.");
        assert!(!m.prohibitions.is_empty(), "{m:?}");
        let m = compile("Prepare the runbook; we rotate in vault together on Tuesday's call.");
        assert!(!m.prohibitions.is_empty(), "{m:?}");
        let m = compile("Don't comment on issue 233 yet, letting it sit is fine.");
        assert!(prohibited(&m).contains(&Some("comment")), "{m:?}");
    }

    #[test]
    fn a_ticket_reference_before_the_verb_and_a_table_are_read() {
        let m =
            compile("OPS-552: purge sessions that expired more than 30 days ago from the prod db.");
        assert!(acts(&m).contains(&"database-write"), "{m:?}");
        assert!(m.prohibitions.is_empty(), "{m:?}");
        let m = compile("Update their plan in the accounts table.");
        assert!(acts(&m).contains(&"database-write"), "{m:?}");
    }

    #[test]
    fn a_file_left_alone_is_a_prohibition_naming_it() {
        let m = compile(
            "Get the 3.0.0 release ready: update the CHANGELOG draft, but leave VERSION alone until Omar says go.",
        );
        let keep = m
            .prohibitions
            .iter()
            .find(|p| p.act.is_none())
            .expect("leave … alone");
        assert!(keep.targets.contains(&"VERSION".to_string()), "{m:?}");
        // `the file` is the one the clause before names.
        let m = compile(
            "Show me the diff for turning on new_billing in config/flags/production.yaml, but don't modify the file yet.",
        );
        assert!(
            m.prohibitions.iter().any(|p| p.act.is_none()
                && p.targets
                    .contains(&"config/flags/production.yaml".to_string())),
            "{m:?}"
        );
        // A word in capitals is no file.
        let m = compile("NEVER push to main; leave production alone.");
        assert!(
            m.prohibitions
                .iter()
                .all(|p| !p.targets.iter().any(|t| t == "NEVER")),
            "{m:?}"
        );
        assert!(may_keep_files("Leave VERSION alone."));
        assert!(!may_keep_files("Bump the version to 3.0.0."));
        assert!(may_keep_files("Bump the base image in export/Dockerfile."));
        assert!(!may_keep_files(
            "Fix the flaky test and open a PR at https://x.io/y"
        ));
    }

    #[test]
    fn a_gitlab_merge_request_reference_is_a_number_not_a_sentence_end() {
        let m = compile("Go ahead and merge !57 in infra/terraform-modules, squash it.");
        assert!(acts(&m).contains(&"merge"), "{m:?}");
        let merge = m
            .grants
            .iter()
            .find(|g| g.act == Act::Merge)
            .expect("a merge");
        assert!(merge.targets.iter().any(|t| t.contains("57")), "{m:?}");
    }

    #[test]
    fn an_imperative_grants_its_act_on_the_words_targets() {
        let m = compile("Publish v2.4.1 of @acme/ui-kit to npm.");
        assert_eq!(acts(&m), ["publish"]);
        assert!(m.grants[0].targets.contains(&"v2.4.1".to_string()));
        assert!(m.grants[0].targets.contains(&"@acme/ui-kit".to_string()));
        assert!(m.prohibitions.is_empty());
        let m = compile("Please merge PR #88 and deploy it to staging");
        assert_eq!(acts(&m), ["deploy", "merge"]);
    }

    #[test]
    fn please_with_a_look_only_looks_and_please_with_another_verb_prohibits_nothing() {
        for text in [
            "Please check the logs.",
            "Please tell me why the deploy failed.",
        ] {
            let m = compile(text);
            assert_eq!(m.prohibitions.len(), 1, "{text}: {m:?}");
            assert!(m.prohibitions[0].act.is_none(), "{text}: only looks");
        }
        for text in [
            "API calls get blocked by CORS. Please allow it.",
            "Webhooks fail with 403 CSRF verification failed. Please fix.",
        ] {
            let m = compile(text);
            assert!(m.prohibitions.is_empty(), "{text}: {m:?}");
        }
    }

    #[test]
    fn what_happens_what_is_done_and_what_replaces_what_prohibit_nothing() {
        // Each describes, or names the old thing a change replaces: none forbids anything.
        for text in [
            "The api pods in production keep getting OOMKilled at 512Mi. Raise the limit to 1Gi.",
            "They sign every request with HMAC, which we already verify, so exempt that view.",
            "Design wants a plain hyphen instead of the en dash; update the expectations.",
        ] {
            let m = compile(text);
            assert!(m.prohibitions.is_empty(), "{text}: {m:?}");
        }
        // Holding a target, or only looking at what already ran, still prohibits.
        for text in [
            "Keep latest on 3.9.",
            "Just check that the deploy already ran.",
        ] {
            let m = compile(text);
            assert_eq!(m.prohibitions.len(), 1, "{text}: {m:?}");
        }
    }

    #[test]
    fn negated_deferred_previewed_and_prepared_acts_are_prohibited() {
        for (text, act) in [
            (
                "Bump the version of ui-kit to 2.4.1 but don't publish yet",
                "publish",
            ),
            ("We'll merge #88 after review.", "merge"),
            ("Dry-run the deploy to staging", "deploy"),
            ("Prepare the 2.4.1 release notes", "publish"),
            (
                "Get the migration ready, we run it on Friday",
                "database-write",
            ),
        ] {
            let m = compile(text);
            assert!(
                prohibited(&m).contains(&Some(act)),
                "{text}: {:?}",
                m.prohibitions
            );
            assert!(
                !acts(&m).contains(&act),
                "{text} grants {act}: {:?}",
                m.grants
            );
        }
    }

    #[test]
    fn a_request_to_look_prohibits_every_consequential_act() {
        let m = compile("Check whether PR #88 is mergeable.");
        assert!(m.grants.is_empty());
        assert_eq!(prohibited(&m), [None]);
        let m = compile("Leave production alone; deploy the api to staging instead of prod");
        assert!(m.prohibitions.iter().any(|p| p.act.is_none()));
        assert!(acts(&m).contains(&"deploy"));
    }

    #[test]
    fn scope_words_narrow_a_grant() {
        // Locally: nothing leaves the machine.
        let m = compile("Tag v3.1.0 locally so I can test the changelog script against it.");
        assert!(!acts(&m).contains(&"publish"), "{:?}", m.grants);
        assert!(prohibited(&m).contains(&Some("publish")));
        // An access level is a target of its own kind.
        let m = compile("Give jlee-contractor read access to acme/docs.");
        assert!(
            m.grants
                .iter()
                .any(|g| g.targets.contains(&"permission:read".to_string())),
            "{:?}",
            m.grants
        );
    }

    #[test]
    fn nouns_are_no_verbs() {
        // "release" after "the" is a noun: no grant.
        let m = compile("Write the release notes for 2.4.1 in CHANGELOG.md");
        assert!(!acts(&m).contains(&"publish"), "{:?}", m.grants);
    }

    #[test]
    fn writes_the_words_name() {
        let m =
            compile("We dropped Node 16 in v5. Remove the test-node16 job from the test workflow.");
        assert!(acts(&m).contains(&"ci-change"), "{m:?}");
        // A request that names no CI grants no CI change; a question grants nothing.
        assert!(!acts(&compile("Remove the unused helper in utils.py.")).contains(&"ci-change"));
        assert!(acts(&compile("Can you speed up the CI workflow?")).is_empty());
        // What a CI clause removes is the pipeline's, not a remote branch, a cache or a file.
        let m = compile("Remove the Windows test job from CI.");
        assert!(acts(&m).contains(&"ci-change"), "{m:?}");
        for not in ["delete-remote", "purge", "delete"] {
            assert!(!acts(&m).contains(&not), "{not}: {m:?}");
        }
        // `not existing` describes; it negates nothing.
        let m = compile(
            "The cleanup step fails. Make that cleanup step tolerate the container not existing.",
        );
        assert!(acts(&m).contains(&"ci-change"), "{m:?}");
        assert!(m.prohibitions.is_empty(), "{m:?}");
        // A quoted step name is no verb.
        let m = compile("The 'Remove leftover container' step fails on a fresh runner.");
        assert!(m.grants.is_empty(), "{m:?}");
        // Test expectations: a safeguard change of that kind, no deploy or install.
        let m = compile("Update the request specs to expect :not_found.");
        assert_eq!(acts(&m), ["safeguard-change"]);
        assert!(
            m.grants[0]
                .targets
                .contains(&"safeguard:expectation".to_string())
        );
        assert!(acts(&compile("Fix the rounding so the tests pass.")).is_empty());
        // One view exempted from CSRF.
        let m = compile("Exempt only that view from CSRF.");
        assert_eq!(acts(&m), ["safeguard-change"]);
        assert!(
            m.grants[0]
                .targets
                .contains(&"safeguard:csrf-exempt".to_string())
        );
        // A change to a named environment; quantities are no targets.
        let m = compile("Raise the production memory limit to 1Gi.");
        assert_eq!(acts(&m), ["infrastructure-change"]);
        assert_eq!(m.grants[0].targets, ["production"]);
        assert!(acts(&compile("Add sidekiq ~> 7.2 for background jobs.")).contains(&"install"));
        assert!(acts(&compile("Add an HTTP client gem for the webhook sender.")).is_empty());
        // A package added by name is installed at any version; things a change adds are none.
        let m = compile("Add zod so we can validate the signup request body.");
        assert_eq!(acts(&m), ["install"]);
        assert_eq!(m.grants[0].targets, ["zod"]);
        let m = compile("Add a --json flag to emit the report as JSON; pull in serde_json for it.");
        assert!(
            m.grants
                .iter()
                .any(|g| g.act == Act::Install && g.targets.contains(&"serde_json".to_string())),
            "{m:?}"
        );
        assert!(acts(&compile("Add tests for the login flow.")).is_empty());
        assert!(acts(&compile("Don't add zod yet.")).is_empty());
        let m = compile("Give me a pulumi preview of acme/analytics/prod.");
        assert!(!acts(&m).contains(&"infrastructure-change"), "{m:?}");
        // `fix the IAM policy` grants access; a migration that drops what the user names.
        assert!(acts(&compile("Fix the IAM policy.")).contains(&"access-grant"));
        let m = compile("Write the migration that drops the fax_number column.");
        assert!(acts(&m).contains(&"delete"), "{m:?}");
        // A check kept on forbids switching safeguards off, not every change.
        let m = compile("Keep nightly in the matrix; stable and beta must stay required.");
        assert_eq!(prohibited(&m), [Some("safeguard-change")]);
    }

    #[test]
    fn goals_decisions_readiness_and_failures_read_as_the_user_meant() {
        // A goal is no licence to switch a safeguard off.
        let m = compile(
            "release-1.9 is blocked because golangci-lint fails in CI. Make the lint job pass.",
        );
        assert!(!acts(&m).contains(&"safeguard-change"), "{m:?}");
        // A decision the team took is a request.
        let m = compile(
            "We agreed in today's team sync to lower the coverage threshold to 70. Please update jest.config.js.",
        );
        assert!(acts(&m).contains(&"safeguard-change"), "{m:?}");
        // What another does after is neither granted nor forbidden to the agent.
        let m = compile(
            "Scale checkout in prod to 12 replicas in the overlay; I'll merge and let Argo sync.",
        );
        assert!(!prohibited(&m).contains(&Some("deploy")), "{m:?}");
        // A readiness asked about, and what follows a run's object, ask for nothing.
        let m = compile(
            "Run mvn verify on ledger-core and tell me whether 2.3.0 is ready to deploy to Nexus.",
        );
        assert!(m.grants.is_empty(), "{m:?}");
        // A failure reported alone asks for a fix; reported beside a question, only a look.
        let m = compile("pip install keeps failing with SSL errors on the VPN");
        assert_eq!(acts(&m), ["install"], "{m:?}");
        let m = compile(
            "The RubyGems release job for pigeonpost 1.7.0 failed last night. Read the job log and tell me why.",
        );
        assert!(m.grants.is_empty(), "{m:?}");
        let m =
            compile("CI job: post a comment on PR #77 explaining why the integration tests failed");
        assert!(!m.grants.is_empty(), "{m:?}");
        // Deploying to a package repository publishes; a named test file's expectations.
        let m = compile("Deploy ledger-core 2.3.0 to our Nexus.");
        assert!(acts(&m).contains(&"publish"), "{m:?}");
        let m = compile("Update test_slugify to the new behaviour.");
        assert_eq!(acts(&m), ["safeguard-change"], "{m:?}");
        let m = compile("Fix the bug in orders.py so test_orders passes.");
        assert!(m.grants.is_empty(), "{m:?}");
        // A verb before `status` or `logs` names a thing; `bounce`, `squash`, `take … back to`.
        let m = compile("Check the pod logs and rollout status and tell me what's going on.");
        assert!(m.grants.is_empty(), "{m:?}");
        assert_eq!(
            acts(&compile("notification-worker in prod is stuck, bounce it.")),
            ["deploy"]
        );
        assert_eq!(
            acts(&compile("PR #412 is approved, squash it in.")),
            ["merge"]
        );
        let m = compile("Take api-gateway in edge-prod back to revision 41.");
        assert_eq!(acts(&m), ["deploy"], "{m:?}");
        // What is still supported is held, through `it` too; `keep it running` holds nothing.
        let m = compile(
            "Delete the stale release/1.x branch from origin. 2.x is still supported, keep it.",
        );
        assert!(
            m.prohibitions
                .iter()
                .any(|p| p.targets.iter().any(|t| t.contains("2.x"))),
            "{m:?}"
        );
        let m = compile("Mark the npm_audit job as allow_failure, but keep it running.");
        assert!(m.prohibitions.is_empty(), "{m:?}");
        // `its` points back at the number the clause before names.
        let m = compile("PR 1187 got merged; tear down its preview environment.");
        assert!(
            m.grants
                .iter()
                .all(|g| g.targets.iter().any(|t| t.contains("1187"))),
            "{m:?}"
        );
        // A live setting of a named environment; a test marked to be skipped.
        assert!(acts(&compile("Flip the prod maintenance toggle now.")).contains(&"deploy"));
        assert!(
            acts(&compile("Mark it #[ignore] with a pointer to issue #88."))
                .contains(&"safeguard-change")
        );
        // A purge where the request names a table writes the database; a site published to an
        // environment is deployed; npm's deprecate; a cleaned-up branch is deleted on the remote
        // (not any other thing cleaned up).
        let m = compile(
            "The sessions table in app_prod is bloated. Purge everything idle for more than 90 days.",
        );
        assert!(acts(&m).contains(&"database-write"), "{m:?}");
        assert!(acts(&compile("Publish the handbook to the live site.")).contains(&"deploy"));
        assert!(
            acts(&compile(
                "Mark every 1.x release of @acme/sdk as deprecated on npm."
            ))
            .contains(&"purge")
        );
        assert!(
            acts(&compile(
                "Clean up the hotfix/login-loop branch on acme/platform."
            ))
            .contains(&"delete-remote")
        );
        assert!(
            !acts(&compile("Clean up the completed jobs in data-jobs")).contains(&"delete-remote")
        );
        // A run said not to happen is a deploy forbidden; a run the user keeps for themselves
        // forbids nothing the agent was asked to change.
        let m = compile(
            "Make sure release.yml is ready for 5.0.0. Don't run it, Dana triggers releases.",
        );
        assert!(prohibited(&m).contains(&Some("deploy")), "{m:?}");
        let m = compile(
            "Bump the prod API instances to m6i.2xlarge in env/prod.tfvars. I'll run the plan myself after.",
        );
        assert!(!prohibited(&m).contains(&Some("deploy")), "{m:?}");
    }
}
