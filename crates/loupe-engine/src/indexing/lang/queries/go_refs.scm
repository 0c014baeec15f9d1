; Go references.
(call_expression function: (identifier) @reference.call)
(call_expression function: (selector_expression field: (field_identifier) @reference.call))
(import_spec path: (interpreted_string_literal) @reference.import)
(type_identifier) @reference.type
(qualified_type name: (type_identifier) @reference.type)
