; TypeScript / TSX references.
(call_expression function: (identifier) @reference.call)
(call_expression function: (member_expression property: (property_identifier) @reference.call))
(new_expression constructor: (identifier) @reference.call)
(import_specifier name: (identifier) @reference.import)
(import_clause (identifier) @reference.import)
(namespace_import (identifier) @reference.import)
(type_identifier) @reference.type
