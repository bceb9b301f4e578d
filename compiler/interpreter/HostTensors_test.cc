#include "compiler/interpreter/HostTensors.h"

#include <gtest/gtest.h>

#include <random>

namespace mlir::kiln::ref {
namespace {

// Values already in their storage type go to the file and back exactly, in
// the file's dtype and byte count.
TEST(HostTensorsTest, StoredValuesRoundTripExactly) {
  std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> real(-100.0, 100.0);
  for (ElementKind kind :
       {ElementKind::F32, ElementKind::BF16, ElementKind::F16, ElementKind::I32,
        ElementKind::I1}) {
    SCOPED_TRACE(elementKindName(kind).str());
    Tensor tensor({3, 5}, kind);
    for (double &value : tensor.data)
      value = roundToStorage(real(rng), kind, Precision::F32);
    ::kiln::io::HostTensor host = toHostTensor(tensor);
    EXPECT_EQ(host.dtype, fileDType(kind));
    EXPECT_EQ(host.shape, (std::vector<int64_t>{3, 5}));
    EXPECT_EQ(host.data.size(), 15 * ::kiln::DTypeSize(host.dtype));
    Tensor back({3, 5}, kind);
    fromHostTensor(host, back);
    EXPECT_EQ(back.data, tensor.data);
  }
}

TEST(HostTensorsTest, DoublesRoundToNearestEven) {
  Tensor tensor({2}, ElementKind::BF16);
  tensor.data = {1.0 + 1.0 / 256, 1.0 + 3.0 / 256}; // ties: to even
  ::kiln::io::HostTensor host = toHostTensor(tensor);
  Tensor back({2}, ElementKind::BF16);
  fromHostTensor(host, back);
  EXPECT_EQ(back.data, (std::vector<double>{1.0, 1.0 + 4.0 / 256}));
}

} // namespace
} // namespace mlir::kiln::ref
