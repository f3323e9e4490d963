//! MCP tool-call signals: what a tool's name and arguments say it does.

use super::*;

/// MCP and app tools: what their name and arguments say they do.
pub(super) fn mcp_signals(
    server: &str,
    tool: &str,
    args: &str,
    cfg: &SignalsConfig,
    out: &mut Vec<Signal>,
) {
    let t = tool.to_ascii_lowercase();
    let words: Vec<&str> = t
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let any = |list: &[&str]| words.iter().any(|w| list.iter().any(|v| w.starts_with(v)));
    let who = format!("{server}/{tool}");
    let recipient = recipient_of(args).unwrap_or_else(|| who.clone());
    let compact: String = args
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    mcp_overreach(&who, &words, &compact, out);
    if words.iter().any(|w| w.starts_with("repo"))
        && (compact.contains("\"private\":false") || compact.contains("\"visibility\":\"public\""))
    {
        out.push(sig(
            Category::NetworkEgress,
            Severity::High,
            format!("{who} makes a repository public"),
            &recipient,
        ));
    }
    if any(&[
        "send", "post", "share", "publish", "upload", "email", "mail", "message", "tweet",
        "forward", "invite", "notify",
    ]) {
        out.push(sig(
            Category::NetworkEgress,
            Severity::Medium,
            format!("{who} sends data out (to {recipient})"),
            &recipient,
        ));
    }
    if any(&[
        "delete",
        "remove",
        "purge",
        "cancel",
        "transfer",
        "pay",
        "refund",
        "withdraw",
        "drop",
        "destroy",
        "wipe",
        "revoke",
        "archive",
        "close",
        "terminate",
    ]) {
        out.push(deletion(&who, &words, &compact, args, &recipient));
    }
    if any(&[
        "grant",
        "role",
        "permission",
        "access",
        "share",
        "admin",
        "promote",
        "invite",
    ]) && (t.contains("grant")
        || t.contains("role")
        || t.contains("permission")
        || t.contains("access")
        || t.contains("admin"))
    {
        out.push(sig(
            Category::Privilege,
            grant_severity(&compact),
            format!("{who} grants roles or access"),
            &recipient,
        ));
    }
    if any(&["deploy", "release", "rollout", "scale"]) {
        out.push(sig(
            Category::Production,
            if args.to_ascii_lowercase().contains("prod") {
                Severity::High
            } else {
                Severity::Medium
            },
            format!("{who} changes something deployed"),
            &recipient,
        ));
    }
    secrets_and_permissions(server, &t, &compact, &who, &recipient, out);
    sql_text_signals(args, &who, true, out);
    url_hosts(args, cfg, out);
    http_request(args, &who, cfg, out);
}

/// An MCP HTTP tool's request (`{"url", "method", "body"}`, as the fetch and HTTP servers take
/// it): a method that sends, or a body, uploads to the URL's host; `DELETE` deletes there.
fn http_request(args: &str, who: &str, cfg: &SignalsConfig, out: &mut Vec<Signal>) {
    let Ok(serde_json::Value::Object(o)) = serde_json::from_str::<serde_json::Value>(args) else {
        return;
    };
    let Some(host) = o
        .get("url")
        .and_then(|u| u.as_str())
        .and_then(|u| url::Url::parse(u).ok())
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
    else {
        return;
    };
    let method = o
        .get("method")
        .and_then(|m| m.as_str())
        .unwrap_or("GET")
        .to_ascii_uppercase();
    let has_body = ["body", "data", "json", "form"]
        .iter()
        .any(|k| o.get(*k).is_some_and(|v| !v.is_null() && v != ""));
    if has_body || !crate::request::is_read_method(&method) {
        // The contact `url_hosts` found, or the "sends data out" of the tool's name, becomes
        // the upload it is.
        out.retain(|s| {
            !(s.category == Category::NetworkEgress
                && (s.target == host || s.severity == Severity::Medium))
        });
        let before = out.len();
        host_signal(&host, true, cfg, out);
        if out.len() > before {
            out[before].evidence = format!("{who} sends an HTTP {method} with data to {host}");
        }
    }
    if method == "DELETE" {
        out.push(sig(
            Category::Destructive,
            Severity::High,
            format!("{who} sends an HTTP DELETE to {host}"),
            &host,
        ));
    }
}

/// What a deleting, cancelling or moving call raises: destructive, high, on what its arguments
/// name. A Kubernetes pod deleted by name is restarted by its controller (as `kubectl delete
/// pod`): medium, on its namespace, which is what the user names.
fn deletion(who: &str, words: &[&str], compact: &str, args: &str, recipient: &str) -> Signal {
    let object = || object_of(args).unwrap_or_else(|| recipient.to_string());
    let pod = words.iter().any(|w| matches!(*w, "pod" | "pods"))
        && !compact.contains("prod")
        && !compact.contains("\"all\":true");
    if pod {
        sig(
            Category::Destructive,
            Severity::Medium,
            format!("{who} deletes a pod (its controller restarts it)"),
            &first_value(args, &["namespace"]).unwrap_or_else(object),
        )
    } else {
        sig(
            Category::Destructive,
            Severity::High,
            format!("{who} deletes, cancels or moves something"),
            &object(),
        )
    }
}

/// Keys whose values are prose a person reads (a comment, a message, a description): a link
/// written there is text, not a host the tool contacts.
const PROSE_KEYS: &[&str] = &[
    "body",
    "text",
    "comment",
    "message",
    "description",
    "title",
    "summary",
    "notes",
    "markdown",
    "content",
];

/// The arguments' string values outside prose keys (all of `args` when it is not JSON).
fn non_prose(args: &str) -> String {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            serde_json::Value::Object(o) => o
                .iter()
                .filter(|(k, _)| !PROSE_KEYS.contains(&k.to_ascii_lowercase().as_str()))
                .for_each(|(_, x)| walk(x, out)),
            _ => {}
        }
    }
    match serde_json::from_str::<serde_json::Value>(args) {
        Ok(v) => {
            let mut out = Vec::new();
            walk(&v, &mut out);
            out.join("\n")
        }
        Err(_) => args.to_string(),
    }
}

/// Hosts the arguments send the tool to (`http(s)://host…`), links in prose left out.
fn url_hosts(args: &str, cfg: &SignalsConfig, out: &mut Vec<Signal>) {
    let mut seen = std::collections::HashSet::new();
    let args = non_prose(args);
    for (i, _) in args.match_indices("://") {
        let scheme_ok = args[..i].ends_with("http") || args[..i].ends_with("https");
        let host: String = args[i + 3..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
            .collect();
        if scheme_ok && !host.is_empty() && seen.insert(host.clone()) {
            host_signal(&host, false, cfg, out);
        }
    }
}

/// What a deleting, cancelling or moving MCP call acts on: the branch, file, table, issue…
/// its arguments name (`delete_branch {repo, branch}` deletes the branch, not the repository).
fn object_of(args: &str) -> Option<String> {
    first_value(
        args,
        &[
            "branch",
            "ref",
            "path",
            "file",
            "filename",
            "table",
            "collection",
            "bucket",
            "key",
            "issue_number",
            "pull_number",
            "merge_request_iid",
            "issue_iid",
            "number",
            "channel",
            "name",
            "id",
        ],
    )
}

/// The recipient, channel, repository or account an MCP call's arguments name.
pub(super) fn recipient_of(args: &str) -> Option<String> {
    first_value(
        args,
        &[
            "to",
            "recipient",
            "recipients",
            "channel",
            "channel_id",
            "channel_name",
            "issue_key",
            "issueKey",
            "issue_id",
            "chat_id",
            "email",
            "address",
            "user",
            "username",
            "repo",
            "repository",
            "account",
            "destination",
            "url",
            "target",
            "id",
            "name",
        ],
    )
}

/// The first of these keys that the arguments (a JSON object) give a non-empty value, as text.
fn first_value(args: &str, keys: &[&str]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(args).ok()?;
    let obj = v.as_object()?;
    for k in keys {
        if let Some(x) = obj.get(*k) {
            let s = match x {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Array(a) => a
                    .iter()
                    .filter_map(|e| e.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                other => other.to_string(),
            };
            if !s.is_empty() {
                return Some(s);
            }
        }
    }
    None
}

/// How much a grant gives: read-only access (GitHub's `pull`/`read`/`triage`, a `viewer` or
/// `reader` role, GCP's `roles/viewer` or an object viewer, GitLab's guest or reporter level
/// 10/20) lets someone see, not change: medium. Anything else, or arguments that do not say,
/// is high.
fn grant_severity(compact: &str) -> Severity {
    const READ_ONLY: &[&str] = &[
        "\"permission\":\"pull\"",
        "\"permission\":\"read\"",
        "\"permission\":\"triage\"",
        "\"role\":\"viewer\"",
        "\"role\":\"reader\"",
        "\"role\":\"read\"",
        "\"role\":\"guest\"",
        "\"access_level\":10",
        "\"access_level\":20",
        "roles/viewer",
        "objectviewer",
    ];
    // Values (not keys: `"owner": "acme"` names a repository's owner) that give more.
    const MORE: &[&str] = &[
        ":\"admin\"",
        ":\"owner\"",
        ":\"maintain\"",
        ":\"write\"",
        ":\"push\"",
        ":\"editor\"",
        "roles/owner",
        "roles/editor",
        "\"access_level\":30",
        "\"access_level\":40",
        "\"access_level\":50",
        // Read access for everyone is publication.
        "allusers",
        "allauthenticatedusers",
    ];
    if READ_ONLY.iter().any(|r| compact.contains(r)) && !MORE.iter().any(|m| compact.contains(m)) {
        Severity::Medium
    } else {
        Severity::High
    }
}

/// Tools whose server or name handles secrets, or that change who may do what.
fn secrets_and_permissions(
    server: &str,
    t: &str,
    compact: &str,
    who: &str,
    recipient: &str,
    out: &mut Vec<Signal>,
) {
    let st = format!("{} {t}", server.to_ascii_lowercase());
    if ["secret", "credential", "password", "vault", "keychain"]
        .iter()
        .any(|w| st.contains(w))
    {
        out.push(sig(
            Category::CredentialAccess,
            Severity::High,
            format!("{who} handles secrets"),
            recipient,
        ));
    }
    if ["protection", "collaborator", "ruleset"]
        .iter()
        .any(|w| t.contains(w))
    {
        let severity = if t.contains("collaborator") {
            grant_severity(compact)
        } else {
            Severity::High
        };
        out.push(sig(
            Category::Privilege,
            severity,
            format!("{who} changes who may do what"),
            recipient,
        ));
    }
}
