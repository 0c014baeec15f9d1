; C references.
(call_expression function: (identifier) @reference.call)
(call_expression function: (field_expression field: (field_identifier) @reference.call))
(preproc_include path: (string_literal (string_content) @reference.import))
(preproc_include path: (system_lib_string) @reference.import)
(type_identifier) @reference.type
