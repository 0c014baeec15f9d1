//! The engine's integration tests: one binary, one module per stage.

mod chunk;
