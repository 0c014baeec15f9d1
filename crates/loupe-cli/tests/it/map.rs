//! `loupe map`: the token tree, plain and marked by a question's prompt.

use crate::support::{loupe, run_ok};
use std::path::Path;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn project(root: &Path) {
    let mut ledger = String::from("//! The invoice ledger.\n\n");
    for n in 0..8 {
        ledger.push_str(&format!(
            "/// Invoice total for region {n}, tax included.\npub fn invoice_total_{n}(net: i64) -> i64 {{\n    net + net * {n} / 100\n}}\n\n"
        ));
    }
    write(root, "src/ledger.rs", &ledger);
    write(
        root,
        "src/util/slug.rs",
        "/// Lower-cases a title and joins its words with dashes.\npub fn slugify(title: &str) -> String {\n    title.to_lowercase().replace(' ', \"-\")\n}\n",
    );
    write(
        root,
        "tests/ledger_test.rs",
        "#[test]\nfn invoice_total_adds_tax() {\n    assert_eq!(ledger::invoice_total_5(100), 105);\n}\n",
    );
    write(root, "README.md", "# Ledger\n\nInvoices and slugs.\n");
}

#[test]
fn map_prints_the_token_tree_largest_first() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ledger");
    project(&root);
    let data = tmp.path().join("data");
    let out = run_ok(loupe(&data).args(["--embedder", "none", "map"]).arg(&root));
    // Snapshot: every number is the files' o200k_base tokens.
    assert_eq!(
        out,
        "ledger: 4 files, 4 chunks, 376 tokens (o200k_base, whole files)\n\
         ├── src/ 340 in 2 files\n\
         │   ├── ledger.rs 302\n\
         │   └── util/ 38 in 1 file\n\
         │       └── slug.rs 38\n\
         ├── tests/ 28 in 1 file\n\
         │   └── ledger_test.rs 28\n\
         └── README.md 8\n"
    );
    // Depth and folding.
    let shallow = run_ok(
        loupe(&data)
            .args([
                "--embedder",
                "none",
                "map",
                "--depth",
                "1",
                "--min-tokens",
                "30",
            ])
            .arg(&root),
    );
    assert!(shallow.contains("├── src/ 340 in 2 files\n"), "{shallow}");
    assert!(!shallow.contains("ledger.rs"), "{shallow}");
    assert!(
        shallow.ends_with("└── … 2 more under 30 tokens: 36\n"),
        "{shallow}"
    );

    // JSON: the same tree, sums that add up.
    let json: serde_json::Value = serde_json::from_str(&run_ok(
        loupe(&data)
            .args(["--embedder", "none", "map", "--json"])
            .arg(&root),
    ))
    .unwrap();
    assert_eq!(json["files"], 4);
    let children = json["children"].as_array().unwrap();
    let sum: u64 = children.iter().map(|c| c["tokens"].as_u64().unwrap()).sum();
    assert_eq!(json["tokens"].as_u64().unwrap(), sum);
}

#[test]
fn map_marks_what_a_question_put_in_the_prompt() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ledger");
    project(&root);
    let data = tmp.path().join("data");
    let out = run_ok(
        loupe(&data)
            .args(["--embedder", "none", "map", "--question"])
            .arg("how is the invoice total with tax computed?")
            .args(["--weight", "tests/**=0"])
            .arg(&root),
    );
    let line = |name: &str| {
        out.lines()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("no {name} in {out}"))
            .to_owned()
    };
    assert!(
        out.lines()
            .nth(1)
            .unwrap()
            .starts_with("prompt for \"how is the invoice total with tax computed?\""),
        "{out}"
    );
    assert!(line("ledger.rs").ends_with("included"), "{out}");
    assert!(
        line("ledger_test.rs").ends_with("hidden by the path weight \"tests/**\" = 0"),
        "{out}"
    );
    assert!(line("tests/").contains("[1 hidden]"), "{out}");
    assert!(line("src/").contains("1 included"), "{out}");

    // The counts in the header add up to the files.
    let json: serde_json::Value = serde_json::from_str(&run_ok(
        loupe(&data)
            .args(["--embedder", "none", "map", "--json", "-q"])
            .arg("how is the invoice total with tax computed?")
            .arg(&root),
    ))
    .unwrap();
    let k = &json["counts"];
    let total: u64 = ["included", "degraded", "dropped", "hidden", "not_retrieved"]
        .iter()
        .map(|s| k[s].as_u64().unwrap())
        .sum();
    assert_eq!(total, 4);
}
