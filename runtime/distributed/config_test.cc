#include "runtime/distributed/config.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace kiln {
namespace distributed {
namespace {

using Env = std::map<std::string, std::string>;

absl::StatusOr<std::optional<DistributedConfig>> Parse(const Env& env) {
  return ConfigFromEnvironment([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(ConfigTest, NoRankMeansOneProcess) {
  auto config = Parse({});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->has_value());
}

TEST(ConfigTest, TorchrunVariables) {
  auto config = Parse({{"RANK", "3"},
                       {"WORLD_SIZE", "4"},
                       {"LOCAL_RANK", "1"},
                       {"MASTER_ADDR", "127.0.0.1"},
                       {"MASTER_PORT", "29500"},
                       {"KILN_DISTRIBUTED_TIMEOUT_S", "7"}});
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_TRUE(config->has_value());
  const DistributedConfig& c = **config;
  EXPECT_EQ(c.rank, 3);
  EXPECT_EQ(c.world_size, 4);
  EXPECT_EQ(c.local_rank, 1);
  EXPECT_EQ(c.master_addr, "127.0.0.1");
  EXPECT_EQ(c.master_port, 29500);
  EXPECT_TRUE(c.rendezvous_file.empty());
  EXPECT_EQ(c.timeout, absl::Seconds(7));
}

TEST(ConfigTest, RendezvousFileAndLocalRankDefault) {
  auto config = Parse(
      {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"KILN_RENDEZVOUS_FILE", "/tmp/r"}});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ((*config)->local_rank, 1);
  EXPECT_EQ((*config)->rendezvous_file, "/tmp/r");
  EXPECT_EQ((*config)->timeout, absl::Seconds(300));
}

TEST(ConfigTest, ErrorsNameTheVariable) {
  auto expect = [](const Env& env, const std::string& text) {
    auto config = Parse(env);
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(config.status().message().find(text), std::string::npos)
        << config.status();
  };
  expect({{"RANK", "0"}}, "WORLD_SIZE is not set");
  expect({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"KILN_RENDEZVOUS_FILE", "f"}},
         "RANK='2' must be an integer in [0, 1]");
  expect({{"RANK", "0"}, {"WORLD_SIZE", "x"}}, "WORLD_SIZE='x'");
  expect({{"RANK", "0"}, {"WORLD_SIZE", "2"}}, "no rendezvous");
  expect({{"RANK", "0"},
          {"WORLD_SIZE", "2"},
          {"MASTER_ADDR", "h"},
          {"MASTER_PORT", "70000"}},
         "MASTER_PORT='70000'");
}

}  // namespace
}  // namespace distributed
}  // namespace kiln
