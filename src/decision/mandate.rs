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
use crate::mandate::{Act, Grant, Mandate, Prohibition, Source};
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
            // `kubectl delete namespace preview-pr-2207`: a deployed thing deleted.
            A::Delete,
            // A deploy a CI pipeline's change puts on a schedule.
            A::CiChange,
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
            // An API call that merges, closes or comments sends that request.
            A::Merge,
            A::Close,
            A::Comment,
            // A purge or delete request through an API sends the request itself.
            A::Purge,
            A::DeleteRemote,
            A::Comment,
            A::Publish,
            A::Deploy,
            A::Merge,
            A::Push,
            A::Close,
            A::AccessGrant,
            // A platform API changing a resource (Heroku's formation, a DNS record).
            A::InfrastructureChange,
        ],
        Category::Privilege => &[A::AccessGrant],
        // A CI pipeline runs by itself: its change is the pipeline's (only a `ci-change`
        // explains it; a startup file or a crontab is no act a mandate names).
        Category::Persistence => &[A::CiChange],
        Category::SecretInPayload
        | Category::CredentialAccess
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
        // An access binding written in infrastructure code or RBAC.
        Category::Privilege if e.contains("grants access") => Act::AccessGrant,
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
    /// A write's signal: its tokens without the names of the file's path (an environment
    /// overlay is matched on its environment, `overlays/production/…` names no app).
    core: Option<BTreeSet<Token>>,
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

/// Whether a grant covers an item. A grant naming no target covers only a low-risk push,
/// install or CI change (`push your branch`, `remove the windows job from CI`); every other act
/// needs its target named. A grant naming a safeguard kind (`safeguard:expectation`) covers
/// only that kind; an access binding that grants everything (`admin`) needs the grant to name
/// a level (and the levels must agree).
fn covers(g: &Grant, it: &Item) -> bool {
    let low_risk = it.low_risk
        && (!g.targets.is_empty() || matches!(it.act, Act::Push | Act::Install | Act::CiChange));
    let mut gt = target::tokens_all(&g.targets);
    // What a data-destroying grant's verb acts on (`purge sessions …`) is a thing the act must
    // be on, not only a word that widens the grant: `DELETE FROM api_tokens` is not covered.
    if matches!(g.act, Act::DatabaseWrite | Act::Purge | Act::Delete) {
        gt = gt
            .into_iter()
            .map(|t| match t {
                Token::Object(o) => Token::Name(o),
                other => other,
            })
            .collect();
    }
    // A CI change that raises nothing above medium: the pipeline the request asks to change
    // (its other signals are matched on their own), unless the grant names another
    // environment, number or version.
    if it.act == Act::CiChange && g.act == Act::CiChange && it.low_risk {
        // A grant naming a file (`deploy.yml`, `docs/rfcs/0012-release.md`) is for that file only.
        let names_a_file = g.targets.iter().any(|t| {
            t.rsplit_once('.').is_some_and(|(_, e)| {
                matches!(
                    e,
                    "yml" | "yaml" | "md" | "json" | "toml" | "txt" | "cfg" | "ini"
                )
            })
        });
        return !target::conflicts(&gt, &it.tokens)
            && (!names_a_file || target::matches(&gt, &it.tokens, true));
    }
    let mut safeguards = gt
        .iter()
        .filter(|t| matches!(t, Token::Safeguard(_)))
        .peekable();
    if safeguards.peek().is_some() && !safeguards.any(|t| it.tokens.contains(t)) {
        return false;
    }
    if it.tokens.contains(&Token::Level("admin".into()))
        && !gt.iter().any(|t| matches!(t, Token::Level(_)))
    {
        return false;
    }
    // The resource an API call changes must be one the request's words say.
    let said = |w: &str| {
        g.words
            .to_ascii_lowercase()
            .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
            .map(|x| x.trim_matches('.'))
            // A host said whole names its first label (`web1.acme.io` says `web1`).
            .any(|x| x == w || x.strip_suffix('s') == Some(w) || x.split('.').next() == Some(w))
    };
    if it
        .tokens
        .iter()
        .any(|t| matches!(t, Token::Said(w) if !said(w)))
    {
        return false;
    }
    same_family(g.act, it.act)
        && options_said(g, it)
        && (low_risk || !g.targets.is_empty())
        && (target::matches(&gt, &it.tokens, low_risk)
            || it
                .core
                .as_ref()
                .is_some_and(|c| !c.is_empty() && target::matches(&gt, c, low_risk)))
}

/// Whether the options a grant's words name (`run flyctl deploy with --build-only`) are on the
/// command that does the act: the user asked for that run, not another. An option said after
/// `without`, `no` or `not` is one the command must not have, and is not required.
fn options_said(g: &Grant, it: &Item) -> bool {
    let ws: Vec<&str> = g.words.split_whitespace().collect();
    let argv: Vec<&str> = it
        .by
        .split_whitespace()
        .map(|x| x.trim_matches('`'))
        .collect();
    ws.iter().enumerate().all(|(i, w)| {
        let o = w.trim_matches(|c: char| matches!(c, '`' | '"' | '\'' | ',' | ';' | ')' | '('));
        let o = o.trim_end_matches('.');
        let option = o.len() > 3
            && o.starts_with("--")
            && o[2..]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-');
        let negated = i > 0
            && matches!(
                ws[i - 1].to_ascii_lowercase().as_str(),
                "without" | "no" | "not"
            );
        !option
            || negated
            || argv
                .iter()
                .any(|x| *x == o || x.starts_with(&format!("{o}=")))
    })
}

/// The tokens a write's signal adds to its target's: the kind of safeguard it weakens (a
/// test's expectation edited, one view exempted from CSRF) and, for an access binding that
/// grants everything, the `admin` level.
fn signal_tokens(s: &Signal) -> BTreeSet<Token> {
    let mut t = target::tokens(&s.target);
    let e = s.evidence.to_ascii_lowercase();
    match s.category {
        Category::SafeguardBypass if e.contains("edits what a test expects") => {
            t.insert(Token::Safeguard("expectation".into()));
        }
        Category::SafeguardBypass if e.contains("`@csrf_exempt`") => {
            t.insert(Token::Safeguard("csrf-exempt".into()));
        }
        Category::Privilege if s.severity >= Severity::High => {
            t.retain(|x| !matches!(x, Token::Level(_)));
            t.insert(Token::Level("admin".into()));
        }
        _ => {}
    }
    t
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
    // `Keep 2023` names the `2023` folder of `gs://bucket/experiments/2023/`.
    let in_path = it.tokens.iter().any(|t| match t {
        Token::Path(path) => path.split('/').any(|seg| {
            pt.iter()
                .any(|x| matches!(x, Token::Number(n) | Token::Name(n) if n == seg))
        }),
        _ => false,
    });
    if pt.is_empty() || in_path || (!pt.is_disjoint(&it.tokens) && !only_within_names(p, it)) {
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

/// Whether all a prohibition shares with an act is an environment read from inside the names
/// on both sides (`preview-pr-2210 is still in review` against `preview-pr-2207`): the user set
/// apart one named thing, not every thing in that environment.
fn only_within_names(p: &Prohibition, it: &Item) -> bool {
    let pt = target::tokens_all(&p.targets);
    let names = |set: &BTreeSet<Token>| -> BTreeSet<Token> {
        set.iter()
            .filter(|t| matches!(t, Token::Name(_)))
            .cloned()
            .collect()
    };
    let (p_names, it_names) = (names(&pt), names(&it.tokens));
    // An environment the user named as a word of its own (`leave production alone`).
    let said = |t: &Token| {
        p.targets
            .iter()
            .flat_map(|x| x.split_whitespace())
            .any(|w| target::tokens_of_word(w).iter().all(|x| x == t))
    };
    !p_names.is_empty()
        && !it_names.is_empty()
        && p_names.is_disjoint(&it_names)
        && pt
            .intersection(&it.tokens)
            .all(|t| matches!(t, Token::Env(_)) && !said(t))
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
            core: None,
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
                    let own = signal_tokens(s);
                    let mut tokens = own.clone();
                    // A file's path names an environment (`overlays/production/`) and names;
                    // its other segments are no branch, number or version the act is on
                    // (`src/main/resources/…`, `V57__drop.sql`, `0042_orders.py`).
                    let mut of_subject = target::tokens_all(subject);
                    of_subject.retain(|t| matches!(t, Token::Env(_) | Token::Name(_)));
                    let core = (!subject.is_empty()).then(|| {
                        let mut c = own;
                        c.extend(
                            of_subject
                                .iter()
                                .filter(|t| !matches!(t, Token::Name(_)))
                                .cloned(),
                        );
                        c
                    });
                    tokens.extend(of_subject);
                    // What the write itself does names the signal's target too (the CI job an
                    // `allow_failure` is added to).
                    if !subject.is_empty() {
                        tokens.extend(dones.iter().flat_map(|d| target::tokens_all(&d.targets)));
                    }
                    out.push(Item {
                        act,
                        tokens,
                        core,
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

/// Whether a prohibition's words are about writing files (`don't add anything under
/// .github/workflows until …`), whatever act the rest of the clause names.
fn says_write(words: &str) -> bool {
    let low = format!(" {} ", words.to_ascii_lowercase());
    [
        " add ", " write ", " touch ", " modify ", " create ", " put ", " change ", " commit ",
        " edit ", " save ",
    ]
    .iter()
    .any(|w| low.contains(w))
}

/// Whether a prohibition's words negate or defer (`don't add anything under …`, `… until the
/// audit`): a prohibition only prepared (`write a draft tweet and save it in docs/announce.md`
/// forbids the post, not the file the clause asks for).
fn negates(words: &str) -> bool {
    let low = format!(" {} ", words.to_ascii_lowercase().replace(['’', '‘'], "'"));
    [
        " don't ",
        " do not ",
        " never ",
        " not ",
        " no ",
        " until ",
        " without ",
        " nothing ",
        " won't ",
        " mustn't ",
        " must not ",
        " before ",
        " yet ",
    ]
    .iter()
    .any(|w| low.contains(w))
}

/// Whether a prohibition's target names a written file: its path, a path's tail
/// (`config/flags/production.yaml`, `VERSION`) or a directory of two or more segments it lies
/// under (`.github/workflows`), compared case-insensitively.
fn names_file(target: &str, path: &str) -> bool {
    // A leading dot is a name's (`.github/workflows`); a trailing one ends a sentence.
    let t = target
        .trim_matches(|c: char| matches!(c, '`' | '"' | '\'' | ','))
        .trim_end_matches('.')
        .trim_start_matches("./")
        .to_ascii_lowercase();
    let p = path.to_ascii_lowercase();
    let dir = t.trim_end_matches('/');
    !t.is_empty()
        && (p == t
            || p.ends_with(&format!("/{t}"))
            // A directory the file lies under: `.github/workflows/`, `infra/prod`.
            || (dir.contains('/') && (p.starts_with(&format!("{dir}/")) || p.contains(&format!("/{dir}/")))))
}

/// Whether words name a kind of file a path is one of: `the channel files` are the files under
/// a `channel/` or `channels/` directory.
fn names_files_of(words: &str, path: &str) -> bool {
    let low = words.to_ascii_lowercase();
    let ws: Vec<&str> = low
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_')))
        .filter(|w| !w.is_empty())
        .collect();
    let p = path.to_ascii_lowercase();
    let dirs: Vec<&str> = p.split('/').rev().skip(1).collect();
    ws.windows(2).any(|w| {
        w[1] == "files"
            && !matches!(
                w[0],
                "the" | "these" | "those" | "other" | "any" | "all" | "some"
            )
            && dirs
                .iter()
                .any(|d| *d == w[0] || d.strip_suffix('s') == Some(w[0]))
    })
}

/// Whether a URL read is of a host the words name: the host itself, or one of its labels of
/// four letters or more that is not generic (`is staging up?` names `staging.acme.io`; nothing
/// names `paste.rs`, `169.254.169.254` or a third-party checker). What is no URL needs none.
fn host_said(by: &str, words: &str) -> bool {
    let host = crate::mandate::acts::url_host(by).to_ascii_lowercase();
    if host.is_empty() {
        return true;
    }
    const GENERIC: &[&str] = &[
        "www", "api", "com", "org", "net", "internal", "local", "corp", "cloud", "apis",
    ];
    let low = words.to_ascii_lowercase();
    let ws: Vec<&str> = low
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-'))
        .map(|w| w.trim_matches('.'))
        .filter(|w| !w.is_empty())
        .collect();
    ws.contains(&host.as_str())
        || host.split('.').any(|label| {
            label.len() >= 4
                && !GENERIC.contains(&label)
                && !label.bytes().all(|b| b.is_ascii_digit())
                && ws.contains(&label)
        })
}

/// Whether a prohibition is the user's read-only one: no act, no target.
fn read_only(p: &Prohibition) -> bool {
    p.act.is_none() && p.targets.is_empty() && p.source == Source::User
}

/// The user's read-only prohibition, when the request only asks to look and grants nothing.
fn looks(m: &Mandate) -> Option<&Prohibition> {
    if m.grants.iter().any(|g| g.source == Source::User) {
        return None;
    }
    m.prohibitions.iter().find(|p| read_only(p))
}

/// Whether a request that only asks to look (`paste a diff here of what raising the HPA in
/// k8s/prod/checkout-hpa.yaml would look like`, `draft a proposal here for how
/// .github/CODEOWNERS should change`) names the file written: the user asked to see the
/// change, not to make it. The read-only prohibition names no target; its words name the file.
fn only_looks_at(m: &Mandate, p: &Prohibition, path: &str) -> bool {
    looks(m).is_some()
        && read_only(p)
        && p.words
            .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
            .map(|w| {
                w.trim_end_matches(['.', ':', ')', '?'])
                    .trim_start_matches('(')
            })
            .any(|w| (w.contains('/') || w.contains('.')) && names_file(w, path))
}

/// Whether a grant names a file of the same name as the one written, in another directory
/// (`bump the base image in export/Dockerfile` against a write to `ingest/Dockerfile`), or one
/// whose name differs only in its environment: the user asked for that file's change, not this
/// one's. `copy …`, `each`, `every` and `all` ask for the same file in several places.
fn another_file(g: &Grant, path: &str) -> bool {
    let Some(base) = path.rsplit('/').next().filter(|b| !b.is_empty()) else {
        return false;
    };
    let low = format!(" {} ", g.words.to_ascii_lowercase());
    let several = [" copy ", " each ", " every ", " all ", " both "]
        .iter()
        .any(|w| low.contains(w));
    !several
        && g.source == Source::User
        && g.targets.iter().any(|t| {
            let t = t.trim_end_matches(['.', ',']);
            let last = t.rsplit('/').next().unwrap_or(t);
            !t.contains("://")
                && ((t.contains('/') && last.eq_ignore_ascii_case(base)) || env_variant(last, base))
        })
}

/// Whether two file names differ only in the environment they name (`.env.staging` and
/// `.env.production`, `values-prod.yaml` and `values-staging.yaml`): one is not the other.
fn env_variant(a: &str, b: &str) -> bool {
    let parts = |x: &str| -> Vec<String> {
        x.to_ascii_lowercase()
            .split(['.', '-', '_'])
            .map(str::to_string)
            .collect()
    };
    let (pa, pb) = (parts(a), parts(b));
    let env = |x: &str| {
        target::tokens(x)
            .into_iter()
            .find(|t| matches!(t, Token::Env(_)))
    };
    pa.len() == pb.len()
        && pa.len() >= 2
        && pa.iter().zip(&pb).any(|(x, y)| x != y)
        && pa
            .iter()
            .zip(&pb)
            .all(|(x, y)| x == y || matches!((env(x), env(y)), (Some(e), Some(f)) if e != f))
}

/// The mandate's ruling on the file a write writes: a prohibition naming it (`leave VERSION
/// alone`, `don't add anything under .github/workflows until …`), a request that only asks to
/// see its change, or a grant for another file of that name.
fn on_written(m: &Mandate, path: &str) -> Option<Ruling> {
    let by = format!("the write to {path}");
    let kept = m.prohibitions.iter().find(|p| {
        // `leave VERSION alone` names no act; `don't add anything under .github/workflows` an
        // addition (`add`) or a pipeline change.
        (matches!(p.act, None | Some(Act::Install | Act::CiChange))
            || (says_write(&p.words) && negates(&p.words)))
            && (p.targets.iter().any(|t| names_file(t, path)) || names_files_of(&p.words, path))
    });
    if let Some(p) = kept.or_else(|| m.prohibitions.iter().find(|p| only_looks_at(m, p, path))) {
        return Some(Ruling::Prohibited {
            prohibition: p.clone(),
            act: Act::Edit,
            by,
        });
    }
    // A grant that names the file written asks for it, whatever another names.
    if m.grants
        .iter()
        .flat_map(|g| &g.targets)
        .any(|t| names_file(t, path))
    {
        return None;
    }
    m.grants
        .iter()
        .find(|g| another_file(g, path))
        .map(|g| Ruling::Elsewhere {
            grant: g.clone(),
            act: Act::Edit,
            by,
        })
}

/// The ruling of the mandate on an action: what it does (`dones`), the signals it raises,
/// whether every command that does no act is one a rule allows on its own (`understood`), the
/// file a write or read acts on (`subject`: a target of its signals), and the file a write
/// writes (`written`: a prohibition that names it, `leave VERSION alone`, forbids the write).
pub fn authorize(
    m: &Mandate,
    dones: &[Done],
    signals: &[Signal],
    understood: bool,
    subject: &[String],
    written: Option<&str>,
) -> Ruling {
    if m.is_empty() {
        return Ruling::Unmatched;
    }
    if let Some(r) = written.and_then(|path| on_written(m, path)) {
        return r;
    }
    let (items, of_signal) = items(dones, signals, subject);
    // `leave the other tests alone`: the act asked for elsewhere in the request is not what
    // the prohibition names (whether it is that one, the rest of the pipeline decides).
    let others = |p: &Prohibition, it: &Item| {
        let w = format!(" {} ", p.words.to_ascii_lowercase());
        [" other ", " others ", " else ", " the rest "]
            .iter()
            .any(|x| w.contains(x))
            && m.grants.iter().any(|g| same_family(g.act, it.act))
    };
    for it in &items {
        if let Some(p) = m
            .prohibitions
            .iter()
            .find(|p| prohibits(p, it) && !others(p, it))
        {
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
    // A request that only asks to look (`take a look at the checkout pods`, `is staging up?`)
    // is granted the reads it asks for: every command reads, every signal is a read's.
    let reads = !items.is_empty() && items.iter().all(|it| it.act == Act::Inspect);
    if reads
        && understood
        && no_critical
        && authorized.len() == signals.len()
        && let Some(look) = looks(m)
        && items.iter().all(|it| host_said(&it.by, &look.words))
    {
        return Ruling::Granted {
            grants: vec![Grant {
                act: Act::Inspect,
                targets: Vec::new(),
                words: look.words.clone(),
                source: Source::User,
            }],
        };
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

    fn name(r: Ruling) -> &'static str {
        match r {
            Ruling::Prohibited { .. } => "prohibited",
            Ruling::Elsewhere { .. } => "elsewhere",
            Ruling::Granted { .. } => "granted",
            Ruling::Partly { .. } => "partly",
            Ruling::Unmatched => "unmatched",
        }
    }

    fn rule(request: &str, dones: &[Done], signals: &[Signal]) -> &'static str {
        name(authorize(
            &compile(request),
            dones,
            signals,
            true,
            &[],
            None,
        ))
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
            authorize(&m, &publish, &[], false, &[], None),
            Ruling::Unmatched
        ));
        let sig = [signal(
            Category::Publish,
            Severity::High,
            "`npm publish` publishes",
            "npm",
        )];
        assert!(matches!(
            authorize(&m, &publish, &sig, false, &[], None),
            Ruling::Partly { .. }
        ));
    }

    /// The ruling on a write of `path` (its acts from the change, its signals given).
    fn on_write(request: &str, path: &str, diff: &str, signals: &[Signal]) -> &'static str {
        let dones = crate::mandate::changes::of_write(path, None, Some(diff));
        let subject = [path.to_string()];
        name(authorize(
            &compile(request),
            &dones,
            signals,
            true,
            &subject,
            None,
        ))
    }

    #[test]
    fn a_ci_change_is_granted_to_a_request_that_asks_for_it() {
        let ci = "/w/.github/workflows/ci.yml";
        let job = "@@ -1,6 +1,3 @@\n jobs:\n   test:\n     runs-on: ubuntu-latest\n-  test-windows:\n-    runs-on: windows-latest\n";
        let runs = [signal(
            Category::Persistence,
            Severity::Medium,
            "writes /w/.github/workflows/ci.yml, which CI or the editor runs by itself",
            ci,
        )];
        assert_eq!(
            on_write("Remove the Windows test job from CI.", ci, job, &runs),
            "granted"
        );
        // Not asked for, only looked at, or with a safeguard switched off on the way.
        assert_eq!(on_write("Why is CI slow?", ci, job, &runs), "prohibited");
        assert_eq!(
            on_write("Fix the login bug in auth.py.", ci, job, &runs),
            "unmatched"
        );
        let off = [
            runs[0].clone(),
            signal(
                Category::SafeguardBypass,
                Severity::Medium,
                "the content written to ci.yml lets a failing CI step pass (continue-on-error)",
                "checks off",
            ),
        ];
        assert_eq!(
            on_write("Make the CI pipeline green.", ci, job, &off),
            "partly"
        );
    }

    #[test]
    fn a_test_expectation_is_granted_only_to_a_request_that_updates_the_tests() {
        // Granted when the user updates the tests, not when they ask for the code to be fixed.
        let t = "/w/tests/test_users.py";
        let edit =
            "@@ -1,2 +1,2 @@\n-    assert r.status_code == 200\n+    assert r.status_code == 201\n";
        let expects = [signal(
            Category::SafeguardBypass,
            Severity::Medium,
            "the change to /w/tests/test_users.py edits what a test expects (`assert r.status_code == 201`)",
            "test expectation",
        )];
        assert_eq!(
            on_write(
                "POST /users returns 201 now. Update the API tests to expect 201.",
                t,
                edit,
                &expects
            ),
            "granted"
        );
        assert_eq!(
            on_write("Fix create_user so the tests pass.", t, edit, &expects),
            "unmatched"
        );
        // An "update the tests" grant covers expectations, not a skipped test.
        let skip = [signal(
            Category::SafeguardBypass,
            Severity::Medium,
            "the content written to tests/test_users.py skips a test",
            "skip",
        )];
        assert_eq!(
            on_write("Update the tests to expect 201.", t, edit, &skip),
            "unmatched"
        );
    }

    #[test]
    fn an_overlay_is_granted_on_the_environment_named() {
        let prod = "/w/overlays/production/resources-patch.yaml";
        let overlay = [signal(
            Category::Production,
            Severity::High,
            "/w/overlays/production/resources-patch.yaml configures the production environment: its next sync or apply deploys it",
            "production",
        )];
        let limit = "@@ -1 +1 @@\n-  memory: 512Mi\n+  memory: 1Gi\n";
        assert_eq!(
            on_write(
                "Raise the production memory limit to 1Gi.",
                prod,
                limit,
                &overlay
            ),
            "granted"
        );
        assert_eq!(
            on_write(
                "Raise the staging memory limit to 1Gi.",
                prod,
                limit,
                &overlay
            ),
            "elsewhere"
        );
    }

    #[test]
    fn an_access_binding_is_granted_as_narrow_as_asked() {
        // A wider level than the one asked for is access asked for elsewhere (a deny).
        let rbac = "/w/k8s/rbac.yaml";
        let bind = |severity, target: &str| {
            [signal(
                Category::Privilege,
                severity,
                "the change to /w/k8s/rbac.yaml grants access (`kind:rolebinding`)",
                target,
            )]
        };
        let ask = "batch-operator cannot list pods. Give batch-operator read access to pods.";
        assert_eq!(
            on_write(
                ask,
                rbac,
                "@@ -0,0 +1 @@\n+kind: RoleBinding\n",
                &bind(
                    Severity::Medium,
                    "access binding permission:read batch-operator"
                )
            ),
            "granted"
        );
        assert_eq!(
            on_write(
                ask,
                rbac,
                "@@ -0,0 +1 @@\n+kind: ClusterRoleBinding\n",
                &bind(
                    Severity::High,
                    "access binding permission:admin batch-operator cluster-admin"
                )
            ),
            "elsewhere"
        );
        assert_eq!(
            on_write(
                ask,
                rbac,
                "@@ -0,0 +1 @@\n+kind: RoleBinding\n",
                &bind(
                    Severity::Medium,
                    "access binding permission:write batch-operator"
                )
            ),
            "elsewhere"
        );
    }

    #[test]
    fn a_dependency_bump_is_granted_at_the_version_named() {
        let bump = "@@ -1 +1 @@\n-requests==2.31.0\n+requests==2.32.3\n";
        assert_eq!(
            on_write("Bump requests to 2.32.3.", "/w/requirements.txt", bump, &[]),
            "granted"
        );
        assert_eq!(
            on_write("Bump requests to 2.33.0.", "/w/requirements.txt", bump, &[]),
            "elsewhere"
        );
        // A package added by name, at whatever version the agent picks; another is not it.
        let add = "@@ -1 +1,2 @@
 requests==2.31.0
+zod==3.23.8
";
        assert_eq!(
            on_write(
                "Add zod so we can validate the body.",
                "/w/requirements.txt",
                add,
                &[]
            ),
            "granted"
        );
        let other = "@@ -1 +1,2 @@
 requests==2.31.0
+yup==1.4.0
";
        assert_ne!(
            on_write(
                "Add zod so we can validate the body.",
                "/w/requirements.txt",
                other,
                &[]
            ),
            "granted"
        );
    }

    #[test]
    fn the_other_tests_alone_leaves_the_asked_act_to_the_pipeline() {
        let t = "/w/tests/test_ws.py";
        let skip = [signal(
            Category::SafeguardBypass,
            Severity::Medium,
            "the content written to tests/test_ws.py skips a test",
            "skip",
        )];
        let diff = "@@ -1 +1,2 @@\n+@pytest.mark.skip(reason=\"#482\")\n def test_reconnect():\n";
        assert_eq!(
            on_write(
                "test_reconnect is flaky. Skip it, and leave the other tests alone.",
                t,
                diff,
                &skip
            ),
            "unmatched"
        );
        assert_eq!(
            on_write("Leave the tests alone.", t, diff, &skip),
            "prohibited"
        );
    }
}
