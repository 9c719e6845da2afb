#include "analysis/alerts/rules_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

namespace tv::rules_file_test {
namespace {

class AlertRulesFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "alerts_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
  }
  std::string Write(const std::string& text) {
    std::string path = dir_ + "/rules.toml";
    std::ofstream(path) << text;
    return path;
  }
  // The error LoadAlertRules gives for `text`; empty when none.
  std::string ErrorOf(const std::string& text) {
    Config c;
    c.alert_files = {Write(text)};
    try {
      LoadAlertRules(c);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }
  std::shared_ptr<const std::vector<AlertRule>> Load(const std::string& text, bool builtin = true) {
    Config c;
    c.builtin_alerts = builtin;
    c.alert_files = {Write(text)};
    return LoadAlertRules(c);
  }
  const AlertRule* Named(const std::vector<AlertRule>& rules, std::string_view name) {
    for (const AlertRule& r : rules) {
      if (r.name == name) return &r;
    }
    return nullptr;
  }
  std::string dir_;
};

TEST(AlertExpr, ParsesAggregateWindowAndUnits) {
  AlertExpr e = ParseAlertExpr("mean(gpus[].util_ratio[10m]) < 20%");
  EXPECT_EQ(e.aggregate, Aggregate::kMean);
  EXPECT_DOUBLE_EQ(e.window_s, 600);
  EXPECT_EQ(e.compare, Compare::kLess);
  EXPECT_DOUBLE_EQ(e.threshold, 0.2);
  EXPECT_TRUE(e.per_gpu);
  EXPECT_EQ(e.unit, Unit::kRatio);

  e = ParseAlertExpr("max(gpus[].util_ratio[5 samples]) < 0.2");
  EXPECT_EQ(e.window_rows, 5);
  EXPECT_EQ(e.aggregate, Aggregate::kMax);

  e = ParseAlertExpr(
      "(gpus[].allocator_allocated_bytes or gpus[].memory_used_bytes) / "
      "gpus[].memory_total_bytes >= 95%");
  ASSERT_EQ(e.numerator.alternatives.size(), 2u);
  ASSERT_TRUE(e.denominator.has_value());
  EXPECT_EQ(e.unit, Unit::kRatio);
  EXPECT_EQ(e.compare, Compare::kGreaterEqual);

  e = ParseAlertExpr("job.memory_bytes_max > 4GiB");
  EXPECT_TRUE(e.numerator.alternatives[0].row_max);
  EXPECT_FALSE(e.per_gpu);
  EXPECT_DOUBLE_EQ(e.threshold, 4.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(e.unit, Unit::kBytes);

  e = ParseAlertExpr("training.steps_per_second<=0.5");
  EXPECT_EQ(e.compare, Compare::kLessEqual);
  EXPECT_DOUBLE_EQ(e.threshold, 0.5);
}

TEST(AlertExpr, SaysWhatIsWrongAndWhere) {
  auto error = [](std::string_view text) {
    try {
      ParseAlertExpr(text);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error("gpus[].util < 20%").find("unknown metric 'gpus[].util'"), std::string::npos);
  EXPECT_NE(error("gpus[].util < 20%").find("did you mean 'gpus[].util_ratio'"), std::string::npos);
  EXPECT_NE(error("gpus[].util_ratio =< 0.2").find("expected a comparison"), std::string::npos);
  EXPECT_NE(error("gpus[].util_ratio < twenty").find("expected a number"), std::string::npos);
  EXPECT_NE(error("mean(gpus[].util_ratio) < 0.2").find("needs a window"), std::string::npos);
  EXPECT_NE(error("gpus[].util_ratio[10m] < 0.2").find("needs an aggregation"), std::string::npos);
  EXPECT_NE(error("mean(gpus[].util_ratio[10 minutes]) < 0.2").find("not a duration"),
            std::string::npos);
  EXPECT_NE(error("gpus[].util_ratio < 0.2 and more").find("nothing more"), std::string::npos);
  EXPECT_NE(error("host.load1_max > 3").find("unknown metric"), std::string::npos);  // no max kept
  EXPECT_NE(error("gpus[].util_ratio < 0.2").find(""), std::string::npos);
  EXPECT_EQ(error("gpus[].util_ratio < 0.2"), "");
  EXPECT_NE(error("mean(gpus[].util_ratio[5 samples) < 0.2").find("at character"),
            std::string::npos);
}

TEST(AlertDuration, ReadsUnitsAndPlainSeconds) {
  EXPECT_DOUBLE_EQ(ParseDuration("90s"), 90);
  EXPECT_DOUBLE_EQ(ParseDuration("10m"), 600);
  EXPECT_DOUBLE_EQ(ParseDuration("1h30m"), 5400);
  EXPECT_DOUBLE_EQ(ParseDuration("250ms"), 0.25);
  EXPECT_DOUBLE_EQ(ParseDuration("2.5"), 2.5);
  EXPECT_THROW(ParseDuration("10 minutes"), ConfigError);
  EXPECT_THROW(ParseDuration("-3s"), ConfigError);
  EXPECT_THROW(ParseDuration(""), ConfigError);
}

TEST_F(AlertRulesFile, BuiltinRulesAllParse) {
  Config c;
  auto rules = LoadAlertRules(c);
  std::vector<std::string> names;
  for (const AlertRule& r : *rules) {
    names.push_back(r.name);
    EXPECT_TRUE(r.builtin);
    EXPECT_FALSE(r.summary.empty()) << r.name;
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"gpu-low-util", "gpu-memory-full", "gpu-hot", "gpu-throttled",
                                      "job-memory-near-limit", "run-dir-disk-full"}));
  c.builtin_alerts = false;
  EXPECT_TRUE(LoadAlertRules(c)->empty());
}

TEST_F(AlertRulesFile, ReadsEveryKey) {
  auto rules = Load(R"(
[[alert]]
name = "zombie"
expr = "max(gpus[].util_ratio[5 samples]) < 20%"
for = "30s"
keep_firing_for = "1m"
repeat = "1h"
severity = "critical"
summary = "GPU {gpu} idles"
labels = { team = "vision", owner = "ana" }
all_gpus = true
command = ["/usr/bin/mail", "-s", "a b", "me@example.com"]
command_timeout = "5s"
webhook = "http://127.0.0.1:9/hook"
alertmanager = "http://localhost:9093"
signal = "SIGINT"
stop = true
)",
                    false);
  ASSERT_EQ(rules->size(), 1u);
  const AlertRule& r = rules->front();
  EXPECT_EQ(r.name, "zombie");
  EXPECT_DOUBLE_EQ(r.for_s, 30);
  EXPECT_DOUBLE_EQ(r.keep_firing_for_s, 60);
  EXPECT_DOUBLE_EQ(r.repeat_s, 3600);
  EXPECT_EQ(r.severity, "critical");
  EXPECT_EQ(r.labels.size(), 2u);
  EXPECT_TRUE(r.all_gpus);
  EXPECT_EQ(r.actions.command,
            (std::vector<std::string>{"/usr/bin/mail", "-s", "a b", "me@example.com"}));
  EXPECT_DOUBLE_EQ(r.actions.command_timeout_s, 5);
  EXPECT_EQ(r.actions.webhook, "http://127.0.0.1:9/hook");
  EXPECT_EQ(r.actions.signal, SIGINT);
  EXPECT_TRUE(r.actions.stop);
  EXPECT_FALSE(r.builtin);
  EXPECT_NE(r.where.find("rules.toml:2"), std::string::npos);
}

TEST_F(AlertRulesFile, TunesAndTurnsOffBuiltinRules) {
  auto rules = Load(R"(
[[alert]]
name = "gpu-low-util"
for = "3s"
webhook = "http://127.0.0.1:9/hook"

[[alert]]
name = "gpu-hot"
enabled = false

[[alert]]
name = "leak"
finding = "gpu-memory-leak"
severity = "critical"
)");
  const AlertRule* low = Named(*rules, "gpu-low-util");
  ASSERT_NE(low, nullptr);
  EXPECT_DOUBLE_EQ(low->for_s, 3);
  EXPECT_EQ(low->expr.text, "gpus[].util_ratio < 20%");  // the built-in's expression kept
  EXPECT_EQ(low->actions.webhook, "http://127.0.0.1:9/hook");
  EXPECT_TRUE(low->builtin);
  EXPECT_EQ(Named(*rules, "gpu-hot"), nullptr);
  const AlertRule* leak = Named(*rules, "leak");
  ASSERT_NE(leak, nullptr);
  EXPECT_EQ(leak->expr.finding, "gpu-memory-leak");
}

TEST_F(AlertRulesFile, EveryBadRuleSaysFileLineAndWhat) {
  std::string path = dir_ + "/rules.toml";
  struct Case {
    std::string text;
    std::string want;
  };
  std::vector<Case> cases = {
      {"[[alert]]\nname = \"a\"\nexpr = \"gpus[].utl_ratio < 20%\"\n",
       path + ":3: alert.expr: at character 1"},
      {"[[alert]]\nname = \"a\"\nexpr = \"gpus[].util_ratio < 20%\"\nfor = \"ten minutes\"\n",
       path + ":4: alert.for: 'ten minutes' is not a duration"},
      {"[[alert]]\nname = \"a\"\nexpr = \"gpus[].util_ratio ~ 20%\"\n", "expected a comparison"},
      {"[[alert]]\nname = \"a\"\nexpr = \"gpus[].util_ratio < 20%\"\nfro = \"1m\"\n",
       path + ":4: alert.fro: unknown key (did you mean 'for'?)"},
      {"[[alert]]\nname = \"a\"\n", path + ":1: alert 'a' needs expr"},
      {"[[alert]]\nexpr = \"gpus[].util_ratio < 20%\"\n", path + ":1: alert.name"},
      {"[[alert]]\nname = \"a b\"\nexpr = \"gpus[].util_ratio < 20%\"\n", "alert.name"},
      {"[[alert]]\nname = \"a\"\nfinding = \"gpu-memroy-leak\"\n",
       "'gpu-memroy-leak' is not a finding id"},
      {"[[alert]]\nname = \"a\"\nexpr = \"job.cpu_cores > 4\"\nseverity = \"high\"\n",
       path + ":4: alert.severity: expected \"info\", \"warning\" or \"critical\""},
      {"[[alert]]\nname = \"a\"\nexpr = \"job.cpu_cores > 4\"\ncommand = \"mail me\"\n",
       "alert.command: expected the command as a list of strings"},
      {"[[alert]]\nname = \"a\"\nexpr = \"job.cpu_cores > 4\"\nwebhook = \"hooks.example\"\n",
       ":4: alert.webhook: it must start with http:// or https://"},
      {"[[alert]]\nname = \"a\"\nexpr = \"job.cpu_cores > 4\"\nsignal = \"SIGKILL\"\n",
       "expected \"SIGINT\" or \"SIGTERM\""},
      {"[[alert]]\nname = \"a\"\nexpr = \"job.cpu_cores > 4\"\nstop = \"yes\"\n",
       "alert.stop: expected true or false"},
      {"[[alert]]\nname = \"a\"\nexpr = \"job.cpu_cores > 4\"\n[[alert]]\nname = \"a\"\n"
       "expr = \"job.cpu_cores > 5\"\n",
       path + ":4: alert 'a' is defined twice"},
      {"[[alert]]\nname = \"nope\"\nenabled = false\n", "there is no alert 'nope' to turn off"},
      {"[[alert]]\nname = \"a\"\nexpr = \"job.cpu_cores > 4\"\nfinding = \"oom\"\n",
       "give expr or finding, not both"},
      {"alert = 3\n", path + ":1: alert: expected [[alert]] tables"},
      {"[[alert]\n", path + ":1:"},
  };
  for (const Case& c : cases) {
    std::string error = ErrorOf(c.text);
    EXPECT_NE(error.find(c.want), std::string::npos)
        << "rule:\n"
        << c.text << "\nerror: " << error << "\nwanted: " << c.want;
  }
}

TEST_F(AlertRulesFile, ConfigFileTablesAreReadWithTheOtherKeys) {
  std::string path = Write("interval = 2\n[[alert]]\nname = \"a\"\nexpr = \"job.cpu_cores > 4\"\n");
  Config c;
  ApplyConfigFile(path, c);
  EXPECT_DOUBLE_EQ(c.interval_s, 2);
  ASSERT_EQ(c.alert_files, std::vector<std::string>{path});
  c.builtin_alerts = false;
  auto rules = LoadAlertRules(c);
  ASSERT_EQ(rules->size(), 1u);
  EXPECT_EQ(rules->front().name, "a");
}

TEST(AlertDocs, AlertsDocShowsTheBuiltinRulesAsGenerated) {
  std::ifstream in(std::string(TRAINVITALS_SOURCE_DIR) + "/docs/alerts.md");
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string block = BuiltinAlertsMarkdown();
  while (!block.empty() && block.back() == '\n') block.pop_back();
  EXPECT_NE(doc.find(block + "\n<!-- end generated -->"), std::string::npos)
      << "docs/alerts.md is stale: run `make docs`";
}

}  // namespace
}  // namespace tv::rules_file_test
