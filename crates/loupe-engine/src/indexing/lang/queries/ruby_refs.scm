; Ruby references. `require` and friends are imports; the whole call is also
; captured as an import statement for the outline.
((call
   method: (identifier) @_req
   arguments: (argument_list (string (string_content) @reference.import))) @import
 (#any-of? @_req "require" "require_relative" "load"))
((call method: (identifier) @reference.call)
 (#not-any-of? @reference.call "require" "require_relative" "load"))
(superclass (constant) @reference.type)
(scope_resolution name: (constant) @reference.type)
(call receiver: (constant) @reference.type)
