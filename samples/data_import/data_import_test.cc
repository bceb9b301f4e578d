// The readers of make_dataset --from on files that NumPy writes at every run
// (fresh random values), and on CSV text, good and bad.

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/io/safetensors.h"
#include "samples/data_import/import.h"

namespace kiln::data_import {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir ? dir : "/tmp";
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// Runs `script` with NumPy imported as np, `d` the temporary folder and `rng`
// a generator seeded afresh.
void Python(const std::string& script) {
  const std::string path = TempDir() + "/make_inputs.py";
  std::ofstream(path) << "import json, struct, numpy as np\n"
                      << "d = '" << TempDir() << "'\n"
                      << "rng = np.random.default_rng()\n"
                      << script;
  ASSERT_EQ(std::system(("/usr/bin/python3 " + path).c_str()), 0) << script;
}

std::vector<FieldSpec> Specs(std::vector<std::string> texts) {
  std::vector<FieldSpec> specs;
  for (const std::string& text : texts) {
    absl::StatusOr<FieldSpec> spec = ParseFieldSpec(text);
    EXPECT_TRUE(spec.ok()) << spec.status();
    if (spec.ok()) specs.push_back(*spec);
  }
  return specs;
}

std::string Bytes(const ImportedField& field) {
  return std::string(field.data.begin(), field.data.end());
}

// The message of an import that must fail.
std::string ImportError(const std::string& path,
                        std::vector<std::string> fields) {
  absl::StatusOr<ImportedData> data = ImportFile(path, Specs(fields));
  EXPECT_FALSE(data.ok()) << path;
  return data.ok() ? "" : std::string(data.status().message());
}

TEST(FieldSpecTest, Parses) {
  absl::StatusOr<FieldSpec> s = ParseFieldSpec("x=p0..p63,bias:f32@1x8x8");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name, "x");
  EXPECT_EQ(s->source, "p0..p63,bias");
  ASSERT_EQ(s->columns.size(), 2u);
  EXPECT_EQ(s->columns[0].first, "p0");
  EXPECT_EQ(s->columns[0].last, "p63");
  EXPECT_EQ(s->columns[1].first, "bias");
  EXPECT_EQ(s->columns[1].last, "bias");
  EXPECT_EQ(s->dtype, FieldDType::kF32);
  EXPECT_THAT(*s->shape, ElementsAre(1, 8, 8));
  s = ParseFieldSpec("labels");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->source, "labels");
  EXPECT_FALSE(s->dtype.has_value());
  EXPECT_FALSE(s->shape.has_value());
}

TEST(FieldSpecTest, RefusesWhatItCannotRead) {
  EXPECT_THAT(ParseFieldSpec("x:f64").status().message(),
              HasSubstr("dtype 'f64' is not f32, i32 or class"));
  EXPECT_THAT(ParseFieldSpec("x@2xq").status().message(),
              HasSubstr("shape '2xq' is not extents joined by 'x'"));
  EXPECT_THAT(ParseFieldSpec("=y").status().message(),
              HasSubstr("the field has no name"));
  EXPECT_THAT(ParseFieldSpec("x=a..").status().message(),
              HasSubstr("'a..' is not a column or a range a..b"));
}

TEST(CsvTest, QuotesAndLineEnds) {
  absl::StatusOr<CsvTable> t =
      ParseCsv("t.csv", "a,\"b,c\",d\r\n1,\"say \"\"hi\"\"\",3\r\n\r\n4,5,6");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->header, ElementsAre("a", "b,c", "d"));
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[0][1].text, "say \"hi\"");
  EXPECT_EQ(t->Where(t->rows[1][2]), "t.csv:4:5");
}

TEST(CsvTest, ErrorsNameLineAndColumn) {
  EXPECT_THAT(ParseCsv("t.csv", "a,b\n1,2\n3\n").status().message(),
              HasSubstr("t.csv:3:1: the row has 1 cells, the header 2"));
  EXPECT_THAT(ParseCsv("t.csv", "a,b\n1,\"2\n").status().message(),
              HasSubstr("t.csv:2:3: the quoted cell that starts here is not "
                        "closed"));
  EXPECT_THAT(ParseCsv("t.csv", "a,b\n\"1\"x,2\n").status().message(),
              HasSubstr("t.csv:2:4: text after a closing quote"));
  EXPECT_THAT(ParseCsv("t.csv", "a,a\n").status().message(),
              HasSubstr("t.csv:1:3: column 'a' is named twice"));
  EXPECT_THAT(ParseCsv("t.csv", "\n\n").status().message(),
              HasSubstr("t.csv: no header row"));
}

TEST(CsvImportTest, RangesClassesAndDtypes) {
  absl::StatusOr<CsvTable> t = ParseCsv("iris.csv",
                                        "id,w,h,d,species\n"
                                        "7,0.5,1.25,-2,setosa\n"
                                        "8,1e-3,2,3.5,virginica\n"
                                        "9,4,5,6,setosa\n");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<ImportedData> data =
      ImportCsv(*t, Specs({"x=w..d", "y=species:class", "id:i32@1", "h"}));
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->records, 3u);
  ASSERT_EQ(data->fields.size(), 4u);
  const ImportedField& x = data->fields[0];
  EXPECT_EQ(x.field.dtype, DType::kF32);
  EXPECT_THAT(x.field.shape, ElementsAre(3));
  const float xs[] = {0.5f, 1.25f, -2, 1e-3f, 2, 3.5f, 4, 5, 6};
  EXPECT_EQ(Bytes(x), std::string(reinterpret_cast<const char*>(xs), 36));
  const ImportedField& y = data->fields[1];
  EXPECT_EQ(y.field.dtype, DType::kI32);
  EXPECT_TRUE(y.field.shape.empty());
  EXPECT_THAT(y.classes, ElementsAre("setosa", "virginica"));
  const int32_t ys[] = {0, 1, 0};
  EXPECT_EQ(Bytes(y), std::string(reinterpret_cast<const char*>(ys), 12));
  const int32_t ids[] = {7, 8, 9};
  EXPECT_THAT(data->fields[2].field.shape, ElementsAre(1));
  EXPECT_EQ(Bytes(data->fields[2]),
            std::string(reinterpret_cast<const char*>(ids), 12));
  EXPECT_TRUE(data->fields[3].field.shape.empty());
}

TEST(CsvImportTest, BadCellsNameTheirPlace) {
  auto error = [](const std::string& text, std::vector<std::string> fields) {
    absl::StatusOr<CsvTable> t = ParseCsv("f.csv", text);
    EXPECT_TRUE(t.ok()) << t.status();
    absl::StatusOr<ImportedData> data = ImportCsv(*t, Specs(fields));
    EXPECT_FALSE(data.ok());
    return std::string(data.status().message());
  };
  EXPECT_THAT(error("a,b\n1,2\n3,abc\n", {"x=a..b"}),
              HasSubstr("f.csv:3:3: column 'b': 'abc' is not a number (a "
                        "column of names is a field of dtype class"));
  EXPECT_THAT(error("a,b\n1,\n", {"x=a..b"}),
              HasSubstr("f.csv:2:3: column 'b': empty cell"));
  EXPECT_THAT(error("a,b\n1,nan\n", {"x=a..b"}),
              HasSubstr("f.csv:2:3: column 'b': is NaN"));
  EXPECT_THAT(error("a,b\n1,2.5\n", {"y=b:i32"}),
              HasSubstr("f.csv:2:3: column 'b': value 2.5 is not a whole "
                        "number (the field is i32)"));
  EXPECT_THAT(error("a,b\n1,3000000000\n", {"y=b:i32"}),
              HasSubstr("f.csv:2:3: column 'b': value 3000000000 is outside "
                        "the i32 range"));
  EXPECT_THAT(error("a,b\n1,2\n", {"x=a..c"}),
              HasSubstr("f.csv: field 'x': no column 'c' (the columns are a, "
                        "b)"));
  EXPECT_THAT(error("a,b\n1,2\n", {"x=b..a"}),
              HasSubstr("field 'x': column 'a' comes before 'b'"));
  EXPECT_THAT(error("a,b\n1,2\n", {"x=a..b@3"}),
              HasSubstr("field 'x': shape @3 has 3 elements, a record of "
                        "'a..b' 2"));
  EXPECT_THAT(error("a,b\n1,2\n", {"x=a", "x=b"}),
              HasSubstr("two fields are named 'x'"));
}

TEST(TensorImportTest, NumpyFilesOfEveryKind) {
  Python(R"(
x = rng.standard_normal((6, 2, 3))
y = rng.integers(-5, 10**6, size=6)
h = rng.standard_normal((6, 4)).astype(np.float16)
b = rng.integers(0, 2, size=(6, 1)).astype(bool)
np.save(d + '/x.npy', x)
np.savez(d + '/stored.npz', x=x, y=y, h=h, b=b)
np.savez_compressed(d + '/deflated.npz', x=x, y=y, h=h, b=b)
open(d + '/x.f32', 'wb').write(x.astype('<f4').tobytes())
open(d + '/y.i32', 'wb').write(y.astype('<i4').tobytes())
open(d + '/h.f32', 'wb').write(h.astype('<f4').tobytes())
open(d + '/b.i32', 'wb').write(b.astype('<i4').tobytes())
)");
  const std::string d = TempDir();
  absl::StatusOr<ImportedData> npy =
      ImportFile(d + "/x.npy", Specs({"features=anything@6"}));
  ASSERT_TRUE(npy.ok()) << npy.status();
  EXPECT_EQ(npy->records, 6u);
  EXPECT_THAT(npy->fields[0].field.shape, ElementsAre(6));
  EXPECT_EQ(Bytes(npy->fields[0]), ReadBytes(d + "/x.f32"));
  for (const char* file : {"/stored.npz", "/deflated.npz"}) {
    absl::StatusOr<ImportedData> npz =
        ImportFile(d + file, Specs({"x", "labels=y", "h", "b"}));
    ASSERT_TRUE(npz.ok()) << npz.status();
    ASSERT_EQ(npz->fields.size(), 4u);
    EXPECT_THAT(npz->fields[0].field.shape, ElementsAre(2, 3));
    EXPECT_EQ(Bytes(npz->fields[0]), ReadBytes(d + "/x.f32")) << file;
    EXPECT_EQ(npz->fields[1].field.name, "labels");
    EXPECT_EQ(npz->fields[1].field.dtype, DType::kI32);
    EXPECT_EQ(Bytes(npz->fields[1]), ReadBytes(d + "/y.i32")) << file;
    EXPECT_EQ(Bytes(npz->fields[2]), ReadBytes(d + "/h.f32")) << file;
    EXPECT_EQ(npz->fields[3].field.dtype, DType::kI32);
    EXPECT_EQ(Bytes(npz->fields[3]), ReadBytes(d + "/b.i32")) << file;
  }
}

TEST(TensorImportTest, SafetensorsOfTorchDtypes) {
  // A safetensors file as torch writes it: F64 features, I64 labels.
  Python(R"(
x = rng.standard_normal((5, 3))
y = rng.integers(0, 7, size=5)
blobs = [x.astype('<f8').tobytes(), y.astype('<i8').tobytes()]
header = {'__metadata__': {'format': 'pt'},
          'x': {'dtype': 'F64', 'shape': [5, 3], 'data_offsets': [0, 120]},
          'y': {'dtype': 'I64', 'shape': [5], 'data_offsets': [120, 160]}}
text = json.dumps(header).encode()
open(d + '/t.safetensors', 'wb').write(
    struct.pack('<Q', len(text)) + text + b''.join(blobs))
open(d + '/x.f32', 'wb').write(x.astype('<f4').tobytes())
open(d + '/y.i32', 'wb').write(y.astype('<i4').tobytes())
)");
  const std::string d = TempDir();
  absl::StatusOr<ImportedData> st =
      ImportFile(d + "/t.safetensors", Specs({"x", "y"}));
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->records, 5u);
  EXPECT_EQ(Bytes(st->fields[0]), ReadBytes(d + "/x.f32"));
  EXPECT_EQ(Bytes(st->fields[1]), ReadBytes(d + "/y.i32"));
  EXPECT_THAT(ImportError(d + "/t.safetensors", {"x", "labels"}),
              HasSubstr("t.safetensors: no tensor 'labels' (field 'labels'; "
                        "the tensors are 'x', 'y')"));
}

TEST(TensorImportTest, BadValuesNameTheTensorAndElement) {
  Python(R"(
y = rng.integers(0, 9, size=(8, 2))
y[5, 1] = 2**31
x = rng.standard_normal((8, 3))
x[6, 2] = np.nan
np.savez(d + '/bad.npz', y=y, x=x, short=np.zeros((7,), np.float32),
         s=np.array(['a'] * 8), scalar=np.float32(1),
         halves=np.full((8,), 2.5))
np.save(d + '/big.npy', np.zeros((8,), '>f4'))
np.save(d + '/fortran.npy', np.asfortranarray(rng.standard_normal((8, 2))))
)");
  const std::string d = TempDir();
  EXPECT_THAT(ImportError(d + "/bad.npz", {"y"}),
              HasSubstr("bad.npz: tensor 'y' element [5, 1]: value 2147483648 "
                        "is outside the i32 range"));
  EXPECT_THAT(ImportError(d + "/bad.npz", {"x"}),
              HasSubstr("bad.npz: tensor 'x' element [6, 2]: is NaN"));
  EXPECT_THAT(ImportError(d + "/bad.npz", {"labels=halves:i32"}),
              HasSubstr("tensor 'halves' element [0]: value 2.5 is not a "
                        "whole number"));
  EXPECT_THAT(ImportError(d + "/bad.npz", {"y=y:f32", "short"}),
              HasSubstr("bad.npz: tensor 'short' has 7 records (its first "
                        "dimension), tensor 'y' 8"));
  EXPECT_THAT(ImportError(d + "/bad.npz", {"s"}),
              HasSubstr("member 's.npy': dtype '<U1' is not supported"));
  EXPECT_THAT(ImportError(d + "/bad.npz", {"scalar"}),
              HasSubstr("tensor 'scalar' is a scalar: its first dimension "
                        "must be the record"));
  EXPECT_THAT(ImportError(d + "/big.npy", {"x"}),
              HasSubstr("big.npy: big-endian arrays (>f4) are not supported"));
  EXPECT_THAT(ImportError(d + "/fortran.npy", {"x"}),
              HasSubstr("fortran.npy: Fortran-ordered arrays are not "
                        "supported"));
  EXPECT_THAT(ImportError(d + "/x.npz", {"x"}), HasSubstr("x.npz"));
  EXPECT_THAT(ImportError(d + "/bad.txt", {"x"}),
              HasSubstr("is not .safetensors, .npy, .npz or .csv"));
}

TEST(WriteTest, ShuffledSplitKeepsEveryRecordOnce) {
  std::string csv = "id,v\n";
  for (int i = 0; i < 20; ++i) absl::StrAppend(&csv, i, ",", i * 0.5, "\n");
  absl::StatusOr<CsvTable> t = ParseCsv("ids.csv", csv);
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<ImportedData> data = ImportCsv(*t, Specs({"id:i32", "v"}));
  ASSERT_TRUE(data.ok()) << data.status();
  WriteOptions options;
  options.out = TempDir() + "/train.kilndata";
  options.heldout_out = TempDir() + "/heldout.kilndata";
  options.heldout_fraction = 0.25;
  options.shuffle = true;
  options.seed = 3;
  absl::StatusOr<WriteSummary> summary = WriteDatasets(*data, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->written, 15u);
  EXPECT_EQ(summary->held_out, 5u);
  std::vector<int> seen(20, 0);
  std::vector<int32_t> first_order;
  for (const std::string& path : {options.out, options.heldout_out}) {
    auto dataset = io::MappedDataset::Open(path);
    ASSERT_TRUE(dataset.ok()) << dataset.status();
    ASSERT_EQ((*dataset)->fields().size(), 2u);
    std::vector<uint8_t> bytes((*dataset)->record_count() * 8);
    ASSERT_TRUE((*dataset)
                    ->ReadRange(0, (*dataset)->record_count(), bytes.data())
                    .ok());
    for (uint64_t r = 0; r < (*dataset)->record_count(); ++r) {
      int32_t id;
      float v;
      std::memcpy(&id, &bytes[8 * r], 4);
      std::memcpy(&v, &bytes[8 * r + 4], 4);
      EXPECT_EQ(v, id * 0.5f);
      ++seen[id];
      first_order.push_back(id);
    }
  }
  EXPECT_EQ(seen, std::vector<int>(20, 1));
  std::vector<int32_t> sorted(20);
  std::iota(sorted.begin(), sorted.end(), 0);
  EXPECT_NE(first_order, sorted) << "--shuffle left file order";
  options.heldout_fraction = 0.01;
  EXPECT_THAT(WriteDatasets(*data, options).status().message(),
              HasSubstr("20 records are too few to hold out 0.01 of them"));
}

TEST(WriteTest, SafetensorsOutputHoldsABatchPerField) {
  absl::StatusOr<CsvTable> t =
      ParseCsv("few.csv", "a,b,c,label\n1,2,3,0\n4,5,6,2\n7,8,9,1\n");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<ImportedData> data =
      ImportCsv(*t, Specs({"x=a..c@3x1", "label:i32"}));
  ASSERT_TRUE(data.ok()) << data.status();
  WriteOptions options;
  options.out = TempDir() + "/batch.safetensors";
  ASSERT_TRUE(WriteDatasets(*data, options).ok());
  absl::StatusOr<io::Safetensors> batch =
      io::ReadSafetensorsFile(options.out);
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->tensors.size(), 2u);
  const io::HostTensor& x = batch->tensors.at("x");
  EXPECT_EQ(x.shape, (std::vector<int64_t>{3, 3, 1}));
  EXPECT_EQ(*x.Values<float>(),
            (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(batch->tensors.at("label").shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(*batch->tensors.at("label").Values<int32_t>(),
            (std::vector<int32_t>{0, 2, 1}));
}

}  // namespace
}  // namespace kiln::data_import
