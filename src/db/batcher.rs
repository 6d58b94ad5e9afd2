//! Group commit for hot statements: requests that arrive while the database
//! is busy are gathered into one statement over arrays, so a burst of votes
//! costs PostgreSQL a handful of statements instead of one each. Nothing waits
//! for company: a lone request goes at once, and batches only grow while
//! earlier ones are in flight. A caller is answered only after its batch's
//! statement has returned, so an acknowledged write is committed.

use super::held::Held;
use super::statements::StatementPool;
use futures_util::future::BoxFuture;
use sqlx::PgConnection;
use std::sync::{Arc, OnceLock};
use tokio::sync::{mpsc, oneshot, Semaphore};

/// Why a batch failed as a whole.
pub type BatchError = Box<dyn std::error::Error + Send + Sync>;

/// Runs one batch: the inputs in arrival order, their outputs in the same
/// order, or why the batch failed as a whole.
pub type RunBatch<I, O> = Arc<dyn Fn(Vec<I>) -> BoxFuture<'static, Result<Vec<O>, BatchError>> + Send + Sync>;

/// One statement over a batch's inputs on a connection: their outputs in
/// input order.
pub type Statement<I, O, E> = for<'c> fn(&'c mut PgConnection, Vec<I>) -> BoxFuture<'c, Result<Vec<O>, E>>;

type Job<I, O> = (I, oneshot::Sender<Option<O>>);

/// A batching front for one statement. Its worker task starts with the first
/// request, on that request's runtime, and ends when the batcher is dropped.
pub struct Batcher<I, O> {
    /// Names the statement in the log when a batch fails.
    name: &'static str,
    run: RunBatch<I, O>,
    max_batch: usize,
    in_flight: usize,
    sender: OnceLock<mpsc::UnboundedSender<Job<I, O>>>,
}

impl<I: Send + 'static, O: Send + 'static> Batcher<I, O> {
    /// A batcher for the statement `name`, taking at most `max_batch`
    /// requests per statement, with at most `in_flight` running at once.
    pub fn new(name: &'static str, max_batch: usize, in_flight: usize, run: RunBatch<I, O>) -> Self {
        Self { name, run, max_batch: max_batch.max(1), in_flight: in_flight.max(1), sender: OnceLock::new() }
    }

    /// A batcher running `statement` on `in_flight` connections held from
    /// `statements` (see [`Held`]): a hot statement skips the pool's check
    /// of every connection returned to it.
    pub fn on_held<E>(
        name: &'static str,
        max_batch: usize,
        in_flight: usize,
        statements: StatementPool,
        statement: Statement<I, O, E>,
    ) -> Self
    where
        E: From<sqlx::Error> + Into<BatchError> + 'static,
    {
        let held = Arc::new(Held::new(statements.pool().clone(), in_flight));
        let run: RunBatch<I, O> = Arc::new(move |inputs| {
            let held = held.clone();
            Box::pin(async move { held.run(async move |conn| statement(conn, inputs).await).await.map_err(Into::into) })
        });
        Self::new(name, max_batch, in_flight, run)
    }

    /// This request's output once its batch has run; `None` when the batch
    /// failed (logged here, once) or the service is stopping: the caller then
    /// does the work alone, on its own path, which reports its own error.
    pub async fn call(&self, input: I) -> Option<O> {
        let (reply, answer) = oneshot::channel();
        self.sender().send((input, reply)).ok()?;
        answer.await.ok().flatten()
    }

    fn sender(&self) -> &mpsc::UnboundedSender<Job<I, O>> {
        self.sender.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            let slots = Arc::new(Semaphore::new(self.in_flight));
            tokio::spawn(serve(rx, self.name, self.run.clone(), self.max_batch, slots));
            tx
        })
    }
}

async fn serve<I: Send + 'static, O: Send + 'static>(
    mut rx: mpsc::UnboundedReceiver<Job<I, O>>,
    name: &'static str,
    run: RunBatch<I, O>,
    max_batch: usize,
    slots: Arc<Semaphore>,
) {
    while let Some(first) = rx.recv().await {
        // Wait for a free slot before gathering: requests arriving meanwhile
        // join this batch instead of queueing behind it.
        let Ok(slot) = slots.clone().acquire_owned().await else { return };
        let mut jobs = vec![first];
        while jobs.len() < max_batch {
            match rx.try_recv() {
                Ok(job) => jobs.push(job),
                Err(_) => break,
            }
        }
        let run = run.clone();
        tokio::spawn(async move {
            let (inputs, replies): (Vec<I>, Vec<_>) = jobs.into_iter().unzip();
            let expected = inputs.len();
            let started = std::time::Instant::now();
            let outcome = run(inputs).await;
            // How full statements are and how long they take: the two figures
            // that tell whether batching works (names are static, labels bounded).
            metrics::histogram!("atelier_batch_size", "statement" => name).record(expected as f64);
            metrics::histogram!("atelier_batch_seconds", "statement" => name).record(started.elapsed().as_secs_f64());
            match outcome {
                Ok(outputs) if outputs.len() == expected => {
                    for (reply, output) in replies.into_iter().zip(outputs) {
                        let _ = reply.send(Some(output));
                    }
                }
                failed => {
                    match failed {
                        Err(e) => tracing::warn!(statement = name, error = %e, "batch failed; its requests go alone"),
                        Ok(_) => tracing::error!(statement = name, "batch answered a wrong number of rows"),
                    }
                    for reply in replies {
                        let _ = reply.send(None);
                    }
                }
            }
            drop(slot);
        });
    }
}

/// Rows numbered 1..=n by `WITH ORDINALITY` over a batch's input arrays,
/// as one slot per input in input order (`None`: no row for that input).
pub fn in_input_order<T>(n: usize, rows: impl IntoIterator<Item = (i64, T)>) -> Vec<Option<T>> {
    let mut out: Vec<Option<T>> = (0..n).map(|_| None).collect();
    for (i, row) in rows {
        if let Some(slot) = usize::try_from(i - 1).ok().and_then(|i| out.get_mut(i)) {
            *slot = Some(row);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn doubling(batches: Arc<AtomicUsize>, largest: Arc<AtomicUsize>) -> RunBatch<u32, u32> {
        Arc::new(move |inputs: Vec<u32>| {
            let (batches, largest) = (batches.clone(), largest.clone());
            Box::pin(async move {
                batches.fetch_add(1, Ordering::SeqCst);
                largest.fetch_max(inputs.len(), Ordering::SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                Ok(inputs.into_iter().map(|i| i * 2).collect())
            })
        })
    }

    #[tokio::test]
    async fn concurrent_requests_share_statements_and_each_gets_its_own_answer() {
        let (batches, largest) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let batcher = Arc::new(Batcher::new("doubling", 64, 1, doubling(batches.clone(), largest.clone())));
        let calls: Vec<_> = (0..100u32)
            .map(|i| {
                let b = batcher.clone();
                tokio::spawn(async move { (i, b.call(i).await) })
            })
            .collect();
        for call in calls {
            let (i, out) = call.await.expect("task");
            assert_eq!(out, Some(i * 2));
        }
        let n = batches.load(Ordering::SeqCst);
        assert!(n < 100, "{n} statements for 100 requests");
        assert!(largest.load(Ordering::SeqCst) <= 64);
    }

    #[tokio::test]
    async fn a_lone_request_goes_at_once_and_a_failed_batch_answers_none() {
        let batcher: Batcher<u32, u32> = Batcher::new(
            "sevens fail",
            8,
            2,
            Arc::new(|inputs: Vec<u32>| {
                Box::pin(async move {
                    if inputs[0] == 7 {
                        Err("seven".into())
                    } else {
                        Ok(inputs)
                    }
                }) as BoxFuture<'static, _>
            }),
        );
        assert_eq!(batcher.call(3).await, Some(3));
        assert_eq!(batcher.call(7).await, None);
        let short: Batcher<u32, u32> = Batcher::new(
            "short",
            8,
            1,
            Arc::new(|_inputs: Vec<u32>| Box::pin(async { Ok(vec![]) }) as BoxFuture<'static, _>),
        );
        assert_eq!(short.call(1).await, None, "a batch answering too few outputs fails as a whole");
    }

    #[test]
    fn numbered_rows_land_in_input_order_and_missing_ones_stay_empty() {
        assert_eq!(in_input_order(4, [(3, 'c'), (1, 'a'), (9, 'x'), (0, 'z')]), vec![Some('a'), None, Some('c'), None]);
    }
}
