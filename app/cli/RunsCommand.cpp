#include "app/cli/RunsCommand.h"
#include "app/cli/BreakevenCommand.h"
#include "app/cli/TimelineCommand.h"
#include "engine/core/AtomicFile.h"
#include "engine/core/RunSummary.h"
#include "engine/runs/config/BoundedJson.h"
#include "engine/runs/store/RunCsv.h"
#include "engine/runs/store/RunFilter.h"
#include "engine/runs/store/RunStore.h"
#include "engine/runs/trace/Retime.h"
#include "engine/tensorboard/TensorBoardExport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace ps::cli {
namespace {

using nlohmann::json;

// Reading needs no write access: a store this process cannot write is read as it is; a writable one is opened for
// writing, which also upgrades an older one.
StoreAccess accessFor(const std::string& path, const std::string& action) {
  const bool reads =
      action == "list" || action == "show" || action == "export" || action == "retime" || action == "timeline";
  return reads ? RunStore::accessFor(path) : StoreAccess::ReadWrite;
}

RunInfo require(const RunStore& store, int64_t id) {
  auto run = store.run(id);
  if (!run)
    throw std::runtime_error("no run with id " + std::to_string(id) + " in " + store.path() +
                             "; list runs with: pipesqueeze-cli runs list");
  return *run;
}

// Stored JSON is read with the same bounds as a file; what does not parse is shown as null.
// Text from the store as a terminal may show it: a name, tag or note is anybody's bytes, and an escape sequence in
// one could clear the screen, retitle the terminal or forge table rows. C0 and C1 control characters, DEL and bytes
// that are not UTF-8 are shown as \xNN; everything else, accents included, as it is.
std::string printable(const std::string& text) {
  std::string out;
  const auto escape = [&](unsigned char c) {
    static const char* hex = "0123456789abcdef";
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  };
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      escape(c);
      ++i;
      continue;
    }
    if (c < 0x80) {
      out += char(c);
      ++i;
      continue;
    }
    // A whole UTF-8 sequence is kept, unless it encodes a C1 control (U+0080..U+009F) or is malformed.
    const size_t length = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    bool whole = length > 0 && i + length <= text.size();
    for (size_t k = 1; whole && k < length; ++k) whole = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (!whole || (c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0)) {
      escape(c);
      ++i;
      continue;
    }
    out.append(text, i, length);
    i += length;
  }
  return out;
}

// JSON for a terminal: every non-ASCII character as \uXXXX (control characters included), bytes that are not UTF-8
// replaced, so nothing a run's text holds reaches the terminal raw.
std::string terminalJson(const json& j, int indent = -1) {
  return j.dump(indent, ' ', true, json::error_handler_t::replace);
}

json stored(const std::string& text) {
  json j = parseJsonOrDiscarded(text);
  return j.is_discarded() ? json() : j;
}

json summaryOf(const RunInfo& r) {
  json j = r.summary_json.empty() ? json::object() : stored(r.summary_json);
  return j.is_null() ? json::object() : j;
}

void list(const RunStore& store, bool asJson, const std::string& filterText) {
  const RunFilter filter = RunFilter::parse(filterText);  // a mistyped filter fails before the store is read
  auto runs = store.listRuns();
  runs.erase(
      std::remove_if(runs.begin(), runs.end(), [&](const RunInfo& r) { return !filter.matches(RunFacts::of(r)); }),
      runs.end());
  if (asJson) {
    json out = json::array();
    for (const auto& r : runs)
      out.push_back({{"id", r.id}, {"name", r.name}, {"status", r.status}, {"created", r.created},
                     {"tags", r.tags}, {"summary", summaryOf(r)}});
    std::cout << terminalJson(out) << "\n";
    return;
  }
  std::cout << std::left << std::setw(6) << "id" << std::setw(28) << "name" << std::setw(10) << "status"
            << std::setw(22) << "created" << std::setw(8) << "steps" << "eval\n";
  for (const auto& r : runs) {
    const RunSummary s = RunSummary::fromJson(summaryOf(r));
    std::string eval;
    if (s.classifier && s.eval.accuracy)
      eval = "acc " + std::to_string(*s.eval.accuracy * 100).substr(0, 5) + "%";
    else if (!s.classifier && s.eval.perplexity)
      eval = "ppl " + std::to_string(*s.eval.perplexity).substr(0, 6);
    std::cout << std::setw(6) << r.id << std::setw(28) << printable(r.name).substr(0, 27) << std::setw(10)
              << printable(r.status) << std::setw(22) << r.created.substr(0, 19) << std::setw(8) << s.steps.value_or(0)
              << eval << "\n";
  }
}

void show(const RunStore& store, int64_t id) {
  const RunInfo r = require(store, id);
  json out = {{"id", r.id},           {"name", r.name},     {"status", r.status},
              {"reason", r.status_reason}, {"tags", r.tags}, {"notes", r.notes},
              {"created", r.created}, {"finished", r.finished}, {"code_version", r.code_version},
              {"summary", summaryOf(r)}, {"config", stored(r.config_json)}};
  json events = json::array();
  for (const auto& e : store.events(id))
    events.push_back({{"step", e.step}, {"kind", e.kind}, {"detail", stored(e.detail_json)}});
  out["events"] = events;
  json checkpoints = json::array();
  for (const auto& c : store.checkpoints(id)) checkpoints.push_back({{"step", c.step}, {"path", c.path}});
  out["checkpoints"] = checkpoints;
  out["metric_keys"] = store.metricKeys(id);
  std::cout << terminalJson(out, 2) << "\n";
}

std::string joined(const std::vector<std::string>& parts, const std::string& between) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : between) + p;
  return out;
}

// tag adds tags (kept in the order given, each once), untag removes them and refuses one the run does not have, so
// a typo does not pass for a removal. A tag holds no comma: the store keeps tags comma separated.
void retag(RunStore& store, const RunInfo& run, const std::vector<std::string>& given, bool add) {
  if (given.empty())
    throw std::runtime_error(std::string("runs ") + (add ? "tag" : "untag") + " needs at least one tag after the id");
  std::vector<std::string> tags = splitTags(run.tags);
  for (const auto& raw : given) {
    const auto tag = splitTags(raw);  // "a,b" as one argument is two tags
    for (const auto& t : tag) {
      const auto at = std::find(tags.begin(), tags.end(), t);
      if (add && at == tags.end()) tags.push_back(t);
      if (!add && at == tags.end())
        throw std::runtime_error("run " + std::to_string(run.id) + " has no tag '" + t +
                                 "' (its tags: " + (tags.empty() ? std::string("none") : joined(tags, ", ")) + ")");
      if (!add) tags.erase(at);
    }
  }
  store.setTags(run.id, joined(tags, ","));
  const auto now = splitTags(store.run(run.id)->tags);
  std::cout << "run " << run.id << " tags: " << (now.empty() ? std::string("none") : printable(joined(now, ", ")))
            << "\n";
}

// Every run named (the id and the values after it), checked before anything is written; one line per file.
void exportTensorBoard(const RunStore& store, const RunsOptions& o) {
  if (o.csv || !o.output.empty())
    throw std::runtime_error("runs export --tensorboard writes one file per run under its folder; drop --csv and -o");
  const std::vector<int64_t> ids = runIds(o, "runs export --tensorboard");
  for (int64_t id : ids) require(store, id);
  for (int64_t id : ids) std::cout << tensorboard::exportRun(store, id, o.tensorboard) << "\n";
}

std::string seconds(double s) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(s < 10 ? 3 : 1) << s << " s";
  return out.str();
}

// The run's emulated time at another network, from its step traces: a line per epoch and per evaluation, or one
// JSON object.
void retime(const RunStore& store, const RunsOptions& o) {
  const RunInfo run = require(store, o.id);
  RetimeNetwork network;
  network.bandwidth_mbps = o.bandwidth_mbps;
  network.latency_ms = o.latency_ms;
  if (!o.framing.empty()) network.tcp = o.framing == "tcp";
  if (!o.egress.empty()) network.shared_egress = o.egress == "stage";
  const RetimedRun r = retimeRun(store, o.id, network);
  if (o.json) {
    auto orNull = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    json epochs = json::array(), evaluations = json::array();
    for (const auto& [epoch, s] : r.epochs) epochs.push_back({{"epoch", epoch}, {"seconds", s}});
    for (const auto& e : r.evaluations)
      evaluations.push_back({{"step", e.step},
                             {"emulated_seconds", e.emulated_s},
                             {"recorded_emulated_seconds", e.recorded_emulated_s},
                             {"values", e.values}});
    std::cout << json{{"run_id", r.run_id},
                      {"bandwidth_mbps", orNull(o.bandwidth_mbps)},
                      {"latency_ms", orNull(o.latency_ms)},
                      {"framing", o.framing.empty() ? json(nullptr) : json(o.framing)},
                      {"egress", o.egress.empty() ? json(nullptr) : json(o.egress)},
                      {"steps", r.steps},
                      {"emulated_seconds", r.emulated_s},
                      {"recorded_emulated_seconds", r.recorded_emulated_s},
                      {"epochs", epochs},
                      {"evaluations", evaluations}}
                     .dump()
              << "\n";
    return;
  }
  std::string at;
  if (o.bandwidth_mbps) at += " at " + json(*o.bandwidth_mbps).dump() + " Mbit/s";
  if (o.latency_ms) at += std::string(at.empty() ? " at " : ", ") + json(*o.latency_ms).dump() + " ms latency";
  if (!o.framing.empty())
    at += std::string(at.empty() ? " " : ", ") + (o.framing == "tcp" ? "with TCP framing" : "on an ideal link");
  if (!o.egress.empty())
    at += std::string(at.empty() ? " " : ", ") +
          (o.egress == "stage" ? "one interface per stage" : "a wire per link direction");
  if (at.empty()) at = " at its own network";
  std::cout << "run " << r.run_id << " (" << printable(run.name) << ")" << at << ": " << seconds(r.emulated_s)
            << " emulated over " << r.steps << " steps (recorded: " << seconds(r.recorded_emulated_s) << ")\n";
  for (const auto& [epoch, s] : r.epochs) std::cout << "  epoch " << epoch << ": " << seconds(s) << "\n";
  for (const auto& e : r.evaluations) {
    std::cout << "  evaluation after step " << e.step << " at " << seconds(e.emulated_s);
    for (const auto& [key, v] : e.values) std::cout << ", " << key << " " << v;
    std::cout << "\n";
  }
}

}  // namespace

std::vector<int64_t> runIds(const RunsOptions& o, const std::string& command) {
  std::vector<int64_t> ids{o.id};
  for (const auto& v : o.values) {
    size_t used = 0;
    int64_t id = 0;
    try {
      id = std::stoll(v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != v.size() || id <= 0) throw std::runtime_error(command + " takes run ids; '" + v + "' is not one");
    ids.push_back(id);
  }
  return ids;
}

void addRunsCommand(CLI::App& app, RunsOptions& o) {
  auto* cmd = app.add_subcommand("runs", "List, show, export, tag, annotate, re-time recorded runs and show their steps' timelines");
  cmd->add_option("action", o.action, "list | show | export | tag | untag | note | retime | timeline | breakeven")
      ->required()
      ->check(CLI::IsMember({"list", "show", "export", "tag", "untag", "note", "retime", "timeline", "breakeven"}));
  cmd->add_option("id", o.id, "run id (all but list)");
  cmd->add_option(
      "values", o.values,
      "tag, untag: the tags; note: the note (an empty one clears it); export --tensorboard, breakeven: more "
      "run ids");
  cmd->add_option("--store", o.store, "run store file");
  cmd->add_flag("--csv", o.csv, "export as CSV (one row per step)");
  cmd->add_flag("--json", o.json, "list, retime, timeline, breakeven: as JSON");
  cmd->add_option("--filter,-f", o.filter,
                  "list: only the runs this filter holds for, as in the app's runs table: words, field:value, "
                  "field<value (status:finished k<0.05 tag:suite-1 accuracy>=85%); a wrong field lists them all");
  cmd->add_option("--output,-o", o.output, "write the export to this file instead of stdout");
  cmd->add_option("--tensorboard", o.tensorboard,
                  "export: write each run given as a TensorBoard event file under this folder (one folder per run)");
  cmd->add_option("--bandwidth", o.bandwidth_mbps,
                  "retime: the link bandwidth in Mbit/s to re-time the run for (default: what each step ran with)");
  cmd->add_option("--latency", o.latency_ms,
                  "retime: the link latency in ms to re-time the run for (default: what each step ran with)");
  cmd->add_option("--framing", o.framing,
                  "retime: what a payload costs on the wire: tcp (TCP/IPv4 headers per segment) or none (an ideal "
                  "link; default: what each step ran with)")
      ->check(CLI::IsMember({"tcp", "none"}));
  cmd->add_option("--egress", o.egress,
                  "retime: where a stage's messages leave: stage (one interface for its activations and gradients "
                  "alike, as a host with one network card) or link (a wire per link direction; default: what each "
                  "step ran with)")
      ->check(CLI::IsMember({"link", "stage"}));
  cmd->add_option("--bandwidths", o.bandwidths,
                  "breakeven: the bandwidths in Mbit/s to re-time the runs for, comma separated (default: "
                  "1,3,10,30,100,300,1000,3000,10000)");
  cmd->add_option("--target", o.target,
                  "breakeven: the accuracy (a fraction: 0.85) or, for language models, the perplexity to time the "
                  "runs to");
  cmd->add_option("--target-fraction", o.target_fraction,
                  "breakeven: the target as this share of the uncompressed run's final accuracy (perplexity: divided "
                  "by it; default 0.98)");
  cmd->add_option("--step", o.step, "timeline: the saved step to show (default: the last)");
  cmd->add_option("--encode-scale", o.encode_scale,
                  "timeline, export --trace: what if encoding took this times as long (0.5: a codec twice as fast)");
  cmd->add_option("--decode-scale", o.decode_scale, "timeline, export --trace: the same for decoding");
  cmd->add_option("--codec-from", o.codec_from,
                  "timeline: what if each link direction had used the codec of this other run (its measured encode "
                  "and decode times and message sizes at the same step)");
  cmd->add_option("--trace", o.trace,
                  "export: write saved steps' timelines to this Chrome/Perfetto trace file (ui.perfetto.dev, "
                  "chrome://tracing)");
  cmd->add_option("--steps", o.steps, "export --trace: the steps to write, A:B (default: 12 spread over the run)");
  cmd->add_option("--clock", o.clock,
                  "export --trace: emulated (the link model's time, the default) or wall (when each stage really ran "
                  "each event, every rank on one clock)")
      ->check(CLI::IsMember({"emulated", "wall"}));
}

int runRuns(const RunsOptions& o) {
  const std::string path = o.store.empty() ? RunStore::defaultPath() : o.store;
  if (!std::filesystem::exists(path))
    throw std::runtime_error("no run store at " + path + "; train a run first or pass --store FILE");
  RunStore store(path, accessFor(path, o.action));
  const bool takesValues = o.action == "tag" || o.action == "untag" || o.action == "note" || o.action == "breakeven" ||
                           (o.action == "export" && !o.tensorboard.empty());
  if (!takesValues && !o.values.empty())
    throw std::runtime_error("runs " + o.action + " takes " + (o.action == "list" ? "no run id" : "one run id") +
                             "; '" + o.values.front() + "' is left over");
  if (o.action == "list") {
    list(store, o.json, o.filter);
    return 0;
  }
  if (!o.filter.empty()) throw std::runtime_error("--filter is for runs list; runs " + o.action + " takes a run id");
  const bool exportsTrace = o.action == "export" && !o.trace.empty();
  if ((o.bandwidth_mbps || o.latency_ms || !o.framing.empty() || !o.egress.empty()) && o.action != "retime" &&
      o.action != "timeline" && !exportsTrace && !(o.action == "breakeven" && !o.bandwidth_mbps))
    throw std::runtime_error(
        "--bandwidth, --latency, --framing and --egress are for runs retime, timeline and export --trace (and "
        "--latency for breakeven, whose bandwidths are --bandwidths), not runs " +
        o.action);
  if ((o.encode_scale || o.decode_scale) && o.action != "timeline" && !exportsTrace)
    throw std::runtime_error("--encode-scale and --decode-scale are for runs timeline and export --trace");
  if (o.step && o.action != "timeline") throw std::runtime_error("--step is for runs timeline");
  if (o.codec_from && o.action != "timeline") throw std::runtime_error("--codec-from is for runs timeline");
  if ((!o.bandwidths.empty() || o.target || o.target_fraction) && o.action != "breakeven")
    throw std::runtime_error("--bandwidths, --target and --target-fraction are for runs breakeven");
  if (!o.steps.empty() && !exportsTrace) throw std::runtime_error("--steps is for runs export --trace FILE");
  if (!o.clock.empty() && !exportsTrace) throw std::runtime_error("--clock is for runs export --trace FILE");
  if (o.id <= 0) throw std::runtime_error("runs " + o.action + " needs a run id; see: pipesqueeze-cli runs list");
  if (o.action == "show") {
    show(store, o.id);
    return 0;
  }
  if (o.action == "breakeven") {
    printBreakeven(store, o);
    return 0;
  }
  if (o.action == "retime") {
    retime(store, o);
    return 0;
  }
  if (o.action == "timeline") {
    printTimeline(store, o);
    return 0;
  }
  if (o.action == "tag" || o.action == "untag") {
    retag(store, require(store, o.id), o.values, o.action == "tag");
    return 0;
  }
  if (o.action == "note") {
    require(store, o.id);
    store.setNotes(o.id, joined(o.values, " "));
    std::cout << "run " << o.id << " notes: " << printable(store.run(o.id)->notes) << "\n";
    return 0;
  }
  if (exportsTrace) {
    exportTrace(store, o);
    return 0;
  }
  if (!o.tensorboard.empty()) {
    exportTensorBoard(store, o);
    return 0;
  }
  if (!o.csv) throw std::runtime_error("runs export needs a format: add --csv, --tensorboard DIR or --trace FILE");
  require(store, o.id);
  if (o.output.empty()) {
    writeRunCsv(store, o.id, std::cout);
  } else {
    AtomicFile out(o.output);  // never through a planted link; the old file stays until the new one is whole
    writeRunCsv(store, o.id, out.stream());
    out.commit();
  }
  return 0;
}

}  // namespace ps::cli
