// CSV files for `make_dataset --from`: a header row of column names, then one
// record per row (RFC 4180: comma-separated, fields optionally quoted with ",
// "" for a quote inside quotes, \n or \r\n line ends). Blank lines are
// skipped. Every cell keeps its position for error messages.

#ifndef KILN_SAMPLES_DATA_IMPORT_CSV_H_
#define KILN_SAMPLES_DATA_IMPORT_CSV_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln::data_import {

struct CsvCell {
  std::string text;
  int64_t line = 0;    // 1-based
  int64_t column = 0;  // 1-based byte column where the cell starts
};

struct CsvTable {
  std::string path;
  std::vector<std::string> header;
  std::vector<std::vector<CsvCell>> rows;  // each header.size() cells

  // "PATH:LINE:COLUMN" of `cell`.
  std::string Where(const CsvCell& cell) const;
};

// Parses `text` (the contents of `path`). Errors name PATH:LINE:COLUMN: an
// unterminated quote, text after a closing quote, a row with another number
// of cells than the header, an empty or repeated column name, no header.
absl::StatusOr<CsvTable> ParseCsv(absl::string_view path,
                                  absl::string_view text);
absl::StatusOr<CsvTable> ReadCsv(const std::string& path);

}  // namespace kiln::data_import

#endif  // KILN_SAMPLES_DATA_IMPORT_CSV_H_
