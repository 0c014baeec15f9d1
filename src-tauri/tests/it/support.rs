//! Test harness: a temp fixture project, a mock-runtime app with the real
//! commands, and helpers to invoke them over IPC.

use loupe_app::dto::{ErrorDto, IndexEvent, OpenedDto};
use loupe_app::{AppState, build_app};
use loupe_engine::ProjectConfig;
use serde::de::DeserializeOwned;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tauri::ipc::{CallbackFn, Channel, InvokeBody, InvokeResponseBody};
use tauri::test::{
    INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder, mock_context, noop_assets,
};
use tauri::webview::InvokeRequest;
use tauri::{App, Manager, WebviewWindow, WebviewWindowBuilder};

/// A small project: code, its test, and docs, so roles and globs differ.
const FIXTURE: &[(&str, &str)] = &[
    (
        "src/pack.rs",
        "/// Packs items into the budget, best first.\n\
         pub fn pack_items(items: &[u32], budget: u32) -> Vec<u32> {\n    \
         let mut used = 0;\n    let mut out = Vec::new();\n    \
         for &item in items {\n        if used + item <= budget {\n            \
         used += item;\n            out.push(item);\n        }\n    }\n    out\n}\n",
    ),
    (
        "src/render.rs",
        "/// Renders packed items as text.\n\
         pub fn render(items: &[u32]) -> String {\n    \
         items.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(\",\")\n}\n",
    ),
    (
        "tests/pack_test.rs",
        "use crate::pack::pack_items;\n\n\
         #[test]\nfn pack_items_respects_budget() {\n    \
         assert_eq!(pack_items(&[3, 4, 5], 7), vec![3, 4]);\n}\n",
    ),
    (
        "docs/packing.md",
        "# Packing\n\nItems are packed with pack_items, best first, until the budget is used.\n",
    ),
];

/// One app on the mock runtime with its own project and data folders.
pub struct Harness {
    data: tempfile::TempDir,
    project: tempfile::TempDir,
    app: App<MockRuntime>,
    webview: WebviewWindow<MockRuntime>,
}

fn mock_app(config: ProjectConfig) -> (App<MockRuntime>, WebviewWindow<MockRuntime>) {
    let state = AppState::new(config);
    let app = build_app(mock_builder(), state)
        .build(mock_context(noop_assets()))
        .unwrap();
    let webview = WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    (app, webview)
}

/// The fixture project, written to a fresh temp folder.
fn fixture() -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    for (path, text) in FIXTURE {
        let path = project.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    project
}

impl Harness {
    /// A fresh fixture project and app.
    pub fn new() -> Self {
        Self::over(fixture(), |data| ProjectConfig::new(data))
    }

    /// [`Harness::new`] with the shipped re-ranker, as the real app has it.
    pub fn with_reader() -> Self {
        Self::over(fixture(), |data| {
            let mut config = ProjectConfig::new(data);
            config.reader = Some(loupe_engine::signals::reader::Reader::shipped());
            config
        })
    }

    /// An app over `project` (already written) opening projects with
    /// `config` (its data root is a fresh temp folder).
    pub fn over(project: tempfile::TempDir, config: impl FnOnce(&Path) -> ProjectConfig) -> Self {
        let data = tempfile::tempdir().unwrap();
        let (app, webview) = mock_app(config(data.path()));
        Self {
            data,
            project,
            app,
            webview,
        }
    }

    /// The same project and data folders in a new app (a restart).
    pub fn restart(self) -> Self {
        let Self { data, project, .. } = self;
        let (app, webview) = mock_app(ProjectConfig::new(data.path()));
        Self {
            data,
            project,
            app,
            webview,
        }
    }

    /// Open and index the fixture project; returns its canonical root.
    pub fn open(&self) -> String {
        let opened: OpenedDto = self.ok(
            "open_project",
            serde_json::json!({ "path": self.root(), "onProgress": "__CHANNEL__:1" }),
        );
        opened.status.root
    }

    /// The app's data root.
    pub fn data(&self) -> &Path {
        self.data.path()
    }

    /// The app, for calling commands directly.
    pub fn app(&self) -> &App<MockRuntime> {
        &self.app
    }

    /// The fixture project's folder.
    pub fn root(&self) -> &Path {
        self.project.path()
    }

    /// Invoke `cmd`: its answer, or its error as JSON.
    pub fn invoke(
        &self,
        cmd: &str,
        args: serde_json::Value,
    ) -> Result<InvokeResponseBody, serde_json::Value> {
        let request = InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            // The app's own origin on Linux; any other origin is "remote" and
            // needs a capability for custom commands.
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        };
        get_ipc_response(&self.webview, request)
    }

    /// Invoke `cmd` and decode its successful answer.
    pub fn ok<T: DeserializeOwned>(&self, cmd: &str, args: serde_json::Value) -> T {
        match self.invoke(cmd, args) {
            Ok(body) => body.deserialize().unwrap(),
            Err(e) => panic!("{cmd} failed: {e}"),
        }
    }

    /// Invoke `cmd`, expecting an error; returns it as JSON.
    pub fn err(&self, cmd: &str, args: serde_json::Value) -> serde_json::Value {
        match self.invoke(cmd, args) {
            Ok(body) => panic!("{cmd} succeeded: {body:?}"),
            Err(e) => e,
        }
    }

    /// Arguments of `assemble` for this project: default knobs with `knobs`
    /// fields laid over them.
    pub fn ask(&self, question: &str, knobs: serde_json::Value) -> serde_json::Value {
        let mut merged: serde_json::Value = self.ok("default_knobs", serde_json::json!({}));
        if let (Some(base), Some(over)) = (merged.as_object_mut(), knobs.as_object()) {
            for (k, v) in over {
                base.insert(k.clone(), v.clone());
            }
        }
        let root = std::fs::canonicalize(self.root()).unwrap();
        serde_json::json!({ "root": root, "question": question, "knobs": merged })
    }

    /// Call `open_project` directly with a Rust-side channel that records
    /// every progress event; with `cancel_on_first_event`, the channel asks
    /// `cancel_index` to stop the run as soon as the first report arrives.
    pub fn open_with_channel(
        &self,
        cancel_on_first_event: bool,
    ) -> (Result<OpenedDto, ErrorDto>, Vec<IndexEvent>) {
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&events);
        let handle = self.app.handle().clone();
        let root = self.root().to_string_lossy().into_owned();
        let cancel_root = root.clone();
        let channel = Channel::new(move |body: InvokeResponseBody| {
            let event: IndexEvent = body.deserialize().unwrap();
            let mut events = sink.lock().unwrap();
            if cancel_on_first_event && events.is_empty() {
                let state = handle.state::<AppState>();
                assert!(loupe_app::commands::cancel_index(state, cancel_root.clone()).unwrap());
            }
            events.push(event);
            Ok(())
        });
        let opened = tauri::async_runtime::block_on(loupe_app::commands::open_project(
            self.app.state::<AppState>(),
            root,
            channel,
        ));
        let events = events.lock().unwrap().clone();
        (opened, events)
    }
}

pub use loupe_testkit::git;
