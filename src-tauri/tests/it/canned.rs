//! The mocked UI's answers, made by the real commands: every request the
//! Playwright suite (`ui/tests/mock/`) makes of `assemble` is listed in
//! `ui/tests/mock/requests.json` (recorded by `make ui-record`); this test
//! asks each of them of the real app over IPC, on the fixture project
//! `tests/fixtures/panel` (or one of its variants), and checks that
//! `ui/src/lib/backend/canned.json` holds exactly those answers. The mock
//! serves them, so the UI is tested against what the engine assembles, not
//! against a second engine. `make types` rewrites the file
//! (`LOUPE_UPDATE_TYPES=1`).

use crate::support::Harness;
use loupe_engine::ProjectConfig;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

const REQUESTS: &str = "ui/tests/mock/requests.json";
const CANNED: &str = "ui/src/lib/backend/canned.json";
const FIXTURE: &str = "tests/fixtures/panel";

/// Every file's modification time: long before any `now`, so recency
/// adds nothing and the answers do not depend on the day they were made.
fn fixed_time() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000)
}

fn repo_path(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
}

fn append(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    let mut old = std::fs::read_to_string(&path).unwrap();
    old.push_str(text);
    std::fs::write(&path, old).unwrap();
}

fn pin_times(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() == ".git" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            pin_times(&entry.path());
        } else {
            std::fs::File::options()
                .write(true)
                .open(entry.path())
                .unwrap()
                .set_modified(fixed_time())
                .unwrap();
        }
    }
}

/// git with fixed dates, so commit ids and history are the same each run.
fn git(dir: &Path, args: &[&str]) {
    loupe_testkit::git_dated(dir, args, "2001-09-09T01:46:40Z");
}

const FITS: &str = "
/// Whether `item` alone fits in `budget`.
pub fn fits(item: &Item, budget: usize) -> bool {
    count(&item.text) <= budget
}
";

/// The fixture as the variant `name` of the mock's projects has it:
/// `panel` is a git repository with a tagged first commit, a staged and an
/// unstaged change (the Changes switch reviews them); `stale` has a file
/// changed after indexing; `secret` holds a key to redact; `staged` has a
/// file only the vectors find (`staged-vectors` has its vectors built).
fn variant(name: &str) -> (tempfile::TempDir, bool) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    loupe_testkit::copy_dir(&repo_path(FIXTURE), root);
    match name {
        "panel" => {
            let pack = std::fs::read_to_string(root.join("src/pack.rs")).unwrap();
            let first = pack.replace(FITS, "");
            assert_ne!(first, pack, "the fixture's pack.rs lost `fits`");
            std::fs::write(root.join("src/pack.rs"), first).unwrap();
            git(root, &["init", "-q"]);
            git(root, &["add", "-A"]);
            git(
                root,
                &["commit", "-qm", "Pack ranked items into a token budget"],
            );
            git(root, &["tag", "v1"]);
            std::fs::write(root.join("src/pack.rs"), pack).unwrap();
            git(
                root,
                &["commit", "-qam", "Say whether one item fits the budget"],
            );
            append(
                root,
                "src/render.rs",
                "\n/// Renders one item alone.\npub fn render_one(item: &Item) -> String {\n    render(&[item])\n}\n",
            );
            git(root, &["add", "src/render.rs"]);
            append(
                root,
                "src/pack.rs",
                "\n/// The tokens still free once `items` are packed.\npub fn room_left(items: &[&Item], budget: usize) -> usize {\n    let used: usize = items.iter().map(|i| count(&i.text)).sum();\n    budget.saturating_sub(used)\n}\n",
            );
        }
        "stale" => {}
        "secret" => write(
            root,
            "src/upload.rs",
            "//! Uploading packed prompts.\n\n/// The deploy key the packed prompts are uploaded with.\npub const UPLOAD_KEY: &str = \"AKIAIOSFODNN7EXAMPLF\";\n\n/// Uploads one packed prompt.\npub fn upload(prompt: &str) -> usize {\n    prompt.len() + UPLOAD_KEY.len()\n}\n",
        ),
        "staged" | "staged-vectors" => write(
            root,
            "src/steal.rs",
            "//! Task stealing between thread queues.\n\n/// Takes a task from the back of another thread's queue when ours is empty.\npub fn steal_task(queues: &mut [Vec<u32>], me: usize) -> Option<u32> {\n    for (i, queue) in queues.iter_mut().enumerate() {\n        if i != me {\n            if let Some(task) = queue.pop() {\n                return Some(task);\n            }\n        }\n    }\n    None\n}\n",
        ),
        other => panic!("{REQUESTS}: no project variant \"{other}\""),
    }
    pin_times(root);
    (dir, name == "staged-vectors")
}

/// Floats rounded to four places: the answers stay the same across
/// machines whose last bits of a score differ.
fn rounded(v: Value) -> Value {
    match v {
        Value::Number(n) if !(n.is_i64() || n.is_u64()) => {
            let x = n.as_f64().unwrap_or_default();
            json!((x * 1e4).round() / 1e4)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(rounded).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, rounded(v))).collect()),
        other => other,
    }
}

/// Sets the project's pins and bans to `want` (a `SelectionDto`), from
/// `have`.
fn select(h: &Harness, root: &str, have: &mut Value, want: &Value) {
    if have == want {
        return;
    }
    let targets = |s: &Value, key: &str| s[key].as_array().cloned().unwrap_or_default();
    for t in targets(have, "pinned")
        .into_iter()
        .chain(targets(have, "banned"))
    {
        let _: Value = h.ok(
            "mark",
            json!({ "root": root, "target": t, "mark": "clear" }),
        );
    }
    for (key, mark) in [("pinned", "pin"), ("banned", "ban")] {
        for t in targets(want, key) {
            let _: Value = h.ok("mark", json!({ "root": root, "target": t, "mark": mark }));
        }
    }
    *have = want.clone();
}

/// The project's chunks by file, as the mock's map, completion and
/// detail views need them.
fn index_of(root: &Path, data: &Path) -> Value {
    tauri::async_runtime::block_on(async {
        let project = loupe_engine::Project::open(root, ProjectConfig::new(data))
            .await
            .unwrap();
        let ids = project.catalog().chunk_ids().await.unwrap();
        let mut chunks = project.catalog().chunks(&ids).await.unwrap();
        chunks.sort_by(|(a, _), (b, _)| (&a.path, a.start_line).cmp(&(&b.path, b.start_line)));
        let mut files: BTreeMap<String, (u64, Vec<Value>)> = BTreeMap::new();
        for (c, _) in chunks {
            let file = files.entry(c.path.clone()).or_default();
            file.0 += u64::from(c.tokens);
            file.1.push(json!({
                "id": c.id,
                "start_line": c.start_line,
                "end_line": c.end_line,
                "symbol": c.symbol,
                "language": c.language,
            }));
        }
        Value::Array(
            files
                .into_iter()
                .map(|(path, (tokens, chunks))| json!({ "path": path, "tokens": tokens, "chunks": chunks }))
                .collect(),
        )
    })
}

fn wait_for_vectors(h: &Harness, root: &str) {
    for _ in 0..600 {
        let status: Value = h.ok("project_status", json!({ "root": root }));
        if status["vectors_ready"] == json!(true) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the vectors of {root} did not land in a minute");
}

/// The file's text: the shared answers first, then one answer per line.
fn render(shared: &Value, projects: &BTreeMap<String, Value>, answers: &[Value]) -> String {
    let mut out = String::from("{\n");
    out.push_str(
        "\"note\": \"Written by `make types` (src-tauri/tests/it/canned.rs): the real app's answers to the requests in ui/tests/mock/requests.json, on tests/fixtures/panel. Do not edit.\",\n",
    );
    for key in ["models", "builtin_instructions", "default_knobs"] {
        out.push_str(&format!("{}: {},\n", json!(key), shared[key]));
    }
    out.push_str("\"projects\": {\n");
    let n = projects.len();
    for (i, (name, index)) in projects.iter().enumerate() {
        out.push_str(&format!(
            "{}: {}{}\n",
            json!(name),
            index,
            if i + 1 < n { "," } else { "" }
        ));
    }
    out.push_str("},\n\"answers\": [\n");
    for (i, a) in answers.iter().enumerate() {
        out.push_str(&a.to_string());
        out.push_str(if i + 1 < answers.len() { ",\n" } else { "\n" });
    }
    out.push_str("]\n}\n");
    out
}

#[test]
fn canned_answers_of_the_mocked_ui_are_the_real_apps() {
    let requests: Vec<Value> = match std::fs::read_to_string(repo_path(REQUESTS)) {
        Ok(text) => serde_json::from_str(&text).unwrap(),
        Err(e) => panic!("{REQUESTS}: {e}"),
    };
    let mut by_project: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for r in requests {
        let project = r["project"].as_str().unwrap().to_owned();
        by_project.entry(project).or_default().push(r);
    }
    // Every variant's index is listed, asked of or not: the mock opens them.
    for name in ["panel", "stale", "secret", "staged", "staged-vectors"] {
        by_project.entry(name.to_owned()).or_default();
    }

    let mut shared = json!({});
    let mut projects = BTreeMap::new();
    let mut answers = Vec::new();
    for (name, asked) in &by_project {
        let (dir, vectors) = variant(name);
        let h = Harness::over(dir, |data| {
            let mut config = ProjectConfig::new(data);
            // The real app's re-ranker (it reads only when `read_files` > 0).
            config.reader = Some(loupe_engine::signals::reader::Reader::shipped());
            if vectors {
                config.embedder = Some(std::sync::Arc::new(
                    loupe_engine::signals::embed::CodeEmbedder::new().unwrap(),
                ));
            }
            config
        });
        let root = h.open();
        if vectors {
            wait_for_vectors(&h, &root);
        }
        if name == "stale" {
            append(
                h.root(),
                "src/pack.rs",
                "\n// Changed since it was indexed.\n",
            );
        }
        if shared["models"].is_null() {
            for (key, cmd) in [
                ("models", "models"),
                ("builtin_instructions", "builtin_instructions"),
                ("default_knobs", "default_knobs"),
            ] {
                shared[key] = h.ok(cmd, json!({}));
            }
        }
        projects.insert(name.clone(), index_of(h.root(), h.data()));
        let mut selection = json!({ "pinned": [], "banned": [] });
        for request in asked {
            select(&h, &root, &mut selection, &request["selection"]);
            let args = json!({
                "root": root,
                "question": request["question"],
                "knobs": request["knobs"],
                "agentRequest": null,
                "change": request["change"],
                "skipReading": request["skip_reading"] == true,
            });
            let answer = match h.invoke("assemble", args) {
                Ok(body) => {
                    json!({ "request": request, "answer": rounded(body.deserialize::<Value>().unwrap()) })
                }
                Err(e) => json!({ "request": request, "error": e }),
            };
            answers.push(answer);
        }
    }
    let want = render(&shared, &projects, &answers);
    let path = repo_path(CANNED);
    if std::env::var_os("LOUPE_UPDATE_TYPES").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{CANNED} is out of date: run `make types` and commit the result"
    );
}
