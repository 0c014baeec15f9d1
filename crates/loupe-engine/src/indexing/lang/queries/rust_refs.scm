; Rust references: calls, macro calls, imported names, type mentions.
(call_expression function: (identifier) @reference.call)
(call_expression function: (scoped_identifier name: (identifier) @reference.call))
(call_expression function: (field_expression field: (field_identifier) @reference.call))
(call_expression function: (generic_function function: (identifier) @reference.call))
(call_expression function: (generic_function function: (scoped_identifier name: (identifier) @reference.call)))
(call_expression function: (generic_function function: (field_expression field: (field_identifier) @reference.call)))
(macro_invocation macro: (identifier) @reference.call)
(struct_expression name: (type_identifier) @reference.type)

(use_declaration argument: (identifier) @reference.import)
(use_declaration argument: (scoped_identifier name: (identifier) @reference.import))
(use_declaration argument: (use_as_clause path: (scoped_identifier name: (identifier) @reference.import)))
(use_declaration argument: (use_as_clause path: (identifier) @reference.import))
(use_list (identifier) @reference.import)
(use_list (scoped_identifier name: (identifier) @reference.import))
(use_list (use_as_clause path: (scoped_identifier name: (identifier) @reference.import)))
(use_list (use_as_clause path: (identifier) @reference.import))
(scoped_use_list path: (identifier) @reference.import)
(scoped_use_list path: (scoped_identifier name: (identifier) @reference.import))
(extern_crate_declaration name: (identifier) @reference.import)

(type_identifier) @reference.type
