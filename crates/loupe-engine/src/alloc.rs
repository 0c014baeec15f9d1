//! The allocator every Loupe process runs on, and what it is told at start.
//!
//! glibc's malloc keeps what an index run frees in the arenas of the
//! threads that used it: after a first index of the vendor corpus the
//! engine held about twice what one that reopened the same index held
//! (BENCHMARKS.md, "what the engine holds afterwards"), and returning it
//! would take `malloc_trim`, an `unsafe` call this workspace forbids.
//! jemalloc gives freed pages back to the system after a decay time, and
//! with its background threads on it does so while the process is idle
//! (the app while the user reads). MSVC targets keep the system allocator
//! (jemalloc does not build there).
//!
//! jemalloc is built with unprefixed symbols (`malloc`, `free`, …), so on
//! Linux every allocation in the process comes from it, the C code's too:
//! SQLite's page caches, tree-sitter's trees and, in the app, WebKitGTK's
//! GLib allocations, which glibc's malloc kept after they were freed just
//! as it kept Rust's. Apple targets keep the prefix (there `malloc` is
//! the system's zone allocator and C code keeps using it).
//!
//! Each binary names it once:
//! `#[global_allocator] static ALLOC: loupe_engine::alloc::Allocator = loupe_engine::alloc::Allocator;`
//! and calls [`return_freed_memory`] first thing in `main`.

#[cfg(target_env = "msvc")]
pub use std::alloc::System as Allocator;
#[cfg(not(target_env = "msvc"))]
pub use tikv_jemallocator::Jemalloc as Allocator;

/// Let the allocator give freed memory back while the process is idle
/// (jemalloc's background threads); without them it still does, but only
/// when the process allocates or frees again.
pub fn return_freed_memory() {
    #[cfg(not(target_env = "msvc"))]
    if let Err(e) = tikv_jemalloc_ctl::background_thread::write(true) {
        tracing::warn!("the allocator's background purging is off: {e}");
    }
}
