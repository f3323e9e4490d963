//! The JSON error body both HTTP adapters answer with: the API ([`crate::server`]) and the
//! review page ([`crate::ui`]) name the bad field the same way.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A JSON error body: `{"error": {"field": …, "message": …}}`.
pub fn error_response(status: StatusCode, field: &str, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"field": field, "message": message}})),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_body_names_the_field_and_the_message() {
        let resp = error_response(StatusCode::BAD_REQUEST, "session.grants[0]", "bad grant");
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 16)
            .await
            .expect("a body");
        let v: serde_json::Value = serde_json::from_slice(&bytes).expect("JSON");
        assert_eq!(v["error"]["field"], "session.grants[0]");
        assert_eq!(v["error"]["message"], "bad grant");
    }
}
