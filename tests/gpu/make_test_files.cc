// Writes the files the kiln-run tests use into the folder given as argv[1]:
//   linreg.kiln                  linear regression with Adam (train_step etc.)
//   predict.kiln                 its inference model (entry predict: x -> pred)
//   linreg.kilndata              320 records with fields x [5], y [3]
//   batch.safetensors            one batch: x [16, 5], y [16, 3]
//   predict_in.safetensors       x [16, 5]
//   predict_nan.safetensors      the same with a NaN at [3, 2]
//   predict_expected.safetensors pred of predict.kiln with seed-0 parameters
//   predict_wrong.safetensors    the same, one element off by 1
//   linreg_sgd16.kiln            linear regression with SGD, batch 16
//   linreg_dp8.kiln, linreg_dp4.kiln
//                                the same with the gradient all-reduces of
//                                kilnc --data-parallel, batches 8 and 4 (2
//                                and 4 ranks of global batches of 16)
//   echo.kiln                    entry forward returns its inputs tokens
//                                i32[4, 2] (values in [0, 16)) and labels
//                                i32[4] (in [0, 3) or -100) as tokens_out
//                                and labels_out, with no kernel
//   echo_in.safetensors          tokens and labels as i64, as PyTorch
//                                writes them; echo_expected.safetensors the
//                                outputs as i32; echo_bad_label.safetensors
//                                a label 3; echo_wide.safetensors a token
//                                2^33
//   echo.kilndata, echo_bad.kilndata
//                                12 records of i64 tokens [2] and labels;
//                                in the second record 9's label is 7
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kiln/dataset.h"
#include "kiln/status.h"
#include "runtime/artifact/artifact_writer.h"
#include "runtime/io/safetensors.h"
#include "runtime/random/initializers.h"
#include "tests/gpu/linreg_artifact.h"

namespace kiln {
namespace {

// The files of echo.kiln (see the top of the file).
absl::Status WriteEchoFiles(const std::string& dir) {
  artifact::ArtifactWriter w({"sm_90"});
  artifact::Entry e;
  e.name = "forward";
  e.arena_size = 512;
  artifact::TensorBinding tokens{
      "tokens", DType::kI32, {4, 2}, artifact::BufferRef::Arena(0, 32)};
  tokens.valid_range = artifact::ValueRange{
      0, 16, std::nullopt, "indices of kiln.embedding of 16 rows"};
  artifact::TensorBinding labels{
      "labels", DType::kI32, {4}, artifact::BufferRef::Arena(256, 16)};
  labels.valid_range = artifact::ValueRange{
      0, 3, -100,
      "labels of kiln.cross_entropy over 3 classes with ignore_index -100"};
  e.inputs = {tokens, labels};
  e.outputs = {{"tokens_out", DType::kI32, {4, 2}, tokens.buffer},
               {"labels_out", DType::kI32, {4}, labels.buffer}};
  w.AddEntry(std::move(e));
  KILN_RETURN_IF_ERROR(
      artifact::WriteArtifactFile(w.artifact(), dir + "/echo.kiln"));

  auto bytes_of = [](const auto& values) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(values.data());
    return std::vector<uint8_t>(p, p + sizeof(values[0]) * values.size());
  };
  const std::vector<int64_t> token_values = {0, 1, 2, 3, 4, 5, 15, 14};
  const std::vector<int64_t> label_values = {0, 2, -100, 1};
  auto write = [&](const std::string& name, std::vector<int64_t> t,
                   std::vector<int64_t> l) {
    io::Safetensors st;
    st.tensors["tokens"] = {DType::kI64, {4, 2}, bytes_of(t)};
    st.tensors["labels"] = {DType::kI64, {4}, bytes_of(l)};
    return io::WriteSafetensorsFile(dir + "/" + name, st);
  };
  KILN_RETURN_IF_ERROR(
      write("echo_in.safetensors", token_values, label_values));
  KILN_RETURN_IF_ERROR(
      write("echo_bad_label.safetensors", token_values, {0, 3, 1, 2}));
  std::vector<int64_t> wide = token_values;
  wide[3] = int64_t{1} << 33;
  KILN_RETURN_IF_ERROR(write("echo_wide.safetensors", wide, label_values));
  io::Safetensors expected;
  expected.tensors["tokens_out"] = {
      DType::kI32,
      {4, 2},
      bytes_of(std::vector<int32_t>(token_values.begin(), token_values.end()))};
  expected.tensors["labels_out"] = {
      DType::kI32,
      {4},
      bytes_of(std::vector<int32_t>(label_values.begin(), label_values.end()))};
  KILN_RETURN_IF_ERROR(
      io::WriteSafetensorsFile(dir + "/echo_expected.safetensors", expected));

  for (const char* name : {"echo", "echo_bad"}) {
    KILN_ASSIGN_OR_RETURN(
        auto writer, io::DatasetWriter::Create(dir + "/" + name + ".kilndata",
                                               {{"tokens", DType::kI64, {2}},
                                                {"labels", DType::kI64, {}}}));
    for (int64_t r = 0; r < 12; ++r) {
      const bool bad = std::string(name) == "echo_bad" && r == 9;
      const int64_t record[3] = {r, 15 - r, bad ? 7 : r % 3};
      KILN_RETURN_IF_ERROR(writer->Append(record, sizeof(record)));
    }
    KILN_RETURN_IF_ERROR(writer->Finish());
  }
  return absl::OkStatus();
}

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "make_test_files: %s\n", s.ToString().c_str());
  return 1;
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_test_files <folder>\n");
    return 2;
  }
  const std::string dir = argv[1];
  testing::LinRegOptions o;
  // The kernels wait for their predecessor: kiln-run may launch them early.
  o.waits_for_predecessor = true;
  absl::Status s = artifact::WriteArtifactFile(testing::LinRegArtifact(o),
                                               dir + "/linreg.kiln");
  if (!s.ok()) return Fail(s);
  testing::LinRegOptions p = o;
  p.inference_only = true;
  s = artifact::WriteArtifactFile(testing::LinRegArtifact(p),
                                  dir + "/predict.kiln");
  if (!s.ok()) return Fail(s);

  // Data parallel: 1, 2 and 4 ranks of global batches of 16.
  for (int ranks : {1, 2, 4}) {
    testing::LinRegOptions d = o;
    d.optimizer = testing::LinRegOptimizer::kSgd;
    d.batch = o.batch / ranks;
    d.data_parallel = ranks > 1;
    const std::string name =
        ranks == 1 ? "linreg_sgd16" : "linreg_dp" + std::to_string(d.batch);
    s = artifact::WriteArtifactFile(testing::LinRegArtifact(d),
                                    dir + "/" + name + ".kiln");
    if (!s.ok()) return Fail(s);
  }

  const int64_t rows = o.batch * 20;
  const testing::LinRegData data =
      testing::MakeLinRegData(rows, o.in, o.out, 1);
  auto writer = io::DatasetWriter::Create(
      dir + "/linreg.kilndata",
      {{"x", DType::kF32, {o.in}}, {"y", DType::kF32, {o.out}}});
  if (!writer.ok()) return Fail(writer.status());
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> record(data.x.begin() + r * o.in,
                              data.x.begin() + (r + 1) * o.in);
    record.insert(record.end(), data.y.begin() + r * o.out,
                  data.y.begin() + (r + 1) * o.out);
    s = (*writer)->Append(record.data(), record.size() * 4);
    if (!s.ok()) return Fail(s);
  }
  s = (*writer)->Finish();
  if (!s.ok()) return Fail(s);

  const std::vector<float> x(data.x.begin(), data.x.begin() + o.batch * o.in);
  const std::vector<float> y(data.y.begin(), data.y.begin() + o.batch * o.out);
  io::Safetensors batch;
  batch.tensors["x"] = io::HostTensor::F32({o.batch, o.in}, x);
  batch.tensors["y"] = io::HostTensor::F32({o.batch, o.out}, y);
  s = io::WriteSafetensorsFile(dir + "/batch.safetensors", batch);
  if (!s.ok()) return Fail(s);
  io::Safetensors in;
  in.tensors["x"] = batch.tensors["x"];
  s = io::WriteSafetensorsFile(dir + "/predict_in.safetensors", in);
  if (!s.ok()) return Fail(s);
  // The same with a NaN at [3, 2].
  std::vector<float> x_nan = x;
  x_nan[3 * o.in + 2] = std::nanf("");
  io::Safetensors in_nan;
  in_nan.tensors["x"] = io::HostTensor::F32({o.batch, o.in}, x_nan);
  s = io::WriteSafetensorsFile(dir + "/predict_nan.safetensors", in_nan);
  if (!s.ok()) return Fail(s);

  // The parameters a session with seed 0 starts from, as f32.
  const std::vector<double> w =
      InitialValues(InitKind::kXavier, 1.0, 0.0, {o.in, o.out}, 0, 0);
  const std::vector<double> b =
      InitialValues(InitKind::kUniform, -0.1f, 0.1f, {o.out}, 0, 1);
  std::vector<float> pred(o.batch * o.out);
  for (int i = 0; i < o.batch; ++i) {
    for (int k = 0; k < o.out; ++k) {
      double acc = static_cast<float>(b[k]);
      for (int j = 0; j < o.in; ++j) {
        acc += double(x[i * o.in + j]) * static_cast<float>(w[j * o.out + k]);
      }
      pred[i * o.out + k] = static_cast<float>(acc);
    }
  }
  io::Safetensors expected;
  expected.tensors["pred"] = io::HostTensor::F32({o.batch, o.out}, pred);
  s = io::WriteSafetensorsFile(dir + "/predict_expected.safetensors", expected);
  if (!s.ok()) return Fail(s);
  pred[5] += 1.0f;
  expected.tensors["pred"] = io::HostTensor::F32({o.batch, o.out}, pred);
  s = io::WriteSafetensorsFile(dir + "/predict_wrong.safetensors", expected);
  if (!s.ok()) return Fail(s);
  s = WriteEchoFiles(dir);
  if (!s.ok()) return Fail(s);
  return 0;
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) { return kiln::Main(argc, argv); }
