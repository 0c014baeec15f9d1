; JavaScript references. `require("x")` counts as an import of "x".
((call_expression
   function: (identifier) @_require
   arguments: (arguments (string (string_fragment) @reference.import)))
 (#eq? @_require "require"))
((call_expression function: (identifier) @reference.call)
 (#not-eq? @reference.call "require"))
(call_expression function: (member_expression property: (property_identifier) @reference.call))
(new_expression constructor: (identifier) @reference.call)
(import_specifier name: (identifier) @reference.import)
(import_clause (identifier) @reference.import)
(namespace_import (identifier) @reference.import)
(jsx_opening_element name: (identifier) @reference.type)
(jsx_self_closing_element name: (identifier) @reference.type)
