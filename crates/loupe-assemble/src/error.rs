//! The one error type of `loupe-assemble`.
//!
//! Assembly is total over its inputs: bad knobs degrade to defaults and are
//! reported as warnings, so errors are rare. They exist for the few cases
//! where continuing would mislead the caller (an invalid glob, a conversation
//! that would reach a model without a question).

use thiserror::Error;

/// Everything that can go wrong in assembly.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    /// A path-weight glob did not compile.
    #[error("invalid path glob {glob:?}: {message}")]
    InvalidGlob {
        /// The glob as the user wrote it.
        glob: String,
        /// globset's explanation.
        message: String,
    },
    /// The fitted conversation has fewer than two messages.
    #[error("the conversation needs at least two messages (system and user), got {0}")]
    TooFewMessages(usize),
    /// The last fitted message is not from the user.
    #[error("the last message must come from the user, not {0}")]
    LastNotUser(String),
    /// The last user message is empty (after trimming): the model would get no question.
    #[error("the user message is empty: there is no question to send")]
    EmptyQuestion,
}

/// `Result` with this crate's [`Error`](enum@Error).
pub type Result<T> = std::result::Result<T, Error>;
