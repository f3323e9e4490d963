//! Every way reading, labelling or importing eval cases can fail, each naming the file and line
//! (or the call) it is about.

use std::path::PathBuf;

/// An eval input that could not be read, written or converted.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line that is not a case (or not JSON).
    #[error("{}:{line}: {source}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What serde said.
        source: serde_json::Error,
    },
    /// A case that has no label yet (`traces import` leaves labels null).
    #[error(
        "{}:{line}: case {id} is unlabeled (expected is null): label it first with `guardian eval --label {}`",
        path.display(),
        path.display()
    )]
    Unlabeled {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The case's id, as written.
        id: serde_json::Value,
    },
    /// The labelling terminal could not be read or written.
    #[error("terminal: {0}")]
    Terminal(std::io::Error),
    /// A case could not be encoded back to JSON.
    #[error("{0}")]
    Encode(serde_json::Error),
    /// The request of an imported tool call could not be encoded.
    #[error("cannot encode the request of {call}: {source}")]
    EncodeRequest {
        /// The call id.
        call: String,
        /// What serde said.
        source: serde_json::Error,
    },
    /// An agent whose sessions guardian does not read.
    #[error("{0}: guardian reads no recorded sessions of this agent")]
    NoSessions(String),
    /// R-Judge data that is not a list of records.
    #[error("expected a JSON array of records")]
    NotRecords,
    /// RedCode data that is not a list.
    #[error("expected a JSON array")]
    NotAnArray,
}
