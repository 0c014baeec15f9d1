//! The `loupe` binary.
fn main() {}
