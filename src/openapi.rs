//! The OpenAPI document of API v1, generated from the wire types (schemars), not written by hand.
//!
//! This module owns `GET /openapi.json`: paths and responses are listed here, every schema comes
//! from the Rust types the server actually decodes and encodes.

use serde_json::{Value, json};

use crate::request::{RefusalReport, ReviewRequest};
use crate::verdict::ReviewResponse;

/// The OpenAPI 3.0 document.
pub fn document() -> Value {
    let mut generator = schemars::generate::SchemaSettings::openapi3().into_generator();
    let request = generator.subschema_for::<ReviewRequest>();
    let response = generator.subschema_for::<ReviewResponse>();
    let refusal = generator.subschema_for::<RefusalReport>();
    let mut schemas = generator.take_definitions(true);
    schemas.insert(
        "Error".into(),
        json!({
            "type": "object",
            "required": ["error"],
            "properties": {"error": {"type": "object", "required": ["field", "message"], "properties": {
                "field": {"type": "string", "description": "the offending field's path, e.g. action.command"},
                "message": {"type": "string"}
            }}}
        }),
    );
    let error = json!({"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}});
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "guardian",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Decides whether an AI coding agent may run a tool call."
        },
        "paths": {
            "/v1/review": {"post": {
                "operationId": "review",
                "summary": "Review one proposed tool call",
                "requestBody": {"required": true, "content": {"application/json": {"schema": request}}},
                "responses": {
                    "200": {"description": "The decision (allow or deny), recorded in the audit log",
                            "content": {"application/json": {"schema": response}}},
                    "400": {"description": "Invalid request; the body names the field", "content": error.clone()},
                    "413": {"description": "Body larger than server.max_body_bytes", "content": error.clone()}
                }
            }},
            "/v1/refusals": {"post": {
                "operationId": "reportRefusal",
                "summary": "Record a tool call an integration refused before any review (an unknown tool, unreadable input)",
                "requestBody": {"required": true, "content": {"application/json": {"schema": refusal}}},
                "responses": {
                    "201": {"description": "Recorded in the audit log; the record's id",
                            "content": {"application/json": {"schema": {"type": "object", "required": ["id"],
                                "properties": {"id": {"type": "string"}}}}}},
                    "400": {"description": "Invalid report; the body names the field", "content": error.clone()},
                    "500": {"description": "The audit record could not be written", "content": error}
                }
            }},
            "/v1/hooks/claude-code": {"post": {
                "operationId": "claudeCodeHook",
                "summary": "Claude Code PreToolUse / PermissionRequest hook (always 2xx; failures are denies)",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}}}},
                "responses": {"200": {"description": "The hook output for the event",
                    "content": {"application/json": {"schema": {"type": "object"}}}}}
            }},
            "/v1/hooks/codex": {"post": {
                "operationId": "codexHook",
                "summary": "Codex PreToolUse / PermissionRequest hook, called by `guardian hook codex` (always 2xx; failures are denies)",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}}}},
                "responses": {"200": {"description": "The hook output for the event",
                    "content": {"application/json": {"schema": {"type": "object"}}}}}
            }},
            "/v1/policy": {"get": {
                "operationId": "policy",
                "summary": "The effective rules with their sources",
                "responses": {"200": {"description": "Rules in evaluation order",
                    "content": {"application/json": {"schema": {"type": "object"}}}}}
            }},
            "/healthz": {"get": {
                "operationId": "health",
                "responses": {"200": {"description": "The service is up",
                    "content": {"application/json": {"schema": {"type": "object"}}}}}
            }}
        },
        "components": {"schemas": Value::Object(schemas)}
    })
}
