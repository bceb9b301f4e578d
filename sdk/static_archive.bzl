"""One static archive holding a C++ library and everything it links.

static_archive(name, deps, out) merges the static libraries of `deps` and of
their transitive dependencies, and the system archives their linkopts name as
`-l:lib<name>.a` (Debian's Abseil), into the single archive `out`, so that a
user links one file and needs none of the libraries it was made from.
"""

def _static_archive_impl(ctx):
    archives = []
    system = []
    for dep in ctx.attr.deps:
        for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
            for library in linker_input.libraries:
                archive = library.static_library or library.pic_static_library
                if archive and archive not in archives:
                    archives.append(archive)
            for flag in linker_input.user_link_flags:
                if flag.startswith("-l:") and flag.endswith(".a") and flag[3:] not in system:
                    system.append(flag[3:])
    out = ctx.actions.declare_file(ctx.attr.out)
    args = ctx.actions.args()
    args.add(out)
    args.add_all(archives)
    args.add("--system")
    args.add_all(system)
    ctx.actions.run(
        executable = ctx.executable._merge,
        arguments = [args],
        inputs = archives,
        outputs = [out],
        mnemonic = "MergeArchives",
        progress_message = "Merging %d archives into %s" % (len(archives) + len(system), out.short_path),
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles([out]))]

static_archive = rule(
    implementation = _static_archive_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo], mandatory = True),
        "out": attr.string(mandatory = True),
        "_merge": attr.label(
            default = "//sdk:merge_archives",
            executable = True,
            cfg = "host",
        ),
    },
)
