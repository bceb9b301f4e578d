// Batches of a KILNDATA file for the CPU reference: i64 labels narrowed,
// values out of range named by record, field and element.

#include "samples/data/reference_batch.h"

#include <cstdlib>
#include <cstring>
#include <random>

#include "dialects/kiln/IR/KilnDialect.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

namespace kiln::samples {
namespace {

using ::testing::HasSubstr;

constexpr char kModel[] = R"mlir(
  func.func @forward(%w: tensor<4xf32> {kiln.param = #kiln.init<normal, std = 0.5>, kiln.name = "w"},
                     %x: tensor<3x4xf32> {kiln.name = "x"},
                     %labels: tensor<3x1xi32> {kiln.name = "labels"}) -> tensor<f32> {
    %logits = kiln.mul %x, %w : tensor<3x4xf32>, tensor<4xf32>
    %y = kiln.reshape %labels : tensor<3x1xi32> -> tensor<3xi32>
    %l = kiln.cross_entropy %logits, %y ignore_index = -1 : tensor<3x4xf32>, tensor<3xi32>
    return %l : tensor<f32>
  })mlir";

class ReferenceBatchTest : public ::testing::Test {
 protected:
  ReferenceBatchTest() {
    context.loadDialect<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(kModel, &context);
    forward = *module->getOps<mlir::func::FuncOp>().begin();
    for (int r = 0; r < 9; ++r) {
      for (int j = 0; j < 4; ++j)
        x[r][j] = std::normal_distribution<float>()(rng);
      labels[r] = std::uniform_int_distribution<int64_t>(-1, 3)(rng);
    }
  }

  // Writes the records with labels as `label_dtype` (i64 or i32) and opens
  // them.
  std::unique_ptr<io::MappedDataset> Write(DType label_dtype) {
    path = std::string(std::getenv("TEST_TMPDIR")) + "/batch.kilndata";
    auto writer = io::DatasetWriter::Create(
        path, {{"x", DType::kF32, {4}}, {"labels", label_dtype, {1}}});
    EXPECT_TRUE(writer.ok()) << writer.status();
    for (int r = 0; r < 9; ++r) {
      uint8_t record[24];
      std::memcpy(record, x[r], 16);
      const int32_t narrow = static_cast<int32_t>(labels[r]);
      if (label_dtype == DType::kI64)
        std::memcpy(record + 16, &labels[r], 8);
      else
        std::memcpy(record + 16, &narrow, 4);
      EXPECT_TRUE(
          (*writer)->Append(record, label_dtype == DType::kI64 ? 24 : 20).ok());
    }
    EXPECT_TRUE((*writer)->Finish().ok());
    auto data = io::MappedDataset::Open(path);
    EXPECT_TRUE(data.ok()) << data.status();
    return std::move(*data);
  }

  std::string Error(io::MappedDataset& data, uint64_t batch) {
    auto read = ReadReferenceBatch(data, forward, batch);
    EXPECT_FALSE(static_cast<bool>(read));
    return read ? "" : llvm::toString(read.takeError());
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp forward;
  std::mt19937_64 rng{std::random_device{}()};
  float x[9][4];
  int64_t labels[9];
  std::string path;
};

TEST_F(ReferenceBatchTest, I64LabelsAreNarrowed) {
  for (DType dtype : {DType::kI64, DType::kI32}) {
    std::unique_ptr<io::MappedDataset> data = Write(dtype);
    EXPECT_EQ(BatchRecords(forward), 3u);
    auto batch = ReadReferenceBatch(*data, forward, 2);
    ASSERT_TRUE(static_cast<bool>(batch)) << llvm::toString(batch.takeError());
    EXPECT_EQ(batch->count("w"), 0u) << "parameters are the trainer's";
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ((*batch)["labels"].data[r], double(labels[6 + r]));
      for (int j = 0; j < 4; ++j)
        EXPECT_EQ((*batch)["x"].data[4 * r + j], double(x[6 + r][j]));
    }
  }
}

TEST_F(ReferenceBatchTest, ValuesOutOfRangeNameTheRecord) {
  labels[7] = 4;
  labels[4] = int64_t(1) << 33;
  std::unique_ptr<io::MappedDataset> data = Write(DType::kI64);
  EXPECT_THAT(Error(*data, 2),
              HasSubstr(path + ": record 7, field 'labels' element [0]: label "
                               "4 is outside the 4 classes [0, 4) and is not "
                               "ignore_index -1 of kiln.cross_entropy at "));
  EXPECT_THAT(Error(*data, 1),
              HasSubstr(path + ": record 4, field 'labels' element [0]: i64 "
                               "value 8589934592 is outside the i32 range"));
}

TEST_F(ReferenceBatchTest, DescribesTheRecordsOfABatch) {
  std::unique_ptr<io::MappedDataset> data = Write(DType::kI32);
  EXPECT_EQ(
      DescribeBatch(*data, forward, 2),
      "records 6 to 8 of " + path + " (row r of the batch is record 6 + r)");
}

TEST_F(ReferenceBatchTest, FieldsMustFitTheInputs) {
  std::unique_ptr<io::MappedDataset> data = Write(DType::kI64);
  forward.setArgAttr(1, mlir::kiln::KilnDialect::kNameAttrName,
                     mlir::StringAttr::get(&context, "labels"));
  EXPECT_THAT(Error(*data, 0),
              HasSubstr(": field 'labels' (i64[1] per record) does not hold "
                        "records of input tensor<3x4xf32>"));
  forward.setArgAttr(1, mlir::kiln::KilnDialect::kNameAttrName,
                     mlir::StringAttr::get(&context, "pixels"));
  EXPECT_THAT(Error(*data, 0), HasSubstr(" has no field for input 1 'pixels'"));
}

}  // namespace
}  // namespace kiln::samples
