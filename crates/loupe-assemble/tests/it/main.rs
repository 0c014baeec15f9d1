//! Integration tests of `loupe-assemble`: one binary, one module per concern.

mod assemble;
mod properties;
mod snapshots;
mod support;
