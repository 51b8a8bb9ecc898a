#pragma once
// Where the lab keeps a user's things, shared by the app and the CLI: $XDG_DATA_HOME/pipesqueeze (an absolute
// XDG_DATA_HOME only, as the XDG spec asks), else ~/.local/share/pipesqueeze. The run store and the user's presets
// live there.
#include <string>

namespace ps {

// The folder, or "" when neither XDG_DATA_HOME nor a home folder is known. Nothing is created.
std::string userDataFolder();

}  // namespace ps
