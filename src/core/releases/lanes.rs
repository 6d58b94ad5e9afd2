//! How a release's work is spread over the machine: a queue of jobs that
//! lanes (threads) take in order as they come free, and the slots through
//! which a job hands what it made to the jobs after it.

use crate::error::{Error, Result};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// One piece of a release's work (it puts what it makes in a [`Slot`]).
pub type Job<'a> = Box<dyn FnOnce() + Send + 'a>;

/// How many lanes take the jobs: cutting a release is waited for in the
/// browser; verifying one runs on a reader's laptop, where its peak memory
/// matters more than a second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lanes {
    /// Two threads, each taking the next job as it comes free.
    Two,
    /// One thread, the jobs one after the other: the aggregation's working
    /// memory is gone before the Parquet tables are built (a lower peak for
    /// a longer run).
    One,
}

impl Lanes {
    /// Runs every job once, each taken in order by the first lane free. A
    /// job may wait for what an earlier job makes (taken earlier, so being
    /// made or made), never for a later one's.
    pub fn share(self, jobs: Vec<Job<'_>>) {
        let queue = Mutex::new(jobs.into_iter());
        let lane = || loop {
            let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
            match next {
                Some(job) => job(),
                None => break,
            }
        };
        match self {
            Lanes::One => lane(),
            Lanes::Two => std::thread::scope(|lanes| {
                lanes.spawn(lane);
                lane();
            }),
        }
    }
}

/// Where a slot is.
enum State<T> {
    /// Not made yet.
    Waiting,
    /// Made.
    Made(T),
    /// Making it failed (or panicked).
    Failed(Error),
    /// Taken by the job that needed it.
    Taken,
}

/// What one job makes, for the jobs that wait for it and for whoever
/// gathers the results.
pub struct Slot<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Self { state: Mutex::new(State::Waiting), ready: Condvar::new() }
    }
}

impl<T> Slot<T> {
    /// Makes the value. A panic is kept as an error, so that no job waits
    /// for ever and the cut reports it.
    pub fn fill(&self, make: impl FnOnce() -> Result<T>) {
        let made = catch_unwind(AssertUnwindSafe(make))
            .unwrap_or_else(|_| Err(Error::unexpected("making a release's files panicked")));
        *self.lock() = match made {
            Ok(value) => State::Made(value),
            Err(e) => State::Failed(e),
        };
        self.ready.notify_all();
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The state once the value is made (or failed).
    fn made(&self) -> MutexGuard<'_, State<T>> {
        let mut state = self.lock();
        while matches!(*state, State::Waiting) {
            state = self.ready.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        state
    }

    /// Waits for the value and gives a copy (an `Arc`, or something as
    /// small); an error if making it failed (the error itself stays for
    /// [`Slot::finish`]).
    pub fn get(&self) -> Result<T>
    where
        T: Clone,
    {
        match &*self.made() {
            State::Made(value) => Ok(value.clone()),
            _ => Err(earlier_failed()),
        }
    }

    /// Waits for the value and takes it (one job may).
    pub fn take(&self) -> Result<T> {
        let mut state = self.made();
        match std::mem::replace(&mut *state, State::Taken) {
            State::Made(value) => Ok(value),
            other => {
                *state = other;
                Err(earlier_failed())
            }
        }
    }

    /// The value, once every job has run: `None` if a job took it; the
    /// error if making it failed.
    pub fn finish(self) -> Result<Option<T>> {
        match self.state.into_inner().unwrap_or_else(PoisonError::into_inner) {
            State::Made(value) => Ok(Some(value)),
            State::Taken => Ok(None),
            State::Failed(e) => Err(e),
            State::Waiting => Err(Error::unexpected("a release's file was never made")),
        }
    }
}

/// What a job that needed a failed job's value says (the failed job's own
/// error is the one reported).
fn earlier_failed() -> Error {
    Error::unexpected("an earlier part of the release failed")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_job_runs_once_and_later_jobs_get_what_earlier_ones_made() {
        for lanes in [Lanes::One, Lanes::Two] {
            let (first, second, third) = (Slot::default(), Slot::default(), Slot::<usize>::default());
            let runs = AtomicUsize::new(0);
            let mut jobs: Vec<Job<'_>> = vec![
                Box::new(|| first.fill(|| Ok(std::sync::Arc::new(20)))),
                Box::new(|| second.fill(|| Ok(first.get()?.as_ref() + 1))),
                Box::new(|| third.fill(|| Ok(second.take()? + *first.get()?))),
            ];
            jobs.extend((0..20).map(|_| -> Job<'_> {
                Box::new(|| {
                    runs.fetch_add(1, Ordering::Relaxed);
                })
            }));
            lanes.share(jobs);
            assert_eq!(runs.into_inner(), 20);
            assert_eq!(first.finish().expect("made").map(|v| *v), Some(20));
            assert_eq!(second.finish().expect("taken"), None);
            assert_eq!(third.finish().expect("made"), Some(41));
        }
    }

    #[test]
    fn a_failed_or_panicking_job_is_reported_and_leaves_no_one_waiting() {
        for lanes in [Lanes::One, Lanes::Two] {
            let (failed, panicked, after) = (Slot::<u8>::default(), Slot::<u8>::default(), Slot::<u8>::default());
            lanes.share(vec![
                Box::new(|| failed.fill(|| Err(Error::unexpected("the first job's own error")))),
                Box::new(|| panicked.fill(|| panic!("a job panics"))),
                Box::new(|| after.fill(|| Ok(failed.get()? + panicked.take()?))),
            ]);
            assert!(failed.finish().is_err_and(|e| e.to_string().contains("the first job's own error")));
            assert!(panicked.finish().is_err_and(|e| e.to_string().contains("panicked")));
            assert!(after.finish().is_err_and(|e| e.to_string().contains("earlier part")));
        }
    }
}
