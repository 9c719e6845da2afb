#include "store/memory_trend_record.h"

#include "store/record_json.h"

namespace tv {
namespace {

using OJson = nlohmann::ordered_json;

template <typename Json>
Status ReadTrends(const Json& array, std::vector<MemoryTrendRecord>* out) {
  out->clear();
  if (array.is_null()) return Status::Ok();
  if (!array.is_array()) {
    return Status::Invalid(
        fmt::format("key memory_trends: expected an array, got {}", JsonKindName(array)));
  }
  std::string error;
  for (size_t i = 0; i < array.size(); ++i) {
    std::string at = fmt::format("memory_trends[{}]", i);
    RecordFields<Json> f(array[i], at, &error, RecordReading::kKeepGoing);
    if (!f.Object()) continue;
    MemoryTrendRecord& t = out->emplace_back();
    if (const Json* subject = f.Find("subject")) {
      Status s = SubjectFromJson(*subject, &t.subject, f.Path("subject"));
      if (!s.ok() && error.empty()) error = s.message();
    }
    f.Text("figure", &t.figure);
    f.Whole("floors", &t.floors);
    std::string by;
    f.Text("floors_by", &by);
    t.floors_by_epoch = by == "epoch";
    f.Number("growth_bytes_per_hour", &t.growth_bytes_per_hour);
    f.Number("growth_bytes_per_epoch", &t.growth_bytes_per_epoch);
    f.Number("confidence", &t.confidence);
    f.Text("verdict", &t.verdict);
  }
  return ReadingStatus(error);
}

template <typename Json>
Status ReadFromSummary(const Json& summary, std::vector<MemoryTrendRecord>* out) {
  out->clear();
  if (!summary.is_object()) return Status::Invalid("the summary is not a JSON object");
  auto it = summary.find("memory_trends");
  return it == summary.end() ? Status::Ok() : ReadTrends(*it, out);
}

}  // namespace

OJson MemoryTrendFiguresJson(const MemoryTrendRecord& t) {
  OJson j = {{"floors", t.floors}, {"floors_by", t.floors_by_epoch ? "epoch" : "window"}};
  Put(j, "growth_bytes_per_hour", t.growth_bytes_per_hour);
  Put(j, "growth_bytes_per_epoch", t.growth_bytes_per_epoch);
  Put(j, "confidence", t.confidence);
  j["verdict"] = t.verdict;
  return j;
}

OJson MemoryTrendsJson(const std::vector<MemoryTrendRecord>& trends) {
  OJson out = OJson::array();
  for (const MemoryTrendRecord& t : trends) {
    OJson j = {{"subject", SubjectJson(t.subject)}, {"figure", t.figure}};
    j.update(MemoryTrendFiguresJson(t));
    out.push_back(std::move(j));
  }
  return out;
}

Status MemoryTrendsFromJson(const nlohmann::json& array, std::vector<MemoryTrendRecord>* out) {
  return ReadTrends(array, out);
}
Status MemoryTrendsFromJson(const OJson& array, std::vector<MemoryTrendRecord>* out) {
  return ReadTrends(array, out);
}
Status MemoryTrendsFromSummary(const nlohmann::json& summary, std::vector<MemoryTrendRecord>* out) {
  return ReadFromSummary(summary, out);
}
Status MemoryTrendsFromSummary(const OJson& summary, std::vector<MemoryTrendRecord>* out) {
  return ReadFromSummary(summary, out);
}

}  // namespace tv
