//! A throwaway PostgreSQL server for the shared store's tests: Debian's
//! `postgresql` package (`make deps` installs it), a cluster in a temp
//! dir on a free loopback port, run as the unprivileged `postgres` user
//! when the tests run as root (the server refuses root). Dropped: stopped
//! at once and deleted.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A running cluster with trust authentication on 127.0.0.1.
pub struct PgCluster {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    /// Run the server's tools as this user (`Some` when we are root).
    user: Option<&'static str>,
}

/// The newest installed server's programs.
fn server_bin() -> PathBuf {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_string_lossy().parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    versions.sort();
    match versions.pop() {
        Some((_, bin)) => bin,
        None => panic!(
            "no PostgreSQL server under /usr/lib/postgresql: the shared store's tests run \
             against a real one (`make deps` installs Debian's `postgresql` package)"
        ),
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|l| l.split_whitespace().next() == Some("0"))
        })
        .unwrap_or(false)
}

fn free_port() -> u16 {
    match std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()) {
        Ok(addr) => addr.port(),
        Err(e) => panic!("no free loopback port: {e}"),
    }
}

impl PgCluster {
    /// Create and start a cluster.
    ///
    /// # Panics
    ///
    /// When no server is installed or it does not start: the test fails
    /// there, with the server's words.
    pub fn start() -> Self {
        let bin = server_bin();
        let user = is_root().then_some("postgres");
        let base =
            std::env::temp_dir().join(format!("loupe-pg-{}-{}", std::process::id(), free_port()));
        let dir = base.join("data");
        std::fs::create_dir_all(&base).unwrap_or_else(|e| panic!("{}: {e}", base.display()));
        if let Some(user) = user {
            let status = Command::new("chown")
                .arg(user)
                .arg(&base)
                .status()
                .unwrap_or_else(|e| panic!("chown: {e}"));
            assert!(status.success(), "chown {user} {}", base.display());
        }
        let cluster = Self {
            bin,
            dir,
            port: free_port(),
            user,
        };
        cluster.tool(
            "initdb",
            &[
                "-D",
                &cluster.dir.to_string_lossy(),
                "-A",
                "trust",
                "-U",
                "loupe",
                "--no-sync",
            ],
        );
        cluster.up();
        cluster
    }

    /// One of the server's programs, run as the server's user.
    fn command(&self, name: &str) -> Command {
        let program = self.bin.join(name);
        let mut cmd = match self.user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(&program);
                c
            }
            None => Command::new(&program),
        };
        // The server's user may not enter the test's working directory.
        cmd.current_dir(self.dir.parent().unwrap_or(Path::new("/")));
        cmd
    }

    /// Run one of the server's programs, failing the test with its output
    /// when it fails.
    fn tool(&self, name: &str, args: &[&str]) -> String {
        let out = self
            .command(name)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{name} does not run: {e}"));
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{name} {args:?}: {text}");
        text
    }

    /// Start the server (again), waiting until it accepts connections.
    pub fn up(&self) {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=off \
             -c full_page_writes=off -c max_connections=40",
            self.port
        );
        let log = self
            .dir
            .parent()
            .unwrap_or(Path::new("/tmp"))
            .join("server.log");
        self.tool(
            "pg_ctl",
            &[
                "-D",
                &self.dir.to_string_lossy(),
                "-o",
                &options,
                "-l",
                &log.to_string_lossy(),
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
    }

    /// Stop the server: `immediate` kills it as a crash would (no
    /// checkpoint, clients cut off mid-statement), else a fast shutdown.
    pub fn down(&self, immediate: bool) {
        let mode = if immediate { "immediate" } else { "fast" };
        self.tool(
            "pg_ctl",
            &["-D", &self.dir.to_string_lossy(), "-m", mode, "-w", "stop"],
        );
    }

    /// The server's processes: the postmaster and its children.
    fn processes(&self) -> Vec<u32> {
        let pid_file = self.dir.join("postmaster.pid");
        let Some(main) = std::fs::read_to_string(pid_file)
            .ok()
            .and_then(|s| s.lines().next().and_then(|l| l.trim().parse::<u32>().ok()))
        else {
            return Vec::new();
        };
        let mut pids = vec![main];
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // pid (comm) state ppid ...: comm may hold spaces, so read after ')'.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if ppid == Some(main) {
                pids.push(pid);
            }
        }
        pids
    }

    /// Freeze (`SIGSTOP`) or thaw (`SIGCONT`) every server process: a
    /// server that accepts connections at the kernel and never answers.
    pub fn pause(&self, frozen: bool) {
        signal(&self.processes(), frozen);
    }

    /// Freeze every server process now and thaw them after `d` (on a
    /// thread of its own): a server slow to answer, not dead.
    pub fn freeze_for(&self, d: std::time::Duration) -> std::thread::JoinHandle<()> {
        let pids = self.processes();
        signal(&pids, true);
        std::thread::spawn(move || {
            std::thread::sleep(d);
            signal(&pids, false);
        })
    }

    /// Run SQL as the superuser (`loupe`), returning psql's output.
    pub fn sql(&self, db: &str, sql: &str) -> String {
        let psql = self.bin.join("psql");
        let out = Command::new(&psql)
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "loupe",
                "-d",
                db,
                "-v",
                "ON_ERROR_STOP=1",
                "-At",
                "-c",
                sql,
            ])
            .output()
            .unwrap_or_else(|e| panic!("psql does not run: {e}"));
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// A new empty database, and the URL that reaches it as `user`
    /// (a superuser's, `loupe`, unless another role was made).
    pub fn database(&self, name: &str) -> String {
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(name, "loupe")
    }

    /// The URL of database `db` as `user` (trust: no password).
    pub fn url(&self, db: &str, user: &str) -> String {
        format!("postgres://{user}@127.0.0.1:{}/{db}", self.port)
    }
}

/// `SIGSTOP` (`frozen`) or `SIGCONT` to `pids`.
fn signal(pids: &[u32], frozen: bool) {
    let signal = if frozen { "-STOP" } else { "-CONT" };
    for pid in pids {
        // A child may have ended meanwhile: nothing to say then.
        let _ = Command::new("kill")
            .args([signal, &pid.to_string()])
            .output();
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        self.pause(false);
        let _ = self
            .command("pg_ctl")
            .args([
                "-D",
                &self.dir.to_string_lossy(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ])
            .output();
        if let Some(base) = self.dir.parent() {
            let _ = std::fs::remove_dir_all(base);
        }
    }
}
