#pragma once
// ps::ui::RunsPanel: the runs table with its filter box, column chooser and per-run actions.
//
// Connect compareRequested to the compare view, openRequested to a read-only view of one saved run (a double click
// on a cell that is not editable, or the row menu), statusMessage to the status bar and errorOccurred to a dialog or
// the status bar. Call refresh() on a timer while a run is live (selections survive it), and persist
// saveState()/restoreState() with QSettings. Actions that ask for a file or confirmation live in the *Selected()
// slots; the work itself is in dialog-free functions (deleteRun, RunExports.h) that tests call directly.
#include "app/ui/runs/RunsModel.h"

#include <QList>
#include <QWidget>

#include <memory>

class QAction;
class QLabel;
class QLineEdit;
class QTableView;

namespace ps::ui {

class RunsFilterProxy;

class RunsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit RunsPanel(std::shared_ptr<ps::RunStore> store, QWidget* parent = nullptr);
  ~RunsPanel() override;

  // The filter and about five rows: a docked table that leaves the height of a laptop's screen to the charts (the
  // user drags it taller).
  QSize sizeHint() const override;

  RunsModel* model() const { return model_; }
  void setStore(std::shared_ptr<ps::RunStore> store);  // the table shows that store's runs from now on
  RunsFilterProxy* proxy() const { return proxy_; }
  QTableView* view() const { return view_; }
  QLineEdit* filterEdit() const { return filter_; }
  QLabel* filterErrorLabel() const { return filterError_; }  // why the filter is refused, beside it

  QList<qint64> selectedRunIds() const;  // in table order
  void selectRuns(const QList<qint64>& ids);

  void setFilterText(const QString& text);
  void setColumnHidden(RunColumn column, bool hidden);
  bool isColumnHidden(RunColumn column) const;
  // Column visibility, order and widths (the header's state), for QSettings.
  QByteArray saveState() const;
  bool restoreState(const QByteArray& state);

  // Deletes a run without asking; refuses (returns why) a run that is still running. Empty on success.
  QString deleteRun(qint64 id);

  // The panel's actions, for the main window's menus and toolbar (they follow the selection).
  QAction* compareAction() const { return compareAction_; }
  QAction* openAction() const { return openAction_; }
  QAction* tensorBoardAction() const { return tensorBoardAction_; }
  QAction* traceAction() const { return traceAction_; }

 public Q_SLOTS:
  void refresh();
  void compareSelected();
  void openSelected();
  void renameSelected();
  void editTagsSelected();
  void editNotesSelected();
  void deleteSelected();
  void exportCsvSelected();
  void exportTensorBoardSelected();
  void exportConfigSelected();
  void exportTraceSelected();

 Q_SIGNALS:
  void compareRequested(const QList<qint64>& ids);
  void openRequested(qint64 id);
  void statusMessage(const QString& message);
  void errorOccurred(const QString& message);

 private:
  void showHeaderMenu(const QPoint& pos);
  void showRowMenu(const QPoint& pos);
  void updateActions();
  qint64 singleSelected(const QString& action);  // the one selected run, or 0 after telling the user
  void editText(RunColumn column, const QString& title, bool multiLine);

  RunsModel* model_;
  RunsFilterProxy* proxy_;
  QLineEdit* filter_;
  QLabel* filterError_;
  QTableView* view_;
  QAction *compareAction_, *openAction_, *renameAction_, *tagsAction_, *notesAction_, *deleteAction_, *csvAction_,
      *configAction_, *tensorBoardAction_, *traceAction_, *refreshAction_;
};

}  // namespace ps::ui
