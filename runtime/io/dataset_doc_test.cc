// docs/data-formats.md specifies KILNDATA: its version and dtype codes are
// the code's, and its NumPy snippet writes a file the reader accepts.

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/dataset.h"
#include "runtime/io/dtype.h"

namespace kiln::io {
namespace {

std::string Doc() {
  std::ifstream in("docs/data-formats.md");
  EXPECT_TRUE(in) << "docs/data-formats.md is not in the runfiles";
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

TEST(DatasetDocTest, VersionIsTheCodes) {
  std::smatch m;
  const std::string doc = Doc();
  ASSERT_TRUE(std::regex_search(
      doc, m, std::regex(R"(\*\*KILNDATA version (\d+)\*\*)")));
  EXPECT_EQ(std::stoul(m[1]), kDatasetVersion);
  EXPECT_NE(
      doc.find("| 8 | 4 | u32 version | " + std::to_string(kDatasetVersion)),
      std::string::npos);
}

TEST(DatasetDocTest, DtypeCodesAreTheCodes) {
  const std::string doc = Doc();
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16, DType::kI32,
                      DType::kI1, DType::kI64}) {
    const std::string entry = std::to_string(DatasetDTypeCode(dtype)) + " " +
                              std::string(DTypeName(dtype));
    EXPECT_NE(doc.find(entry), std::string::npos) << entry;
  }
}

TEST(DatasetDocTest, NumpySnippetWritesAFileTheReaderAccepts) {
  const std::string doc = Doc();
  const size_t section = doc.find("### Writing one with NumPy");
  ASSERT_NE(section, std::string::npos);
  const size_t begin = doc.find("```python\n", section);
  ASSERT_NE(begin, std::string::npos);
  const size_t end = doc.find("```\n", begin + 10);
  const std::string dir = std::getenv("TEST_TMPDIR");
  std::ofstream(dir + "/write_kilndata.py")
      << doc.substr(begin + 10, end - begin - 10);
  const std::string out = dir + "/snippet.kilndata";
  ASSERT_EQ(
      std::system(
          ("/usr/bin/python3 " + dir + "/write_kilndata.py " + out).c_str()),
      0);
  absl::StatusOr<std::unique_ptr<MappedDataset>> data =
      MappedDataset::Open(out);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ((*data)->record_count(), 100u);
  ASSERT_EQ((*data)->fields().size(), 2u);
  EXPECT_EQ((*data)->fields()[0].name, "x");
  EXPECT_EQ((*data)->fields()[1].dtype, DType::kI32);
  // Reading every record checks every data checksum.
  std::vector<uint8_t> records(100 * (*data)->record_bytes());
  EXPECT_TRUE((*data)->ReadRange(0, 100, records.data()).ok());
}

}  // namespace
}  // namespace kiln::io
