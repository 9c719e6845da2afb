#include "store/db_location.h"

#include <gtest/gtest.h>

namespace tv::db_location_test {
namespace {

TEST(DbLocation, TellsAPostgresUrlFromAFile) {
  EXPECT_TRUE(IsPostgresUrl("postgresql://db.example/runs"));
  EXPECT_TRUE(IsPostgresUrl("postgres://alice@db/runs"));
  EXPECT_TRUE(IsPostgresUrl("PostgreSQL://db/runs"));
  EXPECT_TRUE(IsPostgresUrl("postgresql://"));
  EXPECT_FALSE(IsPostgresUrl("/var/lib/trainvitals/runs.db"));
  EXPECT_FALSE(IsPostgresUrl("runs.db"));
  EXPECT_FALSE(IsPostgresUrl("postgresql:/db"));
  EXPECT_FALSE(IsPostgresUrl("mysql://db/runs"));
  EXPECT_FALSE(IsPostgresUrl(""));
}

TEST(DbLocation, MasksThePasswordOfTheUserPart) {
  EXPECT_EQ(RedactLocation("postgresql://alice:s3cret@db:5432/runs"),
            "postgresql://alice:***@db:5432/runs");
  EXPECT_EQ(RedactLocation("postgres://alice:p@ss/w:rd@db/runs?sslmode=require"),
            "postgres://alice:***@db/runs?sslmode=require")
      << "a password may hold '@', '/' and ':' unencoded";
  EXPECT_EQ(RedactLocation("postgresql://alice:@db/runs"), "postgresql://alice:***@db/runs");
}

TEST(DbLocation, MasksAPasswordParameter) {
  EXPECT_EQ(RedactLocation("postgresql://db/runs?user=bob&password=hunter2&sslmode=require"),
            "postgresql://db/runs?user=bob&password=***&sslmode=require");
  EXPECT_EQ(RedactLocation("postgresql://a:b@db/runs?PASSWORD=x"),
            "postgresql://a:***@db/runs?PASSWORD=***");
}

TEST(DbLocation, LeavesWhatHoldsNoPasswordAlone) {
  for (const char* text : {"postgresql://alice@db/runs", "postgresql://db:5432/runs",
                           "postgresql:///runs?host=/run/postgresql", "/home/a:b@c/runs.db"}) {
    EXPECT_EQ(RedactLocation(text), text);
  }
}

TEST(DbLocation, MasksThePasswordInAServersMessage) {
  EXPECT_EQ(
      RedactPasswordIn("postgresql://alice:s3cret@db/runs", "invalid value \"s3cret\" for s3cret"),
      "invalid value \"***\" for ***");
  EXPECT_EQ(RedactPasswordIn("postgresql://db/runs?password=hunter2", "x hunter2 y"), "x *** y");
  EXPECT_EQ(RedactPasswordIn("postgresql://a:b@db/runs", "a b c"), "a b c")
      << "too short to find safely";
  EXPECT_EQ(RedactPasswordIn("runs.db", "file is not a database"), "file is not a database");
}

}  // namespace
}  // namespace tv::db_location_test
