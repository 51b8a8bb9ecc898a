#include "app/cli/ProgressPrinter.h"

#include <cmath>
#include <string>

namespace ps::cli {

namespace {
std::string bytes(double b) {
  const char* unit[] = {"B", "KB", "MB", "GB", "TB"};
  int i = 0;
  while (b >= 1000 && i < 4) b /= 1000, ++i;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", b, unit[i]);
  return buf;
}
}  // namespace

ProgressPrinter::ProgressPrinter(std::FILE* out, bool terminal) : out_(out), terminal_(terminal) {}

void ProgressPrinter::consume(const Telemetry& item) {
  if (auto s = std::get_if<StepRecord>(&item)) {
    lossEma_ = started_ ? 0.95 * lossEma_ + 0.05 * s->loss : s->loss;
    started_ = true;
    terminal_ ? bar(*s) : line(*s);
  } else if (auto e = std::get_if<EvalRecord>(&item)) {
    if (terminal_) std::fputs("\r\033[K", out_);
    std::fprintf(out_, "eval  step %lld%s: loss %.4f", (long long)e->step, e->compressed ? "" : " (uncompressed)", e->loss);
    if (e->accuracy >= 0) std::fprintf(out_, "  accuracy %.2f%%", 100 * e->accuracy);
    if (e->perplexity >= 0) std::fprintf(out_, "  perplexity %.3f", e->perplexity);
    std::fputc('\n', out_);
  } else if (auto ev = std::get_if<EventRecord>(&item)) {
    const EventKind kind = ev->type();
    if (kind == EventKind::Start) {
      total_ = ev->detail.value("total_steps", int64_t(0));
      std::fprintf(out_, "%s; %lld steps\n", ev->detail.value("data", std::string()).c_str(), (long long)total_);
      const auto& aqsgd = ev->detail.value("aqsgd", nlohmann::json());
      if (aqsgd.is_object() && aqsgd.contains("text"))
        std::fprintf(out_, "%s\n", aqsgd["text"].get<std::string>().c_str());
      const auto& stages = ev->detail.value("stages", nlohmann::json());
      for (size_t s = 0; stages.is_array() && s < stages.size(); ++s)
        if (stages[s].is_object() && stages[s].value("cuda_graphs", nlohmann::json()).is_string())
          std::fprintf(out_, "stage %zu, CUDA graphs: %s\n", s, stages[s]["cuda_graphs"].get<std::string>().c_str());
    }
    if (const auto& graphs = ev->detail.value("cuda_graphs", nlohmann::json()); graphs.is_array()) {
      for (const auto& g : graphs)  // the end of the run: what each stage replayed
        if (g.is_object())
          std::fprintf(out_, "stage %lld, CUDA graphs: %lld passes replayed, %lld recorded, %lld eager%s%s\n",
                       (long long)g.value("stage", int64_t(0)), (long long)g.value("replayed", int64_t(0)),
                       (long long)g.value("recorded", int64_t(0)), (long long)g.value("eager", int64_t(0)),
                       g.value("eager_because", std::string()).empty() ? "" : ": ",
                       g.value("eager_because", std::string()).c_str());
    }
    if (marksCharts(kind) || kind == EventKind::Checkpoint) {  // what the charts mark, and where the model went
      if (terminal_) std::fputs("\r\033[K", out_);
      std::fprintf(out_, "%s at step %lld: %s\n", ev->kind.c_str(), (long long)ev->step, ev->detail.dump().c_str());
    }
  }
  std::fflush(out_);
}

void ProgressPrinter::bar(const StepRecord& s) {
  const auto now = std::chrono::steady_clock::now();
  if (s.step != total_ && now - lastDraw_ < std::chrono::milliseconds(100)) return;
  lastDraw_ = now;
  const int width = 30;
  const double frac = total_ > 0 ? double(s.step) / double(total_) : 0.0;
  const int filled = int(std::lround(frac * width));
  std::string b(size_t(filled), '#');
  b.resize(size_t(width), '.');
  const double eta = frac > 0 ? s.wall_s * (1 - frac) / frac : 0;
  std::fprintf(out_, "\r\033[K[%s] %lld/%lld  loss %.4f  %.0f ms/step  eta %.0fs", b.c_str(), (long long)s.step,
               (long long)total_, lossEma_, 1000 * s.step_s, eta);
}

void ProgressPrinter::line(const StepRecord& s) {
  // Piped output: one line every 5% (and the last step), so logs stay readable.
  const int64_t every = std::max<int64_t>(1, total_ / 20);
  if (s.step % every != 0 && s.step != total_ && s.step != 1) return;
  uint64_t raw = 0, wire = 0;
  for (const auto& l : s.links) raw += l.raw_bytes, wire += l.wire_bytes;
  std::fprintf(out_, "step %lld/%lld epoch %lld loss %.4f lr %.2e step %.1f ms emulated %.1f ms bytes %s -> %s\n",
               (long long)s.step, (long long)total_, (long long)s.epoch, s.loss, s.lr, 1000 * s.step_s,
               1000 * s.emulated_step_s, bytes(double(raw)).c_str(), bytes(double(wire)).c_str());
}

}  // namespace ps::cli
