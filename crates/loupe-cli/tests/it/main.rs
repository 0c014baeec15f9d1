//! End-to-end tests of the `loupe` binary.
#![allow(
    clippy::unwrap_used,
    missing_docs,
    reason = "tests fail loudly on unwrap; helpers need no docs"
)]

mod cli;
mod copy;
mod crash;
mod eval;
mod expand;
mod golden;
mod history;
mod map;
mod models;
mod review;
mod shared;
mod support;
mod team;
