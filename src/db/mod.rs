//! Database access: connecting (to `DATABASE_URL` or the embedded cluster)
//! and running migrations.

pub mod backup;
pub mod backups;
pub mod batcher;
pub mod embedded;
pub mod held;
pub mod release_guard;
pub mod statements;
pub mod storage_location;

/// The Rust type of a `timestamptz` column in a compile-time checked
/// statement, named as an override (`created_at AS "created_at: Time"`):
/// with both of sqlx's time features on (another crate enables `time`) the
/// macros would pick `time::OffsetDateTime`, and the service uses chrono's.
pub type Time = chrono::DateTime<chrono::Utc>;

use embedded::EmbeddedCluster;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, PgPool};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// Where the database is; shared by every subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct DatabaseArgs {
    /// PostgreSQL URL; without it a private cluster is started in --data-dir.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// Atelier's data directory: the embedded PostgreSQL cluster lives in
    /// `postgres/`, uploaded images in `uploads/`. (A directory that is itself
    /// a cluster, the layout of earlier versions, is used as the cluster.)
    #[arg(long, env = "ATELIER_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// Where uploaded images and release archives live: `file://DIR` or
    /// `s3://bucket/prefix` (configured by the AWS environment:
    /// AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
    /// AWS_ALLOW_HTTP). Default: the store `storage migrate` switched to,
    /// else the upload folder (`uploads/` in the data directory).
    #[arg(long, env = "ATELIER_STORAGE")]
    pub storage: Option<String>,
}

impl DatabaseArgs {
    /// Where the embedded cluster lives: `<data-dir>/postgres`, or the data
    /// directory itself when it already holds a cluster (the old layout).
    pub fn cluster_dir(&self) -> PathBuf {
        if self.data_dir.join("PG_VERSION").exists() {
            tracing::info!(dir = %self.data_dir.display(), "using the cluster in --data-dir itself (the earlier layout)");
            return self.data_dir.clone();
        }
        self.data_dir.join("postgres")
    }

    /// Where the embedded cluster lives, made reachable: Atelier's data
    /// directory is opened to traversal (see [`embedded::open_up_data_dir`]);
    /// when a parent it does not own stays closed to the `postgres` user
    /// (a checkout under `/root`), the cluster lives under
    /// `/var/lib/atelier` instead (said in the log), uploads stay here.
    pub fn embedded_cluster_dir(&self) -> Result<PathBuf, embedded::EmbeddedError> {
        let cluster = self.cluster_dir();
        if cluster != self.data_dir {
            embedded::open_up_data_dir(&self.data_dir)?;
        }
        if embedded::reachable_by_server(&cluster) {
            return Ok(cluster);
        }
        let fallback = embedded::fallback_cluster_dir(&self.data_dir);
        if let Some(parent) = fallback.parent() {
            embedded::open_up_data_dir(parent)?;
            if let Some(root) = parent.parent() {
                embedded::open_up_data_dir(root)?;
            }
        }
        tracing::warn!(
            data_dir = %self.data_dir.display(),
            cluster = %fallback.display(),
            "the postgres user cannot reach the data directory (a parent directory is closed to other users): \
             the database cluster lives under /var/lib/atelier instead; uploads stay in the data directory"
        );
        Ok(fallback)
    }

    /// The service's store: `--storage`, else the one `storage migrate`
    /// switched to, else the upload folder (`upload_dir`, or the default).
    pub async fn storage(
        &self,
        pool: &sqlx::PgPool,
        upload_dir: Option<&std::path::Path>,
        redirect: bool,
    ) -> anyhow::Result<crate::storage::Storage> {
        let address = match &self.storage {
            Some(address) => Some(address.clone()),
            None => storage_location::recorded(pool).await?,
        };
        let storage = match address {
            Some(address) => crate::storage::Storage::from_address(&address, redirect),
            None => crate::storage::Storage::open(
                &crate::storage::Location::File(upload_dir.map_or_else(|| self.default_upload_dir(), PathBuf::from)),
                &[],
                redirect,
            ),
        };
        storage.map_err(|e| anyhow::anyhow!("--storage: {e}"))
    }

    /// Where uploaded images go unless configured: `<data-dir>/uploads`, or
    /// beside an old-layout cluster.
    pub fn default_upload_dir(&self) -> PathBuf {
        if self.data_dir.join("PG_VERSION").exists() {
            return self.data_dir.parent().map_or_else(|| PathBuf::from("uploads"), |p| p.join("uploads"));
        }
        self.data_dir.join("uploads")
    }
}

/// Errors opening the database.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The embedded cluster could not start.
    #[error(transparent)]
    Embedded(#[from] embedded::EmbeddedError),
    /// The URL is malformed.
    #[error("invalid DATABASE_URL: {0}")]
    Url(sqlx::Error),
    /// Connecting or querying failed.
    #[error("database: {0}")]
    Sqlx(#[from] sqlx::Error),
    /// Migrations failed.
    #[error("migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// An open database: the pool, and the embedded cluster if we run one.
pub struct Database {
    /// The connection pool.
    pub pool: PgPool,
    /// How PostgreSQL's own tools reach the same database (a libpq
    /// connection string or URL).
    pub conninfo: String,
    cluster: Option<std::sync::Arc<std::sync::Mutex<EmbeddedCluster>>>,
    supervisor: Option<tokio::task::JoinHandle<()>>,
}

/// The database name used in the embedded cluster.
pub const EMBEDDED_DATABASE: &str = "atelier";

impl Database {
    /// Connects as configured, starting the embedded cluster when no URL is given.
    pub async fn open(args: &DatabaseArgs, max_connections: u32) -> Result<Self, DbError> {
        Self::open_as(args, max_connections, embedded::Role::Command).await
    }

    /// Connects as the service: an embedded cluster is owned (adopted if a
    /// killed service left it running) and supervised (restarted if it dies).
    pub async fn open_for_service(args: &DatabaseArgs, max_connections: u32) -> Result<Self, DbError> {
        let mut db = Self::open_as(args, max_connections, embedded::Role::Service).await?;
        if let Some(cluster) = db.cluster.clone() {
            db.supervisor = Some(tokio::spawn(supervise(cluster)));
        }
        Ok(db)
    }

    async fn open_as(args: &DatabaseArgs, max_connections: u32, role: embedded::Role) -> Result<Self, DbError> {
        let (options, cluster, conninfo) = match &args.database_url {
            Some(url) => (PgConnectOptions::from_str(url).map_err(DbError::Url)?, None, url.clone()),
            None => {
                let dir = args.embedded_cluster_dir()?;
                let cluster = tokio::task::spawn_blocking(move || EmbeddedCluster::open(&dir, role))
                    .await
                    .map_err(|e| DbError::Sqlx(sqlx::Error::Io(std::io::Error::other(e))))??;
                create_database_if_missing(&cluster, EMBEDDED_DATABASE).await?;
                let conninfo = cluster.conninfo(EMBEDDED_DATABASE);
                (cluster.connect_options(EMBEDDED_DATABASE), Some(cluster), conninfo)
            }
        };
        let pool = pool_options(max_connections)
            .connect_with(options.log_statements(tracing::log::LevelFilter::Trace))
            .await?;
        let cluster = cluster.map(|c| std::sync::Arc::new(std::sync::Mutex::new(c)));
        Ok(Self { pool, conninfo, cluster, supervisor: None })
    }

    /// Applies pending migrations.
    pub async fn migrate(&self) -> Result<(), DbError> {
        migrate(&self.pool).await
    }

    /// Closes the pool and stops the embedded cluster if this process started it.
    pub async fn close(mut self) {
        if let Some(s) = self.supervisor.take() {
            s.abort();
        }
        self.pool.close().await;
        if let Some(cluster) = self.cluster.take() {
            let stopped = tokio::task::spawn_blocking(move || match cluster.lock() {
                Ok(mut c) => c.stop(),
                Err(poisoned) => poisoned.into_inner().stop(),
            })
            .await;
            if let Ok(Err(e)) = stopped {
                tracing::error!(error = %e, "could not stop embedded PostgreSQL");
            }
        }
    }
}

/// How often the service checks that its embedded PostgreSQL still runs.
const SUPERVISION_PERIOD: Duration = Duration::from_secs(2);

/// Restarts the embedded cluster whenever it is found not running (killed,
/// crashed); requests meanwhile get 503 with `Retry-After`.
async fn supervise(cluster: std::sync::Arc<std::sync::Mutex<EmbeddedCluster>>) {
    let mut tick = tokio::time::interval(SUPERVISION_PERIOD);
    loop {
        tick.tick().await;
        let c = cluster.clone();
        let outcome = tokio::task::spawn_blocking(move || match c.lock() {
            Ok(mut c) => c.ensure_running(),
            Err(poisoned) => poisoned.into_inner().ensure_running(),
        })
        .await;
        match outcome {
            Ok(Ok(true)) => {
                metrics::counter!("atelier_db_restarts_total").increment(1);
                tracing::warn!("embedded PostgreSQL was not running; restarted it");
            }
            Ok(Ok(false)) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "embedded PostgreSQL is down and could not be restarted"),
            Err(e) => tracing::error!(error = %e, "supervision task failed"),
        }
    }
}

/// Asks the server for one trivial answer (readiness checks).
pub async fn ping(pool: &PgPool) -> Result<(), sqlx::Error> {
    sqlx::query_scalar!("SELECT 1 AS one").fetch_one(pool).await.map(drop)
}

/// A read-only transaction that sees the database at one moment
/// (`REPEATABLE READ`): for reads of several tables that must agree with
/// each other while answers keep coming in.
pub async fn one_moment(pool: &PgPool) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query!("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").execute(&mut *tx).await?;
    Ok(tx)
}

/// Pool settings used everywhere: bounded, failing fast when exhausted, and
/// never handing out a connection left inside a transaction.
pub fn pool_options(max_connections: u32) -> PgPoolOptions {
    PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(5))
        // No ping before every acquisition (a round trip each): a connection
        // that died fails its query, which becomes a 503 with Retry-After,
        // and the pool replaces it.
        .test_before_acquire(false)
        .after_release(release_guard::after_release)
}

/// Runs the embedded migrations and the session store's own.
pub async fn migrate(pool: &PgPool) -> Result<(), DbError> {
    sqlx::migrate!("./migrations").run(pool).await?;
    tower_sessions_sqlx_store::PostgresStore::new(pool.clone()).migrate().await?;
    Ok(())
}

/// Creates a database in the embedded cluster unless it exists.
pub async fn create_database_if_missing(cluster: &EmbeddedCluster, name: &str) -> Result<(), DbError> {
    let mut conn = cluster.connect_options("postgres").connect().await?;
    let exists: Option<i32> = sqlx::query_scalar!(r#"SELECT 1 AS "one!" FROM pg_database WHERE datname = $1"#, name)
        .fetch_optional(&mut conn)
        .await?;
    if exists.is_none() {
        // Identifiers cannot be bound; the name is ours, never user input.
        sqlx::query(&format!("CREATE DATABASE \"{name}\"")).execute(&mut conn).await?;
    }
    Ok(())
}
