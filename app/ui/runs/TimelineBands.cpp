#include "app/ui/runs/TimelineBands.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace ps::ui {

// The bar kinds of engine/core/Timeline.h in their order, then the wire.
const std::vector<std::pair<QString, QColor>>& timelineKinds() {
  static const std::vector<std::pair<QString, QColor>> k = {
      {QStringLiteral("forward"), QColor(31, 119, 180)},    {QStringLiteral("backward"), QColor(255, 127, 14)},
      {QStringLiteral("update"), QColor(140, 86, 75)},      {QStringLiteral("compute"), QColor(127, 127, 127)},
      {QStringLiteral("encode"), QColor(44, 160, 44)},      {QStringLiteral("decode"), QColor(148, 103, 189)},
      {QStringLiteral("exchange"), QColor(227, 119, 194)},  {QStringLiteral("idle"), QColor(224, 224, 224)},
      {QStringLiteral("on the wire"), QColor(23, 190, 207)}};
  return k;
}
constexpr int kWire = 8;

QString formatMs(double s) {
  return QString::number(s * 1e3, 'f', s < 0.01 ? 3 : 2) + QStringLiteral(" ms");
}

QString formatShare(double f) {
  return QString::number(100 * f, 'f', 1) + QLatin1Char('%');
}

namespace {

QString laneName(const TimelineLane& l, int replicas) {
  return QStringLiteral("stage %1").arg(l.stage) + (replicas > 1 ? QStringLiteral(" r%1").arg(l.replica) : QString());
}

QString linkName(int boundary, bool forward, int replica, int replicas) {
  return QStringLiteral("link %1 %2").arg(boundary).arg(forward ? QStringLiteral("fwd") : QStringLiteral("bwd")) +
         (replicas > 1 ? QStringLiteral(" r%1").arg(replica) : QString());
}

// A link direction of one replica: (boundary, 0 forward or 1 backward, replica).
std::tuple<int, int, int> linkKey(const TimelineMessage& m) {
  return {m.boundary, m.forward ? 0 : 1, m.replica};
}

// A row per link direction that carries a message, after the lanes' rows; returns each direction's row.
std::map<std::tuple<int, int, int>, int> addLinkRows(GanttBand& band, const Timeline& t) {
  std::map<std::tuple<int, int, int>, int> rows;
  for (const auto& m : t.messages) rows.emplace(linkKey(m), 0);
  for (auto& [key, row] : rows) {
    row = int(band.rows.size());
    band.rows.push_back({linkName(std::get<0>(key), std::get<1>(key) == 0, std::get<2>(key), t.replicas), {}});
  }
  return rows;
}

}  // namespace

QString describeNetwork(const LinkModel& m) {
  return QStringLiteral("%1 Mbit/s, %2 ms").arg(m.bandwidth_mbps).arg(m.latency_ms) +
         (m.tcp ? QStringLiteral(", TCP") : QString()) +
         (m.shared_egress ? QStringLiteral(", one interface per stage") : QString());
}

GanttBand emulatedBand(const Timeline& t, const QString& title) {
  GanttBand band;
  band.title = title;
  const StepDecomposition d = decompose(t);
  for (const auto& lane : t.lanes) {
    GanttRow row;
    row.name = laneName(lane, t.replicas);
    for (const auto& b : lane.bars) {
      GanttBar bar{b.start, b.end, int(b.kind)};
      QString what = QString::fromLatin1(barKindName(b.kind));
      if (b.kind == TimelineBar::Idle)
        what = QStringLiteral("waiting (%1)").arg(QString::fromLatin1(barCauseName(b.cause)));
      if (b.microbatch >= 0) what += QStringLiteral(", micro-batch %1").arg(b.microbatch);
      bar.tip = row.name + QStringLiteral(": ") + what +
                QStringLiteral("\n%1 to %2 (%3)").arg(formatMs(b.start), formatMs(b.end), formatMs(b.end - b.start));
      if (b.message >= 0) {
        const auto& m = t.messages[size_t(b.message)];
        bar.tip += QStringLiteral("\n%1 bytes").arg(m.bytes) +
                   (m.dense ? QStringLiteral(" (float32: %1)").arg(m.dense) : QString());
      }
      row.bars.push_back(bar);
    }
    band.rows.push_back(row);
  }
  // A row per link direction: each message's time from its first byte on the wire to its arrival.
  const auto linkRow = addLinkRows(band, t);
  std::map<std::pair<int, int>, bool> costly;  // link direction -> its codec costs more than it saves
  for (const auto& c : d.links) costly[{c.boundary, c.forward ? 0 : 1}] = c.costs_more();
  for (const auto& m : t.messages) {
    auto& row = band.rows[size_t(linkRow.at(linkKey(m)))];
    GanttBar bar{m.leave, m.arrival, kWire};
    bar.outlined = costly[{m.boundary, m.forward ? 0 : 1}];
    bar.tip = row.name + QStringLiteral(": %1 %2, %3 bytes\nready %4, on the wire %5 to %6, arrives %7")
                             .arg(m.forward ? QStringLiteral("activation") : QStringLiteral("gradient"))
                             .arg(m.microbatch)
                             .arg(m.bytes)
                             .arg(formatMs(m.ready), formatMs(m.leave), formatMs(m.wire_end), formatMs(m.arrival));
    row.bars.push_back(bar);
    band.arrows.push_back({int(m.from), int(m.to), m.ready, m.arrival});
  }
  return band;
}

// The step where it ran on this machine's wall clock: each lane's measured events (the gaps are its waits), each
// message in flight from the end of its encode to the start of its decode.
GanttBand wallBand(const Timeline& t, const QString& title) {
  GanttBand band;
  band.title = title;
  std::vector<std::pair<double, double>> flight(t.messages.size(), {-1, -1});
  for (const auto& lane : t.lanes) {
    GanttRow row;
    row.name = laneName(lane, t.replicas);
    for (const auto& b : lane.wall) {
      GanttBar bar{b.start, b.end, int(b.kind)};
      bar.tip = row.name + QStringLiteral(": ") + QString::fromLatin1(barKindName(b.kind)) +
                (b.microbatch >= 0 ? QStringLiteral(", micro-batch %1").arg(b.microbatch) : QString()) +
                QStringLiteral("\nran %1 to %2 (%3) on this machine")
                    .arg(formatMs(b.start), formatMs(b.end), formatMs(b.end - b.start));
      row.bars.push_back(bar);
      if (b.message >= 0 && b.kind == TimelineBar::Encode) flight[size_t(b.message)].first = b.end;
      if (b.message >= 0 && b.kind == TimelineBar::Decode) flight[size_t(b.message)].second = b.start;
    }
    band.rows.push_back(row);
  }
  const auto linkRow = addLinkRows(band, t);
  for (size_t k = 0; k < t.messages.size(); ++k) {
    const auto& m = t.messages[k];
    const auto [leave, arrive] = flight[k];
    if (leave < 0 || arrive < 0) continue;
    auto& row = band.rows[size_t(linkRow.at(linkKey(m)))];
    GanttBar bar{leave, std::max(leave, arrive), kWire};
    bar.tip = row.name + QStringLiteral(": %1 %2, %3 bytes\nsent %4, decoded from %5")
                             .arg(m.forward ? QStringLiteral("activation") : QStringLiteral("gradient"))
                             .arg(m.microbatch)
                             .arg(m.bytes)
                             .arg(formatMs(leave), formatMs(arrive));
    row.bars.push_back(bar);
    band.arrows.push_back({int(m.from), int(m.to), leave, std::max(leave, arrive)});
  }
  return band;
}

QString describeTimeline(const char* title, const Timeline& t) {
  const StepDecomposition d = decompose(t);
  QString out = QStringLiteral(
                    "%1 (%2): step %3; bubble %4 (ideal %5 for %6 stages, %7 micro-batches%10); critical "
                    "path (links %8): %9")
                    .arg(QString::fromLatin1(title), describeNetwork(t.model), formatMs(t.step_s),
                         formatShare(d.bubble), formatShare(d.ideal_bubble))
                    .arg(t.stages)
                    .arg(t.microbatches)
                    .arg(formatShare(d.critical_links_share), QString::fromStdString(d.critical_summary))
                    .arg(d.stages_bubble >= 0
                             ? QStringLiteral("; %1 for these stages' mean passes").arg(formatShare(d.stages_bubble))
                             : QString());
  for (const auto& c : d.links) {
    out +=
        QStringLiteral("\n  link %1 %2: codec %3 against %4 of wire saved")
            .arg(c.boundary)
            .arg(c.forward ? QStringLiteral("fwd") : QStringLiteral("bwd"), formatMs(c.codec_s), formatMs(c.saved_s));
    if (c.costs_more()) out += QStringLiteral(" (costs more than it saves)");
  }
  return out;
}

QString decompositionHtml(const QString& text) {
  QString out;
  for (const QString& line : text.split(QLatin1Char('\n'))) {
    const QString escaped = line.toHtmlEscaped();
    if (line.endsWith(QStringLiteral("(costs more than it saves)")))
      out += QStringLiteral("<span style='color:#d62728'>%1</span><br>").arg(escaped);
    else if (!line.startsWith(QLatin1Char(' ')))  // a timeline's headline
      out += QStringLiteral("<p style='margin-top:6px'><b>%1</b><br>").arg(escaped);
    else
      out += escaped + QStringLiteral("<br>");
  }
  return out;
}

}  // namespace ps::ui
