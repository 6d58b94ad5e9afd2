//! Concurrent reads of the same thing share one computation: an admin's
//! campaign page counts hundreds of thousands of responses, and four views
//! at once (a team watching a launch) would count them four times over.
//!
//! A read joins a computation only while it is running: it may get a count
//! that began shortly before it arrived, never one that had finished (there
//! is no cache). A failed computation is not shared: each of its waiters
//! then reads on its own and reports its own error.

use futures_util::future::{BoxFuture, FutureExt, Shared};
use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

type Running<V, E> = Shared<BoxFuture<'static, Arc<Result<V, E>>>>;

/// Computations in flight, by key.
pub struct Coalesced<K, V, E> {
    running: Arc<Mutex<HashMap<K, Running<V, E>>>>,
}

impl<K, V, E> Default for Coalesced<K, V, E> {
    fn default() -> Self {
        Self { running: Arc::new(Mutex::new(HashMap::new())) }
    }
}

impl<K, V, E> Coalesced<K, V, E>
where
    K: Eq + Hash + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
    E: Send + Sync + 'static,
{
    /// The value for `key`: from the computation of it already running,
    /// else from `compute`, which later readers of the same key join.
    pub async fn get<F, Fut>(&self, key: K, compute: F) -> Result<V, E>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<V, E>> + Send + 'static,
    {
        let running = {
            let Ok(mut running) = self.running.lock() else { return compute().await };
            match running.get(&key) {
                Some(shared) => shared.clone(),
                None => {
                    let (registry, own_key, work) = (self.running.clone(), key.clone(), compute());
                    let shared = async move {
                        let result = Arc::new(work.await);
                        // Leaves the registry as it finishes: nobody joins a finished count.
                        if let Ok(mut running) = registry.lock() {
                            running.remove(&own_key);
                        }
                        result
                    }
                    .boxed()
                    .shared();
                    running.insert(key, shared.clone());
                    shared
                }
            }
        };
        match &*running.await {
            Ok(value) => Ok(value.clone()),
            Err(_) => compute().await,
        }
    }

    /// Computations running now.
    #[cfg(test)]
    fn running(&self) -> usize {
        self.running.lock().map_or(0, |r| r.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test]
    async fn concurrent_reads_share_one_computation_and_later_ones_compute_again() {
        let coalesced: Arc<Coalesced<u32, usize, String>> = Arc::default();
        let computed = Arc::new(AtomicUsize::new(0));
        let read = |coalesced: Arc<Coalesced<u32, usize, String>>, computed: Arc<AtomicUsize>| async move {
            coalesced
                .get(1, || {
                    let computed = computed.clone();
                    async move {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        Ok(computed.fetch_add(1, Ordering::SeqCst) + 1)
                    }
                })
                .await
        };
        let four: Vec<_> = (0..4).map(|_| tokio::spawn(read(coalesced.clone(), computed.clone()))).collect();
        let mut results = Vec::new();
        for r in four {
            results.push(r.await.expect("read finished"));
        }
        assert_eq!(results, vec![Ok(1); 4], "one computation for four concurrent reads");
        assert_eq!(coalesced.running(), 0, "a finished computation is not joined");
        assert_eq!(read(coalesced.clone(), computed.clone()).await, Ok(2), "a later read counts again");
    }

    #[tokio::test]
    async fn a_failed_computation_is_not_shared() {
        let coalesced: Arc<Coalesced<u32, usize, String>> = Arc::default();
        let calls = Arc::new(AtomicUsize::new(0));
        let read = |coalesced: Arc<Coalesced<u32, usize, String>>, calls: Arc<AtomicUsize>| async move {
            coalesced
                .get(7, || {
                    let calls = calls.clone();
                    async move {
                        let call = calls.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(30)).await;
                        if call == 0 {
                            Err("database gone".to_owned())
                        } else {
                            Ok(call)
                        }
                    }
                })
                .await
        };
        let (a, b) = tokio::join!(read(coalesced.clone(), calls.clone()), read(coalesced.clone(), calls.clone()));
        // The first computation failed; each reader then read on its own.
        assert!(a.is_ok() && b.is_ok(), "{a:?} {b:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }
}
