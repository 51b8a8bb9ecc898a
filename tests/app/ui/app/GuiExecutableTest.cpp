// The `pipesqueeze` executable as a user, a desktop file or a script starts it: `--preset FILE --start` (or the file
// as the argument) trains at once and the run lands in the store; bad input exits with a message naming the problem.
#include "engine/runs/store/RunStore.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

class GuiExecutableTest : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void presetStartRunsToTheEnd() {
    QTemporaryDir dir;
    const QString store = dir.filePath("runs.sqlite");
    QProcess gui;
    gui.setProcessEnvironment(environment(dir));
    gui.start(PIPESQUEEZE_GUI, {"--preset", PIPESQUEEZE_SOURCE_DIR "/presets/smoke.json", "--start", "--store", store,
                                "--quit-when-done"});
    QVERIFY(gui.waitForFinished(180000));
    QVERIFY2(gui.exitCode() == 0, gui.readAllStandardError().constData());
    ps::RunStore runs(store.toStdString());
    const auto list = runs.listRuns();
    QCOMPARE(int(list.size()), 1);
    QCOMPARE(list[0].status, std::string("finished"));
    QVERIFY(!runs.metrics(list[0].id, "train/loss").empty());
  }

  // A file manager or the desktop file's `%f` passes the preset as the one argument.
  void aFileArgumentOpensThatPreset() {
    QTemporaryDir dir;
    QFile file(dir.filePath("mine.json"));
    QVERIFY(writeSmokeNamed(file, "opened from the argument"));

    const QString store = dir.filePath("runs.sqlite");
    QProcess gui;
    gui.setProcessEnvironment(environment(dir));
    gui.start(PIPESQUEEZE_GUI, {file.fileName(), "--start", "--store", store, "--quit-when-done"});
    QVERIFY(gui.waitForFinished(180000));
    QVERIFY2(gui.exitCode() == 0, gui.readAllStandardError().constData());
    const auto list = ps::RunStore(store.toStdString()).listRuns();
    QCOMPARE(int(list.size()), 1);
    QCOMPARE(list[0].name, std::string("opened from the argument"));
  }

  // `--preset NAME` finds a preset where the CLI does: here the user's folder, where the app saves presets.
  void aPresetNameIsFoundWhereTheCliFindsIt() {
    QTemporaryDir dir;
    QVERIFY(QDir().mkpath(dir.filePath("data/pipesqueeze/presets")));
    QFile file(dir.filePath("data/pipesqueeze/presets/mine-by-name.json"));
    QVERIFY(writeSmokeNamed(file, "found by name"));

    const QString store = dir.filePath("runs.sqlite");
    QProcess gui;
    gui.setProcessEnvironment(environment(dir));
    gui.start(PIPESQUEEZE_GUI, {"--preset", "mine-by-name", "--start", "--store", store, "--quit-when-done"});
    QVERIFY(gui.waitForFinished(180000));
    QVERIFY2(gui.exitCode() == 0, gui.readAllStandardError().constData());
    const auto list = ps::RunStore(store.toStdString()).listRuns();
    QCOMPARE(int(list.size()), 1);
    QCOMPARE(list[0].name, std::string("found by name"));
  }

  void aPresetGivenTwiceOrTwoFilesAreRefused() {
    QTemporaryDir dir;
    const QString smoke = PIPESQUEEZE_SOURCE_DIR "/presets/smoke.json";
    for (const QStringList& args : {QStringList{smoke, "--preset", smoke}, QStringList{smoke, smoke}}) {
      QProcess gui;
      gui.setProcessEnvironment(environment(dir));
      gui.start(PIPESQUEEZE_GUI,
                args + QStringList{"--start", "--store", dir.filePath("runs.sqlite"), "--quit-when-done"});
      QVERIFY(gui.waitForFinished(60000));
      QCOMPARE(gui.exitCode(), 2);
      const QByteArray err = gui.readAllStandardError();
      QVERIFY2(err.contains("given twice") || err.contains("one preset file at a time"), err.constData());
    }
    QVERIFY(!QFile::exists(dir.filePath("runs.sqlite")));  // refused before anything was opened
  }

  void missingPresetIsNamed() {
    QTemporaryDir dir;
    QProcess gui;
    gui.setProcessEnvironment(environment(dir));
    gui.start(PIPESQUEEZE_GUI, {"--preset", dir.filePath("nope.json"), "--start", "--store",
                                dir.filePath("runs.sqlite"), "--quit-when-done"});
    QVERIFY(gui.waitForFinished(60000));
    QCOMPARE(gui.exitCode(), 2);
    QVERIFY(gui.readAllStandardError().contains("nope.json"));
  }

 private:
  // The smoke preset with its run named `name`, written to `file`.
  static bool writeSmokeNamed(QFile& file, const QString& name) {
    QFile smoke(PIPESQUEEZE_SOURCE_DIR "/presets/smoke.json");
    if (!smoke.open(QIODevice::ReadOnly)) return false;
    QJsonObject preset = QJsonDocument::fromJson(smoke.readAll()).object();
    QJsonObject run = preset["run"].toObject();
    run["name"] = name;
    preset["run"] = run;
    if (!file.open(QIODevice::WriteOnly)) return false;
    const bool written = file.write(QJsonDocument(preset).toJson()) > 0;
    file.close();
    return written;
  }

  static QProcessEnvironment environment(const QTemporaryDir& dir) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("XDG_CONFIG_HOME", dir.filePath("config"));  // the user's real settings stay untouched
    env.insert("XDG_DATA_HOME", dir.filePath("data"));
    return env;
  }
};

QTEST_MAIN(GuiExecutableTest)
#include "GuiExecutableTest.moc"
