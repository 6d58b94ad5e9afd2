//! The embedded default: a private PostgreSQL cluster started from the
//! installed server binaries, for when no `DATABASE_URL` is given.
//!
//! The cluster listens on a unix socket only (no TCP port), lives in the data
//! directory, and is stopped by the process that started it. Another Atelier
//! process (a CLI subcommand next to a running service) finds and reuses it.

use sqlx::postgres::PgConnectOptions;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The database user and database the embedded cluster is set up with.
pub const SUPERUSER: &str = "atelier";
/// Port number; only names the socket file, since TCP is off.
const PORT: u16 = 5432;
/// Unix socket paths are limited to ~107 bytes including `/.s.PGSQL.5432`.
const MAX_SOCKET_DIR_LEN: usize = 80;

/// Why the embedded cluster could not be used.
#[derive(Debug, thiserror::Error)]
pub enum EmbeddedError {
    /// No PostgreSQL server binaries were found.
    #[error(
        "no PostgreSQL server binaries found (looked in PATH, `pg_config --bindir` and /usr/lib/postgresql/*/bin).\n\
         Fix one of:\n  - install them (Debian/Ubuntu: `apt-get install postgresql`),\n  \
         - point Atelier at a server: `--database-url postgres://...` or DATABASE_URL,\n  \
         - start one with Docker: `docker compose up -d db` and set DATABASE_URL=postgres://atelier:atelier@localhost:5432/atelier"
    )]
    NoBinaries,
    /// Running as root, but there is no `postgres` system user to run the server as.
    #[error("running as root, and PostgreSQL refuses to run as root; create the `postgres` system user (installing the `postgresql` package does) or run Atelier as a normal user")]
    NoPostgresUser,
    /// The `postgres` user cannot reach the data directory.
    #[error("the data directory {dir} is not reachable by the `postgres` user (a parent directory is not traversable, e.g. under /root); choose another with --data-dir, e.g. --data-dir /var/lib/atelier/postgres")]
    NotTraversable {
        /// The data directory.
        dir: PathBuf,
    },
    /// A PostgreSQL tool failed.
    #[error("{tool} failed: {detail}")]
    Tool {
        /// The tool (initdb, pg_ctl).
        tool: String,
        /// What it printed.
        detail: String,
    },
    /// File system trouble.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        source: std::io::Error,
    },
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> EmbeddedError {
    let context = context.into();
    move |source| EmbeddedError::Io { context, source }
}

/// The OS user the server processes run as: ourselves, or `postgres` when we are root.
#[derive(Debug, Clone, Copy)]
struct RunAs {
    uid: u32,
    gid: u32,
    switch: bool,
}

/// A private PostgreSQL cluster.
#[derive(Debug)]
pub struct EmbeddedCluster {
    bin_dir: PathBuf,
    data_dir: PathBuf,
    socket_dir: PathBuf,
    run_as: RunAs,
    /// True if this process started the server (and so must stop it).
    started_here: bool,
    /// Held by the service that owns the cluster, so a second service on the
    /// same directory is refused and an orphaned cluster is recognised.
    _service_lock: Option<nix::fcntl::Flock<std::fs::File>>,
}

/// Whether a process opens the cluster as the service that owns it (it
/// adopts a cluster left running by a killed service, stops it on exit, and
/// restarts it if it dies) or as a command beside a running service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `serve` / `demo`.
    Service,
    /// Any other subcommand.
    Command,
}

impl EmbeddedCluster {
    /// Initialises the cluster if needed and starts it unless it is already
    /// running (then it is reused and left running on [`stop`](Self::stop)).
    pub fn start(data_dir: &Path) -> Result<Self, EmbeddedError> {
        Self::open(data_dir, Role::Command)
    }

    /// Like [`start`](Self::start); as the [`Role::Service`], a cluster
    /// found running without a service (left by one killed with `kill -9`)
    /// is adopted: stopped when this service stops.
    pub fn open(data_dir: &Path, role: Role) -> Result<Self, EmbeddedError> {
        let bin_dir = find_bin_dir().ok_or(EmbeddedError::NoBinaries)?;
        let run_as = run_as()?;
        std::fs::create_dir_all(data_dir).map_err(io(format!("creating {}", data_dir.display())))?;
        let data_dir = data_dir.canonicalize().map_err(io(format!("resolving {}", data_dir.display())))?;
        let socket_dir = socket_dir_for(&data_dir);
        std::fs::create_dir_all(&socket_dir).map_err(io(format!("creating {}", socket_dir.display())))?;
        if run_as.switch {
            chown_recursive_top(&data_dir, run_as)?;
            chown_recursive_top(&socket_dir, run_as)?;
            check_traversable(&data_dir)?;
        }
        let mut cluster = Self { bin_dir, data_dir, socket_dir, run_as, started_here: false, _service_lock: None };
        if !cluster.data_dir.join("PG_VERSION").exists() {
            cluster.initdb()?;
        }
        if role == Role::Service {
            cluster._service_lock = Some(cluster.service_lock()?);
        }
        if !cluster.is_running() {
            cluster.pg_ctl_start()?;
            cluster.started_here = true;
        } else if role == Role::Service {
            // We hold the service lock, so no service owns this running
            // cluster: its service died. Adopt it.
            tracing::warn!(dir = %cluster.data_dir.display(), "adopting a PostgreSQL cluster left running by a stopped service");
            cluster.started_here = true;
        }
        Ok(cluster)
    }

    /// Takes the data directory's service lock, or says who holds it.
    fn service_lock(&self) -> Result<nix::fcntl::Flock<std::fs::File>, EmbeddedError> {
        let path = self.data_dir.join("atelier-service.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io(format!("opening {}", path.display())))?;
        nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock).map_err(|_| EmbeddedError::Tool {
            tool: "atelier serve".into(),
            detail: format!("another Atelier service already uses {}; stop it first", self.data_dir.display()),
        })
    }

    /// Starts the server again if it is not running (it died); true when it
    /// had to. Only for the service that owns the cluster.
    pub fn ensure_running(&mut self) -> Result<bool, EmbeddedError> {
        if self.is_running() {
            return Ok(false);
        }
        self.pg_ctl_start()?;
        self.started_here = true;
        Ok(true)
    }

    /// Connection options for a database in this cluster.
    pub fn connect_options(&self, database: &str) -> PgConnectOptions {
        PgConnectOptions::new().socket(&self.socket_dir).port(PORT).username(SUPERUSER).database(database)
    }

    /// A libpq connection string for a database in this cluster, for
    /// PostgreSQL's own tools (`pg_dump`, `pg_restore`).
    pub fn conninfo(&self, database: &str) -> String {
        format!("host='{}' port={PORT} user={SUPERUSER} dbname={database}", self.socket_dir.display())
    }

    /// The directory holding the unix socket.
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The server's log file (each line names its database: `db=<name>`).
    pub fn log_file(&self) -> PathBuf {
        self.data_dir.join("server.log")
    }

    /// Whether this process started the server.
    pub fn started_here(&self) -> bool {
        self.started_here
    }

    /// A command for a PostgreSQL tool, run as the right OS user.
    pub fn tool(&self, name: &str) -> Command {
        let mut cmd = Command::new(self.bin_dir.join(name));
        if self.run_as.switch {
            use std::os::unix::process::CommandExt;
            cmd.uid(self.run_as.uid).gid(self.run_as.gid);
            // HOME of root is not readable by postgres; avoid tools looking there.
            cmd.env("HOME", &self.data_dir).current_dir(&self.data_dir);
        }
        cmd
    }

    fn initdb(&self) -> Result<(), EmbeddedError> {
        tracing::info!(dir = %self.data_dir.display(), "initialising embedded PostgreSQL cluster");
        let out = self
            .tool("initdb")
            .arg("-D")
            .arg(&self.data_dir)
            .args(["-U", SUPERUSER, "--auth=trust", "--encoding=UTF8", "--no-locale"])
            .output()
            .map_err(io("running initdb"))?;
        if !out.status.success() {
            return Err(EmbeddedError::Tool {
                tool: "initdb".into(),
                detail: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        Ok(())
    }

    fn is_running(&self) -> bool {
        self.tool("pg_ctl")
            .arg("status")
            .arg("-D")
            .arg(&self.data_dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    fn pg_ctl_start(&self) -> Result<(), EmbeddedError> {
        tracing::info!(socket = %self.socket_dir.display(), "starting embedded PostgreSQL");
        let options = format!(
            "-c listen_addresses='' -k {} -p {PORT} -c unix_socket_permissions=0700 -c max_connections=200 -c fsync=on \
             -c log_line_prefix='%m [%p] db=%d '",
            self.socket_dir.display()
        );
        let out = self
            .tool("pg_ctl")
            .arg("start")
            .arg("-D")
            .arg(&self.data_dir)
            .arg("-w")
            .arg("-l")
            .arg(self.log_file())
            .arg("-o")
            .arg(options)
            .stdin(Stdio::null())
            .output()
            .map_err(io("running pg_ctl start"))?;
        if !out.status.success() {
            let log = std::fs::read_to_string(self.log_file()).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(10).collect();
            let detail = format!(
                "{}{}\nlast lines of server.log:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
            return Err(EmbeddedError::Tool { tool: "pg_ctl start".into(), detail });
        }
        Ok(())
    }

    /// Stops the server if this process started it (fast shutdown: open
    /// sessions are ended, committed data is safe).
    pub fn stop(&mut self) -> Result<(), EmbeddedError> {
        if !self.started_here {
            return Ok(());
        }
        tracing::info!("stopping embedded PostgreSQL");
        let out = self
            .tool("pg_ctl")
            .arg("stop")
            .arg("-D")
            .arg(&self.data_dir)
            .args(["-m", "fast", "-w"])
            .output()
            .map_err(io("running pg_ctl stop"))?;
        self.started_here = false;
        if !out.status.success() {
            return Err(EmbeddedError::Tool {
                tool: "pg_ctl stop".into(),
                detail: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        Ok(())
    }
}

impl EmbeddedCluster {
    /// Starts a watchdog that stops the server and deletes the data
    /// directory once the returned pipe closes, which happens when this
    /// process exits however it exits. Meant for throwaway clusters (tests).
    pub fn remove_on_exit(mut self) -> Result<std::process::ChildStdin, EmbeddedError> {
        let script = format!(
            "cat >/dev/null; '{}' stop -D '{}' -m immediate -w >/dev/null 2>&1; rm -rf '{}' '{}'",
            self.bin_dir.join("pg_ctl").display(),
            self.data_dir.display(),
            self.data_dir.display(),
            self.socket_dir.display()
        );
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(script).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null());
        if self.run_as.switch {
            use std::os::unix::process::CommandExt;
            cmd.uid(self.run_as.uid).gid(self.run_as.gid).current_dir("/");
        }
        let mut child = cmd.spawn().map_err(io("starting the cluster watchdog"))?;
        // The watchdog owns the shutdown now.
        self.started_here = false;
        child.stdin.take().ok_or_else(|| EmbeddedError::Tool { tool: "watchdog".into(), detail: "no stdin".into() })
    }
}

impl Drop for EmbeddedCluster {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            tracing::error!(error = %e, "could not stop embedded PostgreSQL");
        }
    }
}

/// Where the socket goes: in the data directory when the path is short
/// enough, else in a directory under /tmp named after the data directory, so
/// every process computes the same place.
pub fn socket_dir_for(data_dir: &Path) -> PathBuf {
    if data_dir.as_os_str().len() <= MAX_SOCKET_DIR_LEN {
        return data_dir.to_owned();
    }
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(data_dir.as_os_str().as_encoded_bytes());
    PathBuf::from(format!("/tmp/atelier-pg-{}", &hex::encode(digest)[..16]))
}

/// Finds the directory holding `initdb`, `pg_ctl` and `postgres`.
pub fn find_bin_dir() -> Option<PathBuf> {
    let pg_config = Command::new("pg_config")
        .arg("--bindir")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    find_bin_dir_in(std::env::var_os("PATH").as_deref(), pg_config.as_deref(), Path::new("/usr/lib/postgresql"))
}

/// The search itself: `PATH` first, then `pg_config --bindir`, then the
/// newest `<versions_root>/<major>/bin` (Debian's layout).
fn find_bin_dir_in(path: Option<&std::ffi::OsStr>, pg_config: Option<&Path>, versions_root: &Path) -> Option<PathBuf> {
    let has_tools = |d: &Path| d.join("initdb").is_file() && d.join("pg_ctl").is_file() && d.join("postgres").is_file();
    if let Some(d) = path.and_then(|p| std::env::split_paths(p).find(|d| has_tools(d))) {
        return Some(d);
    }
    if let Some(d) = pg_config.filter(|d| has_tools(d)) {
        return Some(d.to_owned());
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(versions_root)
        .ok()?
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, d): &(u32, PathBuf)| has_tools(d))
        .collect();
    versions.sort();
    versions.pop().map(|(_, d)| d)
}

fn run_as() -> Result<RunAs, EmbeddedError> {
    let me = nix::unistd::geteuid();
    if !me.is_root() {
        return Ok(RunAs { uid: me.as_raw(), gid: nix::unistd::getegid().as_raw(), switch: false });
    }
    let user = nix::unistd::User::from_name("postgres").ok().flatten().ok_or(EmbeddedError::NoPostgresUser)?;
    Ok(RunAs { uid: user.uid.as_raw(), gid: user.gid.as_raw(), switch: true })
}

/// Gives a directory (and, for a fresh cluster, its contents) to the server user.
fn chown_recursive_top(dir: &Path, run_as: RunAs) -> Result<(), EmbeddedError> {
    let owner = |p: &Path| {
        nix::unistd::chown(
            p,
            Some(nix::unistd::Uid::from_raw(run_as.uid)),
            Some(nix::unistd::Gid::from_raw(run_as.gid)),
        )
        .map_err(|e| EmbeddedError::Io { context: format!("chown {}", p.display()), source: e.into() })
    };
    owner(dir)?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(io(format!("chmod {}", dir.display())))
}

/// Whether the `postgres` user (run as when Atelier runs as root) can reach
/// `dir`: every parent searchable by others. Always true for other users.
pub fn reachable_by_server(dir: &Path) -> bool {
    let root = nix::unistd::geteuid().is_root();
    !root || check_traversable(dir).is_ok()
}

/// Atelier's own data directory (an empty one it was given, or one it made)
/// is made traversable (`o+x`, `g+x`: not listable) when Atelier runs as
/// root, so that the `postgres` user reaches the cluster inside it; a
/// directory owned by someone else is left as it is.
pub fn open_up_data_dir(dir: &Path) -> Result<(), EmbeddedError> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if !nix::unistd::geteuid().is_root() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    let meta = std::fs::metadata(dir).map_err(io(format!("reading {}", dir.display())))?;
    if meta.uid() == nix::unistd::geteuid().as_raw() && meta.permissions().mode() & 0o011 != 0o011 {
        let mode = (meta.permissions().mode() & 0o7777) | 0o011;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))
            .map_err(io(format!("chmod {}", dir.display())))?;
    }
    Ok(())
}

/// Where the cluster of a data directory the `postgres` user cannot reach
/// lives instead: under `/var/lib/atelier`, named by the data directory's
/// path, so every command of that checkout finds the same cluster.
pub fn fallback_cluster_dir(data_dir: &Path) -> PathBuf {
    use sha2::Digest;
    let full = data_dir.canonicalize().unwrap_or_else(|_| data_dir.to_owned());
    let digest = hex::encode(sha2::Sha256::digest(full.to_string_lossy().as_bytes()));
    PathBuf::from("/var/lib/atelier").join(&digest[..16]).join("postgres")
}

/// Every parent of the data directory must be searchable by the server user.
fn check_traversable(dir: &Path) -> Result<(), EmbeddedError> {
    use std::os::unix::fs::PermissionsExt;
    for parent in dir.ancestors().skip(1) {
        let Ok(meta) = std::fs::metadata(parent) else { continue };
        // Others need the execute bit (the postgres user owns none of these).
        if meta.permissions().mode() & 0o001 == 0 {
            return Err(EmbeddedError::NotTraversable { dir: dir.to_owned() });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_bin(dir: &Path) {
        std::fs::create_dir_all(dir).expect("dir");
        for tool in ["initdb", "pg_ctl", "postgres"] {
            std::fs::write(dir.join(tool), "").expect("tool");
        }
    }

    #[test]
    fn finds_the_newest_debian_version_after_path_and_pg_config() {
        let root = tempfile::tempdir().expect("tempdir");
        let versions = root.path().join("lib");
        fake_bin(&versions.join("13/bin"));
        fake_bin(&versions.join("15/bin"));
        std::fs::create_dir_all(versions.join("16/bin")).expect("incomplete install");
        assert_eq!(find_bin_dir_in(None, None, &versions), Some(versions.join("15/bin")));
        let on_path = root.path().join("path-bin");
        fake_bin(&on_path);
        let path = std::env::join_paths([root.path().join("nothing"), on_path.clone()]).expect("path");
        assert_eq!(find_bin_dir_in(Some(&path), None, &versions), Some(on_path.clone()));
        let configured = root.path().join("configured");
        fake_bin(&configured);
        assert_eq!(find_bin_dir_in(None, Some(&configured), &versions), Some(configured));
        assert_eq!(
            find_bin_dir_in(None, None, &root.path().join("absent")),
            None,
            "then the caller explains how to fix it"
        );
    }

    #[test]
    fn long_data_directories_get_a_short_stable_socket_directory() {
        let short = Path::new("/srv/atelier/pg");
        assert_eq!(socket_dir_for(short), short);
        let long = PathBuf::from(format!("/home/someone/{}/data/postgres", "very-long-project-name".repeat(4)));
        let socket = socket_dir_for(&long);
        assert!(socket.to_string_lossy().starts_with("/tmp/atelier-pg-"));
        assert!(socket.join(".s.PGSQL.5432").as_os_str().len() < 100);
        assert_eq!(socket_dir_for(&long), socket, "every process finds the same socket");
    }
}
