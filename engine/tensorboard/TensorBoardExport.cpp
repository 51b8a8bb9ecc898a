#include "engine/tensorboard/TensorBoardExport.h"

#include "engine/core/AtomicFile.h"
#include "engine/runs/config/BoundedJson.h"
#include "engine/tensorboard/Records.h"
#include "engine/tensorboard/event.pb.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <sstream>

namespace ps::tensorboard {
namespace {

namespace fs = std::filesystem;

std::string folderName(const RunInfo& run) {
  std::string stem;
  for (char c : run.name) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    if (keep)
      stem += c;
    else if (!stem.empty() && stem.back() != '-')
      stem += '-';
  }
  while (!stem.empty() && (stem.back() == '-' || stem.back() == '.')) stem.pop_back();
  if (stem.size() > 60) stem.resize(60);
  return "run-" + std::to_string(run.id) + (stem.empty() ? "" : "-" + stem);
}

class EventWriter {
 public:
  explicit EventWriter(std::ostream& out) : out_(out) {}
  void write(const Event& e) { writeRecord(out_, e.SerializeAsString()); }
  // A text summary (TensorBoard's text plugin: a string tensor, Markdown).
  void text(double wall, int64_t step, const std::string& tag, const std::string& markdown) {
    Event e;
    e.set_wall_time(wall);
    e.set_step(step);
    SummaryValue* v = e.mutable_summary()->add_value();
    v->set_tag(tag);
    v->mutable_metadata()->mutable_plugin_data()->set_plugin_name("text");
    TensorProto* t = v->mutable_tensor();
    t->set_dtype(DT_STRING);
    t->mutable_tensor_shape();
    t->add_string_val(markdown);
    write(e);
  }

 private:
  std::ostream& out_;
};

void writeHistogram(SummaryValue* v, const HistogramRow& h) {
  HistogramProto* p = v->mutable_histo();
  const size_t bins = h.counts.size();
  const double width = bins ? (h.hi - h.lo) / double(bins) : 0;
  double num = 0, sum = 0, squares = 0;
  for (size_t i = 0; i < bins; ++i) {
    const double centre = h.lo + (double(i) + 0.5) * width, count = h.counts[i];
    num += count, sum += count * centre, squares += count * centre * centre;
    p->add_bucket_limit(i + 1 == bins ? h.hi : h.lo + double(i + 1) * width);
    p->add_bucket(count);
  }
  p->set_min(h.lo);
  p->set_max(h.hi);
  p->set_num(num);
  p->set_sum(sum);
  p->set_sum_squares(squares);
}

// Every metric at its step, as the CSV export has them: the last value of a key, the largest wall and emulated time.
void writeScalars(EventWriter& w, const std::vector<MetricPoint>& metrics, double start) {
  size_t i = 0;
  while (i < metrics.size()) {
    const int64_t step = metrics[i].step;
    std::map<std::string, double> values;
    double wall = NAN, emulated = NAN;
    for (; i < metrics.size() && metrics[i].step == step; ++i) {
      values[metrics[i].key] = metrics[i].value;
      if (!std::isnan(metrics[i].wall_s) && !(wall >= metrics[i].wall_s)) wall = metrics[i].wall_s;
      if (!std::isnan(metrics[i].emulated_s) && !(emulated >= metrics[i].emulated_s)) emulated = metrics[i].emulated_s;
    }
    if (!std::isnan(emulated)) values["emulated_s"] = emulated;
    Event e;
    e.set_wall_time(start + (std::isnan(wall) ? 0.0 : wall));
    e.set_step(step);
    for (const auto& [key, value] : values) {
      SummaryValue* v = e.mutable_summary()->add_value();
      v->set_tag(key);
      v->set_simple_value(float(value));
    }
    w.write(e);
  }
}

// The run's timeline as text, one Markdown list per step with events, in one pass (events come in step order).
void writeEvents(EventWriter& w, const std::vector<EventRow>& events, double start) {
  for (size_t i = 0; i < events.size();) {
    const EventRow& first = events[i];
    std::string md;
    for (; i < events.size() && events[i].step == first.step; ++i)
      md += "- **" + events[i].kind + "** `" + events[i].detail_json + "`\n";
    w.text(start + first.wall_s, first.step, "events", md);
  }
}

}  // namespace

bool available() {
  return true;
}

double epochSeconds(const std::string& iso) {
  int y, mo, d, h, mi, s, n = 0;
  if (std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6) return NAN;
  std::tm tm{};
  tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d, tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = s;
  double seconds = double(timegm(&tm));
  const char* rest = iso.c_str() + n;
  if (*rest == '.') seconds += std::strtod(rest, nullptr);  // ".250Z" -> 0.25
  return seconds;
}

std::string exportRun(const RunStore& store, int64_t runId, const std::string& dir) {
  const auto run = store.run(runId);
  if (!run)
    throw ExportError("no run with id " + std::to_string(runId) + " in " + store.path() +
                      "; list runs with: pipesqueeze-cli runs list");
  const double created = epochSeconds(run->created), start = std::isnan(created) ? 0.0 : created;
  const fs::path folder = fs::path(dir) / folderName(*run);
  std::error_code ec;
  fs::create_directories(dir, ec);  // the folder the user chose may be anything, a link included
  if (!ec) fs::create_directory(folder, ec);
  if (ec)
    throw ExportError("cannot create " + folder.string() + " (" + ec.message() + "); choose a folder you can write to");
  // The run's own folder is ours: something planted there (a link to another folder, a file) is never written
  // through or cleaned.
  const fs::file_status own = fs::symlink_status(folder, ec);
  if (ec || fs::is_symlink(own) || !fs::is_directory(own))
    throw ExportError("cannot export run " + std::to_string(runId) + " to " + folder.string() + ": it is " +
                      (fs::is_symlink(own) ? "a symbolic link" : "not a folder") +
                      "; remove it or choose another folder");
  char name[96];
  std::snprintf(name, sizeof name, "events.out.tfevents.%lld.pipesqueeze.%lld", (long long)start, (long long)runId);
  const std::string path = (folder / name).string();

  AtomicFile file(path);
  EventWriter w(file.stream());
  Event version;
  version.set_wall_time(start);
  version.set_file_version("brain.Event:2");
  w.write(version);
  const nlohmann::json config = parseJsonOrDiscarded(run->config_json);  // stored bytes: bounded
  w.text(start, 0, "config",
         "```json\n" + (config.is_discarded() ? run->config_json : config.dump(2)) + "\n```\n\nstatus: " + run->status +
             (run->status_reason.empty() ? "" : " (" + run->status_reason + ")") +
             (run->tags.empty() ? "" : "\n\ntags: " + run->tags) + (run->notes.empty() ? "" : "\n\n" + run->notes));
  writeScalars(w, store.metrics(runId), start);
  for (const auto& h : store.histograms(runId)) {
    Event e;
    e.set_wall_time(start);
    e.set_step(h.step);
    SummaryValue* v = e.mutable_summary()->add_value();
    v->set_tag(h.name);
    writeHistogram(v, h);
    w.write(e);
  }
  writeEvents(w, store.events(runId), start);
  try {
    file.commit();
  } catch (const std::exception& e) {
    throw ExportError(e.what());
  }
  // One file per run folder, or TensorBoard reads both: an earlier export of this run goes once the new one is whole.
  // Only files this exporter names for this run are removed; anything else there (another writer's events, a link)
  // stays.
  const std::string ours = ".pipesqueeze." + std::to_string(runId);
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string file = entry.path().filename().string();
    const bool mine = file.rfind("events.out.tfevents.", 0) == 0 && file.size() > ours.size() &&
                      file.compare(file.size() - ours.size(), ours.size(), ours) == 0;
    if (mine && entry.path() != fs::path(path) && fs::is_regular_file(entry.symlink_status(ec)))
      fs::remove(entry.path(), ec);
  }
  return path;
}

}  // namespace ps::tensorboard
