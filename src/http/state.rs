//! What every handler shares: the pools, the kinds, the caches and the
//! settings, behind one pointer.

use super::{session_cache, task_pages, user_cache};
use crate::auth::rate_limit::LoginLimiter;
use sqlx::PgPool;
use std::sync::Arc;

/// Shared state of every handler: one pointer, so that the many copies a
/// request makes (each extractor and middleware takes its own) cost one
/// counter each rather than one per field.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// What every handler shares (reached through [`AppState`]).
pub struct Shared {
    /// Database pool.
    pub pool: PgPool,
    /// Login attempt limiter.
    pub limiter: LoginLimiter,
    /// Settings.
    pub config: Arc<HttpConfig>,
    /// Every request's task; shutdown waits for them (see [`detach`](super::detach)).
    pub tasks: tokio_util::task::TaskTracker,
    /// The task kinds of this build.
    pub kinds: crate::core::Registry,
    /// How each kind is shown (task pages, answers, its admin page).
    pub pages: task_pages::KindPages,
    /// Recently looked-up accounts (a few seconds).
    pub users: user_cache::UserCache,
    /// Stores answers, gathering concurrent ones into shared statements.
    pub recorder: Arc<crate::core::work::record::Recorder>,
    /// Reads task pages, gathering concurrent ones into shared statements.
    pub task_reads: crate::core::work::own_task::TaskReads,
    /// This service's ground truths and shared counts (see [`crate::core::Caches`]).
    pub caches: Arc<crate::core::Caches>,
    /// A pool for single statements only: it cannot begin a transaction.
    pub statements: crate::db::statements::StatementPool,
    /// The sessions this instance remembers (its session store's), so that
    /// ending sessions forgets them here at once, not when the announcement
    /// comes back.
    pub sessions: Arc<session_cache::SessionCache>,
}

impl AppState {
    /// State for a pool, settings and the build's kinds, with a fresh
    /// limiter and task tracker.
    pub fn new(pool: PgPool, config: HttpConfig, kinds: crate::core::Registry, pages: task_pages::KindPages) -> Self {
        let statements = crate::db::statements::StatementPool::beside(&pool);
        // Answers stored, as the task pages need to know them.
        let answered = Arc::<crate::core::work::own_task::AnsweredItems>::default();
        Self(Arc::new(Shared {
            limiter: LoginLimiter,
            config: Arc::new(config),
            tasks: tokio_util::task::TaskTracker::new(),
            kinds,
            pages,
            users: Default::default(),
            recorder: Arc::new(crate::core::work::record::Recorder::new(
                pool.clone(),
                statements.clone(),
                answered.clone(),
            )),
            caches: Arc::default(),
            task_reads: crate::core::work::own_task::TaskReads::new(statements.clone(), answered),
            statements,
            pool,
            sessions: Default::default(),
        }))
    }

    /// Forgets what the answer path and the task pages kept of an
    /// assignment just submitted: nothing more is answered in it.
    pub fn forget_submitted(&self, assignment: uuid::Uuid) {
        self.recorder.forget(assignment);
        self.task_reads.forget(assignment);
    }
}

/// Settings the HTTP layer needs.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Base URL used in links handed to people (invitation links).
    pub public_url: String,
    /// Mark cookies `Secure` (when served over HTTPS).
    pub secure_cookies: bool,
    /// Where uploaded images and (in a bucket) release archives are kept;
    /// uploads are served under `/images/`.
    pub storage: crate::storage::Storage,
    /// Reverse proxies whose `X-Forwarded-For` is believed (none by default).
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// A bearer token that may read `/metrics` (a scraper's); admins may always.
    pub metrics_token: Option<String>,
    /// The backup folder the admin's backups page lists and adds to
    /// (`None`: the page says backups are not set up).
    pub backups: Option<crate::db::backups::Folder>,
}
