//! One thread for the big in-memory computations (ground truths and the
//! exports read back from them). Kept on one long-lived thread, they reuse
//! the memory each other freed: spread over the blocking pool, every thread
//! kept its own freed hundreds of MB and the service's RSS climbed with each
//! export. They run one at a time, which on a small machine they would
//! nearly do anyway.

use std::sync::mpsc;
use std::sync::{LazyLock, Mutex};

type Job = Box<dyn FnOnce() + Send>;

static QUEUE: LazyLock<Mutex<Option<mpsc::Sender<Job>>>> = LazyLock::new(|| {
    let (send, receive) = mpsc::channel::<Job>();
    let started = std::thread::Builder::new().name("atelier-heavy".into()).spawn(move || {
        while let Ok(job) = receive.recv() {
            // A panicking computation fails its own request (its waiter hears
            // nothing back), not the thread.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        }
    });
    Mutex::new(started.ok().map(|_| send))
});

/// Runs `work` on the heavy-work thread and waits for it without blocking
/// the async workers (on the blocking pool if that thread is gone).
pub async fn run<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> super::Result<T> {
    let (done, result) = tokio::sync::oneshot::channel();
    // The work is timed within its request's span, on whichever thread.
    let span = tracing::debug_span!(parent: tracing::Span::current(), "heavy");
    let job: Job = Box::new(move || {
        // The waiter may have gone (its request dropped): nothing to tell.
        let _ = done.send(span.in_scope(work));
    });
    let queued = match QUEUE.lock() {
        Ok(queue) => match queue.as_ref() {
            Some(send) => send.send(job).map_err(|refused| refused.0),
            None => Err(job),
        },
        Err(_) => Err(job),
    };
    if let Err(job) = queued {
        // No heavy-work thread (it could not start or panicked): the blocking pool.
        tokio::task::spawn_blocking(job)
            .await
            .map_err(|e| super::Error::internal("a computation off the async workers", e))?;
    }
    result.await.map_err(|_| super::Error::unexpected("the computation was abandoned"))
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn a_panicking_computation_fails_alone() {
        let failed = super::run(|| -> usize { panic!("a bug in a kind") }).await;
        assert!(failed.is_err());
        assert_eq!(super::run(|| 7).await.expect("the thread lives on"), 7);
    }

    #[tokio::test]
    async fn work_runs_on_one_named_thread_and_returns_its_result() {
        let names = futures_util::future::join_all(
            (0..4).map(|i| super::run(move || (i * 2, std::thread::current().name().map(str::to_owned)))),
        )
        .await;
        for (i, r) in names.into_iter().enumerate() {
            let (value, name) = r.expect("ran");
            assert_eq!(value, i * 2);
            assert_eq!(name.as_deref(), Some("atelier-heavy"));
        }
    }
}
