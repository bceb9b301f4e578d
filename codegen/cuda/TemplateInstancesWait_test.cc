// Every kernel the planners may render (TemplateInstances.h, the instances
// check_templates.sh compiles) waits for its predecessor before anything
// else, or never waits and is then never launched early: the renderer
// writes the wait as the first statement of the __global__ entry, and no
// template calls it (or griddepcontrol) itself, so no template code can run
// before it. Together with the PTX check of every kernel kilnc compiles
// (PredecessorWait.h), this keeps programmatic launches ordered.

#include "codegen/cuda/KernelEmitter.h"
#include "codegen/cuda/TemplateInstances.h"

#include "llvm/ADT/StringRef.h"
#include "gtest/gtest.h"

#include <string>

namespace mlir::kiln::codegen {
namespace {

/// What is wrong with `source`'s waits, or "".
std::string waitProblem(llvm::StringRef source) {
  const llvm::StringRef wait = kWaitForPredecessor;
  size_t calls = 0;
  for (size_t at = source.find(wait); at != llvm::StringRef::npos;
       at = source.find(wait, at + 1))
    ++calls;
  if (source.contains("griddepcontrol"))
    return "griddepcontrol outside the prelude's kiln_wait_for_predecessor";
  size_t entries = 0, waiting = 0;
  for (size_t at = source.find("__global__"); at != llvm::StringRef::npos;
       at = source.find("__global__", at + 1)) {
    ++entries;
    size_t open = source.find(") {", at);
    if (open == llvm::StringRef::npos)
      return "an entry without a body";
    llvm::StringRef body = source.drop_front(open + 3).ltrim();
    if (body.starts_with(wait))
      ++waiting;
  }
  if (entries != 1)
    return "not one __global__ entry";
  if (calls == 0)
    return ""; // never waits: the artifact says so, no early launch
  if (calls != 1 || waiting != 1)
    return "the wait is not the entry's first statement (or not its only "
           "call)";
  return "";
}

TEST(TemplateInstancesWaitTest, EveryInstanceWaitsFirstOrNever) {
  std::vector<TemplateInstance> instances = allTemplateInstances();
  ASSERT_GT(instances.size(), 100u);
  size_t waiting = 0;
  for (const TemplateInstance &instance : instances) {
    EXPECT_EQ(waitProblem(instance.source), "") << instance.name;
    waiting += llvm::StringRef(instance.source).contains(kWaitForPredecessor);
  }
  // Only the persistent wgmma convolutions start without waiting.
  EXPECT_GT(waiting, instances.size() * 9 / 10);
}

TEST(TemplateInstancesWaitTest, TheCheckFindsAReadBeforeTheWait) {
  const std::string good = "extern \"C\" __global__ void k(float *p) {\n  " +
                           kWaitForPredecessor.str() + "\n  p[0] = 1.f;\n}\n";
  const std::string early =
      "extern \"C\" __global__ void k(float *p) {\n  float x = p[1];\n  " +
      kWaitForPredecessor.str() + "\n  p[0] = x;\n}\n";
  const std::string twice =
      "__device__ void f() { " + kWaitForPredecessor.str() + " }\n" + good;
  EXPECT_EQ(waitProblem(good), "");
  EXPECT_NE(waitProblem(early), "");
  EXPECT_NE(waitProblem(twice), "");
  EXPECT_NE(waitProblem("__device__ void f() { asm volatile(\"griddepcontrol"
                        ".wait;\"); }\n" +
                        good),
            "");
}

} // namespace
} // namespace mlir::kiln::codegen
