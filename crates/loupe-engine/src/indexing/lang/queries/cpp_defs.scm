; C++ definitions. Templates wrap their definition; the chunker attaches the
; template header through the enclosing top-level item.
(function_definition
  declarator: (function_declarator declarator: [(identifier) @name
                                                 (field_identifier) @name
                                                 (destructor_name) @name
                                                 (operator_name) @name
                                                 (qualified_identifier name: (_) @name)])) @definition.function
(function_definition
  declarator: (pointer_declarator declarator: (function_declarator declarator: [(identifier) @name
                                                                                 (field_identifier) @name
                                                                                 (qualified_identifier name: (_) @name)]))) @definition.function
(function_definition
  declarator: (reference_declarator (function_declarator declarator: [(identifier) @name
                                                                       (field_identifier) @name
                                                                       (operator_name) @name
                                                                       (qualified_identifier name: (_) @name)]))) @definition.function
(class_specifier name: (_) @name body: (_)) @definition.class
(struct_specifier name: (_) @name body: (_)) @definition.struct
(union_specifier name: (_) @name body: (_)) @definition.struct
(enum_specifier name: (_) @name body: (_)) @definition.enum
(namespace_definition name: (_) @name) @definition.module
(type_definition declarator: (type_identifier) @name) @definition.type
(alias_declaration name: (type_identifier) @name) @definition.type
(concept_definition name: (identifier) @name) @definition.type
(preproc_def name: (identifier) @name) @definition.constant
(preproc_function_def name: (identifier) @name) @definition.function
