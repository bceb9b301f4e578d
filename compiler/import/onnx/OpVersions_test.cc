//===- OpVersions_test.cc - the op table and the importers agree ----------===//

#include "compiler/import/onnx/GraphImporter.h"
#include "compiler/import/onnx/OpVersions.h"

#include <gtest/gtest.h>

namespace mlir::kiln::onnx_import {
namespace {

// Every op with an importer has its definitions listed (so that the opsets
// it is read at are the ones its importer follows), and every listed op has
// an importer.
TEST(OpVersionsTest, TableListsExactlyTheImportedOps) {
  std::vector<llvm::StringRef> imported =
      OpImporterRegistry::global().opTypes();
  std::vector<llvm::StringRef> listed = versionedOps();
  for (llvm::StringRef op : imported)
    EXPECT_TRUE(llvm::is_contained(listed, op))
        << op.str() << " has an importer but no versions";
  for (llvm::StringRef op : listed)
    EXPECT_TRUE(llvm::is_contained(imported, op))
        << op.str() << " has versions but no importer";
}

TEST(OpVersionsTest, VersionsAscendWithinTheReviewedOpsets) {
  for (llvm::StringRef op : versionedOps()) {
    llvm::ArrayRef<int> versions = opVersions(op);
    ASSERT_FALSE(versions.empty()) << op.str();
    for (size_t i = 0; i < versions.size(); ++i) {
      EXPECT_GE(versions[i], 1) << op.str();
      EXPECT_LE(versions[i], kNewestOpset) << op.str();
      if (i > 0) {
        EXPECT_LT(versions[i - 1], versions[i]) << op.str();
      }
    }
  }
}

TEST(OpVersionsTest, DefinitionAtAnOpset) {
  EXPECT_EQ(definitionVersion("ReduceMean", 17), 13);
  EXPECT_EQ(definitionVersion("ReduceMean", 18), 18);
  EXPECT_EQ(definitionVersion("ReduceMean", 21), 18);
  EXPECT_EQ(definitionVersion("ReduceMax", 20), 20);
  EXPECT_EQ(definitionVersion("GroupNormalization", 20), 18);
  EXPECT_EQ(definitionVersion("GroupNormalization", 21), 21);
  EXPECT_EQ(definitionVersion("Gelu", 19), 0);
  EXPECT_EQ(definitionVersion("Gelu", 20), 20);
  EXPECT_EQ(definitionVersion("NoSuchOp", 20), 0);
  EXPECT_TRUE(opVersions("NoSuchOp").empty());
}

} // namespace
} // namespace mlir::kiln::onnx_import
