"""Embeds a file in a C++ library as a byte array.

embed_file(name, src, symbol) makes a cc_library `name` whose source defines

    namespace kiln { namespace embedded {
    extern const unsigned char <symbol>[];   // the bytes, then one NUL
    extern const size_t <symbol>_size;       // without the NUL
    } }

so PTX (a NUL-terminated string for cuModuleLoadDataEx) and cubins can be
carried inside a binary. Declare the two symbols where they are used.
"""

def embed_file(name, src, symbol, **kwargs):
    native.genrule(
        name = name + "_cc",
        srcs = [src],
        outs = [name + ".cc"],
        cmd = ("{ echo '#include <cstddef>'; " +
               "echo 'namespace kiln { namespace embedded {'; " +
               "echo 'extern const unsigned char " + symbol + "[] = {'; " +
               "od -An -v -tx1 $< | sed -E 's/ ([0-9a-f]{2})/0x\\1,/g'; " +
               "echo '0x00};'; " +
               "echo 'extern const size_t " + symbol + "_size = sizeof(" + symbol + ") - 1;'; " +
               "echo '}  // namespace embedded'; echo '}  // namespace kiln'; } > $@"),
    )
    native.cc_library(
        name = name,
        srcs = [name + ".cc"],
        **kwargs
    )

def nvcc_ptx(name, src, arch = "compute_90"):
    """PTX of `src` for `arch`, compiled at build time (no GPU needed)."""
    native.genrule(
        name = name,
        srcs = [src],
        outs = [name + ".ptx"],
        # nvcc runs from its real location so that it finds its headers.
        cmd = "$$(readlink -f $(location @cuda//:nvcc)) -ptx -arch=" + arch + " -o $@ $<",
        tools = ["@cuda//:nvcc"],
    )

def nvcc_cubin(name, src, arch = "sm_90"):
    """A cubin of `src` for `arch`, compiled at build time."""
    native.genrule(
        name = name,
        srcs = [src],
        outs = [name + ".cubin"],
        cmd = "$$(readlink -f $(location @cuda//:nvcc)) -cubin -arch=" + arch + " -o $@ $<",
        tools = ["@cuda//:nvcc"],
    )
