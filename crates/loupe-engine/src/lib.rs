//! Loupe's engine: everything that touches files, databases and indexes.

pub mod chunk;
pub mod lang;
pub mod role;
