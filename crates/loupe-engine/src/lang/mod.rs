//! The language registry: one static config per language, with its
//! tree-sitter queries, looked up by file name.
