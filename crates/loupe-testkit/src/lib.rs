//! What the workspace's test crates share: the engine's, the CLI's and the
//! app's integration tests build git repositories the same way. A
//! dev-dependency only; nothing here ships.

use std::path::Path;

/// Runs git in `dir` as a test user (no signing, branch `main`); fails the
/// test with git's words when git says no.
///
/// # Panics
///
/// When git cannot be run or exits with an error: the test fails there.
pub fn git(dir: &Path, args: &[&str]) {
    run_git(dir, args, None);
}

/// [`git`] with author and committer dates fixed at `date`, so commits
/// (and their ids) are the same on every run.
///
/// # Panics
///
/// As [`git`].
pub fn git_dated(dir: &Path, args: &[&str], date: &str) {
    run_git(dir, args, Some(date));
}

fn run_git(dir: &Path, args: &[&str], date: Option<&str>) {
    let mut cmd = std::process::Command::new("git");
    cmd.arg("-C").arg(dir).args([
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "-c",
        "commit.gpgsign=false",
        "-c",
        "init.defaultBranch=main",
    ]);
    if let Some(date) = date {
        cmd.env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date);
    }
    let out = match cmd.args(args).output() {
        Ok(out) => out,
        Err(e) => panic!("git {args:?} does not run: {e}"),
    };
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Copies the folder `from` to `to` (files and folders only).
///
/// # Panics
///
/// When a file cannot be read or written: the test fails there.
pub fn copy_dir(from: &Path, to: &Path) {
    let fail =
        |what: &str, e: std::io::Error| -> ! { panic!("copying {}: {what}: {e}", from.display()) };
    std::fs::create_dir_all(to).unwrap_or_else(|e| fail("create", e));
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| fail("read", e)) {
        let entry = entry.unwrap_or_else(|e| fail("read", e));
        let target = to.join(entry.file_name());
        if entry
            .file_type()
            .unwrap_or_else(|e| fail("stat", e))
            .is_dir()
        {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap_or_else(|e| fail("copy", e));
        }
    }
}

/// A stub of an OpenAI-compatible chat endpoint on loopback, for the
/// secondary LLM's tests: every `POST /v1/chat/completions` is answered,
/// after `delay`, with a completion whose content is `reply`. Returns the
/// base URL (`http://127.0.0.1:PORT/v1`) and the request bodies received.
///
/// # Panics
///
/// When no loopback port can be bound.
pub fn chat_stub(
    reply: &'static str,
    delay: std::time::Duration,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = match std::net::TcpListener::bind("127.0.0.1:0") {
        Ok(l) => l,
        Err(e) => panic!("no loopback port: {e}"),
    };
    let base = match listener.local_addr() {
        Ok(addr) => format!("http://{addr}/v1"),
        Err(e) => panic!("no loopback address: {e}"),
    };
    let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&bodies);
    let escaped: String = reply
        .chars()
        .flat_map(|c| match c {
            '"' => vec!['\\', '"'],
            '\\' => vec!['\\', '\\'],
            '\n' => vec!['\\', 'n'],
            c => vec![c],
        })
        .collect();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let Ok(read_half) = stream.try_clone() else {
                continue;
            };
            let mut reader = BufReader::new(read_half);
            let mut request_line = String::new();
            let mut len = 0usize;
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() || line == "\r\n" || line.is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; len];
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            if let Ok(mut seen) = seen.lock() {
                seen.push(String::from_utf8_lossy(&body).into_owned());
            }
            std::thread::sleep(delay);
            let (status, json) = if request_line.starts_with("POST /v1/chat/completions ") {
                (
                    "200 OK",
                    format!(
                        r#"{{"choices":[{{"index":0,"message":{{"role":"assistant","content":"{escaped}"}}}}]}}"#
                    ),
                )
            } else {
                ("404 Not Found", r#"{"error":"no such route"}"#.to_owned())
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}",
                json.len()
            );
        }
    });
    (base, bodies)
}

pub mod pg;
