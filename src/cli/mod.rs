//! The `atelier` command line: argument definitions and dispatch.

pub mod backup;
mod failed;
pub use failed::Failed;
pub mod release;
pub mod stats;
pub mod storage;

use crate::auth::{tokens, users, Role};
use crate::db::{Database, DatabaseArgs};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::{BufRead, Write};

/// Atelier: expert annotation for fashion-AI benchmarks.
#[derive(Debug, Parser)]
#[command(name = "atelier", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run migrations and serve.
    Serve(ServeArgs),
    /// Seed demo campaigns (once), print how to try each role, and serve.
    Demo(ServeArgs),
    /// Apply database migrations and exit.
    Migrate(DatabaseArgs),
    /// Manage accounts.
    #[command(subcommand)]
    User(UserCommand),
    /// Manage API tokens.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Statistics on your own files: agreement, aggregation, retrieval metrics.
    #[command(subcommand)]
    Stats(stats::StatsCommand),
    /// Ground-truth releases: cut one, verify an archive.
    #[command(subcommand)]
    Release(release::ReleaseCommand),
    /// Backups: the database and the uploaded images in one file, and back.
    #[command(subcommand)]
    Backup(backup::BackupCommand),
    /// The object store: check what it holds, or move everything to another.
    #[command(subcommand)]
    Storage(storage::StorageCommand),
    /// The task kinds' own commands (`a100`, `vton`, ...).
    #[command(flatten)]
    Kind(crate::kinds::KindCommand),
}

/// Arguments of `serve` and `demo`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "ATELIER_BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,
    /// Base URL for links handed out (defaults to `http://<bind>`).
    #[arg(long, env = "ATELIER_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Mark cookies Secure (set when serving over HTTPS).
    #[arg(long, env = "ATELIER_SECURE_COOKIES")]
    pub secure_cookies: bool,
    /// Directory for uploaded images (default: `uploads/` in the data directory; `--storage` wins).
    #[arg(long, env = "ATELIER_UPLOAD_DIR")]
    pub upload_dir: Option<std::path::PathBuf>,
    /// With an S3 store: answer image requests with a presigned redirect to
    /// the bucket (15 minutes) instead of streaming them through the
    /// service. It saves the service's bandwidth and reveals to every
    /// worker's browser the bucket's address and each image's key (an
    /// uploaded image's key is its content hash, the same for every worker,
    /// so a shared sanity image becomes recognisable); off by default.
    #[arg(long, env = "ATELIER_STORAGE_REDIRECT")]
    pub storage_redirect: bool,
    /// Reverse proxies (addresses or CIDR ranges, comma-separated) whose
    /// X-Forwarded-For header names the real client; by default none is trusted.
    #[arg(long, env = "ATELIER_TRUSTED_PROXIES", value_delimiter = ',', value_parser = parse_net)]
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// A bearer token a metrics scraper sends to read /metrics (admins may always).
    #[arg(long, env = "ATELIER_METRICS_TOKEN")]
    pub metrics_token: Option<String>,
    /// Take a backup this often while serving (`6h`, `30m`, `1day`); none by default.
    #[arg(long, env = "ATELIER_BACKUP_EVERY", value_parser = parse_period)]
    pub backup_every: Option<std::time::Duration>,
    /// Where backups go: a folder (default: `backups/` in the data
    /// directory) or an S3 bucket, `s3://bucket/prefix` (configured by the
    /// AWS environment, as `--storage` is; each backup is staged in the
    /// data directory, read back, then uploaded whole).
    #[arg(long, env = "ATELIER_BACKUP_DIR")]
    pub backup_dir: Option<String>,
    /// How many scheduled backups to keep; older ones are deleted.
    #[arg(long, env = "ATELIER_BACKUP_KEEP", default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..))]
    pub backup_keep: u32,
    /// Database location.
    #[command(flatten)]
    pub db: DatabaseArgs,
}

/// A period such as `6h` or `30m`, at least one second.
fn parse_period(text: &str) -> Result<std::time::Duration, String> {
    let period = humantime::parse_duration(text.trim()).map_err(|e| format!("`{text}`: {e} (write e.g. 6h, 30m)"))?;
    if period < std::time::Duration::from_secs(1) {
        return Err(format!("`{text}` is shorter than a second"));
    }
    Ok(period)
}

/// `user` subcommands.
#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create an admin or expert account.
    Add {
        /// Role of the new account.
        #[arg(long, value_enum)]
        role: AccountRole,
        /// Login name.
        #[arg(long)]
        name: String,
        /// Read the password from standard input instead of prompting.
        #[arg(long)]
        password_stdin: bool,
        /// Database location.
        #[command(flatten)]
        db: DatabaseArgs,
    },
}

/// Roles that have accounts.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AccountRole {
    /// Administrator.
    Admin,
    /// Expert annotator.
    Expert,
}

/// `token` subcommands.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create an API token for a user and print it.
    Create {
        /// The user's login name.
        #[arg(long)]
        user: String,
        /// Days until the token stops working by itself (default and most: 365, or `ATELIER_TOKEN_MAX_DAYS`).
        #[arg(long)]
        expires_in_days: Option<u32>,
        /// Database location.
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// List API tokens (id, user, created, last used, expiry, revoked).
    List {
        /// Database location.
        #[command(flatten)]
        db: DatabaseArgs,
    },
    /// Revoke an API token by id; it stops working at once.
    Revoke {
        /// The token's id (from `atelier token list`).
        #[arg(long)]
        id: uuid::Uuid,
        /// Database location.
        #[command(flatten)]
        db: DatabaseArgs,
    },
}

/// Runs a parsed command line; output goes to `out`.
pub async fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<()> {
    match cli.command {
        Command::Stats(cmd) => stats::run(&cmd, out),
        Command::Kind(cmd) => cmd.run(out).await,
        Command::Release(cmd) => release::run(cmd, out).await,
        Command::Backup(cmd) => backup::run(cmd, out).await,
        Command::Storage(cmd) => storage::run(cmd, out).await,
        Command::Serve(args) => serve(args, false, out).await,
        Command::Demo(args) => serve(args, true, out).await,
        Command::Migrate(db) => {
            let db = open(&db).await?;
            db.close().await;
            writeln!(out, "migrations applied")?;
            Ok(())
        }
        Command::User(UserCommand::Add { role, name, password_stdin, db }) => {
            let password = read_password(password_stdin)?;
            let role = match role {
                AccountRole::Admin => Role::Admin,
                AccountRole::Expert => Role::Expert,
            };
            let db = open(&db).await?;
            let created = users::create(&db.pool, role, &name, &password).await;
            db.close().await;
            let user = created?;
            writeln!(out, "created {} `{}` ({})", user.role, name, user.id)?;
            Ok(())
        }
        Command::Token(TokenCommand::Create { user, expires_in_days, db }) => {
            let db = open(&db).await?;
            let result = async {
                let u =
                    users::by_name(&db.pool, &user).await?.ok_or_else(|| anyhow::anyhow!("no user named `{user}`"))?;
                anyhow::Ok(tokens::create_expiring(&db.pool, u.id, expires_in_days, tokens::Origin::CommandLine).await?)
            }
            .await;
            db.close().await;
            writeln!(out, "{}", result?.1)?;
            Ok(())
        }
        Command::Token(TokenCommand::List { db }) => {
            let db = open(&db).await?;
            let result = tokens::list(&db.pool).await;
            db.close().await;
            let show = |t: Option<chrono::DateTime<chrono::Utc>>| t.map_or_else(|| "-".to_owned(), |t| t.to_rfc3339());
            writeln!(out, "id\tuser\tcreated\tlast_used\texpires\trevoked")?;
            for t in result? {
                writeln!(
                    out,
                    "{}\t{}\t{}\t{}\t{}\t{}",
                    t.id,
                    t.user,
                    t.created_at.to_rfc3339(),
                    show(t.last_used_at),
                    show(t.expires_at),
                    show(t.revoked_at)
                )?;
            }
            Ok(())
        }
        Command::Token(TokenCommand::Revoke { id, db }) => {
            let db = open(&db).await?;
            let result = tokens::revoke(&db.pool, id).await;
            db.close().await;
            let t = result?;
            writeln!(out, "revoked token {} of {}", t.id, t.user)?;
            Ok(())
        }
    }
}

/// An address (`10.0.0.1`) or a range (`10.0.0.0/8`).
fn parse_net(text: &str) -> Result<ipnet::IpNet, String> {
    let text = text.trim();
    text.parse::<ipnet::IpNet>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("`{text}` is not an address or CIDR range"))
}

/// Opens the database with a small pool and applies migrations.
async fn open(args: &DatabaseArgs) -> anyhow::Result<Database> {
    let db = Database::open(args, 4).await?;
    db.migrate().await?;
    Ok(db)
}

fn read_password(from_stdin: bool) -> anyhow::Result<String> {
    let mut line = String::new();
    if from_stdin {
        std::io::stdin().lock().read_line(&mut line)?;
    } else {
        line = rpassword::prompt_password("Password: ")?;
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_owned())
}

async fn serve(args: ServeArgs, demo: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(&args.bind)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", args.bind))?;
    let public_url =
        args.public_url.clone().unwrap_or_else(|| format!("http://{}", args.bind)).trim_end_matches('/').to_owned();
    let db = Database::open_for_service(&args.db, 20).await?;
    if let Err(e) = db.migrate().await {
        db.close().await;
        return Err(e.into());
    }
    if demo {
        match crate::demo::seed(&db.pool, &crate::kinds::registry(), &public_url).await {
            Ok(guide) => writeln!(out, "{guide}")?,
            Err(e) => {
                db.close().await;
                return Err(e.into());
            }
        }
    }
    // Served over HTTPS (the public address says so): cookies only travel encrypted.
    let secure_cookies = args.secure_cookies || public_url.starts_with("https://");
    let storage = match args.db.storage(&db.pool, args.upload_dir.as_deref(), args.storage_redirect).await {
        Ok(storage) => storage,
        Err(e) => {
            db.close().await;
            return Err(e);
        }
    };
    tracing::info!(storage = %storage.location().url(), redirect = storage.redirects(), "object store");
    let upload_dir = match storage.location() {
        crate::storage::Location::File(dir) => Some(dir.clone()),
        crate::storage::Location::S3 { .. } => None,
    };
    let config = crate::http::HttpConfig {
        public_url,
        secure_cookies,
        metrics_token: args.metrics_token.clone().filter(|t| !t.is_empty()),
        storage,
        trusted_proxies: args.trusted_proxies,
        backups: None,
    };
    let staging = args.db.data_dir.join("backups-staging");
    let shelf = match &args.backup_dir {
        None => Ok(crate::db::backups::Shelf::Dir(args.db.data_dir.join("backups"))),
        Some(address) => {
            crate::db::backups::Shelf::parse(address, staging.clone()).map_err(|e| anyhow::anyhow!("--backup-dir: {e}"))
        }
    };
    let shelf = match shelf {
        Ok(shelf) => shelf,
        Err(e) => {
            db.close().await;
            return Err(e);
        }
    };
    // A folder store's images go into the backup; a bucket keeps its own
    // (the backup holds the database, whose rows name them).
    let images = upload_dir.unwrap_or_else(|| staging.join("no-images"));
    let config = crate::http::HttpConfig {
        backups: Some(crate::db::backups::Folder {
            shelf: shelf.clone(),
            keep: args.backup_keep as usize,
            every: args.backup_every,
            conninfo: db.conninfo.clone(),
            upload_dir: images.clone(),
            taking: Default::default(),
        }),
        ..config
    };
    if let Some(every) = args.backup_every {
        let schedule = crate::db::backups::Schedule { every, shelf, keep: args.backup_keep as usize };
        tracing::info!(every = %humantime::format_duration(every), to = %schedule.shelf.describe(), keep = schedule.keep, "scheduled backups");
        tokio::spawn(crate::db::backups::run_schedule(schedule, db.conninfo.clone(), images));
    }
    crate::server::serve(db, listener, config).await
}
