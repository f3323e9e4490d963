//! Turning evidence into an answer.
//!
//! This module owns every rule that makes a decision out of what the layers below found, like
//! cedar's authorizer between its evaluator and its API: the outcome table that bounds what a
//! reviewer's "allow" may stand for once the risk signals raised its risk ([`table`]), a scored
//! review's thresholds, their defaults and the local model's calibrated values ([`score`]), the
//! mandate's ruling on what an action does ([`mandate`]), the
//! all-must-pass combiner for requests answered together ([`combine`]), when a rule's allow
//! still goes to the reviewer ([`escalate`]), and the circuit breaker's verdict ([`breaker`]). The pipeline calls it; nothing below it knows it exists.
//! "Why was this denied?" is answered here.

pub mod breaker;
pub mod combine;
pub mod escalate;
pub mod mandate;
pub mod score;
pub mod table;

pub use combine::AllAllowed;
pub use score::{LOCAL_MODEL, Scored, Thresholds, combined_score, local_probe};
pub use table::{Table, final_risk, outcome_table};
