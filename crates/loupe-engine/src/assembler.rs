//! One long-lived thread that runs every assembly of the process.
//!
//! Why a dedicated thread: tiktoken's pre-tokenizer (a `fancy_regex`) and
//! the guard's patterns keep their scratch space in pools whose fast path
//! belongs to the first thread that used them; every other thread takes a
//! lock per match, and token counting matches once per pre-token. On the
//! benchmark machine the same assembly took 24 ms on the owning thread and
//! 33 ms elsewhere (BENCHMARKS.md). Running all assemblies here makes this
//! thread the owner, and it builds the BPE table and the patterns
//! ([`loupe_assemble::warm_up`]) as soon as a project opens, not when the
//! first question arrives.
//!
//! Assemblies are short (milliseconds) and a user asks one at a time, so
//! one thread is enough; jobs queue in order.
//!
//! *Invariant:* a job that panics becomes an [`Error::Task`] for its caller;
//! the thread survives it. If the thread cannot be started, jobs run on
//! tokio's blocking pool instead.

use std::panic::AssertUnwindSafe;
use std::sync::OnceLock;
use std::sync::mpsc;

use crate::{Error, Result};

type Job = Box<dyn FnOnce() + Send + 'static>;

fn worker() -> Option<&'static mpsc::Sender<Job>> {
    static WORKER: OnceLock<Option<mpsc::Sender<Job>>> = OnceLock::new();
    WORKER
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("loupe-assemble".into())
                .spawn(move || {
                    loupe_assemble::warm_up();
                    for job in rx {
                        job();
                    }
                })
                .ok()?;
            Some(tx)
        })
        .as_ref()
}

/// Starts the thread (and its warm-up) if it is not running yet.
pub fn start() {
    let _ = worker();
}

/// Runs `f` on the assembly thread and waits for it without blocking the
/// async runtime.
pub async fn run<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> Result<R> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _ = tx.send(std::panic::catch_unwind(AssertUnwindSafe(f)));
    });
    let unsent = match worker() {
        Some(w) => w.send(job).err().map(|e| e.0),
        None => Some(job),
    };
    if let Some(job) = unsent {
        tokio::task::spawn_blocking(job)
            .await
            .map_err(|e| Error::Task(format!("assembly did not finish: {e}")))?;
    }
    match rx.await {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(panic)) => Err(Error::Task(format!(
            "assembly failed: {}",
            crate::error::panic_message(panic.as_ref())
        ))),
        Err(_) => Err(Error::Task("assembly thread stopped".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn runs_jobs_on_one_thread_and_survives_a_panic() {
        let a = run(|| std::thread::current().id()).await.unwrap();
        let err = run(|| -> u32 { panic!("boom") }).await.unwrap_err();
        assert!(err.to_string().contains("boom"), "{err}");
        let b = run(|| std::thread::current().id()).await.unwrap();
        assert_eq!(a, b, "every job runs on the same thread");
        assert_ne!(a, std::thread::current().id());
    }
}
