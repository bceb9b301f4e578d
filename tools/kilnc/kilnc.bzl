"""Compiling models with kilnc at build time.

kilnc_typed(name, src, class_name, flags) runs kilnc on `src` and declares
`<name>.kiln` (the artifact) and `<name>.h` (its typed C++ header, pinned to
that artifact: `kilnc -H`). kilnc runs as built for the target (the build
machine here), so it is not compiled a second time for the host.
"""

def _kilnc_typed_impl(ctx):
    args = ctx.actions.args()
    args.add(ctx.file.src)
    args.add("-o", ctx.outputs.artifact)
    args.add("--header=" + ctx.outputs.header.path)
    if ctx.attr.class_name:
        args.add("--header-class=" + ctx.attr.class_name)
    args.add("--no-kernel-cache")
    args.add_all(ctx.attr.flags)
    ctx.actions.run(
        executable = ctx.executable._kilnc,
        arguments = [args],
        inputs = [ctx.file.src],
        outputs = [ctx.outputs.artifact, ctx.outputs.header],
        mnemonic = "Kilnc",
        progress_message = "Compiling %s with kilnc" % ctx.file.src.short_path,
    )

kilnc_typed = rule(
    implementation = _kilnc_typed_impl,
    attrs = {
        "src": attr.label(allow_single_file = [".mlir", ".onnx"], mandatory = True),
        "class_name": attr.string(doc = "the header's class (--header-class)"),
        "flags": attr.string_list(doc = "more kilnc flags (--train=sgd, ...)"),
        "_kilnc": attr.label(
            default = "//tools/kilnc",
            executable = True,
            cfg = "target",
        ),
    },
    outputs = {
        "artifact": "%{name}.kiln",
        "header": "%{name}.h",
    },
)
