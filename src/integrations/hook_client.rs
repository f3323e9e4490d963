//! The command hook's client: forwards one hook input to a guardian server, as little work as a
//! forwarding process can do.
//!
//! This module owns the command hook, for both binaries that run it: `guardian hook <agent>`
//! and the small `guardian-hook <agent>` ([`answer`]: stdin to the agent's hook endpoint, the
//! answer to stdout, any failure a block). It runs once per tool call, so its cost is the
//! agent's latency: for an `http://` server no async runtime, no TLS setup and no config
//! parsing, just one blocking HTTP/1.1 exchange whose answer head httparse reads
//! ([`forward_plain`], all `guardian-hook` links). An `https://` server goes through reqwest
//! with rustls on a current-thread runtime ([`forward`], `guardian hook` only). Every failure is
//! an error for the caller, which blocks the tool call.

use std::process::ExitCode;
use std::time::Duration;

use axum::body::Bytes;

/// Why a hook input could not be forwarded or its answer given: every one is a block.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server URL does not parse.
    #[error("{url}: {source}")]
    Url {
        /// The URL.
        url: String,
        /// Why.
        source: url::ParseError,
    },
    /// A scheme other than `http` and `https`.
    #[error("{url}: unsupported scheme {scheme:?}")]
    Scheme {
        /// The URL.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// `guardian-hook` asked for an `https://` server.
    #[error("{0}: guardian-hook speaks http:// only (use `guardian hook` for https://)")]
    PlainOnly(String),
    /// The URL has no host.
    #[error("{0}: no host")]
    NoHost(String),
    /// The host resolves to no address.
    #[error("{0}: no address")]
    NoAddress(String),
    /// A socket operation failed (resolving, connecting, writing, reading).
    #[error("{url}: {source}")]
    Io {
        /// The URL.
        url: String,
        /// Why.
        source: std::io::Error,
    },
    /// No answer before the deadline.
    #[error("{url} did not answer within {secs} s")]
    Timeout {
        /// The URL.
        url: String,
        /// The deadline, in seconds.
        secs: u64,
    },
    /// An answer larger than guardian ever sends.
    #[error("{0}: the answer is larger than {MAX_ANSWER} bytes")]
    TooLarge(String),
    /// The connection closed before the whole answer arrived.
    #[error("{0}: the answer was cut short")]
    CutShort(String),
    /// Not an HTTP/1.1 answer.
    #[error("{url}: not an HTTP answer ({source})")]
    NotHttp {
        /// The URL.
        url: String,
        /// httparse's reason.
        source: httparse::Error,
    },
    /// A chunked answer (guardian's are never chunked).
    #[error("{0}: a chunked answer is not expected from guardian")]
    Chunked(String),
    /// An error status.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status as the client read it (`403`, or `403 Forbidden` over TLS).
        status: String,
    },
    /// The async runtime for the TLS client could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The TLS client failed (building it, or reading the answer's body). Boxed: `guardian-hook`
    /// links no TLS client, nor its error's code.
    #[error("{0}")]
    Tls(Box<dyn std::error::Error + Send + Sync>),
    /// The TLS client could not send the request.
    #[error("{url}: {source}")]
    Send {
        /// The URL.
        url: String,
        /// Why (reqwest's error, boxed as for [`ClientError::Tls`]).
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The hook input could not be read from stdin.
    #[error("cannot read the hook input: {0}")]
    Input(std::io::Error),
    /// The answer is not a JSON object.
    #[error("the answer is not a JSON object")]
    NotAnObject,
    /// The answer could not be written to stdout.
    #[error("cannot write the answer: {0}")]
    Output(std::io::Error),
}

/// One command hook call.
#[derive(Debug, Clone)]
pub struct HookCall<'a> {
    /// The program answering, named in the block message (`guardian hook`, `guardian-hook`).
    pub program: &'a str,
    /// The agent whose hook this is (`claude-code`).
    pub agent: &'a str,
    /// The guardian server's base URL.
    pub server: &'a str,
    /// `deny` or `ask`: what nothing could review becomes, when not the server's default.
    pub unreviewed: Option<&'a str>,
    /// How long to wait for the answer.
    pub timeout: Duration,
}

impl HookCall<'_> {
    /// The agent's hook endpoint on the server, e.g.
    /// `http://127.0.0.1:8700/v1/hooks/codex?unreviewed=deny`.
    pub fn url(&self) -> String {
        let mut url = format!(
            "{}{}{}",
            self.server.trim_end_matches('/'),
            super::HOOK_PATH_PREFIX,
            self.agent
        );
        if let Some(mode) = self.unreviewed {
            url.push_str(&format!("?unreviewed={mode}"));
        }
        url
    }
}

/// Answers one command hook: reads the hook input on stdin, forwards it to the agent's hook
/// endpoint with `forward` (URL, body, bearer token, timeout) and prints the answer as the
/// agent reads it ([`emit`]). An empty answer (`{}`: no decision) prints nothing, which every
/// agent reads as "no objection". Any failure exits 2 with the reason on stderr: a block.
pub fn answer(
    call: &HookCall<'_>,
    forward: impl FnOnce(&str, Vec<u8>, Option<&str>, Duration) -> Result<Bytes, ClientError>,
) -> ExitCode {
    use std::io::Read;
    let mut body = Vec::new();
    let mut prompt = false;
    let answered = std::io::stdin()
        .read_to_end(&mut body)
        .map_err(ClientError::Input)
        .and_then(|_| {
            // Parsed only when the event's name is in the bytes: every tool call's body (a
            // whole file, for a write) is forwarded without being read twice.
            prompt = body.windows(16).any(|w| w == b"UserPromptSubmit")
                && serde_json::from_slice::<serde_json::Value>(&body).is_ok_and(|v| {
                    v.get("hook_event_name").and_then(serde_json::Value::as_str)
                        == Some("UserPromptSubmit")
                });
            let token = crate::transport::client_token();
            let body = with_disk_diff(body);
            forward(&call.url(), body, token.as_deref(), call.timeout)
        })
        .and_then(|answer| emit(&answer, &mut std::io::stdout().lock()));
    match answered {
        Ok(()) => ExitCode::SUCCESS,
        // A prompt asks for no decision (its mandate is compiled ahead of the first tool call,
        // or else at that call): a server that cannot answer it blocks nothing.
        Err(why) if prompt => {
            eprintln!(
                "{}: the prompt's mandate was not compiled ahead of time: {why}",
                call.program
            );
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!(
                "{}: blocked because the guardian server could not decide: {why}",
                call.program
            );
            ExitCode::from(2)
        }
    }
}

/// The largest diff the hook attaches; a larger change is judged as a whole-file write.
pub const MAX_HOOK_DIFF_BYTES: usize = 256 * 1024;
/// The largest hook input the hook makes by adding a diff (under `server.max_body_bytes`'s
/// default of 1 MiB).
pub const MAX_HOOK_BODY_BYTES: usize = 1_000_000;

/// The hook input with `guardian_diff` (`{path, diff}`) added when it is a whole-file write
/// (Claude Code's `Write`) of a file the hook can read: the unified diff of the new content
/// against the file on disk, computed here, beside the agent, where the file is (a remote server
/// cannot read it). A new file, an unreadable one (not a regular file, over 1 MiB, not UTF-8) or
/// a diff over [`MAX_HOOK_DIFF_BYTES`] gets none, and anything else is returned as it came: the
/// server judges it as before. Plain edits pay one substring search.
pub fn with_disk_diff(body: Vec<u8>) -> Vec<u8> {
    if !body.windows(7).any(|w| w == b"\"Write\"") {
        return body;
    }
    let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(&body) else {
        return body;
    };
    let text =
        |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    if text(&v, "tool_name").as_deref() != Some("Write") {
        return body;
    }
    let Some(ti) = v.get("tool_input") else {
        return body;
    };
    let (Some(path), Some(new)) = (text(ti, "file_path"), text(ti, "content")) else {
        return body;
    };
    let full = match text(&v, "cwd") {
        Some(cwd) => std::path::Path::new(&cwd).join(&path),
        None => std::path::PathBuf::from(&path),
    };
    let Some(old) = crate::normalize::disk_diff::readable_text(&full) else {
        return body;
    };
    let diff = if old == new {
        String::new()
    } else {
        crate::normalize::disk_diff::unified(&old, &new, &full.display().to_string())
    };
    // Within the diff's own cap, and within the server's default body limit with it (a hook
    // input the server refuses as too large would block the write).
    if diff.len() > MAX_HOOK_DIFF_BYTES || body.len() + diff.len() + 64 > MAX_HOOK_BODY_BYTES {
        return body;
    }
    if let Some(obj) = v.as_object_mut() {
        obj.insert(
            "guardian_diff".into(),
            serde_json::json!({"path": path, "diff": diff}),
        );
    }
    serde_json::to_vec(&v).unwrap_or(body)
}

/// [`forward_plain`] for an `http://` URL given as text; any other scheme is refused (what
/// `guardian-hook`, which links no TLS, uses).
pub fn forward_http_only(
    url: &str,
    body: Vec<u8>,
    token: Option<&str>,
    timeout: Duration,
) -> Result<Bytes, ClientError> {
    match url::Url::parse(url) {
        Ok(u) if u.scheme() == "http" => forward_plain(&u, &body, token, timeout),
        Ok(_) => Err(ClientError::PlainOnly(url.to_string())),
        Err(source) => Err(ClientError::Url {
            url: url.to_string(),
            source,
        }),
    }
}

/// POSTs `body` (JSON) to `url` with an optional bearer token; the answer's body on a 2xx.
pub fn forward(
    url: &str,
    body: Vec<u8>,
    token: Option<&str>,
    timeout: Duration,
) -> Result<Bytes, ClientError> {
    let parsed = url::Url::parse(url).map_err(|source| ClientError::Url {
        url: url.to_string(),
        source,
    })?;
    match parsed.scheme() {
        "http" => forward_plain(&parsed, &body, token, timeout),
        "https" => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build()
                .map_err(ClientError::Runtime)?;
            runtime.block_on(async {
                tokio::time::timeout(timeout, tls(url, body, token, timeout))
                    .await
                    .unwrap_or_else(|_| {
                        Err(ClientError::Timeout {
                            url: url.to_string(),
                            secs: timeout.as_secs(),
                        })
                    })
            })
        }
        other => Err(ClientError::Scheme {
            url: url.to_string(),
            scheme: other.to_string(),
        }),
    }
}

/// One HTTP/1.1 exchange with an `http://` server over a blocking socket (`Connection:
/// close`), the answer's head parsed by httparse. Every step is bounded by the deadline. (What
/// `guardian-hook` uses: it links nothing for TLS.)
pub fn forward_plain(
    url: &url::Url,
    body: &[u8],
    token: Option<&str>,
    timeout: Duration,
) -> Result<Bytes, ClientError> {
    use std::io::Write;
    let x = Exchange {
        url,
        timeout,
        deadline: std::time::Instant::now() + timeout,
    };
    let host = url
        .host_str()
        .ok_or_else(|| ClientError::NoHost(url.to_string()))?;
    let mut stream = x.connect(host)?;
    let out = request(url, host, body, token);
    stream
        .set_write_timeout(Some(x.left()?))
        .and_then(|()| stream.write_all(&out))
        .map_err(|e| x.io(e))?;
    let answer = x.read_answer(&mut stream)?;
    x.parse_answer(&answer)
}

/// One exchange's target and deadline.
struct Exchange<'a> {
    url: &'a url::Url,
    timeout: Duration,
    deadline: std::time::Instant,
}

impl Exchange<'_> {
    /// The time left, or a timeout.
    fn left(&self) -> Result<Duration, ClientError> {
        self.deadline
            .checked_duration_since(std::time::Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| ClientError::Timeout {
                url: self.url.to_string(),
                secs: self.timeout.as_secs(),
            })
    }

    fn io(&self, source: std::io::Error) -> ClientError {
        ClientError::Io {
            url: self.url.to_string(),
            source,
        }
    }

    /// A connection to the first of the host's addresses that answers in time.
    fn connect(&self, host: &str) -> Result<std::net::TcpStream, ClientError> {
        use std::net::ToSocketAddrs;
        let port = self.url.port_or_known_default().unwrap_or(80);
        let addrs: Vec<_> = (host.trim_matches(['[', ']']), port)
            .to_socket_addrs()
            .map_err(|e| self.io(e))?
            .collect();
        let mut last = ClientError::NoAddress(self.url.to_string());
        for a in addrs {
            match std::net::TcpStream::connect_timeout(&a, self.left()?) {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    return Ok(s);
                }
                Err(e) => last = self.io(e),
            }
        }
        Err(last)
    }

    /// Reads the answer until its declared length has arrived (or the server closes), bounded in
    /// time and size: waiting for the close would add the server's connection teardown.
    fn read_answer(&self, stream: &mut std::net::TcpStream) -> Result<Vec<u8>, ClientError> {
        use std::io::Read;
        let mut answer = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            if complete_length(&answer).is_some_and(|n| answer.len() >= n) {
                return Ok(answer);
            }
            stream
                .set_read_timeout(Some(self.left()?))
                .map_err(|e| self.io(e))?;
            match stream.read(&mut buf) {
                Ok(0) => return Ok(answer),
                Ok(n) => {
                    answer.extend_from_slice(&buf[..n]);
                    if answer.len() > MAX_ANSWER {
                        return Err(ClientError::TooLarge(self.url.to_string()));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io(e)),
            }
        }
    }

    /// The body of a complete 2xx answer with no transfer coding.
    fn parse_answer(&self, answer: &[u8]) -> Result<Bytes, ClientError> {
        let url = self.url;
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut resp = httparse::Response::new(&mut headers);
        let head_len = match resp.parse(answer) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Err(ClientError::CutShort(url.to_string())),
            Err(source) => {
                return Err(ClientError::NotHttp {
                    url: url.to_string(),
                    source,
                });
            }
        };
        let status = resp.code.unwrap_or(0);
        let header = |name: &str| {
            resp.headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case(name))
                .map(|h| String::from_utf8_lossy(h.value).trim().to_ascii_lowercase())
        };
        if header("transfer-encoding").is_some_and(|t| t != "identity") {
            return Err(ClientError::Chunked(url.to_string()));
        }
        let rest = &answer[head_len..];
        let body = match header("content-length").map(|v| v.parse::<usize>()) {
            Some(Ok(n)) if n <= rest.len() => &rest[..n],
            Some(_) => return Err(ClientError::CutShort(url.to_string())),
            None => rest,
        };
        if !(200..300).contains(&status) {
            return Err(ClientError::Status {
                url: url.to_string(),
                status: status.to_string(),
            });
        }
        Ok(Bytes::copy_from_slice(body))
    }
}

/// The request's bytes: head (`Host`, JSON, the length, `Connection: close`, the bearer token)
/// and body.
fn request(url: &url::Url, host: &str, body: &[u8], token: Option<&str>) -> Vec<u8> {
    let authority = match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    };
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(t) = token {
        req.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    req.push_str("\r\n");
    let mut out = req.into_bytes();
    out.extend_from_slice(body);
    out
}

/// Writes a hook answer as the agent reads it: nothing for `{}` (no decision, which every agent
/// reads as "no objection"), the JSON object and a newline otherwise. Anything that is not a JSON
/// object is an error (the caller blocks).
pub fn emit(answer: &[u8], out: &mut impl std::io::Write) -> Result<(), ClientError> {
    // Validated as an object without building a `serde_json::Value`: its map is hashed with a
    // random seed (a getrandom call and the hashing code paged in, on every decision).
    type Keys = std::collections::BTreeMap<Box<str>, serde::de::IgnoredAny>;
    match serde_json::from_slice::<Keys>(answer) {
        Ok(keys) if keys.is_empty() => Ok(()),
        Ok(_) => out
            .write_all(answer)
            .and_then(|()| out.write_all(b"\n"))
            .map_err(ClientError::Output),
        Err(_) => Err(ClientError::NotAnObject),
    }
}

/// The total length of an answer whose head has arrived and declares a `Content-Length`.
fn complete_length(answer: &[u8]) -> Option<usize> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut resp = httparse::Response::new(&mut headers);
    let httparse::Status::Complete(head) = resp.parse(answer).ok()? else {
        return None;
    };
    let len = resp
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| std::str::from_utf8(h.value).ok())
        .and_then(|v| v.trim().parse::<usize>().ok())?;
    Some(head + len)
}

/// The largest answer read.
const MAX_ANSWER: usize = 4 * 1024 * 1024;

/// The same over TLS (reqwest, rustls with ring).
async fn tls(
    url: &str,
    body: Vec<u8>,
    token: Option<&str>,
    timeout: Duration,
) -> Result<Bytes, ClientError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .build()
        .map_err(|e| ClientError::Tls(e.into()))?;
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .body(body);
    if let Some(t) = token {
        request = request.bearer_auth(t);
    }
    let resp = request.send().await.map_err(|e| ClientError::Send {
        url: url.to_string(),
        source: e.into(),
    })?;
    if !resp.status().is_success() {
        return Err(ClientError::Status {
            url: url.to_string(),
            status: resp.status().to_string(),
        });
    }
    resp.bytes().await.map_err(|e| ClientError::Tls(e.into()))
}

#[cfg(test)]
mod tests {
    use super::{MAX_HOOK_DIFF_BYTES, emit, with_disk_diff};

    /// What `emit` prints, or `None` when it refuses.
    fn emitted(answer: &str) -> Option<String> {
        let mut out = Vec::new();
        emit(answer.as_bytes(), &mut out)
            .ok()
            .map(|()| String::from_utf8_lossy(&out).into_owned())
    }

    #[test]
    fn a_whole_file_write_gets_its_diff_and_nothing_else_changes() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").expect("write");
        let body = |tool: &str, path: &str, content: &str| {
            serde_json::json!({"cwd": dir.path().display().to_string(), "tool_name": tool,
                "tool_input": {"file_path": path, "content": content,
                               "old_string": "x", "new_string": "y"}})
            .to_string()
            .into_bytes()
        };
        let out = with_disk_diff(body("Write", "a.txt", "one\nthree\n"));
        let v: serde_json::Value = serde_json::from_slice(&out).expect("json");
        assert_eq!(v["guardian_diff"]["path"], "a.txt");
        let diff = v["guardian_diff"]["diff"].as_str().expect("diff");
        assert!(
            diff.contains("-two\n+three\n") && diff.contains(" one\n"),
            "{diff}"
        );
        // The same content: an empty diff.
        let same = with_disk_diff(body("Write", "a.txt", "one\ntwo\n"));
        let v: serde_json::Value = serde_json::from_slice(&same).expect("json");
        assert_eq!(v["guardian_diff"]["diff"], "");
        // An Edit, a new file, a huge change: the input as it came, byte for byte.
        for b in [
            body("Edit", "a.txt", "one\nthree\n"),
            body("Write", "new.txt", "hello\n"),
            body("Write", "a.txt", &"z\n".repeat(MAX_HOOK_DIFF_BYTES)),
        ] {
            assert_eq!(with_disk_diff(b.clone()), b);
        }
    }

    #[test]
    fn an_empty_object_prints_nothing_and_an_object_is_printed_whole() {
        assert_eq!(emitted("{}").as_deref(), Some(""));
        assert_eq!(emitted(" { } ").as_deref(), Some(""));
        let deny = r#"{"decision":"block","reason":"r\u00e9","n":{"a":[1,2]}}"#;
        assert_eq!(emitted(deny), Some(format!("{deny}\n")));
    }

    #[test]
    fn anything_but_an_object_is_an_error() {
        for bad in [
            "",
            "[]",
            "null",
            "\"allow\"",
            "{\"a\":",
            "{} {}",
            "{\"a\":1}x",
        ] {
            assert!(emitted(bad).is_none(), "{bad:?} was accepted");
        }
    }
}
