//! One thread for the big in-memory computations (ground truths and the
//! exports read back from them). Kept on one long-lived thread, they reuse
//! the memory each other freed: spread over the blocking pool, every thread
//! kept its own freed hundreds of MB and the service's RSS climbed with each
//! export. They run one at a time, which on a small machine they would
//! nearly do anyway.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

/// How often the idle thread returns freed memory after a computation.
const IDLE_TIDY: Duration = Duration::from_secs(1);
/// How many times: a job's result is dropped by its waiter within moments.
const IDLE_TIDIES: u32 = 10;

type Job = Box<dyn FnOnce() + Send>;

static QUEUE: LazyLock<Mutex<Option<mpsc::Sender<Job>>>> = LazyLock::new(|| {
    let (send, receive) = mpsc::channel::<Job>();
    let started = std::thread::Builder::new().name("atelier-heavy".into()).spawn(move || {
        // Idle seconds left in which to return memory again: a result (a
        // release's archive) is dropped by its waiter after the job is done.
        let mut tidy = 0;
        loop {
            let job = match tidy {
                0 => receive.recv().map_err(|_| RecvTimeoutError::Disconnected),
                _ => receive.recv_timeout(IDLE_TIDY),
            };
            match job {
                Ok(job) => {
                    // A panicking computation fails its own request (its
                    // waiter hears nothing back), not the thread.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    tidy = IDLE_TIDIES;
                }
                Err(RecvTimeoutError::Timeout) => tidy -= 1,
                Err(RecvTimeoutError::Disconnected) => break,
            }
            return_freed_memory();
        }
    });
    Mutex::new(started.ok().map(|_| send))
});

/// Gives the memory the calling thread freed back to the system now, with
/// what exited threads left to be purged. mimalloc (the service's
/// allocator) returns freed memory lazily, on a thread's later allocations
/// and after a delay, and this thread sleeps between computations: a release
/// cut's few hundred MB stayed resident until the next computation. Big
/// computations call it too where they have just freed a large part of
/// their working memory (it lowers a cut's peak).
#[allow(unsafe_code)]
pub fn return_freed_memory() {
    // SAFETY: `mi_collect` takes no pointers and only trims the calling
    // thread's own heap and the shared arenas' pending purges; it may be
    // called at any time, and does nothing harmful when mimalloc is not the
    // global allocator (as in tests).
    unsafe { libmimalloc_sys::mi_collect(true) }
}

/// mimalloc's `mi_option_purge_delay` (the 16th option of the `mimalloc.h`
/// that `libmimalloc-sys` builds, version 3; the crate names the options
/// around it, not it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// How long freed memory waits before it goes back to the system while a
/// [`PromptPurge`] lasts, in ms (mimalloc 3's default is 1,000): a short
/// delay lowers a cut's peak at little cost, none at all costs the cut time.
const PROMPT_PURGE_MS: std::ffi::c_long = 2;

/// While it lasts, freed memory goes back to the system after
/// `PROMPT_PURGE_MS` instead of mimalloc's second, service-wide: for a
/// computation whose freed working memory would otherwise sit on top of its
/// next part's (a release cut). Dropped, it restores the delay it found.
pub struct PromptPurge(std::ffi::c_long);

impl PromptPurge {
    /// Shortens the delay until the value is dropped.
    pub fn start() -> Self {
        let found = purge_delay();
        set_purge_delay(PROMPT_PURGE_MS);
        Self(found)
    }
}

impl Drop for PromptPurge {
    fn drop(&mut self) {
        set_purge_delay(self.0);
    }
}

/// mimalloc's purge delay now, in ms.
#[allow(unsafe_code)]
fn purge_delay() -> std::ffi::c_long {
    // SAFETY: reading an option takes no pointers (mimalloc reads its
    // options atomically; without it as the global allocator, as in tests,
    // the option is read all the same and nothing uses it).
    unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) }
}

/// Sets mimalloc's purge delay, in ms, for every thread.
#[allow(unsafe_code)]
fn set_purge_delay(ms: std::ffi::c_long) {
    // SAFETY: setting an option takes no pointers; mimalloc reads its options
    // atomically, so other threads see the old delay or the new one.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, ms) }
}

/// How often an idle async worker returns what it freed, at most.
const WORKER_TIDY: Duration = Duration::from_secs(1);

/// Returns what the calling thread freed, if it has not done so in the last
/// `WORKER_TIDY`: for the async workers, called as they fall idle. mimalloc
/// purges a thread's freed pages on that thread's later allocations, and an
/// idle worker makes none: after a crowd's rating and an admin's exports the
/// workers held memory a restarted service does not, and a release cut's
/// peak sat on top of it. At most once a second: a worker under load parks
/// thousands of times a second, and each return costs its next allocations
/// fresh pages. Whether it returned memory this time.
pub fn tidy_idle_thread() -> bool {
    use std::cell::Cell;
    use std::time::Instant;
    thread_local! {
        static TIDIED: Cell<Option<Instant>> = const { Cell::new(None) };
    }
    let due = TIDIED.with(|tidied| {
        let now = Instant::now();
        let due = tidied.get().is_none_or(|at| now.duration_since(at) >= WORKER_TIDY);
        if due {
            tidied.set(Some(now));
        }
        due
    });
    if due {
        return_freed_memory();
    }
    due
}

/// Runs `work` on the heavy-work thread and waits for it without blocking
/// the async workers (on the blocking pool if that thread is gone).
pub async fn run<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> crate::error::Result<T> {
    let (done, result) = tokio::sync::oneshot::channel();
    // The work is timed within its request's span, on whichever thread.
    let span = tracing::debug_span!(parent: tracing::Span::current(), "heavy");
    let job: Job = Box::new(move || {
        // The waiter may have gone (its request dropped): nothing to tell.
        let _ = done.send(span.in_scope(work));
    });
    if let Err(job) = queue(job) {
        tokio::task::spawn_blocking(job)
            .await
            .map_err(|e| crate::error::Error::internal("a computation off the async workers", e))?;
    }
    result.await.map_err(|_| crate::error::Error::unexpected("the computation was abandoned"))
}

/// Queues `work` on the heavy-work thread without waiting for it: tidying
/// up after a request has its answer (on the blocking pool if that thread
/// is gone). Call from within the runtime.
pub fn spawn(work: impl FnOnce() + Send + 'static) {
    let span = tracing::debug_span!(parent: tracing::Span::current(), "heavy, not waited for");
    if let Err(job) = queue(Box::new(move || span.in_scope(work))) {
        drop(tokio::task::spawn_blocking(job));
    }
}

/// Hands `job` to the heavy-work thread; back if there is none (it could
/// not start, or panicked).
fn queue(job: Job) -> Result<(), Job> {
    match QUEUE.lock() {
        Ok(queue) => match queue.as_ref() {
            Some(send) => send.send(job).map_err(|refused| refused.0),
            None => Err(job),
        },
        Err(_) => Err(job),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_prompt_purge_shortens_the_delay_while_it_lasts_then_restores_it() {
        let found = super::purge_delay();
        // Its documented default: the option numbered is the purge delay.
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(found, 1000, "mimalloc 3's default purge delay");
        }
        {
            let _prompt = super::PromptPurge::start();
            assert_eq!(super::purge_delay(), super::PROMPT_PURGE_MS);
        }
        assert_eq!(super::purge_delay(), found);
    }

    #[test]
    fn an_idle_worker_returns_memory_at_most_once_a_second() {
        std::thread::spawn(|| {
            assert!(super::tidy_idle_thread(), "a thread's first idle moment");
            assert!(!super::tidy_idle_thread(), "not again at once");
            std::thread::sleep(super::WORKER_TIDY + std::time::Duration::from_millis(50));
            assert!(super::tidy_idle_thread(), "again a second later");
        })
        .join()
        .expect("the checks passed");
    }

    #[tokio::test]
    async fn a_panicking_computation_fails_alone() {
        let failed = super::run(|| -> usize { panic!("a bug in a kind") }).await;
        assert!(failed.is_err());
        assert_eq!(super::run(|| 7).await.expect("the thread lives on"), 7);
    }

    #[tokio::test]
    async fn the_thread_takes_work_again_after_idle_seconds_spent_returning_memory() {
        assert_eq!(super::run(|| 1).await.expect("ran"), 1);
        tokio::time::sleep(super::IDLE_TIDY * 2 + std::time::Duration::from_millis(200)).await;
        let (value, name) = super::run(|| (2, std::thread::current().name().map(str::to_owned))).await.expect("ran");
        assert_eq!((value, name.as_deref()), (2, Some("atelier-heavy")), "the same thread, still serving");
    }

    #[tokio::test]
    async fn work_not_waited_for_runs_on_the_same_thread() {
        let (tell, told) = tokio::sync::oneshot::channel();
        super::spawn(move || drop(tell.send(std::thread::current().name().map(str::to_owned))));
        assert_eq!(told.await.expect("ran").as_deref(), Some("atelier-heavy"));
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
