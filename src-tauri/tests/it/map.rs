//! The token map: `token_map` marks the same assembly `assemble` gives for
//! the same arguments, folder by folder.

use crate::support::Harness;
use loupe_app::dto::{AssemblyDto, MapNodeDto, MapStatusDto, RowStatus, SelectionDto};
use serde_json::json;

const QUESTION: &str = "how does pack_items choose items?";

fn map(h: &Harness, question: &str, knobs: serde_json::Value, under: &str) -> MapNodeDto {
    let mut args = h.ask(question, knobs);
    args["view"] = json!({ "under": under, "depth": 3, "per_folder": 50 });
    h.ok("token_map", args)
}

fn file<'a>(node: &'a MapNodeDto, path: &str) -> &'a MapNodeDto {
    if node.path == path {
        return node;
    }
    node.children
        .iter()
        .find(|c| path.starts_with(&format!("{}/", c.path)) || c.path == path)
        .map(|c| file(c, path))
        .unwrap_or_else(|| panic!("{path} is not in the map: {node:#?}"))
}

#[test]
fn the_map_marks_each_file_as_the_assembly_treats_it() {
    let h = Harness::new();
    let root = h.open();

    // Before a question: sizes only, and every token accounted for.
    let plain = map(&h, "", json!({}), "");
    assert!(plain.status.is_none() && plain.counts.is_none());
    let shown: u64 = plain.children.iter().map(|c| c.tokens).sum();
    assert_eq!(shown + plain.folded_tokens, plain.tokens);
    assert!(plain.tokens > 0 && plain.files >= 3, "{plain:#?}");

    // With a question and tests/** weighted 0.
    let knobs = json!({ "path_weights": [{ "glob": "tests/**", "weight": 0.0 }] });
    let assembly: AssemblyDto = h.ok("assemble", h.ask(QUESTION, knobs.clone()));
    let marked = map(&h, QUESTION, knobs.clone(), "");
    assert_eq!(marked.tokens, plain.tokens);
    let pack = file(&marked, "src/pack.rs");
    assert!(pack.file);
    assert_eq!(pack.status, Some(MapStatusDto::Included), "{pack:#?}");
    let test = file(&marked, "tests/pack_test.rs");
    assert_eq!(test.status, Some(MapStatusDto::Hidden));
    assert!(
        test.why.as_deref().unwrap_or("").contains("tests/**"),
        "{test:?}"
    );
    // The files the table shows in the prompt are the ones the map does.
    for row in assembly
        .rows
        .iter()
        .filter(|r| r.status == RowStatus::Included)
    {
        assert_eq!(
            file(&marked, &row.path).status,
            Some(MapStatusDto::Included)
        );
    }
    let counts = marked.counts.as_ref().expect("counts with a question");
    assert_eq!(
        counts.included
            + counts.degraded
            + counts.dropped
            + counts.hidden
            + counts.banned
            + counts.not_retrieved,
        marked.files
    );

    // A ban shows on the map; a folder can be asked for alone.
    let _: SelectionDto = h.ok(
        "mark",
        json!({ "root": root, "target": { "kind": "file", "path": "src/pack.rs" }, "mark": "ban" }),
    );
    let src = map(&h, QUESTION, knobs.clone(), "src");
    assert_eq!(src.path, "src");
    let pack = file(&src, "src/pack.rs");
    assert_eq!(pack.status, Some(MapStatusDto::Banned), "{pack:#?}");
    assert_eq!(src.counts.as_ref().map(|c| c.banned), Some(1));

    // The map's file list is cached per index generation: a new file
    // indexed shows at once.
    std::fs::write(
        h.root().join("src/extra.rs"),
        "pub fn extra() -> u32 { 7 }\n",
    )
    .unwrap();
    h.open();
    let grown = map(&h, "", json!({}), "");
    assert!(
        grown.tokens > plain.tokens,
        "{} vs {}",
        grown.tokens,
        plain.tokens
    );
    assert!(file(&grown, "src/extra.rs").file);

    // A folder that is not there is a clear error.
    let mut args = h.ask(QUESTION, knobs);
    args["view"] = json!({ "under": "nowhere", "depth": 1, "per_folder": 10 });
    let e = h.err("token_map", args);
    assert_eq!(e["code"], "bad_request", "{e}");
    assert!(e["message"].as_str().unwrap().contains("nowhere"), "{e}");
}
