#include "samples/data_import/csv.h"

#include <fstream>
#include <iterator>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kiln::data_import {
namespace {

// Splits the text into rows of cells, tracking positions.
class Lexer {
 public:
  Lexer(absl::string_view path, absl::string_view text)
      : path_(path), text_(text) {}

  bool done() const { return at_ >= text_.size(); }

  // The cells of the next non-blank row (empty at the end).
  absl::StatusOr<std::vector<CsvCell>> NextRow() {
    std::vector<CsvCell> cells;
    while (!done() && AtLineEnd()) SkipLineEnd();
    if (done()) return cells;
    while (true) {
      absl::StatusOr<CsvCell> cell = NextCell();
      if (!cell.ok()) return cell.status();
      cells.push_back(*std::move(cell));
      if (done()) break;
      if (AtLineEnd()) {
        SkipLineEnd();
        break;
      }
      ++at_;  // the comma
    }
    return cells;
  }

 private:
  bool AtLineEnd() const {
    return text_[at_] == '\n' ||
           (text_[at_] == '\r' && at_ + 1 < text_.size() &&
            text_[at_ + 1] == '\n');
  }
  void SkipLineEnd() {
    at_ += text_[at_] == '\r' ? 2 : 1;
    ++line_;
    line_start_ = at_;
  }
  int64_t Column() const { return static_cast<int64_t>(at_ - line_start_) + 1; }
  absl::Status Error(int64_t line, int64_t column, absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ":", line, ":", column, ": ", what));
  }

  // One cell, up to (not including) the comma or line end after it.
  absl::StatusOr<CsvCell> NextCell() {
    CsvCell cell;
    cell.line = line_;
    cell.column = Column();
    if (done() || text_[at_] != '"') {
      while (!done() && text_[at_] != ',' && !AtLineEnd())
        cell.text.push_back(text_[at_++]);
      return cell;
    }
    ++at_;  // the opening quote
    while (true) {
      if (done()) {
        return Error(cell.line, cell.column,
                     "the quoted cell that starts here is not closed");
      }
      const char c = text_[at_++];
      if (c == '"') {
        if (!done() && text_[at_] == '"') {
          cell.text.push_back('"');
          ++at_;
          continue;
        }
        break;
      }
      cell.text.push_back(c);
      if (c == '\n') {
        ++line_;
        line_start_ = at_;
      }
    }
    if (!done() && text_[at_] != ',' && !AtLineEnd()) {
      return Error(line_, Column(),
                   "text after a closing quote (want a comma or a line end)");
    }
    return cell;
  }

  std::string path_;
  absl::string_view text_;
  size_t at_ = 0;
  size_t line_start_ = 0;
  int64_t line_ = 1;
};

}  // namespace

std::string CsvTable::Where(const CsvCell& cell) const {
  return absl::StrCat(path, ":", cell.line, ":", cell.column);
}

absl::StatusOr<CsvTable> ParseCsv(absl::string_view path,
                                  absl::string_view text) {
  CsvTable table;
  table.path = std::string(path);
  Lexer lexer(path, text);
  absl::StatusOr<std::vector<CsvCell>> header = lexer.NextRow();
  if (!header.ok()) return header.status();
  if (header->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": no header row (want the column names first)"));
  }
  std::set<std::string> names;
  for (const CsvCell& cell : *header) {
    if (cell.text.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(table.Where(cell), ": empty column name"));
    }
    if (!names.insert(cell.text).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          table.Where(cell), ": column '", cell.text, "' is named twice"));
    }
    table.header.push_back(cell.text);
  }
  while (!lexer.done()) {
    absl::StatusOr<std::vector<CsvCell>> row = lexer.NextRow();
    if (!row.ok()) return row.status();
    if (row->empty()) break;
    if (row->size() != table.header.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(table.Where(row->front()), ": the row has ", row->size(),
                       " cells, the header ", table.header.size()));
    }
    table.rows.push_back(*std::move(row));
  }
  return table;
}

absl::StatusOr<CsvTable> ReadCsv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  return ParseCsv(path, text);
}

}  // namespace kiln::data_import
