; C++ references.
(call_expression function: (identifier) @reference.call)
(call_expression function: (qualified_identifier name: (identifier) @reference.call))
(call_expression function: (field_expression field: (field_identifier) @reference.call))
(call_expression function: (template_function name: (identifier) @reference.call))
(preproc_include path: (string_literal (string_content) @reference.import))
(preproc_include path: (system_lib_string) @reference.import)
(using_declaration (qualified_identifier name: (identifier) @reference.import))
(type_identifier) @reference.type
