// kiln-run's command line: its flags, their help, and the checks of their
// values and combinations that make a bad command line exit with status 2
// before any file is opened.
#ifndef KILN_TOOLS_KILN_RUN_FLAGS_H_
#define KILN_TOOLS_KILN_RUN_FLAGS_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/common/command_line.h"

namespace kiln {

cli::Usage KilnRunUsage();

// What a kiln-run command line asks for.
enum class RunMode {
  kDescribe,    // --describe: print what the artifact holds
  kInference,   // run one entry on --inputs
  kEvaluation,  // --dataset without --steps: an entry over every batch
  kTraining,    // --steps
};

struct Flags {
  std::string model;
  RunMode mode = RunMode::kInference;
  bool dry_run = false;
  int device = 0;
  uint64_t memory_limit = 0;  // 0: none
  std::string entry;          // inference and evaluation: "forward" if none
  std::string inputs;
  std::string params;
  std::string output;
  std::string check;
  double rtol = 1e-5;
  double atol = 1e-6;
  bool scaled_atol = false;
  bool shared_gradient_scale = false;
  bool bench = false;
  bool serial_launches = false;
  bool allow_nonfinite_inputs = false;
  std::optional<int64_t> warmup;
  int64_t iters = 100;
  std::optional<int64_t> steps;
  std::string dataset;
  std::vector<std::string> batch_fields;
  double lr = 1e-3;
  std::string schedule = "constant";
  std::optional<int64_t> schedule_steps;
  uint64_t seed = 0;
  bool shuffle = true;
  std::string checkpoint;
  int64_t checkpoint_every = 0;
  std::string resume;
  int64_t log_every = 0;
  std::string log_dir;
  int nproc = 0;
  std::string distributed = "auto";
  // The flags given on the command line (ABSL_FLAG names).
  std::set<std::string> given;
};

// Parses and checks a command line (args[0] is the program). A bad one is
// InvalidArgument with the message kiln-run prints before exiting with
// status 2; -h, --help and --version give cli::ParseArgs's NotFound.
absl::StatusOr<Flags> FlagsFromArgs(const std::vector<std::string>& args);

// FlagsFromArgs on argv: prints the help or version and exits 0, or prints
// the error and exits 2.
Flags ParseFlagsOrExit(int argc, char** argv);

}  // namespace kiln

#endif  // KILN_TOOLS_KILN_RUN_FLAGS_H_
