; Rust definitions. Methods are functions nested in an impl or trait; the
; chunker derives that from nesting.
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
(impl_item type: [(type_identifier) @name
                  (generic_type type: (type_identifier) @name)
                  (scoped_type_identifier name: (type_identifier) @name)
                  (reference_type type: (type_identifier) @name)]) @definition.impl
(impl_item) @definition.impl
(mod_item name: (identifier) @name) @definition.module
(type_item name: (type_identifier) @name) @definition.type
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
(macro_definition name: (identifier) @name) @definition.function
