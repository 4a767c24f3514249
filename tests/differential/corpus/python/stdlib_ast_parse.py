import ast

tree = ast.parse("x = 1 + 2\nprint(x)")
print(ast.dump(tree.body[0].value))
print([type(n).__name__ for n in ast.walk(tree)][:5])
print(ast.literal_eval("{'a': [1, 2.5, None]}"))
