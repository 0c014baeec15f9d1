; Java references.
(method_invocation name: (identifier) @reference.call)
(object_creation_expression type: (type_identifier) @reference.call)
(object_creation_expression type: (generic_type (type_identifier) @reference.call))
(import_declaration (scoped_identifier name: (identifier) @reference.import))
(import_declaration (identifier) @reference.import)
(type_identifier) @reference.type
