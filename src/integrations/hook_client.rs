//! The command hook's client: forwards one hook input to a guardian server, as little work as a
//! forwarding process can do.
//!
//! `guardian hook …` runs once per tool call, so its cost is the agent's latency: for an
//! `http://` server no async runtime, no TLS setup and no config parsing, just one blocking
//! HTTP/1.1 exchange whose answer head httparse reads. An `https://` server goes through reqwest
//! with rustls on a current-thread runtime. Every failure is an error for the caller, which
//! blocks the tool call.

use std::time::Duration;

use axum::body::Bytes;

/// POSTs `body` (JSON) to `url` with an optional bearer token; the answer's body on a 2xx.
pub fn forward(
    url: &str,
    body: Vec<u8>,
    token: Option<&str>,
    timeout: Duration,
) -> Result<Bytes, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
    match parsed.scheme() {
        "http" => forward_plain(&parsed, &body, token, timeout),
        "https" => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .enable_time()
                .build()
                .map_err(|e| format!("cannot start the async runtime: {e}"))?;
            runtime.block_on(async {
                tokio::time::timeout(timeout, tls(url, body, token, timeout))
                    .await
                    .unwrap_or_else(|_| {
                        Err(format!(
                            "{url} did not answer within {} s",
                            timeout.as_secs()
                        ))
                    })
            })
        }
        other => Err(format!("{url}: unsupported scheme {other:?}")),
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
) -> Result<Bytes, String> {
    use std::io::{Read, Write};
    use std::net::ToSocketAddrs;
    let deadline = std::time::Instant::now() + timeout;
    let left = || {
        deadline
            .checked_duration_since(std::time::Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("{url} did not answer within {} s", timeout.as_secs()))
    };
    let host = url.host_str().ok_or_else(|| format!("{url}: no host"))?;
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs: Vec<_> = (host.trim_matches(['[', ']']), port)
        .to_socket_addrs()
        .map_err(|e| format!("{url}: {e}"))?
        .collect();
    let mut stream = None;
    let mut last = format!("{url}: no address");
    for a in addrs {
        match std::net::TcpStream::connect_timeout(&a, left()?) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = format!("{url}: {e}"),
        }
    }
    let mut stream = stream.ok_or(last)?;
    let _ = stream.set_nodelay(true);
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
    stream
        .set_write_timeout(Some(left()?))
        .and_then(|()| stream.write_all(&out))
        .map_err(|e| format!("{url}: {e}"))?;
    // Read the answer until its declared length has arrived (or the server closes), bounded in
    // time and size: waiting for the close would add the server's connection teardown.
    let mut answer = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        if complete_length(&answer).is_some_and(|n| answer.len() >= n) {
            break;
        }
        stream
            .set_read_timeout(Some(left()?))
            .map_err(|e| format!("{url}: {e}"))?;
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                answer.extend_from_slice(&buf[..n]);
                if answer.len() > MAX_ANSWER {
                    return Err(format!(
                        "{url}: the answer is larger than {MAX_ANSWER} bytes"
                    ));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("{url}: {e}")),
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut resp = httparse::Response::new(&mut headers);
    let head_len = match resp.parse(&answer) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Err(format!("{url}: the answer was cut short")),
        Err(e) => return Err(format!("{url}: not an HTTP answer ({e})")),
    };
    let status = resp.code.unwrap_or(0);
    let header = |name: &str| {
        resp.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_ascii_lowercase())
    };
    if header("transfer-encoding").is_some_and(|t| t != "identity") {
        return Err(format!(
            "{url}: a chunked answer is not expected from guardian"
        ));
    }
    let rest = &answer[head_len..];
    let body = match header("content-length").map(|v| v.parse::<usize>()) {
        Some(Ok(n)) if n <= rest.len() => &rest[..n],
        Some(_) => return Err(format!("{url}: the answer was cut short")),
        None => rest,
    };
    if !(200..300).contains(&status) {
        return Err(format!("{url} answered HTTP {status}"));
    }
    Ok(Bytes::copy_from_slice(body))
}

/// Writes a hook answer as the agent reads it: nothing for `{}` (no decision, which every agent
/// reads as "no objection"), the JSON object and a newline otherwise. Anything that is not a JSON
/// object is an error (the caller blocks).
pub fn emit(answer: &[u8], out: &mut impl std::io::Write) -> Result<(), String> {
    // Validated as an object without building a `serde_json::Value`: its map is hashed with a
    // random seed (a getrandom call and the hashing code paged in, on every decision).
    type Keys = std::collections::BTreeMap<Box<str>, serde::de::IgnoredAny>;
    match serde_json::from_slice::<Keys>(answer) {
        Ok(keys) if keys.is_empty() => Ok(()),
        Ok(_) => out
            .write_all(answer)
            .and_then(|()| out.write_all(b"\n"))
            .map_err(|e| format!("cannot write the answer: {e}")),
        Err(_) => Err("the answer is not a JSON object".into()),
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
) -> Result<Bytes, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .build()
        .map_err(|e| e.to_string())?;
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .body(body);
    if let Some(t) = token {
        request = request.bearer_auth(t);
    }
    let resp = request.send().await.map_err(|e| format!("{url}: {e}"))?;
    if !resp.status().is_success() {
        return Err(format!("{url} answered HTTP {}", resp.status()));
    }
    resp.bytes().await.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::emit;

    fn emitted(answer: &str) -> Result<String, String> {
        let mut out = Vec::new();
        emit(answer.as_bytes(), &mut out).map(|()| String::from_utf8_lossy(&out).into_owned())
    }

    #[test]
    fn an_empty_object_prints_nothing_and_an_object_is_printed_whole() {
        assert_eq!(emitted("{}").as_deref(), Ok(""));
        assert_eq!(emitted(" { } ").as_deref(), Ok(""));
        let deny = r#"{"decision":"block","reason":"r\u00e9","n":{"a":[1,2]}}"#;
        assert_eq!(emitted(deny), Ok(format!("{deny}\n")));
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
            assert!(emitted(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
