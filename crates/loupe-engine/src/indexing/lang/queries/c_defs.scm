; C definitions.
(function_definition
  declarator: [(function_declarator declarator: (identifier) @name)
               (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
               (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))]) @definition.function
(type_definition type: (struct_specifier !name body: (_) @body) declarator: (type_identifier) @name) @definition.struct
(type_definition type: (union_specifier !name body: (_) @body) declarator: (type_identifier) @name) @definition.struct
(type_definition type: (enum_specifier !name body: (_) @body) declarator: (type_identifier) @name) @definition.enum
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(type_definition declarator: (type_identifier) @name) @definition.type
(preproc_def name: (identifier) @name) @definition.constant
(preproc_function_def name: (identifier) @name) @definition.function
