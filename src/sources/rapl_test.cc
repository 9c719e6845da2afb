#include "sources/rapl.h"

#include <gtest/gtest.h>

namespace tv::rapl_test {
namespace {

constexpr char kPc[] = "/sys/class/powercap";

// Two packages, each with a dram subzone, a psys zone and an mmio twin.
void SetUpZones(MemEnv* env) {
  for (int n : {0, 1}) {
    std::string dir = std::string(kPc) + "/intel-rapl:" + std::to_string(n);
    env->Set(dir + "/name", "package-" + std::to_string(n) + "\n");
    env->Set(dir + "/energy_uj", "1000000\n");
    env->Set(dir + "/max_energy_range_uj", "262143328850\n");
    env->Set(dir + ":0/name", "dram\n");
    env->Set(dir + ":0/energy_uj", "5\n");
  }
  env->Set(std::string(kPc) + "/intel-rapl:2/name", "psys\n");
  env->Set(std::string(kPc) + "/intel-rapl:2/energy_uj", "7\n");
  env->Set(std::string(kPc) + "/intel-rapl-mmio:0/energy_uj", "9\n");
}

TEST(Rapl, RecognisesTopLevelZonesOnly) {
  EXPECT_TRUE(IsRaplPackageZone("intel-rapl:0"));
  EXPECT_TRUE(IsRaplPackageZone("intel-rapl:12"));
  EXPECT_FALSE(IsRaplPackageZone("intel-rapl:0:1"));
  EXPECT_FALSE(IsRaplPackageZone("intel-rapl-mmio:0"));
  EXPECT_FALSE(IsRaplPackageZone("intel-rapl:"));
  EXPECT_FALSE(IsRaplPackageZone("dtpm"));
}

TEST(Rapl, ParsesMicrojoulesAndRejectsGarbage) {
  EXPECT_EQ(ParseMicrojoules("123456\n"), 123456u);
  EXPECT_EQ(ParseMicrojoules("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(ParseMicrojoules(""));
  EXPECT_FALSE(ParseMicrojoules("-5"));
  EXPECT_FALSE(ParseMicrojoules("12 uJ"));
}

TEST(Rapl, CorrectsOneWrapAroundTheRange) {
  EXPECT_EQ(EnergyDeltaUj(100, 250, 1000), 150u);
  EXPECT_EQ(EnergyDeltaUj(900, 50, 1000), 150u);
  EXPECT_FALSE(EnergyDeltaUj(900, 50, std::nullopt));
  EXPECT_FALSE(EnergyDeltaUj(2000, 50, 1000));  // reading beyond the stated range
}

TEST(ProbeRapl, FindsPackagesButNotSubzonesOrPsys) {
  MemEnv env;
  SetUpZones(&env);
  RaplStatus s = ProbeRapl(&env);
  EXPECT_TRUE(s.readable);
  EXPECT_TRUE(s.problem.empty());
  ASSERT_EQ(s.zones.size(), 2u);
  EXPECT_EQ(s.zones[0].name, "package-0");
  EXPECT_EQ(s.zones[1].energy_path, "/sys/class/powercap/intel-rapl:1/energy_uj");
  EXPECT_EQ(s.zones[1].max_energy_range_uj, 262143328850u);
}

TEST(ProbeRapl, ExplainsPermissionDenied) {
  MemEnv env;
  SetUpZones(&env);
  env.Deny("/sys/class/powercap/intel-rapl:0/energy_uj");
  RaplStatus s = ProbeRapl(&env);
  EXPECT_FALSE(s.readable);
  EXPECT_TRUE(s.permission_denied);
  EXPECT_EQ(s.problem,
            "RAPL energy not readable: /sys/class/powercap/intel-rapl:0/energy_uj: Permission "
            "denied (CPU energy is root-only since Linux 5.10; see docs)");
}

TEST(ProbeRapl, NoPowercapTreeMeansNoZones) {
  MemEnv env;
  RaplStatus s = ProbeRapl(&env);
  EXPECT_FALSE(s.readable);
  EXPECT_EQ(s.problem, "no RAPL powercap zones");
}

TEST(RaplSource, SumsPackagesIntoEnergyAndPower) {
  MemEnv env;
  SetUpZones(&env);
  RaplSource source(&env);
  std::vector<Notice> notices;
  Sample s;
  source.Read({.mono_s = 0.1}, &s, &notices);
  EXPECT_FALSE(s.host.cpu_energy_joules);
  env.Set("/sys/class/powercap/intel-rapl:0/energy_uj", "31000000\n");  // +30 J
  env.Set("/sys/class/powercap/intel-rapl:1/energy_uj", "11000000\n");  // +10 J
  source.Read({.mono_s = 1.1, .row_tick = true}, &s, &notices);
  EXPECT_DOUBLE_EQ(*s.host.cpu_energy_joules, 40.0);
  EXPECT_DOUBLE_EQ(*s.host.cpu_power_watts, 40.0);
  EXPECT_TRUE(notices.empty());
}

TEST(RaplSource, WrapsAroundMaxEnergyRange) {
  MemEnv env;
  env.Set("/sys/class/powercap/intel-rapl:0/energy_uj", "999000000\n");
  env.Set("/sys/class/powercap/intel-rapl:0/max_energy_range_uj", "1000000000\n");
  RaplSource source(&env);
  std::vector<Notice> notices;
  Sample s;
  source.Read({.mono_s = 0}, &s, &notices);
  env.Set("/sys/class/powercap/intel-rapl:0/energy_uj", "4000000\n");
  source.Read({.mono_s = 2, .row_tick = true}, &s, &notices);
  EXPECT_DOUBLE_EQ(*s.host.cpu_energy_joules, 5.0);
  EXPECT_DOUBLE_EQ(*s.host.cpu_power_watts, 2.5);
}

TEST(RaplSource, FailedReadSkipsPowerButKeepsEnergyAndRecovers) {
  MemEnv env;
  env.Set("/sys/class/powercap/intel-rapl:0/energy_uj", "0\n");
  RaplSource source(&env);
  std::vector<Notice> notices;
  Sample s;
  source.Read({.mono_s = 0}, &s, &notices);
  env.Set("/sys/class/powercap/intel-rapl:0/energy_uj", "garbage\n");
  s = Sample{};
  source.Read({.mono_s = 1, .row_tick = true}, &s, &notices);
  EXPECT_FALSE(s.host.cpu_power_watts);
  EXPECT_EQ(s.host.cpu_energy_joules, 0.0);
  env.Set("/sys/class/powercap/intel-rapl:0/energy_uj", "20000000\n");
  s = Sample{};
  source.Read({.mono_s = 2, .row_tick = true}, &s, &notices);
  EXPECT_DOUBLE_EQ(*s.host.cpu_power_watts, 10.0);  // 20 J over the 2 s since the last reading
  EXPECT_DOUBLE_EQ(*s.host.cpu_energy_joules, 20.0);
  EXPECT_TRUE(notices.empty());
}

TEST(RaplSource, UnreadableEnergyIsNoticedOnceAndNeverRetried) {
  MemEnv env;
  SetUpZones(&env);
  env.Deny("/sys/class/powercap/intel-rapl:1/energy_uj");
  RaplSource source(&env);
  std::vector<Notice> notices;
  Sample s;
  for (int i = 0; i < 5; ++i) {
    source.Read({.mono_s = double(i), .row_tick = true}, &s, &notices);
  }
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].source, "rapl");
  EXPECT_NE(notices[0].message.find("Permission denied"), std::string::npos);
  EXPECT_FALSE(s.host.cpu_energy_joules);
}

TEST(RaplSource, NoZonesIsNoticedOnce) {
  MemEnv env;
  RaplSource source(&env);
  std::vector<Notice> notices;
  Sample s;
  source.Read({.mono_s = 0}, &s, &notices);
  source.Read({.mono_s = 1, .row_tick = true}, &s, &notices);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].message, "no RAPL powercap zones");
}

}  // namespace
}  // namespace tv::rapl_test
