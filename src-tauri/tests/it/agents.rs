//! What agents were given: the agent log that `loupe mcp` writes, listed,
//! re-opened and compared through the app's commands, and knobs saved for
//! agents. (The e2e run makes the call with a real MCP client.)

use crate::support::Harness;
use loupe_app::dto::{
    AgentRequestDetailDto, AgentRequestsDto, AssemblyDto, KnobsDto, ProjectSettingsDto, RowStatus,
};
use loupe_assemble::{Budget, Knobs};
use loupe_engine::asking::agent_log::{self, AgentRequest, CallInfo, LoggedReport};
use loupe_engine::{Selection, Target};
use serde_json::json;
use std::io::Write as _;

#[test]
fn an_agent_call_is_listed_reopened_as_the_same_prompt_and_its_knobs_saved() {
    let h = Harness::new();
    let root = h.open();
    let dir = loupe_engine::stores::store::project_dir(h.data(), std::path::Path::new(&root));
    let none: AgentRequestsDto = h.ok("agent_requests", json!({ "root": root, "known": null }));
    assert!(none.changed && none.requests.is_empty() && !none.agent_knobs);

    // What `loupe mcp` records for a call that banned the docs: its question,
    // knobs and ban, and the hash of the prompt it got.
    let question = "how does pack_items choose items?";
    let args = h.ask(question, json!({ "budget": 3000 }));
    let docs = json!({ "kind": "file", "path": "docs/packing.md" });
    let _: serde_json::Value = h.ok(
        "mark",
        json!({ "root": root, "target": docs, "mark": "ban" }),
    );
    let got: AssemblyDto = h.ok("assemble", args.clone());
    let _: serde_json::Value = h.ok(
        "mark",
        json!({ "root": root, "target": docs, "mark": "clear" }),
    );
    let knobs: KnobsDto = serde_json::from_value(args["knobs"].clone()).unwrap();
    let entry = AgentRequest {
        id: "call-1".into(),
        time_ms: 1_700_000_000_000,
        call: CallInfo {
            tool: "context".into(),
            client: Some("an agent 2.0".into()),
            question: question.into(),
            change: None,
            target: None,
            knobs: Knobs::from(knobs.clone()),
            selection: Selection {
                pinned: Vec::new(),
                banned: vec![Target::File {
                    path: "docs/packing.md".into(),
                }],
            },
        },
        report: LoggedReport {
            budget: 3000,
            used: got.report.used,
            prompt_hash: agent_log::prompt_hash(&got.prompt),
            ..LoggedReport::default()
        },
        items: Vec::new(),
        items_total: 0,
    };
    agent_log::record(&dir, &entry).unwrap();

    // Listed, and not sent again while the log is unchanged.
    let listed: AgentRequestsDto = h.ok("agent_requests", json!({ "root": root, "known": null }));
    assert_eq!(listed.requests.len(), 1);
    let call = &listed.requests[0];
    assert_eq!(
        (call.id.as_str(), call.client.as_deref(), call.bans),
        ("call-1", Some("an agent 2.0"), 1)
    );
    let same: AgentRequestsDto = h.ok(
        "agent_requests",
        json!({ "root": root, "known": listed.version }),
    );
    assert!(!same.changed && same.requests.is_empty());

    // Re-opened: the agent's knobs and ban, and the very prompt it got.
    let detail: AgentRequestDetailDto =
        h.ok("agent_request", json!({ "root": root, "id": "call-1" }));
    assert_eq!(detail.knobs.budget, Some(3000));
    let mut again = args.clone();
    again["knobs"] = serde_json::to_value(&detail.knobs).unwrap();
    again["agentRequest"] = json!("call-1");
    let asked: AssemblyDto = h.ok("assemble", again.clone());
    assert_eq!(asked.agent_match, Some(true));
    assert_eq!(asked.prompt, got.prompt);
    assert!(
        asked
            .rows
            .iter()
            .any(|r| r.path == "docs/packing.md" && r.status == RowStatus::Banned),
        "the agent's ban applies"
    );
    // Re-tuned: a different prompt, said so; the user's own pins and bans are untouched.
    again["knobs"]["budget"] = json!(300);
    let tuned: AssemblyDto = h.ok("assemble", again);
    assert_eq!(tuned.agent_match, Some(false));
    let plain: AssemblyDto = h.ok("assemble", args.clone());
    assert_eq!(plain.agent_match, None);
    let settings: ProjectSettingsDto = h.ok("project_settings", json!({ "root": root }));
    assert!(settings.selection.banned.is_empty());

    // Saved for agents: what `loupe mcp` lays over the team's knobs.
    let mut saved = detail.knobs.clone();
    saved.budget = Some(2000);
    saved.min_score = Some(0.3);
    let _: () = h.ok("save_agent_knobs", json!({ "root": root, "knobs": saved }));
    let (patch, warnings) = agent_log::load_agent_knobs(&dir);
    let patch = patch.unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(patch.budget, Some(Budget::Tokens(2000)));
    assert_eq!(patch.min_score, Some(0.3));
    assert_eq!(patch.model, None, "only what differs from the team's knobs");
    let listed: AgentRequestsDto = h.ok("agent_requests", json!({ "root": root, "known": null }));
    assert!(listed.agent_knobs);
    let _: () = h.ok("save_agent_knobs", json!({ "root": root, "knobs": null }));
    assert_eq!(agent_log::load_agent_knobs(&dir), (None, Vec::new()));
}

#[test]
fn a_damaged_log_line_is_counted_and_an_unknown_call_is_a_clear_error() {
    let h = Harness::new();
    let root = h.open();
    let dir = loupe_engine::stores::store::project_dir(h.data(), std::path::Path::new(&root));
    std::fs::create_dir_all(&dir).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(agent_log::LOG_FILE))
        .unwrap();
    f.write_all(b"{\"id\": \"cut short by a cra").unwrap();
    drop(f);
    let listed: AgentRequestsDto = h.ok("agent_requests", json!({ "root": root, "known": null }));
    assert_eq!((listed.requests.len(), listed.skipped), (0, 1));
    let e = h.err("agent_request", json!({ "root": root, "id": "nope" }));
    assert_eq!(e["code"], "bad_request", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("no agent request"),
        "{e}"
    );
    let mut args = h.ask("pack", json!({}));
    args["agentRequest"] = json!("nope");
    let e = h.err("assemble", args);
    assert_eq!(e["code"], "bad_request", "{e}");
}
