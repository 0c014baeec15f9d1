//! Asking: from a question to the candidates and the assembled prompt,
//! and the tools built on that door.
//!
//! ```text
//! AskRequest → ask: change, expand, retrieve (one module per signal),
//!   ablate, selection (pins, bans) → the assembly thread → Answer
//! golden (expected files and symbols), map (the token map), agent_log (what agents got)
//! ```
//!
//! In: an [`AskRequest`](ask::AskRequest) or a
//! [`RetrieveQuery`](retrieve::RetrieveQuery) and a
//! [`Project`](crate::project::Project)'s snapshot of the
//! [`stores`](crate::stores). Out: [`Candidate`](loupe_assemble::Candidate)s
//! with raw signals, an [`Answer`](ask::Answer), golden reports, the token
//! map and the agent log. The top of the pipeline: it depends on
//! `project` and the folders below it, and nothing in the crate depends on
//! it except the flat re-exports in `lib.rs`. `agent_log` is here because
//! it records asks and uses [`selection`]; the assembly thread is not
//! ([`crate::assembler`]): [`Project::open`](crate::project::Project::open)
//! starts it, so it sits at the root with `project`.

pub mod ablate;
pub mod agent_log;
pub mod ask;
pub mod change;
pub mod expand;
pub mod golden;
pub mod map;
pub mod retrieve;
pub mod selection;
