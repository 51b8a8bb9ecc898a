#include "app/cli/TimelineCommand.h"

#include "engine/core/AtomicFile.h"
#include "engine/runs/trace/StepTimelines.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <stdexcept>

namespace ps::cli {
namespace {

using nlohmann::json;

RetimeNetwork networkOf(const RunsOptions& o) {
  RetimeNetwork n;
  n.bandwidth_mbps = o.bandwidth_mbps;
  n.latency_ms = o.latency_ms;
  if (!o.framing.empty()) n.tcp = o.framing == "tcp";
  if (!o.egress.empty()) n.shared_egress = o.egress == "stage";
  return n;
}

std::string ms(double s) {
  char b[32];
  std::snprintf(b, sizeof b, s < 0.01 ? "%.3f ms" : "%.2f ms", s * 1e3);
  return b;
}

std::string percent(double f) {
  char b[16];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * f);
  return b;
}

std::string networkText(const LinkModel& m) {
  char b[96];
  std::snprintf(b, sizeof b, "%g Mbit/s, %g ms latency", m.bandwidth_mbps, m.latency_ms);
  return std::string(b) + (m.tcp ? ", TCP framing" : "") + (m.shared_egress ? ", one interface per stage" : "");
}

void printDecomposition(const char* title, const Timeline& t) {
  const StepDecomposition d = decompose(t);
  std::cout << title << " (" << networkText(t.model) << "): step " << ms(t.step_s) << "\n";
  std::cout << "  bubble " << percent(d.bubble) << " of " << t.lanes.size() << " lanes x " << ms(d.pipeline_s)
            << " (ideal for " << t.stages << " stages, " << t.microbatches
            << " micro-batches: " << percent(d.ideal_bubble)
            << (d.stages_bubble >= 0 ? "; for these stages' mean passes on free links: " + percent(d.stages_bubble)
                                     : std::string())
            << ")\n";
  std::cout << "  critical path (links " << percent(d.critical_links_share) << ", stages "
            << percent(d.critical.empty() ? 0 : 1 - d.critical_links_share)
            << "): " << (d.critical_summary.empty() ? "-" : d.critical_summary) << "\n";
  for (const auto& l : t.lanes) {
    double kinds[8] = {};
    for (const auto& b : l.bars) kinds[b.kind] += b.end - b.start;
    std::cout << "  stage " << l.stage << (t.replicas > 1 ? " replica " + std::to_string(l.replica) : "")
              << ": forward " << ms(kinds[TimelineBar::Forward]) << ", backward " << ms(kinds[TimelineBar::Backward])
              << ", codec " << ms(kinds[TimelineBar::Encode] + kinds[TimelineBar::Decode]) << ", idle "
              << ms(kinds[TimelineBar::Idle]) << "\n";
  }
  for (const auto& c : d.links) {
    std::cout << "  link " << c.boundary << (c.forward ? " fwd" : " bwd") << ": " << c.messages << " messages, "
              << c.bytes << " bytes; codec " << ms(c.codec_s) << " against " << ms(c.saved_s) << " of wire saved";
    if (c.dense == 0) std::cout << " (float32 sizes not recorded)";
    else if (c.costs_more()) std::cout << " - the codec costs more than it saves";
    std::cout << "\n";
  }
}

}  // namespace

void printTimeline(const RunStore& store, const RunsOptions& o) {
  const CodecScale codec{o.encode_scale.value_or(1), o.decode_scale.value_or(1)};
  const StepTimelines s = stepTimelines(store, o.id, o.step, networkOf(o), codec, o.codec_from);
  if (o.json) {
    json j{{"run_id", s.run_id}, {"step", s.step}, {"saved_steps", s.steps},
           {"recorded", timelineJson(s.recorded, true)},
           {"what_if", s.what_if ? timelineJson(*s.what_if, true) : json(nullptr)}};
    if (s.what_if) j["what_if"]["encode_scale"] = codec.encode, j["what_if"]["decode_scale"] = codec.decode;
    if (s.codec_run) j["what_if"]["codec_from"] = {{"run_id", *s.codec_run}, {"step", *s.codec_step}};
    std::cout << j.dump() << "\n";
    return;
  }
  std::cout << "run " << s.run_id << ", step " << s.step << " (" << s.steps << " saved)\n";
  printDecomposition("recorded", s.recorded);
  if (s.what_if) {
    std::string title = "what if";
    if (codec.encode != 1 || codec.decode != 1) {
      char b[80];
      std::snprintf(b, sizeof b, " encode x%g, decode x%g", codec.encode, codec.decode);
      title += b;
    }
    if (s.codec_run)
      title += " with run " + std::to_string(*s.codec_run) + "'s codec (step " + std::to_string(*s.codec_step) + ")";
    printDecomposition(title.c_str(), *s.what_if);
    const double r = s.recorded.step_s, w = s.what_if->step_s;
    std::cout << "  the step " << (w <= r ? "shortens" : "lengthens") << " by " << ms(w <= r ? r - w : w - r) << " ("
              << percent(r > 0 ? (w - r) / r : 0) << ")\n";
  }
}

void exportTrace(const RunStore& store, const RunsOptions& o) {
  if (o.csv || !o.tensorboard.empty()) throw std::runtime_error("runs export --trace writes one file; drop --csv and --tensorboard");
  TraceExport options;
  options.network = networkOf(o);
  options.codec = CodecScale{o.encode_scale.value_or(1), o.decode_scale.value_or(1)};
  options.wall = o.clock == "wall";
  if (options.wall && (!options.network.empty() || o.encode_scale || o.decode_scale))
    throw std::runtime_error(
        "--clock wall shows what happened; a what-if network or codec scale is for the emulated "
        "clock");
  if (!o.steps.empty()) {
    const auto colon = o.steps.find(':');
    auto number = [&](const std::string& text) -> std::optional<int64_t> {
      if (text.empty()) return std::nullopt;
      size_t used = 0;
      int64_t v = -1;
      try {
        v = std::stoll(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != text.size() || v < 0)
        throw std::runtime_error("--steps takes A:B (steps A to B), A: or :B, or one step; '" + o.steps +
                                 "' is not that");
      return v;
    };
    options.first = number(o.steps.substr(0, colon));
    options.last = colon == std::string::npos ? options.first : number(o.steps.substr(colon + 1));
    if (!options.first && !options.last) throw std::runtime_error("--steps needs at least one step number");
  }
  AtomicFile out(o.trace);  // never through a planted link; an old file stays until the new one is whole
  const size_t steps = writeChromeTrace(store, o.id, options, out.stream());
  out.commit();
  std::cout << "wrote " << steps << " steps of run " << o.id << " to " << o.trace
            << " (open it in ui.perfetto.dev or chrome://tracing)\n";
}

}  // namespace ps::cli
