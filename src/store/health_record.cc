#include "store/health_record.h"

#include <string_view>

#include "store/record_json.h"

namespace tv {
namespace {

using OJson = nlohmann::ordered_json;

template <typename Json, typename T>
void ReadSpent(RecordFields<Json>& f, std::string_view key, std::array<T, kSpentCount>* out) {
  f.Member(key, [&](RecordFields<Json>& by) {
    for (size_t i = 0; i < kSpentCount; ++i) {
      std::string_view name = SpentName(static_cast<Spent>(i));
      if constexpr (std::is_same_v<T, int>) {
        by.Whole(name, &(*out)[i]);
      } else {
        by.Number(name, &(*out)[i]);
      }
    }
  });
}

template <typename Json>
void ReadGoodput(RecordFields<Json>& f, std::optional<GoodputRecord>* out) {
  f.Member("goodput", [&](RecordFields<Json>& g) {
    GoodputRecord& r = out->emplace();
    g.Number("wall_s", &r.wall_s);
    g.Number("productive_ratio", &r.productive_ratio);
    ReadSpent(g, "seconds", &r.seconds);
    ReadSpent(g, "ratios", &r.ratios);
    ReadSpent(g, "percent", &r.percent);
  });
}

template <typename Json>
Status ReadHealth(const Json& j, HealthRecord* out) {
  *out = HealthRecord{};
  std::string error;
  RecordFields<Json> f(j, "health", &error, RecordReading::kKeepGoing);
  if (!f.Object()) return ReadingStatus(error);
  f.Text("note", &out->note);
  f.Number("score", &out->score);
  f.Objects("breakdown", [&](RecordFields<Json>& d) {
    HealthRecord::Deduction& r = out->breakdown.emplace_back();
    d.Text("what", &r.what);
    d.Whole("points", &r.points);
  });
  f.Number("gpu_busy_ratio", &out->gpu_busy_ratio);
  ReadGoodput(f, &out->goodput);
  f.Objects("not_judged", [&](RecordFields<Json>& w) {
    HealthRecord::Waiting& r = out->not_judged.emplace_back();
    w.Text("id", &r.id);
    w.Text("needs", &r.needs);
  });
  f.Objects("epochs", [&](RecordFields<Json>& e) {
    HealthRecord::Epoch& r = out->epochs.emplace_back();
    e.Whole("epoch", &r.epoch);
    e.Number("score", &r.score);
    ReadGoodput(e, &r.goodput);
  });
  return ReadingStatus(error);
}

template <typename Json>
Status ReadFromSummary(const Json& summary, HealthRecord* out) {
  *out = HealthRecord{};
  if (!summary.is_object()) return Status::Invalid("the summary is not a JSON object");
  auto it = summary.find("health");
  return it == summary.end() ? Status::Ok() : ReadHealth(*it, out);
}

}  // namespace

OJson GoodputJson(const GoodputRecord& g) {
  OJson out = {{"wall_s", g.wall_s}};
  Put(out, "productive_ratio", g.productive_ratio);
  OJson seconds = OJson::object(), ratios = OJson::object(), percent = OJson::object();
  for (size_t i = 0; i < kSpentCount; ++i) {
    std::string key(SpentName(static_cast<Spent>(i)));
    seconds[key] = g.seconds[i];
    ratios[key] = g.ratios[i];
    percent[key] = g.percent[i];
  }
  out["seconds"] = std::move(seconds);
  out["ratios"] = std::move(ratios);
  out["percent"] = std::move(percent);
  return out;
}

OJson HealthJson(const HealthRecord& h) {
  OJson out = OJson::object();
  PutText(out, "note", h.note);
  if (h.score) {
    out["score"] = *h.score;
    OJson breakdown = OJson::array();
    for (const HealthRecord::Deduction& d : h.breakdown) {
      breakdown.push_back({{"what", d.what}, {"points", d.points}});
    }
    out["breakdown"] = std::move(breakdown);
  }
  Put(out, "gpu_busy_ratio", h.gpu_busy_ratio);
  if (h.goodput) out["goodput"] = GoodputJson(*h.goodput);
  if (!h.not_judged.empty()) {
    OJson list = OJson::array();
    for (const HealthRecord::Waiting& w : h.not_judged) {
      list.push_back({{"id", w.id}, {"needs", w.needs}});
    }
    out["not_judged"] = std::move(list);
  }
  if (!h.epochs.empty()) {
    OJson epochs = OJson::array();
    for (const HealthRecord::Epoch& e : h.epochs) {
      OJson epoch = {{"epoch", e.epoch}, {"score", e.score}};
      if (e.goodput) epoch["goodput"] = GoodputJson(*e.goodput);
      epochs.push_back(std::move(epoch));
    }
    out["epochs"] = std::move(epochs);
  }
  return out;
}

Status HealthFromJson(const nlohmann::json& j, HealthRecord* out) { return ReadHealth(j, out); }
Status HealthFromJson(const OJson& j, HealthRecord* out) { return ReadHealth(j, out); }
Status HealthFromSummary(const nlohmann::json& summary, HealthRecord* out) {
  return ReadFromSummary(summary, out);
}
Status HealthFromSummary(const OJson& summary, HealthRecord* out) {
  return ReadFromSummary(summary, out);
}

}  // namespace tv
