; Ruby definitions. Constants are assignments to a capitalised name.
(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.method
(class name: [(constant) @name (scope_resolution name: (_) @name)]) @definition.class
(singleton_class) @definition.class
(module name: [(constant) @name (scope_resolution name: (_) @name)]) @definition.module
(program (assignment left: (constant) @name) @definition.constant)
(body_statement (assignment left: (constant) @name) @definition.constant)
