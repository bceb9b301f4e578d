"""cc_headers(name, deps): the headers of cc_library targets (transitively)
as runfiles, for tests that run a C++ compiler on their own."""

def _cc_headers_impl(ctx):
    headers = depset(transitive = [
        dep[CcInfo].compilation_context.headers
        for dep in ctx.attr.deps
    ])
    return [DefaultInfo(
        files = headers,
        runfiles = ctx.runfiles(transitive_files = headers),
    )]

cc_headers = rule(
    implementation = _cc_headers_impl,
    attrs = {"deps": attr.label_list(providers = [CcInfo])},
)
