#include "codegen/cuda/custom/CustomKernelSource.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

namespace mlir::kiln::codegen {
namespace {

/// A fresh directory under the test's temporary folder.
std::string freshDirectory(const std::string &name) {
  llvm::SmallString<256> path;
  const char *root = std::getenv("TEST_TMPDIR");
  llvm::sys::path::append(path, root ? root : "/tmp", "custom-source-" + name);
  llvm::sys::fs::remove_directories(path);
  llvm::sys::fs::create_directories(path);
  return std::string(path);
}

void writeFile(const std::string &path, const std::string &text) {
  std::ofstream(path) << text;
}

TEST(CustomKernelSource, MentionsOnlyWholeIdentifiersOutsideComments) {
  const char *text = R"cuda(
// fwd in a line comment
/* fwd in a block
   comment */
const char *s = "fwd in a string";
char c = 'f';
template <class Args> __device__ void fwd2(const Args &);
template <class Args> __device__ void my_fwd(const Args &);
)cuda";
  EXPECT_FALSE(mentionsIdentifier(text, "fwd"));
  EXPECT_TRUE(mentionsIdentifier(text, "fwd2"));
  EXPECT_TRUE(mentionsIdentifier(text, "my_fwd"));
  // A qualified entry is looked for by its last component.
  EXPECT_TRUE(mentionsIdentifier(text, "ns::inner::my_fwd"));
  EXPECT_TRUE(mentionsIdentifier("namespace ns { void fwd(); }", "ns::fwd"));
  // Unterminated comments and strings end the search, never read past it.
  EXPECT_FALSE(mentionsIdentifier("/* fwd", "fwd"));
  EXPECT_FALSE(mentionsIdentifier("\"fwd", "fwd"));
  EXPECT_TRUE(mentionsIdentifier("x; // y\nfwd", "fwd"));
}

TEST(CustomKernelSource, SearchPathStartsBesideTheIrFile) {
  MLIRContext context;
  Location file = FileLineColLoc::get(&context, "models/net.mlir", 3, 1);
  std::vector<std::string> dirs = {"/opt/kernels", "lib"};
  EXPECT_EQ(customKernelSearchPath(file, dirs),
            (std::vector<std::string>{"models", "/opt/kernels", "lib"}));
  // A location that wraps the file's (a gradient op's, a named one).
  Location named = NameLoc::get(StringAttr::get(&context, "grad"), file);
  EXPECT_EQ(customKernelSearchPath(FusedLoc::get(&context, {named}), {}),
            (std::vector<std::string>{"models"}));
  // A file in the working directory.
  EXPECT_EQ(customKernelSearchPath(
                FileLineColLoc::get(&context, "net.mlir", 1, 1), {}),
            (std::vector<std::string>{"."}));
  // No file at all: only the command line's directories.
  EXPECT_EQ(customKernelSearchPath(UnknownLoc::get(&context), dirs), dirs);
}

class LoadTest : public ::testing::Test {
protected:
  /// Loads `source` for `entry` from `dirs`; the diagnostic, if any, lands
  /// in `error`.
  FailureOr<CustomKernelSource> load(llvm::StringRef source,
                                     llvm::StringRef entry,
                                     std::vector<std::string> dirs) {
    error.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      error = diag.str();
      return success();
    });
    return loadCustomKernelSource(source, entry, dirs, [&] {
      return mlir::emitError(UnknownLoc::get(&context));
    });
  }

  MLIRContext context;
  std::string error;
};

TEST_F(LoadTest, FindsTheFileInTheFirstDirectoryThatHasIt) {
  std::string first = freshDirectory("first"),
              second = freshDirectory("second");
  writeFile(second + "/op.cu",
            "template <class A> __device__ void fwd(const A &);\n");
  FailureOr<CustomKernelSource> found = load("op.cu", "fwd", {first, second});
  ASSERT_TRUE(succeeded(found)) << error;
  EXPECT_EQ(found->name, "op.cu");
  EXPECT_EQ(found->path, second + "/op.cu");
  EXPECT_NE(found->text.find("void fwd"), std::string::npos);

  writeFile(first + "/op.cu",
            "template <class A> __device__ void fwd(const A &);\n// first\n");
  found = load("op.cu", "fwd", {first, second});
  ASSERT_TRUE(succeeded(found)) << error;
  EXPECT_EQ(found->path, first + "/op.cu");

  // An absolute path is used as it is.
  found = load(second + "/op.cu", "fwd", {first});
  ASSERT_TRUE(succeeded(found)) << error;
  EXPECT_EQ(found->path, second + "/op.cu");
}

TEST_F(LoadTest, MissingFileNamesWhereItLooked) {
  std::string dir = freshDirectory("missing");
  EXPECT_TRUE(failed(load("nope.cu", "fwd", {dir, "/elsewhere"})));
  EXPECT_EQ(error, "kernel file 'nope.cu' not found (looked in " + dir +
                       ", /elsewhere)");
  EXPECT_TRUE(failed(load("nope.cu", "fwd", {})));
  EXPECT_EQ(error, "kernel file 'nope.cu' not found (looked in no directory: "
                   "the IR has no file location; give kilnc -I DIR)");
  // A directory of that name is no file.
  llvm::sys::fs::create_directories(dir + "/sub.cu");
  EXPECT_TRUE(failed(load("sub.cu", "fwd", {dir})));
}

TEST_F(LoadTest, MissingEntryIsAnError) {
  std::string dir = freshDirectory("entry");
  writeFile(dir + "/op.cu", "// fwd is only mentioned here\n");
  EXPECT_TRUE(failed(load("op.cu", "fwd", {dir})));
  EXPECT_EQ(error,
            "the kernel file '" + dir + "/op.cu' defines no function 'fwd'");
}

} // namespace
} // namespace mlir::kiln::codegen
