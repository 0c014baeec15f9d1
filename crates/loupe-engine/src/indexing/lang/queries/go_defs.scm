; Go definitions. A method's parent is its receiver type.
(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list
    (parameter_declaration type: [(type_identifier) @parent
                                  (pointer_type (type_identifier) @parent)
                                  (generic_type type: (type_identifier) @parent)
                                  (pointer_type (generic_type type: (type_identifier) @parent))]))
  name: (field_identifier) @name) @definition.method
(method_declaration name: (field_identifier) @name) @definition.method
(type_declaration
  (type_spec name: (type_identifier) @name type: (struct_type (field_declaration_list) @body))) @definition.struct
(type_declaration
  (type_spec name: (type_identifier) @name type: (interface_type) @body)) @definition.interface
(type_declaration (type_spec name: (type_identifier) @name)) @definition.type
(type_declaration (type_alias name: (type_identifier) @name)) @definition.type
(source_file (const_declaration (const_spec name: (identifier) @name)) @definition.constant)
(source_file (var_declaration (var_spec name: (identifier) @name)) @definition.constant)
