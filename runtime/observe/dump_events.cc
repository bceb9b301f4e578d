// Prints the scalars of a TensorBoard event file, one per line:
//   <step> <tag> <value>
// after a first line `file_version <version> events <n>`. Exit status 1
// when the file cannot be read or a record's CRC or encoding is wrong.
//
//   dump_events logs/events.out.tfevents.1700000000.host
#include <cstdio>
#include <string>

#include "runtime/observe/event_file.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: dump_events EVENT_FILE\n");
    return 2;
  }
  auto contents = kiln::observe::ReadEventFile(argv[1]);
  if (!contents.ok()) {
    std::fprintf(stderr, "dump_events: %s\n",
                 std::string(contents.status().message()).c_str());
    return 1;
  }
  std::printf("file_version %s events %lld\n", contents->file_version.c_str(),
              static_cast<long long>(contents->events));
  for (const auto& s : contents->scalars) {
    std::printf("%lld %s %.9g\n", static_cast<long long>(s.step), s.tag.c_str(),
                s.value);
  }
  return 0;
}
