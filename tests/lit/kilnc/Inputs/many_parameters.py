#!/usr/bin/env python3
"""Prints a kiln model with N parameter tensors (N even, at least 4).

    many_parameters.py N

Half of them are the weights and biases of a deep residual MLP of width 8
(h = h + tanh(h W_i + b_i)); the other half are [8] vectors that scale and
shift the output, one after the other, in one long element-wise chain, so
that a kernel of that chain would read all of them. Every parameter is on
the path to the loss.
"""
import sys


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("usage: many_parameters.py N")
    n = int(sys.argv[1])
    if n < 4 or n % 2:
        sys.exit("many_parameters.py: N must be even and at least 4")
    layers, vectors = n // 4, n // 2
    f = "tensor<16x8xf32>"
    args, body = [], []
    for i in range(layers):
        args.append(f'%w{i}: tensor<8x8xf32> {{kiln.param = '
                    f'#kiln.init<normal, std = 0.3>, kiln.name = "w{i}"}}')
        args.append(f'%b{i}: tensor<8xf32> {{kiln.param = '
                    f'#kiln.init<normal, std = 0.1>, kiln.name = "b{i}"}}')
    for i in range(vectors):
        args.append(f'%v{i}: tensor<8xf32> {{kiln.param = '
                    f'#kiln.init<normal, std = 0.1>, kiln.name = "v{i}"}}')
    args.append(f'%x: {f} {{kiln.name = "x"}}')
    args.append(f'%t: {f} {{kiln.name = "t"}}')
    h = "%x"
    for i in range(layers):
        body.append(f"%m{i} = kiln.matmul {h}, %w{i} : {f}, tensor<8x8xf32>")
        body.append(f"%a{i} = kiln.add %m{i}, %b{i} : {f}, tensor<8xf32>")
        body.append(f"%g{i} = kiln.tanh %a{i} : {f}")
        body.append(f"%h{i} = kiln.add {h}, %g{i} : {f}, {f}")
        h = f"%h{i}"
    for i in range(vectors):
        op = "mul" if i % 2 == 0 else "add"
        body.append(f"%s{i} = kiln.{op} {h}, %v{i} : {f}, tensor<8xf32>")
        h = f"%s{i}"
    body.append(f"%loss = kiln.mse_loss {h}, %t reduction = mean : {f}")
    print(f"// {n} parameter tensors: {layers} layers of a residual MLP and "
          f"{vectors} vectors in one element-wise chain.")
    print("func.func @loss(\n    " + ",\n    ".join(args) +
          ") -> tensor<f32> {")
    for line in body:
        print("  " + line)
    print("  return %loss : tensor<f32>\n}")


if __name__ == "__main__":
    main()
