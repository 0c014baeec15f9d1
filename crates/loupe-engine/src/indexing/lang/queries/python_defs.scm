; Python definitions. A docstring is the first statement of a body when it is
; a bare string; the pattern with a docstring comes first so it wins.
(function_definition
  name: (identifier) @name
  body: (block . (expression_statement (string) @doc))) @definition.function
(function_definition name: (identifier) @name) @definition.function
(class_definition
  name: (identifier) @name
  body: (block . (expression_statement (string) @doc))) @definition.class
(class_definition name: (identifier) @name) @definition.class
; Module-level constants: UPPER_CASE assignments.
(module
  (expression_statement
    (assignment left: (identifier) @name)) @definition.constant
  (#match? @name "^[A-Z][A-Z0-9_]*$"))
; The module docstring (a `@doc` without a definition).
(module . (expression_statement (string) @doc))
