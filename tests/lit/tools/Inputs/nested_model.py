"""nested_model.py DEPTH OUT: a model whose module carries an attribute of
DEPTH nested brackets, user.x = [[...[0]...]], on its first line."""
import sys

depth, out = int(sys.argv[1]), sys.argv[2]
with open(out, "w") as f:
    f.write("module attributes {user.x = " + "[" * depth + "0" + "]" * depth +
            "} {\n"
            "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  return %x : tensor<2xf32>\n}\n}\n")
