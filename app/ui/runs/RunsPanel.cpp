#include "app/ui/runs/RunsPanel.h"
#include "engine/core/RunSummary.h"

#include "app/ui/charts/ExportSettings.h"
#include "app/ui/runs/RunExports.h"
#include "app/ui/runs/RunsFilterProxy.h"

#include <QAction>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace ps::ui {

namespace {

constexpr int kMostNameWidth = 360;  // a long name is elided in its middle beyond this (widen the column to read it)

// The filter's fields, for the filter box's tooltip (the same list `pipesqueeze-cli runs list --filter` takes).
QString filterHelp() {
  QString help = QObject::tr(
      "Every term must hold. A word searches name, tags, notes, status and methods; field:value, field=value, "
      "field!=value, field<value, field>=value compare; -term negates; \"quotes\" keep spaces.\nFields:");
  for (const auto& f : RunFilter::fields())
    help += QStringLiteral("\n  %1 — %2").arg(QString::fromStdString(f.name), QString::fromStdString(f.help));
  return help;
}

}  // namespace

RunsPanel::RunsPanel(std::shared_ptr<ps::RunStore> store, QWidget* parent)
    : QWidget(parent),
      model_(new RunsModel(std::move(store), this)),
      proxy_(new RunsFilterProxy(this)),
      filter_(new QLineEdit(this)),
      filterError_(new QLabel(this)),
      view_(new QTableView(this)) {
  proxy_->setSourceModel(model_);
  filter_->setPlaceholderText(tr("Filter: words, or fields as in status:finished k<5% suite:smoke accuracy>=85%"));
  filter_->setToolTip(filterHelp());
  filter_->setClearButtonEnabled(true);
  filterError_->setStyleSheet(QStringLiteral("QLabel { color: #b00020; }"));
  filterError_->setVisible(false);
  filterError_->setMinimumWidth(0);
  filterError_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // long reasons elide, never widen
  connect(filter_, &QLineEdit::textChanged, proxy_, &RunsFilterProxy::setFilterText);
  connect(proxy_, &RunsFilterProxy::filterErrorChanged, this, [this](const QString& error) {
    // A filter being typed is often incomplete: say what is wrong where the user looks, and hide nothing meanwhile.
    filter_->setStyleSheet(error.isEmpty() ? QString() : QStringLiteral("QLineEdit { color: #b00020; }"));
    filter_->setToolTip(error.isEmpty() ? filterHelp() : error + QStringLiteral("\n\n") + filterHelp());
    filterError_->setText(error);  // beside the box, where the user looks while typing
    filterError_->setToolTip(error);
    filterError_->setVisible(!error.isEmpty());
  });

  view_->setModel(proxy_);
  view_->setSortingEnabled(true);
  view_->sortByColumn(int(RunColumn::Id), Qt::DescendingOrder);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  view_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
  view_->setAlternatingRowColors(true);
  view_->verticalHeader()->hide();
  view_->horizontalHeader()->setSectionsMovable(true);
  view_->horizontalHeader()->setHighlightSections(false);
  view_->horizontalHeader()->setContextMenuPolicy(Qt::CustomContextMenu);
  view_->horizontalHeader()->resizeSection(int(RunColumn::Visible), 36);
  view_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(view_->horizontalHeader(), &QHeaderView::customContextMenuRequested, this, &RunsPanel::showHeaderMenu);
  connect(view_, &QTableView::customContextMenuRequested, this, &RunsPanel::showRowMenu);
  // A double click edits the name, tags and notes, toggles nothing on the colour column, and opens the run elsewhere.
  connect(view_, &QTableView::doubleClicked, this, [this](const QModelIndex& cell) {
    const auto column = RunColumn(cell.column());
    if (column == RunColumn::Visible || RunsModel::isEditable(column)) return;
    const qint64 id = model_->runId(proxy_->mapToSource(cell).row());
    if (id) Q_EMIT openRequested(id);
  });

  auto action = [this](const QString& text, void (RunsPanel::*slot)(), const QKeySequence& keys = {}) {
    auto* a = new QAction(text, this);
    a->setShortcut(keys);
    a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(a, &QAction::triggered, this, slot);
    addAction(a);
    return a;
  };
  compareAction_ = action(tr("&Compare selected"), &RunsPanel::compareSelected);
  openAction_ = action(tr("&Open in a tab"), &RunsPanel::openSelected);
  renameAction_ = action(tr("&Rename…"), &RunsPanel::renameSelected, QKeySequence(Qt::Key_F2));
  tagsAction_ = action(tr("Edit &tags…"), &RunsPanel::editTagsSelected);
  notesAction_ = action(tr("Edit &notes…"), &RunsPanel::editNotesSelected);
  deleteAction_ = action(tr("&Delete…"), &RunsPanel::deleteSelected, QKeySequence::Delete);
  csvAction_ = action(tr("Export &CSV…"), &RunsPanel::exportCsvSelected);
  configAction_ = action(tr("Export config &JSON…"), &RunsPanel::exportConfigSelected);
  traceAction_ = action(tr("Export T&race…"), &RunsPanel::exportTraceSelected);
  traceAction_->setToolTip(tr("Saved steps' timelines as a trace file for ui.perfetto.dev or chrome://tracing"));
  tensorBoardAction_ = action(tr("Export to &TensorBoard…"), &RunsPanel::exportTensorBoardSelected);
  tensorBoardAction_->setToolTip(
      tr("Every scalar, histogram and the config of each selected run, as event files "
         "TensorBoard opens next to other experiments"));
  refreshAction_ = action(tr("Re&fresh"), &RunsPanel::refresh, QKeySequence::Refresh);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* filterRow = new QHBoxLayout;
  filterRow->addWidget(filter_, 3);
  filterRow->addWidget(filterError_, 2);
  layout->addLayout(filterRow);
  layout->addWidget(view_);

  connect(model_, &RunsModel::errorOccurred, this, &RunsPanel::errorOccurred);
  connect(view_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &RunsPanel::updateActions);
  model_->refresh();
  view_->setWordWrap(false);  // a learning rate or a K change reads on one line
  view_->setTextElideMode(Qt::ElideMiddle);
  // The results right after the name, where the eye goes first (a saved layout restores the user's own order).
  QHeaderView* header = view_->horizontalHeader();
  int after = header->visualIndex(int(RunColumn::Name));
  for (RunColumn c : {RunColumn::EvalMetric, RunColumn::BestEvalMetric, RunColumn::EvalLoss, RunColumn::TrainLoss,
                      RunColumn::TimeToTarget})
    header->moveSection(header->visualIndex(int(c)), ++after);
  view_->resizeColumnsToContents();
  header->resizeSection(int(RunColumn::Name), std::min(header->sectionSize(int(RunColumn::Name)), kMostNameWidth));
  header->resizeSection(int(RunColumn::Notes), 160);
  updateActions();
}

RunsPanel::~RunsPanel() = default;

void RunsPanel::refresh() {
  model_->refresh();
}

void RunsPanel::setStore(std::shared_ptr<ps::RunStore> store) {
  model_->setStore(std::move(store));
  updateActions();
}

QList<qint64> RunsPanel::selectedRunIds() const {
  QList<int> rows;
  for (const QModelIndex& i : view_->selectionModel()->selectedRows()) rows.push_back(i.row());
  std::sort(rows.begin(), rows.end());
  QList<qint64> ids;
  for (int r : rows) ids.push_back(model_->runId(proxy_->mapToSource(proxy_->index(r, 0)).row()));
  return ids;
}

void RunsPanel::selectRuns(const QList<qint64>& ids) {
  QItemSelection selection;
  for (qint64 id : ids) {
    const int source = model_->rowOf(id);
    if (source < 0) continue;
    const QModelIndex cell = proxy_->mapFromSource(model_->index(source, 0));
    if (cell.isValid()) selection.select(cell, cell);
  }
  view_->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

void RunsPanel::setFilterText(const QString& text) {
  filter_->setText(text);
}

void RunsPanel::setColumnHidden(RunColumn column, bool hidden) {
  view_->setColumnHidden(int(column), hidden);
}

bool RunsPanel::isColumnHidden(RunColumn column) const {
  return view_->isColumnHidden(int(column));
}

QByteArray RunsPanel::saveState() const {
  return view_->horizontalHeader()->saveState();
}

bool RunsPanel::restoreState(const QByteArray& state) {
  return view_->horizontalHeader()->restoreState(state);
}

QString RunsPanel::deleteRun(qint64 id) {
  try {
    const auto info = model_->store()->run(id);
    if (!info) return tr("Run %1 is no longer in the store.").arg(id);
    if (info->status == run_status::kRunning)
      return tr("Run %1 is still running; stop it first, then delete it.").arg(id);
    model_->store()->deleteRun(id);
  } catch (const std::exception& e) {
    return tr("Could not delete run %1: %2").arg(id).arg(QString::fromStdString(e.what()));
  }
  model_->refresh();
  return QString();
}

void RunsPanel::updateActions() {
  const int n = int(view_->selectionModel()->selectedRows().size());
  compareAction_->setEnabled(n >= 2);
  openAction_->setEnabled(n == 1);
  tensorBoardAction_->setEnabled(n >= 1);
  for (QAction* a : {renameAction_, tagsAction_, notesAction_, csvAction_, configAction_, traceAction_})
    a->setEnabled(n == 1);
  deleteAction_->setEnabled(n >= 1);
}

void RunsPanel::compareSelected() {
  const auto ids = selectedRunIds();
  if (ids.size() < 2) {
    Q_EMIT statusMessage(tr("Select two or more runs to compare (Ctrl+click or Shift+click in the runs table)."));
    return;
  }
  Q_EMIT compareRequested(ids);
}

void RunsPanel::openSelected() {
  if (const qint64 id = singleSelected(tr("open it in a tab"))) Q_EMIT openRequested(id);
}

qint64 RunsPanel::singleSelected(const QString& action) {
  const auto ids = selectedRunIds();
  if (ids.size() == 1) return ids.front();
  Q_EMIT statusMessage(tr("Select one run to %1.").arg(action));
  return 0;
}

void RunsPanel::editText(RunColumn column, const QString& title, bool multiLine) {
  const qint64 id = singleSelected(title.toLower());
  if (!id) return;
  const QModelIndex cell = model_->index(model_->rowOf(id), int(column));
  const QString current = cell.data(Qt::EditRole).toString();
  bool ok = false;
  const QString label = tr("%1 of run %2:").arg(runColumnTitle(column)).arg(id);
  const QString text = multiLine ? QInputDialog::getMultiLineText(this, title, label, current, &ok)
                                 : QInputDialog::getText(this, title, label, QLineEdit::Normal, current, &ok);
  if (ok && text != current && model_->setData(cell, text, Qt::EditRole))
    Q_EMIT statusMessage(tr("Run %1: %2 saved.").arg(id).arg(runColumnTitle(column).toLower()));
}

void RunsPanel::renameSelected() {
  editText(RunColumn::Name, tr("Rename run"), false);
}
void RunsPanel::editTagsSelected() {
  editText(RunColumn::Tags, tr("Edit tags"), false);
}
void RunsPanel::editNotesSelected() {
  editText(RunColumn::Notes, tr("Edit notes"), true);
}

void RunsPanel::deleteSelected() {
  const auto ids = selectedRunIds();
  if (ids.isEmpty()) {
    Q_EMIT statusMessage(tr("Select the runs to delete."));
    return;
  }
  QStringList names, running;
  for (qint64 id : ids)
    if (const RunRow* r = model_->row(model_->rowOf(id))) {
      names << QStringLiteral("%1 %2").arg(id).arg(QString::fromStdString(r->info.name));
      if (r->info.status == run_status::kRunning) running << QString::number(id);
    }
  if (!running.isEmpty()) {  // said at once, not after a confirmation that could not be honoured
    Q_EMIT errorOccurred(tr("Run %1 is still running; stop it first, then delete it.", nullptr, int(running.size()))
                             .arg(running.join(QStringLiteral(", "))));
    return;
  }
  const auto answer = QMessageBox::question(
      this, tr("Delete runs"),
      tr("Delete %n run(s) with all their metrics, events and histograms? This cannot be undone.\n\n%1", nullptr,
         int(ids.size()))
          .arg(names.join(QLatin1Char('\n'))),
      QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
  if (answer != QMessageBox::Yes) return;
  QStringList errors;
  int deleted = 0;
  for (qint64 id : ids) {
    const QString error = deleteRun(id);
    if (error.isEmpty())
      ++deleted;
    else
      errors << error;
  }
  if (!errors.isEmpty()) Q_EMIT errorOccurred(errors.join(QLatin1Char('\n')));
  Q_EMIT statusMessage(tr("Deleted %n run(s).", nullptr, deleted));
}

QSize RunsPanel::sizeHint() const {
  const int row = view_->verticalHeader()->defaultSectionSize();
  return {800, filter_->sizeHint().height() + view_->horizontalHeader()->sizeHint().height() + 5 * row + 8};
}

void RunsPanel::exportCsvSelected() {
  const qint64 id = singleSelected(tr("export as CSV"));
  if (!id) return;
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export run as CSV"),
      exports::suggestedPath(QStringLiteral("csv"), QStringLiteral("run-%1.csv").arg(id)), tr("CSV files (*.csv)"));
  if (path.isEmpty()) return;
  exports::rememberFolder(QStringLiteral("csv"), path);
  const QString error = exportRunCsv(*model_->store(), id, path);
  if (!error.isEmpty())
    Q_EMIT errorOccurred(error);
  else
    Q_EMIT statusMessage(tr("Run %1 exported to %2").arg(id).arg(path));
}

void RunsPanel::exportTensorBoardSelected() {
  const auto ids = selectedRunIds();
  if (ids.isEmpty()) return;
  const QString dir = QFileDialog::getExistingDirectory(
      this, tr("Export %n run(s) to TensorBoard", nullptr, ids.size()), exports::folder(QStringLiteral("tensorboard")));
  if (dir.isEmpty()) return;
  exports::rememberFolder(QStringLiteral("tensorboard"), dir);
  const QString error = exportRunsTensorBoard(*model_->store(), ids, dir);
  if (!error.isEmpty())
    Q_EMIT errorOccurred(error);
  else
    Q_EMIT statusMessage(
        tr("%n run(s) exported to %1; open it with: tensorboard --logdir %1", nullptr, ids.size()).arg(dir));
}

void RunsPanel::exportTraceSelected() {
  const qint64 id = singleSelected(tr("export its timeline"));
  if (!id) return;
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export run timeline as a trace"),
      exports::suggestedPath(QStringLiteral("trace"), QStringLiteral("run-%1-trace.json").arg(id)),
      tr("Trace files (*.json)"));
  if (path.isEmpty()) return;
  exports::rememberFolder(QStringLiteral("trace"), path);
  const QString error = exportRunTrace(*model_->store(), id, path);
  if (!error.isEmpty())
    Q_EMIT errorOccurred(error);
  else
    Q_EMIT statusMessage(tr("Run %1's timeline exported to %2; open it in ui.perfetto.dev").arg(id).arg(path));
}

void RunsPanel::exportConfigSelected() {
  const qint64 id = singleSelected(tr("export its config"));
  if (!id) return;
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export run config"),
      exports::suggestedPath(QStringLiteral("config"), QStringLiteral("run-%1.json").arg(id)),
      tr("JSON presets (*.json)"));
  if (path.isEmpty()) return;
  exports::rememberFolder(QStringLiteral("config"), path);
  const QString error = exportRunConfig(*model_->store(), id, path);
  if (!error.isEmpty())
    Q_EMIT errorOccurred(error);
  else
    Q_EMIT statusMessage(
        tr("Config of run %1 saved to %2; replay it with pipesqueeze-cli train --preset FILE").arg(id).arg(path));
}

void RunsPanel::showHeaderMenu(const QPoint& pos) {
  QMenu menu(this);
  auto* header = view_->horizontalHeader();
  for (int c = 0; c < kRunColumnCount; ++c) {
    const QString title = c == int(RunColumn::Visible) ? tr("Colour / visible") : runColumnTitle(RunColumn(c));
    QAction* a = menu.addAction(title);
    a->setCheckable(true);
    a->setChecked(!header->isSectionHidden(c));
    connect(a, &QAction::toggled, this, [this, c](bool on) { view_->setColumnHidden(c, !on); });
  }
  menu.exec(header->mapToGlobal(pos));
}

void RunsPanel::showRowMenu(const QPoint& pos) {
  const QModelIndex at = view_->indexAt(pos);
  if (at.isValid() && !view_->selectionModel()->isRowSelected(at.row(), QModelIndex()))
    view_->selectionModel()->select(at, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  QMenu menu(this);
  menu.addAction(openAction_);
  menu.addAction(compareAction_);
  menu.addSeparator();
  for (QAction* a : {renameAction_, tagsAction_, notesAction_}) menu.addAction(a);
  menu.addSeparator();
  menu.addAction(csvAction_);
  menu.addAction(traceAction_);
  menu.addAction(configAction_);
  menu.addAction(tensorBoardAction_);
  menu.addSeparator();
  menu.addAction(deleteAction_);
  menu.addAction(refreshAction_);
  menu.exec(view_->viewport()->mapToGlobal(pos));
}

}  // namespace ps::ui
