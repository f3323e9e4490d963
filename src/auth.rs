//! Bearer tokens: the `[[auth.tokens]]` digests and the constant-time match of a presented
//! token, shared by the API's gate ([`crate::server`]) and the review page ([`crate::ui`]).

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The token of an `Authorization: Bearer <token>` header, if the request has one.
pub fn bearer(headers: &axum::http::HeaderMap) -> Option<&str> {
    headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
}

/// The `[[auth.tokens]]` of a config as (client, SHA-256 digest) pairs.
pub fn token_digests(cfg: &crate::Config) -> Vec<(String, [u8; 32])> {
    cfg.auth
        .tokens
        .iter()
        .filter_map(|t| {
            let mut digest = [0u8; 32];
            hex::decode_to_slice(&t.sha256, &mut digest).ok()?;
            Some((t.client.clone(), digest))
        })
        .collect()
}

/// The client a bearer token belongs to. Every digest is compared, in constant time, whatever
/// matches first: the time taken says nothing about the token.
pub fn client_of(tokens: &[(String, [u8; 32])], token: &str) -> Option<String> {
    let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
    let mut found = None;
    for (client, want) in tokens {
        if bool::from(digest.ct_eq(want)) {
            found = Some(client.clone());
        }
    }
    found
}
