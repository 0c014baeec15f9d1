//! The role of a file (code, docs, tests, config, other), from its path.

use loupe_assemble::Role;

/// Classify a relative path (with `/` separators).
pub fn role_for_path(_rel_path: &str) -> Role {
    Role::Code
}
