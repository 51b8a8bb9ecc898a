#pragma once
// What a user chose for exports, remembered across sessions (QSettings): the folder each kind of export last went
// to, so a dialog opens where the previous one ended, and the scale PNG charts are rendered at.
#include <QString>

namespace ps::ui::exports {

// The folder the last export of `kind` ("charts", "csv", "tensorboard", "config") went to; the user's Pictures
// folder for charts and Documents for the rest until one has been chosen, or when that folder is gone.
QString folder(const QString& kind);
// Remembers the folder of `path` (a file, or a folder itself when it is one) for the next export of `kind`.
void rememberFolder(const QString& kind, const QString& path);
// `name` in the folder of the last export of `kind`: what a save dialog suggests.
QString suggestedPath(const QString& kind, const QString& name);

// PNG charts are rendered at this many times their on-screen size (1, 2 or 3; 2 until chosen): sharp on high-density
// screens and in papers. Vector formats need no scale.
int pngScale();
void setPngScale(int scale);

}  // namespace ps::ui::exports
