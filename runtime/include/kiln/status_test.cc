#include "kiln/status.h"

#include <memory>

#include "gtest/gtest.h"

namespace kiln {
namespace {

absl::StatusOr<int> Half(int x) {
  if (x % 2) return absl::InvalidArgumentError("odd");
  return x / 2;
}

absl::Status Check(bool ok) {
  return ok ? absl::OkStatus() : absl::InternalError("broken");
}

absl::StatusOr<int> Quarter(int x) {
  KILN_ASSIGN_OR_RETURN(int half, Half(x));
  KILN_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

absl::Status Both(bool a, bool b) {
  KILN_RETURN_IF_ERROR(Check(a));
  KILN_RETURN_IF_ERROR(Half(b ? 2 : 3));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<int>> MakeBox(bool ok) {
  if (!ok) return absl::NotFoundError("no box");
  return std::make_unique<int>(7);
}

absl::StatusOr<int> Unbox(bool ok) {
  std::unique_ptr<int> box;
  KILN_ASSIGN_OR_RETURN(box, MakeBox(ok));  // move-only, existing variable
  return *box;
}

TEST(StatusMacrosTest, AssignOrReturn) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_EQ(Quarter(6).status().message(), "odd");
  EXPECT_EQ(Quarter(7).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*Unbox(true), 7);
  EXPECT_EQ(Unbox(false).status().code(), absl::StatusCode::kNotFound);
}

TEST(StatusMacrosTest, ReturnIfError) {
  EXPECT_TRUE(Both(true, true).ok());
  EXPECT_EQ(Both(false, true).message(), "broken");
  EXPECT_EQ(Both(true, false).message(), "odd");
}

TEST(StatusMacrosTest, Annotate) {
  EXPECT_TRUE(Annotate(absl::OkStatus(), "ctx").ok());
  absl::Status s = Annotate(absl::NotFoundError("x"), "loading y");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "loading y: x");
}

}  // namespace
}  // namespace kiln
