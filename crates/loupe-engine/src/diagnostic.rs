//! Diagnostics: per-file problems recorded as data, shown to the user, never
//! fatal to a run.

use serde::{Deserialize, Serialize};

/// Why a path was skipped or degraded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosticKind {
    /// Contains NUL bytes in its first block: treated as binary.
    Binary,
    /// Over the size cap.
    TooLarge,
    /// Could not be read (permissions, I/O error).
    Unreadable,
    /// Not valid UTF-8.
    InvalidUtf8,
    /// Part of a symbolic-link loop.
    SymlinkLoop,
    /// Disappeared between the walk and the read.
    Vanished,
    /// The path itself is not valid UTF-8.
    BadPath,
    /// Parsed, but degraded (parse timeout, too large to parse, syntax errors).
    Degraded,
}

impl DiagnosticKind {
    /// Stable snake_case name, as stored in the catalog.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Binary => "binary",
            Self::TooLarge => "too_large",
            Self::Unreadable => "unreadable",
            Self::InvalidUtf8 => "invalid_utf8",
            Self::SymlinkLoop => "symlink_loop",
            Self::Vanished => "vanished",
            Self::BadPath => "bad_path",
            Self::Degraded => "degraded",
        }
    }

    /// Inverse of [`Self::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "binary" => Self::Binary,
            "too_large" => Self::TooLarge,
            "unreadable" => Self::Unreadable,
            "invalid_utf8" => Self::InvalidUtf8,
            "symlink_loop" => Self::SymlinkLoop,
            "vanished" => Self::Vanished,
            "bad_path" => Self::BadPath,
            "degraded" => Self::Degraded,
            _ => return None,
        })
    }
}

/// One problem with one path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Relative path (or the absolute one when it is outside the root).
    pub path: String,
    /// Category.
    pub kind: DiagnosticKind,
    /// Human-readable detail.
    pub message: String,
}

impl Diagnostic {
    /// Build a diagnostic.
    pub fn new(
        path: impl Into<String>,
        kind: DiagnosticKind,
        message: impl std::fmt::Display,
    ) -> Self {
        Self {
            path: path.into(),
            kind,
            message: message.to_string(),
        }
    }
}
