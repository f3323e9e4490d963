//! The all-must-pass combiner: one answer for requests that must all be allowed.

use crate::verdict::{Decision, ReviewResponse};

/// The answer to requests that must ALL be allowed (the files of a patch, an escalation's paths,
/// a command and the host it asks for): the first hard deny answers at once; an unreviewed deny
/// answers only when nothing is denied outright, so a question to the user never hides a real
/// deny; otherwise the last allow.
#[derive(Debug, Default)]
pub struct AllAllowed {
    last_allow: Option<ReviewResponse>,
    unreviewed: Option<ReviewResponse>,
}

impl AllAllowed {
    /// Takes one answer; a hard deny is returned: it is the answer, nothing else need be asked.
    pub fn push(&mut self, resp: ReviewResponse) -> Option<ReviewResponse> {
        match resp.decision {
            Decision::Allow => self.last_allow = Some(resp),
            Decision::Deny if resp.unreviewed => {
                self.unreviewed.get_or_insert(resp);
            }
            Decision::Deny => return Some(resp),
        }
        None
    }

    /// The answer once every request was answered; `None` when there was none.
    pub fn finish(self) -> Option<ReviewResponse> {
        self.unreviewed.or(self.last_allow)
    }
}
