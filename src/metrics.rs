//! Prometheus metrics: what `GET /metrics` reports.
//!
//! This module owns the metric families and their text rendering (OpenMetrics, through the
//! `prometheus-client` crate). The pipeline counts decisions, reviewer latency, tokens, errors,
//! rate-limit rejections and breaker trips; the HTTP adapter counts shed requests, auth failures
//! and requests in flight. Every update is a lock-free atomic; only rendering takes the registry.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Labels of a decision.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DecisionLabels {
    /// rule, reviewer, session or fallback.
    pub decided_by: String,
    /// allow or deny.
    pub decision: String,
}

/// A single `kind` label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    /// The kind.
    pub kind: String,
}

/// Every metric guardian exports.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    /// `guardian_decisions_total{decided_by, decision}`.
    pub decisions: Family<DecisionLabels, Counter>,
    /// `guardian_review_duration_seconds`: request to decision, every decision.
    pub review_duration: Histogram,
    /// `guardian_reviewer_latency_seconds`: request to decision, when the reviewer was asked.
    pub reviewer_latency: Histogram,
    /// `guardian_reviewer_tokens_total{kind=prompt|completion}`.
    pub tokens: Family<KindLabels, Counter>,
    /// `guardian_errors_total{kind}`: fallback causes (timeout, http_status, invalid_output, …).
    pub errors: Family<KindLabels, Counter>,
    /// `guardian_rate_limited_total`: requests denied by a client or reviewer quota.
    pub rate_limited: Counter,
    /// `guardian_breaker_trips_total`: sessions told to stop.
    pub breaker_trips: Counter,
    /// `guardian_http_shed_total`: requests answered 503 because too many were in flight.
    pub shed: Counter,
    /// `guardian_http_auth_failures_total`: requests without a valid token.
    pub auth_failures: Counter,
    /// `guardian_http_requests_in_flight`.
    pub in_flight: Gauge,
    /// `guardian_session_store_errors_total`: session store calls that failed or timed out
    /// (each judged as if nothing were remembered, a denial interrupting).
    pub session_store_errors: Counter,
    /// `guardian_mandate_compiles_total{kind=compiled|cached|failed}`: requests compiled into a
    /// mandate, found compiled in the session store, or not compiled (a failure named in the
    /// audit record).
    pub mandate_compiles: Family<KindLabels, Counter>,
    /// `guardian_mandate_rulings_total{kind=granted|prohibited|partly}`: decisions the mandate
    /// settled or helped settle.
    pub mandate_rulings: Family<KindLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

fn latency_buckets() -> impl Iterator<Item = f64> {
    [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
        60.0, 120.0,
    ]
    .into_iter()
}

impl Metrics {
    /// A fresh registry with every family registered.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("guardian");
        let decisions = Family::<DecisionLabels, Counter>::default();
        registry.register(
            "decisions",
            "Decisions by who decided and what",
            decisions.clone(),
        );
        let review_duration = Histogram::new(latency_buckets());
        registry.register(
            "review_duration_seconds",
            "Time from request to decision",
            review_duration.clone(),
        );
        let reviewer_latency = Histogram::new(latency_buckets());
        registry.register(
            "reviewer_latency_seconds",
            "Time from request to decision when the reviewer model was asked",
            reviewer_latency.clone(),
        );
        let tokens = Family::<KindLabels, Counter>::default();
        registry.register("reviewer_tokens", "Reviewer tokens by kind", tokens.clone());
        let errors = Family::<KindLabels, Counter>::default();
        registry.register(
            "errors",
            "Fallback denials by cause (reviewer timeouts, HTTP errors, invalid output, …)",
            errors.clone(),
        );
        let rate_limited = Counter::default();
        registry.register(
            "rate_limited",
            "Requests denied by a client or reviewer quota",
            rate_limited.clone(),
        );
        let breaker_trips = Counter::default();
        registry.register(
            "breaker_trips",
            "Sessions told to stop by the circuit breaker",
            breaker_trips.clone(),
        );
        let shed = Counter::default();
        registry.register(
            "http_shed",
            "Requests answered 503 because too many were in flight",
            shed.clone(),
        );
        let auth_failures = Counter::default();
        registry.register(
            "http_auth_failures",
            "Requests without a valid bearer token",
            auth_failures.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "http_requests_in_flight",
            "Requests being handled",
            in_flight.clone(),
        );
        let session_store_errors = Counter::default();
        registry.register(
            "session_store_errors",
            "Session store calls that failed or timed out (judged afresh, denials interrupt)",
            session_store_errors.clone(),
        );
        let mandate_compiles = Family::<KindLabels, Counter>::default();
        registry.register(
            "mandate_compiles",
            "User requests compiled into a mandate (compiled, cached, failed)",
            mandate_compiles.clone(),
        );
        let mandate_rulings = Family::<KindLabels, Counter>::default();
        registry.register(
            "mandate_rulings",
            "Decisions the mandate settled (granted, prohibited) or helped (partly)",
            mandate_rulings.clone(),
        );
        Metrics {
            mandate_compiles,
            mandate_rulings,
            registry,
            decisions,
            review_duration,
            reviewer_latency,
            tokens,
            errors,
            rate_limited,
            breaker_trips,
            shed,
            auth_failures,
            in_flight,
            session_store_errors,
        }
    }

    /// Counts one error of `kind`.
    pub fn error(&self, kind: &str) {
        self.errors
            .get_or_create(&KindLabels {
                kind: kind.to_string(),
            })
            .inc();
    }

    /// The OpenMetrics text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}
