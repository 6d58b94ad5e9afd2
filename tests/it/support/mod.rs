//! Test support: a real PostgreSQL (the embedded cluster, or DATABASE_URL),
//! a fresh database per test cloned from a migrated template, and the real
//! server on an ephemeral port.

#![allow(dead_code)]

pub mod s3;
use atelier::db::embedded::EmbeddedCluster;
use atelier::http::{app, AppState, HttpConfig};
use sqlx::postgres::PgConnectOptions;
use sqlx::{ConnectOptions, PgPool};
use std::str::FromStr;
use std::sync::{Mutex, OnceLock};

/// Where test databases are created.
struct Server {
    /// Options for the maintenance database; `.database(name)` for others.
    options: PgConnectOptions,
    template: String,
    /// The embedded cluster's log file, when the tests run their own cluster.
    log: Option<std::path::PathBuf>,
    /// Keeps the embedded cluster's watchdog alive for the process lifetime.
    _watchdog: Option<Mutex<std::process::ChildStdin>>,
}

/// A `DATABASE_URL`-style string for the test database `database`.
fn url_of(database: &str) -> String {
    let s = server();
    let host = s.options.get_host();
    let port = s.options.get_port();
    let user = s.options.get_username();
    match s.options.get_socket() {
        Some(dir) => format!("postgres://{user}@localhost/{database}?host={}&port={port}", dir.display()),
        None => format!("postgres://{user}@{host}:{port}/{database}"),
    }
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        // Set up on a separate thread: tests run inside their own runtimes.
        std::thread::spawn(setup).join().expect("test database setup")
    })
}

fn setup() -> Server {
    let (options, watchdog, log) = match std::env::var("DATABASE_URL") {
        Ok(url) => (PgConnectOptions::from_str(&url).expect("valid DATABASE_URL"), None, None),
        Err(_) => {
            let dir = std::env::temp_dir().join(format!("atelier-test-{}", std::process::id()));
            let cluster = EmbeddedCluster::start(&dir).unwrap_or_else(|e| panic!("embedded PostgreSQL: {e}"));
            let options = cluster.connect_options("postgres");
            let log = cluster.log_file();
            let watchdog = cluster.remove_on_exit().expect("watchdog");
            (options, Some(Mutex::new(watchdog)), Some(log))
        }
    };
    let template = format!("atelier_tpl_{}", std::process::id());
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let mut admin = options.clone().connect().await.expect("connect to PostgreSQL");
        sqlx::query(&format!("DROP DATABASE IF EXISTS {template}")).execute(&mut admin).await.expect("drop template");
        sqlx::query(&format!("CREATE DATABASE {template}")).execute(&mut admin).await.expect("create template");
        let pool = PgPool::connect_with(options.clone().database(&template)).await.expect("connect template");
        atelier::db::migrate(&pool).await.expect("migrations");
        pool.close().await;
    });
    Server { options, template, log, _watchdog: watchdog }
}

/// A running application on its own database.
pub struct TestApp {
    /// Base URL, e.g. `http://127.0.0.1:41234`.
    pub url: String,
    /// Pool on the test's database.
    pub pool: PgPool,
    /// The database name (dropped when the test ends).
    pub database: String,
    /// Options to connect to the test's database.
    pub db_options: PgConnectOptions,
}

impl TestApp {
    /// Creates a database from the template and serves the app on port 0.
    pub async fn spawn() -> Self {
        Self::spawn_with_kinds(atelier::kinds::registry(), atelier::kinds::pages(), atelier::kinds::routes).await
    }

    /// As [`spawn`](Self::spawn), with these task kinds plugged in instead
    /// of the build's (a test's own kind).
    pub async fn spawn_with_kinds(
        kinds: atelier::core::Registry,
        pages: atelier::http::task_pages::KindPages,
        routes: fn() -> Vec<atelier::http::kind_routes::KindRoutes>,
    ) -> Self {
        Self::spawn_full(kinds, pages, routes, None, None).await
    }

    /// As [`spawn`](Self::spawn), telling the service it is reached at
    /// `public_url` (as behind a TLS proxy).
    pub async fn spawn_at(public_url: &str) -> Self {
        let (kinds, pages) = (atelier::kinds::registry(), atelier::kinds::pages());
        Self::spawn_full(kinds, pages, atelier::kinds::routes, Some(public_url.to_owned()), None).await
    }

    /// As [`spawn`](Self::spawn), keeping its blobs in `storage` (a bucket).
    pub async fn spawn_with_storage(storage: atelier::storage::Storage) -> Self {
        let (kinds, pages) = (atelier::kinds::registry(), atelier::kinds::pages());
        Self::spawn_full(kinds, pages, atelier::kinds::routes, None, Some(storage)).await
    }

    async fn spawn_full(
        kinds: atelier::core::Registry,
        pages: atelier::http::task_pages::KindPages,
        routes: fn() -> Vec<atelier::http::kind_routes::KindRoutes>,
        public_url: Option<String>,
        storage: Option<atelier::storage::Storage>,
    ) -> Self {
        let s = server();
        let database = format!("t_{}", uuid::Uuid::new_v4().simple());
        let mut admin = s.options.clone().connect().await.expect("connect");
        sqlx::query(&format!("CREATE DATABASE {database} TEMPLATE {}", s.template))
            .execute(&mut admin)
            .await
            .expect("create test database");
        let db_options = s.options.clone().database(&database);
        Self::serve_on(database, db_options, kinds, pages, routes, public_url, storage).await
    }

    /// A second service instance on this app's database (as behind a load
    /// balancer); its URL. Uploads go to the same (shared) directory.
    pub async fn spawn_beside(&self) -> String {
        self.spawn_beside_with(None).await
    }

    /// A second instance on this app's database keeping its blobs in
    /// `storage` (another host's: its own folder, or the shared bucket).
    pub async fn spawn_beside_with(&self, storage: Option<atelier::storage::Storage>) -> String {
        let other = Self::serve_on(
            self.database.clone(),
            self.db_options.clone(),
            atelier::kinds::registry(),
            atelier::kinds::pages(),
            atelier::kinds::routes,
            None,
            storage,
        )
        .await;
        let url = other.url.clone();
        // The database belongs to `self`: the second instance must not drop it.
        std::mem::forget(other);
        url
    }

    async fn serve_on(
        database: String,
        db_options: PgConnectOptions,
        kinds: atelier::core::Registry,
        pages: atelier::http::task_pages::KindPages,
        routes: fn() -> Vec<atelier::http::kind_routes::KindRoutes>,
        public_url: Option<String>,
        storage: Option<atelier::storage::Storage>,
    ) -> Self {
        let uploads = std::env::temp_dir().join(format!("atelier-uploads-{database}"));
        let storage =
            storage.unwrap_or_else(|| atelier::storage::Storage::local(uploads.clone()).expect("a folder store"));
        // The backups page's folder: taken only when a test asks.
        let backups = atelier::db::backups::Folder {
            shelf: atelier::db::backups::Shelf::Dir(std::env::temp_dir().join(format!("atelier-backups-{database}"))),
            keep: 3,
            every: None,
            conninfo: url_of(&database),
            upload_dir: uploads,
            taking: Default::default(),
        };
        let pool = atelier::db::pool_options(10).connect_with(db_options.clone()).await.expect("pool");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let url = format!("http://{addr}");
        let state = AppState::new(
            pool.clone(),
            HttpConfig {
                public_url: public_url.unwrap_or_else(|| url.clone()),
                secure_cookies: false,
                metrics_token: None,
                storage,
                trusted_proxies: vec!["127.0.0.1/32".parse().expect("net")],
                backups: Some(backups),
            },
            kinds,
            pages,
        );
        tokio::spawn(async move {
            atelier::http::listen::serve(listener, app(state, routes()), std::future::pending()).await;
        });
        Self { url, pool, database, db_options }
    }

    /// A `DATABASE_URL`-style string for CLI subcommands against this database.
    pub fn database_url(&self) -> String {
        url_of(&self.database)
    }

    /// A fresh browser-like client with its own cookie jar.
    pub fn client(&self) -> reqwest::Client {
        reqwest::Client::builder()
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client")
    }

    /// Full URL of a path.
    pub fn at(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        let options = server().options.clone();
        let database = self.database.clone();
        // Uploads go to a directory named after the database: it goes with it
        // (a full run left ~200 of them in the temporary directory).
        let _ = std::fs::remove_dir_all(std::env::temp_dir().join(format!("atelier-uploads-{database}")));
        // Dropping needs async; do it on a thread with its own runtime.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
            rt.block_on(async {
                let mut admin = options.connect().await.ok()?;
                sqlx::query(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)")).execute(&mut admin).await.ok()
            })
        })
        .join();
    }
}

/// PostgreSQL's log (lines carry `db=<database>`), when the tests run their own cluster.
pub fn server_log() -> Option<std::path::PathBuf> {
    server().log.clone()
}

/// Tells whoever runs the tests that something was skipped. Written to the
/// process's stderr directly: the test harness swallows the output of
/// passing tests, and a skip must not go unnoticed.
pub fn say_skipped(message: &str) {
    use std::io::Write;
    match std::fs::OpenOptions::new().write(true).open("/dev/stderr") {
        Ok(mut tty) => {
            let _ = writeln!(tty, "SKIPPED {message}");
        }
        Err(_) => eprintln!("SKIPPED {message}"),
    }
}

/// A Python interpreter in a virtual environment (made once under the
/// target directory) with `packages` installed (pip requirement specs, e.g.
/// `pandas==2.3.3`; each caller's set is installed when it first asks);
/// `None` where Python or its `venv` module is missing. CI
/// (`ATELIER_REQUIRE_PYTHON=1`) makes that a failure.
pub fn python_with(packages: &[&str]) -> Option<std::path::PathBuf> {
    static VENV: OnceLock<Option<std::path::PathBuf>> = OnceLock::new();
    // Tests run in parallel: one pip at a time in the shared environment.
    static PIP: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let run = |cmd: &mut std::process::Command| cmd.output().is_ok_and(|o| o.status.success());
    let venv = VENV
        .get_or_init(|| {
            let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("pyvenv");
            let python = dir.join("bin/python");
            let made = python.exists() || run(std::process::Command::new("python3").args(["-m", "venv"]).arg(&dir));
            made.then_some(python)
        })
        .clone();
    let found = venv.filter(|python| {
        let _turn = PIP.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let imports = packages.iter().map(|p| import_name(p)).collect::<Vec<_>>().join(", ");
        let ready = || run(std::process::Command::new(python).args(["-c", &format!("import {imports}")]));
        if ready() {
            return true;
        }
        let mut pip = std::process::Command::new(python);
        pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]).args(packages);
        run(&mut pip) && ready()
    });
    assert!(
        found.is_some() || std::env::var("ATELIER_REQUIRE_PYTHON").is_err(),
        "python3 with venv and pip is needed (apt-get install python3-venv) but ATELIER_REQUIRE_PYTHON is set"
    );
    found
}

/// The module a pip requirement is imported as.
fn import_name(requirement: &str) -> String {
    let name = requirement.split(['=', '<', '>', '~', '!', '[']).next().unwrap_or(requirement).trim();
    match name {
        "PyYAML" | "pyyaml" => "yaml".to_owned(),
        other => other.replace('-', "_"),
    }
}
