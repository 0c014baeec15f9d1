//! Chunking tests (scaffold).

#[test]
fn chunk_smoke() {
    let p = loupe_engine::chunk::chunk_file("a.rs", "fn main() {}\n", &Default::default());
    assert_eq!(p.chunks.len(), 1);
}
