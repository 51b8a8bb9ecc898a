#include "engine/runs/trace/StepTimelines.h"

#include "engine/runs/store/RunStoreError.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace ps {
namespace {

using nlohmann::json;

void checkScale(double v, const char* what) {
  if (!std::isfinite(v) || v <= 0)
    throw TraceError(std::string("the ") + what + " scale must be a positive number (1 keeps the recorded time), not " +
                     nlohmann::json(v).dump());
}

std::vector<TraceRow> tracesOf(const RunStore& store, int64_t runId) {
  if (!store.run(runId)) throw StoreError("no run " + std::to_string(runId) + " in " + store.path());
  auto rows = store.traces(runId);
  if (rows.empty())
    throw TraceError("run " + std::to_string(runId) +
                     " has no step traces: it was saved by a PipeSqueeze that did not keep them, or stopped before "
                     "its first step");
  return rows;
}

StepTrace decodeStep(int64_t runId, const TraceRow& row) {
  try {
    return decodeTrace(row.trace);
  } catch (const TraceError& e) {
    throw TraceError("run " + std::to_string(runId) + ", step " + std::to_string(row.step) + ": " + e.what());
  }
}

bool asked(const RetimeNetwork& n, const CodecScale& c) {
  return !n.empty() || c.encode != 1 || c.decode != 1;
}

std::string laneName(const TimelineLane& l, int replicas) {
  return "stage " + std::to_string(l.stage) + (replicas > 1 ? " replica " + std::to_string(l.replica) : "");
}

std::string linkName(const TimelineMessage& m, int replicas) {
  return "link " + std::to_string(m.boundary) + (m.forward ? " fwd" : " bwd") +
         (replicas > 1 ? " replica " + std::to_string(m.replica) : "");
}

json barsJson(const std::vector<TimelineBar>& bars) {
  json list = json::array();
  for (const auto& b : bars) {
    json bar{{"kind", barKindName(b.kind)}, {"start", b.start}, {"end", b.end}};
    if (b.kind == TimelineBar::Idle) bar["cause"] = barCauseName(b.cause);
    if (b.microbatch >= 0) bar["microbatch"] = b.microbatch;
    if (b.message >= 0) bar["message"] = b.message;
    list.push_back(bar);
  }
  return list;
}

}  // namespace

StepTimelines stepTimelines(const RunStore& store, int64_t runId, std::optional<int64_t> step,
                            const RetimeNetwork& network, const CodecScale& codec, std::optional<int64_t> codecFrom) {
  network.check();
  checkScale(codec.encode, "encode");
  checkScale(codec.decode, "decode");
  const auto rows = tracesOf(store, runId);
  const TraceRow* row = &rows.back();
  if (step) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const TraceRow& r) { return r.step == *step; });
    if (it == rows.end())
      throw TraceError("run " + std::to_string(runId) + " saved no trace for step " + std::to_string(*step) +
                       "; it saved steps " + std::to_string(rows.front().step) + " to " +
                       std::to_string(rows.back().step));
    row = &*it;
  }
  const StepTrace trace = decodeStep(runId, *row);
  StepTimelines out;
  out.run_id = runId, out.step = row->step, out.steps = int64_t(rows.size());
  out.network = network, out.codec = codec;
  StepTrace whatIf = trace;
  if (codecFrom) {  // the other run's codec, at the same step where it saved one
    const auto others = tracesOf(store, *codecFrom);
    const TraceRow& other = codecStepFor(others, row->step);
    whatIf = withCodecOf(trace, decodeStep(*codecFrom, other));
    out.codec_run = *codecFrom, out.codec_step = other.step;
  }
  try {
    out.recorded = timelineOf(trace);
    if (asked(network, codec) || codecFrom) out.what_if = timelineOf(whatIf, network.applyTo(trace.model), codec);
  } catch (const TraceError& e) {
    throw TraceError("run " + std::to_string(runId) + ", step " + std::to_string(row->step) + ": " + e.what());
  }
  return out;
}

json timelineJson(const Timeline& t, bool bars) {
  const StepDecomposition d = decompose(t);
  json critical = json::array(), links = json::array(), lanes = json::array(), messages = json::array();
  for (const auto& s : d.critical)
    critical.push_back({{"what", s.what}, {"seconds", s.seconds}, {"share", t.step_s > 0 ? s.seconds / t.step_s : 0}});
  for (const auto& c : d.links)
    links.push_back({{"boundary", c.boundary},
                     {"direction", c.forward ? "fwd" : "bwd"},
                     {"messages", c.messages},
                     {"bytes", c.bytes},
                     {"float32_bytes", c.dense},
                     {"codec_seconds", c.codec_s},
                     {"wire_seconds", c.wire_s},
                     {"saved_seconds", c.saved_s},
                     {"codec_costs_more", c.costs_more()}});
  for (const auto& l : t.lanes) {
    std::map<std::string, double> by;
    for (const auto& b : l.bars)
      by[b.kind == TimelineBar::Idle ? std::string("idle/") + barCauseName(b.cause) : barKindName(b.kind)] +=
          b.end - b.start;
    json lane{{"stage", l.stage}, {"replica", l.replica}, {"busy_until", l.busy_until}, {"seconds", by}};
    if (bars && !l.wall.empty()) lane["wall_bars"] = barsJson(l.wall);  // where each event really ran
    if (bars) lane["bars"] = barsJson(l.bars);
    lanes.push_back(lane);
  }
  if (bars)
    for (const auto& m : t.messages)
      messages.push_back({{"boundary", m.boundary}, {"direction", m.forward ? "fwd" : "bwd"}, {"replica", m.replica},
                          {"microbatch", m.microbatch}, {"from_lane", m.from}, {"to_lane", m.to},
                          {"ready", m.ready}, {"leave", m.leave}, {"wire_end", m.wire_end}, {"arrival", m.arrival},
                          {"encode_seconds", m.encode_s}, {"decode_seconds", m.decode_s}, {"bytes", m.bytes},
                          {"float32_bytes", m.dense}});
  json j{{"network",
          {{"bandwidth_mbps", t.model.bandwidth_mbps},
           {"latency_ms", t.model.latency_ms},
           {"framing", t.model.tcp ? "tcp" : "none"},
           {"egress", t.model.shared_egress ? "stage" : "link"}}},
         {"stages", t.stages},
         {"replicas", t.replicas},
         {"microbatches", t.microbatches},
         {"step_seconds", t.step_s},
         {"wall_seconds", t.wall_s},
         {"pipeline_seconds", d.pipeline_s},
         {"bubble", d.bubble},
         {"ideal_bubble", d.ideal_bubble},
         {"stages_bubble", d.stages_bubble < 0 ? json(nullptr) : json(d.stages_bubble)},
         {"critical_path", critical},
         {"critical_summary", d.critical_summary},
         {"critical_links_share", d.critical_links_share},
         {"links", links},
         {"lanes", lanes}};
  if (bars) j["messages"] = messages;
  return j;
}

const TraceRow& codecStepFor(const std::vector<TraceRow>& other, int64_t step) {
  if (other.empty()) throw TraceError("the run whose codec is asked for saved no step traces");
  auto it = std::find_if(other.begin(), other.end(), [&](const TraceRow& r) { return r.step == step; });
  return it == other.end() ? other.back() : *it;
}

size_t writeChromeTrace(const RunStore& store, int64_t runId, const TraceExport& o, std::ostream& out) {
  return writeChromeTrace(runId, tracesOf(store, runId), o, out);
}

size_t writeChromeTrace(int64_t runId, const std::vector<TraceRow>& rows, const TraceExport& o, std::ostream& out) {
  o.network.check();
  checkScale(o.codec.encode, "encode");
  checkScale(o.codec.decode, "decode");
  if (rows.empty()) throw TraceError("run " + std::to_string(runId) + " has no step traces to export");
  // Where each step starts: the steps before it end to end, on the emulated clock (under the network asked for) or,
  // with `wall`, as long as each took its slowest stage on this machine (a step without wall-clock times, which
  // telemetry.timeline_every did not sample, as long as it took on the emulated clock).
  const RetimedRun times = retimeTraces(runId, rows, o.wall ? RetimeNetwork{} : o.network);
  std::vector<double> wallEnds;
  std::vector<size_t> candidates;  // the steps that can be written
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!o.wall) {
      candidates.push_back(i);
      continue;
    }
    const StepTrace trace = decodeStep(runId, rows[i]);
    double length = times.cumulative[i].recorded_emulated_s - (i ? times.cumulative[i - 1].recorded_emulated_s : 0);
    if (hasWallTimes(trace)) {
      length = 0;
      for (const auto& lane : trace.lanes)
        for (const auto& e : lane.events) length = std::max(length, e.wall + e.seconds);
      candidates.push_back(i);
    }
    wallEnds.push_back((wallEnds.empty() ? 0 : wallEnds.back()) + length);
  }
  const auto noWallTimes = [&](const std::string& where) {
    return TraceError("run " + std::to_string(runId) + " kept no wall-clock times " + where +
                      " (telemetry.timeline_every sets the steps that keep them; runs saved before they were kept "
                      "have none); export it on the emulated clock");
  };
  if (candidates.empty()) throw noWallTimes("for any step");
  std::vector<size_t> chosen;
  if (o.first || o.last) {
    const int64_t a = o.first.value_or(rows.front().step), b = o.last.value_or(rows.back().step);
    if (a > b) throw TraceError("the steps " + std::to_string(a) + ":" + std::to_string(b) + " are not a range");
    bool saved = false;
    for (size_t i = 0; i < rows.size(); ++i) saved = saved || (rows[i].step >= a && rows[i].step <= b);
    if (!saved)
      throw TraceError("run " + std::to_string(runId) + " saved no step in " + std::to_string(a) + ":" +
                       std::to_string(b) + "; it saved steps " + std::to_string(rows.front().step) + " to " +
                       std::to_string(rows.back().step));
    for (size_t i : candidates)
      if (rows[i].step >= a && rows[i].step <= b) chosen.push_back(i);
    if (chosen.empty()) throw noWallTimes("for steps " + std::to_string(a) + ":" + std::to_string(b));
  } else {
    const size_t n = std::min(std::max<size_t>(o.sampled, 1), candidates.size());
    for (size_t k = 0; k < n; ++k)
      chosen.push_back(candidates[n == 1 ? candidates.size() - 1 : k * (candidates.size() - 1) / (n - 1)]);
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  }

  // Written event by event: a long range stays a stream, not one document in memory.
  bool firstEvent = true;
  auto emit = [&](const json& e) {
    out << (firstEvent ? "\n" : ",\n") << e.dump();
    firstEvent = false;
  };
  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"run\":" << runId << ",\"clock\":\""
      << (o.wall ? "wall" : "emulated") << "\"},\"traceEvents\":[";
  constexpr int kNetwork = 1, kCompute = 1, kCodec = 2, kWaits = 3;
  std::map<std::string, int> linkThreads;                // a link's thread (its name) -> its thread id
  std::map<std::string, std::vector<double>> linkLanes;  // a link -> when each of its threads is free again, µs
  int64_t flow = 0;
  bool named = false;
  for (size_t i : chosen) {
    const StepTrace trace = decodeStep(runId, rows[i]);
    const Timeline t = timelineOf(trace, o.network.applyTo(trace.model), o.codec, /*stagesBubble=*/false);
    const double length = o.wall ? t.wall_s : t.step_s;
    const double at = ((o.wall ? wallEnds[i] : times.cumulative[i].emulated_s) - length) * 1e6;  // its start, in µs
    // On a grid of 1/1024 µs, which doubles hold exactly: a slice's start plus its duration is then exactly where the
    // next one starts, and a viewer does not nest one slice under its neighbour over a rounding error.
    const auto us = [&](double s) { return std::round((at + s * 1e6) * 1024) / 1024; };
    if (!named) {  // names and order of the processes and threads, once
      emit({{"ph", "M"}, {"name", "process_name"}, {"pid", kNetwork}, {"tid", 0}, {"args", {{"name", "network"}}}});
      emit({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", kNetwork}, {"tid", 0}, {"args", {{"sort_index", 1 << 20}}}});
      for (size_t l = 0; l < t.lanes.size(); ++l) {
        const int pid = int(l) + 2;
        emit({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0},
              {"args", {{"name", laneName(t.lanes[l], t.replicas)}}}});
        emit({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", pid}}}});
        for (const auto& [tid, name] : {std::pair{kCompute, "compute"}, {kCodec, "codec"}, {kWaits, "waits"}})
          emit({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
      }
      named = true;
    }
    emit({{"ph", "i"},
          {"name", "step " + std::to_string(rows[i].step)},
          {"s", "g"},
          {"pid", kNetwork},
          {"tid", 0},
          {"ts", us(0)},
          {"args", {{"step_ms", length * 1e3}}}});
    for (size_t l = 0; l < t.lanes.size(); ++l) {
      for (const auto& b : o.wall ? t.lanes[l].wall : t.lanes[l].bars) {
        const bool codec = b.kind == TimelineBar::Encode || b.kind == TimelineBar::Decode;
        const int tid = b.kind == TimelineBar::Idle ? kWaits : codec ? kCodec : kCompute;
        std::string name = b.kind == TimelineBar::Idle ? std::string("wait: ") + barCauseName(b.cause)
                                                       : std::string(barKindName(b.kind));
        if (b.microbatch >= 0) name += " " + std::to_string(b.microbatch);
        json args{{"step", rows[i].step}};
        if (b.message >= 0) args["bytes"] = t.messages[size_t(b.message)].bytes;
        // A message's encode, wire and decode share a category with its flow's events: the DevTools performance
        // panel binds a flow's ends only to slices of the flow's own category.
        emit({{"ph", "X"},
              {"name", name},
              {"cat", b.message >= 0 ? "message" : barKindName(b.kind)},
              {"pid", int(l) + 2},
              {"tid", tid},
              {"ts", us(b.start)},
              {"dur", us(b.end) - us(b.start)},
              {"args", args}});
      }
    }
    // Each message's encode start, its time in flight (from leaving to arriving) and its decode start: the flow's
    // ends. On the wall clock it is in flight from the end of its encode to the start of its decode.
    struct Flight {
      double encode = 0, leave = 0, arrival = 0, decode = 0;
    };
    std::vector<Flight> flights(t.messages.size());
    for (size_t k = 0; k < t.messages.size(); ++k) {
      const auto& m = t.messages[k];
      flights[k] = {m.ready, m.leave, m.arrival, m.arrival};
    }
    for (const auto& lane : t.lanes)
      for (const auto& b : o.wall ? lane.wall : lane.bars) {
        if (b.message < 0) continue;
        Flight& f = flights[size_t(b.message)];
        if (b.kind == TimelineBar::Encode) f.encode = b.start, f.leave = o.wall ? b.end : f.leave;
        if (b.kind == TimelineBar::Decode) f.decode = b.start, f.arrival = o.wall ? b.start : f.arrival;
      }
    // With latency a message leaves before the one ahead of it on its link arrives. Viewers nest the slices of a
    // thread and misdraw or drop ones that partly overlap, so such a message goes on another thread of its link.
    // (Not before it left: traces saved before the lanes shared one clock can say so.)
    const auto arrivalOf = [](const Flight& f) { return std::max(f.arrival, f.leave); };
    std::vector<size_t> order(t.messages.size()), threadOf(t.messages.size());
    std::vector<std::string> links(t.messages.size());
    for (size_t k = 0; k < t.messages.size(); ++k) links[k] = linkName(t.messages[k], t.replicas);
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return flights[a].leave < flights[b].leave; });
    for (size_t k : order) {
      auto& ends = linkLanes[links[k]];
      const double leave = us(flights[k].leave);
      size_t lane = 0;
      while (lane < ends.size() && ends[lane] > leave) ++lane;
      if (lane == ends.size()) ends.push_back(0);
      ends[lane] = us(arrivalOf(flights[k]));
      threadOf[k] = lane;
    }
    // Per link, the bytes that have left and not yet arrived: a running sum, not each message's size in turn.
    std::map<std::string, std::vector<std::pair<double, double>>> inFlight;  // link -> (µs, change in bytes)
    for (const auto& m : t.messages) {
      const size_t k = size_t(&m - t.messages.data());
      const Flight& f = flights[k];
      const std::string& link = links[k];
      const std::string thread = threadOf[k] ? link + " (" + std::to_string(threadOf[k] + 1) + ")" : link;
      auto [it, fresh] = linkThreads.emplace(thread, int(linkThreads.size()) + 1);
      if (fresh)
        emit({{"ph", "M"},
              {"name", "thread_name"},
              {"pid", kNetwork},
              {"tid", it->second},
              {"args", {{"name", thread}}}});
      const std::string name = (m.forward ? "activation " : "gradient ") + std::to_string(m.microbatch);
      const double arrival = arrivalOf(f);
      json args{{"bytes", m.bytes}, {"float32_bytes", m.dense}};
      if (!o.wall) args["queued_ms"] = (m.leave - m.ready) * 1e3;
      emit({{"ph", "X"},
            {"name", name},
            {"cat", "message"},
            {"pid", kNetwork},
            {"tid", it->second},
            {"ts", us(f.leave)},
            {"dur", us(arrival) - us(f.leave)},
            {"args", args}});
      inFlight[link].push_back({us(f.leave), double(m.bytes)});
      inFlight[link].push_back({us(arrival), -double(m.bytes)});
      // Sender's encode, then the wire, then the receiver's decode: each at the start of its slice.
      const int64_t id = ++flow;
      emit({{"ph", "s"},
            {"name", name},
            {"cat", "message"},
            {"id", id},
            {"pid", int(m.from) + 2},
            {"tid", kCodec},
            {"ts", us(f.encode)}});
      emit({{"ph", "t"},
            {"name", name},
            {"cat", "message"},
            {"id", id},
            {"pid", kNetwork},
            {"tid", it->second},
            {"ts", us(f.leave)}});
      emit({{"ph", "f"},
            {"bp", "e"},
            {"name", name},
            {"cat", "message"},
            {"id", id},
            {"pid", int(m.to) + 2},
            {"tid", kCodec},
            {"ts", us(std::max(f.decode, f.leave))}});
    }
    for (auto& [link, changes] : inFlight) {
      std::sort(changes.begin(), changes.end());  // at one instant, what arrives before what leaves
      double bytes = 0;
      for (size_t k = 0; k < changes.size(); ++k) {
        bytes += changes[k].second;
        if (k + 1 < changes.size() && changes[k + 1].first == changes[k].first) continue;  // one value an instant
        emit({{"ph", "C"},
              {"name", "bytes in flight, " + link},
              {"pid", kNetwork},
              {"tid", 0},
              {"ts", changes[k].first},
              {"args", {{"bytes", std::llround(std::max(0.0, bytes))}}}});
      }
    }
  }
  out << "\n]}\n";
  return chosen.size();
}

}  // namespace ps
