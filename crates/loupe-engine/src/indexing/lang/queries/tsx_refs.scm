; TSX references: the TypeScript ones plus JSX component names.
(call_expression function: (identifier) @reference.call)
(call_expression function: (member_expression property: (property_identifier) @reference.call))
(new_expression constructor: (identifier) @reference.call)
(import_specifier name: (identifier) @reference.import)
(import_clause (identifier) @reference.import)
(namespace_import (identifier) @reference.import)
(type_identifier) @reference.type
(jsx_opening_element name: (identifier) @reference.type)
(jsx_self_closing_element name: (identifier) @reference.type)
