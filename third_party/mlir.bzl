"""Build rules for kiln's MLIR code."""

def mlir_pass_decls(name, td, pass_group):
    """Runs mlir-tblgen -gen-pass-decls on `td`, producing Passes.h.inc.

    Includes are rooted at the workspace and at LLVM's include folder.
    """
    native.genrule(
        name = name,
        srcs = [td, "@llvm//:mlir_td"],
        outs = ["Passes.h.inc"],
        cmd = "$(location @llvm//:mlir-tblgen) -gen-pass-decls -name " + pass_group +
              " -I external/llvm/include -I . $(location " + td + ") -o $@",
        tools = ["@llvm//:mlir-tblgen"],
    )
