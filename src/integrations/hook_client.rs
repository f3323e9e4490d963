//! The command hook's client: forwards one hook input to a guardian server, as little work as a
//! forwarding process can do.
//!
//! `guardian hook …` runs once per tool call, so its cost is the agent's latency: no
//! multi-threaded runtime, no TLS setup and no certificate loading for an `http://` server (a
//! plain HTTP/1.1 exchange through hyper on a current-thread runtime), no config parsing. An
//! `https://` server goes through reqwest with rustls. Every failure is an error for the caller,
//! which blocks the tool call.

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
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let exchange = async {
        match parsed.scheme() {
            "http" => plain(&parsed, body, token).await,
            "https" => tls(url, body, token, timeout).await,
            other => Err(format!("{url}: unsupported scheme {other:?}")),
        }
    };
    runtime.block_on(async {
        tokio::time::timeout(timeout, exchange)
            .await
            .unwrap_or_else(|_| {
                Err(format!(
                    "{url} did not answer within {} s",
                    timeout.as_secs()
                ))
            })
    })
}

/// One HTTP/1.1 request over a fresh loopback (or LAN) connection.
async fn plain(url: &url::Url, body: Vec<u8>, token: Option<&str>) -> Result<Bytes, String> {
    use http_body_util::{BodyExt, Full};
    let host = url.host_str().ok_or_else(|| format!("{url}: no host"))?;
    let port = url.port_or_known_default().unwrap_or(80);
    let stream = tokio::net::TcpStream::connect((host.trim_matches(['[', ']']), port))
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|e| format!("{url}: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    let authority = match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    };
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    let mut req = hyper::Request::post(path)
        .header(hyper::header::HOST, authority)
        .header(hyper::header::CONTENT_TYPE, "application/json");
    if let Some(t) = token {
        req = req.header(hyper::header::AUTHORIZATION, format!("Bearer {t}"));
    }
    let req = req
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let resp = sender
        .send_request(req)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let status = resp.status();
    let bytes = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("{url}: {e}"))?
        .to_bytes();
    if !status.is_success() {
        return Err(format!("{url} answered HTTP {status}"));
    }
    Ok(bytes)
}

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
